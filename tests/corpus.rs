//! The hand-written corpus, Rust API part: small programs that each cover
//! index forms, ops, condition kinds or multi-dimension cases. Every one is
//! compiled and run, interpreted by the reference interpreter, and the two
//! results compared (bit-exact for integers and booleans, relative 1e-4
//! for floats), at two sets of bounds.
//!
//! The MLIR-text part of the corpus is `examples/corpus/` and the bundled
//! `examples/*.mlir`, run by `tools/tests/end_to_end`.

use tempo::{Cond, Coordinate, ElementType, Expr, PointType, Predicate, Program, f32s, f64s, i32s, i64s};

/// Compiles and interprets `p` at each set of bounds; the results must agree.
fn agree(p: &Program, bounds: &[&[(&str, i64)]]) {
    for set in bounds {
        let runner = || {
            let mut r = p.runner().seed(7);
            for (name, value) in set.iter() {
                r = r.bound(name, *value);
            }
            r
        };
        let compiled = runner().run().unwrap_or_else(|e| panic!("compiled run at {set:?}: {e}"));
        let interpreted = runner().interpret().unwrap_or_else(|e| panic!("interpreted at {set:?}: {e}"));
        assert_eq!(compiled.len(), interpreted.len());
        for (c, i) in compiled.iter().zip(&interpreted) {
            assert_eq!(c.shape, i.shape, "shape of '{}' at {set:?}", c.name);
            assert_eq!(c.data.element(), i.data.element());
            match c.data.element() {
                ElementType::F32 | ElementType::F64 => {
                    for k in 0..c.data.len() {
                        let (x, y) = (c.data.get_f64(k), i.data.get_f64(k));
                        let close = (x - y).abs() <= 1e-4 * (1.0 + y.abs()) || (x.is_nan() && y.is_nan());
                        assert!(close, "'{}'[{k}] at {set:?}: compiled {x}, interpreted {y}", c.name);
                    }
                }
                _ => assert_eq!(c.data, i.data, "'{}' at {set:?}", c.name),
            }
        }
    }
}

const SHORT_AND_LONG: &[&[(&str, i64)]] = &[&[("T", 1)], &[("T", 13)]];

#[test]
fn lookahead_clamped_with_min() {
    // y[t] = x[min(t + 3, T - 1)] - x[max(0, t - 2)]
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[3]));
    let y = p.tensor("y", &[&t], f32s(&[3]));
    let ahead = x.read_box([(&t, Coordinate::min(&t + 3, t.bound() - 1))]);
    let behind = x.read_box([(&t, Coordinate::max(&t - 2, 0))]);
    p.otherwise(&y, ahead - behind);
    p.output(&y);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn clamped_reads_of_a_computed_recurrence() {
    // z[t] = 1 + z[t - 1]; w[t] = z[min(t + 1, T - 1)] * z[max(t - 3, 0)]
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let z = p.tensor("z", &[&t], i64s(&[]));
    p.define(&z, t.eq(0), Expr::splat(1.0, i64s(&[])));
    p.otherwise(&z, z.at([&t - 1]) + 1.0);
    let w = p.tensor("w", &[&t], i64s(&[]));
    let ahead = z.read_box([(&t, Coordinate::clamp(&t + 1, 0, t.bound() - 1))]);
    let behind = z.read_box([(&t, Coordinate::max(&t - 3, 0))]);
    p.otherwise(&w, ahead * behind);
    p.output(&w);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn parity_and_halving_indices() {
    // e[t] = x[t mod 2] * x[t floordiv 2] + x[T - 1 - t]
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], i64s(&[2]));
    let e = p.tensor("e", &[&t], i64s(&[2]));
    p.otherwise(&e, x.at([t.var().modulo(2)]) * x.at([t.var().floordiv(2)]) + x.at([t.bound() - 1 - t.var()]));
    p.output(&e);
    agree(&p, &[&[("T", 2)], &[("T", 9)]]);
}

#[test]
fn conditions_of_every_kind() {
    // First true branch wins: t < 3, t mod 2 == 0, t == T - 1, otherwise.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let c = p.tensor("c", &[&t], i32s(&[]));
    p.define(&c, t.lt(3), Expr::splat(1.0, i32s(&[])));
    p.define(&c, t.var().modulo(2).eq(0), c.at([&t - 1]) * 2.0);
    p.define(&c, t.eq(t.bound() - 1), Expr::splat(-1.0, i32s(&[])));
    p.otherwise(&c, c.at([&t - 2]) + c.at([&t - 1]));
    p.output(&c);
    agree(&p, &[&[("T", 3)], &[("T", 11)], &[("T", 12)]]);
}

