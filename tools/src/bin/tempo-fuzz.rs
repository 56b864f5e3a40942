//! `tempo-fuzz`: the fuzzing harness. Generates hostile inputs from a seed
//! (mutations of every example, corpus program and lit input; bad command
//! lines; bad `.npy` files), runs them against the release binaries of
//! `tempo-opt` and `tempo-run` (compiled, `--interpret`, and `--target cuda
//! --emit-ptx`), and classifies
//! every outcome: accepted, rejected with a message, panic, signal, hang,
//! and compiled/interpreted disagreement (different results, or one side
//! accepting what the other rejects).
//!
//! ```text
//! tempo-fuzz [--cases N] [--seed S] [--jobs J] [--timeout SECS] [--out DIR]
//!            [--bin-dir DIR] [--root DIR] [--case K]
//! ```
//! Exits 1 when any case panicked, died by a signal, hung, hit a compiler
//! fault (generated code MLIR refused), was rejected
//! without a message, or made the two executions disagree; reproducers of
//! those are written under `--out` (default `target/fuzz`), one folder per
//! case with the input and the command lines. `--case K` reruns one case.

use clap::Parser;
use rand::{Rng, seq::IndexedRandom};
use std::collections::BTreeMap;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tempo_tools::{fuzz, fuzz_surfaces};

#[derive(Parser, Debug)]
#[command(name = "tempo-fuzz", about = "Fuzz tempo-opt and tempo-run with generated hostile inputs")]
struct Cli {
    /// Number of cases to run.
    #[arg(long, default_value_t = 300)]
    cases: u64,
    /// Seed of the whole run (case K of seed S is always the same input).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run only this case (to reproduce one).
    #[arg(long)]
    case: Option<u64>,
    /// Parallel workers (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Seconds before a tool run counts as a hang.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// Where reproducers and scratch files go.
    #[arg(long, default_value = "target/fuzz")]
    out: PathBuf,
    /// Folder holding the tempo-opt and tempo-run binaries under test.
    #[arg(long, default_value = "target/release")]
    bin_dir: PathBuf,
    /// Repository root (seed inputs are read from examples/ and test/).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Print every case's classification.
    #[arg(long, short)]
    verbose: bool,
    /// Run surface case K (the Rust builder API or the C API) in this
    /// process and print its report: what the harness does in a child
    /// process, so that a crash is seen.
    #[arg(long, hide = true)]
    surface_case: Option<u64>,
}

/// How one tool run ended.
#[derive(Clone, Debug)]
enum Status {
    Exited(i32),
    Signal(i32),
    Hang,
}

#[derive(Clone, Debug)]
struct RunResult {
    args: Vec<String>,
    status: Status,
    /// The first [`MAX_OUTPUT`] bytes of standard output, cut back to
    /// whole lines when there were more (`stdout_cut`).
    stdout: String,
    stdout_cut: bool,
    stderr: String,
}

/// The most of a tool's output read back (a large program's outputs print
/// megabytes).
const MAX_OUTPUT: usize = 1 << 20;

impl RunResult {
    /// Panic, signal, hang, compiler fault, silent rejection, or None when
    /// the tool behaved.
    fn failure(&self) -> Option<&'static str> {
        match self.status {
            Status::Hang => Some("hang"),
            Status::Signal(_) => Some("signal"),
            Status::Exited(101) => Some("panic"),
            _ if self.stderr.contains("panicked at") => Some("panic"),
            // Code the compiler generated and MLIR refused (reported at the
            // user's op, so it looks located): a bug, not a rejection.
            _ if self.stderr.contains("compiler fault") => Some("compiler-fault"),
            Status::Exited(0) => None,
            Status::Exited(_) if self.stderr.trim().is_empty() => Some("silent-rejection"),
            Status::Exited(_) => None,
        }
    }
    fn accepted(&self) -> bool {
        matches!(self.status, Status::Exited(0))
    }
    fn describe(&self) -> String {
        let status = match self.status {
            Status::Exited(c) => format!("exit {c}"),
            Status::Signal(s) => format!("signal {s}"),
            Status::Hang => "hang".into(),
        };
        format!("$ {}\n[{status}]\n--- stdout\n{}\n--- stderr\n{}\n", self.args.join(" "), self.stdout, self.stderr)
    }
}

