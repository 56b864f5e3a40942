//! What the examples that time their compiled runs share (`tree_lstm`,
//! `birnn`, `decode_until_eos`, `early_exit`): integer flags of the command
//! line, and a program compiled once, run after a warm-up, timed, and
//! interpreted for comparison.

use tempo::{HostArray, Runner};

/// The value of `--name VALUE` in `args`, or `default`.
pub fn flag(args: &[String], name: &str, default: i64) -> i64 {
    args.iter().position(|a| a == name).and_then(|k| args.get(k + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// `runner`'s program compiled once and run with `bounds` and `inputs`:
/// once to warm up, then `repeat` times (at least once). The outputs of
/// the last run, the median seconds of a run, and the interpreter's
/// outputs.
pub fn timed_and_interpreted(
    runner: &Runner,
    bounds: &[(&str, i64)],
    inputs: &[HostArray],
    repeat: i64,
) -> Result<(Vec<HostArray>, f64, Vec<HostArray>), tempo::Error> {
    let compiled = runner.compile()?;
    let mut outputs = compiled.run(bounds, inputs)?;
    let mut times = Vec::new();
    for _ in 0..repeat.max(1) {
        let start = std::time::Instant::now();
        outputs = compiled.run(bounds, inputs)?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let interpreted = runner.interpret()?;
    Ok((outputs, times[times.len() / 2], interpreted))
}
