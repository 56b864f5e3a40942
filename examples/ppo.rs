//! Advantage actor-critic ("PPO" as the Tempo artifact runs it: one
//! full-batch update per iteration), or PPO's clipped objective with
//! several epochs per rollout, with the whole training run one
//! program: for each iteration `i`, a rollout of `T` steps over `N`
//! environments vectorized in each point, generalized advantage estimation
//! over the future (a backward recurrence), normalized advantages, the
//! policy, value and entropy losses, their gradients and Adam.
//!
//! ```text
//! cargo run --release --example ppo -- --env trivial --envs 64 --steps 64
//!   [--objective a2c|ppo] [--epochs 4] [--clip 0.2]
//!   [--layers 2] [--width 64] [--obs 3,4,4] [--iterations 50] [--lr 0.003]
//!   [--seed 1] [--dtype f32|f64] [--fast-math] [--threads N] [--duplicate-forward]
//!   [--data-parallel] [--params FILE] [--interpret] [--mlir]
//! mpirun -np 2 --allow-run-as-root --oversubscribe target/release/examples/ppo --data-parallel
//! ```
//!
//! `--data-parallel` runs the environments over the processes of an MPI
//! run (`Program::data_parallel`, the pattern of Podracer's Anakin and
//! DD-PPO): each process steps its `envs / P` environments and computes
//! their rollout, advantages and losses; the advantage normalization's
//! mean and deviation and the mean return are all-reduced (means over
//! the processes, so they are the whole batch's), and the gradients are
//! the processes' mean, in one all-reduced buffer per loss and iteration.
//! Each environment's randomness (its initial states and its actions'
//! noise) is keyed by its index in the whole run's batch: each process
//! has its own environments, and a run over P processes is the run of one
//! process over all of them, up to the order of float sums. Without
//! `mpirun` it is one process with every environment. `--params FILE`
//! writes the parameters of the last iteration (before its update), one
//! line per parameter, to `FILE` (`.rank{R}` appended when there are
//! several processes); rank 0 alone prints the iterations.
//!
//! Objectives (`--objective`):
//! - `a2c` (the default): one Adam step per iteration on the mean over
//!   environments, summed over steps, of
//!   `-log_prob * adv + VALUE/2 (value - returns)^2 - ENTROPY * entropy`,
//!   the rollout's own log-probabilities and values differentiated.
//! - `ppo`: the rollout runs once per iteration with the parameters at the
//!   iteration's start, then `--epochs K` full-batch epochs each compute
//!   the policy's log-probabilities, the values and the entropy again from
//!   the rollout's observations with that epoch's parameters, and take one
//!   Adam step on `-min(ratio adv, clip(ratio, 1-C, 1+C) adv) + VALUE/2
//!   (value - returns)^2 - ENTROPY * entropy` (`ratio = exp(new_log_prob -
//!   old_log_prob)`, the rollout's log-probability and the normalized
//!   advantages under `stop_gradient`; `--clip C`), averaged as `a2c`'s;
//!   the next iteration's rollout reads the parameters after the `K`-th
//!   step. Each epoch's parameters are tensors over `i` of their own
//!   (`{name}` at the start, `{name}_e1`, ..., `{name}_e{K-1}`;
//!   `optim::adam_epochs`), and so are its loss (`loss_e{k}[i, t]`) and
//!   its forward pass: the program grows with `K`. Each iteration runs the
//!   rollout, the advantages, then each epoch's forward and backward loops
//!   over `t` in turn. (An epoch dimension, parameters over `(i, e)`,
//!   would keep the program's size: the scheduler does not yet accept a
//!   cycle through tensors over `(i, t)` and `(i, e)`, domains that do not
//!   nest.) At the rollout's parameters the ratio is 1, inside the
//!   clipping range, so the clipped term's gradient is `-adv` times the
//!   log-probability's, the A2C policy gradient: with `--epochs 1` the run
//!   is `a2c`'s (the test `one_ppo_epoch_is_a2c` checks that the returns
//!   are equal).
//!
//! `--duplicate-forward` writes the policy's and the critic's forward pass
//! a second time for the loss, as frameworks run it (a rollout under
//! `no_grad`, then the forward again with gradients); `temporal-dedup`
//! proves the two equal and merges them, so the compiled program is the
//! same as without the flag.
//!
//! Prints one line per iteration, `iteration N mean_return R seconds S`
//! (`S`: the run's time divided evenly, since every iteration runs in one
//! compiled program; compile time is reported separately on stderr).
//!
//! Environments, written in the temporal language:
//! - `trivial` (the artifact's): a state per environment, `s0 ~ U(-1, 1)`,
//!   `s[t+1] = clip(s[t] + 0.1 a[t], -1, 1)`, reward `-|s[t+1]|`, the
//!   observation the state broadcast to `C x H x W`; a normal policy. The
//!   mean return is that of the `T`-step episode.
//! - `cartpole`: the classic cart-pole dynamics (Euler steps of 0.02 s,
//!   force +-10 N), reward 1 per step, an episode ends when the pole tips
//!   past 12 degrees or the cart leaves +-2.4 m, and the environment resets
//!   at once (`done` masks the returns and the advantages); a categorical
//!   policy over the two forces. `cartpole-callback` runs the same
//!   dynamics as Rust callbacks over the whole batch (`Program::external`:
//!   the environment outside the program, as a simulator would be), with
//!   the same results. The mean return is over the iteration's
//!   episodes, those still running at its last step counted with what they
//!   have (every iteration starts from fresh states, so `T` caps it).

