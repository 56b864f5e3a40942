//! Differential testing: compiled code against the reference interpreter.
//!
//! Every program of the corpus (the bundled examples and hand-written cases
//! below) and every randomly generated program is run both ways; the two
//! must agree: the same outputs (bit-exact for integers, a tight tolerance
//! for floats), or both an error. The generator is seeded and bounded; set
//! `TEMPO_RANDOM_PROGRAMS=N` (default 300) for a longer run, e.g.
//! `TEMPO_RANDOM_PROGRAMS=5000 cargo test -p tempo-tools --test end_to_end random`.

use crate::generators::{GeneralGenerator, Generator};
use crate::{example, interpret, run_optimized};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tempo_runtime::{Data, HostArray, Optimization};

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
    check_optimized(source, bounds, seed, what, Optimization::default())
}

/// [`check_both`] with the compiled side optimized as `optimization` says.
fn check_optimized(source: &str, bounds: &[(&str, i64)], seed: u64, what: &str, optimization: Optimization) -> bool {
    let label = format!(
        "-O{} without {:?}, memory budget {:?}",
        optimization.level, optimization.disabled, optimization.memory_budget
    );
    let compiled = run_optimized(source, bounds, vec![], Some(seed), optimization);
    let interpreted = interpret(source, bounds, vec![], Some(seed));
    match (&compiled, &interpreted) {
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
    let count: u64 = std::env::var("TEMPO_RANDOM_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
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
    let count: u64 = std::env::var("TEMPO_RANDOM_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
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

/// The programs of `examples/corpus/`, sorted by file name: name, text and
/// the bounds of their first line (`// bounds: T=9 B=3`).
fn corpus_directory() -> Vec<(String, String, Vec<(String, i64)>)> {
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
fn optimization_variants() -> Vec<Optimization> {
    let mut out = vec![
        Optimization { level: 0, disabled: vec![], memory_budget: None },
        Optimization { level: 1, disabled: vec![], memory_budget: None },
        Optimization { level: 3, disabled: vec![], memory_budget: None },
        Optimization { level: 3, disabled: vec!["temporal-tile-ranges".to_string()], memory_budget: None },
    ];
    for pass in tempo_passes::optimize::unique(tempo_passes::optimize::O2_PASSES) {
        out.push(Optimization { level: 2, disabled: vec![pass.to_string()], memory_budget: None });
    }
    out.push(Optimization {
        level: 2,
        disabled: vec![tempo_passes::optimize::FUSION.to_string()],
        memory_budget: None,
    });
    // A budget of nothing: level 2 tiles every attention over a range.
    out.push(Optimization { level: 2, disabled: vec![], memory_budget: Some(0) });
    out
}

/// Generated programs and the corpus directory agree with the interpreter
/// with each temporal pass turned off, at the other levels too. CI runs a
/// sample (`TEMPO_PASS_SAMPLE`, default 20 generated programs); every
/// combination over many programs is
/// `TEMPO_PASS_SAMPLE=600 cargo test --release --test end_to_end optimization_variants`.
#[test]
fn optimization_variants_agree_with_the_interpreter() {
    let sample: u64 = std::env::var("TEMPO_PASS_SAMPLE").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let variants = optimization_variants();
    for seed in 0..sample {
        let program = GeneralGenerator::program(seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        let (t, b) = (rng.random_range(0..9), rng.random_range(1..4));
        for variant in &variants {
            check_optimized(&program, &[("T", t), ("B", b)], seed, &program, variant.clone());
        }
    }
    for (name, source, bounds) in corpus_directory() {
        let refs: Vec<(&str, i64)> = bounds.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        for variant in &variants {
            assert!(check_optimized(&source, &refs, 1, &name, variant.clone()), "{name} must run");
        }
    }
}

/// How many of the first 200 generated programs `f` (a rewrite of the
/// program model) says it changed.
fn count_generated(f: impl Fn(&mut tempo_passes::program::Program) -> bool) -> usize {
    let context = crate::context();
    (0..200)
        .filter(|&seed| {
            let source = GeneralGenerator::program(seed);
            let module = melior::ir::Module::parse(&context, &source)
                .unwrap_or_else(|| panic!("generated programs parse; this one does not:\n{source}"));
            tempo_passes::program::Program::from_module(module.as_operation().into()).is_ok_and(|mut p| f(&mut p))
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

/// The generator makes softmax attention over ranges that grow with a
/// dimension (what temporal-tile-ranges tiles) in a fair share of programs,
/// so the -O3 variants above exercise the tiled lowering.
#[test]
fn generated_programs_exercise_attention_tiling() {
    let tiled = count_generated(|program| tempo_passes::temporal_tile_ranges::tile_ranges(program, 2));
    eprintln!("{tiled} of 200 tiled");
    assert!(tiled >= 10, "only {tiled} of 200 generated programs have attention to tile");
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
    let count: u64 = std::env::var("TEMPO_PTX_SAMPLE").ok().and_then(|v| v.parse().ok()).unwrap_or(60);
    let (mut compiled, mut kernels) = (0, 0);
    for seed in 0..count {
        let source = GeneralGenerator::program(seed);
        let context = crate::context();
        let mut module = melior::ir::Module::parse(&context, &source).expect("generated programs parse");
        let directory = scratch.join(seed.to_string());
        let options = crate::options(&[], vec![], Some(seed));
        let Ok(n) = tempo_runtime::emit_ptx(&context, &mut module, &options, 90, directory.to_str().unwrap()) else {
            continue;
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
}

/// Runs `source` with the CUDA target's lowering on the CPU
/// ([`tempo_runtime::Target::GpuLoopsOnCpu`]) and with the interpreter;
/// panics if they disagree.
fn check_gpu_loops(source: &str, bounds: &[(&str, i64)], seed: u64, threads: usize, what: &str) -> GpuLoopsOutcome {
    let context = crate::context();
    let mut module = melior::ir::Module::parse(&context, source).expect("program parses");
    let options = tempo_runtime::RunOptions {
        target: tempo_runtime::Target::GpuLoopsOnCpu,
        threads,
        ..crate::options(bounds, vec![], Some(seed))
    };
    let compiled = tempo_runtime::run_module(&context, &mut module, &options);
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
/// corpus and random programs, on one thread and on several.
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
    // sum of the values ("hqn,nhd->hqd") in two stages.
    let gpt = std::process::Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/examples/gpt"))
        .args(["--layers", "2", "--heads", "4", "--width", "32", "--mlir"])
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
            let options = tempo_runtime::RunOptions {
                target: tempo_runtime::Target::GpuLoopsOnCpu,
                threads: 2,
                ..crate::options(&bounds, vec![], Some(7))
            };
            let loops = tempo_runtime::run_module(&context, &mut module, &options).expect("the GPT runs");
            let interpreted = interpret(&source, &bounds, vec![], Some(7)).expect("the GPT runs");
            let (a, b) = (&loops[0].data, &interpreted[0].data);
            let worst = (0..a.len())
                .map(|k| (a.get_f64(k) - b.get_f64(k)).abs() / (1.0 + b.get_f64(k).abs()))
                .fold(0.0, f64::max);
            assert!(worst <= 1e-4, "GPT: the GPU lowering and the interpreter differ by {worst:e}");
        }
        Err(_) => eprintln!("target/release/examples/gpt is not built (tools/test.sh builds it); skipping GPT"),
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
    let count: u64 = std::env::var("TEMPO_GPU_LOOPS_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(120);
    for seed in 0..count {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9e37);
        let (t, b) = (rng.random_range(0..9), rng.random_range(1..4));
        let threads = if seed % 2 == 0 { 1 } else { 2 };
        let program = GeneralGenerator::program(seed);
        outcomes.push(check_gpu_loops(&program, &[("T", t), ("B", b)], seed, threads, &program));
        let program = Generator::program(seed);
        outcomes.push(check_gpu_loops(&program, &[("T", t)], seed, threads, &program));
    }
    let agreed = outcomes.iter().filter(|o| **o == GpuLoopsOutcome::Agreed).count();
    let needs_gpu = outcomes.iter().filter(|o| **o == GpuLoopsOutcome::NeedsGpu).count();
    eprintln!(
        "GPU lowering on the CPU: {agreed} of {} programs agreed, {needs_gpu} need the GPU's matrix kernel",
        outcomes.len()
    );
    assert!(agreed * 10 >= outcomes.len() * 6, "only {agreed} of {} programs ran", outcomes.len());
}
