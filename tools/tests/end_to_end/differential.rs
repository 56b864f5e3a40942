//! Differential testing: compiled code against the reference interpreter.
//!
//! Every program of the corpus (the bundled examples and hand-written cases
//! below) and every randomly generated program is run both ways; the two
//! must agree: the same outputs (bit-exact for integers, a tight tolerance
//! for floats), or both an error. The generator is seeded and bounded; set
//! `TEMPO_RANDOM_PROGRAMS=N` (default 120; `tools/test.sh --long` runs 1200) for a longer run, e.g.
//! `TEMPO_RANDOM_PROGRAMS=5000 cargo test -p tempo-tools --test end_to_end random`.

use crate::generators::{CollectiveGenerator, DynamicGenerator, GeneralGenerator, Generator, ModelGenerator};
use crate::{example, interpret, run_optimized};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tempo_driver::{CompileOptions, Data, HostArray};

fn close_f64(a: f64, b: f64, tolerance: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tolerance * (1.0 + a.abs().max(b.abs()))
}

/// Compares outputs; `Err` describes the first difference.
fn compare(compiled: &[HostArray], interpreted: &[HostArray]) -> Result<(), String> {
    if compiled.len() != interpreted.len() {
        return Err(format!("{} outputs compiled, {} interpreted", compiled.len(), interpreted.len()));
    }
    for (c, i) in compiled.iter().zip(interpreted) {
        if c.name != i.name || c.shape != i.shape {
            return Err(format!("output {}{:?} vs {}{:?}", c.name, c.shape, i.name, i.shape));
        }
        let mismatch = match (&c.data, &i.data) {
            (Data::F32(a), Data::F32(b)) => a.iter().zip(b).position(|(&x, &y)| !close_f64(x as f64, y as f64, 1e-5)),
            (Data::F64(a), Data::F64(b)) => a.iter().zip(b).position(|(&x, &y)| !close_f64(x, y, 1e-12)),
            (a, b) if a == b => None,
            (a, b) if a.element() != b.element() => Some(0),
            (a, b) => (0..a.len()).position(|k| a.get_f64(k) != b.get_f64(k)),
        };
        if let Some(k) = mismatch {
            return Err(format!(
                "output {} differs at flat index {k}: compiled {} vs interpreted {}",
                c.name,
                c.data.get_f64(k),
                i.data.get_f64(k)
            ));
        }
    }
    Ok(())
}

/// Runs `source` both ways with `bounds`; panics (naming `what`: a file
/// name, or the program text itself) if only one side fails or the outputs
/// differ. Returns whether the program ran.
fn check_both(source: &str, bounds: &[(&str, i64)], seed: u64, what: &str) -> bool {
    check_optimized(source, bounds, seed, what, CompileOptions::default())
}

/// [`check_both`] with the compiled side optimized as `optimization` says.
fn check_optimized(source: &str, bounds: &[(&str, i64)], seed: u64, what: &str, optimization: CompileOptions) -> bool {
    let interpreted = interpret(source, bounds, vec![], Some(seed));
    check_against(&interpreted, source, bounds, seed, what, optimization)
}

/// [`check_optimized`] against results the interpreter already gave.
fn check_against(
    interpreted: &Result<Vec<HostArray>, Vec<String>>,
    source: &str,
    bounds: &[(&str, i64)],
    seed: u64,
    what: &str,
    optimization: CompileOptions,
) -> bool {
    let label = format!(
        "-O{} without {:?}, memory budget {:?}",
        optimization.level, optimization.disabled, optimization.memory_budget
    );
    let compiled = run_optimized(source, bounds, vec![], Some(seed), optimization);
    match (&compiled, interpreted) {
        (Ok(c), Ok(i)) => {
            if let Err(e) = compare(c, i) {
                panic!("compiled ({label}) and interpreted results differ ({bounds:?}, seed={seed}): {e}\n{what}");
            }
            true
        }
        (Err(c), Err(i)) => {
            show_failures(seed, "compiled", c, i);
            false
        }
        _ => panic!(
            "only one side failed ({bounds:?}, seed={seed}, {label}):\ncompiled: {compiled:?}\ninterpreted: {interpreted:?}\n{what}"
        ),
    }
}

/// With `TEMPO_SHOW_FAILURES` set, prints why both sides refused a program.
fn show_failures(seed: u64, side: &str, compiled: &[String], interpreted: &[String]) {
    if std::env::var("TEMPO_SHOW_FAILURES").is_ok() {
        eprintln!(
            "both failed (seed {seed}):\n  {side}: {}\n  interpreted: {}",
            compiled.join(" | "),
            interpreted.join(" | ")
        );
    }
}

/// [`check_both`] for programs over one dimension `t < T`.
fn check(source: &str, bound: i64, seed: u64) -> bool {
    check_both(source, &[("T", bound)], seed, source)
}

/// The bundled MLIR examples over one dimension `t < T`.
const EXAMPLES_OVER_T: [&str; 9] = [
    "counter.mlir",
    "fibonacci.mlir",
    "running_sum.mlir",
    "rnn.mlir",
    "returns.mlir",
    "causal_attention.mlir",
    "windowed_attention.mlir",
    "suffix_sum.mlir",
    "prefix_recurrence.mlir",
];

/// The bundled MLIR examples over two dimensions: the other one's bound.
const EXAMPLES_OVER_T_AND: [(&str, &str); 3] =
    [("batched_max.mlir", "B"), ("stacked_rnn.mlir", "L"), ("cumulative_sum.mlir", "")];

#[test]
fn examples_agree_with_the_interpreter() {
    for name in EXAMPLES_OVER_T {
        for bound in [0, 1, 2, 7, 30] {
            assert!(check(&example(name), bound, 3), "{name} with T={bound} failed both ways");
        }
    }
    // Examples over two dimensions.
    for (name, other) in EXAMPLES_OVER_T_AND {
        for (steps, size) in [(1, 1), (2, 3), (7, 1), (9, 4)] {
            let mut bounds = vec![("T", steps)];
            if !other.is_empty() {
                bounds.push((other, size));
            }
            assert!(check_both(&example(name), &bounds, 3, name), "{name} at {bounds:?} failed both ways");
        }
    }
}

pub(crate) const HEADER: &str = "\"temporal.dim\"() {sym_name = \"t\", bound = \"T\"} : () -> ()\n";

