//! The reinforcement-learning helpers (`tempo::rl`) against plain-Rust
//! references, compiled and interpreted: returns (with episode ends),
//! n-step returns, GAE, normal and categorical sampling with their
//! log-probabilities, entropies and gradients.

use tempo::{Data, Expr, HostArray, Program, f64s, rl};

fn array(name: &str, shape: &[usize], values: Vec<f64>) -> HostArray {
    HostArray { name: name.into(), shape: shape.to_vec(), data: Data::F64(values) }
}

/// Deterministic pseudo-random values in [-1, 1).
fn values(n: usize, salt: u64) -> Vec<f64> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ salt;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// Runs compiled and interpreted, checks they agree, returns the outputs.
fn run(p: &Program, bounds: &[(&str, i64)], inputs: &[HostArray]) -> Vec<Vec<f64>> {
    let mut compiled = p.runner().seed(1);
    let mut interpreted = p.runner().seed(1);
    for &(name, value) in bounds {
        compiled = compiled.bound(name, value);
        interpreted = interpreted.bound(name, value);
    }
    for a in inputs {
        compiled = compiled.input(a.clone());
        interpreted = interpreted.input(a.clone());
    }
    let c = compiled.run().unwrap();
    let i = interpreted.interpret().unwrap();
    let flat = |out: &[HostArray]| -> Vec<Vec<f64>> {
        out.iter().map(|a| (0..a.data.len()).map(|k| a.data.get_f64(k)).collect()).collect()
    };
    let (c, i) = (flat(&c), flat(&i));
    for (x, y) in c.iter().zip(&i) {
        for (a, b) in x.iter().zip(y) {
            assert!((a - b).abs() <= 1e-12 * a.abs().max(1.0), "compiled {a} against interpreted {b}");
        }
    }
    i
}

fn close(got: &[f64], want: &[f64], tolerance: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (k, (a, b)) in got.iter().zip(want).enumerate() {
        assert!((a - b).abs() <= tolerance * b.abs().max(1.0), "{what}[{k}]: {a} against {b}");
    }
}

#[test]
fn discounted_returns_restart_after_episode_ends() {
    let (b, t) = (3usize, 9usize);
    let mut p = Program::new();
    let bd = p.dim("b", "B");
    let td = p.dim("t", "T");
    let r = p.input("r", &[&bd, &td], f64s(&[]));
    let done = p.input("done", &[&bd, &td], f64s(&[]));
    let plain = rl::discounted_returns(&mut p, "G", &r, &td, 0.9, None);
    let masked = rl::discounted_returns(&mut p, "Gd", &r, &td, 0.9, Some(&done));
    p.output(&plain);
    p.output(&masked);
    let rewards = values(b * t, 1);
    let dones: Vec<f64> = (0..b * t).map(|k| if k % 4 == 2 { 1.0 } else { 0.0 }).collect();
    let out = run(
        &p,
        &[("B", b as i64), ("T", t as i64)],
        &[array("r", &[b, t], rewards.clone()), array("done", &[b, t], dones.clone())],
    );
    let (mut want, mut want_masked) = (vec![0.0; b * t], vec![0.0; b * t]);
    for e in 0..b {
        let (mut g, mut gd) = (0.0, 0.0);
        for s in (0..t).rev() {
            let k = e * t + s;
            g = rewards[k] + 0.9 * g;
            gd = rewards[k] + 0.9 * (1.0 - dones[k]) * gd;
            want[k] = g;
            want_masked[k] = gd;
        }
    }
    close(&out[0], &want, 1e-12, "G");
    close(&out[1], &want_masked, 1e-12, "G with dones");
}

#[test]
fn n_step_returns_bootstrap_from_the_value_n_steps_on() {
    for (n, t) in [(1i64, 6usize), (3, 7), (8, 5)] {
        let mut p = Program::new();
        let td = p.dim("t", "T");
        let r = p.input("r", &[&td], f64s(&[]));
        let v = p.input("v", &[&td], f64s(&[]));
        let g = rl::n_step_returns(&mut p, "G", &r, &v, &td, 0.8, n);
        p.output(&g);
        let (rewards, vals) = (values(t, 2), values(t, 3));
        let out = run(&p, &[("T", t as i64)], &[array("r", &[t], rewards.clone()), array("v", &[t], vals.clone())]);
        let want: Vec<f64> = (0..t)
            .map(|s| {
                let m = (n as usize).min(t - s);
                let mut g: f64 = (0..m).map(|k| 0.8f64.powi(k as i32) * rewards[s + k]).sum();
                if s + (n as usize) < t {
                    g += 0.8f64.powi(n as i32) * vals[s + n as usize];
                }
                g
            })
            .collect();
        close(&out[0], &want, 1e-12, &format!("{n}-step returns"));
    }
}