/// The classification of one case.
#[derive(Debug, Default)]
struct CaseReport {
    kind: &'static str,
    detail: String,
    /// Failures (kinds that fail the run), with the run that showed them.
    failures: Vec<(String, String)>,
    /// Per-tool outcome counters: (tool, outcome).
    outcomes: Vec<(String, String)>,
    /// Rejections of program inputs whose message has no file:line:col.
    unlocated: Vec<String>,
}

struct Seeds {
    programs: Vec<(String, String)>,
}

fn collect_seeds(root: &Path) -> Seeds {
    let mut files = Vec::new();
    for dir in ["examples", "test"] {
        walk(&root.join(dir), &mut files);
    }
    files.sort();
    let mut programs = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let name = path.strip_prefix(root).unwrap_or(&path).display().to_string();
        for (i, (_, chunk)) in tempo_tools::split_chunks(&text).into_iter().enumerate() {
            if chunk.contains("temporal.") || chunk.contains("store.") {
                programs.push((format!("{name}#{i}"), chunk));
            }
        }
    }
    Seeds { programs }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "mlir") {
            out.push(path);
        }
    }
}

struct Harness {
    cli: Cli,
    seeds: Seeds,
    work: PathBuf,
}

impl Harness {
    fn tool(&self, name: &str) -> PathBuf {
        self.cli.bin_dir.join(name)
    }

    /// Runs a tool with a time limit and an address-space limit, output in
    /// files (no pipe can fill up).
    fn run(&self, tool: &str, args: &[String], scratch: &Path) -> RunResult {
        self.run_program(&self.tool(tool), tool, args, scratch)
    }

