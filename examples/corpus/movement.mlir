// bounds: T=5
// Movement ops: permute, flip, slice, reshape, expand, arange, concat (also of ranges).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%v = "temporal.input"() {sym_name = "v", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<8xf32>} : () -> !temporal.rtensor
%w = "temporal.tensor"() {sym_name = "w", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %p = "temporal.permute"(%a) {permutation = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %f = "temporal.flip"(%p) {axis = 0 : i64} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %s = "temporal.slice"(%f) {offsets = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x2xf32>
  %r = "temporal.reshape"(%s) : (tensor<2x2xf32>) -> tensor<4xf32>
  %i = "temporal.arange"() : () -> tensor<4xf32>
  %c = "temporal.concat"(%r, %i) {axis = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  "gpu.yield"(%c) : (tensor<8xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %yy = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8xf32>
  %r = "temporal.reshape"(%yy) : (tensor<8xf32>) -> tensor<2x1x4xf32>
  %s = "temporal.slice"(%r) {offsets = [0, 0, 0]} : (tensor<2x1x4xf32>) -> tensor<1x1x4xf32>
  %q = "temporal.reshape"(%s) : (tensor<1x1x4xf32>) -> tensor<1x4xf32>
  %e = "temporal.expand"(%q) : (tensor<1x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%e) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %before = "temporal.read_range"(%v) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t)>]} : (!temporal.rtensor) -> tensor<?xf32>
  %after = "temporal.read_range"(%v) {caps = [], lower = [affine_map<(t)[T] -> (t)>], upper = [affine_map<(t)[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?xf32>
  %both = "temporal.concat"(%after, %before) {axis = 0 : i64} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %flipped = "temporal.flip"(%both) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<?xf32>
  %k = "temporal.argmax"(%flipped) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<i64>
  %kf = "temporal.cast"(%k) : (tensor<i64>) -> tensor<f32>
  "gpu.yield"(%kf) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
