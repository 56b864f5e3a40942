//! `temporal-pack-products`: a product of a few rows by a weight that does
//! not change along the loop it runs in reads the weight packed in panels,
//! made once outside that loop.
//!
//! A recurrence's per-step product (`h[t-1] Wh`, and in its backward pass
//! `dz[t] Wh^T`) multiplies `B` rows by a large weight that is the same at
//! every step of `t` (it changes with the training iteration `i` only). A
//! general matrix product packs the weight into the layout its kernel
//! reads at every call, as long as the product itself for a few rows, and
//! a transposed weight is gathered element by element. Here the weight's
//! expression (reads of tensors at the reader's own point along the
//! dimensions they share, permutations, reshapes) moves into a tensor of
//! its own over the dimensions it reads, `W$packed[i]`, holding it in
//! panels of 16 columns, `P[j, k, r] = B[k, 16 j + r]`; the product
//! becomes `einsum("mk,jkr->mjr", A, P)` reshaped to `[m, n]`. The panel
//! is made once per point of the tensor (per iteration), and the lowering
//! (with fast math) calls the runtime's packed kernel, whose `k x 16`
//! panel stays in the first-level cache while tiles of rows multiply it.
//!
//! What is packed: a float32 `matmul` of an `[m, k]` operand with at most
//! [`MAX_ROWS`] rows by a `[k, n]` operand with `n` a multiple of 16 and
//! at least [`MIN_WEIGHT`] elements, whose expression reads tensors
//! defined at every point (inputs, or a last branch without condition),
//! each at the reader's own coordinate along every dimension it has
//! (`Wh_i[i]`, an input without a domain), through any ops but those whose
//! value depends on where or when they run (random values, external calls,
//! positions, collectives) and range or data reads, and reads fewer of the
//! tensor's dimensions than the tensor has (so that it is invariant along
//! one of its loops: the expression, a permutation or a scaling of the
//! weight, then runs once per point of the packed tensor). Identical
//! weight expressions share one packed tensor.
//!
//! A product of more rows by a transposed weight (`dz[t] Wh^T` at a batch
//! of 64: `permute(W)` as the expression's last op, an operand the
//! lowering passes to the general product as a column-major view, which
//! it gathers element by element at every call, 3.3 times the product's
//! own time) reads a copy of the transposed weight instead,
//! `W$transposed[i]`, made once per point in the same way: the product
//! stays a `matmul`, now of a row-major operand (the same values).
//!
//! Neither applies in a branch that runs at a single point of the loop
//! the weight does not change along (`t == 0`): the copy would cost as
//! much as the product.
//!
//! Exact: each element of the product sums the same terms in the same
//! order (`k` increasing) as the matmul did. Runs on the CPU with fast
//! math (`-O2`, `-O3`), after `temporal-vectorize` (a product batched over
//! the steps has many rows and stays a matmul). Assumes a program accepted
//! by `temporal-verify`.

use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::program::{Branch, Einsum, ElementType, Movement, Node, NodeKind, PointType, Program, Tensor};
use std::collections::HashMap;

/// The most rows of the other operand: past it the general product packs
/// the weight once for enough rows to pay for it.
pub const MAX_ROWS: i64 = 32;

/// The fewest elements of the weight (64 KiB of float32): smaller ones fit
/// in the first-level cache as they are.
pub const MIN_WEIGHT: i64 = 1 << 14;

/// Columns per panel (the runtime's kernel: two AVX2 vectors of f32).
pub const PANEL: i64 = 16;

/// The `temporal-pack-products` pass.
pub struct TemporalPackProducts;

crate::option_free_rewrite!(
    TemporalPackProducts,
    "temporal-pack-products",
    "Read the weight of a per-step product of few rows (h[t-1] Wh, dz[t] Wh^T) packed in panels of 16 columns, made once outside the loop (a tensor over the dimensions the weight reads); the product becomes an einsum the lowering sends to the runtime's packed kernel",
    pack_products
);

/// Packs the weights of every product that qualifies; returns whether any
/// was.
pub fn pack_products(program: &mut Program) -> bool {
    let defined_everywhere = crate::rewrite::defined_everywhere(program);
    // Packed tensors by their weight's expression.
    let mut packed: HashMap<String, usize> = HashMap::new();
    let mut changed = false;
    for x in 0..program.tensors.len() {
        if program.tensors[x].is_input {
            continue;
        }
        for b in 0..program.tensors[x].branches.len() {
            // One product at a time: the branch's nodes move after each.
            while let Some((k, weight, form)) = next_product(program, x, b, &defined_everywhere) {
                let p = packed_tensor(program, x, b, &weight, form, &mut packed);
                rewrite_product(program, x, b, k, p, &weight, form);
                changed = true;
            }
        }
    }
    changed
}

/// A product's weight: its expression's nodes (in the branch's order) and
/// the reader's dimensions (positions in its domain) it reads.
struct Weight {
    nodes: Vec<usize>,
    dims: Vec<usize>,
}