mod rl_common;

use tempo::optim::{self, Adam};
use tempo::{Collective, Cond, ElementType, Expr, Program, Shard, Tensor, f64s, rl};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Env {
    Trivial,
    CartPole,
    /// The same CartPole as an external Rust callback over the batch.
    CartPoleCallback,
}

/// What each iteration optimizes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Objective {
    /// Advantage actor-critic: one update per iteration, the policy
    /// gradient `-log_prob * advantage`.
    A2c,
    /// PPO's clipped surrogate: `epochs` full-batch updates per rollout.
    Ppo,
}

#[derive(Clone, Debug)]
struct Config {
    env: Env,
    objective: Objective,
    /// With `Objective::Ppo`: updates per iteration (the bound `E` of the
    /// epoch dimension `e`) and the clipping range of the ratio.
    epochs: i64,
    clip: f64,
    envs: i64,
    steps: i64,
    layers: usize,
    width: i64,
    obs: [i64; 3],
    iterations: i64,
    lr: f64,
    seed: u64,
    /// Element type of the trivial environment's program (f32, the
    /// default, or f64; CartPole is f64).
    f32: bool,
    /// Compiled runs: fast math and threads (0: one per core).
    fast_math: bool,
    threads: usize,
    /// Write the policy's forward pass twice, as frameworks run it: once
    /// in the rollout, again for the loss (temporal-dedup merges them).
    duplicate_forward: bool,
    /// The environments split over the processes of an MPI run.
    data_parallel: bool,
    /// Output the parameters over `i` after the mean returns.
    params_out: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            env: Env::Trivial,
            objective: Objective::A2c,
            epochs: 4,
            clip: 0.2,
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
            duplicate_forward: false,
            data_parallel: false,
            params_out: false,
        }
    }
}

const GAMMA: f64 = 0.99;
const LAMBDA: f64 = 0.96;
const ENTROPY: f64 = 0.01;
const VALUE: f64 = 0.5;

/// The cart-pole's next state `[x, x_dot, theta, theta_dot]` (rows of
/// `state`, `[N, 4]`) under the force `force` (`[N]`), as Gym's
/// `CartPoleEnv.step` computes it (Euler).
fn cartpole_step(state: &Expr, force: &Expr, n: i64) -> Expr {
    let (gravity, cart, pole, half_length, tau) = (9.8, 1.0, 0.1, 0.5, 0.02);
    let total = cart + pole;
    let column = |k: i64| state.slice(&[0, k], &[n, 1]).reshape(&[n]);
    let (x, x_dot, theta, theta_dot) = (column(0), column(1), column(2), column(3));
    let (cos, sin) = (theta.cos(), theta.sin());
    let temp = (force + &theta_dot * &theta_dot * &sin * (pole * half_length)) * (1.0 / total);
    let theta_acc = (&sin * gravity - &cos * &temp) / ((-(&cos * &cos) * (pole / total) + 4.0 / 3.0) * half_length);
    let x_acc = &temp - &theta_acc * &cos * (pole * half_length / total);
    let next = [&x + &x_dot * tau, &x_dot + x_acc * tau, &theta + &theta_dot * tau, &theta_dot + theta_acc * tau];
    let columns: Vec<Expr> = next.iter().map(|e| e.reshape(&[n, 1])).collect();
    columns[1..].iter().fold(columns[0].clone(), |acc, c| acc.concat(c, 1))
}

/// Whether each row of a cart-pole state `[N, 4]` is terminal (1.0 or 0.0).
fn cartpole_done(state: &Expr, n: i64) -> Expr {
    let column = |k: i64| state.slice(&[0, k], &[n, 1]).reshape(&[n]);
    let theta_limit = 12.0 * 2.0 * std::f64::consts::PI / 360.0;
    let scalar = |v: f64| Expr::splat(v, f64s(&[]));
    let out = column(0).abs().greater(&scalar(2.4)).or(&column(2).abs().greater(&scalar(theta_limit)));
    out.cast(ElementType::F64)
}

/// CartPole as Rust callbacks over the batch: the same arithmetic as
/// [`cartpole_step`] and [`cartpole_done`], in the same order.
mod callbacks {
    use tempo::{Data, HostArray};

