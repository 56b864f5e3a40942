//! Gradient checks: `Program::grad` against central finite differences.
//!
//! Each test builds a program in f64 with the Rust API: a loss `of`
//! (scalar points, summed over its domain) and the tensors to
//! differentiate it by. The harness ([`check`]) declares one gradient per
//! tensor, runs the program with the reference interpreter and compiled
//! (`Runner::run`, which must agree within 1e-9 relative), and compares
//! every point of every gradient with central finite differences of the
//! summed loss computed through the interpreter (each input element
//! perturbed by ±1e-6, inputs given explicitly) within 1e-5, relative to
//! the gradient's size where it exceeds one. Run with `--nocapture` to see
//! each test's largest errors.

use tempo::{Coordinate, Data, ElementType, Expr, HostArray, Program, Tensor, f64s, i64s};

/// Perturbation of each input element.
const STEP: f64 = 1e-6;
/// Finite differences against gradients: `|fd - g| <= FD_TOLERANCE * max(1, |g|)`.
const FD_TOLERANCE: f64 = 1e-5;
/// Compiled against interpreted: `|c - i| <= AGREEMENT * max(|c|, |i|)`.
const AGREEMENT: f64 = 1e-9;

/// What a test builds.
struct Case {
    /// The loss: the gradients are of the sum of its points.
    of: Tensor,
    /// Inputs (f64) whose gradients are checked element by element.
    wrt: Vec<Tensor>,
    /// Computed tensors `h` whose gradient is checked against finite
    /// differences of an input `d` that is added to `h` (`h = ... + d`):
    /// the derivative with respect to `h`'s point is that with respect to
    /// `d`'s.
    through: Vec<(Tensor, Tensor)>,
}

impl Case {
    fn new(of: &Tensor, wrt: &[&Tensor]) -> Case {
        Case { of: of.clone(), wrt: wrt.iter().map(|&t| t.clone()).collect(), through: Vec::new() }
    }
}

/// Which program the builder makes: the one whose gradients are checked,
/// or the one whose loss the finite differences evaluate. They are the
/// same program except where a test says otherwise (a stop_gradient's
/// operand read from a frozen copy of the input).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Gradients,
    Loss,
}

/// The largest errors one check measured.
#[derive(Debug)]
struct Report {
    /// Largest `|fd - g| / max(1, |g|)`.
    fd: f64,
    /// Largest relative difference between compiled and interpreted values.
    compiled: f64,
    /// Gradient elements checked.
    elements: usize,
}

/// The shape of `tensor` at `bounds`: one extent per domain dimension (its
/// bound is the dimension's name upper-cased, `t < T`), then the point's.
fn shape(tensor: &Tensor, bounds: &[(&str, i64)]) -> Vec<usize> {
    let mut shape: Vec<usize> = tensor
        .domain()
        .iter()
        .map(|d| {
            let bound = d.to_uppercase();
            let (_, value) = bounds.iter().find(|(b, _)| *b == bound).unwrap_or_else(|| panic!("no bound {bound}"));
            *value as usize
        })
        .collect();
    shape.extend(tensor.point_type().shape.iter().map(|&s| s as usize));
    shape
}

fn values(array: &HostArray) -> &[f64] {
    match &array.data {
        Data::F64(v) => v,
        other => panic!("'{}' is not f64: {:?}", array.name, other.element()),
    }
}

fn relative(a: f64, b: f64) -> f64 {
    if a == b { 0.0 } else { (a - b).abs() / a.abs().max(b.abs()) }
}

/// Checks every gradient of the program `build` makes (see the module's
/// documentation); `given` are explicit inputs (integer indices, frozen
/// copies), the other inputs seeded random values in [-1, 1).
#[track_caller]
fn check_with(
    test: &str,
    bounds: &[(&str, i64)],
    given: Vec<HostArray>,
    build: impl Fn(&mut Program, Mode) -> Case,
) -> Report {
    let seed = 11;
    let mut p = Program::new();
    let case = build(&mut p, Mode::Gradients);
    let targets: Vec<(Tensor, Tensor)> =
        case.wrt.iter().map(|w| (w.clone(), w.clone())).chain(case.through.iter().cloned()).collect();
    p.output(&case.of);
    for (k, (target, _)) in targets.iter().enumerate() {
        let g = p.grad(&format!("grad{k}_{}", target.name()), &case.of, target);
        p.output(&g);
    }
    // The perturbed inputs' values, explicit.
    let base: Vec<HostArray> = targets
        .iter()
        .map(|(_, input)| {
            given.iter().find(|a| a.name == input.name()).cloned().unwrap_or_else(|| {
                HostArray::random(input.name(), shape(input, bounds), ElementType::F64, seed ^ 0x5eed)
            })
        })
        .collect();
    fn runner<'p>(p: &'p Program, bounds: &[(&str, i64)], seed: u64, inputs: &[HostArray]) -> tempo::Runner<'p> {
        let mut r = p.runner().seed(seed);
        for (name, value) in bounds {
            r = r.bound(name, *value);
        }
        for a in inputs {
            r = r.input(a.clone());
        }
        r
    }
    let with_given = |inputs: &[HostArray]| -> Vec<HostArray> {
        let others = given.iter().filter(|g| !inputs.iter().any(|a| a.name == g.name));
        inputs.iter().chain(others).cloned().collect()
    };
    let interpreted =
        runner(&p, bounds, seed, &with_given(&base)).interpret().unwrap_or_else(|e| panic!("{test}: interpreted: {e}"));
    let compiled =
        runner(&p, bounds, seed, &with_given(&base)).run().unwrap_or_else(|e| panic!("{test}: compiled: {e}"));
    let mut report = Report { fd: 0.0, compiled: 0.0, elements: 0 };
    assert_eq!(interpreted.len(), compiled.len());
    for (i, c) in interpreted.iter().zip(&compiled) {
        assert_eq!(i.shape, c.shape, "{test}: shape of '{}'", i.name);
        for (k, (&x, &y)) in values(i).iter().zip(values(c)).enumerate() {
            let error = relative(x, y);
            assert!(error <= AGREEMENT, "{test}: '{}'[{k}]: interpreted {x}, compiled {y}", i.name);
            report.compiled = report.compiled.max(error);
        }
    }

    // Finite differences of the summed loss through the interpreter: two
    // evaluations per element, in one sweep.
    let mut q = Program::new();
    let loss = build(&mut q, Mode::Loss).of;
    q.output(&loss);
    let mut sets = Vec::new();
    for (j, array) in base.iter().enumerate() {
        for k in 0..array.data.len() {
            for delta in [STEP, -STEP] {
                let mut moved = base.clone();
                let Data::F64(v) = &mut moved[j].data else { unreachable!() };
                v[k] += delta;
                sets.push(with_given(&moved));
            }
        }
    }
    let totals: Vec<f64> = runner(&q, bounds, seed, &[])
        .interpret_each(&sets)
        .unwrap_or_else(|e| panic!("{test}: loss: {e}"))
        .iter()
        .map(|out| values(&out[0]).iter().sum())
        .collect();
    let mut totals = totals.chunks(2);
    for (j, (target, input)) in targets.iter().enumerate() {
        let gradient = values(&interpreted[1 + j]);
        assert_eq!(gradient.len(), base[j].data.len(), "{test}: gradient of '{}'", target.name());
        for (k, &g) in gradient.iter().enumerate() {
            let pair = totals.next().expect("two totals per element");
            let fd = (pair[0] - pair[1]) / (2.0 * STEP);
            let error = (fd - g).abs() / g.abs().max(1.0);
            assert!(
                error <= FD_TOLERANCE,
                "{test}: d/d{}[{k}] (through '{}'): gradient {g}, finite differences {fd}",
                target.name(),
                input.name(),
            );
            report.fd = report.fd.max(error);
            report.elements += 1;
        }
    }
    eprintln!(
        "{test}: {} gradient elements, max finite-difference error {:.1e}, max compiled/interpreted difference {:.1e}",
        report.elements, report.fd, report.compiled
    );
    report
}

