//! The generators' gradient mode: `temporal.grad` on random programs shaped
//! like real models, against the interpreter and finite differences.
//!
//! From each generated model program (`ModelGenerator`, every float value
//! f64) the mode builds a scalar loss over the stream's domain, `loss[t] =
//! sum(c * (y tanh(y) + 0.3 y))` of one or two of the program's float
//! outputs `y` (`c` a constant of random weights per element, so that an
//! adjoint landing on the wrong element shows), and declares its gradient
//! with respect to several float inputs: the stream input over `t` (or `b,
//! t`) where there is one, and up to three weights (inputs without a
//! domain). The outputs are the loss and the gradients. Then
//!
//! 1. compiled code (`run_module`, what `tempo-run` runs, at its default
//!    `-O2` and at `-O0`, and with fast math where it sums a weight
//!    gradient as one product over all steps or fuses attention and its
//!    backward halves for the runtime's kernels) equals the reference
//!    interpreter within 1e-9 relative, every output element;
//! 2. a random sample of gradient elements (six per program) equals
//!    central finite differences of the summed loss computed through the
//!    interpreter (the input element moved by ±1e-6; every float input
//!    given explicitly) within 1e-5 relative to `max(1, |g|)`. An element
//!    where the loss is not smooth (a `relu` or `max` kink within the step,
//!    an argmax-fed token that flips) shows as one-sided differences that
//!    disagree, the gradient between them: it is counted and left out.
//!
//! Programs that `temporal-autodiff` refuses with its located "no gradient
//! ... yet" diagnostic are skipped, counted by reason, and the test fails
//! if fewer than 70% of the programs are checked. Any other refusal, a
//! compiled/interpreted difference or a gradient off its finite
//! differences fails the test, naming the seed.
//!
//! `TEMPO_GRADIENT_PROGRAMS=N` (default 12) for a longer run;
//! `TEMPO_SHOW_GRADIENT_PROGRAM=SEED` prints one gradient program;
//! `TEMPO_GRADIENT_DUMP=DIR` writes each checked program and its inputs
//! there (`seedN.mlir`, `seedN.NAME.npy`) for `tempo-run --input NAME=FILE`.

use crate::generators::ModelGenerator;
use melior::ir::Module;
use rand::{Rng, SeedableRng, seq::SliceRandom};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::fmt::Write;
use tempo_driver::{CompileOptions, Data, HostArray, RunOptions, interpret_module, run_module};
use tempo_passes::program::{ElementType, NodeKind, Program};

/// Perturbation of each input element.
const STEP: f64 = 1e-6;
/// Finite differences against gradients: `|fd - g| <= FD_TOLERANCE * max(1, |g|)`.
const FD_TOLERANCE: f64 = 1e-5;
/// Compiled against interpreted: `|c - i| <= AGREEMENT * max(|c|, |i|)`.
const AGREEMENT: f64 = 1e-9;
/// Compiled with fast math against interpreted (f64): `|c - i| <=
/// FAST_MATH_AGREEMENT * max(1, |i|)`.
const FAST_MATH_AGREEMENT: f64 = 1e-9;
/// Gradient elements checked against finite differences per program.
const SAMPLES: usize = 6;
/// One-sided differences further apart than this (relative to `max(1,
/// |g|)`) mark a point where the loss is not smooth: a smooth loss's differ
/// by about `STEP * |f''|`.
const KINK: f64 = 1e-3;