    fn next(row: &[f64], action: i64) -> [f64; 4] {
        let (gravity, cart, pole, half_length, tau) = (9.8, 1.0, 0.1, 0.5, 0.02);
        let total = cart + pole;
        let [x, x_dot, theta, theta_dot] = [row[0], row[1], row[2], row[3]];
        let force = action as f64 * 20.0 - 10.0;
        let (cos, sin) = (theta.cos(), theta.sin());
        let temp = (force + theta_dot * theta_dot * sin * (pole * half_length)) * (1.0 / total);
        let theta_acc = (sin * gravity - cos * temp) / ((-(cos * cos) * (pole / total) + 4.0 / 3.0) * half_length);
        let x_acc = temp - theta_acc * cos * (pole * half_length / total);
        [x + x_dot * tau, x_dot + x_acc * tau, theta + theta_dot * tau, theta_dot + theta_acc * tau]
    }

    fn terminal(row: &[f64; 4]) -> bool {
        row[0].abs() > 2.4 || row[2].abs() > 12.0 * 2.0 * std::f64::consts::PI / 360.0
    }

    fn arrays(args: &[HostArray]) -> Result<(&[f64], &[i64]), String> {
        match (&args[0].data, &args[1].data) {
            (Data::F64(state), Data::I64(action)) => Ok((state, action)),
            _ => Err("cartpole callbacks take an f64 state and i64 actions".into()),
        }
    }

    /// `[state, action, done, fresh]` of the previous step: the next
    /// state, or the fresh one where the previous step ended an episode.
    pub fn step(args: &[HostArray], n: i64) -> Result<HostArray, String> {
        let (state, action) = arrays(args)?;
        let (Data::F64(done), Data::F64(fresh)) = (&args[2].data, &args[3].data) else {
            return Err("cartpole_step takes f64 done flags and fresh states".into());
        };
        let mut out = Vec::with_capacity(state.len());
        for b in 0..n as usize {
            let row = &state[4 * b..4 * b + 4];
            if done[b] > 0.5 {
                out.extend_from_slice(&fresh[4 * b..4 * b + 4]);
            } else {
                out.extend_from_slice(&next(row, action[b]));
            }
        }
        Ok(HostArray { name: "state".into(), shape: vec![n as usize, 4], data: Data::F64(out) })
    }

    /// `[state, action]`: 1 where the step ends the episode.
    pub fn done(args: &[HostArray], n: i64) -> Result<HostArray, String> {
        let (state, action) = arrays(args)?;
        let out = (0..n as usize).map(|b| terminal(&next(&state[4 * b..4 * b + 4], action[b])) as i64 as f64).collect();
        Ok(HostArray { name: "done".into(), shape: vec![n as usize], data: Data::F64(out) })
    }
}

/// A parameter of the program: its initial value (`{name}_init`, uniform
/// in [-1, 1), times `scale`) and its value in each epoch of an iteration,
/// the first at the iteration's start (`{name}[i]`, what the rollout
/// reads), with the PPO objective the later ones `{name}_e{k}[i]` (one
/// epoch, the first, with the A2C objective).
struct Param {
    init: Tensor,
    epochs: Vec<Tensor>,
    scale: f64,
}