#[track_caller]
fn check(test: &str, bounds: &[(&str, i64)], build: impl Fn(&mut Program, Mode) -> Case) -> Report {
    check_with(test, bounds, Vec::new(), build)
}

/// A scalar from `e` with a gradient that differs element by element:
/// the sum over every axis of `e * tanh(e) + 0.3 * e`.
#[track_caller]
fn scalarize(e: &Expr) -> Expr {
    let mut s = e * &e.tanh() + e * 0.3;
    while s.rank() > 0 {
        s = s.sum(0);
    }
    s
}

/// `loss[t] = scalarize(value)` over the reader's domain `dims`.
#[track_caller]
fn loss_of(p: &mut Program, dims: &[&tempo::Dim], value: Expr) -> Tensor {
    let loss = p.tensor("loss", dims, f64s(&[]));
    p.otherwise(&loss, scalarize(&value));
    loss
}

fn scalar() -> tempo::PointType {
    f64s(&[])
}

// ---------------------------------------------------------------------------
// Ops.

#[test]
fn unary_math_ops() {
    check("unary", &[("T", 3)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[4]));
        let v = x.here();
        let positive = &v * &v + 0.5;
        let value = v.exp() * 0.5
            + positive.log()
            + positive.sqrt()
            + v.tanh()
            + (&v * 2.0).sigmoid()
            + v.relu()
            + v.sin()
            + v.cos()
            + (&v + 0.05).abs()
            + -&v * &v;
        let loss = loss_of(p, &[&t], value);
        Case::new(&loss, &[&x])
    });
}

#[test]
fn each_unary_op_alone() {
    // Each op on its own, so a wrong rule cannot hide behind another.
    type Op = fn(&Expr) -> Expr;
    let ops: [(&str, Op); 12] = [
        ("exp", |v| v.exp()),
        ("log", |v| (v * v + 0.5).log()),
        ("sqrt", |v| (v * v + 0.5).sqrt()),
        ("tanh", |v| v.tanh()),
        ("sigmoid", |v| v.sigmoid()),
        ("relu", |v| v.relu()),
        ("sin", |v| v.sin()),
        ("cos", |v| v.cos()),
        ("abs", |v| v.abs()),
        ("neg", |v| -v),
        ("gelu", |v| v.gelu()),
        ("silu", |v| v.silu()),
    ];
    for (name, op) in ops {
        let report = check(name, &[("T", 2)], |p, _| {
            let t = p.dim("t", "T");
            let x = p.input("x", &[&t], f64s(&[3]));
            let loss = p.tensor("loss", &[&t], scalar());
            p.otherwise(&loss, (op(&x.here()) * &x.here()).sum(0));
            Case::new(&loss, &[&x])
        });
        assert!(report.elements == 6);
    }
}

#[test]
fn float_casts() {
    // Through f32 the finite differences of a 1e-6 step drown in rounding
    // (f32 resolves 6e-8): the gradient of sum(f64(f32(x)) * x) is checked
    // against its value, f32(x) + x with the cotangent x rounded to f32 on
    // its way back through the cast.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f64s(&[3]));
    let loss = p.tensor("loss", &[&t], scalar());
    p.otherwise(&loss, (x.here().cast(ElementType::F32).cast(ElementType::F64) * x.here()).sum(0));
    let g = p.grad("g", &loss, &x);
    p.output(&g);
    let interpreted = p.runner().bound("T", 4).seed(5).interpret().unwrap();
    assert_eq!(interpreted, p.runner().bound("T", 4).seed(5).run().unwrap());
    let x = HostArray::random("x", vec![4, 3], ElementType::F64, 5);
    for (k, &g) in values(&interpreted[0]).iter().enumerate() {
        let v = values(&x)[k];
        let want = (v as f32) as f64 + (v as f32) as f64;
        assert!((g - want).abs() <= 1e-15, "g[{k}] = {g}, want {want}");
    }
}

