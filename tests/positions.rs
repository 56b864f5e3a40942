//! A dimension's position and bound as values (`Dim::position`,
//! `Dim::bound_value`): rotary-style angles from the step, `1 / T`, over
//! two dimensions, compiled bit-exact with the interpreter; a position
//! along a dimension the reader does not have is refused at its line. The
//! process's rank, the world size and all-reduces are values too.

use tempo::{Data, ElementType, HostArray, Program, f32s, i64s};

#[test]
fn positions_and_bounds_are_values() {
    let mut p = Program::new();
    let b = p.dim("b", "B");
    let t = p.dim("t", "T");
    let x = p.input("x", &[&b, &t], f32s(&[4]));
    let y = p.tensor("y", &[&b, &t], f32s(&[4]));
    let k = p.tensor("k", &[&b, &t], i64s(&[]));
    // y[b, t] = x[b, t] * cos(0.5 t) / T + b
    let angle = t.position(ElementType::F32) * 0.5;
    p.otherwise(&y, x.here() * angle.cos() / t.bound_value(ElementType::F32) + b.position(ElementType::F32));
    // k[b, t] = 100 b + t, from integer positions
    p.otherwise(&k, 100 * b.position(ElementType::I64) + t.position(ElementType::I64));
    p.output(&y);
    p.output(&k);
    let (batches, steps) = (3usize, 5usize);
    let values: Vec<f32> = (0..batches * steps * 4).map(|i| (i as f32 * 0.31).sin()).collect();
    let input = HostArray { name: "x".into(), shape: vec![batches, steps, 4], data: Data::F32(values.clone()) };
    let runner = || p.runner().bound("B", batches as i64).bound("T", steps as i64).input(input.clone());
    let compiled = runner().run().unwrap();
    let interpreted = runner().interpret().unwrap();
    assert_eq!(compiled[0].data, interpreted[0].data);
    assert_eq!(compiled[1].data, interpreted[1].data);
    let Data::F32(y) = &compiled[0].data else { panic!("f32") };
    for bi in 0..batches {
        for ti in 0..steps {
            for e in 0..4 {
                let at = (bi * steps + ti) * 4 + e;
                let want = values[at] * (ti as f32 * 0.5).cos() / steps as f32 + bi as f32;
                assert!((y[at] - want).abs() < 1e-6, "y[{bi}, {ti}, {e}] = {} not {want}", y[at]);
            }
        }
    }
    let want: Vec<i64> = (0..batches).flat_map(|bi| (0..steps).map(move |ti| 100 * bi as i64 + ti as i64)).collect();
    assert_eq!(compiled[1].data, Data::I64(want));
}

#[test]
fn a_position_needs_the_dimension_in_the_domain() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let l = p.dim("l", "L");
    let y = p.tensor("y", &[&t], i64s(&[]));
    let line = line!() + 1;
    p.otherwise(&y, l.position(ElementType::I64));
    p.output(&y);
    let error = p.runner().bound("T", 2).bound("L", 2).run().unwrap_err().to_string();
    assert!(error.contains(&format!("tests/positions.rs:{line}:")), "{error}");
    assert!(error.contains("position along 'l' in a definition of 'y', whose domain does not have it"), "{error}");
}

/// The processes of a run through the Rust API: `Expr::process_rank`,
/// `Expr::world_size` and `Expr::all_reduce` build `temporal.rank`,
/// `temporal.world_size` and `temporal.all_reduce`; in one process (no
/// mpirun) the rank is 0, the world size 1 and an all-reduce its operand,
/// compiled as interpreted. (Across processes: the lit test
/// test/tools/tempo-run/mpi-two-processes.mlir.)
#[test]
fn rank_world_size_and_all_reduce_are_values() {
    use tempo::{Collective, Expr};
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[4]));
    let y = p.tensor("y", &[&t], f32s(&[4]));
    let k = p.tensor("k", &[], i64s(&[]));
    let rank = Expr::process_rank(ElementType::F32);
    p.otherwise(&y, (x.here() + rank).all_reduce(Collective::Mean) * 2.0);
    p.otherwise(&k, Expr::world_size(ElementType::I64) * 10 + Expr::process_rank(ElementType::I64));
    p.output(&y);
    p.output(&k);
    let values: Vec<f32> = (0..12).map(|i| (i as f32 * 0.7).sin()).collect();
    let input = HostArray { name: "x".into(), shape: vec![3, 4], data: Data::F32(values.clone()) };
    let runner = || p.runner().bound("T", 3).input(input.clone());
    let compiled = runner().run().unwrap();
    let interpreted = runner().interpret().unwrap();
    assert_eq!(compiled[0].data, interpreted[0].data);
    assert_eq!(compiled[0].data, Data::F32(values.iter().map(|v| v * 2.0).collect()));
    assert_eq!(compiled[1].data, Data::I64(vec![10]));
    assert_eq!(interpreted[1].data, Data::I64(vec![10]));
}

#[test]
fn an_all_reduce_mean_of_integers_is_refused_at_its_line() {
    use tempo::Collective;
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], i64s(&[2]));
    let y = p.tensor("y", &[&t], i64s(&[2]));
    let line = line!() + 1;
    p.otherwise(&y, x.here().all_reduce(Collective::Mean));
    p.output(&y);
    let error = p.runner().bound("T", 2).seed(1).run().unwrap_err().to_string();
    assert!(error.contains(&format!("tests/positions.rs:{line}:")), "{error}");
    assert!(error.contains("temporal.all_reduce \"mean\" needs floats, got tensor<2xi64>"), "{error}");
}
