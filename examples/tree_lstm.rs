//! A TreeLSTM (Tai et al. 2015, binary) over a batch of random binary
//! trees, as one temporal program over a node dimension `n`: the children
//! of node `n` are read through data, `s[left[n]]` and `s[right[n]]`, so
//! the tree's shape is an input and the order of the nodes is the data's.
//!
//! ```text
//! s[n] = (h, c) of leaf n                          n < NL
//!        z = x[n] W + bw;  i, o, u = split(z)
//!        c = sigmoid(i) tanh(u);  h = sigmoid(o) tanh(c)
//!      = (h, c) of the node over s[left[n]], s[right[n]]     otherwise
//!        z = [h_l, h_r] U + bu;  i, f_l, f_r, o, u = split(z)
//!        c = sigmoid(i) tanh(u) + sigmoid(f_l) c_l + sigmoid(f_r) c_r
//!        h = sigmoid(o) tanh(c)
//! ```
//!
//! The nodes of all trees of a batch are numbered together: every leaf
//! first (`0 .. NL`), then the internal nodes; a child may have any number
//! (the compiled code orders the nodes by depth at run time and computes
//! every node of one depth, across all trees, together).
//!
//! ```text
//! cargo run --release --example tree_lstm -- [--trees B] [--hidden H]
//!     [--seed S] [--repeat R] [--fast-math] [--mlir]
//! ```
//!
//! With `--mlir` it prints the program (for `tempo-run`, with the inputs
//! as `.npy` files, see `bench/dynamic/`); otherwise it runs a batch of
//! random trees (20 to 50 leaves each) compiled (`R` times, after one
//! warm-up) and with the reference interpreter, compares them, and prints
//! `trees/s N` for the compiled runs. With `--fast-math`, contractions may
//! sum in another order (the library GEMM for the batched products).

use tempo::{Data, Expr, HostArray, Program, f32s, i64s};

mod run_common;

/// The TreeLSTM of hidden size `hidden`; the output is `s`, `[N, 2, H]`
/// (row 0 `h`, row 1 `c` of every node).
pub fn tree_lstm(hidden: i64) -> Program {
    let h = hidden;
    let mut p = Program::new();
    let n = p.dim("n", "N");
    // The leaves' bound: only its symbol is used (leaves are `n < NL`).
    let leaves = p.dim("leaf", "NL");
    let x = p.input("x", &[&n], f32s(&[h]));
    let left = p.input("left", &[&n], i64s(&[]));
    let right = p.input("right", &[&n], i64s(&[]));
    let w = p.input("W", &[], f32s(&[h, 3 * h]));
    let bw = p.input("bw", &[], f32s(&[3 * h]));
    let u = p.input("U", &[], f32s(&[2 * h, 5 * h]));
    let bu = p.input("bu", &[], f32s(&[5 * h]));
    let s = p.tensor("s", &[&n], f32s(&[2, h]));
    let gate = |z: &Expr, k: i64| z.slice(&[0, k * h], &[1, h]);
    let state = |hidden: Expr, cell: Expr| hidden.concat(&cell, 0);
    // Leaves.
    let z = x.here().reshape(&[1, h]).matmul(&w.here()) + bw.here();
    let c = gate(&z, 0).sigmoid() * gate(&z, 2).tanh();
    let hidden = gate(&z, 1).sigmoid() * c.tanh();
    p.define(&s, n.lt(leaves.bound()), state(hidden, c));
    // Internal nodes: the children through data.
    let child_l = s.at_data([&left.here()]);
    let child_r = s.at_data([&right.here()]);
    let row = |v: &Expr, r: i64| v.slice(&[r, 0], &[1, h]);
    let both = row(&child_l, 0).concat(&row(&child_r, 0), 1);
    let z = both.matmul(&u.here()) + bu.here();
    let c = gate(&z, 0).sigmoid() * gate(&z, 4).tanh()
        + gate(&z, 1).sigmoid() * row(&child_l, 1)
        + gate(&z, 2).sigmoid() * row(&child_r, 1);
    let hidden = gate(&z, 3).sigmoid() * c.tanh();
    p.otherwise(&s, state(hidden, c));
    p.output(&s);
    p
}

/// A batch of `trees` random binary trees of 20 to 50 leaves (adjacent
/// subtrees merged at random, like parse trees): the bounds `N`, `NL` and
/// the inputs of [`tree_lstm`].
pub fn random_batch(trees: usize, hidden: i64, seed: u64) -> (i64, i64, Vec<HostArray>) {
    let mut rng = run_common::Rng(seed);
    let sizes: Vec<usize> = (0..trees).map(|_| 20 + rng.below(31) as usize).collect();
    let total_leaves: usize = sizes.iter().sum();
    let nodes = 2 * total_leaves - trees;
    let (mut left, mut right) = (vec![0i64; nodes], vec![0i64; nodes]);
    let (mut next_leaf, mut next_inner) = (0, total_leaves);
    for &size in &sizes {
        let mut open: Vec<usize> = (next_leaf..next_leaf + size).collect();
        next_leaf += size;
        while open.len() > 1 {
            let k = rng.below(open.len() as u64 - 1) as usize;
            left[next_inner] = open[k] as i64;
            right[next_inner] = open[k + 1] as i64;
            open.splice(k..k + 2, [next_inner]);
            next_inner += 1;
        }
    }
    let h = hidden as usize;
    let mut floats = |name: &str, shape: Vec<usize>, scale: f32| rng.floats(name, shape, scale);
    let a = 1.0 / (h as f32).sqrt();
    let inputs = vec![
        floats("x", vec![nodes, h], 1.0),
        HostArray { name: "left".into(), shape: vec![nodes], data: Data::I64(left) },
        HostArray { name: "right".into(), shape: vec![nodes], data: Data::I64(right) },
        floats("W", vec![h, 3 * h], a),
        floats("bw", vec![3 * h], 0.1),
        floats("U", vec![2 * h, 5 * h], a / 2f32.sqrt()),
        floats("bu", vec![5 * h], 0.1),
    ];
    (nodes as i64, total_leaves as i64, inputs)
}