#[test]
fn binary_ops_and_broadcasting() {
    check("binary", &[("T", 2)], |p, _| {
        let t = p.dim("t", "T");
        let a = p.input("a", &[&t], f64s(&[2, 3]));
        let b = p.input("b", &[&t], f64s(&[2, 3]));
        let s = p.input("s", &[], scalar()); // a scalar broadcast to [2, 3]
        let row = p.input("row", &[], f64s(&[1, 3])); // [1, 3] against [2, 3]
        let col = p.input("col", &[&t], f64s(&[2, 1]));
        let (va, vb, vs, vrow, vcol) = (a.here(), b.here(), s.here(), row.here(), col.here());
        let denominator = &vb * &vb + 0.5;
        let value = &va
            + &vb
            + (&va - &vrow) * &vs
            + &va / &denominator
            + &vrow / (&vs * &vs + 1.0)
            + &vcol * &vrow
            + (&va * &vcol - &vs)
            + &vs / (&va * &va + 1.0);
        let loss = loss_of(p, &[&t], value);
        Case::new(&loss, &[&a, &b, &s, &row, &col])
    });
}

#[test]
fn maximum_minimum_and_pow() {
    check("max/min", &[("T", 3)], |p, _| {
        let t = p.dim("t", "T");
        let a = p.input("a", &[&t], f64s(&[4]));
        let b = p.input("b", &[&t], f64s(&[4]));
        let s = p.input("s", &[], scalar());
        let value = a.here().max(&b.here()) * 1.5 + a.here().min(&b.here()).tanh() + a.here().max(&s.here());
        let loss = loss_of(p, &[&t], value);
        Case::new(&loss, &[&a, &b, &s])
    });
    check("pow", &[("T", 3)], |p, _| {
        let t = p.dim("t", "T");
        let base = p.input("base", &[&t], f64s(&[3]));
        let exponent = p.input("exponent", &[&t], f64s(&[3]));
        let s = p.input("s", &[], scalar());
        let positive = base.here() * base.here() + 0.5;
        let value =
            positive.pow(&exponent.here()) + positive.pow(&s.here()) + positive.pow(&Expr::splat(3.0, scalar()));
        let loss = loss_of(p, &[&t], value);
        Case::new(&loss, &[&base, &exponent, &s])
    });
}

#[test]
fn select_passes_the_gradient_to_the_chosen_operand() {
    check("select", &[("T", 3)], |p, _| {
        let t = p.dim("t", "T");
        let a = p.input("a", &[&t], f64s(&[5]));
        let b = p.input("b", &[&t], f64s(&[5]));
        let c = p.input("c", &[&t], f64s(&[5]));
        let chosen = a.here().greater(&b.here()).select(&(a.here() * c.here()), &b.here().sin());
        let clipped = c.here().less(&Expr::splat(0.0, scalar())).select(&Expr::splat(0.25, scalar()), &c.here());
        let loss = loss_of(p, &[&t], chosen + clipped);
        Case::new(&loss, &[&a, &b, &c])
    });
}

#[test]
fn reductions_along_each_axis() {
    check("sum/mean/max", &[("T", 2)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[2, 3, 4]));
        let v = x.here();
        let mut total = Expr::splat(0.0, scalar());
        for axis in 0..3 {
            total = total + scalarize(&v.sum(axis)) + scalarize(&v.mean(axis)) + scalarize(&v.max_along(axis));
        }
        // Keep-dims forms and softmax (max and sum with the axis kept).
        total = total + scalarize(&(&v / &v.sum_keepdims(2).abs())) + scalarize(&v.softmax_along(1));
        total = total + scalarize(&v.layer_norm(1e-5));
        let loss = p.tensor("loss", &[&t], scalar());
        p.otherwise(&loss, total);
        Case::new(&loss, &[&x])
    });
}

#[test]
fn cumsum_along_each_axis() {
    check("cumsum", &[("T", 2)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[3, 4]));
        let value = x.here().cumsum(0) + x.here().cumsum(1).sin();
        let loss = loss_of(p, &[&t], value);
        Case::new(&loss, &[&x])
    });
}

#[test]
fn matmul_in_every_rank_combination() {
    let combos: [(&[i64], &[i64]); 8] = [
        (&[2, 3], &[3, 4]),
        (&[2, 3], &[3]),
        (&[3], &[3, 4]),
        (&[2, 2, 3], &[2, 3, 4]),
        (&[2, 2, 3], &[3, 4]),
        (&[2, 3], &[2, 3, 4]),
        (&[2, 1, 2, 3], &[3, 3, 2]),
        (&[1, 3], &[3, 1]),
    ];
    for (a_shape, b_shape) in combos {
        check(&format!("matmul {a_shape:?} x {b_shape:?}"), &[("T", 2)], |p, _| {
            let t = p.dim("t", "T");
            let a = p.input("a", &[&t], f64s(a_shape));
            let b = p.input("b", &[], f64s(b_shape));
            let loss = loss_of(p, &[&t], a.here().matmul(&b.here()));
            Case::new(&loss, &[&a, &b])
        });
    }
}

#[test]
fn einsum_specs() {
    let specs: [(&str, &[i64], &[i64]); 6] = [
        ("ij,jk->ik", &[2, 3], &[3, 2]),
        ("bij,bjk->bik", &[2, 2, 3], &[2, 3, 2]),
        ("i,j->ij", &[3], &[2]),
        ("hqd,nhd->hqn", &[2, 1, 3], &[4, 2, 3]),
        ("ij,ij->i", &[2, 3], &[2, 3]),
        ("ij,kj->ki", &[2, 3], &[2, 3]),
    ];
    for (spec, a_shape, b_shape) in specs {
        check(&format!("einsum {spec}"), &[("T", 2)], |p, _| {
            let t = p.dim("t", "T");
            let a = p.input("a", &[&t], f64s(a_shape));
            let b = p.input("b", &[], f64s(b_shape));
            let loss = loss_of(p, &[&t], Expr::einsum(spec, &[&a.here(), &b.here()]));
            Case::new(&loss, &[&a, &b])
        });
    }
    for spec in ["ij->ji"] {
        check(&format!("einsum {spec}"), &[("T", 2)], |p, _| {
            let t = p.dim("t", "T");
            let a = p.input("a", &[&t], f64s(&[2, 3]));
            let loss = loss_of(p, &[&t], Expr::einsum(spec, &[&a.here()]));
            Case::new(&loss, &[&a])
        });
    }
}

