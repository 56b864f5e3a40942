//! Training runs as one program: parameters are recurrent tensors over an
//! iteration dimension `i`, updated from the gradient of the previous
//! iteration's loss (`tempo::optim`), with each iteration's forward and
//! backward pass over `t` inside. Checked: the loss falls below a stated
//! threshold, compiled and interpreted agree (1e-9 relative), and for a
//! linear model the parameters follow a reference implementation of each
//! optimizer written here in plain Rust (for an RNN trained by
//! back-propagation through time, each iteration's loss does).

use tempo::optim::{self, Adam};
use tempo::{Data, ElementType, Expr, HostArray, Program, Tensor, f64s};

const SEED: u64 = 3;

fn values(array: &HostArray) -> &[f64] {
    match &array.data {
        Data::F64(v) => v,
        other => panic!("'{}' is not f64: {:?}", array.name, other.element()),
    }
}

/// Runs `p` compiled and interpreted at `bounds` (seeded inputs); they must
/// agree within 1e-9 relative. Returns the interpreted outputs.
fn run_both(p: &Program, bounds: &[(&str, i64)]) -> Vec<HostArray> {
    let runner = || bounds.iter().fold(p.runner().seed(SEED), |r, (name, value)| r.bound(name, *value));
    let interpreted = runner().interpret().unwrap_or_else(|e| panic!("interpreted: {e}"));
    let compiled = runner().run().unwrap_or_else(|e| panic!("compiled: {e}"));
    for (i, c) in interpreted.iter().zip(&compiled) {
        assert_eq!(i.shape, c.shape);
        for (k, (&x, &y)) in values(i).iter().zip(values(c)).enumerate() {
            let close = x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs());
            assert!(close, "'{}'[{k}]: interpreted {x}, compiled {y}", i.name);
        }
    }
    interpreted
}

/// The loss of each iteration: `loss[i, t]` summed over `t`.
fn per_iteration(loss: &HostArray) -> Vec<f64> {
    let steps = loss.shape[1];
    values(loss).chunks(steps).map(|c| c.iter().sum()).collect()
}

fn random(name: &str, shape: Vec<usize>) -> Vec<f64> {
    values(&HostArray::random(name, shape, ElementType::F64, SEED)).to_vec()
}

#[derive(Clone, Copy, Debug)]
enum Optimizer {
    Sgd { lr: f64 },
    Momentum { lr: f64, momentum: f64 },
    Adam(Adam),
}

/// Declares the parameter's branches with `optimizer`.
fn optimize(p: &mut Program, optimizer: Optimizer, param: &Tensor, grad: &Tensor, i: &tempo::Dim, init: Expr) {
    match optimizer {
        Optimizer::Sgd { lr } => optim::sgd(p, param, grad, i, init, lr),
        Optimizer::Momentum { lr, momentum } => {
            optim::sgd_momentum(p, param, grad, i, init, lr, momentum);
        }
        Optimizer::Adam(config) => {
            optim::adam(p, param, grad, i, init, &config);
        }
    }
}

const TRUTH: [f64; 3] = [1.0, -2.0, 0.5];

/// Linear regression: `loss[i, t] = (x[t] . w[i] - x[t] . TRUTH)^2`, `w`
/// trained by `optimizer` from `w0`. Outputs the loss and `w`.
fn linear_regression(optimizer: Optimizer) -> Program {
    let mut p = Program::new();
    let i = p.dim("i", "I");
    let t = p.dim("t", "T");
    let w0 = p.input("w0", &[], f64s(&[3]));
    let x = p.input("x", &[&t], f64s(&[3]));
    let w = p.tensor("w", &[&i], f64s(&[3]));
    let loss = p.tensor("loss", &[&i, &t], f64s(&[]));
    let truth = Expr::constant(TRUTH.to_vec(), f64s(&[3]));
    let error = ((w.here() - truth) * x.here()).sum(0);
    p.otherwise(&loss, &error * &error);
    let g = p.grad("g", &loss, &w);
    optimize(&mut p, optimizer, &w, &g, &i, w0.here());
    p.output(&loss);
    p.output(&w);
    p
}

