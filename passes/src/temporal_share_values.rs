//! `temporal-share-values`: a large product that the bodies of several
//! tensors of one domain compute from the same operands at the same point
//! is computed once, in a tensor of its own that they read. After
//! vectorization a GPT step's forward pass computes the MLP's hidden
//! pre-activation `rms(r) W1` over every step, and the backward pass's
//! contribution tensor computes it again (its vector-Jacobian products
//! need it); likewise the queries `a Wq`. `temporal-dedup` merges equal
//! ops within one body and equal tensors, not values shared by two
//! different bodies.
//!
//! Shared: products (`matmul`, `einsum`) of at least [`MIN_WORK`]
//! multiply-adds and at most [`MAX_BYTES`] bytes, whose whole operand
//! expression reads only points of the reader's own position (tensors of
//! the same domain read at the identity, or tensors without a domain) and
//! is pure (no random values, calls, collectives, positions, range reads
//! or reads through data), so the new tensor, defined at every point of
//! the domain, computes what each reader would have. The readers keep
//! their branch conditions; the new tensor has none.
//!
//! Also shared: a value over whole ranges of steps (an expression with a
//! range read and arithmetic, of at least [`MIN_RANGE_BYTES`] bytes) that
//! the batched weight-gradient tensors of a recurrence each compute from
//! the stored steps. An LSTM's input, embedding and recurrent weight
//! gradients each computed the pre-activation cotangents of every step,
//! `dy * y (1 - y)` over `[T - 1, B, 4H]`, from the stored gates and their
//! cotangents: now one tensor computes them and the three products read
//! it. The readers' branches must hold under one condition, which the new
//! tensor takes: it is computed where each of them was (a range is inside
//! its source where the reader's condition holds), and its sources must be
//! defined at every point.
//!
//! Exact: the shared value is computed by the same ops on the same
//! operands. It trades memory for work as stored activations do: the
//! value is kept from its first reader to its last (a whole-sequence
//! value kept for the backward pass), so the pipelines leave the pass out
//! under a memory budget (`--memory-budget`). Assumes a program accepted by
//! `temporal-verify`; run after `temporal-vectorize` (the per-step values
//! of loops are small and stay recomputed).

use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::program::{Branch, DYNAMIC, Movement, Node, NodeKind, Program, Tensor};
use crate::rewrite::{compact_branch, live_nodes, map_operands, operands};
use std::collections::HashMap;

/// The `temporal-share-values` pass.
pub struct TemporalShareValues;

/// The fewest multiply-adds of a shared product (smaller ones cost less to
/// compute again than to store).
pub const MIN_WORK: i64 = 1 << 21;

/// The largest shared value, in bytes.
pub const MAX_BYTES: i64 = 64 << 20;

/// The smallest shared value computed from range reads without a product
/// at its root, in bytes (smaller ones stay in cache between their
/// computations).
pub const MIN_RANGE_BYTES: i64 = 256 << 10;

crate::option_free_rewrite!(
    TemporalShareValues,
    "temporal-share-values",
    "Compute a large product that several tensors' bodies compute at the same point once, in a tensor they read",
    share_values
);

/// Shares every qualifying product; returns whether any was.
pub fn share_values(program: &mut Program) -> bool {
    let mut changed = false;
    // Each round shares one value (the largest expression first).
    for _ in 0..256 {
        if !share_one(program) {
            break;
        }
        changed = true;
    }
    changed
}

/// Where a node sits: tensor, branch, node.
type Site = (usize, usize, usize);

/// An expression that bodies compute: its size in nodes, whether it reads
/// ranges, and where it is computed.
struct Candidate {
    size: usize,
    ranged: bool,
    sites: Vec<Site>,
}

/// Structural keys of expressions, interned: equal expressions (the same
/// ops with the same attributes and types over equal operands) get the
/// same number, whatever bodies they are in.
#[derive(Default)]
struct Interner(HashMap<(String, Vec<usize>), usize>);

impl Interner {
    fn id(&mut self, own: String, children: Vec<usize>) -> usize {
        let next = self.0.len();
        *self.0.entry((own, children)).or_insert(next)
    }
}