#[test]
fn einsum_summing_a_label_of_one_operand() {
    for spec in ["ij->j", "ij->", "ij,jk->k"] {
        check(&format!("einsum {spec}"), &[("T", 2)], |p, _| {
            let t = p.dim("t", "T");
            let a = p.input("a", &[&t], f64s(&[2, 3]));
            let b = p.input("b", &[], f64s(&[3, 2]));
            let value = match spec {
                "ij,jk->k" => Expr::einsum(spec, &[&a.here(), &b.here()]),
                _ => Expr::einsum(spec, &[&a.here()]),
            };
            let loss = loss_of(p, &[&t], value);
            Case::new(&loss, &[&a, &b])
        });
    }
}

#[test]
fn movement_ops() {
    check("permute/flip/reshape/expand", &[("T", 2)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[2, 3, 4]));
        let r = p.input("r", &[], f64s(&[1, 4]));
        let v = x.here();
        let value = scalarize(&v.permute(&[2, 0, 1]).flip(1))
            + scalarize(&(v.flip(2) * Expr::arange(4, ElementType::F64)))
            + scalarize(&v.reshape(&[6, 4]).permute(&[1, 0]).sin())
            + scalarize(&r.here().expand(&[3, 4]).cumsum(0))
            + scalarize(&v.reshape(&[24]));
        let loss = p.tensor("loss", &[&t], scalar());
        p.otherwise(&loss, value);
        Case::new(&loss, &[&x, &r])
    });
    check("slice/concat", &[("T", 2)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[3, 4]));
        let y = p.input("y", &[&t], f64s(&[2, 4]));
        let v = x.here();
        let sliced = v.slice(&[1, 1], &[2, 2]);
        let joined = v.concat(&y.here(), 0).sin(); // [5, 4]
        let side = v.slice(&[0, 0], &[3, 1]).concat(&v.slice(&[0, 2], &[3, 2]), 1); // [3, 3]
        let value = scalarize(&sliced) + scalarize(&joined) + scalarize(&side);
        let loss = p.tensor("loss", &[&t], scalar());
        p.otherwise(&loss, value);
        Case::new(&loss, &[&x, &y])
    });
}

#[test]
fn gather_scatters_and_adds_over_repeated_indices() {
    let tokens = HostArray {
        name: "tokens".into(),
        shape: vec![3, 4],
        data: Data::I64(vec![1, 3, 1, 1, 0, 4, 4, 2, 3, 3, 3, 1]),
    };
    check_with("gather", &[("T", 3)], vec![tokens], |p, _| {
        let t = p.dim("t", "T");
        let tokens = p.input("tokens", &[&t], i64s(&[4]));
        let table = p.input("table", &[], f64s(&[6, 3])); // row 5 never read: zero gradient
        let rows = table.here().gather(&tokens.here()); // [4, 3]
        let loss = loss_of(p, &[&t], rows);
        Case::new(&loss, &[&table])
    });
}

// ---------------------------------------------------------------------------
// Read forms.

#[test]
fn previous_point_and_recurrence() {
    check("t-1", &[("T", 5)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[3]));
        let y = p.tensor("y", &[&t], f64s(&[3]));
        p.define(&y, t.eq(0), x.here().sin());
        p.otherwise(&y, x.here() * x.at([&t - 1]).tanh());
        // A recurrence: s[t] = tanh(s[t-1]) * y[t] + x[t - 1].
        let s = p.tensor("s", &[&t], f64s(&[3]));
        p.define(&s, t.eq(0), y.here());
        p.otherwise(&s, s.at([&t - 1]).tanh() * y.here() + x.at([&t - 1]));
        let loss = loss_of(p, &[&t], s.here());
        Case::new(&loss, &[&x])
    });
}

#[test]
fn future_reads_and_discounted_returns() {
    check("t+1, returns", &[("T", 6)], |p, _| {
        let t = p.dim("t", "T");
        let r = p.input("r", &[&t], scalar());
        let v = p.input("v", &[&t], scalar());
        // G[T-1] = r[T-1]; G[t] = r[t] + 0.9 G[t+1] (a backward recurrence).
        let g = p.tensor("G", &[&t], scalar());
        p.define(&g, t.eq(t.bound() - 1), r.here());
        p.otherwise(&g, r.here() + g.at([&t + 1]) * 0.9);
        // A one-step lookahead: TD error r[t] + 0.9 v[t+1] - v[t].
        let td = p.tensor("td", &[&t], scalar());
        p.define(&td, t.eq(t.bound() - 1), r.here() - v.here());
        p.otherwise(&td, r.here() + v.at([&t + 1]) * 0.9 - v.here());
        let loss = p.tensor("loss", &[&t], scalar());
        let advantage = g.here() - v.here();
        p.otherwise(&loss, &advantage * &advantage * 0.5 + td.here() * td.here() + g.here().sin());
        Case::new(&loss, &[&r, &v])
    });
}

#[test]
fn reversed_and_strided_reads() {
    check("T-1-t", &[("T", 5)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[2]));
        let y = p.tensor("y", &[&t], f64s(&[2]));
        p.otherwise(&y, x.at([t.bound() - 1 - t.var()]) * x.here().tanh());
        let loss = loss_of(p, &[&t], y.here());
        Case::new(&loss, &[&x])
    });
    check("2t", &[("T", 7)], |p, _| {
        // y[t] = x[2t] * sin(x[2t+1]) where 2t + 1 < T, else 0.5 x[t];
        // z[t] = exp(x[2t]) where 2t < T: even points read by both.
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[2]));
        let y = p.tensor("y", &[&t], f64s(&[2]));
        p.define(&y, (t.var() * 2 + 1).lt(t.bound()), x.at([&t * 2]) * x.at([&t * 2 + 1]).sin());
        p.otherwise(&y, x.here() * 0.5);
        let z = p.tensor("z", &[&t], f64s(&[2]));
        p.define(&z, (t.var() * 2).lt(t.bound()), x.at([&t * 2]).exp());
        p.otherwise(&z, Expr::splat(1.0, f64s(&[2])));
        let loss = loss_of(p, &[&t], y.here() + z.here());
        Case::new(&loss, &[&x])
    });
}