/// The same training in plain Rust: the parameters of each iteration.
fn linear_regression_reference(optimizer: Optimizer, iterations: usize, steps: usize) -> Vec<[f64; 3]> {
    let x = random("x", vec![steps, 3]);
    let mut w: [f64; 3] = random("w0", vec![3]).try_into().unwrap();
    let gradient = |w: &[f64; 3]| {
        let mut g = [0.0; 3];
        for row in x.chunks(3) {
            let error: f64 = (0..3).map(|k| (w[k] - TRUTH[k]) * row[k]).sum();
            for k in 0..3 {
                g[k] += 2.0 * error * row[k];
            }
        }
        g
    };
    let (mut m, mut v, mut p1, mut p2) = ([0.0; 3], [0.0; 3], 1.0, 1.0);
    let mut out = Vec::new();
    for iteration in 0..iterations {
        out.push(w);
        let g = gradient(&w);
        match optimizer {
            Optimizer::Sgd { lr } => (0..3).for_each(|k| w[k] -= lr * g[k]),
            Optimizer::Momentum { lr, momentum } => {
                for k in 0..3 {
                    v[k] = if iteration == 0 { g[k] } else { momentum * v[k] + g[k] };
                    w[k] -= lr * v[k];
                }
            }
            Optimizer::Adam(Adam { lr, beta1, beta2, eps, weight_decay }) => {
                p1 *= beta1;
                p2 *= beta2;
                for k in 0..3 {
                    m[k] = beta1 * m[k] + (1.0 - beta1) * g[k];
                    v[k] = beta2 * v[k] + (1.0 - beta2) * g[k] * g[k];
                    let (m_hat, v_hat) = (m[k] / (1.0 - p1), v[k] / (1.0 - p2));
                    w[k] -= lr * (m_hat / (v_hat.sqrt() + eps) + weight_decay * w[k]);
                }
            }
        }
    }
    out
}

/// Trains the linear model with `optimizer`; checks the parameters against
/// the reference and that the loss falls below `threshold`. Returns the
/// loss of each iteration.
fn check_linear(optimizer: Optimizer, iterations: usize, threshold: f64) -> Vec<f64> {
    const STEPS: usize = 8;
    let p = linear_regression(optimizer);
    let out = run_both(&p, &[("I", iterations as i64), ("T", STEPS as i64)]);
    let losses = per_iteration(&out[0]);
    let reference = linear_regression_reference(optimizer, iterations, STEPS);
    for (iteration, want) in reference.iter().enumerate() {
        for k in 0..3 {
            let got = values(&out[1])[iteration * 3 + k];
            let close = (got - want[k]).abs() <= 1e-9 * want[k].abs().max(1.0);
            assert!(close, "{optimizer:?}: w[{iteration}][{k}] = {got}, reference {}", want[k]);
        }
    }
    let last = *losses.last().unwrap();
    eprintln!("{optimizer:?}: loss {:.3e} -> {last:.3e} in {iterations} iterations", losses[0]);
    assert!(last < threshold, "{optimizer:?}: final loss {last} (from {}), want below {threshold}", losses[0]);
    losses
}

#[test]
fn linear_regression_with_sgd() {
    let losses = check_linear(Optimizer::Sgd { lr: 0.08 }, 100, 1e-10);
    assert!(losses.windows(2).all(|w| w[1] < w[0]), "{losses:?}");
}

#[test]
fn linear_regression_with_momentum() {
    check_linear(Optimizer::Momentum { lr: 0.02, momentum: 0.8 }, 100, 1e-7);
}

#[test]
fn linear_regression_with_adam_and_adamw() {
    check_linear(Optimizer::Adam(Adam::with_lr(0.1)), 80, 1e-3);
    let adamw = Adam { weight_decay: 0.01, ..Adam::with_lr(0.1) };
    check_linear(Optimizer::Adam(adamw), 80, 5e-2);
}