    /// [`Harness::run`] of the program at `path` (`label` names its output
    /// files).
    fn run_program(&self, path: &Path, tool: &str, args: &[String], scratch: &Path) -> RunResult {
        let out_path = scratch.join(format!("{tool}.stdout"));
        let err_path = scratch.join(format!("{tool}.stderr"));
        let spawn = || -> std::io::Result<std::process::Child> {
            let stdout = std::fs::File::create(&out_path)?;
            let stderr = std::fs::File::create(&err_path)?;
            let mut command = Command::new(path);
            command
                .args(args)
                .stdin(Stdio::null())
                .stdout(stdout)
                .stderr(stderr)
                .env("RUST_BACKTRACE", "0")
                .current_dir(scratch);
            // 16 GiB of address space: a run that tries to allocate more
            // must say so, not take the machine down.
            unsafe {
                command.pre_exec(|| {
                    let limit = libc::rlimit { rlim_cur: 16 << 30, rlim_max: 16 << 30 };
                    libc::setrlimit(libc::RLIMIT_AS, &limit);
                    Ok(())
                });
            }
            command.spawn()
        };
        let mut child = match spawn() {
            Ok(c) => c,
            Err(e) => {
                return RunResult {
                    args: args.to_vec(),
                    status: Status::Exited(-1),
                    stdout: String::new(),
                    stdout_cut: false,
                    stderr: format!("tempo-fuzz: cannot start {tool}: {e}"),
                };
            }
        };
        let start = Instant::now();
        let limit = Duration::from_secs(self.cli.timeout);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    break match status.signal() {
                        Some(s) => Status::Signal(s),
                        None => Status::Exited(status.code().unwrap_or(-1)),
                    };
                }
                Ok(None) if start.elapsed() > limit => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Status::Hang;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(3)),
                Err(_) => break Status::Exited(-1),
            }
        };
        let read = |p: &Path| {
            let bytes = std::fs::read(p).unwrap_or_default();
            let cut = bytes.len() > MAX_OUTPUT;
            let bytes = &bytes[..bytes.len().min(MAX_OUTPUT)];
            (String::from_utf8_lossy(bytes).into_owned(), cut)
        };
        let (mut stdout, stdout_cut) = read(&out_path);
        if stdout_cut {
            // (A line cut in its middle would compare as another layout.)
            stdout.truncate(stdout.rfind('\n').map_or(0, |k| k + 1));
        }
        RunResult { args: args.to_vec(), status, stdout, stdout_cut, stderr: read(&err_path).0 }
    }

    fn run_case(&self, case: u64) -> CaseReport {
        let mut rng = fuzz::case_rng(self.cli.seed, case);
        let scratch = self.work.join(format!("case-{case}"));
        let _ = std::fs::create_dir_all(&scratch);
        let roll = rng.random_range(0..100);
        let report = if roll < 62 {
            self.program_case(&mut rng, &scratch, true)
        } else if roll < 65 {
            self.program_case(&mut rng, &scratch, false)
        } else if roll < 75 {
            self.run_arguments_case(&mut rng, &scratch)
        } else if roll < 81 {
            self.opt_arguments_case(&mut rng, &scratch)
        } else if roll < 87 {
            self.npy_case(&mut rng, &scratch)
        } else {
            self.surface_case(case, &scratch)
        };
        if report.failures.is_empty() {
            let _ = std::fs::remove_dir_all(&scratch);
        } else {
            let keep = self.cli.out.join("failures").join(format!("case-{case}"));
            let _ = std::fs::remove_dir_all(&keep);
            let _ = std::fs::create_dir_all(keep.parent().unwrap_or(Path::new(".")));
            if std::fs::rename(&scratch, &keep).is_ok() {
                let mut log = format!("seed {} case {case}: {} ({})\n\n", self.cli.seed, report.kind, report.detail);
                for (kind, run) in &report.failures {
                    log.push_str(&format!("== {kind}\n{run}\n"));
                }
                let _ = std::fs::write(keep.join("REPORT.txt"), log);
            }
        }
        report
    }

    /// A seed program: mostly a runnable example or corpus program, else
    /// any lit input (many are lowered IR or deliberate errors).
    fn pick_seed(&self, rng: &mut fuzz::CaseRng) -> &(String, String) {
        let examples: Vec<usize> =
            (0..self.seeds.programs.len()).filter(|&i| self.seeds.programs[i].0.starts_with("examples")).collect();
        let i = match examples.choose(rng) {
            Some(&i) if rng.random_range(0..10) < 7 => i,
            _ => rng.random_range(0..self.seeds.programs.len()),
        };
        &self.seeds.programs[i]
    }

    fn bound_arguments(rng: &mut fuzz::CaseRng, text: &str) -> Vec<String> {
        let mut args = Vec::new();
        for name in fuzz::bound_names(text) {
            args.push("--bound".into());
            // Mostly small positive bounds, sometimes zero.
            let value = if rng.random_range(0..10) == 0 { 0 } else { rng.random_range(1..=6) };
            args.push(format!("{name}={value}"));
        }
        args
    }

    /// A mutated (or, with `mutated` false, an original) program, through
    /// tempo-opt and both executions of tempo-run.
    fn program_case(&self, rng: &mut fuzz::CaseRng, scratch: &Path, mutated: bool) -> CaseReport {
        let (name, text) = self.pick_seed(rng).clone();
        let mut bytes = text.into_bytes();
        let mut applied = Vec::new();
        if mutated {
            for _ in 0..rng.random_range(1..=3) {
                applied.push(fuzz::mutate(&mut bytes, rng));
            }
        }
        let path = scratch.join("input.mlir");
        let _ = std::fs::write(&path, &bytes);
        let path_text = path.display().to_string();
        let mut report = CaseReport {
            kind: if mutated { "mutated-program" } else { "seed-program" },
            detail: format!("{name} {}", applied.join("+")),
            ..Default::default()
        };
        let pipelines = [
            "temporal-verify",
            "temporal-select-stores",
            "temporal-to-llvm",
            "temporal-print-schedule",
            "temporal-check-points{bounds=T=4}",
            "temporal-schedule,lower-temporal-to-loops",
            "temporal-verify,temporal-schedule,lower-temporal-to-loops,lower-store-to-memref",
            "canonicalize,cse",
            "temporal-to-cuda",
            "temporal-verify,temporal-schedule,lower-temporal-to-loops{gpu=true},lower-store-to-memref,lower-loops-to-gpu",
        ];
        let pipeline = pipelines.choose(rng).copied().unwrap_or("temporal-verify");
        let opt = self.run("tempo-opt", &[path_text.clone(), "-p".into(), pipeline.into()], scratch);
        self.record(&mut report, "tempo-opt", &opt, true, &path_text);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut args = vec![path_text.clone()];
        args.extend(Self::bound_arguments(rng, &text));
        args.extend(["--seed".into(), rng.random_range(0..1000u32).to_string()]);
        let compiled = self.run("tempo-run", &args, scratch);
        self.record(&mut report, "tempo-run", &compiled, true, &path_text);
        // The CUDA target's compilation (no GPU needed): the same program
        // gets kernels or a located diagnostic, never a crash.
        let ptx = scratch.join("ptx").display().to_string();
        let cuda_args = [path_text.clone(), "--target".into(), "cuda".into(), "--emit-ptx".into(), ptx];
        let cuda = self.run("tempo-run", &cuda_args, scratch);
        self.record(&mut report, "tempo-run --target cuda --emit-ptx", &cuda, true, &path_text);
        args.push("--interpret".into());
        let interpreted = self.run("tempo-run", &args, scratch);
        self.record(&mut report, "tempo-run --interpret", &interpreted, true, &path_text);
        self.compare(&mut report, &compiled, &interpreted);
        if !mutated && !compiled.accepted() && !compiled.stderr.contains("missing input") {
            report.outcomes.push(("seed".into(), "seed program rejected".into()));
        }
        report
    }

    /// A case of a library surface (the Rust builder API, the C API), run
    /// by a child `tempo-fuzz --surface-case`: its report, or the crash.
    fn surface_case(&self, case: u64, scratch: &Path) -> CaseReport {
        let me = std::env::current_exe().unwrap_or_else(|_| self.tool("tempo-fuzz"));
        let args = [
            "--surface-case".to_string(),
            case.to_string(),
            "--seed".into(),
            self.cli.seed.to_string(),
            "--bin-dir".into(),
            self.cli.bin_dir.display().to_string(),
            "--root".into(),
            self.cli.root.display().to_string(),
        ];
        let run = self.run_program(&me, "surface", &args, scratch);
        let parsed = fuzz_surfaces::SurfaceReport::from_lines(&run.stdout);
        let kind: &'static str = match parsed.kind.as_str() {
            "c-api" => "c-api",
            _ => "rust-builder",
        };
        let mut report = CaseReport {
            kind,
            detail: parsed.detail,
            failures: parsed.failures.into_iter().map(|(k, d)| (format!("{k} in {kind}"), d)).collect(),
            outcomes: parsed.outcomes,
            unlocated: parsed.unlocated,
        };
        if let Some(kind) = run.failure() {
            report.failures.push((format!("{kind} in {}", report.kind), run.describe()));
        } else if !run.accepted() {
            report.failures.push((format!("no report from {}", report.kind), run.describe()));
        }
        report
    }

    fn run_arguments_case(&self, rng: &mut fuzz::CaseRng, scratch: &Path) -> CaseReport {
        let (name, text) = self.pick_seed(rng).clone();
        let path = scratch.join("input.mlir");
        let _ = std::fs::write(&path, &text);
        let bounds = fuzz::bound_names(&text);
        let args = fuzz::bad_run_arguments(rng, &path.display().to_string(), &bounds);
        let mut report =
            CaseReport { kind: "run-arguments", detail: format!("{name}: {}", args.join(" ")), ..Default::default() };
        let mut with_seed = args.clone();
        with_seed.extend(["--seed".into(), "1".into()]);
        // A bound in the billions is a legitimate run of billions of steps
        // when its stores fit: running out of time there is expected, not a
        // hang (the memory checks are what these cases test).
        let huge = args
            .iter()
            .any(|a| a.split_once('=').and_then(|(_, v)| v.parse::<i128>().ok()).is_some_and(|v| v >= 1_000_000));
        let compiled = self.run("tempo-run", &with_seed, scratch);
        let slow = |run: &RunResult| huge && matches!(run.status, Status::Hang);
        if slow(&compiled) {
            report.outcomes.push(("tempo-run".into(), "still running (huge bound)".into()));
        } else {
            self.record(&mut report, "tempo-run", &compiled, false, "");
        }
        with_seed.push("--interpret".into());
        let interpreted = self.run("tempo-run", &with_seed, scratch);
        if slow(&interpreted) {
            report.outcomes.push(("tempo-run --interpret".into(), "still running (huge bound)".into()));
        } else {
            self.record(&mut report, "tempo-run --interpret", &interpreted, false, "");
        }
        if !slow(&compiled) && !slow(&interpreted) {
            self.compare(&mut report, &compiled, &interpreted);
        }
        report
    }

    fn opt_arguments_case(&self, rng: &mut fuzz::CaseRng, scratch: &Path) -> CaseReport {
        let (name, text) = self.pick_seed(rng).clone();
        let path = scratch.join("input.mlir");
        let _ = std::fs::write(&path, &text);
        let args = fuzz::bad_opt_arguments(rng, &path.display().to_string());
        let mut report =
            CaseReport { kind: "opt-arguments", detail: format!("{name}: {}", args.join(" ")), ..Default::default() };
        let opt = self.run("tempo-opt", &args, scratch);
        self.record(&mut report, "tempo-opt", &opt, false, "");
        report
    }

    /// A program with inputs, given a bad `.npy` file for one of them.
    fn npy_case(&self, rng: &mut fuzz::CaseRng, scratch: &Path) -> CaseReport {
        let with_inputs: Vec<_> = self.seeds.programs.iter().filter(|(_, t)| t.contains("temporal.input")).collect();
        let Some(&(name, text)) = with_inputs.choose(rng) else { return CaseReport::default() };
        let path = scratch.join("input.mlir");
        let _ = std::fs::write(&path, text);
        let mut args = vec![path.display().to_string()];
        args.extend(Self::bound_arguments(rng, text));
        // Learn the first input's name, dtype and shape from the message
        // for a missing input.
        let probe = self.run("tempo-run", &args, scratch);
        let mut report = CaseReport { kind: "npy", detail: name.clone(), ..Default::default() };
        self.record(&mut report, "tempo-run", &probe, false, "");
        let Some((input, dtype, shape)) = parse_missing_input(&probe.stderr) else { return report };
        let (descr, item) = match dtype.as_str() {
            "float32" => ("<f4", 4),
            "float64" => ("<f8", 8),
            "int32" => ("<i4", 4),
            "int64" => ("<i8", 8),
            _ => ("|b1", 1),
        };
        let npy = fuzz::bad_npy(rng, &shape, descr, item);
        let npy_path = scratch.join("bad.npy");
        let _ = std::fs::write(&npy_path, &npy);
        args.extend(["--input".into(), format!("{input}={}", npy_path.display()), "--seed".into(), "3".into()]);
        let compiled = self.run("tempo-run", &args, scratch);
        self.record(&mut report, "tempo-run", &compiled, false, "");
        args.push("--interpret".into());
        let interpreted = self.run("tempo-run", &args, scratch);
        self.record(&mut report, "tempo-run --interpret", &interpreted, false, "");
        self.compare(&mut report, &compiled, &interpreted);
        report.detail = format!("{name}: input {input} {dtype}{shape:?}");
        report
    }

    fn record(&self, report: &mut CaseReport, tool: &str, run: &RunResult, located: bool, file: &str) {
        let outcome = match run.failure() {
            Some(kind) => {
                report.failures.push((format!("{kind} in {tool}"), run.describe()));
                kind.to_string()
            }
            None if run.accepted() => "accepted".into(),
            None => {
                if located && !has_location(&run.stderr, file) && !names_own_location(&run.stderr, file) {
                    report.unlocated.push(first_line(&run.stderr));
                }
                "rejected".into()
            }
        };
        report.outcomes.push((tool.into(), outcome));
    }

    fn compare(&self, report: &mut CaseReport, compiled: &RunResult, interpreted: &RunResult) {
        if compiled.failure().is_some() || interpreted.failure().is_some() {
            return;
        }
        let detail = match (compiled.accepted(), interpreted.accepted()) {
            (true, true) => match compare_outputs(&compiled.stdout, &interpreted.stdout, {
                compiled.stdout_cut || interpreted.stdout_cut
            }) {
                Ok(()) => return,
                Err(e) => format!("different results: {e}"),
            },
            (true, false) => "compiled accepts, interpreter rejects".into(),
            (false, true) => "interpreter accepts, compiled rejects".into(),
            (false, false) => return,
        };
        report.failures.push((
            "disagreement".into(),
            format!("{detail}\n== compiled\n{}\n== interpreted\n{}", compiled.describe(), interpreted.describe()),
        ));
        report.outcomes.push(("compiled vs interpreted".into(), "disagreement".into()));
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").chars().take(200).collect()
}

