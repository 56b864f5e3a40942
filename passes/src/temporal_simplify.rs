//! `temporal-simplify`: algebraic simplification of branch bodies by a
//! registry of rewrite rules ([`RULES`]), applied to a fixed point, then
//! dead ops removed.
//!
//! Every rule of the default set is exact: the simplified body computes the
//! same bits as the original for every input, NaN, infinities and signed
//! zeros included. That rules out some familiar identities: `x + 0.0` is
//! not `x` for `x = -0.0` (but `x + (-0.0)` and `x - 0.0` are), `x * 0` is
//! not `0` for NaN or infinite `x`, `log(exp(x))` is not `x` (rounding,
//! overflow) and `exp(log(x))` is not `x` for `x <= 0`. Those are not
//! rules. With the option `inexact`, rules that only change rounding are
//! added: reassociating a chain of float matmuls where that does less work
//! (for integers, whose wrapping arithmetic is associative, it is exact and
//! always on).
//!
//! Constant folding computes in the element type with the interpreter's
//! arithmetic (IEEE add, sub, mul, div; wrapping integer add, sub, mul).
//!
//! Assumes a program accepted by `temporal-verify`.

use crate::diagnostics::PassDiagnostic;
use crate::pass::{PassOption, PassOptions, ProgramRewrite, TempoPass};
use crate::print::dense;
use crate::program::{BinaryKind, ElementType, Movement, Node, NodeKind, PointType, Program, UnaryKind, reshape_fits};
use crate::rewrite::map_operands;
use crate::rewrite::{compact_branch, live_nodes};
use melior::ir::Location;

/// The `temporal-simplify` pass.
pub struct TemporalSimplify;

impl TempoPass for TemporalSimplify {
    fn name(&self) -> &'static str {
        "temporal-simplify"
    }
    fn summary(&self) -> &'static str {
        "Exact algebraic simplification of branch bodies (identities, double negation, movement chains, constant folding)"
    }
    fn options(&self) -> &'static [PassOption] {
        const OPTIONS: &[PassOption] =
            &[PassOption::flag("inexact", false, "Also apply rules that change float rounding (matmul reassociation)")];
        OPTIONS
    }
    fn as_rewrite(&self) -> Option<&dyn ProgramRewrite> {
        Some(self)
    }
}

impl ProgramRewrite for TemporalSimplify {
    fn rewrite<'c>(
        &self,
        program: &mut Program<'c>,
        options: &PassOptions,
        _at: Location<'c>,
    ) -> Result<bool, Vec<PassDiagnostic<'c>>> {
        Ok(simplify(program, options.flag("inexact")))
    }
}

/// What a rule does with node `k`.
pub enum Action {
    /// Node `k`'s value is node `j`'s (same type): its users read `j`.
    Forward(usize),
    /// Node `k` computes this instead (same type).
    Become(NodeKind),
}

/// A rewrite rule: given the body and a node index, an action or `None`.
pub struct Rule {
    pub name: &'static str,
    /// Whether the rule keeps results bit for bit.
    pub exact: bool,
    pub apply: fn(&[Node], usize) -> Option<Action>,
}

/// The rules, tried in order at each node.
pub const RULES: &[Rule] = &[
    Rule { name: "multiply-by-one", exact: true, apply: multiply_by_one },
    Rule { name: "add-neutral-zero", exact: true, apply: add_neutral_zero },
    Rule { name: "double-negation", exact: true, apply: double_negation },
    Rule { name: "idempotent-binary", exact: true, apply: idempotent_binary },
    Rule { name: "cast-to-same-type", exact: true, apply: cast_to_same_type },
    Rule { name: "movement-identity", exact: true, apply: movement_identity },
    Rule { name: "permute-of-permute", exact: true, apply: permute_of_permute },
    Rule { name: "flip-of-flip", exact: true, apply: flip_of_flip },
    Rule { name: "reshape-of-reshape", exact: true, apply: reshape_of_reshape },
    Rule { name: "slice-of-slice", exact: true, apply: slice_of_slice },
    Rule { name: "select-of-constant", exact: true, apply: select_of_constant },
    Rule { name: "fold-constants", exact: true, apply: fold_constants },
    Rule { name: "reassociate-integer-matmuls", exact: true, apply: reassociate_integer_matmuls },
    Rule { name: "reassociate-float-matmuls", exact: false, apply: reassociate_float_matmuls },
];

