//! The interpreter's stores: a tensor that is not an output drops its chunks
//! once no read of them is left, holding few at a time where reads follow
//! evaluation closely, and results are the same as when every point is kept.

use super::*;
use crate::array::HostArray;
use melior::ir::Module;
use store::CHUNK;

/// Evaluates `source` (bounds in dimension order, inputs in declaration
/// order) with reads counted (chunks dropped) or not (every point kept);
/// `check` sees the interpreter afterwards and the outputs.
fn evaluate(
    source: &str,
    bounds: &[i64],
    inputs: &[HostArray],
    count: bool,
    check: impl FnOnce(&Interpreter, Vec<HostArray>),
) {
    let context = tempo_dialects::create_context();
    let module = Module::parse(&context, source).expect("the program parses");
    let program = tempo_passes::verify::verify_program(module.as_operation()).expect("the program verifies");
    let externals = Externals::default();
    let inputs: Vec<&HostArray> = inputs.iter().collect();
    let mut interpreter = Interpreter::new(&program, bounds, &inputs, &externals, "test");
    if count {
        interpreter.count_reads();
    }
    interpreter.evaluate_outputs().expect("the program runs");
    let outputs = interpreter.outputs();
    check(&interpreter, outputs);
}

fn store_of<'i>(interpreter: &'i Interpreter, name: &str) -> &'i store::PointStore {
    &interpreter.stores[interpreter.program.tensor_index(name).expect("a tensor of that name")]
}

const HEADER: &str = r#"
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<i64>
  "gpu.yield"(%a) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %p = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<i64>
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<i64>
  %n = "temporal.add"(%p, %a) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%n) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (t >= 1)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"#;

/// `y[t] = s[INDEX]` for the running total `s` of `x`.
fn running_total(index: &str) -> String {
    format!(
        r#"{HEADER}
"temporal.define"(%y) ({{
  %a = "temporal.read"(%s) {{index = affine_map<(t)[T] -> ({index})>}} : (!temporal.rtensor) -> tensor<i64>
  "gpu.yield"(%a) : (tensor<i64>) -> ()
}}) {{when = affine_set<(t)[T] : (0 == 0)>}} : (!temporal.rtensor) -> ()
"#
    )
}

fn input(steps: usize) -> HostArray {
    let values: Vec<i64> = (0..steps as i64).map(|t| (t * 7919) % 101 - 50).collect();
    HostArray { name: "x".into(), shape: vec![steps], data: Data::I64(values) }
}

fn totals(x: &HostArray) -> Vec<i64> {
    let Data::I64(v) = &x.data else { unreachable!() };
    v.iter()
        .scan(0i64, |total, &a| {
            *total += a;
            Some(*total)
        })
        .collect()
}

#[test]
fn a_running_total_read_in_order_holds_two_chunks() {
    let steps = 10 * CHUNK + 7;
    let x = input(steps);
    evaluate(&running_total("t"), &[steps as i64], std::slice::from_ref(&x), true, |interpreter, outputs| {
        assert_eq!(outputs[0].data, Data::I64(totals(&x)));
        let s = store_of(interpreter, "s");
        // s[t] is read by s[t + 1] and y[t], both evaluated right after it:
        // the chunk of t and, at a chunk boundary, the one before.
        assert_eq!(s.peak_live_chunks(), 2);
        assert_eq!(s.live_chunks(), 0);
    });
    // Without counting, every chunk stays (11 of them).
    evaluate(&running_total("t"), &[steps as i64], std::slice::from_ref(&x), false, |interpreter, outputs| {
        assert_eq!(outputs[0].data, Data::I64(totals(&x)));
        assert_eq!(store_of(interpreter, "s").live_chunks(), steps.div_ceil(CHUNK));
    });
}

