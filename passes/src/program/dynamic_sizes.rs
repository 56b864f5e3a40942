//! Proof that dynamic sizes agree. A range read gives a value a dimension
//! whose size (`?`) is the length of the range at the point being computed;
//! ops that combine values (elementwise ops, comparisons, selects, matmul's
//! inner and batch dimensions, concat's other dimensions) need those sizes
//! to be equal at every point. The verifier proves it symbolically: every
//! dynamic dimension carries a size symbol (ranges with the same bounds
//! share one; ops pass them on), and two dimensions that must agree need
//! the same symbol, or the program is refused at the op. Without this, a
//! compiled program would read memory it must not where the interpreter
//! reports the mismatch.

use super::{DYNAMIC, Movement, Node, NodeKind};
use crate::affine::AffineMap;
use std::collections::HashMap;

/// The size of one dimension of a value: static, or a symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Size {
    Static(i64),
    Symbol(usize),
}

struct Symbols {
    /// Range bounds text -> symbol.
    ranges: HashMap<String, usize>,
    next: usize,
}

impl Symbols {
    fn fresh(&mut self) -> Size {
        self.next += 1;
        Size::Symbol(self.next - 1)
    }
    fn range(&mut self, key: String) -> Size {
        if let Some(&s) = self.ranges.get(&key) {
            return Size::Symbol(s);
        }
        let Size::Symbol(s) = self.fresh() else { unreachable!() };
        self.ranges.insert(key, s);
        Size::Symbol(s)
    }
}

/// A key equal for ranges of provably equal length: the range is
/// `[max(lower), min(upper))`, of length `max(upper - lower, 0)`; with one
/// linear bound each, the key is the linear form of `upper - lower` (so
/// `t:T` and `0:T-t` agree); otherwise the bounds themselves.
fn length_key(lower: &AffineMap, upper: &AffineMap) -> String {
    if let ([lo], [hi]) = (lower.results.as_slice(), upper.results.as_slice())
        && let (Some((ld, ls, lc)), Some((hd, hs, hc))) = (lo.linear(), hi.linear())
    {
        let difference = |h: &[i64], l: &[i64]| -> Vec<i64> {
            let n = h.len().max(l.len());
            let mut d: Vec<i64> =
                (0..n).map(|i| h.get(i).copied().unwrap_or(0).wrapping_sub(l.get(i).copied().unwrap_or(0))).collect();
            while d.last() == Some(&0) {
                d.pop();
            }
            d
        };
        return format!("linear {:?} {:?} {}", difference(&hd, &ld), difference(&hs, &ls), hc.wrapping_sub(lc));
    }
    format!("bounds {lower:?} {upper:?}")
}

/// The sizes of a node's own type, with fresh symbols for dynamic ones.
fn own_sizes(node: &Node, symbols: &mut Symbols) -> Vec<Size> {
    node.ty.shape.iter().map(|&d| if d == DYNAMIC { symbols.fresh() } else { Size::Static(d) }).collect()
}

fn describe(size: Size) -> String {
    match size {
        Size::Static(n) => n.to_string(),
        Size::Symbol(_) => "the length of a range read".into(),
    }
}

/// Checks that two sizes that must agree provably do.
fn agree(a: Size, b: Size, what: &str) -> Result<(), String> {
    match (a, b) {
        (x, y) if x == y => Ok(()),
        (Size::Static(_), Size::Static(_)) => Err(format!("{what}: sizes {} and {} differ", describe(a), describe(b))),
        _ => Err(format!(
            "{what}: cannot prove that the sizes agree ({} vs {}); ranges of one length must be read with the same bounds",
            describe(a),
            describe(b)
        )),
    }
}