/// Applies the rules to every branch until none applies; returns whether
/// anything changed.
pub fn simplify(program: &mut Program, inexact: bool) -> bool {
    let mut changed = insert_products(program, inexact);
    for tensor in &mut program.tensors {
        for branch in &mut tensor.branches {
            // Each rewrite removes work or an op, so this terminates; the
            // bound only guards against a rule that would not.
            for _round in 0..64 {
                let mut any = false;
                let mut alias: Vec<usize> = (0..branch.nodes.len()).collect();
                for k in 0..branch.nodes.len() {
                    let kind = map_operands(&branch.nodes[k].kind, |a| alias[a]);
                    branch.nodes[k].kind = kind;
                    let action = RULES.iter().filter(|r| r.exact || inexact).find_map(|r| (r.apply)(&branch.nodes, k));
                    match action {
                        Some(Action::Forward(j)) => alias[k] = j,
                        Some(Action::Become(kind)) => branch.nodes[k].kind = kind,
                        None => continue,
                    }
                    any = true;
                }
                branch.result = alias[branch.result];
                if !any {
                    break;
                }
                changed = true;
            }
            let live = live_nodes(branch);
            changed |= compact_branch(branch, &live);
        }
    }
    changed
}

/// The value every element of a constant node has, if they all have one.
fn splat(nodes: &[Node], k: usize) -> Option<f64> {
    match &nodes[k].kind {
        NodeKind::Constant { values, integers, .. } if integers.iter().all(|v| v.unsigned_abs() <= 1 << 53) => {
            let first = *values.first()?;
            values.iter().all(|v| v.to_bits() == first.to_bits()).then_some(first)
        }
        _ => None,
    }
}

fn is_one(nodes: &[Node], k: usize) -> bool {
    splat(nodes, k) == Some(1.0)
}

/// `j` can stand for `k` (same type, so no broadcasting is lost).
fn forward(nodes: &[Node], k: usize, j: usize) -> Option<Action> {
    (nodes[j].ty == nodes[k].ty).then_some(Action::Forward(j))
}

/// `x * 1`, `1 * x`, `x / 1`.
fn multiply_by_one(nodes: &[Node], k: usize) -> Option<Action> {
    match nodes[k].kind {
        NodeKind::Binary(BinaryKind::Mul, a, b) if is_one(nodes, b) => forward(nodes, k, a),
        NodeKind::Binary(BinaryKind::Mul, a, b) if is_one(nodes, a) => forward(nodes, k, b),
        NodeKind::Binary(BinaryKind::Div, a, b) if is_one(nodes, b) => forward(nodes, k, a),
        _ => None,
    }
}

/// `x + 0`, `0 + x`, `x - 0` for integers; for floats `x + (-0.0)`,
/// `(-0.0) + x` and `x - (+0.0)`, the only exact ones.
fn add_neutral_zero(nodes: &[Node], k: usize) -> Option<Action> {
    let float = nodes[k].ty.element.is_float();
    let zero = |j: usize, negative: bool| {
        splat(nodes, j).is_some_and(|v| v == 0.0 && (!float || v.is_sign_negative() == negative))
    };
    match nodes[k].kind {
        NodeKind::Binary(BinaryKind::Add, a, b) if zero(b, true) => forward(nodes, k, a),
        NodeKind::Binary(BinaryKind::Add, a, b) if zero(a, true) => forward(nodes, k, b),
        NodeKind::Binary(BinaryKind::Sub, a, b) if zero(b, false) => forward(nodes, k, a),
        _ => None,
    }
}