#[test]
fn generalized_advantage_estimation() {
    let t = 10usize;
    let mut p = Program::new();
    let td = p.dim("t", "T");
    let r = p.input("r", &[&td], f64s(&[]));
    let v = p.input("v", &[&td], f64s(&[]));
    let done = p.input("done", &[&td], f64s(&[]));
    let a = rl::gae(&mut p, "A", &r, &v, &td, 0.99, 0.95, Some(&done));
    p.output(&a);
    let (rewards, vals) = (values(t, 4), values(t, 5));
    let dones: Vec<f64> = (0..t).map(|k| if k == 4 { 1.0 } else { 0.0 }).collect();
    let out = run(
        &p,
        &[("T", t as i64)],
        &[array("r", &[t], rewards.clone()), array("v", &[t], vals.clone()), array("done", &[t], dones.clone())],
    );
    let mut want = vec![0.0; t];
    let mut next_a = 0.0;
    for s in (0..t).rev() {
        let next_v = if s + 1 < t { vals[s + 1] } else { 0.0 };
        let delta = rewards[s] + 0.99 * (1.0 - dones[s]) * next_v - vals[s];
        next_a = delta + 0.99 * 0.95 * (1.0 - dones[s]) * next_a;
        want[s] = next_a;
    }
    close(&out[0], &want, 1e-12, "GAE");
}

#[test]
fn normal_samples_log_probabilities_and_their_gradients() {
    let n = 4000usize;
    let mut p = Program::new();
    let td = p.dim("t", "T");
    let mean = p.input("mean", &[], f64s(&[2]));
    let log_sigma = p.input("log_sigma", &[], f64s(&[2]));
    let action = p.tensor("action", &[&td], f64s(&[2]));
    let log_prob = p.tensor("log_prob", &[&td], f64s(&[]));
    let entropy = p.tensor("entropy", &[], f64s(&[]));
    let sample = rl::normal(&mean.here(), &log_sigma.here(), 7);
    p.otherwise(&action, sample.action.clone());
    p.otherwise(&log_prob, rl::total(&sample.log_prob));
    p.otherwise(&entropy, rl::total(&rl::normal(&mean.here(), &log_sigma.here(), 7).entropy));
    let g_mean = p.grad("g_mean", &log_prob, &mean);
    let g_sigma = p.grad("g_sigma", &log_prob, &log_sigma);
    for t in [&action, &log_prob, &entropy, &g_mean, &g_sigma] {
        p.output(t);
    }
    let (mu, ls) = (vec![0.5, -1.0], vec![-0.7, 0.3]);
    let out = run(&p, &[("T", n as i64)], &[array("mean", &[2], mu.clone()), array("log_sigma", &[2], ls.clone())]);
    let sigma: Vec<f64> = ls.iter().map(|l: &f64| l.exp()).collect();
    for d in 0..2 {
        let xs: Vec<f64> = (0..n).map(|k| out[0][2 * k + d]).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let sd = (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64).sqrt();
        assert!((m - mu[d]).abs() < 4.0 * sigma[d] / (n as f64).sqrt(), "sample mean {m} against {}", mu[d]);
        assert!((sd / sigma[d] - 1.0).abs() < 0.05, "sample deviation {sd} against {}", sigma[d]);
    }
    // log N(a; mu, sigma) and its gradients, summed over the samples.
    let ln_two_pi = (2.0 * std::f64::consts::PI).ln();
    let (mut want_mean, mut want_sigma) = (vec![0.0; 2], vec![0.0; 2]);
    for k in 0..n {
        let mut lp = 0.0;
        for d in 0..2 {
            let z = (out[0][2 * k + d] - mu[d]) / sigma[d];
            lp += -0.5 * z * z - ls[d] - 0.5 * ln_two_pi;
            want_mean[d] += z / sigma[d];
            want_sigma[d] += z * z - 1.0;
        }
        assert!((out[1][k] - lp).abs() < 1e-12 * lp.abs().max(1.0), "log-probability {} against {lp}", out[1][k]);
    }
    let want_entropy: f64 = ls.iter().map(|l| l + 0.5 * (1.0 + ln_two_pi)).sum();
    close(&out[2], &[want_entropy], 1e-12, "entropy");
    close(&out[3], &want_mean, 1e-9, "d log p / d mean");
    close(&out[4], &want_sigma, 1e-9, "d log p / d log sigma");
}