#[test]
fn reads_with_floordiv_and_mod() {
    check("t floordiv 2, (T-1-t) floordiv 3", &[("T", 7), ("H", 4)], |p, _| {
        let t = p.dim("t", "T");
        let h = p.dim("h", "H");
        let x = p.input("x", &[&h], f64s(&[2]));
        let y = p.tensor("y", &[&t], f64s(&[2]));
        let pairs = x.at([t.var().floordiv(2)]);
        let back = x.at([(t.bound() - 1 - t.var()).floordiv(3)]);
        p.otherwise(&y, pairs.sin() * back);
        let loss = loss_of(p, &[&t], y.here());
        Case::new(&loss, &[&x])
    });
    check("t mod 3, (t + 1) mod 2", &[("T", 7), ("H", 3)], |p, _| {
        let t = p.dim("t", "T");
        let h = p.dim("h", "H");
        let x = p.input("x", &[&h], f64s(&[2]));
        let y = p.tensor("y", &[&t], f64s(&[2]));
        p.otherwise(&y, x.at([t.var().modulo(3)]).tanh() * x.at([(t.var() + 1).modulo(2)]));
        let loss = loss_of(p, &[&t], y.here());
        Case::new(&loss, &[&x])
    });
}

#[test]
fn dynamic_slices() {
    check("slice_at([t], [3]) and a 2-D box", &[("T", 5)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[], f64s(&[7]));
        let m = p.input("m", &[], f64s(&[4, 6]));
        let y = p.tensor("y", &[&t], f64s(&[3]));
        let window = x.here().slice_at([t.var()], &[3]);
        let block = m.here().slice_at([t.var().floordiv(2), t.var()], &[2, 2]);
        p.otherwise(&y, window.exp() * block.sum(0).sum(0) + window);
        let loss = loss_of(p, &[&t], y.here());
        Case::new(&loss, &[&x, &m])
    });
}

#[test]
fn clamped_reads() {
    check("min(t+3, T-1), max(t-2, 0)", &[("T", 6)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[2]));
        let ahead = x.read_box([(&t, Coordinate::min(&t + 3, t.bound() - 1))]);
        let behind = x.read_box([(&t, Coordinate::max(&t - 2, 0))]);
        let loss = loss_of(p, &[&t], ahead * behind.tanh() + x.here());
        Case::new(&loss, &[&x])
    });
    check("clamped recurrence", &[("T", 5)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], scalar());
        let z = p.tensor("z", &[&t], scalar());
        p.define(&z, t.eq(0), x.here());
        p.otherwise(&z, z.at([&t - 1]).sin() + x.here());
        let w = p.tensor("w", &[&t], scalar());
        let ahead = z.read_box([(&t, Coordinate::min(&t + 1, t.bound() - 1))]);
        let behind = z.read_box([(&t, Coordinate::clamp(&t - 3, 0, t.bound() - 1))]);
        p.otherwise(&w, ahead * behind);
        let loss = loss_of(p, &[&t], w.here());
        Case::new(&loss, &[&x])
    });
}

#[test]
fn weight_without_domain_read_at_every_step() {
    check("weight", &[("T", 5)], |p, _| {
        let t = p.dim("t", "T");
        let w = p.input("w", &[], f64s(&[3, 2]));
        let b = p.input("b", &[], f64s(&[3]));
        let x = p.input("x", &[&t], f64s(&[2]));
        let loss = loss_of(p, &[&t], (w.here().matmul(&x.here()) + b.here()).tanh());
        Case::new(&loss, &[&w, &b, &x])
    });
}

#[test]
fn conditional_branches_pass_the_gradient_to_the_defining_branch_only() {
    check("branches", &[("T", 6)], |p, _| {
        let t = p.dim("t", "T");
        let a = p.input("a", &[&t], f64s(&[2]));
        let b = p.input("b", &[&t], f64s(&[2]));
        let c = p.input("c", &[], f64s(&[2]));
        let y = p.tensor("y", &[&t], f64s(&[2]));
        p.define(&y, t.lt(2), a.here().sin() * c.here());
        p.define(&y, t.eq(t.bound() - 1), b.here() * a.at([&t - 1]));
        p.define(&y, (t.var() % 2).eq(0), b.here().tanh() + c.here());
        p.otherwise(&y, a.here() * b.here());
        let loss = loss_of(p, &[&t], y.here());
        Case::new(&loss, &[&a, &b, &c])
    });
}

#[test]
fn several_reads_of_one_point_add_up() {
    check("several reads", &[("T", 4)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[3]));
        let y = p.tensor("y", &[&t], f64s(&[3]));
        // Two reads of x[t] in one branch and one of x[t-1], and x's
        // points read by another tensor too.
        p.define(&y, t.eq(0), x.here() * x.here());
        p.otherwise(&y, x.here() * x.here() + x.here().sin() + x.at([&t - 1]) * x.here());
        let z = p.tensor("z", &[&t], f64s(&[3]));
        p.otherwise(&z, y.here() * x.here() + y.here().cos());
        let loss = loss_of(p, &[&t], z.here() + y.here());
        Case::new(&loss, &[&x])
    });
}