/// `optim::adam_epochs`: a linear model trained for `I` iterations of `K`
/// epochs each, with a proximal term to the iteration's start (as PPO's
/// ratio reads the rollout's policy): `anchor[i, t] = x[t] . w[i]` (`w`
/// the parameters at the start, epoch 0's), computed once per iteration
/// over `t` as a rollout is, and `loss_k[i, t] = (x[t] . (w_k[i] -
/// TRUTH))^2 + MU (x[t] . w_k[i] - anchor[i, t])^2` (the anchor a constant
/// of the gradient). The parameters follow Adam over the `I K` updates in
/// order, in plain Rust: `w_k[i]` is the parameter before update
/// `i K + k`. Compiled and interpreted agree; with one epoch the
/// parameters are those of `optim::adam` (the proximal term is then zero).
#[test]
fn linear_regression_with_adam_over_epochs() {
    const MU: f64 = 0.5;
    const STEPS: usize = 8;
    let config = Adam::with_lr(0.1);
    for (iterations, epochs) in [(10usize, 3usize), (12, 1)] {
        let mut p = Program::new();
        let i = p.dim("i", "I");
        let t = p.dim("t", "T");
        let w0 = p.input("w0", &[], f64s(&[3]));
        let x = p.input("x", &[&t], f64s(&[3]));
        let params: Vec<Tensor> = (0..epochs)
            .map(|k| p.tensor(&if k == 0 { "w".to_string() } else { format!("w_{k}") }, &[&i], f64s(&[3])))
            .collect();
        let anchor = p.tensor("anchor", &[&i, &t], f64s(&[]));
        p.otherwise(&anchor, (params[0].here() * x.here()).sum(0));
        let grads: Vec<Tensor> = params
            .iter()
            .map(|w| {
                let loss = p.tensor(&format!("loss_{}", w.name()), &[&i, &t], f64s(&[]));
                let truth = Expr::constant(TRUTH.to_vec(), f64s(&[3]));
                let error = ((w.here() - truth) * x.here()).sum(0);
                let drift = (w.here() * x.here()).sum(0) - anchor.here().stop_gradient();
                p.otherwise(&loss, &error * &error + &drift * &drift * MU);
                p.grad(&format!("g_{}", w.name()), &loss, w)
            })
            .collect();
        optim::adam_epochs(&mut p, &params, &grads, &i, w0.here(), &config);
        params.iter().for_each(|w| p.output(w));
        let out = run_both(&p, &[("I", iterations as i64), ("T", STEPS as i64)]);

        // The reference: Adam over the updates in order.
        let x = random("x", vec![STEPS, 3]);
        let mut current: [f64; 3] = random("w0", vec![3]).try_into().unwrap();
        let (mut m, mut v, mut p1, mut p2) = ([0.0; 3], [0.0; 3], 1.0, 1.0);
        for iteration in 0..iterations {
            let anchor = current;
            for (epoch, got) in out.iter().enumerate() {
                for k in 0..3 {
                    let got = values(got)[iteration * 3 + k];
                    let close = (got - current[k]).abs() <= 1e-9 * current[k].abs().max(1.0);
                    assert!(close, "w_{epoch}[{iteration}][{k}] = {got}, reference {}", current[k]);
                }
                let mut g = [0.0; 3];
                for row in x.chunks(3) {
                    let error: f64 = (0..3).map(|k| (current[k] - TRUTH[k]) * row[k]).sum();
                    let drift: f64 = (0..3).map(|k| (current[k] - anchor[k]) * row[k]).sum();
                    for k in 0..3 {
                        g[k] += 2.0 * error * row[k] + 2.0 * MU * drift * row[k];
                    }
                }
                p1 *= config.beta1;
                p2 *= config.beta2;
                for k in 0..3 {
                    m[k] = config.beta1 * m[k] + (1.0 - config.beta1) * g[k];
                    v[k] = config.beta2 * v[k] + (1.0 - config.beta2) * g[k] * g[k];
                    let (m_hat, v_hat) = (m[k] / (1.0 - p1), v[k] / (1.0 - p2));
                    current[k] -= config.lr * m_hat / (v_hat.sqrt() + config.eps);
                }
            }
        }
        if epochs == 1 {
            // The same parameters as optim::adam's, bit for bit.
            let plain = linear_regression(Optimizer::Adam(config));
            let plain = plain.runner().seed(SEED).bound("I", iterations as i64).bound("T", STEPS as i64);
            assert_eq!(
                values(&plain.interpret().unwrap()[1]),
                values(&out[0]),
                "adam_epochs with one epoch against adam"
            );
        }
    }
}