/// `-(-x)`, `not(not x)`.
fn double_negation(nodes: &[Node], k: usize) -> Option<Action> {
    match nodes[k].kind {
        NodeKind::Unary(outer @ (UnaryKind::Neg | UnaryKind::Not), b) => match nodes[b].kind {
            NodeKind::Unary(inner, a) if inner == outer => forward(nodes, k, a),
            _ => None,
        },
        _ => None,
    }
}

/// `max(x, x)`, `min(x, x)`, `x and x`, `x or x`.
fn idempotent_binary(nodes: &[Node], k: usize) -> Option<Action> {
    match nodes[k].kind {
        NodeKind::Binary(BinaryKind::Max | BinaryKind::Min | BinaryKind::And | BinaryKind::Or, a, b) if a == b => {
            forward(nodes, k, a)
        }
        _ => None,
    }
}

fn cast_to_same_type(nodes: &[Node], k: usize) -> Option<Action> {
    match nodes[k].kind {
        NodeKind::Cast(a) => forward(nodes, k, a),
        _ => None,
    }
}

/// Movements that change nothing: the identity permutation, a reshape or
/// expand to the operand's own type, a slice at offset 0 of the whole.
fn movement_identity(nodes: &[Node], k: usize) -> Option<Action> {
    let NodeKind::Move(movement, operands) = &nodes[k].kind else { return None };
    let a = *operands.first()?;
    let identity = match movement {
        Movement::Permute(p) => p.iter().enumerate().all(|(i, &x)| i == x),
        Movement::Reshape | Movement::Expand => true,
        Movement::Slice(offsets) => offsets.iter().all(|&o| o == 0),
        _ => false,
    };
    if identity { forward(nodes, k, a) } else { None }
}

/// `permute(permute(x, p), q)` is one permutation of `x` (or `x`).
fn permute_of_permute(nodes: &[Node], k: usize) -> Option<Action> {
    let NodeKind::Move(Movement::Permute(q), outer) = &nodes[k].kind else { return None };
    let NodeKind::Move(Movement::Permute(p), inner) = &nodes[outer[0]].kind else { return None };
    // Result dimension i is the inner result's q[i], which is x's p[q[i]].
    let composed: Vec<usize> = q.iter().map(|&i| p[i]).collect();
    if composed.iter().enumerate().all(|(i, &x)| i == x) {
        return forward(nodes, k, inner[0]);
    }
    Some(Action::Become(NodeKind::Move(Movement::Permute(composed), vec![inner[0]])))
}

fn flip_of_flip(nodes: &[Node], k: usize) -> Option<Action> {
    let NodeKind::Move(Movement::Flip(outer), a) = &nodes[k].kind else { return None };
    match &nodes[a[0]].kind {
        NodeKind::Move(Movement::Flip(inner), x) if inner == outer => forward(nodes, k, x[0]),
        _ => None,
    }
}

/// `reshape(reshape(x))` is one reshape of `x` (row-major order is kept by
/// both), when the shapes allow it.
fn reshape_of_reshape(nodes: &[Node], k: usize) -> Option<Action> {
    let NodeKind::Move(Movement::Reshape, a) = &nodes[k].kind else { return None };
    let NodeKind::Move(Movement::Reshape, x) = &nodes[a[0]].kind else { return None };
    let x = x[0];
    if nodes[x].ty == nodes[k].ty {
        return forward(nodes, k, x);
    }
    reshape_fits(&nodes[x].ty.shape, &nodes[k].ty.shape)
        .then(|| Action::Become(NodeKind::Move(Movement::Reshape, vec![x])))
}

/// `slice(slice(x, o1), o2)` is `slice(x, o1 + o2)`.
fn slice_of_slice(nodes: &[Node], k: usize) -> Option<Action> {
    let NodeKind::Move(Movement::Slice(outer), a) = &nodes[k].kind else { return None };
    let NodeKind::Move(Movement::Slice(inner), x) = &nodes[a[0]].kind else { return None };
    let offsets = outer.iter().zip(inner).map(|(o, i)| o + i).collect();
    Some(Action::Become(NodeKind::Move(Movement::Slice(offsets), vec![x[0]])))
}