/// A generated program in gradient mode.
struct GradientCase {
    /// The program with the loss as its only output (for finite differences).
    forward: String,
    /// The program with gradients: outputs `loss`, then one gradient per
    /// name of `wrt`, in order.
    gradients: String,
    /// The inputs differentiated by.
    wrt: Vec<String>,
    /// The outputs the loss is made of.
    of: Vec<String>,
    /// Every float input, explicit (the others come from the seed).
    inputs: Vec<HostArray>,
    bounds: Vec<(&'static str, i64)>,
    /// The kinds of layers in the program (tensor names without their
    /// numbers).
    layers: Vec<String>,
}

/// Bounds of the gradient program of `seed`: at least one step.
fn bounds(seed: u64) -> Vec<(&'static str, i64)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x96ad);
    vec![("T", rng.random_range(1..8)), ("B", rng.random_range(1..4))]
}

/// An f64 constant of `shape` (nested lists) with values from `rng`.
fn dense(shape: &[i64], rng: &mut ChaCha8Rng) -> String {
    match shape.split_first() {
        None => format!("{:?}", rng.random_range(0.5..1.5f64)),
        Some((&n, rest)) => {
            let items: Vec<String> = (0..n).map(|_| dense(rest, rng)).collect();
            format!("[{}]", items.join(", "))
        }
    }
}

fn tensor_type(shape: &[i64]) -> String {
    let dims: String = shape.iter().map(|d| format!("{d}x")).collect();
    format!("tensor<{dims}f64>")
}

/// The gradient mode of the model program of `seed` (`None`: it has no
/// float output to make a loss of).
fn gradient_case(seed: u64) -> Option<GradientCase> {
    let source = ModelGenerator::program_in(seed, Some("f64"));
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6772_6164);
    let bounds = bounds(seed);
    let context = crate::context();
    let module = Module::parse(&context, &source).unwrap_or_else(|| panic!("generated program parses:\n{source}"));
    let program = Program::from_module(module.as_operation())
        .unwrap_or_else(|e| panic!("generated program {seed} is read: {e:?}\n{source}"));
    let f64_point = |k: usize| program.tensors[k].point.element == ElementType::F64;
    // The loss: one or two float outputs over the stream's domain.
    let mut outputs: Vec<usize> = program.outputs.iter().copied().filter(|&k| f64_point(k)).collect();
    if outputs.is_empty() {
        return None;
    }
    outputs.shuffle(&mut rng);
    let domain = program.tensors[outputs[0]].domain.clone();
    outputs.retain(|&k| program.tensors[k].domain == domain);
    outputs.truncate(if rng.random_bool(0.5) { 2 } else { 1 });
    // The gradients: the stream input(s) and up to three weights, of those
    // the loss reads (through any chain of reads; a path through an argmax
    // still passes no gradient).
    let mut reached = vec![false; program.tensors.len()];
    let mut stack = outputs.clone();
    while let Some(k) = stack.pop() {
        if std::mem::replace(&mut reached[k], true) {
            continue;
        }
        for node in program.tensors[k].branches.iter().flat_map(|b| &b.nodes) {
            if let NodeKind::Read { source, .. } | NodeKind::ReadRange { source, .. } = &node.kind {
                stack.push(*source);
            }
        }
    }
    let inputs: Vec<usize> =
        (0..program.tensors.len()).filter(|&k| program.tensors[k].is_input && f64_point(k)).collect();
    let (mut streams, mut weights): (Vec<usize>, Vec<usize>) =
        inputs.iter().filter(|&&k| reached[k]).partition(|&&k| !program.tensors[k].domain.is_empty());
    weights.shuffle(&mut rng);
    weights.truncate(rng.random_range(1..=3));
    streams.append(&mut weights);
    let wrt = streams;
    if wrt.is_empty() {
        return None;
    }

    // Affine maps: the loss's domain, and every bound as a symbol in
    // declaration order (as the generator writes them).
    let dims: Vec<&str> = domain.iter().map(|&d| program.dims[d].name.as_str()).collect();
    let symbols: Vec<&str> = program.dims.iter().map(|d| d.bound.as_str()).collect();
    let header = format!("({})[{}]", dims.join(", "), symbols.join(", "));
    let here = dims.join(", ");
    let domain_text: Vec<String> = dims.iter().map(|d| format!("\"{d}\"")).collect();

