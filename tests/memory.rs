//! Memory tests: the store the compiler chooses for each tensor and the peak
//! bytes of live stores that the compiled code counts, for the examples of
//! the memory planner. These are deterministic counts, not timings; each
//! expected figure is written as its formula.

mod common;

use common::forward_then_backward;
use tempo::{Cond, Coordinate, Expr, Program, RunReport, Tensor, f32s, f64s};

fn report(p: &Program, bounds: &[(&str, i64)]) -> RunReport {
    report_at(p, bounds, 2)
}

/// [`report`] with the temporal optimizations of `level` (0: none, so the
/// stores are those of the program as written).
fn report_at(p: &Program, bounds: &[(&str, i64)], level: u8) -> RunReport {
    let mut runner = p.runner().seed(3).optimize(level);
    for (name, value) in bounds {
        runner = runner.bound(name, *value);
    }
    let (outputs, report) = runner.run_with_report().unwrap();
    assert!(!outputs.is_empty());
    report
}

fn kinds(report: &RunReport) -> Vec<(String, String)> {
    let memory = report.memory.as_ref().expect("compiled runs report memory");
    memory.stores.iter().map(|s| (s.tensor.clone(), s.kind.clone())).collect()
}

fn peak(report: &RunReport) -> u64 {
    let memory = report.memory.as_ref().expect("compiled runs report memory");
    assert_eq!(memory.live_store_bytes_at_exit, 0, "every store is freed");
    memory.peak_store_bytes
}

fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// x[t] random; s[t] = s[t-1] + x[t]; total = s[T-1].
fn cumulative_sum() -> Program {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.tensor("x", &[&t], f64s(&[]));
    p.otherwise(&x, Expr::random_uniform(11, f64s(&[])));
    let s = p.tensor("s", &[&t], f64s(&[]));
    p.define(&s, t.eq(0), x.here());
    p.otherwise(&s, s.at([&t - 1]) + x.here());
    let total = p.tensor("total", &[], f64s(&[]));
    p.otherwise(&total, s.at([t.bound() - 1]));
    p.output(&total);
    p
}

#[test]
fn cumulative_sum_runs_in_constant_memory() {
    let p = cumulative_sum();
    // x: one f64 point; s: a ring of 2 f64 points: 8 + 2 * 8 = 24 bytes at every T.
    for steps in [1, 1000, 1_000_000] {
        let r = report(&p, &[("T", steps)]);
        assert_eq!(kinds(&r), owned(&[("x", "point"), ("s", "ring<2>"), ("total", "output")]));
        assert_eq!(peak(&r), 8 + 2 * 8, "T = {steps}");
    }
}

/// Attention with d-dimensional keys and values over `0:t+1` or a window of `w`.
fn attention(d: i64, window: Option<i64>) -> Program {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[d]));
    let w = p.input("W", &[], f32s(&[d, d]));
    let k = p.tensor("k", &[&t], f32s(&[d]));
    let v = p.tensor("v", &[&t], f32s(&[d]));
    let o = p.tensor("o", &[&t], f32s(&[d]));
    p.define(&k, Cond::always(), w.here().matmul(&x.here()));
    p.define(&v, Cond::always(), x.here() * 0.5);
    let span = |tensor: &Tensor| match window {
        None => tensor.range(0, &t + 1),
        Some(n) => tensor.read_box([(&t, Coordinate::clamped(vec![0.into(), &t - (n - 1)], vec![&t + 1]))]),
    };
    let scores = span(&k).matmul(&x.here());
    p.define(&o, Cond::always(), scores.softmax().matmul(&span(&v)));
    p.output(&o);
    p
}

#[test]
fn windowed_attention_uses_one_window_sized_store_per_tensor() {
    let (d, w) = (16, 64);
    let p = attention(d, Some(w));
    // k and v: 2w slots of d f32 each: 2 * (2 * 64 * 16 * 4) = 16384 bytes, at any T.
    for steps in [100, 4096] {
        let r = report(&p, &[("T", steps)]);
        assert_eq!(
            kinds(&r),
            owned(&[("x", "input"), ("W", "input"), ("k", "window<64>"), ("v", "window<64>"), ("o", "output")])
        );
        assert_eq!(peak(&r), 2 * (2 * w as u64 * d as u64 * 4), "T = {steps}");
    }
}