/// The training program; outputs `mean_return[i]` (then, with
/// `params_out`, the parameters over `i`).
fn program(config: &Config) -> Result<Program, tempo::Error> {
    // Every value's element type: f32 where asked (the trivial environment;
    // CartPole's dynamics are f64).
    let f32 = config.f32 && config.env == Env::Trivial;
    let f64s = |shape: &[i64]| if f32 { tempo::f32s(shape) } else { f64s(shape) };
    let mut p = Program::new();
    // This process's environments: all, or its part of a data-parallel
    // run's.
    let shard = if config.data_parallel {
        p.data_parallel(config.envs as usize)?
    } else {
        Shard { rank: 0, processes: 1, start: 0, len: config.envs as usize }
    };
    let (n, width) = (shard.len as i64, config.width);
    let state_size = if config.env == Env::Trivial { 1 } else { 4 };
    let observation = if config.env == Env::Trivial { config.obs.iter().product::<i64>() } else { 4 };
    let callback = config.env == Env::CartPoleCallback;
    // Seeded noise for this process's environments, `[n, columns...]`:
    // rows keyed by the environments' places in the whole run's batch (a
    // slice of the draw for all of them), so that a data-parallel run is
    // the one-process run.
    let noise = |seed: i64, normal: bool, columns: &[i64]| {
        let whole: Vec<i64> = [config.envs].iter().chain(columns).copied().collect();
        let drawn =
            if normal { Expr::random_normal(seed, f64s(&whole)) } else { Expr::random_uniform(seed, f64s(&whole)) };
        if shard.processes == 1 {
            return drawn;
        }
        let mut offsets = vec![0; whole.len()];
        offsets[0] = shard.start as i64;
        let shape: Vec<i64> = [n].iter().chain(columns).copied().collect();
        drawn.slice(&offsets, &shape)
    };
    // A mean over the processes of a data-parallel run.
    let across = |x: Expr, reduction: Collective| if config.data_parallel { x.all_reduce(reduction) } else { x };
    let i = p.dim("i", "I");
    let t = p.dim("t", "T");
    // Parameters: an MLP with tanh, an actor head and a critic head.
    let mut shapes: Vec<(String, Vec<i64>, f64)> = Vec::new();
    // Separate trunks for the actor and the critic (as CleanRL's agents
    // have): the value loss's scale does not drown the policy's gradient.
    let mut fan_in = observation;
    for k in 0..config.layers {
        for trunk in ["w", "cw"] {
            shapes.push((format!("{trunk}{k}"), vec![fan_in, width], 1.0 / (fan_in as f64).sqrt()));
            shapes.push((format!("{trunk}b{k}"), vec![width], 0.0));
        }
        fan_in = width;
    }
    let actions = if config.env == Env::Trivial { 1 } else { 2 };
    shapes.push(("actor".into(), vec![fan_in, actions], 0.01));
    shapes.push(("actor_bias".into(), vec![actions], 0.0));
    shapes.push(("critic".into(), vec![fan_in, 1], 1.0 / (fan_in as f64).sqrt()));
    shapes.push(("critic_bias".into(), vec![1], 0.0));
    if config.env == Env::Trivial {
        shapes.push(("log_sigma".into(), vec![1], 0.0));
    }
    // The parameters at the start of each iteration, `{name}[i]` (what
    // the rollout reads); with the PPO objective, those of its later
    // epochs too, `{name}_e{k}[i]` (epoch 0's are the start's).
    let epochs = if config.objective == Objective::Ppo { config.epochs as usize } else { 1 };
    let params: Vec<Param> = shapes
        .iter()
        .map(|(name, shape, scale)| Param {
            init: p.input(&format!("{name}_init"), &[], f64s(shape)),
            epochs: (0..epochs)
                .map(|k| {
                    let name = if k == 0 { name.clone() } else { format!("{name}_e{k}") };
                    p.tensor(&name, &[&i], f64s(shape))
                })
                .collect(),
            scale: *scale,
        })
        .collect();
    let find = |name: &str| params.iter().find(|q| q.epochs[0].name() == name).expect("a parameter");
    let param = |name: &str| find(name).epochs[0].here();

    // The environment's state, the policy's action, reward and episode ends.
    let state = p.tensor("state", &[&i, &t], f64s(&[n, state_size]));
    let features = p.tensor("features", &[&i, &t], f64s(&[n, width]));
    let reward = p.tensor("reward", &[&i, &t], f64s(&[n]));
    let done = p.tensor("done", &[&i, &t], f64s(&[n]));
    let value = p.tensor("value", &[&i, &t], f64s(&[n]));
    let log_prob = p.tensor("log_prob", &[&i, &t], f64s(&[n]));
    let entropy = p.tensor("entropy", &[&i, &t], f64s(&[n]));
    let before = |x: &Tensor| x.at_dims([(&t, &t - 1)]);
    let uniform = |seed: i64, low: f64, high: f64| noise(seed, false, &[state_size]) * (high - low) + low;
    // Observations and features.
    let observed = match config.env {
        Env::Trivial => state.here().expand(&[n, observation]),
        Env::CartPole | Env::CartPoleCallback => state.here(),
    };
    // A trunk's features from the observations, with the parameters
    // `at` reads (those of the iteration's start, or of an epoch).
    let trunk_with = |at: &dyn Fn(&str) -> Expr, prefix: &str| {
        let mut h = observed.clone();
        for k in 0..config.layers {
            h = (h.matmul(&at(&format!("{prefix}{k}"))) + at(&format!("{prefix}b{k}"))).tanh();
        }
        h
    };
    let trunk = |prefix: &str| trunk_with(&param, prefix);
    p.otherwise(&features, trunk("w"));
    let head = features.here().matmul(&param("actor")) + param("actor_bias");
    p.otherwise(&value, (trunk("cw").matmul(&param("critic")) + param("critic_bias")).reshape(&[n]));
    let action = p.tensor("action", &[&i, &t], if config.env == Env::Trivial { f64s(&[n]) } else { tempo::i64s(&[n]) });
    match config.env {
        Env::Trivial => {
            let sample = rl::normal_with_noise(&head.reshape(&[n]), &param("log_sigma"), &noise(17, true, &[]));
            p.otherwise(&action, sample.action.clone());
            p.otherwise(&log_prob, rl::normal_log_prob(&action.here(), &head.reshape(&[n]), &param("log_sigma")));
            p.otherwise(&entropy, sample.entropy);
            p.define(&state, t.eq(0), uniform(5, -1.0, 1.0));
            let moved = before(&state) + before(&action).reshape(&[n, 1]) * 0.1;
            let one = Expr::splat(1.0, f64s(&[]));
            p.otherwise(&state, moved.min(&one).max(&-&one));
            let next = (state.here().reshape(&[n]) + action.here() * 0.1).min(&one).max(&-&one);
            p.otherwise(&reward, -next.abs());
            p.otherwise(&done, Expr::splat(0.0, f64s(&[n])));
        }
        Env::CartPole | Env::CartPoleCallback => {
            let sample = rl::categorical_with_noise(&head, &noise(17, false, &[actions]));
            p.otherwise(&action, sample.action.clone());
            p.otherwise(&log_prob, rl::categorical_log_prob(&head, &action.here()));
            p.otherwise(&entropy, sample.entropy);
            let fresh = uniform(5, -0.05, 0.05);
            p.define(&state, t.eq(0), fresh.clone());
            if callback {
                p.external("cartpole_step", move |args| callbacks::step(args, n));
                p.external("cartpole_done", move |args| callbacks::done(args, n));
                let inputs = [&before(&state), &before(&action), &before(&done), &fresh];
                p.otherwise(&state, Expr::call("cartpole_step", &inputs, f64s(&[n, 4])));
                p.otherwise(&done, Expr::call("cartpole_done", &[&state.here(), &action.here()], f64s(&[n])));
                p.otherwise(&reward, Expr::splat(1.0, f64s(&[n])));
            } else {
                let force = before(&action).cast(ElementType::F64) * 20.0 - 10.0;
                let stepped = cartpole_step(&before(&state), &force, n);
                let ended = before(&done).reshape(&[n, 1]).greater(&Expr::splat(0.5, f64s(&[])));
                p.otherwise(&state, ended.select(&fresh, &stepped));
                let force = action.here().cast(ElementType::F64) * 20.0 - 10.0;
                p.otherwise(&done, cartpole_done(&cartpole_step(&state.here(), &force, n), n));
                p.otherwise(&reward, Expr::splat(1.0, f64s(&[n])));
            }
        }
    }
    // Advantages (GAE over the future, values outside the gradient),
    // normalized over the iteration's steps and environments.
    let fixed_value = p.tensor("fixed_value", &[&i, &t], f64s(&[n]));
    p.otherwise(&fixed_value, value.here().stop_gradient());
    let advantage = rl::gae(&mut p, "advantage", &reward, &fixed_value, &t, GAMMA, LAMBDA, Some(&done));
    let stats = p.tensor("advantage_stats", &[&i], f64s(&[2]));
    let all = advantage.read_box([(&t, tempo::Coordinate::range(0, t.bound()))]);
    // Over every process's environments (equal numbers: the mean of the
    // processes' means).
    let mean = across(all.mean(0).mean(0), Collective::Mean);
    let centered = &all - &mean;
    let deviation = across((&centered * &centered).mean(0).mean(0), Collective::Mean).sqrt();
    p.otherwise(&stats, mean.reshape(&[1]).concat(&deviation.reshape(&[1]), 0));
    let stat = |k: i64| stats.here().slice(&[k], &[1]);
    let normalized = (advantage.here() - stat(0)) / (stat(1) + 1e-8);
    let returns = advantage.here() + fixed_value.here();
    if config.objective == Objective::Ppo {
        // PPO: each epoch computes the policy and the values again from
        // the rollout's observations with its own parameters; the ratio to
        // the rollout's probabilities is clipped to [1 - C, 1 + C].
        let mut losses = Vec::new();
        for k in 0..epochs {
            let at = |name: &str| find(name).epochs[k].here();
            let features_k = p.tensor(&format!("features_e{k}"), &[&i, &t], f64s(&[n, width]));
            p.otherwise(&features_k, trunk_with(&at, "w"));
            let head = features_k.here().matmul(&at("actor")) + at("actor_bias");
            let value_k = p.tensor(&format!("value_e{k}"), &[&i, &t], f64s(&[n]));
            p.otherwise(&value_k, (trunk_with(&at, "cw").matmul(&at("critic")) + at("critic_bias")).reshape(&[n]));
            let log_prob_k = p.tensor(&format!("log_prob_e{k}"), &[&i, &t], f64s(&[n]));
            let entropy_k = match config.env {
                Env::Trivial => {
                    let mean = head.reshape(&[n]);
                    p.otherwise(&log_prob_k, rl::normal_log_prob(&action.here(), &mean, &at("log_sigma")));
                    rl::normal(&mean, &at("log_sigma"), 17).entropy
                }
                Env::CartPole | Env::CartPoleCallback => {
                    p.otherwise(&log_prob_k, rl::categorical_log_prob(&head, &action.here()));
                    rl::categorical(&head, 17).entropy
                }
            };
            let ratio = (log_prob_k.here() - log_prob.here().stop_gradient()).exp();
            let advantage = normalized.stop_gradient();
            let (low, high) = (Expr::splat(1.0 - config.clip, f64s(&[])), Expr::splat(1.0 + config.clip, f64s(&[])));
            let clipped = ratio.max(&low).min(&high);
            let surrogate = (&ratio * &advantage).min(&(clipped * &advantage));
            let error = value_k.here() - &returns;
            let per_env = -surrogate + &error * &error * (0.5 * VALUE) - entropy_k * ENTROPY;
            let loss = p.tensor(&format!("loss_e{k}"), &[&i, &t], f64s(&[]));
            p.otherwise(&loss, per_env.mean(0));
            losses.push(loss);
        }
        let adam = Adam::with_lr(config.lr);
        for q in &params {
            let grads: Vec<Tensor> = (q.epochs.iter().zip(&losses))
                .map(|(param, loss)| p.grad(&format!("g_{}", param.name()), loss, param))
                .collect();
            optim::adam_epochs(&mut p, &q.epochs, &grads, &i, q.init.here() * q.scale, &adam);
        }
    } else {
        let loss = p.tensor("loss", &[&i, &t], f64s(&[]));
        // The loss's forward pass: the rollout's tensors, or (as frameworks
        // run it) the policy and value computed again from the observations.
        let (loss_value, loss_log_prob) = if config.duplicate_forward {
            let again = p.tensor("loss_features", &[&i, &t], f64s(&[n, width]));
            p.otherwise(&again, trunk("w"));
            let head = again.here().matmul(&param("actor")) + param("actor_bias");
            let value_again = p.tensor("loss_value", &[&i, &t], f64s(&[n]));
            p.otherwise(&value_again, (trunk("cw").matmul(&param("critic")) + param("critic_bias")).reshape(&[n]));
            let log_prob_again = p.tensor("loss_log_prob", &[&i, &t], f64s(&[n]));
            let recomputed = match config.env {
                Env::Trivial => rl::normal_log_prob(&action.here(), &head.reshape(&[n]), &param("log_sigma")),
                Env::CartPole | Env::CartPoleCallback => rl::categorical_log_prob(&head, &action.here()),
            };
            p.otherwise(&log_prob_again, recomputed);
            (value_again.here(), log_prob_again.here())
        } else {
            (value.here(), log_prob.here())
        };
        let error = loss_value - returns;
        let per_env =
            -(loss_log_prob * normalized.stop_gradient()) + &error * &error * (0.5 * VALUE) - entropy.here() * ENTROPY;
        p.otherwise(&loss, per_env.mean(0));
        let adam = Adam::with_lr(config.lr);
        for q in &params {
            let g = p.grad(&format!("g_{}", q.epochs[0].name()), &loss, &q.epochs[0]);
            optim::adam(&mut p, &q.epochs[0], &g, &i, q.init.here() * q.scale, &adam);
        }
    }
    // The mean return of the iteration's episodes.
    let mean_return = p.tensor("mean_return", &[&i], f64s(&[]));
    match config.env {
        Env::Trivial => {
            let rewards = reward.read_box([(&t, tempo::Coordinate::range(0, t.bound()))]);
            p.otherwise(&mean_return, across(rewards.sum(0).mean(0), Collective::Mean));
        }
        Env::CartPole | Env::CartPoleCallback => {
            // Each episode's running return, and those of the ended ones.
            let running = p.tensor("episode_return", &[&i, &t], f64s(&[n]));
            p.define(&running, t.eq(0), reward.here());
            p.define(&running, Cond::always(), before(&running) * (-before(&done) + 1.0) + reward.here());
            // Per step: the returns of the episodes that end there and
            // their number; at the last step also the unfinished ones'.
            let ended = p.tensor("ended", &[&i, &t], f64s(&[2, n]));
            let pair = |returns: Expr, count: Expr| returns.reshape(&[1, n]).concat(&count.reshape(&[1, n]), 0);
            p.define(&ended, t.eq(t.bound() - 1), pair(running.here(), Expr::splat(1.0, f64s(&[n]))));
            p.otherwise(&ended, pair(running.here() * done.here(), done.here()));
            let totals = ended.read_box([(&t, tempo::Coordinate::range(0, t.bound()))]).sum(0).sum(1);
            let totals = across(totals, Collective::Sum);
            let count = totals.slice(&[1], &[1]).reshape(&[]);
            let one = Expr::splat(1.0, f64s(&[]));
            p.otherwise(&mean_return, totals.slice(&[0], &[1]).reshape(&[]) / count.max(&one));
        }
    }
    p.output(&mean_return);
    if config.params_out {
        for q in &params {
            p.output(&q.epochs[0]);
        }
    }
    Ok(p)
}