/// Sizes of an elementwise combination under NumPy broadcasting: shapes
/// aligned at their last dimension, static size-1 dimensions and missing
/// leading ones stretch, the other sizes must agree.
fn elementwise(operands: &[&Vec<Size>], what: &str) -> Result<Vec<Size>, String> {
    let rank = operands.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut result: Vec<Size> = vec![Size::Static(1); rank];
    for operand in operands {
        let skip = rank - operand.len();
        for (k, &size) in operand.iter().enumerate() {
            let slot = &mut result[skip + k];
            if size == Size::Static(1) {
                continue;
            }
            if *slot == Size::Static(1) {
                *slot = size;
            } else {
                agree(*slot, size, &format!("{what}, dimension {}", skip + k))?;
                // Prefer static sizes in the result.
                if matches!(size, Size::Static(_)) {
                    *slot = size;
                }
            }
        }
    }
    Ok(result)
}

/// The result sizes of `einsum` on operands of `sizes`; an error when a
/// label's sizes are not provably equal.
fn einsum_sizes(einsum: &crate::program::Einsum, sizes: &[&[Size]]) -> Result<Vec<Size>, String> {
    let mut labels: Vec<(char, Size)> = Vec::new();
    for (k, (names, operand)) in einsum.operands.iter().zip(sizes).enumerate() {
        for (&c, &size) in names.iter().zip(operand.iter()) {
            match labels.iter().find(|(x, _)| *x == c) {
                Some(&(_, known)) => agree(known, size, &format!("einsum label '{c}' (operand {k})"))?,
                None => labels.push((c, size)),
            }
        }
    }
    Ok(einsum.result.iter().map(|c| labels.iter().find(|(x, _)| x == c).map(|&(_, s)| s).expect("checked")).collect())
}

/// Checks every op of a branch body; on failure returns the node at fault
/// and the message.
pub fn check_branch(nodes: &[Node]) -> Result<(), (usize, String)> {
    let mut symbols = Symbols { ranges: HashMap::new(), next: 0 };
    let mut sizes: Vec<Vec<Size>> = Vec::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        let computed = node_sizes(node, &sizes, &mut symbols).map_err(|e| (i, e))?;
        // A result type may not state a static size where the operands give
        // the length of a range read (it varies from point to point, and
        // code compiled for the static size would write past it); only a
        // range read itself may, and its lengths are checked at each point.
        if computed.len() == node.ty.shape.len() && !matches!(node.kind, NodeKind::ReadRange { .. }) {
            let stated = computed.iter().zip(&node.ty.shape).position(|(c, &d)| d != DYNAMIC && *c != Size::Static(d));
            if let Some(k) = stated {
                return Err((
                    i,
                    format!(
                        "'{}' gives dimension {k} of its result {}, but its type {} states {}; write ? there",
                        node.kind.op_name(),
                        describe(computed[k]),
                        node.ty,
                        node.ty.shape[k]
                    ),
                ));
            }
        }
        // Keep what the type states statically.
        let merged = if computed.len() == node.ty.shape.len() {
            computed.iter().zip(&node.ty.shape).map(|(&c, &d)| if d == DYNAMIC { c } else { Size::Static(d) }).collect()
        } else {
            own_sizes(node, &mut symbols)
        };
        sizes.push(merged);
    }
    Ok(())
}

