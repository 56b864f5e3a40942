//! REINFORCE on the Tempo artifact's trivial environment, the whole
//! training run one program: for each iteration `i`, a rollout of `T`
//! steps over `N` environments, returns over the future, the policy
//! gradient `-log pi(a[t] | s[t]) G[t]` averaged over environments and
//! summed over steps, and Adam.
//!
//! ```text
//! cargo run --release --example reinforce -- [--returns mc|N] [--envs 64]
//!   [--steps 64] [--layers 2] [--width 64] [--obs 3,4,4] [--iterations 50]
//!   [--lr 0.003] [--seed 1] [--dtype f32|f64] [--fast-math] [--threads N] [--interpret] [--mlir]
//! ```
//!
//! `--returns mc` (the default): Monte-Carlo returns, the discounted sum of
//! the rest of the episode, `G[t] = sum_k gamma^k r[t+k]` over `r[t:T]` (a
//! backward recurrence: every step's return needs the episode's end).
//! `--returns N`: n-step returns over the window `r[t:min(t+N, T)]`, no
//! bootstrap (REINFORCE has no critic): a step's return is known N steps
//! later, so its gradient needs the step's activations only that long.
//!
//! The environment: a state per environment, `s0 ~ U(-1, 1)`,
//! `s[t+1] = clip(s[t] + 0.1 a[t], -1, 1)`, reward `-|s[t+1]|`, the
//! observation the state broadcast to `C x H x W`; a normal policy (an MLP
//! with tanh, a linear mean head, a learned log sigma).
//!
//! Prints one line per iteration, `iteration N mean_return R seconds S`
//! (`S`: the run's time divided evenly; compile time on stderr).

mod rl_common;

use tempo::optim::{self, Adam};
use tempo::{Cond, Coordinate, Expr, Program, Tensor, f64s, rl};

const GAMMA: f64 = 0.99;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Returns {
    MonteCarlo,
    NStep(i64),
}

#[derive(Clone, Debug)]
struct Config {
    returns: Returns,
    envs: i64,
    steps: i64,
    layers: usize,
    width: i64,
    obs: [i64; 3],
    iterations: i64,
    lr: f64,
    seed: u64,
    f32: bool,
    /// Compiled runs: fast math and threads (0: one per core).
    fast_math: bool,
    threads: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            returns: Returns::MonteCarlo,
            envs: 64,
            steps: 64,
            layers: 2,
            width: 64,
            obs: [3, 4, 4],
            iterations: 50,
            lr: 3e-3,
            seed: 1,
            f32: true,
            fast_math: false,
            threads: 0,
        }
    }
}

fn program(config: &Config) -> Program {
    let real = |shape: &[i64]| if config.f32 { tempo::f32s(shape) } else { f64s(shape) };
    let (n, width) = (config.envs, config.width);
    let observation: i64 = config.obs.iter().product();
    let mut p = Program::new();
    let i = p.dim("i", "I");
    let t = p.dim("t", "T");
    // Parameters: the policy's MLP, its mean head and log sigma.
    let mut shapes: Vec<(String, Vec<i64>, f64)> = Vec::new();
    let mut fan_in = observation;
    for k in 0..config.layers {
        shapes.push((format!("w{k}"), vec![fan_in, width], 1.0 / (fan_in as f64).sqrt()));
        shapes.push((format!("b{k}"), vec![width], 0.0));
        fan_in = width;
    }
    shapes.push(("mean".into(), vec![fan_in, 1], 0.01));
    shapes.push(("mean_bias".into(), vec![1], 0.0));
    shapes.push(("log_sigma".into(), vec![1], 0.0));
    let params: Vec<(Tensor, Tensor, f64)> = shapes
        .iter()
        .map(|(name, shape, scale)| {
            (p.input(&format!("{name}_init"), &[], real(shape)), p.tensor(name, &[&i], real(shape)), *scale)
        })
        .collect();
    let param = |name: &str| params.iter().find(|(_, t, _)| t.name() == name).expect("a parameter").1.here();

    // The rollout.
    let state = p.tensor("state", &[&i, &t], real(&[n, 1]));
    let action = p.tensor("action", &[&i, &t], real(&[n]));
    let log_prob = p.tensor("log_prob", &[&i, &t], real(&[n]));
    let reward = p.tensor("reward", &[&i, &t], real(&[n]));
    let mut h = state.here().expand(&[n, observation]);
    for k in 0..config.layers {
        h = (h.matmul(&param(&format!("w{k}"))) + param(&format!("b{k}"))).tanh();
    }
    let mean = (h.matmul(&param("mean")) + param("mean_bias")).reshape(&[n]);
    let sample = rl::normal(&mean, &param("log_sigma"), 17);
    p.otherwise(&action, sample.action.clone());
    p.otherwise(&log_prob, rl::normal_log_prob(&action.here(), &mean, &param("log_sigma")));
    let one = Expr::splat(1.0, real(&[]));
    p.define(&state, t.eq(0), Expr::random_uniform(5, real(&[n, 1])) * 2.0 - 1.0);
    let before = |x: &Tensor| x.at_dims([(&t, &t - 1)]);
    let moved = before(&state) + before(&action).reshape(&[n, 1]) * 0.1;
    p.otherwise(&state, moved.min(&one).max(&-&one));
    let next = (state.here().reshape(&[n]) + action.here() * 0.1).min(&one).max(&-&one);
    p.otherwise(&reward, -next.abs());

    // Returns over the future.
    let returns = match config.returns {
        Returns::MonteCarlo => rl::discounted_returns(&mut p, "returns", &reward, &t, GAMMA, None),
        Returns::NStep(steps) => {
            // gamma^k over the window's positions, then the window
            // r[t:min(t+N, T)] weighted by them (the last N steps read to
            // the episode's end).
            // (A unit axis, so that a window of them broadcasts over the
            // environments.)
            let discount = p.tensor("discount", &[&t], real(&[1]));
            p.define(&discount, t.eq(0), Expr::splat(1.0, real(&[1])));
            p.define(&discount, Cond::always(), discount.at([&t - 1]) * GAMMA);
            let g = p.tensor("returns", &[&i, &t], real(&[n]));
            let window = reward.read_box([(&t, Coordinate::range(t.var(), &t + steps))]);
            p.define(&g, t.lt(t.bound() - steps), (window * discount.range(0, steps)).sum(0));
            let rest = reward.read_box([(&t, Coordinate::range(t.var(), t.bound()))]);
            p.define(&g, Cond::always(), (rest * discount.range(0, t.bound() - t.var())).sum(0));
            g
        }
    };
    let loss = p.tensor("loss", &[&i, &t], real(&[]));
    p.otherwise(&loss, (-(log_prob.here() * returns.here().stop_gradient())).mean(0));
    let adam = Adam::with_lr(config.lr);
    for (init, param, scale) in &params {
        let g = p.grad(&format!("g_{}", param.name()), &loss, param);
        optim::adam(&mut p, param, &g, &i, init.here() * *scale, &adam);
    }
    let mean_return = p.tensor("mean_return", &[&i], real(&[]));
    let rewards = reward.read_box([(&t, Coordinate::range(0, t.bound()))]);
    p.otherwise(&mean_return, rewards.sum(0).mean(0));
    p.output(&mean_return);
    p
}