#[test]
fn reads_out_of_order_keep_chunks_until_their_last_read() {
    let steps = 4 * CHUNK + 3;
    let x = input(steps);
    // y[0] needs s[T - 1], so every point of s is computed first; y then
    // reads them backwards, dropping chunks from the last one down.
    let reversed = running_total("T - 1 - t");
    evaluate(&reversed, &[steps as i64], std::slice::from_ref(&x), true, |interpreter, outputs| {
        let mut expected = totals(&x);
        expected.reverse();
        assert_eq!(outputs[0].data, Data::I64(expected));
        let s = store_of(interpreter, "s");
        assert_eq!(s.peak_live_chunks(), steps.div_ceil(CHUNK));
        assert_eq!(s.live_chunks(), 0);
    });
}

#[test]
fn many_readers_give_the_results_of_keeping_every_point() {
    // y reads s[0] at every step (its chunk stays to the end), the window
    // s[max(0, t-3):t+1] (a range read), s[t] at even steps only (a
    // second branch reads x), and has a dead read of s[t + 1] (never made,
    // never counted); w reads every other point of s.
    let steps = 3 * CHUNK + 5;
    let source = format!(
        r#"{HEADER}
%w = "temporal.tensor"() {{sym_name = "w", domain = ["t"], element = tensor<i64>}} : () -> !temporal.rtensor
"temporal.define"(%y) ({{
  %first = "temporal.read"(%s) {{index = affine_map<(t)[T] -> (0)>}} : (!temporal.rtensor) -> tensor<i64>
  %now = "temporal.read"(%s) {{index = affine_map<(t)[T] -> (t)>}} : (!temporal.rtensor) -> tensor<i64>
  %ahead = "temporal.read"(%s) {{index = affine_map<(t)[T] -> (t + 1)>}} : (!temporal.rtensor) -> tensor<i64>
  %prefix = "temporal.read_range"(%s) {{caps = [], lower = [affine_map<(t)[T] -> (0, t - 3)>], upper = [affine_map<(t)[T] -> (t + 1)>]}} : (!temporal.rtensor) -> tensor<?xi64>
  %sum = "temporal.reduce_sum"(%prefix) {{axis = 0 : i64}} : (tensor<?xi64>) -> tensor<i64>
  %a = "temporal.add"(%first, %now) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %b = "temporal.add"(%a, %sum) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%b) : (tensor<i64>) -> ()
}}) {{when = affine_set<(t)[T] : (t mod 2 == 0)>}} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({{
  %a = "temporal.read"(%x) {{index = affine_map<(t)[T] -> (t)>}} : (!temporal.rtensor) -> tensor<i64>
  "gpu.yield"(%a) : (tensor<i64>) -> ()
}}) {{when = affine_set<(t)[T] : (0 == 0)>}} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({{
  %a = "temporal.read"(%s) {{index = affine_map<(t)[T] -> (t floordiv 2)>}} : (!temporal.rtensor) -> tensor<i64>
  "gpu.yield"(%a) : (tensor<i64>) -> ()
}}) {{when = affine_set<(t)[T] : (0 == 0)>}} : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
"#
    );
    let x = input(steps);
    let mut kept = Vec::new();
    evaluate(&source, &[steps as i64], std::slice::from_ref(&x), false, |_, outputs| kept = outputs);
    evaluate(&source, &[steps as i64], std::slice::from_ref(&x), true, |interpreter, outputs| {
        assert_eq!(outputs, kept);
        let s = store_of(interpreter, "s");
        assert_eq!(s.live_chunks(), 0);
        assert!(s.peak_live_chunks() < steps.div_ceil(CHUNK) + 1);
    });
    // The values themselves, from the totals.
    let total = totals(&x);
    let Data::I64(xs) = &x.data else { unreachable!() };
    let expected: Vec<i64> =
        (0..steps)
            .map(|t| {
                if t % 2 == 0 {
                    total[0] + total[t] + total[t.saturating_sub(3)..=t].iter().sum::<i64>()
                } else {
                    xs[t]
                }
            })
            .collect();
    assert_eq!(kept[0].data, Data::I64(expected));
    assert_eq!(kept[1].data, Data::I64((0..steps).map(|t| total[t / 2]).collect()));
}