#[test]
fn causal_attention_grows_its_key_and_value_stores_in_blocks() {
    let d = 16;
    let p = attention(d, None);
    // k and v are read through 0:t+1: blocks of B = 64 points (64 * d * 4
    // bytes = one 4 KiB page) are committed as t reaches them, so the peak
    // is 2 * ceil(T / B) * B * d * 4 bytes: it grows with T, by whole blocks.
    let block = 64u64;
    for steps in [1u64, 64, 65, 100, 1000, 4096, 4097] {
        let r = report(&p, &[("T", steps as i64)]);
        assert_eq!(
            kinds(&r),
            owned(&[("x", "input"), ("W", "input"), ("k", "blocks<64>"), ("v", "blocks<64>"), ("o", "output")])
        );
        assert_eq!(peak(&r), 2 * steps.div_ceil(block) * block * d as u64 * 4, "T = {steps}");
    }
    // At T = 4096 that is every point: 2 * T * d * 4.
    assert_eq!(peak(&report(&p, &[("T", 4096)])), 2 * 4096 * 16 * 4);
}

#[test]
fn stores_are_freed_after_their_last_reader() {
    // A chain of reversals: b reads a, c reads b, d reads c, each at
    // T - 1 - t, so a, b and c are stored in full. a is freed once b is
    // done, before c's store exists: at most two of the three are live.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let a = p.tensor("a", &[&t], f64s(&[4]));
    p.otherwise(&a, Expr::random_normal(1, f64s(&[4])));
    let b = p.tensor("b", &[&t], f64s(&[4]));
    p.otherwise(&b, a.at([t.bound() - 1 - t.var()]) * 2.0);
    let c = p.tensor("c", &[&t], f64s(&[4]));
    p.otherwise(&c, b.at([t.bound() - 1 - t.var()]) + 1.0);
    let d = p.tensor("d", &[&t], f64s(&[4]));
    p.otherwise(&d, c.at([t.bound() - 1 - t.var()]) - 1.0);
    p.output(&d);
    let steps = 100u64;
    let r = report(&p, &[("T", steps as i64)]);
    assert_eq!(kinds(&r), owned(&[("a", "full"), ("b", "full"), ("c", "full"), ("d", "output")]));
    // Two full stores of T points of 4 f64: 2 * T * 4 * 8 bytes (not 3 * ...).
    assert_eq!(peak(&r), 2 * steps * 4 * 8);
}

#[test]
fn layers_inside_time_keep_two_slices_of_layers() {
    // h[t, l] = tanh(h[t, l-1] + h[t-1, l]) over L layers at every step,
    // read only in its own t-outer, l-inner nest (g[t, l] = 2 h[t, l] is
    // the output): h keeps the slices of steps t and t-1, a ring of 2 along
    // t with every layer: 2 * L * 4 * 4 bytes, at any T.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let l = p.dim("l", "L");
    let x = p.input("x", &[&t], f32s(&[4]));
    let h = p.tensor("h", &[&t, &l], f32s(&[4]));
    p.define(&h, t.ge(1).and(l.ge(1)), (h.at([t.var(), &l - 1]) + h.at([&t - 1, l.var()])).tanh());
    p.otherwise(&h, x.at([t.var()]));
    let g = p.tensor("g", &[&t, &l], f32s(&[4]));
    p.otherwise(&g, h.here() * 2.0);
    p.output(&g);
    for steps in [5, 500] {
        let layers = 3u64;
        let r = report(&p, &[("T", steps), ("L", layers as i64)]);
        assert_eq!(kinds(&r), owned(&[("x", "input"), ("h", "ring<2> along t per l"), ("g", "output")]));
        assert_eq!(peak(&r), 2 * layers * 4 * 4, "T = {steps}");
    }
}