/// Trains; the mean return of each iteration and the run's seconds
/// (without compilation).
fn train(config: &Config, interpret: bool) -> Result<(Vec<f64>, f64), tempo::Error> {
    let run = rl_common::Run {
        iterations: config.iterations,
        steps: config.steps,
        seed: config.seed,
        interpret,
        fast_math: config.fast_math,
        threads: config.threads,
    };
    rl_common::train("reinforce", program(config), run)
}

fn usage() -> ! {
    eprintln!(
        "usage: reinforce [--returns mc|N] [--envs N] [--steps T] [--layers L] [--width W] [--obs C,H,W] [--iterations I] [--lr LR] [--seed S] [--dtype f32|f64] [--fast-math] [--threads N] [--interpret] [--mlir]"
    );
    eprintln!("{}", rl_common::NUMERICS_HELP);
    std::process::exit(2)
}

fn main() {
    const TOOL: &str = "reinforce";
    let mut config = Config::default();
    let (mut interpret, mut mlir) = (false, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--returns" => {
                config.returns = match value().as_str() {
                    "mc" => Returns::MonteCarlo,
                    text => Returns::NStep(rl_common::number(TOOL, "--returns", text)),
                }
            }
            "--envs" => config.envs = rl_common::number(TOOL, &arg, &value()),
            "--steps" => config.steps = rl_common::number(TOOL, &arg, &value()),
            "--layers" => config.layers = rl_common::number(TOOL, &arg, &value()),
            "--width" => config.width = rl_common::number(TOOL, &arg, &value()),
            "--iterations" => config.iterations = rl_common::number(TOOL, &arg, &value()),
            "--lr" => config.lr = rl_common::number(TOOL, &arg, &value()),
            "--seed" => config.seed = rl_common::number(TOOL, &arg, &value()),
            "--obs" => config.obs = rl_common::observation(TOOL, &value()),
            "--dtype" => config.f32 = rl_common::is_f32(TOOL, &value()),
            "--fast-math" => config.fast_math = true,
            "--threads" => config.threads = rl_common::number(TOOL, &arg, &value()),
            "--interpret" => interpret = true,
            "--mlir" => mlir = true,
            "--help" | "-h" => usage(),
            _ => {
                eprintln!("reinforce: unknown argument '{arg}'");
                usage()
            }
        }
    }
    rl_common::check_sizes(TOOL, config.envs, config.steps, config.width, config.iterations);
    if let Returns::NStep(k) = config.returns
        && (k < 1 || k > config.steps)
    {
        eprintln!("reinforce: --returns N needs 1 <= N <= --steps (got {k})");
        std::process::exit(2)
    }
    rl_common::finish(mlir, false, || Ok(program(&config)), || train(&config, interpret));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With Monte-Carlo and with n-step returns the mean return rises, and
    /// compiled runs equal interpreted ones.
    #[test]
    fn returns_rise_and_compiled_agrees_with_the_interpreter() {
        for returns in [Returns::MonteCarlo, Returns::NStep(4)] {
            let config =
                Config { returns, envs: 16, steps: 16, iterations: 40, width: 16, layers: 1, ..Config::default() };
            let (r, _) = train(&config, false).unwrap();
            let mean = |r: &[f64]| r.iter().sum::<f64>() / r.len() as f64;
            let (first, last) = (mean(&r[..8]), mean(&r[32..]));
            assert!(last > first + 0.5, "{returns:?}: mean return {first} -> {last}");
            let small =
                Config { returns, envs: 3, steps: 9, iterations: 3, width: 8, obs: [1, 2, 2], ..Config::default() };
            assert_eq!(train(&small, false).unwrap().0, train(&small, true).unwrap().0, "{returns:?}");
        }
    }
}