/// `select(true, a, b)` is `a`, `select(false, a, b)` is `b` (when no
/// broadcasting by the condition changes the type).
fn select_of_constant(nodes: &[Node], k: usize) -> Option<Action> {
    let NodeKind::Select(c, a, b) = nodes[k].kind else { return None };
    match splat(nodes, c) {
        Some(v) if v != 0.0 => forward(nodes, k, a),
        Some(_) => forward(nodes, k, b),
        None => None,
    }
}

/// The values of a constant node, where an `f64` holds them exactly (not
/// integers beyond 2^53).
fn constant_values<'a>(nodes: &'a [Node], k: usize) -> Option<&'a [f64]> {
    match &nodes[k].kind {
        NodeKind::Constant { values, integers, .. } if integers.iter().all(|v| v.unsigned_abs() <= 1 << 53) => {
            Some(values)
        }
        _ => None,
    }
}

/// A constant node of type `ty` with these values.
fn constant(values: Vec<f64>, ty: &PointType) -> NodeKind {
    let integers = crate::program::integers_of(&values, ty.element);
    NodeKind::Constant { text: dense(&values, ty).into(), values: values.into(), integers: integers.into() }
}

/// Negation and add, sub, mul, div of constants of one type (or a scalar
/// with a constant), computed in the element type.
fn fold_constants(nodes: &[Node], k: usize) -> Option<Action> {
    let ty = &nodes[k].ty;
    if !ty.is_static() {
        return None;
    }
    let n = ty.num_elements();
    let element = ty.element;
    match nodes[k].kind {
        NodeKind::Unary(UnaryKind::Neg, a) if nodes[a].ty == *ty => {
            let values = constant_values(nodes, a)?;
            let folded =
                values.iter().map(|&x| arithmetic(element, BinaryKind::Sub, 0.0, x, true)).collect::<Option<_>>()?;
            Some(Action::Become(constant(folded, ty)))
        }
        NodeKind::Binary(kind @ (BinaryKind::Add | BinaryKind::Sub | BinaryKind::Mul | BinaryKind::Div), a, b) => {
            let (x, y) = (constant_values(nodes, a)?, constant_values(nodes, b)?);
            let at = |v: &[f64], i: usize| {
                if v.len() == n {
                    Some(v[i])
                } else if v.len() == 1 {
                    Some(v[0])
                } else {
                    None
                }
            };
            let folded =
                (0..n).map(|i| arithmetic(element, kind, at(x, i)?, at(y, i)?, false)).collect::<Option<Vec<f64>>>()?;
            Some(Action::Become(constant(folded, ty)))
        }
        _ => None,
    }
}

/// `x op y` in `element`, as the interpreter computes it; `None` where
/// folding is not attempted (integer division, results beyond 2^53 that an
/// f64 cannot carry exactly). `negate` computes `-y` (for floats, the sign
/// flip, not `0 - y`).
fn arithmetic(element: ElementType, kind: BinaryKind, x: f64, y: f64, negate: bool) -> Option<f64> {
    let exact_integer = |v: i128| (v.unsigned_abs() <= 1 << 53).then_some(v as f64);
    Some(match element {
        ElementType::F32 => {
            let (x, y) = (x as f32, y as f32);
            (if negate {
                -y
            } else {
                match kind {
                    BinaryKind::Add => x + y,
                    BinaryKind::Sub => x - y,
                    BinaryKind::Mul => x * y,
                    _ => x / y,
                }
            }) as f64
        }
        ElementType::F64 => {
            if negate {
                -y
            } else {
                match kind {
                    BinaryKind::Add => x + y,
                    BinaryKind::Sub => x - y,
                    BinaryKind::Mul => x * y,
                    _ => x / y,
                }
            }
        }
        ElementType::I32 | ElementType::I64 => {
            let (x, y) = (x as i64, y as i64);
            let wide = match (negate, kind) {
                (true, _) => y.wrapping_neg(),
                (_, BinaryKind::Add) => x.wrapping_add(y),
                (_, BinaryKind::Sub) => x.wrapping_sub(y),
                (_, BinaryKind::Mul) => x.wrapping_mul(y),
                _ => return None,
            };
            let wrapped = if element == ElementType::I32 { wide as i32 as i64 } else { wide };
            exact_integer(wrapped as i128)?
        }
        ElementType::I1 => return None,
    })
}

