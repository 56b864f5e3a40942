//! # tempo: recurrent-tensor programs in Rust
//!
//! Declare dimensions, inputs and recurrent tensors, define each tensor by
//! ordered conditional branches whose expressions read other points through
//! symbolic indices, mark outputs, then compile and run (or interpret):
//!
//! ```
//! use tempo::{Cond, Program, f32s};
//! let mut p = Program::new();
//! let t = p.dim("t", "T");
//! let x = p.input("x", &[&t], f32s(&[3]));
//! let s = p.tensor("s", &[&t], f32s(&[3]));
//! p.define(&s, t.eq(0), x.here());                          // s[0] = x[0]
//! p.define(&s, Cond::always(), s.at([&t - 1]) + x.here());  // s[t] = s[t-1] + x[t]
//! p.output(&s);
//! let compiled = p.runner().bound("T", 6).seed(1).run().unwrap();
//! let reference = p.runner().bound("T", 6).seed(1).interpret().unwrap();
//! assert_eq!(compiled, reference);
//! ```
//!
//! [`Program::to_mlir`] prints the temporal-dialect MLIR the compiler reads
//! (`tempo-opt` and `tempo-run` accept it too).
//!
//! [`Program::grad`] declares the gradient of a loss with respect to a
//! tensor, [`Expr::stop_gradient`] cuts a path, and [`optim`] writes SGD,
//! momentum and Adam as recurrences over an iteration dimension, so a
//! training run is one program.

mod expr;
mod index;
pub mod optim;
mod program;
pub mod rl;
pub mod site;

pub use expr::{Binary, Coordinate, Expr, Movement, Predicate, Reduce, Unary, f32s, f64s, i32s, i64s};
pub use index::{Cond, DimRef, Index};
pub use program::{
    Compiled, Dim, Error, Program, Runner, Shard, Tensor, TensorId, abort_processes, barrier, processes,
};
pub use tempo_driver::{ArrayView, ArrayViewMut, Data, Front, HostArray, MemoryReport, RunReport, StoreReport, Target};
pub use tempo_passes::program::{Collective, DYNAMIC, ElementType, PointType};

#[cfg(test)]
mod tests {
    use super::*;

    fn counter(p: &mut Program) -> (Dim, Tensor) {
        let t = p.dim("t", "T");
        let x = p.tensor("x", &[&t], i64s(&[]));
        p.define(&x, t.eq(0), Expr::splat(0.0, i64s(&[])));
        p.define(&x, Cond::always(), x.at([&t - 1]) + 1.0);
        p.output(&x);
        (t, x)
    }

