// Matmuls become register-tiled vector loops: chunks of
// 8 panels (the parallel unit), in each blocks of 64 rows of B, in each the
// panels of 4 vectors of 16 columns (4 rows at a time when there are at
// least 4), a k loop carrying the accumulators (zero in the first block,
// loaded from C in the others) as iteration
// arguments, one-row blocks for the rows left over and a scalar loop for
// the columns left over. With fusion off (fuse=false) C is first zeroed by
// a fill of its own, and every block loads its accumulators. Without
// fast-math each element is summed over k in order with mulf and addf, so
// compiled results are bit-exact with the interpreter's; with fast-math
// multiply and add are fused.
// The loop over k of a one-row block (4 vector multiply-adds an iteration)
// carries the hint to unroll it 4 times (llvm.loop_annotation, which
// llvm-loop-annotations makes loop metadata: LLVM unrolls only the loops
// marked so); the 4 x 4 tile's loop (16 an iteration) carries none.
// The tile fits the machine's vector registers (options vector-bits and
// vector-registers, the host's by default; the checks above are AVX-512's,
// 32 registers of 512 bits): with AVX2's 16 registers of 256 bits, each
// 16-lane vector takes two, so a tile is 6 rows by one vector (12
// accumulators, B's vector and a broadcast), not 4 by 4, which would spill
// its accumulators at every multiply-add.
// RUN: tempo-opt %s "--lower-temporal-to-loops=vector-bits=256 vector-registers=16" | FileCheck %s --check-prefix=AVX2
// RUN: tempo-opt %s "--lower-temporal-to-loops=vector-bits=512 vector-registers=32" | FileCheck %s --check-prefix=EXACT
// RUN: tempo-opt %s "--lower-temporal-to-loops=vector-bits=512 vector-registers=32" | FileCheck %s --check-prefix=HINT
// RUN: tempo-opt %s "--lower-temporal-to-loops=fast-math=true vector-bits=512 vector-registers=32" | FileCheck %s --check-prefix=FAST
// RUN: tempo-opt %s "--lower-temporal-to-loops=fuse=false vector-bits=512 vector-registers=32" | FileCheck %s --check-prefix=UNFUSED
// RUN: not tempo-opt %s --lower-temporal-to-loops=fast-math=maybe 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not tempo-opt %s --lower-temporal-to-loops=fuse=sometimes 2>&1 | FileCheck %s --check-prefix=BAD-FUSE
// RUN: tempo-run %s --bound T=3 --seed 4 > %t.compiled
// RUN: tempo-run %s --bound T=3 --seed 4 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 4 --disable-pass fusion > %t.unfused
// RUN: diff %t.unfused %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 4 --fast-math --format json | %python -c "import json,sys; [json.loads(l) for l in sys.stdin]"

// EXACT: %[[NR:.*]] = arith.constant 64 : index
// EXACT: %[[MR:.*]] = arith.constant 4 : index
// EXACT-NOT: linalg.fill
// EXACT: %[[CW:.*]] = arith.constant 512 : index
// EXACT: %[[KB:.*]] = arith.constant 64 : index
// EXACT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[CW]] {
// EXACT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[KB]] {
// EXACT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[NR]] {
// EXACT:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[MR]] {
// EXACT:     %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// EXACT:     scf.if %[[FIRST]] -> (vector<16xf32>
// EXACT:       scf.yield %[[ZERO:.*]], %[[ZERO]]
// EXACT:     } else {
// EXACT:       vector.load
// EXACT:     scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>
// EXACT:       vector.load
// EXACT:       vector.broadcast
// EXACT:       arith.mulf {{.*}} : vector<16xf32>
// EXACT:       arith.addf {{.*}} : vector<16xf32>
// EXACT:       scf.yield
// EXACT:     vector.store
// EXACT: scf.for
// EXACT:   scf.for
// EXACT:     iter_args({{.*}}) -> (f32)
// EXACT:       arith.mulf {{.*}} : f32
// EXACT-NOT: linalg.matmul

// HINT: #[[UNROLL:.*]] = #llvm.loop_unroll<count = 4 : i32>
// HINT: #[[HINT:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// HINT: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// HINT-NOT: llvm.loop_annotation
// HINT: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// HINT: } {llvm.loop_annotation = #[[HINT]]}

// AVX2: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16{{(_[0-9]+)?}} {
// AVX2:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c6{{(_[0-9]+)?}} {
// AVX2: iter_args({{[^)]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {

// UNFUSED: linalg.fill
// UNFUSED: scf.for
// UNFUSED-NOT: scf.if
// UNFUSED: vector.load
// UNFUSED: scf.for {{.*}} iter_args

// FAST: vector.fma {{.*}} : vector<16xf32>
// FAST: arith.addf {{.*}} fastmath<contract> : f32

// BAD: tempo-opt: error: option fast-math of pass 'lower-temporal-to-loops' takes true or false, got 'maybe'
// BAD-FUSE: tempo-opt: error: option fuse of pass 'lower-temporal-to-loops' takes true or false, got 'sometimes'

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%a = "temporal.input"() {sym_name = "a", domain = ["t"], element = tensor<6x5xf32>} : () -> !temporal.rtensor
%b = "temporal.input"() {sym_name = "b", domain = [], element = tensor<5x70xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<6x70xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %x = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<6x5xf32>
  %w = "temporal.read"(%b) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<5x70xf32>
  %s = "temporal.matmul"(%x, %w) : (tensor<6x5xf32>, tensor<5x70xf32>) -> tensor<6x70xf32>
  "gpu.yield"(%s) : (tensor<6x70xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