/// A tiny MLP, `pred = w2 . tanh(w1 x + b1)`, fitted to
/// `y = sin(2 x0) x1 + 0.5 x0` over `T` samples, every parameter trained by
/// `optimizer`.
fn mlp(optimizer: Optimizer) -> Program {
    const H: i64 = 8;
    let mut p = Program::new();
    let i = p.dim("i", "I");
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f64s(&[2]));
    let init = [("w1", vec![H, 2]), ("b1", vec![H]), ("w2", vec![H])];
    let params: Vec<(Tensor, Tensor)> = init
        .iter()
        .map(|(name, shape)| (p.input(&format!("{name}_init"), &[], f64s(shape)), p.tensor(name, &[&i], f64s(shape))))
        .collect();
    let (w1, b1, w2) = (&params[0].1, &params[1].1, &params[2].1);
    let y = p.tensor("y", &[&t], f64s(&[]));
    let x0 = x.here().slice(&[0], &[1]).reshape(&[]);
    let x1 = x.here().slice(&[1], &[1]).reshape(&[]);
    p.otherwise(&y, (&x0 * 2.0).sin() * x1 + x0 * 0.5);
    let loss = p.tensor("loss", &[&i, &t], f64s(&[]));
    let hidden = (w1.here().matmul(&x.here()) + b1.here()).tanh();
    let error = (w2.here() * hidden).sum(0) - y.here();
    p.otherwise(&loss, &error * &error);
    for (init, param) in &params {
        let g = p.grad(&format!("g_{}", param.name()), &loss, param);
        optimize(&mut p, optimizer, param, &g, &i, init.here() * 0.5);
    }
    p.output(&loss);
    p
}

fn check_mlp(optimizer: Optimizer, iterations: i64, ratio: f64) {
    let out = run_both(&mlp(optimizer), &[("I", iterations), ("T", 16)]);
    let losses = per_iteration(&out[0]);
    let (first, last) = (losses[0], *losses.last().unwrap());
    eprintln!("MLP {optimizer:?}: loss {first:.3e} -> {last:.3e} in {iterations} iterations");
    assert!(last < ratio * first, "MLP {optimizer:?}: loss {first} -> {last}, want below {ratio} of the first");
}

#[test]
fn mlp_with_sgd() {
    check_mlp(Optimizer::Sgd { lr: 0.03 }, 300, 0.1);
}

#[test]
fn mlp_with_momentum() {
    check_mlp(Optimizer::Momentum { lr: 0.01, momentum: 0.9 }, 150, 0.1);
}

#[test]
fn mlp_with_adam() {
    check_mlp(Optimizer::Adam(Adam::with_lr(0.03)), 150, 0.05);
}

/// A recurrent model trained by back-propagation through time inside the
/// iteration loop: `h[i, t] = tanh(wh[i] h[i, t-1] + wx[i] x[t])`,
/// predicting `x[t+1]` as `v[i] . h[i, t]`, trained with Adam. The
/// schedule is a loop over `i` around each iteration's forward loop over
/// `t` and its backward one (the cycle through the updates is carried by
/// `i` alone). Each iteration's loss follows a plain Rust implementation
/// (forward, back-propagation through time by hand, Adam).
#[test]
fn rnn_with_adam() {
    const ITERATIONS: usize = 120;
    const STEPS: usize = 12;
    let out = run_both(&rnn_program(), &[("I", ITERATIONS as i64), ("T", STEPS as i64)]);
    let losses = per_iteration(&out[0]);
    let reference = rnn_reference(ITERATIONS, STEPS);
    for (k, (&got, &want)) in losses.iter().zip(&reference).enumerate() {
        assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "iteration {k}: loss {got}, reference {want}");
    }
    let (first, last) = (losses[0], *losses.last().unwrap());
    eprintln!("RNN Adam: loss {first:.3e} -> {last:.3e} in {ITERATIONS} iterations");
    assert!(last < 0.1 * first, "RNN: loss {first} -> {last}, want below 10% of the first");
}

const RNN_HIDDEN: usize = 4;
const RNN_LR: f64 = 0.05;

fn rnn_program() -> Program {
    const H: i64 = RNN_HIDDEN as i64;
    let mut p = Program::new();
    let i = p.dim("i", "I");
    let t = p.dim("t", "T");
    let x = p.tensor("x", &[&t], f64s(&[]));
    // A sequence to predict: x[t] = sin(0.7 t) as a rotation recurrence.
    let phase = p.tensor("phase", &[&t], f64s(&[2]));
    p.define(&phase, t.eq(0), Expr::constant(vec![0.0, 1.0], f64s(&[2])));
    let (c, s) = (0.7f64.cos(), 0.7f64.sin());
    let rotation = Expr::constant(vec![c, s, -s, c], f64s(&[2, 2]));
    p.otherwise(&phase, rotation.matmul(&phase.at([&t - 1])));
    p.otherwise(&x, phase.here().slice(&[0], &[1]).reshape(&[]));
    let shapes = [("wh", vec![H, H]), ("wx", vec![H]), ("v", vec![H])];
    let params: Vec<(Tensor, Tensor)> = shapes
        .iter()
        .map(|(name, shape)| (p.input(&format!("{name}_init"), &[], f64s(shape)), p.tensor(name, &[&i], f64s(shape))))
        .collect();
    let (wh, wx, v) = (&params[0].1, &params[1].1, &params[2].1);
    let h = p.tensor("h", &[&i, &t], f64s(&[H]));
    p.define(&h, t.eq(0), (wx.here() * x.here()).tanh());
    p.otherwise(&h, (wh.here().matmul(&h.at_dims([(&t, &t - 1)])) + wx.here() * x.here()).tanh());
    let loss = p.tensor("loss", &[&i, &t], f64s(&[]));
    p.define(&loss, t.eq(t.bound() - 1), Expr::splat(0.0, f64s(&[])));
    let error = (v.here() * h.here()).sum(0) - x.at([&t + 1]);
    p.otherwise(&loss, &error * &error);
    for (init, param) in &params {
        let g = p.grad(&format!("g_{}", param.name()), &loss, param);
        optim::adam(&mut p, param, &g, &i, init.here() * 0.5, &Adam::with_lr(RNN_LR));
    }
    p.output(&loss);
    p
}