/// Hand-written programs covering the conditions, read distances and ops of
/// the current lowering: `(name, body, T values that must succeed)`.
fn corpus() -> Vec<(&'static str, String)> {
    let define = |target: &str, when: &str, body: &str| {
        format!(
            "\"temporal.define\"({target}) ({{\n{body}\n}}) {{when = affine_set<(t)[T] : ({when})>}} : (!temporal.rtensor) -> ()\n"
        )
    };
    let tensor = |name: &str, ty: &str| {
        format!(
            "%{name} = \"temporal.tensor\"() {{sym_name = \"{name}\", domain = [\"t\"], element = {ty}}} : () -> !temporal.rtensor\n"
        )
    };
    let read = |v: &str, src: &str, idx: &str, ty: &str| {
        format!(
            "  {v} = \"temporal.read\"({src}) {{index = affine_map<(t)[T] -> ({idx})>}} : (!temporal.rtensor) -> {ty}"
        )
    };
    let constant = |v: &str, value: &str, ty: &str| {
        format!("  {v} = \"temporal.constant\"() {{value = dense<{value}> : {ty}}} : () -> {ty}")
    };
    let yield_ = |v: &str, ty: &str| format!("  \"gpu.yield\"({v}) : ({ty}) -> ()");
    let mut programs = Vec::new();

    // Parity-dependent branches: even steps add, odd steps multiply.
    let f = "tensor<f64>";
    let mut p = String::from(HEADER) + &tensor("z", f);
    p += &define("%z", "t == 0", &[constant("%c", "1.5", f), yield_("%c", f)].join("\n"));
    p += &define(
        "%z",
        "t mod 2 == 0",
        &[
            read("%p", "%z", "t - 1", f),
            constant("%c", "0.25", f),
            "  %s = \"temporal.add\"(%p, %c) : (tensor<f64>, tensor<f64>) -> tensor<f64>".into(),
            yield_("%s", f),
        ]
        .join("\n"),
    );
    p += &define(
        "%z",
        "0 == 0",
        &[
            read("%p", "%z", "t - 1", f),
            constant("%c", "-1.1", f),
            "  %s = \"temporal.mul\"(%p, %c) : (tensor<f64>, tensor<f64>) -> tensor<f64>".into(),
            yield_("%s", f),
        ]
        .join("\n"),
    );
    p += "\"temporal.output\"(%z) : (!temporal.rtensor) -> ()\n";
    programs.push(("parity", p));

    // Two tensors feeding each other one step back, plus a same-step read.
    let v = "tensor<3xi32>";
    let mut p = String::from(HEADER) + &tensor("a", v) + &tensor("b", v);
    p += &define("%a", "-t >= 0", &[constant("%c", "[1, 2, 3]", v), yield_("%c", v)].join("\n"));
    p += &define(
        "%a",
        "0 == 0",
        &[
            read("%p", "%b", "t - 1", v),
            constant("%c", "2", v),
            "  %s = \"temporal.mul\"(%p, %c) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>".into(),
            yield_("%s", v),
        ]
        .join("\n"),
    );
    p += &define(
        "%b",
        "0 == 0",
        &[
            read("%p", "%a", "t", v),
            constant("%c", "-5", v),
            "  %s = \"temporal.add\"(%p, %c) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>".into(),
            "  %m = \"temporal.max\"(%s, %p) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>".into(),
            yield_("%m", v),
        ]
        .join("\n"),
    );
    p += "\"temporal.output\"(%a) : (!temporal.rtensor) -> ()\n\"temporal.output\"(%b) : (!temporal.rtensor) -> ()\n";
    programs.push(("ping-pong", p));

    // A window of three past values with a floating-point nonlinearity.
    let w = "tensor<2x2xf32>";
    let mut p = String::from(HEADER) + &tensor("q", w);
    p += &define("%q", "2 - t >= 0", &[constant("%c", "[[0.5, -0.5], [0.25, 1.0]]", w), yield_("%c", w)].join("\n"));
    p += &define(
        "%q",
        "0 == 0",
        &[
            read("%a", "%q", "t - 1", w),
            read("%b", "%q", "t - 3", w),
            "  %m = \"temporal.matmul\"(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>".into(),
            "  %s = \"temporal.sigmoid\"(%m) : (tensor<2x2xf32>) -> tensor<2x2xf32>".into(),
            "  %r = \"temporal.relu\"(%s) : (tensor<2x2xf32>) -> tensor<2x2xf32>".into(),
            yield_("%r", w),
        ]
        .join("\n"),
    );
    p += "\"temporal.output\"(%q) : (!temporal.rtensor) -> ()\n";
    programs.push(("window-of-three", p));
    programs
}

#[test]
fn corpus_agrees_with_the_interpreter() {
    for (name, program) in corpus() {
        for bound in [0, 1, 4, 11] {
            assert!(check(&program, bound, 1), "{name} with T={bound} failed both ways");
        }
    }
}