fn main() -> Result<(), tempo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str, default: i64| run_common::flag(&args, name, default);
    let (trees, hidden, seed, repeat) =
        (value("--trees", 64), value("--hidden", 64), value("--seed", 1), value("--repeat", 5));
    let program = tree_lstm(hidden);
    if args.iter().any(|a| a == "--mlir") {
        print!("{}", program.to_mlir()?);
        return Ok(());
    }
    let (nodes, leaves, inputs) = random_batch(trees as usize, hidden, seed as u64);
    let bounds = [("N", nodes), ("NL", leaves)];
    let mut runner =
        program.runner().bound("N", nodes).bound("NL", leaves).fast_math(args.iter().any(|a| a == "--fast-math"));
    for input in &inputs {
        runner = runner.input(input.clone());
    }
    let (outputs, median, interpreted) = run_common::timed_and_interpreted(&runner, &bounds, &inputs, repeat)?;
    let worst = (0..outputs[0].data.len())
        .map(|k| (outputs[0].data.get_f64(k) - interpreted[0].data.get_f64(k)).abs())
        .fold(0.0f64, f64::max);
    println!("{trees} trees, {nodes} nodes ({leaves} leaves), hidden {hidden}: s has shape {:?}", outputs[0].shape);
    println!(
        "execute {:.3} ms per batch (median of {}); largest difference from the interpreter {worst:.2e}",
        median * 1e3,
        repeat.max(1)
    );
    println!("trees/s {:.0}", trees as f64 / median);
    let tolerance = if args.iter().any(|a| a == "--fast-math") { 1e-4 } else { 0.0 };
    if worst > tolerance {
        eprintln!("error: the compiled program differs from the interpreter by {worst:.2e}");
        std::process::exit(1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The TreeLSTM of a small batch, by hand (nodes in order: children
    /// have smaller numbers in `random_batch`).
    fn reference(hidden: usize, nodes: usize, leaves: usize, inputs: &[HostArray]) -> Vec<f32> {
        let f = |k: usize| match &inputs[k].data {
            Data::F32(v) => v.clone(),
            _ => unreachable!(),
        };
        let i = |k: usize| match &inputs[k].data {
            Data::I64(v) => v.clone(),
            _ => unreachable!(),
        };
        let (x, left, right, w, bw, u, bu) = (f(0), i(1), i(2), f(3), f(4), f(5), f(6));
        let h = hidden;
        let sig = |v: f32| 1.0 / (1.0 + (-v).exp());
        let mut s = vec![0f32; nodes * 2 * h];
        for n in 0..nodes {
            let (row, cols, weights, bias): (Vec<f32>, usize, &[f32], &[f32]) = if n < leaves {
                (x[n * h..(n + 1) * h].to_vec(), 3 * h, &w, &bw)
            } else {
                let (l, r) = (left[n] as usize, right[n] as usize);
                let mut row = s[l * 2 * h..l * 2 * h + h].to_vec();
                row.extend_from_slice(&s[r * 2 * h..r * 2 * h + h]);
                (row, 5 * h, &u, &bu)
            };
            let z: Vec<f32> = (0..cols)
                .map(|j| bias[j] + row.iter().enumerate().map(|(k, v)| v * weights[k * cols + j]).sum::<f32>())
                .collect();
            for j in 0..h {
                let (c, o) = if n < leaves {
                    (sig(z[j]) * z[2 * h + j].tanh(), z[h + j])
                } else {
                    let (l, r) = (left[n] as usize, right[n] as usize);
                    let c = sig(z[j]) * z[4 * h + j].tanh()
                        + sig(z[h + j]) * s[l * 2 * h + h + j]
                        + sig(z[2 * h + j]) * s[r * 2 * h + h + j];
                    (c, z[3 * h + j])
                };
                s[n * 2 * h + j] = sig(o) * c.tanh();
                s[n * 2 * h + h + j] = c;
            }
        }
        s
    }

    #[test]
    fn compiled_and_interpreted_tree_lstms_match_the_reference() {
        let hidden = 8;
        let (nodes, leaves, inputs) = random_batch(3, hidden, 7);
        let program = tree_lstm(hidden);
        let mut runner = program.runner().bound("N", nodes).bound("NL", leaves);
        for input in &inputs {
            runner = runner.input(input.clone());
        }
        let expected = reference(hidden as usize, nodes as usize, leaves as usize, &inputs);
        for outputs in [runner.run().unwrap(), runner.interpret().unwrap()] {
            assert_eq!(outputs[0].shape, vec![nodes as usize, 2, hidden as usize]);
            let worst = (0..expected.len())
                .map(|k| (outputs[0].data.get_f64(k) - expected[k] as f64).abs())
                .fold(0.0, f64::max);
            assert!(worst < 1e-5, "largest difference {worst}");
        }
    }
}
