//! Random recurrent training programs whose per-step products
//! `temporal-pack-products` packs (few rows by a hidden-sized weight that
//! changes only with the training iteration, read as it is or
//! transposed; past 32 rows, a row-major copy of a transposed weight), compiled with fast math (the packed kernel, the
//! first-step contributions, the batched-rows products) against the
//! reference interpreter and against the same compilation without the
//! pass. `TEMPO_PACK_PROGRAMS=N` (default 4) for a longer run
//! (`tools/test.sh --long`: 40).

use crate::{context, interpret, options};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tempo_driver::{CompileOptions, Data, HostArray, RunOptions, run_module};

/// Relative agreement with the interpreter (fused multiply-adds and the
/// library's summation order in float32 over a few training iterations).
const AGREEMENT: f64 = 2e-4;

/// One random program: an RNN `h[i, t] = act(h[i, t-1] W[i] + x[t] U + b)`
/// (`W` read transposed in the product where `transposed`), trained over
/// `i` with plain gradient steps when `trained` (a constant input
/// otherwise), its readout `v[i]` trained always; the mean loss per
/// iteration is the output.
fn program(rows: usize, hidden: usize, input: usize, act: &str, trained: bool, transposed: bool) -> String {
    let (r, h, x) = (rows, hidden, input);
    let hh = format!("tensor<{h}x{h}xf32>");
    let rh = format!("tensor<{r}x{h}xf32>");
    let weight = if trained {
        format!(
            r#"%W = "temporal.tensor"() {{sym_name = "W", domain = ["i"], element = {hh}}} : () -> !temporal.rtensor
"temporal.define"(%W) ({{
  %w = "temporal.read"(%W0) {{index = affine_map<(i)[I, T] -> ()>}} : (!temporal.rtensor) -> {hh}
  %c = "temporal.constant"() {{value = dense<0.05> : tensor<f32>}} : () -> tensor<f32>
  %s = "temporal.mul"(%w, %c) : ({hh}, tensor<f32>) -> {hh}
  "gpu.yield"(%s) : ({hh}) -> ()
}}) {{when = affine_set<(i)[I, T] : (i == 0)>}} : (!temporal.rtensor) -> ()
"temporal.define"(%W) ({{
  %w = "temporal.read"(%W) {{index = affine_map<(i)[I, T] -> (i - 1)>}} : (!temporal.rtensor) -> {hh}
  %g = "temporal.read"(%gW) {{index = affine_map<(i)[I, T] -> (i - 1)>}} : (!temporal.rtensor) -> {hh}
  %sg = "temporal.stop_gradient"(%g) : ({hh}) -> {hh}
  %lr = "temporal.constant"() {{value = dense<0.001> : tensor<f32>}} : () -> tensor<f32>
  %step = "temporal.mul"(%sg, %lr) : ({hh}, tensor<f32>) -> {hh}
  %n = "temporal.sub"(%w, %step) : ({hh}, {hh}) -> {hh}
  "gpu.yield"(%n) : ({hh}) -> ()
}}) {{when = affine_set<(i)[I, T] : (0 == 0)>}} : (!temporal.rtensor) -> ()
%gW = "temporal.grad"(%loss, %W) {{sym_name = "gW"}} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"#
        )
    } else {
        String::new()
    };
    let read_w = if trained {
        format!(r#"%w = "temporal.read"(%W) {{index = affine_map<(i, t)[I, T] -> (i)>}} : (!temporal.rtensor) -> {hh}"#)
    } else {
        format!(
            r#"%w0 = "temporal.read"(%W0) {{index = affine_map<(i, t)[I, T] -> ()>}} : (!temporal.rtensor) -> {hh}
  %c = "temporal.constant"() {{value = dense<0.05> : tensor<f32>}} : () -> tensor<f32>
  %w = "temporal.mul"(%w0, %c) : ({hh}, tensor<f32>) -> {hh}"#
        )
    };
    let product = if transposed {
        format!(
            r#"%wt = "temporal.permute"(%w) {{permutation = [1, 0]}} : ({hh}) -> {hh}
  %wh = "temporal.matmul"(%prev, %wt) : ({rh}, {hh}) -> {rh}"#
        )
    } else {
        format!(r#"%wh = "temporal.matmul"(%prev, %w) : ({rh}, {hh}) -> {rh}"#)
    };
    format!(
        r#""temporal.dim"() {{sym_name = "i", bound = "I"}} : () -> ()
"temporal.dim"() {{sym_name = "t", bound = "T"}} : () -> ()
%W0 = "temporal.input"() {{sym_name = "W0", domain = [], element = {hh}}} : () -> !temporal.rtensor
%v0 = "temporal.input"() {{sym_name = "v0", domain = [], element = tensor<{h}xf32>}} : () -> !temporal.rtensor
%U = "temporal.input"() {{sym_name = "U", domain = [], element = tensor<{x}x{h}xf32>}} : () -> !temporal.rtensor
%x = "temporal.input"() {{sym_name = "x", domain = ["t"], element = tensor<{r}x{x}xf32>}} : () -> !temporal.rtensor
%y = "temporal.input"() {{sym_name = "y", domain = ["t"], element = tensor<{r}xf32>}} : () -> !temporal.rtensor
%v = "temporal.tensor"() {{sym_name = "v", domain = ["i"], element = tensor<{h}xf32>}} : () -> !temporal.rtensor
%h = "temporal.tensor"() {{sym_name = "h", domain = ["i", "t"], element = {rh}}} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {{sym_name = "loss", domain = ["i", "t"], element = tensor<f32>}} : () -> !temporal.rtensor
%L = "temporal.tensor"() {{sym_name = "L", domain = ["i"], element = tensor<f32>}} : () -> !temporal.rtensor
{weight}"temporal.define"(%v) ({{
  %w = "temporal.read"(%v0) {{index = affine_map<(i)[I, T] -> ()>}} : (!temporal.rtensor) -> tensor<{h}xf32>
  "gpu.yield"(%w) : (tensor<{h}xf32>) -> ()
}}) {{when = affine_set<(i)[I, T] : (i == 0)>}} : (!temporal.rtensor) -> ()
"temporal.define"(%v) ({{
  %w = "temporal.read"(%v) {{index = affine_map<(i)[I, T] -> (i - 1)>}} : (!temporal.rtensor) -> tensor<{h}xf32>
  %g = "temporal.read"(%gv) {{index = affine_map<(i)[I, T] -> (i - 1)>}} : (!temporal.rtensor) -> tensor<{h}xf32>
  %sg = "temporal.stop_gradient"(%g) : (tensor<{h}xf32>) -> tensor<{h}xf32>
  %lr = "temporal.constant"() {{value = dense<0.001> : tensor<f32>}} : () -> tensor<f32>
  %step = "temporal.mul"(%sg, %lr) : (tensor<{h}xf32>, tensor<f32>) -> tensor<{h}xf32>
  %n = "temporal.sub"(%w, %step) : (tensor<{h}xf32>, tensor<{h}xf32>) -> tensor<{h}xf32>
  "gpu.yield"(%n) : (tensor<{h}xf32>) -> ()
}}) {{when = affine_set<(i)[I, T] : (0 == 0)>}} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({{
  %u = "temporal.read"(%U) {{index = affine_map<(i, t)[I, T] -> ()>}} : (!temporal.rtensor) -> tensor<{x}x{h}xf32>
  %xt = "temporal.read"(%x) {{index = affine_map<(i, t)[I, T] -> (t)>}} : (!temporal.rtensor) -> tensor<{r}x{x}xf32>
  %ux = "temporal.matmul"(%xt, %u) : (tensor<{r}x{x}xf32>, tensor<{x}x{h}xf32>) -> {rh}
  %h0 = "temporal.{act}"(%ux) : ({rh}) -> {rh}
  "gpu.yield"(%h0) : ({rh}) -> ()
}}) {{when = affine_set<(i, t)[I, T] : (t == 0)>}} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({{
  {read_w}
  %u = "temporal.read"(%U) {{index = affine_map<(i, t)[I, T] -> ()>}} : (!temporal.rtensor) -> tensor<{x}x{h}xf32>
  %prev = "temporal.read"(%h) {{index = affine_map<(i, t)[I, T] -> (i, t - 1)>}} : (!temporal.rtensor) -> {rh}
  %xt = "temporal.read"(%x) {{index = affine_map<(i, t)[I, T] -> (t)>}} : (!temporal.rtensor) -> tensor<{r}x{x}xf32>
  {product}
  %ux = "temporal.matmul"(%xt, %u) : (tensor<{r}x{x}xf32>, tensor<{x}x{h}xf32>) -> {rh}
  %pre = "temporal.add"(%wh, %ux) : ({rh}, {rh}) -> {rh}
  %next = "temporal.{act}"(%pre) : ({rh}) -> {rh}
  "gpu.yield"(%next) : ({rh}) -> ()
}}) {{when = affine_set<(i, t)[I, T] : (t - 1 >= 0)>}} : (!temporal.rtensor) -> ()
"temporal.define"(%loss) ({{
  %vi = "temporal.read"(%v) {{index = affine_map<(i, t)[I, T] -> (i)>}} : (!temporal.rtensor) -> tensor<{h}xf32>
  %ht = "temporal.read"(%h) {{index = affine_map<(i, t)[I, T] -> (i, t)>}} : (!temporal.rtensor) -> {rh}
  %yt = "temporal.read"(%y) {{index = affine_map<(i, t)[I, T] -> (t)>}} : (!temporal.rtensor) -> tensor<{r}xf32>
  %p = "temporal.matmul"(%ht, %vi) : ({rh}, tensor<{h}xf32>) -> tensor<{r}xf32>
  %d = "temporal.sub"(%p, %yt) : (tensor<{r}xf32>, tensor<{r}xf32>) -> tensor<{r}xf32>
  %sq = "temporal.mul"(%d, %d) : (tensor<{r}xf32>, tensor<{r}xf32>) -> tensor<{r}xf32>
  %s = "temporal.reduce_sum"(%sq) {{axis = 0 : i64}} : (tensor<{r}xf32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}}) {{when = affine_set<(i, t)[I, T] : (0 == 0)>}} : (!temporal.rtensor) -> ()
"temporal.define"(%L) ({{
  %l = "temporal.read_range"(%loss) {{lower = [affine_map<(i)[I, T] -> (i)>, affine_map<(i)[I, T] -> (0)>], upper = [affine_map<(i)[I, T] -> ()>, affine_map<(i)[I, T] -> (T)>], caps = [affine_map<(i)[I, T] -> ()>, affine_map<(i)[I, T] -> ()>]}} : (!temporal.rtensor) -> tensor<?xf32>
  %s = "temporal.reduce_mean"(%l) {{axis = 0 : i64}} : (tensor<?xf32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}}) {{when = affine_set<(i)[I, T] : (0 == 0)>}} : (!temporal.rtensor) -> ()
%gv = "temporal.grad"(%loss, %v) {{sym_name = "gv"}} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%L) : (!temporal.rtensor) -> ()
"#
    )
}

/// The outputs' values as f64.
fn values(outputs: &[HostArray]) -> Vec<f64> {
    outputs
        .iter()
        .flat_map(|a| match &a.data {
            Data::F32(v) => v.iter().map(|&x| x as f64).collect::<Vec<_>>(),
            other => panic!("{}: not float32: {other:?}", a.name),
        })
        .collect()
}

/// Compiles with fast math (2 threads), with the passes named left out.
fn compiled(source: &str, bounds: &[(&str, i64)], disabled: &[&str]) -> Vec<f64> {
    let context = context();
    let mut module = melior::ir::Module::parse(&context, source).expect("program parses");
    let run = RunOptions {
        compile: CompileOptions {
            fast_math: true,
            threads: 2,
            disabled: disabled.iter().map(|d| d.to_string()).collect(),
            ..Default::default()
        },
        ..options(bounds, Vec::new(), Some(7))
    };
    values(&run_module(&context, &mut module, &run).unwrap_or_else(|e| panic!("{}\n{source}", e.join("\n"))))
}

#[test]
fn random_packed_products_agree_with_the_interpreter() {
    let count: u64 = std::env::var("TEMPO_PACK_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(4);
    let mut rng = ChaCha8Rng::seed_from_u64(2026_11_28);
    for case in 0..count {
        // Up to 32 rows: panels for the packed kernel; more: a row-major
        // copy of a weight read transposed.
        let rows = rng.random_range(1..=64);
        let hidden = [128, 144, 160, 192, 256][rng.random_range(0..5)];
        let input = rng.random_range(1..=8);
        let act = ["tanh", "sigmoid"][rng.random_range(0..2)];
        let (trained, mut transposed) = (rng.random_bool(0.6), rng.random_bool(0.5));
        // Past 32 rows only a transposed weight is copied: the forward
        // product's, or (trained) the backward pass's.
        transposed |= rows > 32 && !trained;
        let bounds = [("I", rng.random_range(1..=3)), ("T", rng.random_range(1..=5))];
        let what = format!(
            "case {case}: {rows} rows, hidden {hidden}, input {input}, {act}, trained {trained}, transposed {transposed}, {bounds:?}"
        );
        let source = program(rows, hidden, input, act, trained, transposed);
        // The pass packs (or copies) the forward product's weight or, trained,
        // the backward's.
        {
            let context = context();
            let module = melior::ir::Module::parse(&context, &source).expect("program parses");
            let mut model = tempo_passes::program::Program::from_module(module.as_operation()).expect("a program");
            tempo_passes::temporal_autodiff::expand(&mut model).expect("gradients");
            assert!(tempo_passes::temporal_pack_products::pack_products(&mut model), "{what}: nothing packed");
        }
        let want =
            values(&interpret(&source, &bounds, Vec::new(), Some(7)).unwrap_or_else(|e| panic!("{what}: {e:?}")));
        let packed = compiled(&source, &bounds, &[]);
        let plain = compiled(&source, &bounds, &["temporal-pack-products"]);
        for (got, name) in [(&packed, "packed"), (&plain, "without the pass")] {
            assert_eq!(got.len(), want.len(), "{what}: {name}");
            for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= AGREEMENT * w.abs().max(1.0),
                    "{what}: {name}: L[{k}] compiled {g}, interpreted {w}"
                );
            }
        }
        eprintln!("{what}: agree");
    }
}