#[test]
fn batched_recurrences_keep_two_points_per_step() {
    // s[b, t] = s[b, t-1] + x[b, t] and total[b] = s[b, T-1], batch outer
    // and time inner: s is read at the present b, one step back along t, and
    // at its last point right after the t loop, so it keeps 2 points (an
    // inner ring), whatever B and T are: 2 * 3 * 8 bytes. (As written: -O2
    // vectorizes b, computing all sequences at once in batched points.)
    let mut p = Program::new();
    let b = p.dim("b", "B");
    let t = p.dim("t", "T");
    let x = p.input("x", &[&b, &t], f64s(&[3]));
    let s = p.tensor("s", &[&b, &t], f64s(&[3]));
    p.define(&s, t.eq(0), x.here());
    p.otherwise(&s, s.at([b.var(), &t - 1]) + x.here());
    let total = p.tensor("total", &[&b], f64s(&[3]));
    p.otherwise(&total, s.at([b.var(), t.bound() - 1]));
    p.output(&total);
    for (batch, steps) in [(2, 5), (7, 1000)] {
        let r = report_at(&p, &[("B", batch), ("T", steps)], 0);
        assert_eq!(kinds(&r), owned(&[("x", "input"), ("s", "ring<2> along t"), ("total", "output")]));
        assert_eq!(peak(&r), 2 * 3 * 8, "B = {batch}, T = {steps}");
    }
}

#[test]
fn independent_work_is_ordered_to_free_stores_early() {
    // Two independent chains over different dimensions: b[t] = a[T-1-t] and
    // d[u] = c[U-1-u] (a and c are stored in full, each read by one later
    // nest). Declared a, c, b, d; the scheduler runs b right after a (b is
    // a's last reader, so a is freed) before starting c: the peak is one
    // full store, not two.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let u = p.dim("u", "U");
    let a = p.tensor("a", &[&t], f64s(&[4]));
    p.otherwise(&a, Expr::random_normal(1, f64s(&[4])));
    let c = p.tensor("c", &[&u], f64s(&[4]));
    p.otherwise(&c, Expr::random_normal(2, f64s(&[4])));
    let b = p.tensor("b", &[&t], f64s(&[4]));
    p.otherwise(&b, a.at([t.bound() - 1 - t.var()]));
    let d = p.tensor("d", &[&u], f64s(&[4]));
    p.otherwise(&d, c.at([u.bound() - 1 - u.var()]));
    p.output(&b);
    p.output(&d);
    let (steps, other) = (100u64, 60u64);
    let r = report(&p, &[("T", steps as i64), ("U", other as i64)]);
    assert_eq!(kinds(&r), owned(&[("a", "full"), ("c", "full"), ("b", "output"), ("d", "output")]));
    assert_eq!(peak(&r), steps.max(other) * 4 * 8);
}

#[test]
fn suffixes_of_a_backward_loop_grow_in_blocks_from_the_end() {
    // r[t] random, made in the backward loop that reads it through suffixes:
    // g[t] = sum(r[t:T]). r grows block by block from T-1 down: blocks of
    // B = 512 f64 points (one 4 KiB page): ceil(T/B) * B * 8 bytes.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let r = p.tensor("r", &[&t], f64s(&[]));
    p.otherwise(&r, Expr::random_uniform(5, f64s(&[])));
    let g = p.tensor("g", &[&t], f64s(&[]));
    p.otherwise(&g, r.range(t.var(), t.bound()).sum(0));
    p.output(&g);
    for steps in [1u64, 100, 512, 513, 3000] {
        let r = report(&p, &[("T", steps as i64)]);
        assert_eq!(kinds(&r), owned(&[("r", "blocks<512>"), ("g", "output")]));
        assert_eq!(peak(&r), steps.div_ceil(512) * 512 * 8, "T = {steps}");
    }
}

