//! `temporal-drop-pinned-dims`: a dimension along which every read of a
//! tensor is at one and the same point loses its place in that tensor's
//! domain.
//!
//! When every read of a computed tensor `X` (by other tensors: `X` does
//! not read itself) is a point read whose coordinate along domain
//! position `k` is the same expression `p` of constants and bounds
//! (`X[i, 0]`, `X[i, T - 1]`), only the points `X[.., p, ..]` are ever
//! needed. `X` becomes the tensor over the other dimensions whose point is
//! `X[.., p, ..]`: each branch's condition and every index map of its body
//! with the dimension replaced by `p`, the conditions `0 <= p < bound`
//! added (the point must lie inside the dimension; where it does not,
//! nobody needed it), and branches that can no longer hold (or under which
//! an earlier branch always holds) removed. Readers drop the coordinate.
//! Where no branch would be left (the readers' reads sit in branches that
//! never hold), `X` keeps the dimension.
//!
//! The case it is for: back-propagation through a branch that holds at one
//! step only (an LSTM's `t == 0` branch) makes a contribution tensor over
//! every step that is zero but at that step, and its readers read that
//! step. The compiled code computes every point of a tensor's domain, so
//! the zeros were written at every step of the backward loop (a megabyte
//! per step for the input weight's gradient, through the caches between
//! the step's products); now the contribution is computed once, after the
//! loop.
//!
//! Exact: each needed point is computed by the same ops from the same
//! points. Left alone: inputs, outputs, a stop's tensor, tensors named by
//! a gradient declaration, tensors reading themselves (a recurrence), and
//! tensors whose bodies depend on where they are computed (positions along
//! the dimension, random values, external calls, collectives), or that are
//! read by ranges or through data.
//!
//! Assumes a program accepted by `temporal-verify`.

use crate::affine::{AffineExpr, AffineMap, Constraint, IntegerSet};
use crate::program::{NodeKind, Program};

/// The `temporal-drop-pinned-dims` pass.
pub struct TemporalDropPinnedDims;

crate::option_free_rewrite!(
    TemporalDropPinnedDims,
    "temporal-drop-pinned-dims",
    "Drop a dimension from a tensor's domain when every read of the tensor is at one point of it (X[i, 0] only: X over i)",
    drop_pinned_dims
);

/// Drops every pinned dimension; returns whether anything changed.
pub fn drop_pinned_dims(program: &mut Program) -> bool {
    let mut changed = false;
    // Pinned dimensions whose point no branch can define (a branch that
    // holds at other points only: the readers' reads are never needed).
    let mut kept = std::collections::HashSet::new();
    // Dropping one dimension can pin another (a tensor read only by the
    // pinned one): until nothing changes.
    loop {
        let reads = point_reads(program);
        let Some((x, k, point)) =
            (0..program.tensors.len()).find_map(|x| pinned(program, x, reads[x].as_deref()?, &kept))
        else {
            return changed;
        };
        if drop_dim(program, x, k, &point) {
            changed = true;
        } else {
            kept.insert((x, k));
        }
    }
}

/// Per tensor, the index maps of its point reads, in one walk over every
/// body; `None` for a tensor also read by ranges or through data.
fn point_reads<'p>(program: &'p Program) -> Vec<Option<Vec<&'p AffineMap>>> {
    let mut reads: Vec<Option<Vec<&'p AffineMap>>> = vec![Some(Vec::new()); program.tensors.len()];
    for node in program.tensors.iter().flat_map(|t| &t.branches).flat_map(|b| &b.nodes) {
        match &node.kind {
            NodeKind::Read { source, index } => {
                if let Some(maps) = &mut reads[*source] {
                    maps.push(index);
                }
            }
            NodeKind::ReadAt { source, .. } | NodeKind::ReadRange { source, .. } => reads[*source] = None,
            _ => {}
        }
    }
    reads
}