/// What the weight's tensor holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Panels of [`PANEL`] columns, for the runtime's packed kernel (a
    /// product of at most [`MAX_ROWS`] rows).
    Panels,
    /// The transposed weight as a row-major matrix (a product of more rows
    /// by `permute(W)`).
    Transposed,
}

/// The first product of branch `b` of tensor `x` to pack, with its weight
/// and the form it takes.
fn next_product(program: &Program, x: usize, b: usize, defined_everywhere: &[bool]) -> Option<(usize, Weight, Form)> {
    let tensor = &program.tensors[x];
    let branch = &tensor.branches[b];
    branch.nodes.iter().enumerate().find_map(|(k, node)| {
        let NodeKind::Matmul(a, w) = node.kind else { return None };
        let (sa, sw) = (&branch.nodes[a].ty, &branch.nodes[w].ty);
        let [m, _] = sa.shape[..] else { return None };
        let [kk, n] = sw.shape[..] else { return None };
        if node.ty.element != ElementType::F32 || m < 1 || kk < 1 || n < 1 || kk * n < MIN_WEIGHT {
            return None;
        }
        let transposed = matches!(&branch.nodes[w].kind, NodeKind::Move(Movement::Permute(p), _) if p[..] == [1, 0]);
        let form = if m <= MAX_ROWS && n % PANEL == 0 {
            Form::Panels
        } else if m > MAX_ROWS && transposed {
            Form::Transposed
        } else {
            return None;
        };
        let weight = weight(program, tensor, branch, w, defined_everywhere)?;
        let invariant: Vec<usize> = (0..tensor.domain.len()).filter(|d| !weight.dims.contains(d)).collect();
        (!invariant.is_empty() && !pins(&branch.when, &invariant)).then_some((k, weight, form))
    })
}

/// Whether condition `when` holds at a single value of one of `dims` (an
/// equality that involves it, `t == 0`).
fn pins(when: &IntegerSet, dims: &[usize]) -> bool {
    when.constraints.iter().filter(|c| c.is_equality).any(|c| match c.expr.linear() {
        Some((coefficients, _, _)) => dims.iter().any(|&d| coefficients.get(d).is_some_and(|&v| v != 0)),
        None => true,
    })
}

/// The expression of node `w` if its reads are at the reader's own point
/// of tensors defined everywhere and no op of it depends on where or when
/// it runs.
fn weight(
    program: &Program,
    tensor: &Tensor,
    branch: &Branch,
    w: usize,
    defined_everywhere: &[bool],
) -> Option<Weight> {
    let mut nodes = Vec::new();
    let mut dims = Vec::new();
    let mut stack = vec![w];
    while let Some(n) = stack.pop() {
        if nodes.contains(&n) {
            continue;
        }
        nodes.push(n);
        match &branch.nodes[n].kind {
            NodeKind::Read { source, index } => {
                let src = &program.tensors[*source];
                if !defined_everywhere[*source] {
                    return None;
                }
                for (q, dim) in src.domain.iter().enumerate() {
                    let p = tensor.domain.iter().position(|d| d == dim)?;
                    if !matches!(index.results[q], AffineExpr::Dim(i) if i == p) {
                        return None;
                    }
                    if !dims.contains(&p) {
                        dims.push(p);
                    }
                }
            }
            other if crate::rewrite::stays_in_place(other) => return None,
            other => stack.extend(crate::rewrite::operands(other)),
        }
    }
    nodes.sort_unstable();
    dims.sort_unstable();
    Some(Weight { nodes, dims })
}

