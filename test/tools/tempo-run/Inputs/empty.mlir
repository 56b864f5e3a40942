// No tensors at all: both modes succeed and print nothing.
module {
}