/// The first domain position of tensor `x` at which every read of `x`
/// (`maps`, from [`point_reads`]) is the same expression of constants and
/// bounds, with that expression.
fn pinned(
    program: &Program,
    x: usize,
    maps: &[&AffineMap],
    kept: &std::collections::HashSet<(usize, usize)>,
) -> Option<(usize, usize, AffineExpr)> {
    let tensor = &program.tensors[x];
    if tensor.is_input
        || tensor.domain.is_empty()
        || program.outputs.contains(&x)
        || program.stops.iter().any(|s| s.done == x)
        || program.grads.iter().any(|g| [g.tensor, g.of, g.wrt].contains(&x))
    {
        return None;
    }
    // A tensor reading itself keeps its dimensions (a read of another
    // point would become a read of its own).
    if reads_itself(program, x) {
        return None;
    }
    // A tensor nobody reads is dead code's to remove.
    let first = maps.first()?;
    (0..tensor.domain.len()).find_map(|k| {
        let point = symbolic(&first.results[k])?;
        let same = maps.iter().all(|m| symbolic(&m.results[k]).is_some_and(|p| p == point));
        (same && !kept.contains(&(x, k)) && movable(program, x, tensor.domain[k])).then(|| (x, k, rebuild(&point)))
    })
}

/// Whether a body of `x` reads `x`.
fn reads_itself(program: &Program, x: usize) -> bool {
    program.tensors[x].branches.iter().flat_map(|b| &b.nodes).any(|n| crate::rewrite::source(&n.kind) == Some(x))
}

/// `e` as `(symbol coefficients, constant)` when it uses no dimension.
fn symbolic(e: &AffineExpr) -> Option<(Vec<i64>, i64)> {
    let (dims, mut symbols, constant) = e.linear()?;
    if dims.iter().any(|&c| c != 0) {
        return None;
    }
    while symbols.last() == Some(&0) {
        symbols.pop();
    }
    Some((symbols, constant))
}

/// The expression `sum(c_j s_j) + constant`.
fn rebuild((symbols, constant): &(Vec<i64>, i64)) -> AffineExpr {
    let terms = symbols.iter().enumerate().filter(|(_, c)| **c != 0).map(|(j, &c)| match c {
        1 => AffineExpr::Symbol(j),
        _ => AffineExpr::Mul(Box::new(AffineExpr::Symbol(j)), Box::new(AffineExpr::Constant(c))),
    });
    terms.fold(AffineExpr::Constant(0), |sum, term| match sum {
        AffineExpr::Constant(0) => term,
        sum => AffineExpr::Add(Box::new(sum), Box::new(term)),
    }) + *constant
}

/// Whether the bodies of `x` compute the same values wherever they run
/// along program dimension `dim` but through their reads.
fn movable(program: &Program, x: usize, dim: usize) -> bool {
    program.tensors[x].branches.iter().flat_map(|b| &b.nodes).all(|node| match &node.kind {
        NodeKind::Position(d) => *d != dim,
        NodeKind::Random { .. } | NodeKind::Call { .. } | NodeKind::AllReduce(..) => false,
        _ => true,
    })
}

/// Replaces dimension `k` of `x`'s domain by `point` in its bodies and
/// conditions, and drops the coordinate from every read of `x`; `false`
/// (and the program unchanged) when no branch can hold at the point.
fn drop_dim(program: &mut Program, x: usize, k: usize, point: &AffineExpr) -> bool {
    // Bound symbols are numbered as the dimensions.
    let bound = program.tensors[x].domain[k];
    let substitute = |num_dims: usize| -> Vec<AffineExpr> {
        (0..num_dims)
            .map(|j| match j.cmp(&k) {
                std::cmp::Ordering::Less => AffineExpr::Dim(j),
                std::cmp::Ordering::Equal => point.clone(),
                std::cmp::Ordering::Greater => AffineExpr::Dim(j - 1),
            })
            .collect()
    };
    let map = |m: &AffineMap| AffineMap {
        num_dims: m.num_dims - 1,
        num_symbols: m.num_symbols,
        results: m.results.iter().map(|e| fold(&e.substitute_dims(&substitute(m.num_dims)))).collect(),
    };
    let mut branches = Vec::new();
    for mut branch in program.tensors[x].branches.iter().cloned() {
        let set = &branch.when;
        // Inside the dimension: 0 <= point <= bound - 1.
        let inside = [
            Constraint::at_least_zero(point.clone()),
            Constraint::at_least_zero(AffineExpr::Symbol(bound) - point.clone() + -1),
        ];
        let mut constraints = Vec::new();
        let mut holds = true;
        for c in set.constraints.iter().cloned().chain(inside) {
            let expr = fold(&c.expr.substitute_dims(&substitute(set.num_dims)));
            match expr.as_constant() {
                Some(v) if (c.is_equality && v == 0) || (!c.is_equality && v >= 0) => {}
                Some(_) => holds = false,
                None => constraints.push(Constraint { expr, is_equality: c.is_equality }),
            }
        }
        // Unreachable: a condition that cannot hold at the point, or one
        // under which an earlier branch always holds (its constraints are
        // among these).
        let shadowed =
            |earlier: &crate::program::Branch| earlier.when.constraints.iter().all(|c| constraints.contains(c));
        if !holds || branches.iter().any(shadowed) {
            continue;
        }
        branch.when = IntegerSet { num_dims: set.num_dims - 1, num_symbols: set.num_symbols, constraints };
        for node in &mut branch.nodes {
            match &mut node.kind {
                NodeKind::Read { index, .. } | NodeKind::ReadAt { index, .. } | NodeKind::DynamicSlice(_, index) => {
                    *index = map(index);
                }
                NodeKind::ReadRange { lower, upper, caps, .. } => {
                    for m in lower.iter_mut().chain(upper.iter_mut()).chain(caps.iter_mut()) {
                        *m = map(m);
                    }
                }
                _ => {}
            }
        }
        let universe = branch.when.is_universe();
        branches.push(branch);
        if universe {
            break;
        }
    }
    if branches.is_empty() {
        return false;
    }
    let tensor = &mut program.tensors[x];
    tensor.domain.remove(k);
    tensor.branches = branches;
    for node in program.tensors.iter_mut().flat_map(|t| &mut t.branches).flat_map(|b| &mut b.nodes) {
        if let NodeKind::Read { source, index } = &mut node.kind
            && *source == x
        {
            index.results.remove(k);
        }
    }
    true
}

