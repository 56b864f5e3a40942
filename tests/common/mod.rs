//! Programs more than one integration test runs.

use tempo::{Expr, Index, Program, f32s};

/// Back-propagation through time's pattern: x[i, t] (4 f32) is a forward
/// recurrence, y[i, t] a backward one reading x[i, t], z[i] = y[i, 0]
/// starts the next iteration's x. Every point of x waits for the backward
/// loop: T * 16 bytes.
#[allow(dead_code)]
pub fn forward_then_backward() -> Program {
    let mut p = Program::new();
    let i = p.dim("i", "I");
    let t = p.dim("t", "T");
    let x = p.tensor("x", &[&i, &t], f32s(&[4]));
    let y = p.tensor("y", &[&i, &t], f32s(&[4]));
    let z = p.tensor("z", &[&i], f32s(&[4]));
    p.define(&x, i.eq(0).and(t.eq(0)), Expr::random_uniform(5, f32s(&[4])));
    p.define(&x, t.eq(0), z.at([&i - 1]));
    let previous = x.at_dims([(&t, &t - 1)]) * 0.999;
    p.otherwise(&x, previous.clone() + 0.25 - previous.sin());
    p.define(&y, t.eq(t.bound() - 1), x.here());
    p.otherwise(&y, y.at_dims([(&t, &t + 1)]) * 0.5 + x.here().tanh());
    p.otherwise(&z, y.at_dims([(&t, Index::from(0))]));
    p.output(&z);
    p
}

/// An RNN: h[t] = tanh(h[t-1] w + x[t]) with x[t] and h[t] of `width`
/// f32 elements, w a `width x width` weight; h is the output.
#[allow(dead_code)]
pub fn rnn(width: i64) -> Program {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[width]));
    let w = p.input("w", &[], f32s(&[width, width]));
    let h = p.tensor("h", &[&t], f32s(&[width]));
    p.define(&h, t.eq(0), x.here().tanh());
    p.otherwise(&h, (h.at([&t - 1]).matmul(&w.here()) + x.here()).tanh());
    p.output(&h);
    p
}
