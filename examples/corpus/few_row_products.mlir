// bounds: T=3
// Products of few rows by long weights, as a decode step has them (a batch
// of 3 rows, one row, a vector): on the GPU each sums K in slices of 32 in
// two stages (gpu_matmul.rs, gpu_split_k), K not a multiple of the slice.
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %W = "temporal.input"() {sym_name = "W", domain = [], element = tensor<200x70xf32>} : () -> !temporal.rtensor
  %W2 = "temporal.input"() {sym_name = "W2", domain = [], element = tensor<70x130xf32>} : () -> !temporal.rtensor
  %W3 = "temporal.input"() {sym_name = "W3", domain = [], element = tensor<96x40xf32>} : () -> !temporal.rtensor
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3x200xf32>} : () -> !temporal.rtensor
  %v = "temporal.input"() {sym_name = "v", domain = ["t"], element = tensor<200xf32>} : () -> !temporal.rtensor
  %u = "temporal.input"() {sym_name = "u", domain = ["t"], element = tensor<1x96xf32>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3x70xf32>} : () -> !temporal.rtensor
  %z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<70xf32>} : () -> !temporal.rtensor
  %r = "temporal.tensor"() {sym_name = "r", domain = ["t"], element = tensor<3x130xf32>} : () -> !temporal.rtensor
  %a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<1x40xf32>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3x200xf32>
    %w = "temporal.read"(%W) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<200x70xf32>
    %p = "temporal.matmul"(%xt, %w) : (tensor<3x200xf32>, tensor<200x70xf32>) -> tensor<3x70xf32>
    %h = "temporal.tanh"(%p) : (tensor<3x70xf32>) -> tensor<3x70xf32>
    "gpu.yield"(%h) : (tensor<3x70xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%z) ({
    %vt = "temporal.read"(%v) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<200xf32>
    %w = "temporal.read"(%W) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<200x70xf32>
    %p = "temporal.matmul"(%vt, %w) : (tensor<200xf32>, tensor<200x70xf32>) -> tensor<70xf32>
    "gpu.yield"(%p) : (tensor<70xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%r) ({
    %yt = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3x70xf32>
    %w = "temporal.read"(%W2) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<70x130xf32>
    %p = "temporal.matmul"(%yt, %w) : (tensor<3x70xf32>, tensor<70x130xf32>) -> tensor<3x130xf32>
    "gpu.yield"(%p) : (tensor<3x130xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%a) ({
    %ut = "temporal.read"(%u) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x96xf32>
    %w = "temporal.read"(%W3) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<96x40xf32>
    %p = "temporal.matmul"(%ut, %w) : (tensor<1x96xf32>, tensor<96x40xf32>) -> tensor<1x40xf32>
    "gpu.yield"(%p) : (tensor<1x40xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
  "temporal.output"(%z) : (!temporal.rtensor) -> ()
  "temporal.output"(%r) : (!temporal.rtensor) -> ()
  "temporal.output"(%a) : (!temporal.rtensor) -> ()
}
