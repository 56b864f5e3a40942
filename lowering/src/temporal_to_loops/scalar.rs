//! The scalar op of each elementwise kind, built as typed IR: what one
//! element of a `temporal` unary, binary, comparison, select or cast
//! computes, matching the interpreter's arithmetic (NaN-propagating max
//! and min, integer division that never traps, saturating float-to-int
//! casts), and chains of them ([`Chain`]: elementwise ops fused into their
//! user's loop, computed from the chain's leaves).
//!
//! With `approximate` (`fast-math` on the CPU), `exp`, `tanh` and
//! `sigmoid` on `f32` are polynomial code ([`super::approximations`])
//! rather than libm calls.

use super::approximations;
use super::kernels::element_type;
use super::node_kinds::{Elementwise, operands_of};
use crate::ir_builder::{Builder, Compare, FloatCompare};
use melior::ir::Value;
use tempo_passes::program::{BinaryKind, ElementType, Node, NodeKind, Predicate, UnaryKind};

type Built<T> = Result<T, String>;

/// One element of `op` on `a` (its operands' elements, of type `operand`
/// for comparisons and casts); `element` is the result's element type.
pub(super) fn scalar<'c, 'a>(
    b: &Builder<'c, 'a>,
    op: Elementwise,
    a: &[Value<'c, 'a>],
    element: ElementType,
    operand: ElementType,
    approximate: bool,
) -> Built<Value<'c, 'a>> {
    let e = element_type(b, element);
    let float = element.is_float();
    if approximate && element == ElementType::F32 {
        match op {
            Elementwise::Unary(UnaryKind::Exp) => return approximations::exp(b, a[0]),
            Elementwise::Unary(UnaryKind::Tanh) => return approximations::tanh(b, a[0]),
            Elementwise::Unary(UnaryKind::Sigmoid) => return approximations::sigmoid(b, a[0]),
            _ => {}
        }
    }
    let binary = |f: &str, i: &str| b.value(if float { f } else { i }, &[a[0], a[1]], e, &[]);
    let unary = |name: &str| b.unary(name, a[0]);
    let zero = || if float { b.float(0.0, e) } else { b.constant(0, e) };
    match op {
        Elementwise::Binary(BinaryKind::Add) => binary("arith.addf", "arith.addi"),
        Elementwise::Binary(BinaryKind::Sub) => binary("arith.subf", "arith.subi"),
        Elementwise::Binary(BinaryKind::Mul) => binary("arith.mulf", "arith.muli"),
        Elementwise::Binary(BinaryKind::Div) if float => binary("arith.divf", ""),
        // Integer division never traps: x / 0 = 0, and MIN / -1 wraps to MIN.
        Elementwise::Binary(BinaryKind::Div) => {
            let (zero, one, minus) = (b.constant(0, e)?, b.constant(1, e)?, b.constant(-1, e)?);
            let by_zero = b.compare(Compare::Eq, a[1], zero)?;
            let by_minus = b.compare(Compare::Eq, a[1], minus)?;
            let special = b.arith("ori", by_zero, by_minus)?;
            let safe = b.select(special, one, a[1])?;
            let quotient = b.arith("divsi", a[0], safe)?;
            let negated = b.arith("subi", zero, a[0])?;
            let quotient = b.select(by_minus, negated, quotient)?;
            b.select(by_zero, zero, quotient)
        }
        Elementwise::Binary(BinaryKind::Max) => binary("arith.maximumf", "arith.maxsi"),
        Elementwise::Binary(BinaryKind::Min) => binary("arith.minimumf", "arith.minsi"),
        Elementwise::Binary(BinaryKind::Pow) => binary("math.powf", "math.ipowi"),
        Elementwise::Binary(BinaryKind::And) => binary("arith.andi", "arith.andi"),
        Elementwise::Binary(BinaryKind::Or) => binary("arith.ori", "arith.ori"),
        Elementwise::Unary(UnaryKind::Neg) if float => unary("arith.negf"),
        Elementwise::Unary(UnaryKind::Neg) => b.arith("subi", zero()?, a[0]),
        Elementwise::Unary(UnaryKind::Relu) => binary_with(b, float, "arith.maximumf", "arith.maxsi", a[0], zero()?),
        Elementwise::Unary(UnaryKind::Sigmoid) => {
            let one = b.float(1.0, e)?;
            let exp = b.unary("math.exp", b.unary("arith.negf", a[0])?)?;
            b.arith("divf", one, b.arith("addf", one, exp)?)
        }
        Elementwise::Unary(UnaryKind::Abs) if float => unary("math.absf"),
        // max(x, -x) (wrapping: the smallest integer stays itself).
        Elementwise::Unary(UnaryKind::Abs) => b.arith("maxsi", a[0], b.arith("subi", zero()?, a[0])?),
        // 1 above zero, -1 below, else the value itself (zeros, NaNs).
        Elementwise::Unary(UnaryKind::Sign) => {
            let (positive, negative) = if float {
                let (gt, lt) = (FloatCompare::Ogt, FloatCompare::Olt);
                (b.compare_floats(gt, a[0], zero()?)?, b.compare_floats(lt, a[0], zero()?)?)
            } else {
                (b.compare(Compare::Sgt, a[0], zero()?)?, b.compare(Compare::Slt, a[0], zero()?)?)
            };
            let one = if float { b.float(1.0, e)? } else { b.constant(1, e)? };
            let minus_one = if float { b.float(-1.0, e)? } else { b.constant(-1, e)? };
            b.select(positive, one, b.select(negative, minus_one, a[0])?)
        }
        // Never reached after temporal-autodiff (which removes it): the value.
        Elementwise::Unary(UnaryKind::StopGradient) => Ok(a[0]),
        Elementwise::Unary(UnaryKind::Not) => b.arith("xori", a[0], b.constant(1, e)?),
        Elementwise::Unary(UnaryKind::Exp) => unary("math.exp"),
        Elementwise::Unary(UnaryKind::Log) => unary("math.log"),
        Elementwise::Unary(UnaryKind::Sqrt) => unary("math.sqrt"),
        Elementwise::Unary(UnaryKind::Tanh) => unary("math.tanh"),
        Elementwise::Unary(UnaryKind::Sin) => unary("math.sin"),
        Elementwise::Unary(UnaryKind::Cos) => unary("math.cos"),
        Elementwise::Select => b.select(a[0], a[1], a[2]),
        Elementwise::Cast(from) => cast(b, a[0], from, element),
        Elementwise::Compare(predicate) => compare(b, predicate, a[0], a[1], operand),
    }
}