    let mut base: String =
        source.lines().filter(|l| !l.starts_with("\"temporal.output\"")).map(|l| format!("{l}\n")).collect();
    let _ = writeln!(
        base,
        "%loss = \"temporal.tensor\"() {{sym_name = \"loss\", domain = [{}], element = tensor<f64>}} : () -> !temporal.rtensor",
        domain_text.join(", ")
    );
    let mut body = String::new();
    let mut terms = Vec::new();
    for (j, &k) in outputs.iter().enumerate() {
        let tensor = &program.tensors[k];
        let shape = tensor.point.shape.clone();
        let ty = tensor_type(&shape);
        let weights = dense(&shape, &mut rng);
        let _ = writeln!(
            body,
            "  %y{j} = \"temporal.read\"(%{}) {{index = affine_map<{header} -> ({here})>}} : (!temporal.rtensor) -> {ty}",
            tensor.name
        );
        let _ = writeln!(body, "  %th{j} = \"temporal.tanh\"(%y{j}) : ({ty}) -> {ty}");
        let _ = writeln!(body, "  %yt{j} = \"temporal.mul\"(%y{j}, %th{j}) : ({ty}, {ty}) -> {ty}");
        let _ = writeln!(
            body,
            "  %k{j} = \"temporal.constant\"() {{value = dense<0.3> : tensor<f64>}} : () -> tensor<f64>"
        );
        let _ = writeln!(body, "  %yk{j} = \"temporal.mul\"(%y{j}, %k{j}) : ({ty}, tensor<f64>) -> {ty}");
        let _ = writeln!(body, "  %e{j} = \"temporal.add\"(%yt{j}, %yk{j}) : ({ty}, {ty}) -> {ty}");
        let _ = writeln!(body, "  %c{j} = \"temporal.constant\"() {{value = dense<{weights}> : {ty}}} : () -> {ty}");
        let _ = writeln!(body, "  %w{j}_0 = \"temporal.mul\"(%e{j}, %c{j}) : ({ty}, {ty}) -> {ty}");
        let mut rest = shape.clone();
        let mut last = format!("%w{j}_0");
        for r in 0..shape.len() {
            let from = tensor_type(&rest);
            rest.remove(0);
            let next = format!("%w{j}_{}", r + 1);
            let _ = writeln!(
                body,
                "  {next} = \"temporal.reduce_sum\"({last}) {{axis = 0 : i64}} : ({from}) -> {}",
                tensor_type(&rest)
            );
            last = next;
        }
        terms.push(last);
    }
    let mut total = terms[0].clone();
    for (j, term) in terms.iter().enumerate().skip(1) {
        let _ =
            writeln!(body, "  %sum{j} = \"temporal.add\"({total}, {term}) : (tensor<f64>, tensor<f64>) -> tensor<f64>");
        total = format!("%sum{j}");
    }
    let _ = writeln!(
        base,
        "\"temporal.define\"(%loss) ({{\n{body}  \"gpu.yield\"({total}) : (tensor<f64>) -> ()\n}}) {{when = affine_set<{header} : (0 == 0)>}} : (!temporal.rtensor) -> ()"
    );
    let output = |name: &str| format!("\"temporal.output\"(%{name}) : (!temporal.rtensor) -> ()\n");
    let forward = base.clone() + &output("loss");
    let mut gradients = base;
    for &k in &wrt {
        let name = &program.tensors[k].name;
        let _ = writeln!(
            gradients,
            "%grad_{name} = \"temporal.grad\"(%loss, %{name}) {{sym_name = \"grad_{name}\"}} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor"
        );
    }
    gradients += &output("loss");
    for &k in &wrt {
        gradients += &output(&format!("grad_{}", program.tensors[k].name));
    }