/// The packed (or transposed) tensor of `weight` (branch `b` of tensor
/// `x`): an existing one with the same expression, or a new one over the
/// dimensions it reads.
fn packed_tensor(
    program: &mut Program,
    x: usize,
    b: usize,
    weight: &Weight,
    form: Form,
    packed: &mut HashMap<String, usize>,
) -> usize {
    let tensor = &program.tensors[x];
    let branch = &tensor.branches[b];
    let domain: Vec<usize> = weight.dims.iter().map(|&p| tensor.domain[p]).collect();
    // The reader's dimension p is the packed tensor's dimension position(p).
    let to_packed: Vec<AffineExpr> = (0..tensor.domain.len())
        .map(|p| weight.dims.iter().position(|&q| q == p).map_or(AffineExpr::Constant(0), AffineExpr::Dim))
        .collect();
    let symbols = program.dims.len();
    let mut nodes: Vec<Node> = Vec::new();
    let mut new: HashMap<usize, usize> = HashMap::new();
    for &n in &weight.nodes {
        let node = &branch.nodes[n];
        let kind = match &node.kind {
            NodeKind::Read { source, index } => NodeKind::Read {
                source: *source,
                index: AffineMap {
                    num_dims: domain.len(),
                    num_symbols: symbols,
                    results: index.results.iter().map(|e| e.substitute_dims(&to_packed)).collect(),
                },
            },
            other => crate::rewrite::map_operands(other, |o| new[&o]),
        };
        nodes.push(Node { kind, ty: node.ty.clone(), location: node.location });
        new.insert(n, nodes.len() - 1);
    }
    let root = *weight.nodes.last().expect("a weight has a node");
    let location = branch.nodes[root].location;
    let [k, n] = branch.nodes[root].ty.shape[..] else { unreachable!("a 2-D weight (checked)") };
    let f32 = |shape: Vec<i64>| PointType { shape, element: ElementType::F32 };
    if form == Form::Panels {
        nodes.push(Node {
            kind: NodeKind::Move(Movement::Reshape, vec![new[&root]]),
            ty: f32(vec![k, n / PANEL, PANEL]),
            location,
        });
        let split = nodes.len() - 1;
        nodes.push(Node {
            kind: NodeKind::Move(Movement::Permute(vec![1, 0, 2]), vec![split]),
            ty: f32(vec![n / PANEL, k, PANEL]),
            location,
        });
    }
    let key = format!("{domain:?}{:?}", nodes.iter().map(|n| (&n.kind, &n.ty)).collect::<Vec<_>>());
    if let Some(&p) = packed.get(&key) {
        return p;
    }
    let suffix = match form {
        Form::Panels => "packed",
        Form::Transposed => "transposed",
    };
    let mut name = format!("{}${suffix}", program.tensors[x].name);
    while program.tensors.iter().any(|t| t.name == name) {
        name += "_";
    }
    let result = nodes.len() - 1;
    let point = nodes[result].ty.clone();
    program.tensors.push(Tensor {
        name,
        domain: domain.clone(),
        point,
        is_input: false,
        branches: vec![Branch {
            when: IntegerSet { num_dims: domain.len(), num_symbols: symbols, constraints: Vec::new() },
            nodes,
            result,
            location,
        }],
        location,
    });
    packed.insert(key, program.tensors.len() - 1);
    program.tensors.len() - 1
}

/// Node `k` of branch `b` of tensor `x` (the product) becomes the einsum of
/// its rows by packed tensor `p`, reshaped back to the product's type (or,
/// transposed, the product of its rows by the copy `p`).
fn rewrite_product(program: &mut Program, x: usize, b: usize, k: usize, p: usize, weight: &Weight, form: Form) {
    let symbols = program.dims.len();
    let packed_type = program.tensors[p].point.clone();
    let rank = program.tensors[x].domain.len();
    let branch = &mut program.tensors[x].branches[b];
    let old = std::mem::take(&mut branch.nodes);
    let mut nodes: Vec<Node> = Vec::with_capacity(old.len() + 2);
    let mut at: Vec<usize> = Vec::with_capacity(old.len());
    for (n, node) in old.into_iter().enumerate() {
        if n != k {
            let kind = crate::rewrite::map_operands(&node.kind, |o| at[o]);
            nodes.push(Node { kind, ..node });
            at.push(nodes.len() - 1);
            continue;
        }
        let NodeKind::Matmul(a, _) = node.kind else { unreachable!("a product (checked)") };
        let location = node.location;
        let index = AffineMap {
            num_dims: rank,
            num_symbols: symbols,
            results: weight.dims.iter().map(|&d| AffineExpr::Dim(d)).collect(),
        };
        nodes.push(Node { kind: NodeKind::Read { source: p, index }, ty: packed_type.clone(), location });
        let read = nodes.len() - 1;
        if form == Form::Transposed {
            nodes.push(Node { kind: NodeKind::Matmul(at[a], read), ..node });
            at.push(nodes.len() - 1);
            continue;
        }
        let m = node.ty.shape[0];
        let spec = Einsum { operands: vec![vec!['m', 'k'], vec!['j', 'k', 'r']], result: vec!['m', 'j', 'r'] };
        let panels = PointType { shape: vec![m, packed_type.shape[0], PANEL], element: ElementType::F32 };
        nodes.push(Node { kind: NodeKind::Einsum(spec, vec![at[a], read]), ty: panels, location });
        let einsum = nodes.len() - 1;
        nodes.push(Node { kind: NodeKind::Move(Movement::Reshape, vec![einsum]), ty: node.ty, location });
        at.push(nodes.len() - 1);
    }
    branch.result = at[branch.result];
    branch.nodes = nodes;
    let live = crate::rewrite::live_nodes(branch);
    crate::rewrite::compact_branch(branch, &live);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_at_one_step_is_pinned() {
        // (i, t): t == 0 pins t; t - 1 >= 0 and i == 0 do not.
        let set = |expr: AffineExpr, is_equality| IntegerSet {
            num_dims: 2,
            num_symbols: 2,
            constraints: vec![crate::affine::Constraint { expr, is_equality }],
        };
        let t = AffineExpr::Dim(1);
        assert!(pins(&set(t.clone(), true), &[1]));
        let later = AffineExpr::Add(Box::new(t), Box::new(AffineExpr::Constant(-1)));
        assert!(!pins(&set(later, false), &[1]));
        assert!(!pins(&set(AffineExpr::Dim(0), true), &[1]));
        assert!(!pins(&IntegerSet { num_dims: 2, num_symbols: 2, constraints: vec![] }, &[1]));
    }
}
