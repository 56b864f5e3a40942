// An RL-style step written with the policy network twice: the acting copy
// (h1, a1) drives the recurrence, the learning copy (h2, a2) feeds the loss.
// Both compute the same values; temporal-dedup keeps one.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%s0 = "temporal.input"() {sym_name = "s0", domain = [], element = tensor<1x256xf32>} : () -> !temporal.rtensor
%w1 = "temporal.input"() {sym_name = "W1", domain = [], element = tensor<256x256xf32>} : () -> !temporal.rtensor
%w2 = "temporal.input"() {sym_name = "W2", domain = [], element = tensor<256x256xf32>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<1x256xf32>} : () -> !temporal.rtensor
%h1 = "temporal.tensor"() {sym_name = "h1", domain = ["t"], element = tensor<1x256xf32>} : () -> !temporal.rtensor
%a1 = "temporal.tensor"() {sym_name = "a1", domain = ["t"], element = tensor<1x256xf32>} : () -> !temporal.rtensor
%h2 = "temporal.tensor"() {sym_name = "h2", domain = ["t"], element = tensor<1x256xf32>} : () -> !temporal.rtensor
%a2 = "temporal.tensor"() {sym_name = "a2", domain = ["t"], element = tensor<1x256xf32>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<1x256xf32>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %v = "temporal.read"(%s0) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<1x256xf32>
  "gpu.yield"(%v) : (tensor<1x256xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %p = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<1x256xf32>
  %a = "temporal.read"(%a1) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<1x256xf32>
  %n = "temporal.add"(%p, %a) : (tensor<1x256xf32>, tensor<1x256xf32>) -> tensor<1x256xf32>
  %v = "temporal.tanh"(%n) : (tensor<1x256xf32>) -> tensor<1x256xf32>
  "gpu.yield"(%v) : (tensor<1x256xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h1) ({
  %x = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x256xf32>
  %w = "temporal.read"(%w1) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<256x256xf32>
  %m = "temporal.matmul"(%x, %w) : (tensor<1x256xf32>, tensor<256x256xf32>) -> tensor<1x256xf32>
  %v = "temporal.relu"(%m) : (tensor<1x256xf32>) -> tensor<1x256xf32>
  "gpu.yield"(%v) : (tensor<1x256xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a1) ({
  %x = "temporal.read"(%h1) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x256xf32>
  %w = "temporal.read"(%w2) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<256x256xf32>
  %m = "temporal.matmul"(%x, %w) : (tensor<1x256xf32>, tensor<256x256xf32>) -> tensor<1x256xf32>
  %v = "temporal.tanh"(%m) : (tensor<1x256xf32>) -> tensor<1x256xf32>
  "gpu.yield"(%v) : (tensor<1x256xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h2) ({
  %x = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x256xf32>
  %w = "temporal.read"(%w1) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<256x256xf32>
  %m = "temporal.matmul"(%x, %w) : (tensor<1x256xf32>, tensor<256x256xf32>) -> tensor<1x256xf32>
  %v = "temporal.relu"(%m) : (tensor<1x256xf32>) -> tensor<1x256xf32>
  "gpu.yield"(%v) : (tensor<1x256xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a2) ({
  %x = "temporal.read"(%h2) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x256xf32>
  %w = "temporal.read"(%w2) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<256x256xf32>
  %m = "temporal.matmul"(%x, %w) : (tensor<1x256xf32>, tensor<256x256xf32>) -> tensor<1x256xf32>
  %v = "temporal.tanh"(%m) : (tensor<1x256xf32>) -> tensor<1x256xf32>
  "gpu.yield"(%v) : (tensor<1x256xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%loss) ({
  %a = "temporal.read"(%a2) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x256xf32>
  %x = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x256xf32>
  %d = "temporal.sub"(%a, %x) : (tensor<1x256xf32>, tensor<1x256xf32>) -> tensor<1x256xf32>
  %v = "temporal.mul"(%d, %d) : (tensor<1x256xf32>, tensor<1x256xf32>) -> tensor<1x256xf32>
  "gpu.yield"(%v) : (tensor<1x256xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%loss) : (!temporal.rtensor) -> ()