/// `flash_attention` on two groups of a band that leaves the first query
/// position no key, against the kernel's reference (`crate::flash`) per
/// group; key takes the statistics of the interpreted query part.
#[test]
fn flash_attention_matches_the_kernel_reference() {
    use crate::flash::{Problem, reference};
    use tempo_passes::program::{Band, Flash, FlashPart};
    let (tq, tk, g, rows, dk, dv) = (6, 5, 2, 2, 3, 4);
    let band = Band { lower: Some(-2), upper: Some(0) };
    let numbers = |n: usize, seed: usize| -> Vec<f64> {
        (0..n).map(|i| (((i * 7919 + seed * 104_729) % 211) as f64 / 105.0 - 1.0) * 1.5).collect()
    };
    let (q, k, v, d_o) = (
        numbers(tq * g * rows * dk, 1),
        numbers(tk * g * dk, 2),
        numbers(tk * g * dv, 3),
        numbers(tq * g * rows * dv, 4),
    );
    let scale = 0.7;
    let value = |shape: &[usize], x: &[f64]| Value { shape: shape.to_vec(), data: Data::F64(x.to_vec()) };
    // Group gi of an array laid out [outer, g, inner], as [outer, inner].
    let group = |x: &[f64], inner: usize, gi: usize| -> Vec<f64> {
        x.chunks(g * inner).flat_map(|c| c[gi * inner..][..inner].to_vec()).collect()
    };
    let (qv, kv, vv, dov, sv) = (
        value(&[tq, g, rows, dk], &q),
        value(&[tk, g, dk], &k),
        value(&[tk, g, dv], &v),
        value(&[tq, g, rows, dv], &d_o),
        value(&[], &[scale]),
    );
    let run = |part: FlashPart, operands: &[&Value]| -> Vec<f64> {
        let Data::F64(x) = flash_attention(&Flash { part, band }, operands).expect("evaluates").data else {
            panic!("f64 in, f64 out")
        };
        x
    };
    let forward = run(FlashPart::Forward, &[&qv, &kv, &vv, &sv]);
    let query = run(FlashPart::Query, &[&qv, &kv, &vv, &dov, &sv]);
    let column = |c: usize| -> Vec<f64> { query.chunks(dv + 3 + dk).map(|row| row[c]).collect() };
    let (m, l, d) = (column(dv), column(dv + 1), column(dv + 2));
    let (mv, lv, dvv) = (value(&[tq, g, rows], &m), value(&[tq, g, rows], &l), value(&[tq, g, rows], &d));
    let key = run(FlashPart::Key, &[&qv, &dov, &mv, &lv, &dvv, &kv, &vv, &sv]);
    assert!(m.iter().filter(|x| x.is_infinite()).count() == g * rows, "position 0 sees no key");
    for gi in 0..g {
        let (qg, kg, vg, dog) =
            (group(&q, rows * dk, gi), group(&k, dk, gi), group(&v, dv, gi), group(&d_o, rows * dv, gi));
        let (mg, lg, dg) = (group(&m, rows, gi), group(&l, rows, gi), group(&d, rows, gi));
        for (part, got, width) in [
            (FlashPart::Forward, &forward, dv + 2),
            (FlashPart::Query, &query, dv + 3 + dk),
            (FlashPart::Key, &key, dk + dv),
        ] {
            let problem = Problem {
                part,
                band,
                tq,
                tk,
                rows,
                dk,
                dv,
                scale,
                q: &qg,
                k: &kg,
                v: &vg,
                d_o: &dog,
                m: &mg,
                l: &lg,
                d: &dg,
            };
            let inner = if part == FlashPart::Key { width } else { rows * width };
            let got = group(got, inner, gi);
            let expected = reference(&problem);
            assert_eq!(got.len(), expected.len());
            for (a, b) in got.iter().zip(&expected) {
                assert!(
                    a == b || (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                    "{} group {gi}: {a} against {b}",
                    part.name()
                );
            }
        }
    }
    let wrong = value(&[tk, g, dk + 1], &numbers(tk * g * (dk + 1), 5));
    assert!(flash_attention(&Flash { part: FlashPart::Forward, band }, &[&qv, &wrong, &vv, &sv]).is_err());
}