#[test]
fn categorical_samples_follow_the_softmax() {
    let n = 6000usize;
    let mut p = Program::new();
    let td = p.dim("t", "T");
    let logits = p.input("logits", &[], f64s(&[3]));
    let action = p.tensor("action", &[&td], tempo::i64s(&[]));
    let log_prob = p.tensor("log_prob", &[&td], f64s(&[]));
    let entropy = p.tensor("entropy", &[], f64s(&[]));
    let sample = rl::categorical(&logits.here(), 11);
    p.otherwise(&action, sample.action.clone());
    p.otherwise(&log_prob, sample.log_prob.clone());
    p.otherwise(&entropy, rl::categorical(&logits.here(), 11).entropy);
    let g = p.grad("g", &log_prob, &logits);
    for t in [&action, &log_prob, &entropy, &g] {
        p.output(t);
    }
    let l = vec![0.2, 1.1, -0.5];
    let out = run(&p, &[("T", n as i64)], &[array("logits", &[3], l.clone())]);
    let z: f64 = l.iter().map(|x: &f64| x.exp()).sum();
    let probs: Vec<f64> = l.iter().map(|x| x.exp() / z).collect();
    let mut counts = [0usize; 3];
    for k in 0..n {
        let a = out[0][k] as usize;
        counts[a] += 1;
        assert!((out[1][k] - probs[a].ln()).abs() < 1e-12, "log-probability of action {a}");
    }
    for a in 0..3 {
        let f = counts[a] as f64 / n as f64;
        let sd = (probs[a] * (1.0 - probs[a]) / n as f64).sqrt();
        assert!((f - probs[a]).abs() < 4.0 * sd, "frequency {f} of action {a} against {}", probs[a]);
    }
    let want_entropy: f64 = -probs.iter().map(|q| q * q.ln()).sum::<f64>();
    close(&out[2], &[want_entropy], 1e-12, "entropy");
    // d/dlogits sum_k log p(a_k) = sum_k (onehot(a_k) - p).
    let want: Vec<f64> = (0..3).map(|a| counts[a] as f64 - n as f64 * probs[a]).collect();
    close(&out[3], &want, 1e-9, "gradient of the log-probabilities");
    let _ = Expr::splat(0.0, f64s(&[]));
}

/// REINFORCE on the artifact's trivial environment: `s[t+1] = clip(s[t] +
/// 0.1 a[t], -1, 1)`, reward `-|s[t+1]|`, a normal policy with mean
/// `w * s[t]`. The sampled actions are cut from the gradient, so the
/// states carry none back (no adjoint recurrence over the rollout): the
/// gradient is the policy-gradient estimate `sum_t G[t] d/dw log pi(a[t] |
/// s[t])`, checked against plain Rust on the same rollout.
#[test]
fn reinforce_gradient_on_the_trivial_environment() {
    let (b, t) = (4usize, 12usize);
    let mut p = Program::new();
    let bd = p.dim("b", "B");
    let td = p.dim("t", "T");
    let s0 = p.input("s0", &[&bd], f64s(&[]));
    let w = p.input("w", &[], f64s(&[]));
    let log_sigma = p.input("log_sigma", &[], f64s(&[]));
    let s = p.tensor("s", &[&bd, &td], f64s(&[]));
    let a = p.tensor("a", &[&bd, &td], f64s(&[]));
    let r = p.tensor("r", &[&bd, &td], f64s(&[]));
    p.define(&s, td.eq(0), s0.here());
    let moved = s.at_dims([(&td, &td - 1)]) + a.at_dims([(&td, &td - 1)]) * 0.1;
    let one = Expr::splat(1.0, f64s(&[]));
    p.otherwise(&s, moved.min(&one).max(&-&one));
    let policy = rl::normal(&(w.here() * s.here()), &log_sigma.here(), 3);
    p.otherwise(&a, policy.action.clone());
    let next = (s.here() + a.here() * 0.1).min(&one).max(&-&one);
    p.otherwise(&r, -next.abs());
    let g = rl::discounted_returns(&mut p, "G", &r, &td, 0.99, None);
    let loss = p.tensor("loss", &[&bd, &td], f64s(&[]));
    let log_prob = rl::normal_log_prob(&a.here(), &(w.here() * s.here()), &log_sigma.here());
    let log_prob = rl::total(&log_prob);
    p.otherwise(&loss, -(log_prob * g.here().stop_gradient()));
    let gw = p.grad("gw", &loss, &w);
    for x in [&s, &a, &g, &gw] {
        p.output(x);
    }
    let (w0, ls) = (0.3, -0.5f64);
    let starts = values(b, 9);
    let out = run(
        &p,
        &[("B", b as i64), ("T", t as i64)],
        &[array("s0", &[b], starts), array("w", &[], vec![w0]), array("log_sigma", &[], vec![ls])],
    );
    let (states, actions, returns) = (&out[0], &out[1], &out[2]);
    let sigma2 = (2.0 * ls).exp();
    let mut want = 0.0;
    for k in 0..b * t {
        // -G * d/dw log N(a; w s, sigma) = -G (a - w s) s / sigma^2
        want -= returns[k] * (actions[k] - w0 * states[k]) * states[k] / sigma2;
    }
    close(&out[3], &[want], 1e-9, "REINFORCE gradient");
}
