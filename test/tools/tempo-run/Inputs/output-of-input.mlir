// Inputs marked as outputs, printed as given (the compiled code used to print zeros).
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
  %c = "temporal.input"() {sym_name = "c", domain = [], element = tensor<i64>} : () -> !temporal.rtensor
  "temporal.output"(%x) : (!temporal.rtensor) -> ()
  "temporal.output"(%c) : (!temporal.rtensor) -> ()
}