fn node_sizes(node: &Node, sizes: &[Vec<Size>], symbols: &mut Symbols) -> Result<Vec<Size>, String> {
    Ok(match &node.kind {
        NodeKind::ReadRange { lower, upper, .. } => {
            let mut out = Vec::new();
            for (lo, hi) in lower.iter().zip(upper) {
                if !hi.results.is_empty() {
                    out.push(symbols.range(length_key(lo, hi)));
                }
            }
            let point_dims = node.ty.shape.len().saturating_sub(out.len());
            out.extend(node.ty.shape[node.ty.shape.len() - point_dims..].iter().map(|&d| Size::Static(d)));
            out
        }
        NodeKind::Unary(_, a) | NodeKind::Cast(a) => sizes[*a].clone(),
        NodeKind::Binary(_, a, b) => elementwise(&[&sizes[*a], &sizes[*b]], "elementwise operands")?,
        NodeKind::Compare(_, a, b) => elementwise(&[&sizes[*a], &sizes[*b]], "compared operands")?,
        NodeKind::Select(c, a, b) => elementwise(&[&sizes[*c], &sizes[*a], &sizes[*b]], "select operands")?,
        NodeKind::Matmul(l, r) => {
            let (a, b) = (&sizes[*l], &sizes[*r]);
            match (a.as_slice(), b.as_slice()) {
                ([m, k1], [k2]) => {
                    agree(*k1, *k2, "matmul inner dimensions")?;
                    vec![*m]
                }
                ([k1], [k2, n]) => {
                    agree(*k1, *k2, "matmul inner dimensions")?;
                    vec![*n]
                }
                _ if a.len() >= 2 && b.len() >= 2 => {
                    let (ra, rb) = (a.len(), b.len());
                    agree(a[ra - 1], b[rb - 2], "matmul inner dimensions")?;
                    let mut out =
                        elementwise(&[&a[..ra - 2].to_vec(), &b[..rb - 2].to_vec()], "matmul batch dimensions")?;
                    out.extend([a[ra - 2], b[rb - 1]]);
                    out
                }
                _ => own_sizes(node, symbols),
            }
        }
        NodeKind::Einsum(einsum, operands) => {
            let operand_sizes: Vec<&[Size]> = operands.iter().map(|&o| sizes[o].as_slice()).collect();
            einsum_sizes(einsum, &operand_sizes)?
        }
        NodeKind::Attention(attention, [q, k, v, _]) => {
            let scores = einsum_sizes(&attention.score, &[&sizes[*q], &sizes[*k]])?;
            einsum_sizes(&attention.combine, &[&scores, &sizes[*v]])?
        }
        NodeKind::Move(Movement::Reshape, operands) => {
            // One dynamic dimension in each (or none): it carries over.
            let operand = &sizes[operands[0]];
            let carried = operand.iter().find(|s| matches!(s, Size::Symbol(_))).copied();
            node.ty
                .shape
                .iter()
                .map(|&d| if d == DYNAMIC { carried.unwrap_or_else(|| symbols.fresh()) } else { Size::Static(d) })
                .collect()
        }
        NodeKind::Move(Movement::Expand, operands) => {
            let operand = &sizes[operands[0]];
            let skip = node.ty.shape.len() - operand.len();
            node.ty
                .shape
                .iter()
                .enumerate()
                .map(|(k, &d)| match k.checked_sub(skip).map(|j| operand[j]) {
                    Some(Size::Symbol(s)) => Size::Symbol(s),
                    _ if d == DYNAMIC => symbols.fresh(),
                    _ => Size::Static(d),
                })
                .collect()
        }
        NodeKind::Reduce(_, a, axis) => {
            let operand = &sizes[*a];
            if node.ty.shape.len() == operand.len() {
                operand.clone()
            } else {
                operand.iter().enumerate().filter(|(k, _)| k != axis).map(|(_, &s)| s).collect()
            }
        }
        NodeKind::Move(Movement::Permute(permutation), operands) => {
            let operand = &sizes[operands[0]];
            permutation.iter().map(|&p| operand.get(p).copied().unwrap_or_else(|| symbols.fresh())).collect()
        }
        NodeKind::Move(Movement::Flip(_), operands) => sizes[operands[0]].clone(),
        NodeKind::Move(Movement::Concat(axis), operands) if operands.len() == 2 => {
            let (a, b) = (&sizes[operands[0]], &sizes[operands[1]]);
            if a.len() != b.len() {
                return Err("concat operands have different ranks".into());
            }
            let mut out = Vec::new();
            for (k, (&x, &y)) in a.iter().zip(b).enumerate() {
                if k == *axis {
                    out.push(match (x, y) {
                        (Size::Static(p), Size::Static(q)) => Size::Static(p + q),
                        _ => symbols.fresh(),
                    });
                } else {
                    agree(x, y, &format!("concat operands, dimension {k}"))?;
                    out.push(x);
                }
            }
            out
        }
        NodeKind::Gather(table, indices) => {
            let mut out = sizes[*indices].clone();
            out.extend(sizes[*table].iter().skip(1));
            out
        }
        _ => own_sizes(node, symbols),
    })
}