#[test]
fn random_programs_agree_with_the_interpreter() {
    let count: u64 = std::env::var("TEMPO_RANDOM_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(120);
    let mut succeeded = 0;
    for seed in 0..count {
        let program = Generator::program(seed);
        let bound = ChaCha8Rng::seed_from_u64(seed ^ 0xabcdef).random_range(0..12);
        if check(&program, bound, seed) {
            succeeded += 1;
        }
    }
    eprintln!("{succeeded} of {count} generated programs ran; the others failed both ways");
    if let Ok(seed) = std::env::var("TEMPO_SHOW_PROGRAM") {
        eprintln!("{}", Generator::program(seed.parse().expect("a seed")));
    }
    // Most generated programs are well-formed; both-error cases are a minority.
    assert!(succeeded * 10 >= count * 7, "only {succeeded} of {count} generated programs ran");
}

/// [`check_both`] for general programs over `t < T` and `b < B`.
fn check_general(source: &str, t: i64, b: i64, seed: u64) -> bool {
    check_both(source, &[("T", t), ("B", b)], seed, source)
}

#[test]
fn random_general_programs_agree_with_the_interpreter() {
    let count: u64 = std::env::var("TEMPO_RANDOM_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(120);
    let mut succeeded = 0;
    for seed in 0..count {
        let program = GeneralGenerator::program(seed);
        if std::env::var("TEMPO_TRACE").is_ok() {
            eprintln!("general program {seed}");
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        let (t, b) = (rng.random_range(0..9), rng.random_range(1..4));
        if check_general(&program, t, b, seed) {
            succeeded += 1;
        }
    }
    eprintln!("{succeeded} of {count} general programs ran; the others failed both ways");
    if let Ok(seed) = std::env::var("TEMPO_SHOW_GENERAL_PROGRAM") {
        eprintln!("{}", GeneralGenerator::program(seed.parse().expect("a seed")));
    }
    assert!(succeeded * 10 >= count * 6, "only {succeeded} of {count} general programs ran");
}

/// Bounds of a generated model program of `seed`: at least one step.
fn model_bounds(seed: u64) -> [(&'static str, i64); 2] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x10de1);
    [("T", rng.random_range(1..10)), ("B", rng.random_range(1..4))]
}

/// Random model programs (gates of two products, MLPs, SwiGLU, LSTM and
/// GRU cells, grouped-query attention with rotary embeddings, argmax-fed
/// embeddings; `generators/model.rs`) agree with the interpreter at the
/// default level and, in rotation, in one more configuration each (every
/// level, fusion on and off, each -O2 pass left out). All are well-formed,
/// so each must run. `TEMPO_MODEL_PROGRAMS=N` (default 30) for a longer
/// run; `TEMPO_SHOW_MODEL_PROGRAM=SEED` prints one.
#[test]
fn random_model_programs_agree_with_the_interpreter() {
    if let Ok(seed) = std::env::var("TEMPO_SHOW_MODEL_PROGRAM") {
        eprintln!("{}", ModelGenerator::program(seed.parse().expect("a seed")));
    }
    let count: u64 = std::env::var("TEMPO_MODEL_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let variants = zoo_variants().into_iter().chain(optimization_variants()).collect::<Vec<_>>();
    for seed in 0..count {
        let program = ModelGenerator::program(seed);
        if std::env::var("TEMPO_TRACE").is_ok() {
            eprintln!("model program {seed}");
        }
        let bounds = model_bounds(seed);
        assert!(check_both(&program, &bounds, seed, &program), "model program {seed} must run");
        let variant = variants[seed as usize % variants.len()].clone();
        assert!(check_optimized(&program, &bounds, seed, &program, variant), "model program {seed} must run");
    }
}

/// Random programs of several all-reduces (`generators/collectives.rs`),
/// independent or reading each other at the same point, the one before, a
/// reversed point or a range: compiled at `-O2` (where
/// `temporal-fuse-collectives` merges the independent ones into one
/// message) they agree bit for bit with the interpreter, which runs the
/// program as written (one process: each all-reduce is its operand, so a
/// value sliced from the wrong place of a merged buffer shows). The pass
/// must have merged collectives in at least a third of them (counted with
/// `tempo-opt`). The GPU lowering run on the CPU agrees as well. `TEMPO_COLLECTIVE_PROGRAMS=N` (default 24) for a longer
/// run; `TEMPO_SHOW_COLLECTIVE_PROGRAM=SEED` prints one.
#[test]
fn random_collective_programs_agree_with_the_interpreter() {
    if let Ok(seed) = std::env::var("TEMPO_SHOW_COLLECTIVE_PROGRAM") {
        eprintln!("{}", CollectiveGenerator::program(seed.parse().expect("a seed")));
    }
    let count: u64 = std::env::var("TEMPO_COLLECTIVE_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(24);
    let collectives = |text: &str, pass: bool| -> usize {
        use std::io::Write;
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tempo-opt"));
        command.arg("-");
        if pass {
            command.arg("--temporal-fuse-collectives");
        }
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("tempo-opt runs");
        child.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("written");
        let out = child.wait_with_output().expect("tempo-opt ends");
        assert!(out.status.success(), "tempo-opt failed on\n{text}");
        String::from_utf8_lossy(&out.stdout).matches("temporal.all_reduce").count()
    };
    let mut merged = 0;
    for seed in 0..count {
        let program = CollectiveGenerator::program(seed);
        let bounds = [("T", 1 + (seed % 5) as i64)];
        assert!(check_both(&program, &bounds, seed, &program), "collective program {seed} must run");
        // The GPU lowering's all-reduce (the runtime's, on host memory
        // here: MPI's, the identity for one process) agrees too.
        let threads = 1 + (seed % 2) as usize;
        let outcome = check_gpu_loops(&program, &bounds, seed, threads, &program);
        assert!(matches!(outcome, GpuLoopsOutcome::Agreed), "collective program {seed} on the GPU lowering");
        if collectives(&program, true) < collectives(&program, false) {
            merged += 1;
        }
    }
    assert!(merged * 3 >= count, "only {merged} of {count} collective programs had all-reduces merged");
}

/// Random programs with dynamic structure (`generators/dynamic.rs`): tree
/// cells (sums, gates, GRU-like and LSTM-like pairs) over complete trees
/// numbered forward or backward, children read through data at numbers
/// computed in the cell, by tensors of their own or as offsets, and the
/// root read through data; and RNN loops stopped where a statistic of the
/// state passes a threshold, read whole, reversed and at their last step
/// after the stop. Each agrees with the interpreter at the default level;
/// each tree also one by one (`depth-batching` off) and with the
/// lowering's fusion off (a batched group and a single point are fused
/// differently: issue 40's wrong concatenations hid there); each program,
/// in rotation, in one more configuration. `TEMPO_DYNAMIC_PROGRAMS=N` (default 24 of each) for a
/// longer run; `TEMPO_SHOW_DYNAMIC_PROGRAM=SEED` prints a tree program.
#[test]
fn random_dynamic_programs_agree_with_the_interpreter() {
    if let Ok(seed) = std::env::var("TEMPO_SHOW_DYNAMIC_PROGRAM") {
        eprintln!("{}", DynamicGenerator::tree(seed.parse().expect("a seed")));
    }
    let count: u64 = std::env::var("TEMPO_DYNAMIC_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(24);
    let variants = optimization_variants();
    let one_by_one = CompileOptions {
        level: 2,
        disabled: vec![tempo_passes::optimize::DEPTH_BATCHING.to_string()],
        memory_budget: None,
        ..Default::default()
    };
    let unfused = CompileOptions {
        level: 2,
        disabled: vec![tempo_passes::optimize::FUSION.to_string()],
        memory_budget: None,
        ..Default::default()
    };
    let (mut trees, mut stops) = (0, 0);
    for seed in 0..count {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7ee5);
        let tree = DynamicGenerator::tree(seed);
        let bounds = [("N", rng.random_range(1..48))];
        // (Interpreted once, against each configuration.)
        let interpreted = interpret(&tree, &bounds, vec![], Some(seed));
        if check_against(&interpreted, &tree, &bounds, seed, &tree, CompileOptions::default()) {
            trees += 1;
            for variant in [one_by_one.clone(), unfused.clone(), variants[seed as usize % variants.len()].clone()] {
                check_against(&interpreted, &tree, &bounds, seed, &tree, variant);
            }
        }
        let stopping = DynamicGenerator::stopping(seed);
        let mut bounds = vec![("T", rng.random_range(1..16))];
        if stopping.contains("sym_name = \"b\"") {
            bounds.push(("B", rng.random_range(0..5)));
        }
        let interpreted = interpret(&stopping, &bounds, vec![], Some(seed));
        if check_against(&interpreted, &stopping, &bounds, seed, &stopping, CompileOptions::default()) {
            stops += 1;
            let variant = variants[seed as usize % variants.len()].clone();
            check_against(&interpreted, &stopping, &bounds, seed, &stopping, variant);
        }
    }
    eprintln!("{trees} of {count} tree programs and {stops} of {count} stopping loops ran");
    assert!(trees * 10 >= count * 9 && stops * 10 >= count * 9, "only {trees} trees and {stops} stops of {count} ran");
}

/// A program of `examples/corpus/`: file name, text and bounds.
type CorpusProgram = (String, String, Vec<(String, i64)>);

/// The programs of `examples/corpus/`, sorted by file name: name, text and
/// the bounds of their first line (`// bounds: T=9 B=3`).
fn corpus_directory() -> Vec<CorpusProgram> {
    let dir = format!("{}/../examples/corpus", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).expect("corpus directory").map(|e| e.expect("entry").path()).collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let source = std::fs::read_to_string(&path).expect("readable");
            let name = path.display().to_string();
            let header = source
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("// bounds:"))
                .unwrap_or_else(|| panic!("{name}: the first line must be `// bounds: NAME=VALUE ...`"));
            let bounds = header
                .split_whitespace()
                .map(|kv| {
                    let (k, v) = kv.split_once('=').expect("NAME=VALUE");
                    (k.to_string(), v.parse().expect("an integer bound"))
                })
                .collect();
            (name, source, bounds)
        })
        .collect()
}

/// Every program in `examples/corpus/` (first line `// bounds: T=9 B=3`)
/// runs both ways with its bounds, and with each bound set to 1.
#[test]
fn corpus_directory_agrees_with_the_interpreter() {
    let programs = corpus_directory();
    assert!(!programs.is_empty());
    for (name, source, bounds) in programs {
        fn as_refs(b: &[(String, i64)]) -> Vec<(&str, i64)> {
            b.iter().map(|(k, v)| (k.as_str(), *v)).collect()
        }
        assert!(check_both(&source, &as_refs(&bounds), 1, &name), "{name} must run with its own bounds");
        for k in 0..bounds.len() {
            let mut small = bounds.clone();
            small[k].1 = 1;
            check_both(&source, &as_refs(&small), 2, &name);
        }
    }
}

/// Every optimization configuration the differential tests try besides the
/// default: no temporal passes, level 1, level 3 (inexact rules and attention
/// tiling, compared within tolerance; also without the tiling), and level 2 with each pass left out
/// (and with the lowering's fusion off).
fn optimization_variants() -> Vec<CompileOptions> {
    let mut out = vec![
        CompileOptions { level: 0, disabled: vec![], memory_budget: None, ..Default::default() },
        CompileOptions { level: 1, disabled: vec![], memory_budget: None, ..Default::default() },
        CompileOptions { level: 3, disabled: vec![], memory_budget: None, ..Default::default() },
        CompileOptions {
            level: 3,
            disabled: vec!["temporal-tile-ranges".to_string()],
            memory_budget: None,
            ..Default::default()
        },
        // Without the fused attention, the tiling takes the chains.
        CompileOptions {
            level: 3,
            disabled: vec!["temporal-fuse-attention".to_string()],
            memory_budget: None,
            ..Default::default()
        },
    ];
    for pass in tempo_passes::optimize::unique(tempo_passes::optimize::O2_PASSES) {
        out.push(CompileOptions {
            level: 2,
            disabled: vec![pass.to_string()],
            memory_budget: None,
            ..Default::default()
        });
    }
    out.push(CompileOptions {
        level: 2,
        disabled: vec![tempo_passes::optimize::FUSION.to_string()],
        memory_budget: None,
        ..Default::default()
    });
    // A budget of nothing: level 2 tiles every attention over a range.
    out.push(CompileOptions { level: 2, disabled: vec![], memory_budget: Some(0), ..Default::default() });
    out
}

/// Every `-O` level, each with the lowering's fusion on and off (`-O0`
/// does not fuse).
fn zoo_variants() -> Vec<CompileOptions> {
    (0..=3)
        .flat_map(|level| {
            [vec![], vec![tempo_passes::optimize::FUSION.to_string()]].map(|disabled| CompileOptions {
                level,
                disabled,
                memory_budget: None,
                ..Default::default()
            })
        })
        .filter(|v| v.level > 0 || v.disabled.is_empty())
        .collect()
}

/// The model zoo of the corpus (`examples/corpus/zoo_*.mlir`: an LSTM
/// language model, a GRU, a Llama-style block, a GPT block, an MLP).
pub(crate) fn zoo() -> Vec<CorpusProgram> {
    let zoo: Vec<_> = corpus_directory()
        .into_iter()
        .filter(|(name, _, _)| name.rsplit('/').next().is_some_and(|f| f.starts_with("zoo_")))
        .collect();
    assert!(zoo.len() >= 5, "the model zoo is in examples/corpus/zoo_*.mlir");
    zoo
}

/// The model zoo agrees with the interpreter at every `-O` level with
/// fusion on and off (`-O3`'s inexact rules within the comparison's
/// tolerance) and with the CUDA target's lowering run on the CPU on one
/// thread and two, at its own bounds; at twice its steps (a longer cache)
/// at -O2 and -O3 and with the GPU lowering again. (The corpus tests run it
/// too: with each -O2 pass left out, with a memory budget of nothing, and
/// with each bound set to 1.)
#[test]
fn model_zoo_agrees_at_every_level_fused_or_not() {
    for (name, source, bounds) in zoo() {
        let steps = bounds.iter().find(|(k, _)| k == "T").expect("the zoo runs over t < T").1;
        for t in [steps, 2 * steps] {
            let bounds: Vec<(&str, i64)> =
                bounds.iter().map(|(k, v)| (k.as_str(), if k == "T" { t } else { *v })).collect();
            let interpreted = interpret(&source, &bounds, vec![], Some(1)).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            let (variants, threads) = if t == steps {
                (zoo_variants(), vec![1, 2])
            } else {
                (zoo_variants().into_iter().filter(|v| v.level >= 2 && v.disabled.is_empty()).collect(), vec![2])
            };
            for variant in variants {
                let label = format!("{name} at {bounds:?}, -O{} without {:?}", variant.level, variant.disabled);
                let compiled = run_optimized(&source, &bounds, vec![], Some(1), variant)
                    .unwrap_or_else(|e| panic!("{label}: {e:?}"));
                if let Err(e) = compare(&compiled, &interpreted) {
                    panic!("{label}: compiled and interpreted results differ: {e}");
                }
            }
            for threads in threads {
                let loops = run_gpu_loops(&source, &bounds, 1, threads)
                    .unwrap_or_else(|e| panic!("{name} at {bounds:?}, GPU lowering on the CPU: {e:?}"));
                if let Err(e) = compare(&loops, &interpreted) {
                    panic!("{name} at {bounds:?}: the GPU lowering (on the CPU, {threads} threads) differs: {e}");
                }
            }
        }
    }
}

/// Generated programs and the corpus directory agree with the interpreter
/// with each temporal pass turned off, at the other levels too. CI runs a
/// sample (`TEMPO_PASS_SAMPLE`, default 8 generated programs); every
/// combination over many programs is
/// `TEMPO_PASS_SAMPLE=600 cargo test --release --test end_to_end optimization_variants`.
///
/// Each program is interpreted once, and a variant that would compile what
/// an earlier variant of the same program compiled (the same optimized
/// program, LLVM level, fusion, batching by depth and memory budget: the
/// pass it leaves out changes nothing in this program) is not compiled
/// again; at least one variant per program always runs.
#[test]
fn optimization_variants_agree_with_the_interpreter() {
    let sample: u64 = std::env::var("TEMPO_PASS_SAMPLE").ok().and_then(|v| v.parse().ok()).unwrap_or(8);
    let variants = optimization_variants();
    let (mut compiled, mut same) = (0, 0);
    let mut check = |source: &str, bounds: &[(&str, i64)], seed: u64, what: &str| {
        let interpreted = interpret(source, bounds, vec![], Some(seed));
        let mut seen = std::collections::HashSet::new();
        let mut ran = false;
        for variant in &variants {
            if let Some(key) = compiled_form(source, bounds, seed, variant)
                && !seen.insert(key)
            {
                same += 1;
                continue;
            }
            compiled += 1;
            ran |= check_against(&interpreted, source, bounds, seed, what, variant.clone());
        }
        ran
    };
    for seed in 0..sample {
        let program = GeneralGenerator::program(seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        let (t, b) = (rng.random_range(0..9), rng.random_range(1..4));
        check(&program, &[("T", t), ("B", b)], seed, &program);
    }
    for (name, source, bounds) in corpus_directory() {
        let refs: Vec<(&str, i64)> = bounds.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert!(check(&source, &refs, 1, &name), "{name} must run");
    }
    eprintln!("optimization variants: {compiled} compiled, {same} the same compiled program as an earlier variant");
    assert!(compiled > 0);
}

/// What `variant` compiles `source` into, as far as the generated code
/// depends on it: the optimized program and the lowering's settings; `None`
/// where the optimizations refuse the program (the variant then runs).
fn compiled_form(
    source: &str,
    bounds: &[(&str, i64)],
    seed: u64,
    variant: &CompileOptions,
) -> Option<(String, u8, bool, bool, Option<u64>)> {
    let context = crate::context();
    let mut module = melior::ir::Module::parse(&context, source)?;
    let options = tempo_driver::RunOptions { compile: variant.clone(), ..crate::options(bounds, vec![], Some(seed)) };
    let text = tempo_driver::optimized_program_text(&context, &mut module, &options).ok()?;
    Some((text, variant.level, variant.fusion(), variant.depth_batching(), variant.memory_budget))
}

/// How many of the first 200 generated programs `f` (a rewrite of the
/// program model) says it changed.
fn count_generated(f: impl Fn(&mut tempo_passes::program::Program) -> bool) -> usize {
    count_programs(GeneralGenerator::program, f)
}

/// How many of the first 200 programs of `generator` `f` says yes to.
fn count_programs(generator: fn(u64) -> String, f: impl Fn(&mut tempo_passes::program::Program) -> bool) -> usize {
    let context = crate::context();
    (0..200)
        .filter(|&seed| {
            let source = generator(seed);
            let module = melior::ir::Module::parse(&context, &source)
                .unwrap_or_else(|| panic!("generated programs parse; this one does not:\n{source}"));
            tempo_passes::program::Program::from_module(module.as_operation()).is_ok_and(|mut p| f(&mut p))
        })
        .count()
}

/// The generator makes what row fusion fuses (reductions along the last
/// axis with elementwise ops around them) in a fair share of programs, so
/// the default lowering's fused row loops are compared with the
/// interpreter (and, with fusion off, the unfused ones).
#[test]
fn generated_programs_exercise_row_fusion() {
    let fused = count_generated(|program| tempo_lowering::temporal_to_loops::row_groups_in(program) > 0);
    eprintln!("{fused} of 200 have row groups");
    assert!(fused >= 20, "only {fused} of 200 generated programs have a row group");
}

/// General programs use positions and bounds as values (temporal.position,
/// temporal.bound) in a fair share of programs.
#[test]
fn generated_programs_use_positions_and_bounds() {
    use tempo_passes::program::NodeKind;
    let uses = count_programs(GeneralGenerator::program, |program| {
        program
            .tensors
            .iter()
            .flat_map(|t| &t.branches)
            .flat_map(|b| &b.nodes)
            .any(|n| matches!(n.kind, NodeKind::Position(_) | NodeKind::Bound(_)))
    });
    eprintln!("{uses} of 200 use a position or bound");
    assert!(uses >= 20, "only {uses} of 200 general programs use a position or bound");
}

/// The generator makes softmax attention over ranges that grow with a
/// dimension (what temporal-tile-ranges tiles) in a fair share of programs,
/// so the -O3 variants above exercise the tiled lowering.
#[test]
fn generated_programs_exercise_attention_tiling() {
    let tiled = count_generated(|program| tempo_passes::temporal_tile_ranges::tile_ranges(program, 2));
    eprintln!("{tiled} of 200 tiled");
    assert!(tiled >= 10, "only {tiled} of 200 generated programs have attention to tile");
}

/// The generator makes attention chains `temporal-fuse-attention` fuses
/// (for -O3 and fast math: the runtime's tiled kernels) in a fair share of
/// programs, so the -O3 variants above compare those kernels with the
/// interpreter.
#[test]
fn generated_programs_exercise_fused_attention() {
    let fused = count_generated(tempo_passes::temporal_fuse_attention::fuse_attention);
    eprintln!("{fused} of 200 fused");
    assert!(fused >= 10, "only {fused} of 200 generated programs have attention to fuse");
}

/// The generator reduces whole ranges after their loop (what lifting
/// incrementalizes) in a fair share of programs too.
#[test]
fn generated_programs_exercise_incrementalization() {
    let lifted = count_generated(|program| {
        let before: usize = program.tensors.iter().map(|t| t.branches.len()).sum();
        tempo_passes::temporal_lift_recurrences::lift_recurrences(program, false);
        // Each recurrence tensor made brings two branches; incrementalizing
        // also splits the reader's branch in two.
        let made =
            program.tensors.iter().filter(|t| ["_prefix_", "_suffix_", "_window"].iter().any(|n| t.name.contains(n)));
        let after: usize = program.tensors.iter().map(|t| t.branches.len()).sum();
        after > before + 2 * made.count()
    });
    eprintln!("{lifted} of 200 incrementalized");
    assert!(lifted >= 5, "only {lifted} of 200 generated programs reduce a whole range after its loop");
    // Reductions of an elementwise expression of ranges are lifted with it.
    let mapped = count_generated(|program| {
        tempo_passes::temporal_lift_recurrences::lift_recurrences(program, false);
        program.tensors.iter().any(|t| t.name.contains("_mapped_"))
    });
    eprintln!("{mapped} of 200 lift a reduction of an expression or a contraction");
    assert!(mapped >= 10, "only {mapped} of 200 generated programs lift a reduction of an expression");
}

/// The generators make recurrences with time-parallel work (a product of
/// a step's input, an output layer over every step) in a fair share of
/// programs, so that `temporal-split-recurrences` and the group mode of
/// `temporal-vectorize` (on at -O2, left out in turn by the optimization
/// variants) are compared with the interpreter.
#[test]
fn generated_programs_exercise_splitting_and_group_vectorization() {
    let split_and_batched = |program: &mut tempo_passes::program::Program| {
        let values = vec![Some(5); program.dims.len()];
        let split = tempo_passes::temporal_split_recurrences::split_recurrences(program, &values);
        let before: Vec<usize> = program.tensors.iter().map(|t| t.domain.len()).collect();
        tempo_passes::temporal_vectorize::vectorize(program, &values);
        // A dimension batched for some tensors and still a loop for others.
        let grouped = (0..program.dims.len()).any(|d| {
            let lost = program.tensors.iter().zip(&before).any(|(t, &n)| t.domain.len() < n && !t.domain.contains(&d));
            lost && program.tensors.iter().any(|t| !t.is_input && t.domain.contains(&d))
        });
        (split, grouped)
    };
    // A tensor reading a range along a dimension (a prefix, window or
    // suffix of its own point) batched along it: the range masked.
    let masked = |program: &mut tempo_passes::program::Program| {
        use tempo_passes::program::NodeKind;
        let values = vec![Some(5); program.dims.len()];
        tempo_passes::temporal_split_recurrences::split_recurrences(program, &values);
        let ranged: Vec<Vec<usize>> = program
            .tensors
            .iter()
            .map(|t| {
                let dims = t.branches.iter().flat_map(|b| &b.nodes).filter_map(|n| match &n.kind {
                    NodeKind::ReadRange { source, upper, .. } => {
                        let src = &program.tensors[*source];
                        let q = (0..src.domain.len()).find(|&q| !upper[q].results.is_empty())?;
                        Some(src.domain[q])
                    }
                    _ => None,
                });
                dims.filter(|d| t.domain.contains(d)).collect()
            })
            .collect();
        // (Inexact, as -O3 and fast math batch them: a masked range
        // contracted with a second carrier, causal attention, stays a loop
        // in the exact pipeline.)
        tempo_passes::temporal_vectorize::vectorize_with(program, &values, true, false);
        ranged.iter().zip(&program.tensors).any(|(dims, t)| dims.iter().any(|d| !t.domain.contains(d)))
    };
    let split = count_programs(ModelGenerator::program, |p| split_and_batched(p).0);
    let grouped = count_programs(ModelGenerator::program, |p| split_and_batched(p).1);
    let general = count_generated(|p| split_and_batched(p).1);
    let products = |program: &mut tempo_passes::program::Program| {
        let values = vec![Some(5); program.dims.len()];
        tempo_passes::temporal_split_recurrences::split_recurrences(program, &values);
        tempo_passes::temporal_split_products::split_products(program, &values)
    };
    let masked_models = count_programs(ModelGenerator::program, masked);
    let product_models = count_programs(ModelGenerator::program, products);
    let masked_general = count_generated(masked);
    eprintln!(
        "{split} of 200 model programs split, {grouped} vectorize a group ({general} of 200 general programs), \
         {masked_models} batch a range of their own point masked ({masked_general} of 200 general programs), \
         {product_models} split the time-parallel work out of per-step products"
    );
    // Splitting needs a program that keeps points along the dimension
    // anyway (most generated programs are inference: rings of two).
    assert!(split >= 10, "only {split} of 200 model programs have time-parallel work in a recurrence");
    assert!(grouped >= 20, "only {grouped} of 200 model programs vectorize a group");
    assert!(masked_models >= 5, "only {masked_models} of 200 model programs batch a range of their own point");
}

/// What the values of a branch body are made from: per node, the nodes it
/// depends on (itself included), through every op of the body.
fn ancestry(nodes: &[tempo_passes::program::Node]) -> Vec<std::collections::BTreeSet<usize>> {
    use tempo_passes::program::NodeKind;
    let mut out: Vec<std::collections::BTreeSet<usize>> = Vec::new();
    for (k, node) in nodes.iter().enumerate() {
        let operands: Vec<usize> = match &node.kind {
            NodeKind::Reduce(_, a, _) | NodeKind::Cast(a) | NodeKind::Unary(_, a) | NodeKind::DynamicSlice(a, _) => {
                vec![*a]
            }
            NodeKind::Compare(_, a, b)
            | NodeKind::Gather(a, b)
            | NodeKind::Binary(_, a, b)
            | NodeKind::Matmul(a, b) => {
                vec![*a, *b]
            }
            NodeKind::Select(a, b, c) => vec![*a, *b, *c],
            NodeKind::Move(_, ops) | NodeKind::Einsum(_, ops) => ops.clone(),
            NodeKind::Attention(_, ops) => ops.to_vec(),
            NodeKind::Call { args, .. } => args.clone(),
            _ => vec![],
        };
        let mut set: std::collections::BTreeSet<usize> = operands.iter().flat_map(|&o| out[o].clone()).collect();
        set.insert(k);
        out.push(set);
    }
    out
}

/// The matrix products each node of a branch body is an elementwise
/// function of (through elementwise ops, casts, selects and movements).
fn products_behind(nodes: &[tempo_passes::program::Node]) -> Vec<std::collections::BTreeSet<usize>> {
    use tempo_passes::program::NodeKind;
    let mut out: Vec<std::collections::BTreeSet<usize>> = Vec::new();
    for (k, node) in nodes.iter().enumerate() {
        let set = match &node.kind {
            NodeKind::Matmul(..) => [k].into(),
            NodeKind::Unary(_, a) | NodeKind::Cast(a) => out[*a].clone(),
            NodeKind::Binary(_, a, b) | NodeKind::Select(_, a, b) => out[*a].union(&out[*b]).cloned().collect(),
            NodeKind::Move(_, ops) => ops.iter().flat_map(|&o| out[o].clone()).collect(),
            _ => Default::default(),
        };
        out.push(set);
    }
    out
}

/// The shapes of real models the model generator makes, counted in a
/// parsed program.
#[derive(Debug, Default)]
struct ModelShapes {
    /// An elementwise op of two different matrix products, one of them a
    /// vector times a matrix (`x A * x B`, `x Wx + h Wh`).
    vector_matrix_gates: bool,
    /// The same with a matrix times a vector (`A x + B h`).
    matrix_vector_gates: bool,
    /// Such a gate in a branch reading a point one step back (an RNN, LSTM
    /// or GRU cell's `h[t-1]`) and taking a sigmoid.
    recurrent_gates: bool,
    /// A matrix product with another product among its operands' sources.
    products_feeding_products: bool,
    /// `silu(x W1) * (x W3)` (`x * sigmoid(x)` of a product, times another
    /// product).
    swiglu: bool,
    /// A gather whose indices are read from a tensor defined by an argmax.
    argmax_gathers: bool,
    /// `sin` or `cos` of a value made from a position counter (`pos[t] =
    /// pos[t-1] + 1`, float or cast from an integer).
    trig_of_positions: bool,
    /// An einsum of a range whose query operand has a label the keys lack
    /// (of size > 1) beside a label both share: query heads grouped over
    /// shared key heads; or keys expanded per query head (`repeat_kv`).
    grouped_heads: bool,
    /// A matrix product of a normed value (a square root of a mean).
    norms_before_products: bool,
}

fn model_shapes(program: &tempo_passes::program::Program) -> ModelShapes {
    use tempo_passes::program::{BinaryKind, Movement, NodeKind, ReduceKind, UnaryKind};
    let mut found = ModelShapes::default();
    // Tensors some branch of which is an argmax; counters.
    let argmax_defined: Vec<bool> = program
        .tensors
        .iter()
        .map(|t| {
            t.branches
                .iter()
                .any(|b| b.nodes.iter().any(|n| matches!(n.kind, NodeKind::Reduce(ReduceKind::ArgMax, ..))))
        })
        .collect();
    let counters: Vec<bool> = program
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| {
            t.branches.iter().any(|b| {
                b.nodes.len() <= 4
                    && b.nodes.iter().any(|n| matches!(&n.kind, NodeKind::Read { source, .. } if *source == i))
                    && b.nodes.iter().any(|n| matches!(n.kind, NodeKind::Binary(BinaryKind::Add, ..)))
                    && b.nodes.iter().any(|n| matches!(n.kind, NodeKind::Constant { .. }))
            })
        })
        .collect();
    for tensor in &program.tensors {
        for branch in &tensor.branches {
            let nodes = &branch.nodes;
            let behind = products_behind(nodes);
            let from = ancestry(nodes);
            let rank = |k: usize| nodes[k].ty.shape.len();
            let vector_matrix =
                |p: usize| matches!(nodes[p].kind, NodeKind::Matmul(a, b) if rank(a) == 1 && rank(b) == 2);
            let matrix_vector =
                |p: usize| matches!(nodes[p].kind, NodeKind::Matmul(a, b) if rank(a) == 2 && rank(b) == 1);
            let reads_past = nodes.iter().any(|n| match &n.kind {
                NodeKind::Read { index, .. } => {
                    index.results.iter().any(|e| (0..index.num_dims).any(|d| e.offset_from_dim(d) == Some(-1)))
                }
                _ => false,
            });
            let sigmoid = nodes.iter().any(|n| matches!(n.kind, NodeKind::Unary(UnaryKind::Sigmoid, _)));
            for node in nodes {
                match &node.kind {
                    NodeKind::Binary(_, a, b) => {
                        let meet: Vec<(usize, usize)> = behind[*a]
                            .iter()
                            .flat_map(|&p| behind[*b].iter().map(move |&q| (p, q)))
                            .filter(|(p, q)| p != q)
                            .collect();
                        if meet.iter().any(|&(p, q)| vector_matrix(p) || vector_matrix(q)) {
                            found.vector_matrix_gates = true;
                        }
                        if meet.iter().any(|&(p, q)| matrix_vector(p) || matrix_vector(q)) {
                            found.matrix_vector_gates = true;
                        }
                        if !meet.is_empty() && reads_past && sigmoid {
                            found.recurrent_gates = true;
                        }
                        // silu(p) * q: one side is p * sigmoid(p) of a product p.
                        let silu_of_product = |s: usize| match nodes[s].kind {
                            NodeKind::Binary(BinaryKind::Mul, x, y) => {
                                matches!(nodes[x].kind, NodeKind::Matmul(..))
                                    && matches!(nodes[y].kind, NodeKind::Unary(UnaryKind::Sigmoid, z) if z == x)
                            }
                            _ => false,
                        };
                        if matches!(node.kind, NodeKind::Binary(BinaryKind::Mul, ..))
                            && ((silu_of_product(*a) && matches!(nodes[*b].kind, NodeKind::Matmul(..)))
                                || (silu_of_product(*b) && matches!(nodes[*a].kind, NodeKind::Matmul(..))))
                        {
                            found.swiglu = true;
                        }
                    }
                    NodeKind::Matmul(a, b) => {
                        let sources = from[*a].union(&from[*b]).cloned().collect::<Vec<_>>();
                        if sources.iter().any(|&s| matches!(nodes[s].kind, NodeKind::Matmul(..))) {
                            found.products_feeding_products = true;
                        }
                        if sources.iter().any(|&s| matches!(nodes[s].kind, NodeKind::Unary(UnaryKind::Sqrt, _)))
                            && sources.iter().any(|&s| matches!(nodes[s].kind, NodeKind::Reduce(ReduceKind::Mean, ..)))
                        {
                            found.norms_before_products = true;
                        }
                    }
                    NodeKind::Gather(_, ids) => {
                        found.argmax_gathers |= from[*ids].iter().any(
                            |&s| matches!(&nodes[s].kind, NodeKind::Read { source, .. } if argmax_defined[*source]),
                        );
                    }
                    NodeKind::Unary(UnaryKind::Sin | UnaryKind::Cos, a) => {
                        found.trig_of_positions |= from[*a]
                            .iter()
                            .any(|&s| matches!(&nodes[s].kind, NodeKind::Read { source, .. } if counters[*source]));
                    }
                    NodeKind::Einsum(spec, ops) if ops.len() == 2 => {
                        let (q, keys) = (&spec.operands[0], &spec.operands[1]);
                        let ranged = from[ops[1]].iter().any(|&s| matches!(nodes[s].kind, NodeKind::ReadRange { .. }));
                        let shared = q.iter().any(|l| keys.contains(l) && spec.result.contains(l));
                        let grouped = q.iter().enumerate().any(|(i, l)| {
                            !keys.contains(l) && spec.result.contains(l) && nodes[ops[0]].ty.shape[i] > 1
                        });
                        // Keys expanded per query head (repeat_kv).
                        let expanded =
                            from[ops[1]].iter().any(|&s| matches!(nodes[s].kind, NodeKind::Move(Movement::Expand, _)));
                        if ranged && (expanded || (shared && grouped)) {
                            found.grouped_heads = true;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    found
}

/// The model generator makes the shapes real models are made of (the ones
/// the fusion bug of issue 22 hid in: two products meeting elementwise),
/// each in a fair share of programs; and the model zoo has each of them.
#[test]
fn generated_programs_exercise_model_shapes() {
    type Shape = (&'static str, fn(&ModelShapes) -> bool);
    let shapes: [Shape; 9] = [
        ("vector x matrix products meeting elementwise", |s| s.vector_matrix_gates),
        ("matrix x vector products meeting elementwise", |s| s.matrix_vector_gates),
        ("recurrent gates (sigmoid, products meeting, a read of t-1)", |s| s.recurrent_gates),
        ("products feeding products", |s| s.products_feeding_products),
        ("SwiGLU (silu(x W1) * x W3)", |s| s.swiglu),
        ("gathers of argmax-fed tokens", |s| s.argmax_gathers),
        ("sin/cos of positions", |s| s.trig_of_positions),
        ("grouped query heads over shared keys", |s| s.grouped_heads),
        ("norms before products", |s| s.norms_before_products),
    ];
    let zoo: Vec<ModelShapes> = {
        let context = crate::context();
        zoo()
            .iter()
            .map(|(name, source, _)| {
                let module = melior::ir::Module::parse(&context, source).expect("the zoo parses");
                let program = tempo_passes::program::Program::from_module(module.as_operation())
                    .unwrap_or_else(|_| panic!("{name} is a program"));
                model_shapes(&program)
            })
            .collect()
    };
    for (what, has) in shapes {
        let count = count_programs(ModelGenerator::program, |p| has(&model_shapes(p)));
        let general = count_generated(|p| has(&model_shapes(p)));
        let in_zoo = zoo.iter().filter(|s| has(s)).count();
        eprintln!("{count} of 200 model programs ({general} of 200 general programs), {in_zoo} zoo programs: {what}");
        assert!(count >= 30, "only {count} of 200 model programs have {what}");
        assert!(in_zoo >= 1, "no zoo program has {what}");
    }
    // Their attention is what -O3 tiles (temporal.attention), grouped heads
    // included.
    let tiled = count_programs(ModelGenerator::program, |p| tempo_passes::temporal_tile_ranges::tile_ranges(p, 2));
    eprintln!("{tiled} of 200 model programs have attention to tile");
    assert!(tiled >= 20, "only {tiled} of 200 model programs have attention to tile");
}

/// NVIDIA's ptxas, where `tools/setup-cuda.sh` installs it.
fn ptxas() -> Option<std::path::PathBuf> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/cuda-tools/nvidia/cuda_nvcc/bin/ptxas");
    path.is_file().then_some(path)
}

/// Random programs compile for the CUDA target (the same temporal
/// optimizations, then kernels, device and managed memory, PTX), and ptxas assembles
/// every kernel: the GPU pipeline handles general input, not only the
/// examples. Programs the compiler refuses for the CPU may be refused here
/// too, with diagnostics, never a crash.
#[test]
fn random_programs_compile_to_ptx_that_ptxas_accepts() {
    let Some(ptxas) = ptxas() else {
        panic!("ptxas is missing: run tools/setup-cuda.sh (tools/test.sh does)");
    };
    let scratch = std::env::temp_dir().join(format!("tempo-ptx-{}", std::process::id()));
    let count: u64 = std::env::var("TEMPO_PTX_SAMPLE").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let (mut compiled, mut kernels) = (0, 0);
    // General programs, then model programs (a third as many), which are
    // well-formed and must all compile.
    let general = (0..count).map(|seed| (seed, GeneralGenerator::program(seed), false));
    let models = (0..count / 3).map(|seed| (seed, ModelGenerator::program(seed), true));
    for (seed, source, model) in general.chain(models) {
        let context = crate::context();
        let mut module = melior::ir::Module::parse(&context, &source).expect("generated programs parse");
        let directory = scratch.join(format!("{}{seed}", if model { "model-" } else { "" }));
        let options = crate::options(&[], vec![], Some(seed));
        let emitted = tempo_driver::emit_ptx(&context, &mut module, &options, 90, directory.to_str().unwrap());
        let n = match emitted {
            Ok(n) => n,
            Err(e) if model => panic!("model program {seed} does not compile for CUDA: {e:?}\n{source}"),
            Err(_) => continue,
        };
        compiled += 1;
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            let out = std::process::Command::new(&ptxas)
                .arg("-arch=sm_90")
                .arg(&path)
                .arg("-o")
                .arg("/dev/null")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "ptxas rejects {} (seed {seed}):\n{}\n{source}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            kernels += 1;
        }
        assert_eq!(n, std::fs::read_dir(&directory).unwrap().count());
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let count = count + count / 3;
    eprintln!("{compiled} of {count} random programs compiled for CUDA; ptxas accepts all {kernels} kernels");
    assert!(compiled * 2 > count as usize, "only {compiled} of {count} random programs compiled for CUDA");
}

/// How a program fared with the CUDA target's lowering run on the CPU.
#[derive(Debug, PartialEq, Eq)]
enum GpuLoopsOutcome {
    /// It ran, with the interpreter's results.
    Agreed,
    /// Both sides refused it (an ill-formed program).
    BothFailed,
    /// It takes the shared-memory matrix kernel, which has no CPU lowering.
    NeedsGpu,
    /// The GPU target refuses it at the op, not yet: reads through data
    /// and stops (`temporal.read_at`, `temporal.stop`).
    NotYet,
}

/// Runs `source` with the CUDA target's lowering on the CPU
/// ([`tempo_driver::Target::GpuLoopsOnCpu`]) on `threads` threads.
fn run_gpu_loops(
    source: &str,
    bounds: &[(&str, i64)],
    seed: u64,
    threads: usize,
) -> Result<Vec<HostArray>, Vec<String>> {
    let context = crate::context();
    let mut module = melior::ir::Module::parse(&context, source).expect("program parses");
    let options = tempo_driver::RunOptions {
        compile: tempo_driver::CompileOptions {
            target: tempo_driver::Target::GpuLoopsOnCpu,
            threads,
            ..Default::default()
        },
        ..crate::options(bounds, vec![], Some(seed))
    };
    tempo_driver::run_module(&context, &mut module, &options)
}

/// Runs `source` with the CUDA target's lowering on the CPU
/// ([`tempo_driver::Target::GpuLoopsOnCpu`]) and with the interpreter;
/// panics if they disagree.
fn check_gpu_loops(source: &str, bounds: &[(&str, i64)], seed: u64, threads: usize, what: &str) -> GpuLoopsOutcome {
    let compiled = run_gpu_loops(source, bounds, seed, threads);
    let interpreted = interpret(source, bounds, vec![], Some(seed));
    match (&compiled, &interpreted) {
        (Ok(c), Ok(i)) => {
            if let Err(e) = compare(c, i) {
                panic!(
                    "the GPU lowering (on the CPU) and the interpreter differ ({bounds:?}, seed={seed}): {e}\n{what}"
                );
            }
            GpuLoopsOutcome::Agreed
        }
        (Err(c), _) if c.iter().any(|line| line.contains("shared-memory matrix kernel")) => GpuLoopsOutcome::NeedsGpu,
        (Err(c), _)
            if (source.contains("temporal.read_at") || source.contains("temporal.stop"))
                && c.iter().any(|line| line.contains("error: not yet:") && line.contains("on the GPU target")) =>
        {
            GpuLoopsOutcome::NotYet
        }
        (Err(c), Err(i)) => {
            show_failures(seed, "GPU loops", c, i);
            GpuLoopsOutcome::BothFailed
        }
        _ => panic!(
            "only one side failed ({bounds:?}, seed={seed}, GPU lowering on the CPU):\ncompiled: {compiled:?}\ninterpreted: {interpreted:?}\n{what}"
        ),
    }
}

/// The CUDA target's lowering (one-point kernels for single values, the
/// fused and flattened parallel loops that become kernels, constants copied
/// to memory kernels can read) computes what the interpreter computes: run
/// on the CPU, each future kernel a parallel loop, over the examples, the
/// corpus and random programs (model programs too), on one thread and on
/// several.
#[test]
fn gpu_lowering_run_on_the_cpu_agrees_with_the_interpreter() {
    let mut outcomes = Vec::new();
    for name in EXAMPLES_OVER_T {
        for bound in [0, 1, 7] {
            outcomes.push(check_gpu_loops(&example(name), &[("T", bound)], 3, 1, name));
        }
    }
    // Long prefixes: the softmax's reductions over them run in two stages
    // (chunks of 128, then the chunks), the sums associated by chunks.
    for bound in [300, 1000] {
        let name = "causal_attention.mlir";
        assert_eq!(check_gpu_loops(&example(name), &[("T", bound)], 3, 2, name), GpuLoopsOutcome::Agreed);
    }
    // Tiled attention (temporal.attention) over long prefixes: a thread per
    // row and chunk of 128 positions, then the chunks combined per row.
    let attention =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/corpus/attention_op.mlir"))
            .expect("the corpus program");
    for bound in [300, 1000] {
        let outcome = check_gpu_loops(&attention, &[("T", bound), ("H", 2)], 3, 1, "attention_op.mlir");
        assert_eq!(outcome, GpuLoopsOutcome::Agreed);
    }
    // A GPT decode past one chunk: its softmax reductions and the weighted
    // sum of the values ("hqn,nhd->hqd") in two stages. (Width 12: its
    // products keep K below two slices, summed in the interpreter's order;
    // split products, associated by slices from the first step on, would
    // be amplified by the recurrence long before step 129, and have a test
    // of their own, gpu_split_products_agree_with_the_interpreter.)
    // With a window of 512 too: a window that wide is split the same way.
    for window in [&[][..], &["--window", "512"][..]] {
        let gpt = std::process::Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/examples/gpt"))
            .args(["--layers", "2", "--heads", "4", "--width", "12", "--mlir"])
            .args(window)
            .output();
        match gpt {
            Ok(gpt) => {
                // (Steps 129 and 130 sum their 130 and 131 points in two chunks,
                // associated differently from the interpreter's order; the
                // recurrence x[t+1] = tanh(h[t]) amplifies rounding differences
                // fast (a few more steps reach 1e-2), so two steps are checked
                // within 1e-4.)
                let source = String::from_utf8(gpt.stdout).expect("text");
                let context = crate::context();
                let mut module = melior::ir::Module::parse(&context, &source).expect("program parses");
                let bounds = [("T", 131), ("L", 2)];
                let options = tempo_driver::RunOptions {
                    compile: tempo_driver::CompileOptions {
                        target: tempo_driver::Target::GpuLoopsOnCpu,
                        threads: 2,
                        ..Default::default()
                    },
                    ..crate::options(&bounds, vec![], Some(7))
                };
                let loops = tempo_driver::run_module(&context, &mut module, &options).expect("the GPT runs");
                let interpreted = interpret(&source, &bounds, vec![], Some(7)).expect("the GPT runs");
                let (a, b) = (&loops[0].data, &interpreted[0].data);
                let worst = (0..a.len())
                    .map(|k| (a.get_f64(k) - b.get_f64(k)).abs() / (1.0 + b.get_f64(k).abs()))
                    .fold(0.0, f64::max);
                assert!(worst <= 1e-4, "GPT {window:?}: the GPU lowering and the interpreter differ by {worst:e}");
            }
            Err(_) => eprintln!("target/release/examples/gpt is not built (tools/test.sh builds it); skipping GPT"),
        }
    }
    for (name, other) in EXAMPLES_OVER_T_AND {
        let mut bounds = vec![("T", 5)];
        if !other.is_empty() {
            bounds.push((other, 3));
        }
        outcomes.push(check_gpu_loops(&example(name), &bounds, 3, 2, name));
    }
    for (name, source, bounds) in corpus_directory() {
        let bounds: Vec<(&str, i64)> = bounds.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        // (One thread: the per-row buffers of tiled attention are allocas,
        // which an OpenMP loop body of several blocks cannot hold.)
        let outcome = check_gpu_loops(&source, &bounds, 1, 1, &name);
        assert_ne!(outcome, GpuLoopsOutcome::BothFailed, "{name} must run");
        outcomes.push(outcome);
    }
    let count: u64 = std::env::var("TEMPO_GPU_LOOPS_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(40);
    for seed in 0..count {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9e37);
        let (t, b) = (rng.random_range(0..9), rng.random_range(1..4));
        let threads = if seed % 2 == 0 { 1 } else { 2 };
        let program = GeneralGenerator::program(seed);
        outcomes.push(check_gpu_loops(&program, &[("T", t), ("B", b)], seed, threads, &program));
        let program = Generator::program(seed);
        outcomes.push(check_gpu_loops(&program, &[("T", t)], seed, threads, &program));
        // Model programs (a third as many) are well-formed: each runs or
        // takes the GPU's matrix kernel.
        if seed < count / 3 {
            let program = ModelGenerator::program(seed);
            let outcome = check_gpu_loops(&program, &model_bounds(seed), seed, threads, &program);
            assert_ne!(outcome, GpuLoopsOutcome::BothFailed, "model program {seed} must run:\n{program}");
            outcomes.push(outcome);
        }
    }
    let agreed = outcomes.iter().filter(|o| **o == GpuLoopsOutcome::Agreed).count();
    let needs_gpu = outcomes.iter().filter(|o| **o == GpuLoopsOutcome::NeedsGpu).count();
    eprintln!(
        "GPU lowering on the CPU: {agreed} of {} programs agreed, {needs_gpu} need the GPU's matrix kernel",
        outcomes.len()
    );
    assert!(agreed * 10 >= outcomes.len() * 6, "only {agreed} of {} programs ran", outcomes.len());
}

/// Writes generated programs as files, each with its `// bounds:` header,
/// for runs outside this harness (the GPU stage, `tools/gpu/run.sh`, runs
/// them for `--target cuda` on a machine with no compiler):
/// `TEMPO_WRITE_PROGRAMS=DIR TEMPO_WRITE_COUNT=N cargo test --release
/// --test end_to_end write_generated_programs -- --ignored` writes N general
/// programs (`general_SEED.mlir`) and N model programs (`model_SEED.mlir`).
#[test]
#[ignore]
fn write_generated_programs() {
    let Ok(dir) = std::env::var("TEMPO_WRITE_PROGRAMS") else { return };
    let count: u64 = std::env::var("TEMPO_WRITE_COUNT").ok().and_then(|v| v.parse().ok()).unwrap_or(40);
    std::fs::create_dir_all(&dir).expect("the directory");
    for seed in 0..count {
        let bound = ChaCha8Rng::seed_from_u64(seed ^ 0xabcdef).random_range(0..12);
        let general = format!("// bounds: T={bound}\n{}", Generator::program(seed));
        std::fs::write(format!("{dir}/general_{seed}.mlir"), general).expect("written");
        let bounds: Vec<String> = model_bounds(seed).iter().map(|(k, v)| format!("{k}={v}")).collect();
        let model = format!("// bounds: {}\n{}", bounds.join(" "), ModelGenerator::program(seed));
        std::fs::write(format!("{dir}/model_{seed}.mlir"), model).expect("written");
    }
}

/// Products of few rows by long weights (the corpus's
/// `few_row_products.mlir`: 3 rows, one row and a vector, K of 200, 70 and
/// 96) split K in slices summed in two stages on the GPU: the GPU lowering
/// run on the CPU agrees with the interpreter, on one thread and on two.
#[test]
fn gpu_split_products_agree_with_the_interpreter() {
    let source =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/corpus/few_row_products.mlir"))
            .expect("the corpus program");
    for (threads, bound) in [(1, 3), (2, 4)] {
        let outcome = check_gpu_loops(&source, &[("T", bound)], 5, threads, "few_row_products.mlir");
        assert_eq!(outcome, GpuLoopsOutcome::Agreed);
    }
}