/// What [`keys`] finds of a node's whole expression.
#[derive(Clone, Copy)]
struct Key {
    /// The expression's interned number.
    id: usize,
    /// Its size in nodes (as a tree, saturating).
    size: usize,
    /// Whether it reads a range.
    ranged: bool,
    /// Whether it computes anything (more than reads and movements).
    computes: bool,
}

/// The key of each node's whole expression in a body of a tensor over
/// `domain`; `None` where it is not shareable.
fn keys(
    program: &Program,
    everywhere: &[bool],
    domain: &[usize],
    branch: &Branch,
    interner: &mut Interner,
) -> Vec<Option<Key>> {
    let mut out: Vec<Option<Key>> = Vec::with_capacity(branch.nodes.len());
    for node in &branch.nodes {
        let own = match &node.kind {
            NodeKind::Read { source, index } => {
                let src = &program.tensors[*source].domain;
                // (Defined at every point: the shared tensor reads it at
                // points its readers' conditions may have left out.)
                let at_point = src.is_empty()
                    || (src.as_slice() == domain
                        && index.results.iter().enumerate().all(|(i, e)| *e == AffineExpr::Dim(i)));
                at_point && everywhere[*source]
            }
            // The same range at the same point (the condition is the
            // readers', checked when sharing).
            NodeKind::ReadRange { source, .. } => everywhere[*source],
            NodeKind::Constant { .. }
            | NodeKind::Unary(..)
            | NodeKind::Binary(..)
            | NodeKind::Compare(..)
            | NodeKind::Select(..)
            | NodeKind::Cast(..)
            | NodeKind::Reduce(..)
            | NodeKind::Move(..)
            | NodeKind::Matmul(..)
            | NodeKind::Einsum(..)
            | NodeKind::Gather(..) => true,
            _ => false,
        };
        let list = operands(&node.kind);
        let children: Option<Vec<Key>> = list.iter().map(|&o| out[o]).collect();
        let key = match (own, children) {
            (true, Some(children)) => {
                // (A constant by its attribute's text: its values' Debug
                // form would format every float.)
                let text = match &node.kind {
                    NodeKind::Constant { text, .. } => format!("constant {text}|{}", node.ty),
                    kind => format!("{:?}|{}", map_operands(kind, |_| 0), node.ty),
                };
                let size = children.iter().fold(1usize, |a, c| a.saturating_add(c.size));
                let moves = matches!(
                    node.kind,
                    NodeKind::Read { .. } | NodeKind::ReadRange { .. } | NodeKind::Constant { .. } | NodeKind::Move(..)
                );
                Some(Key {
                    id: interner.id(text, children.iter().map(|c| c.id).collect()),
                    size,
                    ranged: matches!(node.kind, NodeKind::ReadRange { .. }) || children.iter().any(|c| c.ranged),
                    computes: !moves || children.iter().any(|c| c.computes),
                })
            }
            _ => None,
        };
        out.push(key);
    }
    out
}

/// The multiply-adds of product node `k` (static shapes), if it is one.
fn work(branch: &Branch, k: usize) -> Option<i64> {
    let nodes = &branch.nodes;
    let node = &nodes[k];
    let elements = |s: &[i64]| -> Option<i64> {
        s.iter().try_fold(1i64, |a, &d| if d == DYNAMIC { None } else { Some(a.saturating_mul(d)) })
    };
    match &node.kind {
        NodeKind::Matmul(a, _) => {
            let inner = *nodes[*a].ty.shape.last()?;
            Some(elements(&node.ty.shape)?.saturating_mul(inner))
        }
        NodeKind::Einsum(spec, list) => {
            // Every label's size once: the product's iteration space.
            let mut sizes: HashMap<char, i64> = HashMap::new();
            for (labels, &o) in spec.operands.iter().zip(list) {
                for (c, &d) in labels.iter().zip(&nodes[o].ty.shape) {
                    sizes.insert(*c, d);
                }
            }
            sizes.values().try_fold(1i64, |a, &d| if d == DYNAMIC { None } else { Some(a.saturating_mul(d)) })
        }
        _ => None,
    }
}