#[test]
fn constant_index_and_last_step() {
    // first[t] = x[0]; last = x[T - 1] (no domain)
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f64s(&[2]));
    let first = p.tensor("first", &[&t], f64s(&[2]));
    p.otherwise(&first, x.at([0]) + x.here());
    let last = p.tensor("last", &[], f64s(&[2]));
    p.otherwise(&last, x.at([t.bound() - 1]));
    p.output(&first);
    p.output(&last);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn transcendental_ops() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[4]));
    let y = p.tensor("y", &[&t], f32s(&[4]));
    let v = x.here();
    let positive = v.abs() + 0.5;
    let value = positive.log() + positive.sqrt() + v.sin() * v.cos() + v.tanh() + v.sigmoid() + v.relu()
        - v.exp() * 0.1
        + positive.pow(&Expr::splat(1.5, f32s(&[4])));
    p.otherwise(&y, value);
    p.output(&y);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn casts_between_every_element_type() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[3]));
    let wide = p.tensor("wide", &[&t], f64s(&[3]));
    p.otherwise(&wide, (x.here() * 10.0).cast(ElementType::F64));
    let ints = p.tensor("ints", &[&t], i32s(&[3]));
    p.otherwise(&ints, wide.here().cast(ElementType::I32));
    let longs = p.tensor("longs", &[&t], i64s(&[3]));
    p.otherwise(&longs, ints.here().cast(ElementType::I64) * 3.0);
    let flags = p.tensor("flags", &[&t], PointType { shape: vec![3], element: ElementType::I1 });
    p.otherwise(&flags, longs.here().cast(ElementType::I1));
    let back = p.tensor("back", &[&t], f32s(&[3]));
    p.otherwise(&back, flags.here().cast(ElementType::F32) + longs.here().cast(ElementType::F32));
    for tensor in [&wide, &ints, &longs, &flags, &back] {
        p.output(tensor);
    }
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn where_and_comparisons_with_logical_ops() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[5]));
    let y = p.tensor("y", &[&t], f32s(&[5]));
    let zero = Expr::splat(0.0, f32s(&[5]));
    let positive = x.here().greater(&zero);
    let small = x.here().compare(Predicate::Le, &Expr::splat(0.5, f32s(&[5])));
    let both = positive.and(&small);
    let either = positive.not().or(&both);
    p.otherwise(&y, either.select(&x.here(), &(-x.here())));
    p.output(&y);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn reductions_along_each_axis() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[3, 4]));
    let rows = p.tensor("rows", &[&t], f32s(&[3]));
    p.otherwise(&rows, x.here().sum(1) + x.here().max_along(1));
    let cols = p.tensor("cols", &[&t], f32s(&[4]));
    p.otherwise(&cols, x.here().mean(0) + x.here().cumsum(1).sum(0));
    let best = p.tensor("best", &[&t], i64s(&[4]));
    p.otherwise(&best, x.here().argmax(0));
    p.output(&rows);
    p.output(&cols);
    p.output(&best);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn batched_matmul_and_matrix_vector() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let a = p.input("a", &[&t], f32s(&[2, 3, 4]));
    let b = p.input("b", &[], f32s(&[2, 4, 2]));
    let v = p.input("v", &[], f32s(&[2]));
    let c = p.tensor("c", &[&t], f32s(&[2, 3, 2]));
    p.otherwise(&c, a.here().matmul(&b.here()));
    let d = p.tensor("d", &[&t], f32s(&[3]));
    p.otherwise(&d, c.here().slice(&[0, 0, 0], &[1, 3, 2]).reshape(&[3, 2]).matmul(&v.here()));
    p.output(&c);
    p.output(&d);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn movement_ops_chain() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], i64s(&[2, 3]));
    let y = p.tensor("y", &[&t], i64s(&[3, 4]));
    let moved = x.here().permute(&[1, 0]).flip(0);
    let wide = moved.concat(&moved.flip(1), 1);
    p.otherwise(&y, wide + Expr::arange(4, ElementType::I64).reshape(&[1, 4]).expand(&[3, 4]));
    p.output(&y);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn gather_rows_chosen_by_a_recurrence() {
    // idx[t] = (idx[t-1] + 2) mod 5 as a 1-element index; row[t] = table[idx[t]]
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let table = p.input("table", &[], f32s(&[5, 3]));
    let idx = p.tensor("idx", &[&t], i64s(&[1]));
    p.define(&idx, t.eq(0), Expr::splat(0.0, i64s(&[1])));
    let next = idx.at([&t - 1]) + 2.0;
    let wrapped = next.greater(&Expr::splat(4.0, i64s(&[1]))).select(&(&next - 5.0), &next);
    p.otherwise(&idx, wrapped);
    let row = p.tensor("row", &[&t], f32s(&[1, 3]));
    p.otherwise(&row, table.here().gather(&idx.here()));
    p.output(&idx);
    p.output(&row);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn seeded_noise_in_a_random_walk() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let w = p.tensor("w", &[&t], f64s(&[2]));
    p.define(&w, t.eq(0), Expr::random_uniform(3, f64s(&[2])));
    p.otherwise(&w, w.at([&t - 1]) + Expr::random_normal(4, f64s(&[2])) * 0.1);
    p.output(&w);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn lookahead_window_clamped_at_the_end() {
    // m[t] = max(x[t : min(t + 3, T)]), a forward window.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[]));
    let m = p.tensor("m", &[&t], f32s(&[]));
    let window = x.read_box([(&t, Coordinate::clamped(vec![t.var()], vec![&t + 3, t.bound()]))]);
    p.otherwise(&m, window.max_along(0));
    p.output(&m);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn whole_range_normalisation() {
    // n[t] = x[t] / sum(x[0:T]) — every point reads the whole extent.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f64s(&[]));
    let n = p.tensor("n", &[&t], f64s(&[]));
    let total = (x.range(0, t.bound()) * x.range(0, t.bound())).sum(0) + 1.0;
    p.otherwise(&n, x.here() / total);
    p.output(&n);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn batch_by_time_recurrence() {
    // h[b, t] = tanh(h[b, t-1] * 0.5 + x[b, t]); out[t] = mean over b of h[0:B, t]
    let mut p = Program::new();
    let b = p.dim("b", "B");
    let t = p.dim("t", "T");
    let x = p.input("x", &[&b, &t], f32s(&[2]));
    let h = p.tensor("h", &[&b, &t], f32s(&[2]));
    p.define(&h, t.eq(0), x.here());
    p.otherwise(&h, (h.at([b.var(), &t - 1]) * 0.5 + x.here()).tanh());
    let out = p.tensor("out", &[&t], f32s(&[2]));
    p.otherwise(&out, h.read_box([(&b, Coordinate::range(0, b.bound()))]).mean(0));
    p.output(&h);
    p.output(&out);
    agree(&p, &[&[("B", 1), ("T", 1)], &[("B", 3), ("T", 7)]]);
}

#[test]
fn layers_inside_time() {
    // a[t, l] = a[t, l-1] * 0.9 + a[t-1, l]: layers l inside steps t.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let l = p.dim("l", "L");
    let a = p.tensor("a", &[&t, &l], f64s(&[]));
    p.define(&a, t.eq(0).and(l.eq(0)), Expr::splat(1.0, f64s(&[])));
    p.define(&a, t.eq(0), a.at([t.var(), &l - 1]) * 0.9);
    p.define(&a, l.eq(0), a.at([&t - 1, l.var()]) + 1.0);
    p.otherwise(&a, a.at([t.var(), &l - 1]) * 0.9 + a.at([&t - 1, l.var()]));
    p.output(&a);
    agree(&p, &[&[("T", 1), ("L", 1)], &[("T", 5), ("L", 4)]]);
}

#[test]
fn three_dimensions_with_a_reduction_over_one() {
    // s[b, i, t] = s[b, i, t-1] + x[b, t] * i; r[b, t] = sum over i of s[b, 0:I, t]
    let mut p = Program::new();
    let b = p.dim("b", "B");
    let i = p.dim("i", "I");
    let t = p.dim("t", "T");
    let x = p.input("x", &[&b, &t], i64s(&[]));
    let s = p.tensor("s", &[&b, &i, &t], i64s(&[]));
    let scale = p.tensor("scale", &[&i], i64s(&[]));
    p.define(&scale, i.eq(0), Expr::splat(1.0, i64s(&[])));
    p.otherwise(&scale, scale.at([&i - 1]) + 1.0);
    p.define(&s, t.eq(0), x.here() * scale.here());
    p.otherwise(&s, s.at([b.var(), i.var(), &t - 1]) + x.here() * scale.here());
    let r = p.tensor("r", &[&b, &t], i64s(&[]));
    p.otherwise(&r, s.read_box([(&i, Coordinate::range(0, i.bound()))]).sum(0));
    p.output(&r);
    agree(&p, &[&[("B", 1), ("I", 1), ("T", 1)], &[("B", 2), ("I", 3), ("T", 5)]]);
}

#[test]
fn backward_and_forward_sweeps_combined() {
    // f[t] = f[t-1] + x[t]; g[t] = g[t+1] + x[t]; both[t] = f[t] + g[t] - x[t]
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], i32s(&[]));
    let f = p.tensor("f", &[&t], i32s(&[]));
    p.define(&f, t.eq(0), x.here());
    p.otherwise(&f, f.at([&t - 1]) + x.here());
    let g = p.tensor("g", &[&t], i32s(&[]));
    p.define(&g, t.eq(t.bound() - 1), x.here());
    p.otherwise(&g, g.at([&t + 1]) + x.here());
    let both = p.tensor("both", &[&t], i32s(&[]));
    p.otherwise(&both, f.here() + g.here() - x.here());
    p.output(&both);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn helpers_softmax_and_norms() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[6]));
    let y = p.tensor("y", &[&t], f32s(&[6]));
    p.otherwise(&y, x.here().softmax() + x.here().layer_norm(1e-5) + x.here().rms_norm(1e-5));
    p.output(&y);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn always_condition_and_a_scalar_tensor_without_domain() {
    // k = 3 (no domain); y[t] = x[t] * k
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], i64s(&[]));
    let k = p.tensor("k", &[], i64s(&[]));
    p.define(&k, Cond::always(), Expr::splat(3.0, i64s(&[])));
    let y = p.tensor("y", &[&t], i64s(&[]));
    p.otherwise(&y, x.here() * k.here() - x.here().min(&k.here()).max(&Expr::splat(-1.0, i64s(&[]))));
    p.output(&y);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn layers_inside_time_through_a_ring_of_slices() {
    // h[t, l] = tanh(h[t, l-1] + h[t-1, l]); h lives in a ring of two
    // t-slices of all layers (tests/memory.rs checks the store).
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let l = p.dim("l", "L");
    let x = p.input("x", &[&t], f32s(&[4]));
    let h = p.tensor("h", &[&t, &l], f32s(&[4]));
    p.define(&h, t.ge(1).and(l.ge(1)), (h.at([t.var(), &l - 1]) + h.at([&t - 1, l.var()])).tanh());
    p.otherwise(&h, x.at([t.var()]));
    let g = p.tensor("g", &[&t, &l], f32s(&[4]));
    p.define(&g, l.ge(1), h.here() * 2.0 + h.at([t.var(), &l - 1]));
    p.otherwise(&g, h.here() * 2.0);
    p.output(&g);
    agree(&p, &[&[("T", 6), ("L", 3)], &[("T", 1), ("L", 5)], &[("T", 9), ("L", 1)]]);
}

