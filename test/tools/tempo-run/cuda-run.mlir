// On a machine with a CUDA device: compiled runs on the GPU agree with the
// reference interpreter (bit for bit for integer work: integer division
// and remainders; a float RNN to print precision, libdevice's tanh being
// within an ulp of the host's).
// REQUIRES: cuda-device
// RUN: tempo-run %examples/corpus/integer_division.mlir --bound T=6 --seed 4 --target cuda > %t.gpu
// RUN: tempo-run %examples/corpus/integer_division.mlir --bound T=6 --seed 4 --interpret > %t.interpreted
// RUN: diff %t.gpu %t.interpreted
// RUN: tempo-run %examples/rnn.mlir --bound T=7 --seed 2 --target cuda --format json > %t.rnn.gpu
// RUN: tempo-run %examples/rnn.mlir --bound T=7 --seed 2 --interpret --format json > %t.rnn.interpreted
// RUN: %python %S/Inputs/close_json.py %t.rnn.gpu %t.rnn.interpreted