#[test]
fn two_dimensional_domains() {
    check("(b, t)", &[("B", 3), ("T", 4)], |p, _| {
        let b = p.dim("b", "B");
        let t = p.dim("t", "T");
        let x = p.input("x", &[&b, &t], f64s(&[2]));
        let w = p.input("w", &[], f64s(&[2, 2]));
        let u = p.input("u", &[&b], f64s(&[2]));
        // h[b, t] = tanh(w h[b, t-1] + x[b, t] + u[b]): a recurrence along t per b.
        let h = p.tensor("h", &[&b, &t], f64s(&[2]));
        p.define(&h, t.eq(0), (x.here() + u.here()).tanh());
        p.otherwise(&h, (w.here().matmul(&h.at_dims([(&t, &t - 1)])) + x.here() + u.here()).tanh());
        // A read across the batch: y[b, t] = h[b, t] * h[B-1-b, T-1-t].
        let y = p.tensor("y", &[&b, &t], f64s(&[2]));
        p.otherwise(&y, h.here() * h.at([b.bound() - 1 - b.var(), t.bound() - 1 - t.var()]));
        let loss = loss_of(p, &[&b, &t], y.here());
        Case::new(&loss, &[&x, &w, &u])
    });
    check("loss over b only", &[("B", 3), ("T", 3)], |p, _| {
        let b = p.dim("b", "B");
        let t = p.dim("t", "T");
        let x = p.input("x", &[&b, &t], scalar());
        let s = p.tensor("s", &[&b, &t], scalar());
        p.define(&s, t.eq(0), x.here());
        p.otherwise(&s, s.at_dims([(&t, &t - 1)]) * x.here().cos() + x.here());
        // The loss reads the last step of each row.
        let loss = p.tensor("loss", &[&b], scalar());
        p.otherwise(&loss, s.at_dims([(&t, t.bound() - 1)]).sin());
        Case::new(&loss, &[&x])
    });
}

#[test]
fn gradient_with_respect_to_a_computed_tensor() {
    check("computed wrt", &[("T", 5)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[2]));
        let d = p.input("d", &[&t], f64s(&[2]));
        // h[t] = tanh(h[t-1]) * x[t] + d[t]: the gradient with respect to
        // h[q] includes h's own future.
        let h = p.tensor("h", &[&t], f64s(&[2]));
        p.define(&h, t.eq(0), x.here() + d.here());
        p.otherwise(&h, h.at([&t - 1]).tanh() * x.here() + d.here());
        let loss = loss_of(p, &[&t], h.here());
        Case { of: loss, wrt: vec![x], through: vec![(h, d)] }
    });
}

#[test]
fn no_path_gives_zero() {
    let report = check("no path", &[("T", 3)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[2]));
        let unused = p.input("unused", &[], f64s(&[2]));
        let cut = p.input("cut", &[&t], f64s(&[2]));
        // cut reaches the loss only through a comparison and argmax.
        let index = cut.here().argmax(0).cast(ElementType::F64);
        let positive = cut.here().greater(&Expr::splat(0.0, scalar())).cast(ElementType::F64);
        let loss = loss_of(p, &[&t], x.here() * index + positive);
        Case::new(&loss, &[&x, &unused, &cut])
    });
    assert_eq!(report.elements, 6 + 2 + 6);
}

// ---------------------------------------------------------------------------
// Whole programs.

#[test]
fn rnn_back_propagation_through_time() {
    check("RNN", &[("T", 6)], |p, _| {
        let t = p.dim("t", "T");
        let w = p.input("W", &[], f64s(&[4, 4]));
        let u = p.input("U", &[], f64s(&[4, 3]));
        let v = p.input("V", &[], f64s(&[2, 4]));
        let x = p.input("x", &[&t], f64s(&[3]));
        let target = p.input("target", &[&t], f64s(&[2]));
        let h = p.tensor("h", &[&t], f64s(&[4]));
        p.define(&h, t.eq(0), u.here().matmul(&x.here()).tanh());
        p.otherwise(&h, (w.here().matmul(&h.at([&t - 1])) + u.here().matmul(&x.here())).tanh());
        let loss = p.tensor("loss", &[&t], scalar());
        let error = v.here().matmul(&h.here()) - target.here();
        p.otherwise(&loss, (&error * &error).sum(0));
        Case::new(&loss, &[&w, &u, &v, &x])
    });
}

#[test]
fn lstm_back_propagation_through_time() {
    const H: i64 = 3;
    const X: i64 = 2;
    check("LSTM", &[("T", 5)], |p, _| {
        let t = p.dim("t", "T");
        let wx = p.input("Wx", &[], f64s(&[X, 4 * H]));
        let wh = p.input("Wh", &[], f64s(&[H, 4 * H]));
        let bias = p.input("bias", &[], f64s(&[4 * H]));
        let x = p.input("x", &[&t], f64s(&[X]));
        let h = p.tensor("h", &[&t], f64s(&[H]));
        let c = p.tensor("c", &[&t], f64s(&[H]));
        let gates_from = |previous: Option<Expr>| {
            let z = x.here().matmul(&wx.here()) + bias.here();
            let z = match previous {
                Some(h) => z + h.matmul(&wh.here()),
                None => z,
            };
            let gate = |k: i64| z.slice(&[k * H], &[H]);
            (gate(0).sigmoid(), gate(1).sigmoid(), gate(2).tanh(), gate(3).sigmoid())
        };
        let (i0, _, g0, o0) = gates_from(None);
        p.define(&c, t.eq(0), &i0 * &g0);
        p.define(&h, t.eq(0), o0 * (i0 * g0).tanh());
        let (i, f, g, o) = gates_from(Some(h.at([&t - 1])));
        p.otherwise(&c, f * c.at([&t - 1]) + i * g);
        p.otherwise(&h, o * c.here().tanh());
        let loss = p.tensor("loss", &[&t], scalar());
        p.otherwise(&loss, (h.here() * h.here()).sum(0) + h.here().sum(0));
        Case::new(&loss, &[&wx, &wh, &bias, &x])
    });
}

#[test]
fn stop_gradient_leaves_the_partial_gradient() {
    // loss[t] = sum(x[t] * stop_gradient(tanh(W x[t]))) + sum(W x[t]):
    // the gradient treats the stopped value as a constant. The finite
    // differences compute it from a frozen copy of the inputs, which the
    // perturbations do not move.
    let frozen = |name: &str, shape: Vec<usize>| {
        let mut a = HostArray::random(name, shape, ElementType::F64, 11 ^ 0x5eed);
        a.name = format!("{name}_frozen");
        a
    };
    let given = vec![frozen("x", vec![4, 3]), frozen("W", vec![3, 3])];
    check_with("stop_gradient", &[("T", 4)], given, |p, mode| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[3]));
        let w = p.input("W", &[], f64s(&[3, 3]));
        let x_frozen = p.input("x_frozen", &[&t], f64s(&[3]));
        let w_frozen = p.input("W_frozen", &[], f64s(&[3, 3]));
        let stopped = match mode {
            Mode::Gradients => w.here().matmul(&x.here()).tanh().stop_gradient(),
            Mode::Loss => w_frozen.here().matmul(&x_frozen.here()).tanh(),
        };
        let loss = p.tensor("loss", &[&t], scalar());
        p.otherwise(&loss, (x.here() * stopped).sum(0) + w.here().matmul(&x.here()).sin().sum(0));
        Case::new(&loss, &[&x, &w])
    });
}