/// A layered decoder's attention with layers as a dimension: h[t, l] is
/// x0 at the first point, tanh of the last layer's output of step t-1 at
/// the first layer, the previous layer's output otherwise; keys
/// `k = W[l] h[t, l]` over `(l, t)` (or `(t, l)` with `keys_time_first`),
/// read per layer through `0:t+1` or a window of `w`; `o[t, l]` attends
/// over them. The recurrence through `o[t-1, L-1]` puts `t` outside `l`.
fn layered_attention(d: i64, window: Option<i64>, keys_time_first: bool) -> Program {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let l = p.dim("l", "L");
    let x0 = p.input("x0", &[], f32s(&[d]));
    let w = p.input("W", &[&l], f32s(&[d, d]));
    let h = p.tensor("h", &[&t, &l], f32s(&[d]));
    let key_domain = if keys_time_first { [&t, &l] } else { [&l, &t] };
    let k = p.tensor("k", &key_domain, f32s(&[d]));
    let o = p.tensor("o", &[&t, &l], f32s(&[d]));
    p.define(&h, t.eq(0).and(l.eq(0)), x0.here());
    p.define(&h, l.eq(0), o.at([&t - 1, l.bound() - 1]).tanh());
    p.otherwise(&h, o.at([t.var(), &l - 1]));
    p.define(&k, Cond::always(), w.here().matmul(&h.here()));
    let span = match window {
        None => k.read_box([(&t, Coordinate::range(0, &t + 1))]),
        Some(n) => k.read_box([(&t, Coordinate::clamped(vec![0.into(), &t - (n - 1)], vec![&t + 1]))]),
    };
    let scores = span.matmul(&h.here());
    p.define(&o, Cond::always(), scores.softmax().matmul(&span));
    p.output(&o);
    p
}

#[test]
fn layered_window_attention_keeps_one_window_per_layer() {
    // k is read at k[l, max(0, t-w+1):t+1] in loops t then l: a window of w
    // along t for every layer, 2 * w * L points of d f32, plus one point of
    // h: 2 * w * L * d * 4 + d * 4 bytes, at any T.
    let (d, w, layers) = (16u64, 8u64, 3u64);
    for keys_time_first in [false, true] {
        let p = layered_attention(d as i64, Some(w as i64), keys_time_first);
        for steps in [5, 40, 300] {
            let r = report(&p, &[("T", steps), ("L", layers as i64)]);
            assert_eq!(
                kinds(&r),
                owned(&[
                    ("x0", "input"),
                    ("W", "input"),
                    ("h", "point"),
                    ("k", "window<8> along t per l"),
                    ("o", "output")
                ])
            );
            assert_eq!(peak(&r), 2 * w * layers * d * 4 + d * 4, "T = {steps}, keys over (t, l): {keys_time_first}");
        }
    }
}

#[test]
fn layered_causal_attention_grows_blocks_per_layer() {
    // k is read at k[l, 0:t+1]: blocks of B = 64 points (64 * d * 4 bytes =
    // one page) along t, per layer: L * ceil(T / B) * B * d * 4 bytes, plus
    // one point of h.
    let (d, layers, block) = (16u64, 3u64, 64u64);
    for keys_time_first in [false, true] {
        let p = layered_attention(d as i64, None, keys_time_first);
        for steps in [1u64, 64, 65, 200] {
            let r = report(&p, &[("T", steps as i64), ("L", layers as i64)]);
            assert_eq!(
                kinds(&r),
                owned(&[
                    ("x0", "input"),
                    ("W", "input"),
                    ("h", "point"),
                    ("k", "blocks<64> along t per l"),
                    ("o", "output")
                ])
            );
            let expected = layers * steps.div_ceil(block) * block * d * 4 + d * 4;
            assert_eq!(peak(&r), expected, "T = {steps}, keys over (t, l): {keys_time_first}");
        }
    }
}