/// Whether a rejection names a `file:line:col` in `file` (or says the
/// fault is not in the file: command line, bounds, inputs).
fn has_location(stderr: &str, file: &str) -> bool {
    stderr.lines().any(|line| {
        line.find(file).is_some_and(|at| {
            let rest = &line[at + file.len()..];
            let mut parts = rest.splitn(4, ':');
            parts.next() == Some("")
                && parts.next().is_some_and(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
                && parts.next().is_some_and(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()))
        })
    })
}

/// Whether `stderr` names a location the input at `path` carries itself
/// (`loc("bench/train/bench_train.rs":181:19)` in a module the Rust API
/// printed): the user's source line, which is where a diagnostic of such
/// a program belongs.
fn names_own_location(stderr: &str, path: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else { return false };
    let mut files: Vec<&str> = Vec::new();
    for piece in text.split("loc(\"").skip(1) {
        if let Some(end) = piece.find("\":")
            && !files.contains(&&piece[..end])
        {
            files.push(&piece[..end]);
        }
    }
    files.iter().any(|f| !f.is_empty() && has_location(stderr, f))
}

/// `missing input 'W' (float32[4, 4])` -> ("W", "float32", [4, 4]).
fn parse_missing_input(stderr: &str) -> Option<(String, String, Vec<usize>)> {
    let at = stderr.find("missing input '")? + "missing input '".len();
    let rest = &stderr[at..];
    let name_end = rest.find('\'')?;
    let name = rest[..name_end].to_string();
    let rest = &rest[name_end..];
    let open = rest.find('(')? + 1;
    let bracket = rest[open..].find('[')? + open;
    let dtype = rest[open..bracket].to_string();
    let close = rest[bracket..].find(']')? + bracket;
    let dims = rest[bracket + 1..close].trim();
    let shape = if dims.is_empty() {
        Vec::new()
    } else {
        dims.split(',').map(|d| d.trim().parse().ok()).collect::<Option<Vec<usize>>>()?
    };
    Some((name, dtype, shape))
}