    let bound = |dim: usize| {
        let name = &program.dims[dim].bound;
        bounds.iter().find(|(b, _)| b == name).unwrap_or_else(|| panic!("no bound {name}")).1 as usize
    };
    let arrays = inputs
        .iter()
        .map(|&k| {
            let tensor = &program.tensors[k];
            let mut shape: Vec<usize> = tensor.domain.iter().map(|&d| bound(d)).collect();
            shape.extend(tensor.point.shape.iter().map(|&s| s as usize));
            HostArray::random(&tensor.name, shape, ElementType::F64, seed ^ 0x1a7e)
        })
        .collect();
    let mut layers: Vec<String> = program
        .tensors
        .iter()
        .filter(|t| !t.is_input)
        .map(|t| t.name.trim_end_matches(|c: char| c.is_ascii_digit()).to_string())
        .collect();
    layers.sort();
    layers.dedup();
    Some(GradientCase {
        forward,
        gradients,
        wrt: wrt.iter().map(|&k| program.tensors[k].name.clone()).collect(),
        of: outputs.iter().map(|&k| program.tensors[k].name.clone()).collect(),
        inputs: arrays,
        bounds,
        layers,
    })
}

/// Run options: the case's bounds and inputs (the rest from `seed`), at
/// `level` as `tempo-run -O level` sets it (LLVM and temporal passes).
fn options(case: &GradientCase, inputs: &[HostArray], seed: u64, level: u8) -> RunOptions {
    let mut options = crate::options(&case.bounds, inputs.to_vec(), Some(seed));
    options.compile = CompileOptions { level, disabled: vec![], memory_budget: None, ..Default::default() };
    options
}

fn f64s(array: &HostArray) -> &[f64] {
    match &array.data {
        Data::F64(v) => v,
        other => panic!("output '{}' is not f64: {:?}", array.name, other.element()),
    }
}

fn relative(a: f64, b: f64) -> f64 {
    if a == b { 0.0 } else { (a - b).abs() / a.abs().max(b.abs()) }
}

/// Why the interpreter refused a gradient program, if it is a refusal the
/// mode skips: temporal-autodiff's "no gradient ... yet" (or "no gradient
/// through" an op without one), by reason.
fn skip_reason(errors: &[String]) -> Option<String> {
    let text = errors.join("\n");
    let at = text.find("no gradient")?;
    let rest = &text[at..];
    let end = rest.find([':', '\n', '(']).unwrap_or(rest.len());
    // Tensor names vary; keep the reason's words.
    let words: Vec<&str> = rest[..end].split_whitespace().filter(|w| !w.starts_with('\'')).collect();
    Some(words.join(" "))
}

/// Totals of the outputs (the loss's points summed).
fn total(outputs: &[HostArray]) -> f64 {
    f64s(&outputs[0]).iter().sum()
}

/// The outcome of one program.
enum Outcome {
    Checked { fd: f64, compiled: f64, elements: usize, nonzero: usize, kinks: usize },
    Skipped(String),
}