#[test]
fn batched_recurrence_with_a_total_after_the_time_loop() {
    // s lives in an inner ring (two points along t) that total[b] reads right
    // after the t loop; w reads s[b, t-2] too, so that ring has 3 points.
    let mut p = Program::new();
    let b = p.dim("b", "B");
    let t = p.dim("t", "T");
    let x = p.input("x", &[&b, &t], f64s(&[3]));
    let s = p.tensor("s", &[&b, &t], f64s(&[3]));
    p.define(&s, t.eq(0), x.here());
    p.otherwise(&s, s.at([b.var(), &t - 1]) * 0.5 + x.here());
    let w = p.tensor("w", &[&b, &t], f64s(&[3]));
    p.define(&w, t.ge(2), s.here() - s.at([b.var(), &t - 2]));
    p.otherwise(&w, s.here());
    let total = p.tensor("total", &[&b], f64s(&[3]));
    p.otherwise(&total, s.at([b.var(), t.bound() - 1]) + s.at([b.var(), t.bound() - 2]));
    p.output(&w);
    p.output(&total);
    agree(&p, &[&[("B", 3), ("T", 6)], &[("B", 1), ("T", 2)], &[("B", 4), ("T", 9)]]);
}

#[test]
fn suffix_reads_of_a_tensor_made_in_the_same_backward_loop() {
    // r lives in blocks committed from the end of the reserved range down.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let r = p.tensor("r", &[&t], f64s(&[2]));
    p.otherwise(&r, Expr::random_uniform(5, f64s(&[2])));
    let g = p.tensor("g", &[&t], f64s(&[2]));
    p.otherwise(&g, r.range(t.var(), t.bound()).sum(0) + r.here());
    p.output(&g);
    agree(&p, &[&[("T", 1)], &[("T", 7)], &[("T", 300)]]);
}