// ---------------------------------------------------------------------------
// Range reads.

#[test]
fn prefix_sums_means_and_maxima() {
    check("x[0:t+1] summed", &[("T", 5)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[3]));
        let s = p.tensor("s", &[&t], f64s(&[3]));
        p.otherwise(&s, x.range(0, &t + 1).tanh().sum(0) * x.here());
        let loss = loss_of(p, &[&t], s.here().sin());
        Case::new(&loss, &[&x])
    });
    check("x[0:t+1] mean and max", &[("T", 5)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[2]));
        let m = p.tensor("m", &[&t], f64s(&[2]));
        let prefix = x.range(0, &t + 1);
        p.otherwise(&m, prefix.mean(0) * prefix.max_along(0) + (&prefix * &prefix).sum(0).sqrt());
        let loss = loss_of(p, &[&t], m.here());
        Case::new(&loss, &[&x])
    });
}

#[test]
fn windows_and_future_ranges() {
    check("x[max(0,t-2):t+1]", &[("T", 6)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[2]));
        let w = p.tensor("w", &[&t], f64s(&[2]));
        let window = x.read_box([(&t, Coordinate::clamped(vec![0.into(), (&t - 2).into()], vec![(&t + 1).into()]))]);
        p.otherwise(&w, (window.exp() * x.here()).sum(0));
        let loss = loss_of(p, &[&t], w.here().tanh());
        Case::new(&loss, &[&x])
    });
    check("r[t:T] and r[0:T]", &[("T", 5)], |p, _| {
        let t = p.dim("t", "T");
        let r = p.input("r", &[&t], scalar());
        let v = p.input("v", &[&t], scalar());
        let g = p.tensor("G", &[&t], scalar());
        // Future rewards, and the episode's mean as a baseline.
        p.otherwise(&g, r.range(&t, t.bound()).sum(0) - r.range(0, t.bound()).mean(0));
        let loss = p.tensor("loss", &[&t], scalar());
        let advantage = g.here() - v.here();
        p.otherwise(&loss, &advantage * &advantage);
        Case::new(&loss, &[&r, &v])
    });
}

#[test]
fn causal_attention_over_a_growing_cache() {
    check("softmax(K[0:t+1] q) V[0:t+1]", &[("T", 5)], |p, _| {
        let t = p.dim("t", "T");
        let q = p.input("q", &[&t], f64s(&[4]));
        let k = p.input("k", &[&t], f64s(&[4]));
        let v = p.input("v", &[&t], f64s(&[3]));
        let o = p.tensor("o", &[&t], f64s(&[3]));
        let scores = k.range(0, &t + 1).matmul(&q.here()) * 0.5;
        p.otherwise(&o, scores.softmax_along(0).matmul(&v.range(0, &t + 1)));
        let loss = loss_of(p, &[&t], o.here().tanh());
        Case::new(&loss, &[&q, &k, &v])
    });
    check("heads: einsum hd,lhd->hl", &[("T", 4)], |p, _| {
        let t = p.dim("t", "T");
        let q = p.input("q", &[&t], f64s(&[2, 3]));
        let k = p.input("k", &[&t], f64s(&[2, 3]));
        let v = p.input("v", &[&t], f64s(&[2, 3]));
        let o = p.tensor("o", &[&t], f64s(&[2, 3]));
        let scores = Expr::einsum("hd,lhd->hl", &[&q.here(), &k.range(0, &t + 1)]);
        let weights = scores.softmax_along(1);
        p.otherwise(&o, Expr::einsum("hl,lhd->hd", &[&weights, &v.range(0, &t + 1)]));
        let loss = loss_of(p, &[&t], o.here().sin());
        Case::new(&loss, &[&q, &k, &v])
    });
}

/// The softmax is differentiated as one unit (`dX = P * (dP - sum(P *
/// dP))`); its inner values read elsewhere too (a log-softmax reads the
/// sum and the maximum, a score reads the exponentials) pass their
/// cotangents op by op beside it, in one branch and over a range.
#[test]
fn softmax_units_whose_inner_values_are_read_elsewhere() {
    check("softmax and log-softmax of one x", &[("T", 3)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[2, 4]));
        let xt = x.here();
        let m = xt.max_keepdims(1);
        let e = (&xt - &m).exp();
        let l = e.sum_keepdims(1);
        let softmax = &e / &l;
        let log_softmax = &xt - &m - l.log();
        let loss = loss_of(p, &[&t], &softmax * &xt + log_softmax * 0.25 + e.sin());
        Case::new(&loss, &[&x])
    });
    check("over k[0:t+1], a softmax along another axis than the range's", &[("T", 4)], |p, _| {
        let t = p.dim("t", "T");
        let q = p.input("q", &[&t], f64s(&[2, 3]));
        let k = p.input("k", &[&t], f64s(&[2, 3]));
        let o = p.tensor("o", &[&t], f64s(&[2]));
        // Scores [h, l]; the softmax across the heads h at each key l
        // (elementwise along the range), then summed over the keys.
        let scores = Expr::einsum("hd,lhd->hl", &[&q.here(), &k.range(0, &t + 1)]);
        let weights = scores.softmax_along(0);
        p.otherwise(&o, (&weights * &scores).sum(1));
        let loss = loss_of(p, &[&t], o.here().tanh());
        Case::new(&loss, &[&q, &k])
    });
    check("over k[0:t+1], the sum read by log", &[("T", 4)], |p, _| {
        let t = p.dim("t", "T");
        let q = p.input("q", &[&t], f64s(&[3]));
        let k = p.input("k", &[&t], f64s(&[3]));
        let o = p.tensor("o", &[&t], f64s(&[3]));
        let keys = k.range(0, &t + 1);
        let scores = keys.matmul(&q.here());
        let e = (&scores - &scores.max_keepdims(0)).exp();
        let l = e.sum_keepdims(0);
        p.otherwise(&o, (&e / &l).matmul(&keys) + l.log() * 0.5);
        let loss = loss_of(p, &[&t], o.here().tanh());
        Case::new(&loss, &[&q, &k])
    });
}

