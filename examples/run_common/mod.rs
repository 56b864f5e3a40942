//! What the examples that time their compiled runs share (`tree_lstm`,
//! `birnn`, `nested_rnn`, `decode_until_eos`, `early_exit`): integer flags
//! of the command line, a program compiled once, run after a warm-up,
//! timed, and interpreted for comparison, and a small deterministic random
//! generator for their batches.

use tempo::{Data, HostArray, Runner};

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

/// A small deterministic generator (splitmix64).
#[allow(dead_code)] // not every example draws random batches
pub struct Rng(pub u64);

#[allow(dead_code)]
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Uniform in `(-a, a)`.
    pub fn uniform(&mut self, a: f32) -> f32 {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32 * a
    }
    /// An `f32` array `name` of `shape`, uniform in `(-a, a)`.
    pub fn floats(&mut self, name: &str, shape: Vec<usize>, a: f32) -> HostArray {
        let data = (0..shape.iter().product::<usize>()).map(|_| self.uniform(a)).collect();
        HostArray { name: name.into(), shape, data: Data::F32(data) }
    }
}