#[test]
fn einsum_attention_with_heads_in_the_point() {
    // Keys k[t] of [H, D]; scores over the prefix with einsum (the keys are
    // read [n, H, D] and contracted without a permute), then values.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[3, 4]));
    let k = p.tensor("k", &[&t], f32s(&[3, 4]));
    p.otherwise(&k, x.here().tanh());
    let o = p.tensor("o", &[&t], f32s(&[3, 4]));
    let keys = k.range(0, &t + 1);
    let q = x.here().reshape(&[3, 1, 4]);
    let scores = Expr::einsum("hqd,nhd->hqn", &[&q, &keys]).softmax();
    let attended = Expr::einsum("hqn,nhd->hqd", &[&scores, &keys]).reshape(&[3, 4]);
    // A contraction that is no matmul: the Gram matrix summed over n and d.
    let gram = Expr::einsum("nhd,ngd->hg", &[&keys, &keys]);
    p.otherwise(&o, attended + Expr::einsum("hg,gd->hd", &[&gram, &x.here()]) * 0.01);
    p.output(&o);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn heads_as_a_dimension_slice_the_projection_at_their_offsets() {
    // q[t, h] is the h-th block of 2 columns of x[t] W: a slice whose
    // offset depends on h; attention per head over the prefix.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let h = p.dim("h", "H");
    let x = p.input("x", &[&t], f32s(&[1, 6]));
    let w = p.input("W", &[], f32s(&[6, 6]));
    let q = p.tensor("q", &[&t, &h], f32s(&[1, 2]));
    p.otherwise(&q, x.here().matmul(&w.here()).slice_at([0.into(), &h * 2], &[1, 2]));
    let o = p.tensor("o", &[&t, &h], f32s(&[1, 2]));
    let keys = q.read_box([(&t, Coordinate::range(0, &t + 1))]).reshape(&[tempo::DYNAMIC, 2]);
    let scores = q.here().matmul(&keys.permute(&[1, 0])).softmax();
    p.otherwise(&o, scores.matmul(&keys));
    p.output(&o);
    agree(&p, &[&[("T", 1), ("H", 3)], &[("T", 9), ("H", 3)]]);
}

#[test]
fn matmul_with_broadcast_batch_dimensions() {
    // [2, 1, 3, 4] x [3, 4, 2] -> [2, 3, 3, 2], in f64 and i64.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let a = p.input("a", &[&t], f64s(&[2, 1, 3, 4]));
    let b = p.input("b", &[&t], f64s(&[3, 4, 2]));
    let c = p.tensor("c", &[&t], f64s(&[2, 3, 3, 2]));
    p.otherwise(&c, a.here().matmul(&b.here()));
    let ia = p.input("ia", &[&t], i64s(&[2, 3, 4]));
    let ib = p.input("ib", &[&t], i64s(&[1, 4, 5]));
    let ic = p.tensor("ic", &[&t], i64s(&[2, 3, 5]));
    p.otherwise(&ic, ia.here().matmul(&ib.here()));
    p.output(&c);
    p.output(&ic);
    agree(&p, SHORT_AND_LONG);
}

#[test]
fn dynamic_reshape_and_expand_of_a_window() {
    // A window of up to 3 steps of [2, 3] points, flattened to [n, 6],
    // normalised by its per-step total expanded back over the row.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[2, 3]));
    let y = p.tensor("y", &[&t], f32s(&[6]));
    let window = x.read_box([(&t, Coordinate::clamped(vec![0.into(), &t - 2], vec![&t + 1]))]);
    let flat = window.reshape(&[tempo::DYNAMIC, 6]);
    let total = flat.abs().sum_keepdims(1) + 1.0;
    let spread = total.expand(&[tempo::DYNAMIC, 6]);
    p.otherwise(&y, (flat / spread).sum(0));
    p.output(&y);
    agree(&p, SHORT_AND_LONG);
}
