//! The `temporal` dialect: recurrent tensors, their domains, symbolic reads
//! and ordered conditional definitions. See `dialects/README.md` for the
//! design and the conventions every op follows.

tempo_dialect_macros::dialect! {
    /// The temporal dialect: a program is a symbolic dependence graph of
    /// recurrent tensors placed directly in a `builtin.module` body.
    dialect temporal {
        /// Handle of a recurrent tensor. Only `temporal.read`,
        /// `temporal.define` and `temporal.output` consume it; the point type
        /// lives on the declaring op's `element` attribute.
        type rtensor;

        /// Declares a temporal dimension `sym_name` ranging over `0 <= d < bound`.
        /// The bound is a symbol (e.g. `"T"`) given at compile or run time.
        /// The order of `temporal.dim` ops fixes the symbol order of every
        /// affine map and set in the program (symbol `s_i` is the i-th bound).
        op dim {
            attributes { sym_name: string, bound: string }
        }

        /// Declares a program input: a recurrent tensor over `domain` (an array
        /// of dimension names) whose points have the static type `element`.
        op input {
            attributes { sym_name: string, domain: array, element: type }
            results { handle: rtensor }
        }

        /// Declares a recurrent tensor over `domain` with points of type
        /// `element`; its values come from the `temporal.define` ops that
        /// target it.
        op tensor {
            attributes { sym_name: string, domain: array, element: type }
            results { handle: rtensor }
        }

        /// One conditional definition branch of a recurrent tensor.
        /// `when` is an affine set over the target's domain variables (dims)
        /// and the bounds (symbols). Branches of one tensor are tried in
        /// program order; the first whose condition holds defines the point.
        /// The body computes the point's value and ends in `gpu.yield %value`
        /// (IRDL ops cannot be terminators, so an upstream one is used).
        op define {
            operands { target: rtensor }
            attributes { when: integer_set }
            regions { body }
        }

        /// The schedule level: computes the point `coords` (one index per
        /// domain dimension, in domain order) of the tensor named `tensor`.
        /// `temporal-schedule` places these ops in the `affine.for` nests of
        /// the function `@tempo_schedule`; `lower-temporal-to-loops` follows
        /// that order.
        op compute {
            operands { coords: variadic any }
            attributes { tensor: string }
        }

        /// Declares the recurrent tensor `sym_name` holding the gradient of
        /// `of` (scalar float points) with respect to `wrt`: over `wrt`'s
        /// domain with `wrt`'s point type, point `q` is the derivative of
        /// the sum of the points of `of` with respect to `wrt[q]`, mapped
        /// over the dimensions `of` and `wrt` share (see `dialects/README.md`).
        /// An optional string attribute `all_reduce` ("mean" or "sum";
        /// IRDL has no optional attributes, the build checks it) makes it
        /// that reduction over the processes of the run (data-parallel
        /// training). `temporal-autodiff` replaces it by the adjoint program.
        op grad {
            operands { of: rtensor, wrt: rtensor }
            attributes { sym_name: string }
            results { handle: rtensor }
        }

        /// Ends dimension `dim` where `done` first holds: `done` has
        /// scalar `i1` points over `dim` alone, and the dimension's extent
        /// in a run is `L = 1 + min{t : done[t]}` (its bound when `done`
        /// never holds), the bound being the most it may take. The program
        /// then means what it means with bound `L` (points after the stop
        /// are not computed, outputs have `L` points along `dim`, ranges
        /// `x[0:T]` end at the stop). `done` and what it reads may not use
        /// the bound and may not read ahead along `dim`.
        op stop {
            operands { done: rtensor }
            attributes { dim: string }
        }

        /// Marks a recurrent tensor as a program output (all of its domain).
        op output {
            operands { source: rtensor }
        }

        /// Reads one point of `source`. `index` maps the reader's domain
        /// variables (dims, in the reader's domain order) and the bounds
        /// (symbols) to one coordinate per source dimension: `t - 1`, `0`,
        /// `T - 1 - t`, `t mod 2`, ... The result has the source's point type.
        op read {
            operands { source: rtensor }
            attributes { index: affine_map }
            results { value: any }
        }

        /// Reads one point of `source` at coordinates given by data: the
        /// `coordinates` are scalar integers computed in the body
        /// (`tensor<i64>` or `tensor<i32>`), and `index` maps the reader's
        /// domain variables followed by one variable per coordinate operand
        /// (dims) and the bounds (symbols) to one coordinate per source
        /// dimension: `h[left[n]]` is `index = (n, c0)[N] -> (c0)` with the
        /// value `left[n]` as operand. Each coordinate is checked against
        /// its bound at run time, and a point that needs itself through such
        /// reads (a cycle in the data) is an error.
        op read_at {
            operands { source: rtensor, coordinates: variadic any }
            attributes { index: affine_map }
            results { value: any }
        }

        /// Reads a box of points of `source`: for each source dimension an
        /// interval `[max(lower results), min(upper results))`, where `lower`
        /// and `upper` are arrays with one `affine_map` per source dimension
        /// over the reader's domain variables and the bounds. A dimension
        /// whose `upper` map has no results is a point at `max(lower)` and is
        /// dropped; `caps` (empty, or one map per source dimension) caps such a
        /// point from above: `min(max(lower), caps...)`, so `min(t+3, T-1)` is
        /// `lower = [(t) -> (t + 3)]`, `caps = [(t)[T] -> (T - 1)]`; a range
        /// dimension's cap has no results. Each interval dimension becomes a leading dimension of the
        /// result, of dynamic size (`tensor<?x...>`): `k[0:t+1]` reads a prefix,
        /// `x[max(0, t-w+1):t+1]` a window, `r[t:T]` a suffix.
        op read_range {
            operands { source: rtensor }
            attributes { lower: array, upper: array, caps: array }
            results { value: any }
        }

        /// A constant point value (`value` is a dense elements attribute of
        /// the result type).
        op constant {
            attributes { value: elements }
            results { result: any }
        }

        /// Elementwise `lhs + rhs`. In every elementwise binary op one operand
        /// may be a scalar (`tensor<f32>`), broadcast to the other's shape.
        op add { operands { lhs: any, rhs: any } results { result: any } }
        /// Elementwise `lhs - rhs`.
        op sub { operands { lhs: any, rhs: any } results { result: any } }
        /// Elementwise `lhs * rhs`.
        op mul { operands { lhs: any, rhs: any } results { result: any } }
        /// Elementwise `lhs / rhs`; for integers signed division toward zero,
        /// with `x / 0 = 0` and `MIN / -1 = MIN` (it never traps).
        op div { operands { lhs: any, rhs: any } results { result: any } }
        /// Elementwise maximum.
        op max { operands { lhs: any, rhs: any } results { result: any } }
        /// Elementwise minimum.
        op min { operands { lhs: any, rhs: any } results { result: any } }
        /// Elementwise negation.
        op neg { operands { operand: any } results { result: any } }
        /// Elementwise `e^x` (floats).
        op exp { operands { operand: any } results { result: any } }
        /// Elementwise natural logarithm (floats).
        op log { operands { operand: any } results { result: any } }
        /// Elementwise square root (floats).
        op sqrt { operands { operand: any } results { result: any } }
        /// Elementwise hyperbolic tangent (floats).
        op tanh { operands { operand: any } results { result: any } }
        /// Elementwise logistic sigmoid `1 / (1 + e^-x)` (floats).
        op sigmoid { operands { operand: any } results { result: any } }
        /// Elementwise `max(x, 0)`.
        op relu { operands { operand: any } results { result: any } }
        /// Elementwise sine (floats).
        op sin { operands { operand: any } results { result: any } }
        /// Elementwise cosine (floats).
        op cos { operands { operand: any } results { result: any } }
        /// Elementwise absolute value.
        op abs { operands { operand: any } results { result: any } }
        /// Elementwise sign: 1 where the operand is positive, -1 where it is
        /// negative, the operand elsewhere (zeros and NaNs), of its type.
        op sign { operands { operand: any } results { result: any } }
        /// Elementwise `lhs ^ rhs` (floats).
        op pow { operands { lhs: any, rhs: any } results { result: any } }
        /// Elementwise logical and (booleans, `i1`).
        op and { operands { lhs: any, rhs: any } results { result: any } }
        /// Elementwise logical or (booleans, `i1`).
        op or { operands { lhs: any, rhs: any } results { result: any } }
        /// Elementwise logical not (booleans, `i1`).
        op not { operands { operand: any } results { result: any } }
        /// The operand's value, through which no gradient passes
        /// (`temporal-autodiff` cuts the path there, then removes it).
        op stop_gradient { operands { operand: any } results { result: any } }
        /// Elementwise comparison giving booleans (`i1`); `predicate` is one of
        /// "eq", "ne", "lt", "le", "gt", "ge" (ordered for floats, signed for integers).
        op cmp { operands { lhs: any, rhs: any } attributes { predicate: string } results { result: any } }
        /// Elementwise `condition ? on_true : on_false` (`where`); a scalar
        /// operand is broadcast.
        op select { operands { condition: any, on_true: any, on_false: any } results { result: any } }
        /// Elementwise conversion to the result's element type (f32, f64,
        /// i32, i64, i1): floats to integers truncate toward zero, booleans
        /// are 0 or 1, anything to a boolean is `x != 0`.
        op cast { operands { operand: any } results { result: any } }

        /// Sum along dimension `axis` (an integer attribute), which is removed.
        op reduce_sum { operands { operand: any } attributes { axis: integer } results { result: any } }
        /// Maximum along dimension `axis`, which is removed (-inf or the
        /// smallest integer for an empty dimension).
        op reduce_max { operands { operand: any } attributes { axis: integer } results { result: any } }

        /// Mean along dimension `axis`, which is removed (floats; NaN for an
        /// empty dimension).
        op reduce_mean { operands { operand: any } attributes { axis: integer } results { result: any } }
        /// Index (i64) of the first maximum along dimension `axis`, which is
        /// removed (0 for an empty dimension; NaN never counts as larger).
        op argmax { operands { operand: any } attributes { axis: integer } results { result: any } }
        /// Running sum along dimension `axis`, which is kept.
        op cumsum { operands { operand: any } attributes { axis: integer } results { result: any } }

        /// Permutes the dimensions: result dimension `i` is operand dimension
        /// `permutation[i]` (an array of integers).
        op permute { operands { operand: any } attributes { permutation: array } results { result: any } }
        /// Reverses dimension `axis`.
        op flip { operands { operand: any } attributes { axis: integer } results { result: any } }
        /// The static box `[offsets, offsets + result shape)` of a static operand
        /// (`offsets`: an array of integers, one per dimension).
        op slice { operands { operand: any } attributes { offsets: array } results { result: any } }
        /// Same elements, row-major, in the result's shape (covers squeeze
        /// and unsqueeze): static shapes with as many elements, or one
        /// dynamic dimension in each with the same static sizes before and
        /// after it (`?x2x8` to `?x16`), which carries the dynamic size over.
        op reshape { operands { operand: any } results { result: any } }
        /// The static box of a static operand at offsets that depend on the
        /// point: `offsets` is an affine map from the define's domain
        /// variables and the bounds to one offset per dimension
        /// (`(t, h)[T, H] -> (h * 8, 0)`); the box must lie inside the
        /// operand at every point computed.
        op dynamic_slice { operands { operand: any } attributes { offsets: affine_map } results { result: any } }
        /// Broadcasts to the result's shape: trailing dimensions align, an
        /// operand dimension of size 1 repeats (to a static size), a dynamic
        /// one stays itself, missing leading ones are added.
        op expand { operands { operand: any } results { result: any } }
        /// Concatenation of two values along `axis`.
        op concat { operands { lhs: any, rhs: any } attributes { axis: integer } results { result: any } }
        /// Rows of `table` (along its first dimension) at the integer
        /// `indices` (any shape; the result is `indices shape x row shape`).
        /// Indices are clamped into `[0, rows - 1]` (index_select/embedding).
        op gather { operands { table: any, indices: any } results { result: any } }
        /// Seeded random values of the result's (floating-point) type:
        /// `distribution` is "uniform" ([0, 1)) or "normal" (mean 0, variance 1).
        /// Each element is a pure function of `seed`, the point's coordinates
        /// and the element's position (a counter-based generator, splitmix64),
        /// so it does not depend on the schedule.
        op random { attributes { seed: integer, distribution: string } results { result: any } }
        /// The reader's position along dimension `dim` (one of its domain's),
        /// as a scalar of the result's element type: `t` at the point `t`.
        op position { attributes { dim: string } results { result: any } }
        /// The bound of dimension `dim` (the number of its points), as a
        /// scalar of the result's element type: `T` for `t < T`.
        op bound { attributes { dim: string } results { result: any } }
        /// The vector `[0, 1, ..., n-1]` of the result's type (`tensor<nx...>`).
        op arange { results { result: any } }
        /// This process's rank among the processes of the run, from 0 to
        /// the world size minus 1 (0 in a run of one process), as a scalar
        /// of the result's element type.
        op rank { results { result: any } }
        /// The number of processes of the run (1 without `mpirun`), as a
        /// scalar of the result's element type.
        op world_size { results { result: any } }
        /// A collective: the elementwise `reduction` ("sum", "mean", "max"
        /// or "min") of `operand` over the processes of the run, the same
        /// value on every process. Every process reaches the same
        /// collectives in the same order, so one may not sit where the
        /// points computed depend on data (a stopped dimension, a read
        /// through data); like an external call it runs once per computed
        /// point even when its value is unused.
        op all_reduce { operands { operand: any } attributes { reduction: string } results { result: any } }
        /// Calls the external function `callee` (a user callback registered
        /// with the runtime under that name); it must return the result's
        /// type, and runs exactly once per point that is computed, in
        /// dependence order. The arguments are the operands of the
        /// `gpu.yield` that is the only op of the `args` region (IRDL unifies
        /// the types of a variadic operand group, so arguments of different
        /// types cannot be operands): `"temporal.call"() ({ "gpu.yield"(%s, %a)
        /// : (tensor<2xf32>, tensor<f32>) -> () }) {callee = "step"}`.
        op call { attributes { callee: string } results { result: any } regions { args } }

        /// Matrix product: `MxK * KxN -> MxN`, `MxK * K -> M` (matrix-vector),
        /// `K * KxN -> N` (vector-matrix) and batched `[batch..., M, K] *
        /// [batch..., K, N] -> [batch..., M, N]` with any number of batch
        /// dimensions, broadcast under NumPy's rules.
        op matmul { operands { lhs: any, rhs: any } results { result: any } }

        /// Einstein summation of one or two operands: `spec` such as
        /// `"bqd,bkd->bqk"` names every dimension of each operand and of the
        /// result; labels missing from the result are summed (in order of
        /// first appearance, products taken left to right, accumulated from
        /// zero). (`rhs` is variadic only to make the second operand
        /// optional: IRDL's variadic operands share one type.)
        op einsum { operands { lhs: any, rhs: variadic any } attributes { spec: string } results { result: any } }
        /// Softmax attention along one label `n`: `combine(softmax_n(scale *
        /// score(query, key)), value)`. `score` is a two-operand einsum
        /// (`"hqd,nhd->hqn"`) whose result has `n` from the key; `combine`
        /// sums exactly `n` and its first operand has the score's labels
        /// (`"hqn,nhd->hqd"`); `scale` is a scalar. Compiled code takes
        /// `block` positions of `n` at a time with a running maximum and sum
        /// (exact in real arithmetic, not bit for bit). Made by
        /// `temporal-tile-ranges`.
        op attention { operands { query: any, key: any, value: any, scale: any } attributes { score: string, combine: string, block: integer } results { result: any } }
        /// Softmax attention over whole sequences in canonical shapes
        /// (queries `[Tq, G, R, Dk]`, keys `[Tk, G, Dk]`, values
        /// `[Tk, G, Dv]`); result `[Tq, G, R, Dv + 2]`: per query row the
        /// output, then the maximum and the sum of the softmax. `band =
        /// "lower:upper"` bounds the keys query position `t` sees to
        /// `[t + lower, t + upper)` (a side left empty: unbounded).
        /// Computed by the runtime's tiled kernels with a running maximum
        /// (exact in real arithmetic, not bit for bit). Made by
        /// `temporal-fuse-attention` (see `tempo_passes::program::Flash`).
        op flash_attention { operands { query: any, key: any, value: any, scale: any } attributes { band: string } results { result: any } }
        /// The queries' half of `flash_attention`'s backward pass, given the
        /// outputs' cotangents `[Tq, G, R, Dv]`: result `[Tq, G, R, Dv + 3 +
        /// Dk]`, per query row the output, maximum, sum, `D = dO . O` and
        /// the queries' cotangent.
        op flash_attention_query_grad { operands { query: any, key: any, value: any, output_grad: any, scale: any } attributes { band: string } results { result: any } }
        /// The keys' half of `flash_attention`'s backward pass from the
        /// query rows' stashed values (queries, output cotangents, maxima,
        /// sums and `D`, each `[Tq, G, R(, D)]`): result `[Tk, G, Dk + Dv]`,
        /// per key its cotangent and its value's.
        op flash_attention_key_grad { operands { query: any, output_grad: any, max: any, sum: any, row_sum: any, key: any, value: any, scale: any } attributes { band: string } results { result: any } }
    }
}