#[test]
fn attention_over_computed_keys_reaches_the_weights() {
    check("h = tanh(x W); attention over h[0:t+1]", &[("T", 4)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[3]));
        let w = p.input("W", &[], f64s(&[3, 3]));
        let h = p.tensor("h", &[&t], f64s(&[3]));
        p.otherwise(&h, x.here().matmul(&w.here()).tanh());
        let o = p.tensor("o", &[&t], f64s(&[3]));
        let keys = h.range(0, &t + 1);
        p.otherwise(&o, keys.matmul(&h.here()).softmax_along(0).matmul(&keys));
        let loss = loss_of(p, &[&t], o.here());
        Case::new(&loss, &[&x, &w])
    });
}

#[test]
fn ranges_over_a_batch_and_under_branch_conditions() {
    check("x[b, 0:t+1] over (b, t)", &[("B", 2), ("T", 4)], |p, _| {
        let b = p.dim("b", "B");
        let t = p.dim("t", "T");
        let x = p.input("x", &[&b, &t], f64s(&[2]));
        let y = p.tensor("y", &[&b, &t], f64s(&[2]));
        p.otherwise(&y, x.read_box([(&t, Coordinate::range(0, &t + 1))]).exp().sum(0).log());
        let loss = loss_of(p, &[&b, &t], y.here());
        Case::new(&loss, &[&x])
    });
    check("branches: t == 0, t == 2, x[0:t] otherwise", &[("T", 6)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[2]));
        let y = p.tensor("y", &[&t], f64s(&[2]));
        p.define(&y, t.eq(0), x.here() * 2.0);
        p.define(&y, t.eq(2), x.range(0, &t + 1).sum(0).sin());
        p.otherwise(&y, x.range(0, &t).max_along(0) * x.here());
        let loss = loss_of(p, &[&t], y.here());
        Case::new(&loss, &[&x])
    });
}

#[test]
fn attention_over_a_recurrence_back_propagates_through_time() {
    check("h[t] = tanh(h[t-1] W + x[t]); attention over h[0:t+1]", &[("T", 5)], |p, _| {
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[3]));
        let w = p.input("W", &[], f64s(&[3, 3]));
        let h = p.tensor("h", &[&t], f64s(&[3]));
        p.define(&h, t.eq(0), x.here().tanh());
        p.otherwise(&h, (h.at([&t - 1]).matmul(&w.here()) + x.here()).tanh());
        let o = p.tensor("o", &[&t], f64s(&[3]));
        let keys = h.range(0, &t + 1);
        p.otherwise(&o, keys.matmul(&x.here()).softmax_along(0).matmul(&keys) + h.here());
        let loss = loss_of(p, &[&t], o.here().sin());
        Case::new(&loss, &[&x, &w])
    });
}

#[test]
fn gpt_block_with_causal_attention() {
    check("GPT block", &[("T", 4)], |p, _| {
        const D: i64 = 4;
        let t = p.dim("t", "T");
        let x = p.input("x", &[&t], f64s(&[D]));
        let wq = p.input("Wq", &[], f64s(&[D, D]));
        let wk = p.input("Wk", &[], f64s(&[D, D]));
        let wv = p.input("Wv", &[], f64s(&[D, D]));
        let w1 = p.input("W1", &[], f64s(&[D, 2 * D]));
        let w2 = p.input("W2", &[], f64s(&[2 * D, D]));
        let n = p.tensor("n", &[&t], f64s(&[D]));
        p.otherwise(&n, x.here().layer_norm(1e-5));
        let k = p.tensor("k", &[&t], f64s(&[2, 2]));
        let v = p.tensor("v", &[&t], f64s(&[2, 2]));
        p.otherwise(&k, n.here().matmul(&wk.here()).reshape(&[2, 2]));
        p.otherwise(&v, n.here().matmul(&wv.here()).reshape(&[2, 2]));
        let q = n.here().matmul(&wq.here()).reshape(&[2, 2]);
        let scores = Expr::einsum("hd,lhd->hl", &[&q, &k.range(0, &t + 1)]) * 0.7;
        let attended = Expr::einsum("hl,lhd->hd", &[&scores.softmax_along(1), &v.range(0, &t + 1)]);
        let a = p.tensor("a", &[&t], f64s(&[D]));
        p.otherwise(&a, attended.reshape(&[D]) + x.here());
        let hidden = a.here().layer_norm(1e-5).matmul(&w1.here());
        let gelu = &hidden * &(&hidden * 1.702).sigmoid();
        let out = p.tensor("out", &[&t], f64s(&[D]));
        p.otherwise(&out, gelu.matmul(&w2.here()) + a.here());
        let loss = loss_of(p, &[&t], out.here().tanh());
        Case::new(&loss, &[&x, &wq, &wk, &wv, &w1, &w2])
    });
}

// ---------------------------------------------------------------------------
// What is not differentiable yet.

#[test]
fn a_range_read_the_element_frame_cannot_follow_is_a_located_error() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f64s(&[]));
    let s = p.tensor("s", &[&t], f64s(&[]));
    let line = line!() + 1;
    let running = x.range(0, &t + 1).cumsum(0);
    p.otherwise(&s, running.sum(0));
    let g = p.grad("g", &s, &x);
    p.output(&g);
    for result in [p.runner().bound("T", 4).seed(1).interpret(), p.runner().bound("T", 4).seed(1).run()] {
        let error = result.unwrap_err().to_string();
        assert!(error.contains(&format!("tests/gradients.rs:{line}:")), "{error}");
        assert!(
            error.contains("no gradient through this read of a range of 'x' yet: a running sum along the range"),
            "{error}"
        );
    }
}