/// Trains; the mean return of each iteration, and the run's seconds
/// (without compilation).
fn train(config: &Config, interpret: bool, params_file: Option<&str>) -> Result<(Vec<f64>, f64), tempo::Error> {
    let run = rl_common::Run {
        iterations: config.iterations,
        steps: config.steps,
        seed: config.seed,
        interpret,
        fast_math: config.fast_math,
        threads: config.threads,
    };
    let (returns, seconds, params) = rl_common::train_with_outputs("ppo", program(config)?, run)?;
    if let Some(file) = params_file {
        write_params(file, &params, config.iterations as usize, config.data_parallel)?;
    }
    Ok((returns, seconds))
}

/// Writes the parameters of the last iteration (the arrays over `i` of
/// the program's outputs), one line `name v0 v1 ...` each, to `file`
/// (`.rank{R}` appended when the run has several processes).
fn write_params(
    file: &str,
    params: &[tempo::HostArray],
    iterations: usize,
    data_parallel: bool,
) -> Result<(), tempo::Error> {
    let (rank, processes) = if data_parallel { tempo::processes()? } else { (0, 1) };
    let file = if processes > 1 { format!("{file}.rank{rank}") } else { file.to_string() };
    let text: String = params
        .iter()
        .map(|a| {
            let each = a.data.len() / iterations;
            let last = (iterations - 1) * each;
            let values: Vec<String> = (last..last + each).map(|k| format!("{:e}", a.data.get_f64(k))).collect();
            format!("{} {}\n", a.name, values.join(" "))
        })
        .collect();
    std::fs::write(&file, text).map_err(|e| tempo::Error(vec![format!("ppo: cannot write '{file}': {e}")]))
}