fn share_one(program: &mut Program) -> bool {
    // Candidates by key: the sites computing them.
    let mut sites: HashMap<(Vec<usize>, usize), Candidate> = HashMap::new();
    let everywhere = crate::rewrite::defined_everywhere(program);
    let mut interner = Interner::default();
    for (t, tensor) in program.tensors.iter().enumerate() {
        if tensor.is_input {
            continue;
        }
        for (b, branch) in tensor.branches.iter().enumerate() {
            let keys = keys(program, &everywhere, &tensor.domain, branch, &mut interner);
            for (k, key) in keys.into_iter().enumerate() {
                let Some(key) = key else { continue };
                let node = &branch.nodes[k];
                let bytes = node.ty.num_elements() as i64 * node.ty.element.byte_size() as i64;
                let product = work(branch, k).is_some_and(|w| w >= MIN_WORK);
                // (Not a view of a computed value: the value itself, which
                // each reader then views.)
                let view = matches!(&node.kind, NodeKind::Move(m, _) if !matches!(m, Movement::Concat(_)));
                let range_value = key.ranged && key.computes && !view && bytes >= MIN_RANGE_BYTES;
                if !(product || range_value) || bytes > MAX_BYTES {
                    continue;
                }
                let entry = sites.entry((tensor.domain.clone(), key.id)).or_insert(Candidate {
                    size: key.size,
                    ranged: key.ranged,
                    sites: Vec::new(),
                });
                // One site per body (equal ones in a body are temporal-dedup's).
                if !entry.sites.iter().any(|s| (s.0, s.1) == (t, b)) {
                    entry.sites.push((t, b, k));
                }
            }
        }
    }
    // The condition of a site's branch.
    let when = |s: &Site| &program.tensors[s.0].branches[s.1].when;
    // The largest expression computed by at least two tensors (one that
    // reads ranges: under one condition).
    let best = sites
        .into_values()
        .filter(|c| c.sites.iter().any(|s| s.0 != c.sites[0].0))
        .filter(|c| !c.ranged || c.sites.iter().all(|s| when(s) == when(&c.sites[0])))
        .max_by_key(|c| (c.size, std::cmp::Reverse(c.sites[0])));
    let Some(Candidate { ranged, sites: list, .. }) = best else { return false };
    let (t0, b0, k0) = list[0];
    let tensor = &program.tensors[t0];
    let branch = &tensor.branches[b0];
    // The expression's nodes, in order.
    let mut inside = vec![false; branch.nodes.len()];
    let mut stack = vec![k0];
    while let Some(k) = stack.pop() {
        if !std::mem::replace(&mut inside[k], true) {
            stack.extend(operands(&branch.nodes[k].kind));
        }
    }
    let mut at: HashMap<usize, usize> = HashMap::new();
    let mut nodes: Vec<Node> = Vec::new();
    for (k, node) in branch.nodes.iter().enumerate().filter(|(k, _)| inside[*k]) {
        at.insert(k, nodes.len());
        nodes.push(Node { kind: map_operands(&node.kind, |o| at[&o]), ty: node.ty.clone(), location: node.location });
    }
    let root = &branch.nodes[k0];
    let (dims, symbols) = (tensor.domain.len(), program.dims.len());
    let mut name = format!("{}$shared", tensor.name);
    while program.tensors.iter().any(|t| t.name == name) {
        name += "_";
    }
    let shared = Tensor {
        name,
        domain: tensor.domain.clone(),
        point: root.ty.clone(),
        is_input: false,
        branches: vec![Branch {
            when: match ranged {
                true => branch.when.clone(),
                false => IntegerSet { num_dims: dims, num_symbols: symbols, constraints: Vec::new() },
            },
            result: nodes.len() - 1,
            nodes,
            location: root.location,
        }],
        location: root.location,
    };
    program.tensors.push(shared);
    let source = program.tensors.len() - 1;
    let index = AffineMap { num_dims: dims, num_symbols: symbols, results: (0..dims).map(AffineExpr::Dim).collect() };
    for (t, b, k) in list {
        let branch = &mut program.tensors[t].branches[b];
        branch.nodes[k].kind = NodeKind::Read { source, index: index.clone() };
        let live = live_nodes(branch);
        compact_branch(branch, &live);
    }
    true
}