/// For `(A B) C` of static 2-D operands, `(A, B, C)` when `A (B C)` does
/// fewer multiply-adds (`k n p + m k p` against `m k n + m n p`).
fn reassociable(nodes: &[Node], k: usize) -> Option<(usize, usize, usize)> {
    let NodeKind::Matmul(ab, c) = nodes[k].kind else { return None };
    let NodeKind::Matmul(a, b) = nodes[ab].kind else { return None };
    let shape = |j: usize| -> Option<Vec<i64>> {
        let s = &nodes[j].ty.shape;
        (s.len() == 2 && nodes[j].ty.is_static()).then(|| s.clone())
    };
    let (sa, sb, sc) = (shape(a)?, shape(b)?, shape(c)?);
    let (m, kk, n, p) = (sa[0], sa[1], sb[1], sc[1]);
    (kk * n * p + m * kk * p < m * kk * n + m * n * p).then_some((a, b, c))
}

/// Integer matmul chains reassociate exactly (wrapping arithmetic is
/// associative and commutative).
fn reassociate_integer_matmuls(nodes: &[Node], k: usize) -> Option<Action> {
    if nodes[k].ty.element.is_float() { None } else { reassociate(nodes, k) }
}

fn reassociate_float_matmuls(nodes: &[Node], k: usize) -> Option<Action> {
    if nodes[k].ty.element.is_float() { reassociate(nodes, k) } else { None }
}

/// Turns `(A B) C` into `A X` where `X = B C` is an earlier node (rules do
/// not insert nodes; [`insert_products`] puts `B C` there first).
fn reassociate(nodes: &[Node], k: usize) -> Option<Action> {
    let (a, b, c) = reassociable(nodes, k)?;
    let bc = (0..k).find(|&j| nodes[j].kind == NodeKind::Matmul(b, c))?;
    Some(Action::Become(NodeKind::Matmul(a, bc)))
}

/// Inserts, before each `(A B) C` that reassociation improves (integers,
/// or floats when `inexact`), the node `B C`; returns whether any was
/// inserted.
pub fn insert_products(program: &mut Program, inexact: bool) -> bool {
    let mut changed = false;
    for branch in program.tensors.iter_mut().flat_map(|t| &mut t.branches) {
        let mut k = 0;
        while k < branch.nodes.len() {
            let allowed = inexact || !branch.nodes[k].ty.element.is_float();
            if let (true, Some((_, b, c))) = (allowed, reassociable(&branch.nodes, k))
                && !branch.nodes[..k].iter().any(|x| x.kind == NodeKind::Matmul(b, c))
            {
                let ty = PointType {
                    shape: vec![branch.nodes[b].ty.shape[0], branch.nodes[c].ty.shape[1]],
                    element: branch.nodes[k].ty.element,
                };
                let node = Node { kind: NodeKind::Matmul(b, c), ty, location: branch.nodes[k].location };
                branch.nodes.insert(k, node);
                // Every reference to a node at or after k moves one place.
                for later in branch.nodes[k + 1..].iter_mut() {
                    later.kind = map_operands(&later.kind, |x| if x >= k { x + 1 } else { x });
                }
                if branch.result >= k {
                    branch.result += 1;
                }
                changed = true;
                k += 1;
            }
            k += 1;
        }
    }
    changed
}