/// `e` with sums and products of constants folded.
fn fold(e: &AffineExpr) -> AffineExpr {
    let both = |a: &AffineExpr, b: &AffineExpr| (fold(a), fold(b));
    match e {
        AffineExpr::Add(a, b) => match both(a, b) {
            (AffineExpr::Constant(x), AffineExpr::Constant(y)) => AffineExpr::Constant(x + y),
            (AffineExpr::Constant(0), other) | (other, AffineExpr::Constant(0)) => other,
            (a, b) => AffineExpr::Add(Box::new(a), Box::new(b)),
        },
        AffineExpr::Mul(a, b) => match both(a, b) {
            (AffineExpr::Constant(x), AffineExpr::Constant(y)) => AffineExpr::Constant(x * y),
            (a, b) => AffineExpr::Mul(Box::new(a), Box::new(b)),
        },
        AffineExpr::Mod(a, b) | AffineExpr::FloorDiv(a, b) | AffineExpr::CeilDiv(a, b) => {
            let (a, b) = both(a, b);
            let constant = matches!((&a, &b), (AffineExpr::Constant(_), AffineExpr::Constant(y)) if *y > 0);
            let (a, b) = (Box::new(a), Box::new(b));
            let rebuilt = match e {
                AffineExpr::Mod(..) => AffineExpr::Mod(a, b),
                AffineExpr::FloorDiv(..) => AffineExpr::FloorDiv(a, b),
                _ => AffineExpr::CeilDiv(a, b),
            };
            match constant.then(|| rebuilt.eval(&[], &[])) {
                Some(Ok(v)) => AffineExpr::Constant(v),
                _ => rebuilt,
            }
        }
        _ => e.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constant(c: i64) -> Box<AffineExpr> {
        Box::new(AffineExpr::Constant(c))
    }

    /// Constants fold; a division of a bound stays (it has no value here).
    #[test]
    fn folds_constants_only() {
        assert_eq!(fold(&AffineExpr::Mod(constant(7), constant(3))), AffineExpr::Constant(1));
        assert_eq!(fold(&AffineExpr::FloorDiv(constant(-7), constant(2))), AffineExpr::Constant(-4));
        assert_eq!(fold(&AffineExpr::CeilDiv(constant(7), constant(2))), AffineExpr::Constant(4));
        let by_bound = AffineExpr::FloorDiv(Box::new(AffineExpr::Symbol(1)), constant(2));
        assert_eq!(fold(&by_bound), by_bound);
        let sum = AffineExpr::Add(Box::new(AffineExpr::Dim(0)), Box::new(AffineExpr::Add(constant(2), constant(-2))));
        assert_eq!(fold(&sum), AffineExpr::Dim(0));
        assert_eq!(rebuild(&(vec![0, 1], -1)), AffineExpr::Symbol(1) + -1);
    }
}