#[test]
fn prefixes_inside_an_outer_loop_reuse_one_slice_of_blocks() {
    // s[b, t] random, g[b, t] = sum(s[b, 0:t+1]), total[b] = g[b, T-1] + the
    // previous total (which puts b outside t): s is read at the present b,
    // through prefixes along t, so one slice of blocks serves every b:
    // ceil(T / B) * B * 8 bytes (B = 512 f64 points, a page), whatever B is.
    // (Written as is: -O2 would lift the prefix sums into a recurrence.)
    let mut p = Program::new();
    let b = p.dim("b", "NB");
    let t = p.dim("t", "T");
    let s = p.tensor("s", &[&b, &t], f64s(&[]));
    p.otherwise(&s, Expr::random_uniform(9, f64s(&[])));
    let total = p.tensor("total", &[&b], f64s(&[]));
    let g = p.tensor("g", &[&b, &t], f64s(&[]));
    p.define(&g, b.eq(0), s.read_box([(&t, Coordinate::range(0, &t + 1))]).sum(0));
    p.otherwise(&g, s.read_box([(&t, Coordinate::range(0, &t + 1))]).sum(0) + total.at([&b - 1]));
    p.define(&total, Cond::always(), g.at([b.var(), t.bound() - 1]));
    p.output(&total);
    for (batch, steps) in [(1u64, 10u64), (4, 700), (9, 1500)] {
        let r = report_at(&p, &[("NB", batch as i64), ("T", steps as i64)], 0);
        let written = kinds(&r);
        assert_eq!(written[0], ("s".to_string(), "blocks<512> along t".to_string()), "{written:?}");
        let g_bytes = 8; // g: a ring of 1 along t (read at g[b, T-1] right after the run)
        assert_eq!(peak(&r), steps.div_ceil(512) * 512 * 8 + g_bytes, "NB = {batch}, T = {steps}");
        // Optimized, the prefix sums are a running sum: a ring of 2 points
        // along t replaces the blocks, and s is consumed where it is made
        // (one point): 2 * 8 + 8 + 8 bytes.
        let lifted = report(&p, &[("NB", batch as i64), ("T", steps as i64)]);
        assert!(
            kinds(&lifted).contains(&("s_prefix_sum".to_string(), "ring<2> along t".to_string())),
            "{:?}",
            kinds(&lifted)
        );
        assert_eq!(peak(&lifted), 2 * 8 + 8 + g_bytes, "NB = {batch}, T = {steps}, optimized");
    }
}

#[test]
fn a_memory_budget_swaps_what_the_backward_loop_reads_and_keeps_results() {
    let p = forward_then_backward();
    let budget = 100_000;
    for steps in [20_000i64, 80_000] {
        let (kept, kept_report) = p.runner().seed(3).bound("I", 2).bound("T", steps).run_with_report().unwrap();
        let (swapped, report) =
            p.runner().seed(3).bound("I", 2).bound("T", steps).memory_budget(budget).run_with_report().unwrap();
        assert_eq!(kept, swapped, "swapping is exact (T = {steps})");
        // Without a budget every point of x is kept; with it, blocks of
        // 1024 points (16 KiB) are spilled to a file as the forward loop
        // passes them and reloaded one at a time by the backward loop: one
        // block of x, two more as the forward loop writes, whatever T is.
        assert_eq!(peak(&kept_report), steps as u64 * 16 + 2 * 16, "T = {steps}");
        let x = kinds(&report).into_iter().find(|(t, _)| t == "x").unwrap().1;
        assert_eq!(x, "blocks<1024> along t, swapped to a file");
        assert_eq!(peak(&report), 2 * 1024 * 16 + 2 * 16, "T = {steps}");
    }
}

/// The swap plan is the compiled code's: made once at compile time, at
/// the compile's bounds (as the lowering made it), and reported by every
/// run whatever its bounds. A run at bounds where no swap would be planned
/// still runs (and reports) the compiled plan, and every run agrees with
/// the program run without a budget.
#[test]
fn the_swap_plan_is_the_compiled_one_at_every_run() {
    let p = forward_then_backward();
    let budget = 100_000;
    let compiled = p.runner().seed(3).bound("I", 2).bound("T", 20_000).memory_budget(budget).compile().unwrap();
    for steps in [100i64, 20_000, 50_000] {
        let kept = p.runner().seed(3).bound("I", 2).bound("T", steps).run().unwrap();
        let (swapped, report) = compiled.run_with_report(&[("I", 2), ("T", steps)], &[], Some(3)).unwrap();
        assert_eq!(kept, swapped, "swapping is exact (T = {steps})");
        let x = kinds(&report).into_iter().find(|(t, _)| t == "x").unwrap().1;
        assert_eq!(x, "blocks<1024> along t, swapped to a file", "T = {steps}");
        // Resident: two blocks of 16-byte points, or the whole store where
        // it is smaller (T = 100: one block, 1024 points).
        let resident = (2 * 1024 * 16).min((steps as u64).div_ceil(1024) * 1024 * 16);
        assert_eq!(peak(&report), resident + 2 * 16, "T = {steps}");
    }
}