/// [`rnn_program`]'s training in plain Rust: the loss of each iteration.
fn rnn_reference(iterations: usize, steps: usize) -> Vec<f64> {
    const H: usize = RNN_HIDDEN;
    let (c, s) = (0.7f64.cos(), 0.7f64.sin());
    let mut phase = [0.0, 1.0];
    let mut x = Vec::new();
    for _ in 0..steps {
        x.push(phase[0]);
        phase = [c * phase[0] + s * phase[1], -s * phase[0] + c * phase[1]];
    }
    let half = |name: &str, shape: Vec<usize>| -> Vec<f64> { random(name, shape).iter().map(|v| v * 0.5).collect() };
    // Parameters flattened: wh (H x H, row-major), wx, v.
    let mut w = [half("wh_init", vec![H, H]), half("wx_init", vec![H]), half("v_init", vec![H])].concat();
    let n = w.len();
    let (mut m, mut v2, mut p1, mut p2) = (vec![0.0; n], vec![0.0; n], 1.0, 1.0);
    let Adam { beta1, beta2, eps, .. } = Adam::with_lr(RNN_LR);
    let mut losses = Vec::new();
    for _ in 0..iterations {
        let (wh, wx, v) = (&w[..H * H], &w[H * H..H * H + H], &w[H * H + H..]);
        // Forward.
        let mut hs: Vec<[f64; H]> = Vec::new();
        for t in 0..steps {
            let mut h = [0.0; H];
            for j in 0..H {
                let recurrent =
                    if t == 0 { None } else { Some((0..H).fold(0.0, |a, k| a + wh[j * H + k] * hs[t - 1][k])) };
                h[j] = match recurrent {
                    None => (wx[j] * x[t]).tanh(),
                    Some(r) => (r + wx[j] * x[t]).tanh(),
                };
            }
            hs.push(h);
        }
        let errors: Vec<f64> =
            (0..steps - 1).map(|t| (0..H).fold(0.0, |a, k| a + v[k] * hs[t][k]) - x[t + 1]).collect();
        losses.push(errors.iter().map(|e| e * e).sum::<f64>());
        // Back-propagation through time.
        let mut g = vec![0.0; n];
        let mut dh = [0.0; H];
        for t in (0..steps).rev() {
            if t < steps - 1 {
                for k in 0..H {
                    g[H * H + H + k] += 2.0 * errors[t] * hs[t][k];
                    dh[k] += 2.0 * errors[t] * v[k];
                }
            }
            let da: Vec<f64> = (0..H).map(|j| dh[j] * (1.0 - hs[t][j] * hs[t][j])).collect();
            let mut previous = [0.0; H];
            for j in 0..H {
                g[H * H + j] += da[j] * x[t];
                if t > 0 {
                    for k in 0..H {
                        g[j * H + k] += da[j] * hs[t - 1][k];
                        previous[k] += wh[j * H + k] * da[j];
                    }
                }
            }
            dh = previous;
        }
        // Adam.
        p1 *= beta1;
        p2 *= beta2;
        for k in 0..n {
            m[k] = beta1 * m[k] + (1.0 - beta1) * g[k];
            v2[k] = beta2 * v2[k] + (1.0 - beta2) * g[k] * g[k];
            let (m_hat, v_hat) = (m[k] / (1.0 - p1), v2[k] / (1.0 - p2));
            w[k] -= RNN_LR * (m_hat / (v_hat.sqrt() + eps));
        }
    }
    losses
}