/// Checks the gradient case of `seed`; `Err` describes a failure.
fn check_case(seed: u64, case: &GradientCase) -> Result<Outcome, String> {
    if let Ok(dir) = std::env::var("TEMPO_GRADIENT_DUMP") {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        std::fs::write(dir.join(format!("seed{seed}.mlir")), &case.gradients).map_err(|e| e.to_string())?;
        std::fs::write(dir.join(format!("seed{seed}.forward.mlir")), &case.forward).map_err(|e| e.to_string())?;
        for a in &case.inputs {
            a.write_npy(&dir.join(format!("seed{seed}.{}.npy", a.name)))?;
        }
    }
    let context = crate::context();
    let parse =
        |text: &str| Module::parse(&context, text).unwrap_or_else(|| panic!("gradient program parses:\n{text}"));
    let interpreted = match interpret_module(&parse(&case.gradients), &options(case, &case.inputs, seed, 2)) {
        Ok(outputs) => outputs,
        Err(errors) => {
            let Some(reason) = skip_reason(&errors) else {
                return Err(format!("the interpreter refuses the gradient program: {}", errors.join("\n")));
            };
            // The compiler refuses it the same way (autodiff runs first in
            // both).
            match run_module(&context, &mut parse(&case.gradients), &options(case, &case.inputs, seed, 2)) {
                Err(c) if skip_reason(&c).is_some() => return Ok(Outcome::Skipped(reason)),
                other => return Err(format!("interpreter: {}; compiled: {other:?}", errors.join("\n"))),
            }
        }
    };
    // (1) Compiled at -O2 and -O0 against the interpreter, and with fast
    // math (-O2's rewrites that change rounding: weight gradients summed
    // as one product over all steps, fused multiply-adds) within
    // FAST_MATH_AGREEMENT where the program has such a sum.
    let mut compiled_error: f64 = 0.0;
    // (Fast math only where it sums a weight gradient or fuses attention
    // and its backward halves for the runtime's kernels: the rest of its
    // rewrites have tests of their own, and each run is a compilation.)
    let summed = splits(case, true) || fuses_attention(case);
    for (level, fast) in [(2u8, false), (0, false), (2, true)] {
        if fast && !summed {
            continue;
        }
        let mut run = options(case, &case.inputs, seed, level);
        run.compile.fast_math = fast;
        let compiled = run_module(&context, &mut parse(&case.gradients), &run)
            .map_err(|e| format!("compiled at -O{level} (fast math: {fast}): {}", e.join("\n")))?;
        if compiled.len() != interpreted.len() {
            return Err(format!("-O{level}: {} outputs compiled, {} interpreted", compiled.len(), interpreted.len()));
        }
        for (c, i) in compiled.iter().zip(&interpreted) {
            if c.name != i.name || c.shape != i.shape {
                return Err(format!(
                    "-O{level}: output {}{:?} compiled, {}{:?} interpreted",
                    c.name, c.shape, i.name, i.shape
                ));
            }
            for (k, (&x, &y)) in f64s(c).iter().zip(f64s(i)).enumerate() {
                if fast {
                    if !((x - y).abs() <= FAST_MATH_AGREEMENT * y.abs().max(1.0)) {
                        return Err(format!("-O{level} fast math: '{}'[{k}]: compiled {x}, interpreted {y}", c.name));
                    }
                    continue;
                }
                let error = relative(x, y);
                if !(error <= AGREEMENT) {
                    return Err(format!("-O{level}: '{}'[{k}]: compiled {x}, interpreted {y}", c.name));
                }
                compiled_error = compiled_error.max(error);
            }
        }
    }

    // (2) Sampled gradient elements against central finite differences.
    let forward = parse(&case.forward);
    let loss_at = |inputs: &[HostArray]| -> Result<f64, String> {
        interpret_module(&forward, &options(case, inputs, seed, 2))
            .map(|o| total(&o))
            .map_err(|e| format!("the loss program: {}", e.join("\n")))
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xfd);
    let mut picks: Vec<(usize, usize)> = Vec::new();
    for s in 0..SAMPLES {
        let j = s % case.wrt.len();
        let len = f64s(&interpreted[1 + j]).len();
        if len > 0 {
            picks.push((j, rng.random_range(0..len)));
        }
    }
    picks.sort();
    picks.dedup();
    let (mut fd_error, mut elements, mut nonzero, mut kinks): (f64, usize, usize, usize) = (0.0, 0, 0, 0);
    let mut centre = None;
    for (j, k) in picks {
        let name = &case.wrt[j];
        let g = f64s(&interpreted[1 + j])[k];
        let slot = case.inputs.iter().position(|a| &a.name == name).expect("wrt inputs are given");
        let moved = |delta: f64| {
            let mut inputs = case.inputs.clone();
            let Data::F64(v) = &mut inputs[slot].data else { unreachable!("f64 inputs") };
            v[k] += delta;
            inputs
        };
        let (up, down) = (loss_at(&moved(STEP))?, loss_at(&moved(-STEP))?);
        let fd = (up - down) / (2.0 * STEP);
        let error = (fd - g).abs() / g.abs().max(1.0);
        if error <= FD_TOLERANCE {
            fd_error = fd_error.max(error);
            elements += 1;
            nonzero += usize::from(g.abs() > 1e-9);
            continue;
        }
        // Not smooth here? The one-sided differences then disagree, and the
        // gradient (one side's slope) lies between them.
        let at = match centre {
            Some(c) => c,
            None => *centre.insert(loss_at(&case.inputs)?),
        };
        let (right, left) = ((up - at) / STEP, (at - down) / STEP);
        let scale = g.abs().max(1.0);
        let between = g >= right.min(left) - FD_TOLERANCE * scale && g <= right.max(left) + FD_TOLERANCE * scale;
        if (right - left).abs() > KINK * scale && between {
            kinks += 1;
            continue;
        }
        return Err(format!(
            "d loss / d {name}[{k}] (flat): gradient {g}, central finite differences {fd} \
             (one-sided {left} and {right}); error {error:.1e}"
        ));
    }
    Ok(Outcome::Checked { fd: fd_error, compiled: compiled_error, elements, nonzero, kinks })
}