    /// One compiled program shared by threads through a mutex (see
    /// [`Compiled`]): every run of every thread right, under load.
    #[test]
    fn one_compiled_program_runs_from_many_threads() {
        let mut p = Program::new();
        counter(&mut p);
        let shared = std::sync::Arc::new(std::sync::Mutex::new(p.runner().compile().unwrap()));
        let workers: Vec<_> = (0..4)
            .map(|k| {
                let shared = std::sync::Arc::clone(&shared);
                std::thread::spawn(move || {
                    for j in 0..25 {
                        let steps = 3 + k + j;
                        let out = shared.lock().unwrap().run(&[("T", steps)], &[]).unwrap();
                        let want: Vec<i64> = (0..steps).collect();
                        assert_eq!(out[0].data, Data::I64(want));
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
    }

    #[test]
    fn compiled_and_interpreted_agree() {
        let mut p = Program::new();
        counter(&mut p);
        let run = p.runner().bound("T", 12).run().unwrap();
        assert_eq!(run, p.runner().bound("T", 12).interpret().unwrap());
        assert_eq!(run[0].data, Data::I64((0..12).collect()));
    }

    #[test]
    fn emitted_mlir_is_readable_and_located() {
        let mut p = Program::new();
        counter(&mut p);
        let text = p.to_mlir().unwrap();
        // (MLIR's printer: the reader's variables are d0, ..., the bounds
        // s0, ...; maps and locations as aliases.)
        assert!(text.contains("affine_map<(d0)[s0] -> (d0 - 1)>"), "{text}");
        assert!(text.contains("loc(\"src/lib.rs\":"), "{text}");
        assert!(text.contains("affine_set<(d0)[s0] : (d0 == 0)>"), "{text}");
        let t = Dim { name: "t".into(), bound: "T".into(), number: 0, bound_number: 0, program: 0 };
        assert_eq!((t.bound() - 1 - t.var()).to_string(), "T - t - 1");
        assert_eq!(((t.var() + 3) % 2 * 2).to_string(), "((t + 3) mod 2) * 2");
        assert_eq!((t.var() - t.var()).to_string(), "0");
    }

    #[test]
    fn conditions_cover_comparisons_and_parity() {
        let mut p = Program::new();
        let t = p.dim("t", "T");
        let y = p.tensor("y", &[&t], i32s(&[]));
        p.define(&y, t.lt(2), Expr::splat(1.0, i32s(&[])));
        p.define(&y, (t.var() % 2).eq(0).and(t.ge(2)), y.at([&t - 1]) * 2.0);
        p.define(&y, t.gt(t.bound() - 2), Expr::splat(-7.0, i32s(&[])));
        p.otherwise(&y, y.at([&t - 2]) + y.at([&t - 1]));
        p.output(&y);
        let out = p.runner().bound("T", 8).run().unwrap();
        assert_eq!(out[0].data, Data::I32(vec![1, 1, 2, 3, 6, 9, 18, -7]));
        assert_eq!(out, p.runner().bound("T", 8).interpret().unwrap());
    }

    #[test]
    fn errors_point_at_the_rust_source() {
        let mut p = Program::new();
        let t = p.dim("t", "T");
        let y = p.tensor("y", &[&t], f32s(&[]));
        let line = line!() + 1;
        p.otherwise(&y, y.here() + 1.0);
        p.output(&y);
        let error = p.runner().bound("T", 3).run().unwrap_err().to_string();
        assert!(error.contains(&format!("src/lib.rs:{line}:")), "{error}");
        assert!(error.contains("zero-distance cycle: y -> y"), "{error}");
    }

    #[test]
    fn malformed_reads_and_names_are_reported() {
        let mut p = Program::new();
        let t = p.dim("t", "T");
        let b = p.dim("b", "B");
        let x = p.input("x", &[&t], f32s(&[]));
        let y = p.tensor("y", &[&t], f32s(&[]));
        p.otherwise(&y, x.at([t.var(), t.var()]));
        let z = p.tensor("z", &[&t], f32s(&[]));
        p.otherwise(&z, x.at([b.var()]));
        let error = p.to_mlir().unwrap_err().to_string();
        assert!(error.contains("read of 'x' indexes the wrong number of dimensions"), "{error}");
        assert!(error.contains("uses variable 'b', which is not in the reader's domain"), "{error}");

        let mut q = Program::new();
        q.dim("mod", "T");
        assert!(q.to_mlir().unwrap_err().to_string().contains("'mod' is not a valid dimension or bound name"));
    }

    /// `error` has exactly the `expected` lines: each message at its line
    /// of this file (`first` plus the offset).
    fn errors_at(error: &str, first: u32, expected: &[(u32, &str)]) {
        for (k, message) in expected {
            let line = format!("src/lib.rs:{}:", first + k);
            assert!(error.lines().any(|l| l.contains(&line) && l.contains(message)), "{line} {message}:\n{error}");
        }
        assert_eq!(error.lines().count(), expected.len(), "{error}");
    }

    /// What an expression refuses when it is made (a dimension its tensor
    /// lacks, a box without bounds, a bad einsum spec, a value a type cannot
    /// hold) and what only the reader shows (variables outside its domain,
    /// handles of another program) are said at the user's lines, all at
    /// once, when the program is built.
    #[test]
    fn refusals_are_said_at_the_users_lines() {
        let mut p = Program::new();
        let t = p.dim("t", "T");
        let b = p.dim("b", "B");
        let x = p.input("x", &[&t], f32s(&[4]));
        let y = p.tensor("y", &[&t], f32s(&[4]));
        let first = line!() + 1;
        p.define(&y, t.eq(0), x.at_dims([(&b, 0)]));
        p.define(&y, t.eq(1), x.read_box([(&b, Coordinate::range(0, 1))]).sum(0));
        p.define(&y, t.eq(2), x.read_box([(&t, Coordinate::clamped(vec![], vec![t.var()]))]).sum(0));
        p.define(&y, t.eq(3), Expr::einsum("a-b", &[&x.here()]));
        p.define(&y, t.eq(4), Expr::constant_ints(vec![1, 2], i64s(&[4])).cast(ElementType::F32));
        p.define(&y, b.eq(5), x.here());
        p.define(&y, t.eq(6), x.here().slice_at([b.var()], &[4]));
        let mut other = Program::new();
        let (_, c, u) = (other.dim("a", "A"), other.dim("c", "C"), other.dim("u", "U"));
        p.define(&y, t.eq(7), x.at([u.var()]));
        p.otherwise(&y, x.here() * Expr::splat(0.5, i32s(&[])).cast(ElementType::F32));
        // (`c` is the second dimension of its program, as `b` is of this
        // one: numbers alone would confuse them.)
        p.define(&y, t.eq(8), x.at([c.var()]) + c.position(ElementType::F32));
        p.define(&y, t.eq(9), x.here().slice_at([c.var()], &[4]));
        let w = other.input("w", &[&u], f32s(&[4]));
        p.define(&y, t.eq(10), w.at([0]));
        p.output(&y);
        let error = p.to_mlir().unwrap_err().to_string();
        let expected = [
            (0, "read of 'x' indexes dimension 'b' but 'x' has domain [t]"),
            (1, "range read of 'x' indexes dimension 'b' but 'x' has domain [t]"),
            (2, "range read of 'x' needs at least one lower and one upper bound for dimension 't'"),
            (3, "'temporal.einsum' spec \"a-b\""),
            (4, "'temporal.constant': 2 values for a value of shape [4]"),
            (5, "the condition of a branch of 'y' uses variable 'b', which is not in the reader's domain"),
            (6, "slice offsets in a branch of 'y' use variable 'b', which is not in the reader's domain"),
            (9, "read of 'x' uses dimension 'u' of another program"),
            (10, "'temporal.constant': the number 0.5 is not a value of i32"),
            (13, "read of 'x' uses dimension 'c' of another program"),
            (13, "'temporal.position' in a branch of 'y' is made from a tensor or dimension of another program"),
            (14, "'temporal.dynamic_slice' in a branch of 'y' is made from a tensor or dimension of another program"),
            (16, "'temporal.read' in a branch of 'y' is made from a tensor or dimension of another program"),
        ];
        errors_at(&error, first, &expected);
    }

    /// Handles (dimensions, tensors) given to another program than the one
    /// that made them are refused at the lines that gave them.
    #[test]
    fn handles_of_another_program_are_refused() {
        let mut other = Program::new();
        let (s, u) = (other.dim("s", "S"), other.dim("u", "U"));
        let v = other.tensor("v", &[&s], f32s(&[]));
        let mut p = Program::new();
        let t = p.dim("t", "T");
        let b = p.dim("b", "B");
        let y = p.tensor("y", &[&t], f32s(&[]));
        let first = line!() + 1;
        let z = p.tensor("z", &[&t, &u], f32s(&[]));
        p.define(&v, Cond::always(), Expr::splat(1.0, f32s(&[])));
        p.define(&y, s.eq(0).and(b.eq(0)), Expr::splat(1.0, f32s(&[])));
        p.output(&v);
        p.stop(&v, &s);
        p.grad("g", &v, &y);
        p.otherwise(&z, y.here());
        let error = p.to_mlir().unwrap_err().to_string();
        let expected = [
            (0, "the domain of 'z' has dimension 'u' of another program"),
            (1, "a branch defines 'v' of another program"),
            (2, "the condition of a branch of 'y' uses dimension 's' of another program"),
            (3, "the output 'v' of another program"),
            (4, "the stop's tensor 'v' of another program"),
            (4, "the stopped dimension 's' of another program"),
            (5, "the gradient 'g' is of 'v' of another program"),
        ];
        errors_at(&error, first, &expected);
    }

    #[test]
    fn movement_reductions_and_where_through_the_api() {
        let mut p = Program::new();
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f32s(&[2, 3]));
        let y = p.tensor("y", &[&t], f32s(&[6]));
        let rotated = x.here().permute(&[1, 0]).flip(0).reshape(&[6]);
        let positive = rotated.greater(&Expr::splat(0.0, f32s(&[])));
        let clipped = positive.select(&rotated, &Expr::splat(0.0, f32s(&[])));
        p.define(&y, t.eq(0), clipped.cumsum(0));
        let index = y.at([&t - 1]).argmax(0).cast(ElementType::F32);
        let shifted = y.at([&t - 1]).slice(&[1], &[5]).concat(&index.reshape(&[1]), 0);
        p.otherwise(&y, &shifted + &Expr::arange(6, ElementType::F32));
        p.output(&y);
        let compiled = p.runner().bound("T", 5).seed(3).run().unwrap();
        assert_eq!(compiled, p.runner().bound("T", 5).seed(3).interpret().unwrap());
    }

    #[test]
    fn embedding_lookup_and_batched_matmul() {
        let mut p = Program::new();
        let t = p.dim("t", "T");
        let tokens = p.input("tokens", &[&t], i64s(&[2]));
        let table = p.input("E", &[], f32s(&[6, 4]));
        let y = p.tensor("y", &[&t], f32s(&[2, 2, 2]));
        let x = table.here().gather(&tokens.here()).reshape(&[2, 2, 2]);
        p.otherwise(&y, x.matmul(&x.permute(&[0, 2, 1])));
        p.output(&y);
        let compiled = p.runner().bound("T", 4).seed(8).run().unwrap();
        assert_eq!(compiled, p.runner().bound("T", 4).seed(8).interpret().unwrap());
    }

    #[test]
    fn composite_helpers() {
        let mut p = Program::new();
        let t = p.dim("t", "T");
        let r = p.input("r", &[&t], f64s(&[]));
        let x = p.input("x", &[&t], f64s(&[5]));
        let g = p.discounted_sum("G", &r, &t, 0.5);
        let n = p.tensor("n", &[&t], f64s(&[5]));
        p.otherwise(&n, x.here().layer_norm(1e-5) + x.here().rms_norm(1e-5));
        p.output(&g);
        p.output(&n);
        let out = p.runner().bound("T", 6).seed(2).run().unwrap();
        assert_eq!(out, p.runner().bound("T", 6).seed(2).interpret().unwrap());
        // G against the backward recurrence G[t] = r[t] + 0.5 G[t+1].
        let rewards = HostArray::random("r", vec![6], ElementType::F64, 2);
        let mut expected = vec![0.0; 6];
        for step in (0..6).rev() {
            expected[step] = rewards.data.get_f64(step) + if step < 5 { 0.5 * expected[step + 1] } else { 0.0 };
        }
        for (k, want) in expected.iter().enumerate() {
            assert!((out[0].data.get_f64(k) - want).abs() < 1e-12);
        }
        // n[0] against layer and RMS normalization computed here.
        let inputs = HostArray::random("x", vec![6, 5], ElementType::F64, 2);
        let row: Vec<f64> = (0..5).map(|k| inputs.data.get_f64(k)).collect();
        let mean = row.iter().sum::<f64>() / 5.0;
        let variance = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / 5.0;
        let square_mean = row.iter().map(|v| v * v).sum::<f64>() / 5.0;
        for (k, v) in row.iter().enumerate() {
            let want = (v - mean) / (variance + 1e-5).sqrt() + v / (square_mean + 1e-5).sqrt();
            assert!((out[1].data.get_f64(k) - want).abs() < 1e-12, "n[0][{k}]");
        }
    }

    #[test]
    fn gradients_and_input_sweeps() {
        // loss[t] = w * x[t] + stop_gradient(w * w): d/dw = sum(x), d/dx[t] = w.
        let mut p = Program::new();
        let t = p.dim("t", "T");
        let w = p.input("w", &[], f64s(&[]));
        let x = p.input("x", &[&t], f64s(&[]));
        let loss = p.tensor("loss", &[&t], f64s(&[]));
        p.otherwise(&loss, w.here() * x.here() + (w.here() * w.here()).stop_gradient());
        let line = line!() + 1;
        let gw = p.grad("gw", &loss, &w);
        let gx = p.grad("gx", &loss, &x);
        p.output(&gw);
        p.output(&gx);
        let text = p.to_mlir().unwrap();
        let expected = "%3 = \"temporal.grad\"(%2, %0) {sym_name = \"gw\"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor loc(";
        assert!(text.contains(expected), "{text}");
        assert!(text.contains(&format!("loc(\"src/lib.rs\":{line}:")), "{text}");
        assert!(text.contains("\"temporal.stop_gradient\"("), "{text}");
        let array = |name: &str, shape: Vec<usize>, values: Vec<f64>| HostArray {
            name: name.into(),
            shape,
            data: Data::F64(values),
        };
        let sets: Vec<Vec<HostArray>> = [1.5, -2.0]
            .iter()
            .map(|&v| vec![array("w", vec![], vec![v]), array("x", vec![3], vec![1.0, 2.0, 4.0])])
            .collect();
        let runner = p.runner().bound("T", 3);
        let swept = runner.interpret_each(&sets).unwrap();
        for (set, out) in sets.iter().zip(&swept) {
            let one = set.iter().fold(p.runner().bound("T", 3), |r, a| r.input(a.clone()));
            assert_eq!(out, &one.run().unwrap());
            assert_eq!(out[0].data, Data::F64(vec![7.0]));
            assert_eq!(out[1].data, Data::F64(vec![set[0].data.get_f64(0); 3]));
        }
    }

    #[test]
    fn type_errors_come_from_the_verifier() {
        let mut p = Program::new();
        let t = p.dim("t", "T");
        let a = p.input("a", &[&t], f32s(&[2]));
        let y = p.tensor("y", &[&t], f32s(&[2]));
        p.otherwise(&y, a.here() + Expr::splat(1.0, f32s(&[3])));
        p.output(&y);
        let error = p.runner().bound("T", 2).seed(0).run().unwrap_err().to_string();
        assert!(error.contains("'temporal.add' needs operands and result of one type"), "{error}");
    }

    /// Data parallel in a process started without a launcher: the whole
    /// batch is this one's; every gradient, declared before or after, is
    /// marked all-reduced (its mean over one process: itself, so the
    /// gradient is the plain one); an empty batch is refused.
    #[test]
    fn data_parallel_in_one_process() {
        let mut p = Program::new();
        let t = p.dim("t", "T");
        let w = p.input("w", &[], f64s(&[3]));
        let loss = p.tensor("loss", &[&t], f64s(&[]));
        p.otherwise(&loss, (w.here() * w.here()).sum(0));
        let before = p.grad("g_before", &loss, &w);
        assert_eq!(p.data_parallel(4).unwrap(), Shard { rank: 0, processes: 1, start: 0, len: 4 });
        let after = p.grad("g_after", &loss, &w);
        p.output(&before);
        p.output(&after);
        let text = p.to_mlir().unwrap();
        assert_eq!(text.matches("all_reduce = \"mean\"").count(), 2, "{text}");
        let out = p.runner().bound("T", 3).seed(1).run().unwrap();
        let w0 = p.runner().bound("T", 3).seed(1).interpret().unwrap();
        assert_eq!(out, w0);
        // d/dw of 3 sum(w^2): 6 w, the same in both.
        assert_eq!(out[0].data, out[1].data);
        let error = Program::new().data_parallel(0).unwrap_err().to_string();
        assert!(error.contains("a batch of 0 does not split evenly over 1 processes"), "{error}");
    }
}