fn binary_with<'c, 'a>(
    b: &Builder<'c, 'a>,
    float: bool,
    f: &str,
    i: &str,
    x: Value<'c, 'a>,
    y: Value<'c, 'a>,
) -> Built<Value<'c, 'a>> {
    b.value(if float { f } else { i }, &[x, y], x.r#type(), &[])
}

use melior::ir::ValueLike;

/// An ordered (floats) or signed (integers) comparison of operands of
/// type `operand`.
fn compare<'c, 'a>(
    b: &Builder<'c, 'a>,
    predicate: Predicate,
    x: Value<'c, 'a>,
    y: Value<'c, 'a>,
    operand: ElementType,
) -> Built<Value<'c, 'a>> {
    if operand.is_float() {
        let p = match predicate {
            Predicate::Eq => FloatCompare::Oeq,
            Predicate::Ne => FloatCompare::One,
            Predicate::Lt => FloatCompare::Olt,
            Predicate::Le => FloatCompare::Ole,
            Predicate::Gt => FloatCompare::Ogt,
            Predicate::Ge => FloatCompare::Oge,
        };
        b.compare_floats(p, x, y)
    } else {
        let p = match predicate {
            Predicate::Eq => Compare::Eq,
            Predicate::Ne => Compare::Ne,
            Predicate::Lt => Compare::Slt,
            Predicate::Le => Compare::Sle,
            Predicate::Gt => Compare::Sgt,
            Predicate::Ge => Compare::Sge,
        };
        b.compare(p, x, y)
    }
}

/// `temporal.cast` of one element from `from` to `to`.
fn cast<'c, 'a>(b: &Builder<'c, 'a>, x: Value<'c, 'a>, from: ElementType, to: ElementType) -> Built<Value<'c, 'a>> {
    let t = element_type(b, to);
    let f = element_type(b, from);
    match (from, to) {
        (a, c) if a == c => Ok(x),
        (ElementType::I1, c) if c.is_float() => b.convert("arith.uitofp", x, t),
        (ElementType::I1, _) => b.convert("arith.extui", x, t),
        (a, ElementType::I1) if a.is_float() => b.compare_floats(FloatCompare::Une, x, b.float(0.0, f)?),
        (_, ElementType::I1) => b.compare(Compare::Ne, x, b.constant(0, f)?),
        (ElementType::F32, ElementType::F64) => b.convert("arith.extf", x, t),
        (ElementType::F64, ElementType::F32) => b.convert("arith.truncf", x, t),
        (a, c) if a.is_float() => saturating_float_to_int(b, x, to, c.byte_size() * 8),
        (_, c) if c.is_float() => b.convert("arith.sitofp", x, t),
        (ElementType::I32, ElementType::I64) => b.convert("arith.extsi", x, t),
        _ => b.convert("arith.trunci", x, t),
    }
}

/// Float to integer conversion with the semantics of `temporal.cast`:
/// truncation toward zero, saturating at the integer type's limits, NaN to
/// 0 (LLVM's plain `fptosi` is poison out of range; this is what the
/// interpreter and `llvm.fptosi.sat` give).
fn saturating_float_to_int<'c, 'a>(
    b: &Builder<'c, 'a>,
    x: Value<'c, 'a>,
    to: ElementType,
    bits: usize,
) -> Built<Value<'c, 'a>> {
    let (f, t) = (x.r#type(), element_type(b, to));
    let limit = 2f64.powi(bits as i32 - 1);
    let (lo, hi) = (b.float(-limit, f)?, b.float(limit, f)?);
    let nan = b.compare_floats(FloatCompare::Uno, x, x)?;
    let below = b.compare_floats(FloatCompare::Olt, x, lo)?;
    let above = b.compare_floats(FloatCompare::Oge, x, hi)?;
    let out = b.arith("ori", b.arith("ori", nan, below)?, above)?;
    let safe = b.select(out, b.float(0.0, f)?, x)?;
    let converted = b.convert("arith.fptosi", safe, t)?;
    let (min, max) = match bits {
        32 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    };
    let (imin, imax, zero) = (b.constant(min, t)?, b.constant(max, t)?, b.constant(0, t)?);
    let r1 = b.select(above, imax, converted)?;
    let r2 = b.select(below, imin, r1)?;
    b.select(nan, zero, r2)
}

/// The op of an elementwise node.
pub(super) fn op_of(node: &Node, nodes: &[Node]) -> Elementwise {
    match &node.kind {
        NodeKind::Cast(a) => Elementwise::Cast(nodes[*a].ty.element),
        kind => op_of_kind(kind).expect("elementwise"),
    }
}

/// The op of an elementwise node kind other than a cast (whose op needs
/// its operand's element type).
pub(super) fn op_of_kind(kind: &NodeKind) -> Option<Elementwise> {
    match kind {
        NodeKind::Unary(op, _) => Some(Elementwise::Unary(*op)),
        NodeKind::Binary(op, _, _) => Some(Elementwise::Binary(*op)),
        NodeKind::Compare(p, _, _) => Some(Elementwise::Compare(*p)),
        NodeKind::Select(..) => Some(Elementwise::Select),
        _ => None,
    }
}

/// Where a step of a chain takes an operand: a leaf (block argument) or
/// an earlier step.
#[derive(Clone, Copy, Debug)]
enum Source {
    Leaf(usize),
    Step(usize),
}

#[derive(Clone, Debug)]
struct Step {
    op: Elementwise,
    operands: Vec<Source>,
    element: ElementType,
    operand: ElementType,
}

/// An elementwise op with the elementwise ops fused under it: its
/// distinct leaves (values read from views, by node) and the scalar steps
/// computing it from them, in order; the last step is the chain's value.
#[derive(Clone, Debug)]
pub(super) struct Chain {
    pub leaves: Vec<usize>,
    steps: Vec<Step>,
}

impl Chain {
    /// Node `root` with the `inlined` nodes under it.
    pub(super) fn of(root: usize, nodes: &[Node], inlined: &[bool]) -> Chain {
        let mut leaves: Vec<usize> = Vec::new();
        let mut order: Vec<usize> = Vec::new();
        fn visit(k: usize, nodes: &[Node], inlined: &[bool], leaves: &mut Vec<usize>, order: &mut Vec<usize>) {
            for a in operands_of(&nodes[k].kind).expect("elementwise") {
                if inlined[a] {
                    visit(a, nodes, inlined, leaves, order);
                } else if !leaves.contains(&a) {
                    leaves.push(a);
                }
            }
            order.push(k);
        }
        visit(root, nodes, inlined, &mut leaves, &mut order);
        let steps = order
            .iter()
            .map(|&k| {
                let operands = operands_of(&nodes[k].kind).expect("elementwise");
                Step {
                    op: op_of(&nodes[k], nodes),
                    operands: operands
                        .iter()
                        .map(|a| match leaves.iter().position(|l| l == a) {
                            Some(i) => Source::Leaf(i),
                            None => Source::Step(order.iter().position(|o| o == a).expect("visited before")),
                        })
                        .collect(),
                    element: nodes[k].ty.element,
                    operand: nodes[operands[0]].ty.element,
                }
            })
            .collect();
        Chain { leaves, steps }
    }

    /// One op over `count` leaves of its own (numbered `0..count`).
    pub(super) fn single(op: Elementwise, count: usize, element: ElementType, operand: ElementType) -> Chain {
        let operands = (0..count).map(Source::Leaf).collect();
        Chain { leaves: (0..count).collect(), steps: vec![Step { op, operands, element, operand }] }
    }

    /// The chain's value from the values of its leaves.
    pub(super) fn apply<'c, 'a>(
        &self,
        b: &Builder<'c, 'a>,
        leaves: &[Value<'c, 'a>],
        approximate: bool,
    ) -> Built<Value<'c, 'a>> {
        let mut values: Vec<Value<'c, 'a>> = Vec::with_capacity(self.steps.len());
        for step in &self.steps {
            let operands: Vec<Value> = step
                .operands
                .iter()
                .map(|s| match *s {
                    Source::Leaf(i) => leaves[i],
                    Source::Step(j) => values[j],
                })
                .collect();
            values.push(scalar(b, step.op, &operands, step.element, step.operand, approximate)?);
        }
        values.pop().ok_or_else(|| "compiler fault: an empty elementwise chain".to_string())
    }
}