#[test]
fn random_programs_gradients_match_finite_differences() {
    if let Ok(seed) = std::env::var("TEMPO_SHOW_GRADIENT_PROGRAM") {
        let seed = seed.parse().expect("a seed");
        match gradient_case(seed) {
            Some(case) => eprintln!("{}\n// bounds: {:?}", case.gradients, case.bounds),
            None => eprintln!("model program {seed} has no gradient mode"),
        }
    }
    let count: u64 = std::env::var("TEMPO_GRADIENT_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(12);
    let start = std::time::Instant::now();
    let (mut checked, mut elements, mut nonzero, mut kinks) = (0u64, 0, 0, 0);
    let (mut fd_error, mut compiled_error) = (0.0f64, 0.0f64);
    let mut skipped: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut layers: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut split_products = 0;
    let mut summed = 0;
    let mut fused = 0;
    for seed in 0..count {
        if std::env::var("TEMPO_TRACE").is_ok() {
            eprintln!("gradient program {seed}");
        }
        let Some(case) = gradient_case(seed) else {
            skipped.entry("no float output or input".into()).or_default().push(seed);
            continue;
        };
        match check_case(seed, &case) {
            Ok(Outcome::Checked { fd, compiled, elements: e, nonzero: z, kinks: n }) => {
                checked += 1;
                split_products += usize::from(splits_products(&case));
                summed += usize::from(splits(&case, true));
                fused += usize::from(fuses_attention(&case));
                elements += e;
                nonzero += z;
                kinks += n;
                fd_error = fd_error.max(fd);
                compiled_error = compiled_error.max(compiled);
                for layer in &case.layers {
                    *layers.entry(layer.clone()).or_default() += 1;
                }
            }
            Ok(Outcome::Skipped(reason)) => skipped.entry(reason).or_default().push(seed),
            Err(e) => failures.push(format!(
                "gradient program {seed} (loss of {:?}, gradients by {:?}, bounds {:?}): {e}\n{}",
                case.of, case.wrt, case.bounds, case.gradients
            )),
        }
    }
    let skips: Vec<String> =
        skipped.iter().map(|(why, seeds)| format!("{} ({why}: seeds {seeds:?})", seeds.len())).collect();
    eprintln!(
        "gradient mode: {checked} of {count} model programs checked ({elements} gradient elements against finite \
         differences, {nonzero} of them nonzero, {kinks} at non-smooth points left out), skipped: {}; max finite-difference error {fd_error:.1e}, \
         max compiled/interpreted difference {compiled_error:.1e} (-O2 and -O0); {:.1} s",
        if skips.is_empty() { "none".to_string() } else { skips.join(", ") },
        start.elapsed().as_secs_f64()
    );
    eprintln!("gradient mode: layers of the checked programs: {layers:?}");
    eprintln!(
        "gradient mode: {split_products} checked programs have time-parallel work split out of per-step products \
         (temporal-split-products at -O2); {summed} with fast math sum a weight gradient as one product over all steps; \
         {fused} fuse attention's backward halves (temporal-fuse-attention, compared with fast math)"
    );
    assert!(failures.is_empty(), "{} gradient programs failed:\n{}", failures.len(), failures.join("\n\n"));
    assert!(checked * 10 >= count * 7, "only {checked} of {count} gradient programs were checked");
    assert!(split_products >= 1 || count < 12, "no gradient program splits per-step products");
    assert!(fused >= 1 || count < 12, "no gradient program fuses attention's backward pass");
}

/// Whether `temporal-fuse-attention` (fast math) fuses a backward half of
/// attention in the gradient program of `case` (after `temporal-autodiff`).
fn fuses_attention(case: &GradientCase) -> bool {
    let context = crate::context();
    let Some(module) = Module::parse(&context, &case.gradients) else { return false };
    let Ok(mut program) = Program::from_module(module.as_operation()) else { return false };
    if tempo_passes::temporal_autodiff::expand(&mut program).is_err() {
        return false;
    }
    tempo_passes::temporal_fuse_attention::fuse_attention(&mut program)
        && program.tensors.iter().flat_map(|t| &t.branches).flat_map(|b| &b.nodes).any(|n| {
            matches!(&n.kind, NodeKind::FlashAttention(f, _) if f.part != tempo_passes::program::FlashPart::Forward)
        })
}

/// Whether `temporal-split-products` splits the gradient program of `case`
/// (after `temporal-autodiff` and `temporal-split-recurrences`) at its
/// bounds: the -O2 run then compares the split program's results.
fn splits_products(case: &GradientCase) -> bool {
    splits(case, false)
}

/// Whether `temporal-split-products` splits the gradient program of
/// `case`; with `inexact`, whether it sums a weight gradient's running sum
/// as one product over all steps (the running sum left as zeros).
fn splits(case: &GradientCase, inexact: bool) -> bool {
    let context = crate::context();
    let Some(module) = Module::parse(&context, &case.gradients) else { return false };
    let Ok(mut program) = Program::from_module(module.as_operation()) else { return false };
    if tempo_passes::temporal_autodiff::expand(&mut program).is_err() {
        return false;
    }
    let values: Vec<Option<i64>> =
        program.dims.iter().map(|d| case.bounds.iter().find(|(name, _)| *name == d.bound).map(|&(_, v)| v)).collect();
    tempo_passes::temporal_split_recurrences::split_recurrences(&mut program, &values);
    let split = tempo_passes::temporal_split_products::split_products_with(&mut program, &values, inexact);
    if !inexact {
        return split;
    }
    program.tensors.iter().any(|t| {
        t.name.contains("$s$")
            && matches!(t.branches.as_slice(), [b] if matches!(b.nodes.first().map(|n| &n.kind),
                Some(NodeKind::Constant { values, .. }) if **values == [0.0]))
    })
}

/// Gradients through a branch that holds at one step (a model's `t == 0`
/// or `t == T - 1` branch) give contribution tensors read at that step
/// only, which `temporal-drop-pinned-dims` (on at -O2, which the gradient
/// mode compiles at, and left out in turn by the optimization variants)
/// computes there alone: a few of the gradient programs have one (3 of
/// the first 100), whose gradients the suite checks with the pass on.
#[test]
fn gradient_programs_exercise_pinned_dims() {
    let context = crate::context();
    let (mut cases, mut pinned) = (0, 0);
    for seed in 0..100 {
        let Some(case) = gradient_case(seed) else { continue };
        cases += 1;
        let module = Module::parse(&context, &case.gradients).expect("a gradient program parses");
        let mut program = Program::from_module(module.as_operation()).expect("a gradient program is read");
        if tempo_passes::temporal_autodiff::expand(&mut program).is_ok()
            && tempo_passes::temporal_drop_pinned_dims::drop_pinned_dims(&mut program)
        {
            pinned += 1;
        }
    }
    eprintln!("{pinned} of {cases} gradient programs drop a pinned dimension");
    assert!(pinned >= 2, "only {pinned} of {cases} gradient programs drop a pinned dimension");
}