/// Compares the printed outputs of two runs: the same text apart from
/// numbers, integers bit-exact, floats within a relative 1e-4 (NaN equal
/// to NaN). Where either output was `cut` to its first lines, the lines
/// both have are compared.
fn compare_outputs(a: &str, b: &str, cut: bool) -> Result<(), String> {
    let (a, b) = if cut {
        let n = a.lines().count().min(b.lines().count());
        let first = |text: &str| text.lines().take(n).collect::<Vec<_>>().join("\n");
        (first(a), first(b))
    } else {
        (a.to_string(), b.to_string())
    };
    let (ta, tb) = (number_tokens(&a), number_tokens(&b));
    if ta.0 != tb.0 {
        return Err("the outputs differ in names, shapes or layout".into());
    }
    if ta.1.len() != tb.1.len() {
        return Err("the outputs have different numbers of values".into());
    }
    for (i, (x, y)) in ta.1.iter().zip(&tb.1).enumerate() {
        let integers = x.parse::<i64>().is_ok() && y.parse::<i64>().is_ok();
        let close = match (x.parse::<f64>(), y.parse::<f64>()) {
            _ if integers => x == y,
            (Ok(x), Ok(y)) => {
                (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= 1e-4 * (1.0 + x.abs().max(y.abs()))
            }
            _ => x == y,
        };
        if !close {
            return Err(format!("value {i}: {x} vs {y}"));
        }
    }
    Ok(())
}

/// Splits printed output into its skeleton (text with numbers replaced by
/// `#`) and the list of number tokens.
fn number_tokens(text: &str) -> (String, Vec<String>) {
    let mut skeleton = String::new();
    let mut numbers = Vec::new();
    let mut current = String::new();
    let mut in_values = false;
    for c in text.chars() {
        if c == '=' {
            in_values = true;
        } else if c == '\n' {
            in_values = false;
        }
        let numeric = in_values && (c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
        if numeric {
            current.push(c);
        } else {
            if !current.is_empty() {
                numbers.push(normalize_number(&std::mem::take(&mut current)));
                skeleton.push('#');
            }
            skeleton.push(c);
        }
    }
    if !current.is_empty() {
        numbers.push(normalize_number(&current));
        skeleton.push('#');
    }
    (skeleton, numbers)
}

fn normalize_number(token: &str) -> String {
    match token {
        "inf" | "Infinity" => "inf".into(),
        "-inf" | "-Infinity" => "-inf".into(),
        "NaN" | "nan" => "NaN".into(),
        other => other.into(),
    }
}

fn main() {
    let mut cli = Cli::parse();
    // Tools run in per-case scratch folders: make every path absolute.
    for path in [&mut cli.out, &mut cli.bin_dir, &mut cli.root] {
        if let Ok(absolute) = std::path::absolute(&*path) {
            *path = absolute;
        }
    }
    if let Some(case) = cli.surface_case {
        // A child of the harness: one surface case, its report on stdout.
        let mut rng = fuzz::case_rng(cli.seed ^ 0x5ca1_ab1e, case);
        let report = if rng.random_bool(0.5) {
            fuzz_surfaces::builder_case(&mut rng)
        } else {
            fuzz_surfaces::capi_case(&mut rng, &cli.bin_dir.join("libTempoCAPI.so"), &cli.root.join("examples"))
        };
        print!("{}", report.to_lines());
        return;
    }
    let seeds = collect_seeds(&cli.root);
    if seeds.programs.is_empty() {
        eprintln!(
            "tempo-fuzz: error: no seed programs under {}/examples or {}/test",
            cli.root.display(),
            cli.root.display()
        );
        std::process::exit(2);
    }
    for tool in ["tempo-opt", "tempo-run"] {
        if !cli.bin_dir.join(tool).is_file() {
            eprintln!(
                "tempo-fuzz: error: {} is missing (build with `cargo build --release --bins`)",
                cli.bin_dir.join(tool).display()
            );
            std::process::exit(2);
        }
    }
    let work = cli.out.join("work");
    let _ = std::fs::create_dir_all(&work);
    let jobs = cli.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let cases: Vec<u64> = match cli.case {
        Some(k) => vec![k],
        None => (0..cli.cases).collect(),
    };
    let started = Instant::now();
    let harness = Harness { cli, seeds, work };
    let next = AtomicU64::new(0);
    let reports: Mutex<Vec<(u64, CaseReport)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst) as usize;
                    let Some(&case) = cases.get(i) else { break };
                    let report = harness.run_case(case);
                    if harness.cli.verbose || !report.failures.is_empty() {
                        let status = if report.failures.is_empty() {
                            "ok".to_string()
                        } else {
                            report.failures.iter().map(|f| f.0.clone()).collect::<Vec<_>>().join(", ")
                        };
                        eprintln!("case {case}: {} {}: {status}", report.kind, report.detail);
                    }
                    if let Ok(mut all) = reports.lock() {
                        all.push((case, report));
                        if all.len() % 500 == 0 {
                            eprintln!(
                                "tempo-fuzz: {} cases done ({:.0} s)",
                                all.len(),
                                started.elapsed().as_secs_f64()
                            );
                        }
                    }
                }
            });
        }
    });
    let reports = reports.into_inner().unwrap_or_default();
    let mut outcomes: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut unlocated = 0;
    let mut unlocated_examples: BTreeMap<String, usize> = BTreeMap::new();
    for (case, report) in &reports {
        *kinds.entry(report.kind).or_default() += 1;
        for o in &report.outcomes {
            *outcomes.entry(o.clone()).or_default() += 1;
        }
        for (kind, _) in &report.failures {
            failures.entry(kind.clone()).or_default().push(*case);
        }
        unlocated += report.unlocated.len();
        for line in &report.unlocated {
            *unlocated_examples.entry(line.clone()).or_default() += 1;
        }
    }
    println!(
        "tempo-fuzz: seed {}, {} cases in {:.0} s ({} jobs)",
        harness.cli.seed,
        reports.len(),
        started.elapsed().as_secs_f64(),
        jobs
    );
    println!("cases by kind:");
    for (kind, n) in &kinds {
        println!("  {kind:24} {n}");
    }
    println!("outcomes:");
    for ((tool, outcome), n) in &outcomes {
        println!("  {tool:28} {outcome:22} {n}");
    }
    println!("rejections of an input program without a file:line:col: {unlocated}");
    if harness.cli.verbose {
        for (line, n) in &unlocated_examples {
            println!("  {n:5}  {line}");
        }
    }
    if failures.is_empty() {
        println!("failures: none (0 panics, 0 signals, 0 hangs, 0 compiler faults, 0 disagreements)");
        let _ = std::fs::remove_dir_all(&harness.work);
    } else {
        println!("failures (reproducers in {}/failures):", harness.cli.out.display());
        for (kind, cases) in &failures {
            let shown: Vec<String> = cases.iter().take(12).map(u64::to_string).collect();
            println!("  {kind:40} {:5}  cases {}", cases.len(), shown.join(" "));
        }
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rejection at the input's own line, or at a source line the input
    /// carries in its locations (a module the Rust API printed), is located;
    /// one at another file's line, or at none, is not.
    #[test]
    fn rejections_are_located_at_the_input_or_the_source_it_names() {
        let dir = std::env::temp_dir().join(format!("tempo-fuzz-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("case.mlir");
        std::fs::write(&path, "\"temporal.grad\"() : () -> ()\n#loc5 = loc(\"bench/train/bench_train.rs\":181:19)\n")
            .unwrap();
        let path = path.to_str().unwrap();
        let own = format!("{path}:1:1: error: bad op");
        assert!(has_location(&own, path));
        let source = "bench/train/bench_train.rs:181:19: error: run temporal-autodiff first";
        assert!(!has_location(source, path) && names_own_location(source, path));
        assert!(!names_own_location("src/other.rs:3:4: error: bad", path));
        assert!(!names_own_location("error: no location", path));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Outputs cut to their first lines compare on the lines both have;
    /// whole outputs must match line for line.
    #[test]
    fn cut_outputs_compare_on_the_lines_both_have() {
        let a = "x: float32[2] = [1.0, 2.0]\ny: float32[2] = [3.0, 4.0]\n";
        let b = "x: float32[2] = [1.00000001, 2.0]\n";
        assert!(compare_outputs(a, b, true).is_ok());
        assert!(compare_outputs(a, b, false).is_err());
        assert!(compare_outputs(a, "x: float32[2] = [1.5, 2.0]\n", true).is_err());
    }
}