fn usage() -> ! {
    eprintln!(
        "usage: ppo [--env trivial|cartpole|cartpole-callback] [--objective a2c|ppo] [--epochs K] [--clip C] [--envs N] [--steps T] [--layers L] [--width W] [--obs C,H,W] [--iterations I] [--lr LR] [--seed S] [--dtype f32|f64] [--fast-math] [--threads N] [--duplicate-forward] [--data-parallel] [--params FILE] [--interpret] [--mlir]"
    );
    eprintln!("{}", rl_common::NUMERICS_HELP);
    std::process::exit(2)
}

fn main() {
    const TOOL: &str = "ppo";
    let mut config = Config::default();
    let (mut interpret, mut mlir, mut dtype_given, mut params_file) = (false, false, false, None::<String>);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--env" => {
                config.env = match value().as_str() {
                    "trivial" => Env::Trivial,
                    "cartpole" => Env::CartPole,
                    "cartpole-callback" => Env::CartPoleCallback,
                    other => {
                        eprintln!("ppo: unknown environment '{other}'");
                        usage()
                    }
                }
            }
            "--objective" => {
                config.objective = match value().as_str() {
                    "a2c" => Objective::A2c,
                    "ppo" => Objective::Ppo,
                    other => {
                        eprintln!("ppo: unknown objective '{other}' (a2c or ppo)");
                        usage()
                    }
                }
            }
            "--epochs" => config.epochs = rl_common::number(TOOL, &arg, &value()),
            "--clip" => config.clip = rl_common::number(TOOL, &arg, &value()),
            "--envs" => config.envs = rl_common::number(TOOL, &arg, &value()),
            "--steps" => config.steps = rl_common::number(TOOL, &arg, &value()),
            "--layers" => config.layers = rl_common::number(TOOL, &arg, &value()),
            "--width" => config.width = rl_common::number(TOOL, &arg, &value()),
            "--iterations" => config.iterations = rl_common::number(TOOL, &arg, &value()),
            "--lr" => config.lr = rl_common::number(TOOL, &arg, &value()),
            "--seed" => config.seed = rl_common::number(TOOL, &arg, &value()),
            "--obs" => config.obs = rl_common::observation(TOOL, &value()),
            "--dtype" => {
                config.f32 = rl_common::is_f32(TOOL, &value());
                dtype_given = true;
            }
            "--duplicate-forward" => config.duplicate_forward = true,
            "--data-parallel" => config.data_parallel = true,
            "--params" => params_file = Some(value()),
            "--fast-math" => config.fast_math = true,
            "--threads" => config.threads = rl_common::number(TOOL, &arg, &value()),
            "--interpret" => interpret = true,
            "--mlir" => mlir = true,
            "--help" | "-h" => usage(),
            _ => {
                eprintln!("ppo: unknown argument '{arg}'");
                usage()
            }
        }
    }
    rl_common::check_sizes(TOOL, config.envs, config.steps, config.width, config.iterations);
    if dtype_given && config.f32 && config.env != Env::Trivial {
        eprintln!("ppo: --dtype f32 is for the trivial environment (CartPole's dynamics run in f64)");
        std::process::exit(2)
    }
    if config.epochs <= 0 || !(config.clip >= 0.0) {
        eprintln!("ppo: --epochs must be positive and --clip at least 0");
        std::process::exit(2)
    }
    if config.duplicate_forward && config.objective == Objective::Ppo {
        eprintln!(
            "ppo: --duplicate-forward is for --objective a2c (the ppo objective computes the forward pass again in every epoch)"
        );
        std::process::exit(2)
    }
    config.params_out = params_file.is_some();
    // Rank 0 alone reports a data-parallel run (every process holds the
    // same returns).
    let quiet = config.data_parallel
        && match tempo::processes() {
            Ok((rank, _)) => rank != 0,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1)
            }
        };
    rl_common::finish(mlir, quiet, || program(&config), || train(&config, interpret, params_file.as_deref()));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trivial environment's return rises, and compiled runs equal
    /// interpreted ones on both environments.
    /// A training run long enough to learn (`tools/test.sh --long`).
    #[test]
    #[ignore = "long: a 40-iteration training run (tools/test.sh --long)"]
    fn returns_rise() {
        let config =
            Config { envs: 16, steps: 16, iterations: 40, width: 16, layers: 1, lr: 3e-3, ..Config::default() };
        let (returns, _) = train(&config, false, None).unwrap();
        let mean = |r: &[f64]| r.iter().sum::<f64>() / r.len() as f64;
        let (first, last) = (mean(&returns[..8]), mean(&returns[32..]));
        assert!(last > first + 1.0, "mean return {first} -> {last}");
    }

    #[test]
    fn compiled_agrees_with_the_interpreter() {
        for env in [Env::Trivial, Env::CartPole, Env::CartPoleCallback] {
            let small = Config {
                env,
                envs: 3,
                steps: 12,
                iterations: 3,
                width: 8,
                layers: 1,
                obs: [1, 2, 2],
                ..Config::default()
            };
            assert_eq!(train(&small, false, None).unwrap().0, train(&small, true, None).unwrap().0, "{env:?}");
        }
        // The callback environment is the same CartPole.
        let config = Config { env: Env::CartPole, envs: 4, steps: 24, iterations: 2, width: 8, ..Config::default() };
        let callback = Config { env: Env::CartPoleCallback, ..config.clone() };
        assert_eq!(train(&config, false, None).unwrap().0, train(&callback, false, None).unwrap().0);
    }

    /// The PPO objective: compiled runs equal interpreted ones on each
    /// environment (two epochs: the updates carried from epoch to epoch
    /// and from the last epoch to the next iteration's rollout).
    #[test]
    fn ppo_objective_compiled_agrees_with_the_interpreter() {
        let ppo = Config {
            objective: Objective::Ppo,
            epochs: 2,
            envs: 8,
            steps: 8,
            iterations: 3,
            width: 16,
            ..Config::default()
        };
        assert_eq!(train(&ppo, false, None).unwrap().0, train(&ppo, true, None).unwrap().0, "trivial");
    }

    /// [`ppo_objective_compiled_agrees_with_the_interpreter`] on CartPole,
    /// stepped in the program and by a callback (`tools/test.sh --long`:
    /// each program takes seconds to compile).
    #[test]
    #[ignore = "long: two more PPO programs (tools/test.sh --long)"]
    fn ppo_objective_on_cartpole_compiled_agrees_with_the_interpreter() {
        for env in [Env::CartPole, Env::CartPoleCallback] {
            let small = Config {
                env,
                objective: Objective::Ppo,
                epochs: 2,
                envs: 3,
                steps: 12,
                iterations: 3,
                width: 8,
                layers: 1,
                ..Config::default()
            };
            assert_eq!(train(&small, false, None).unwrap().0, train(&small, true, None).unwrap().0, "{env:?}");
        }
    }

    /// With one epoch the ratio is 1 at the rollout's parameters, inside
    /// the clipping range, so the clipped objective's gradient is the A2C
    /// policy gradient (and the value and entropy terms are A2C's): the
    /// whole run is A2C's.
    #[test]
    fn one_ppo_epoch_is_a2c() {
        for env in [Env::Trivial, Env::CartPole] {
            let a2c =
                Config { env, envs: 4, steps: 8, iterations: 3, width: 8, layers: 1, lr: 1e-2, ..Config::default() };
            let ppo = Config { objective: Objective::Ppo, epochs: 1, ..a2c.clone() };
            assert_eq!(train(&a2c, false, None).unwrap().0, train(&ppo, false, None).unwrap().0, "{env:?}");
        }
    }

    /// Data parallel in one process (started without mpirun): the
    /// all-reduces are the identity and the noise is the whole batch's,
    /// so the returns are the plain run's, on both environments.
    #[test]
    fn data_parallel_in_one_process_is_the_plain_run() {
        for env in [Env::Trivial, Env::CartPole] {
            let plain = Config { env, envs: 4, steps: 6, layers: 1, width: 8, iterations: 3, ..Config::default() };
            let parallel = Config { data_parallel: true, ..plain.clone() };
            assert_eq!(train(&plain, false, None).unwrap().0, train(&parallel, false, None).unwrap().0, "{env:?}");
        }
    }
}
