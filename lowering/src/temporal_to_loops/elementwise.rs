//! Elementwise ops in `lower-temporal-to-loops`: one `linalg.generic` per
//! op over the broadcast result (NumPy rules: a stretched dimension reads
//! index 0), with the scalar body of each op matching the interpreter's
//! arithmetic (NaN-propagating max/min, saturating float-to-int casts).
//!
//! Chains are fused: an elementwise op whose only user is an elementwise op
//! of the same shape, or a sum, maximum or mean (and which is not the
//! branch's result), gets no buffer and no loop of its own; its user's
//! `linalg.generic` computes it inline, from the leaves of the chain. The
//! scalar ops are the same, in the same order per element, so results do
//! not change; a softmax's or a norm's
//! chain of elementwise ops becomes one loop instead of several, with no
//! temporaries between them.

use super::kernels::{Config, Kernel, KernelOperands, TypedView};
use super::scalar::Chain;
use super::*;
use crate::ir_builder::{Builder, Extent};
use melior::ir::{AffineExpr, AffineMap, Value};
use tempo_passes::program::Node;

impl Emitter<'_, '_> {
    /// One elementwise op over `inputs` (of elements `input_elements`)
    /// into `target` (see [`build_elementwise`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn elementwise(
        &mut self,
        inputs: &[&View],
        input_elements: &[ElementType],
        target: &View,
        point: &PointType,
        op: Elementwise,
        indent: &str,
        out: &mut String,
    ) {
        let mut operands = KernelOperands::default();
        let leaves = inputs.iter().map(|v| operands.view(v)).collect();
        let target = operands.view(target);
        let operand = match op {
            Elementwise::Cast(from) => from,
            _ => input_elements[0],
        };
        let chain = Chain::single(op, inputs.len(), point.element, operand);
        self.call_kernel(operands, Kernel::Elementwise { leaves, target, chain }, indent, out);
    }
}

/// An elementwise op, or a chain of them fused, over its leaves into
/// `target`: one `linalg.generic` over the result, the leaves broadcast as
/// NumPy does (a stretched dimension reads index 0).
pub(super) fn build_elementwise<'c, 'a>(
    b: &Builder<'c, 'a>,
    leaves: &[TypedView<'c, 'a>],
    target: &TypedView<'c, 'a>,
    chain: &Chain,
    config: Config,
) -> Result<(), String> {
    let rank = target.sizes.len();
    let mut maps = broadcast_maps(b.context(), leaves, &target.sizes);
    maps.push(AffineMap::multi_dim_identity(b.context(), rank));
    let inputs: Vec<Value> = leaves.iter().map(|v| v.value).collect();
    let (body, arguments) = b.generic(&inputs, &[target.value], &maps, &vec!["parallel"; rank])?;
    let value = chain.apply(&body, &arguments[..leaves.len()], config.approximate())?;
    body.yield_values("linalg.yield", &[value])
}

/// The indexing maps of `inputs` over a result of sizes `shape`, under
/// NumPy broadcasting: operands align at the last dimension, and a static
/// size 1 under a larger result dimension reads index 0.
pub(super) fn broadcast_maps<'c>(
    context: &'c melior::Context,
    inputs: &[TypedView<'c, '_>],
    shape: &[Extent<'c, '_>],
) -> Vec<AffineMap<'c>> {
    let rank = shape.len();
    let unit = |e: &Extent| matches!(e, Extent::Static(1));
    inputs
        .iter()
        .map(|v| {
            let skip = rank - v.sizes.len();
            let exprs: Vec<AffineExpr> = (0..v.sizes.len())
                .map(|j| match unit(&v.sizes[j]) && !unit(&shape[skip + j]) {
                    true => AffineExpr::constant(context, 0),
                    false => AffineExpr::dim(context, skip + j),
                })
                .collect();
            AffineMap::new(context, rank, 0, &exprs)
        })
        .collect()
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Elementwise {
    Unary(UnaryKind),
    Binary(BinaryKind),
    Compare(Predicate),
    Select,
    /// From this element type to the result's.
    Cast(ElementType),
}

/// The scalar body of an elementwise `linalg.generic` (inputs `%a0`,
/// `%a1`, `%a2`); `element` is the result's element type.
///
/// With `approximate` (`fast-math` on the CPU), `exp`, `tanh` and
/// `sigmoid` on `f32` are polynomial code ([`super::approximations`])
/// rather than libm calls.
pub(super) fn scalar_body(op: Elementwise, element: ElementType, approximate: bool) -> String {
    let e = element.mlir();
    let float = element.is_float();
    if approximate && element == ElementType::F32 {
        use super::approximations::{exp_f32, sigmoid_f32, tanh_f32};
        let code = match op {
            Elementwise::Unary(UnaryKind::Exp) => Some(exp_f32("%a0", "r")),
            Elementwise::Unary(UnaryKind::Tanh) => Some(tanh_f32("%a0", "r")),
            Elementwise::Unary(UnaryKind::Sigmoid) => Some(sigmoid_f32("%a0", "r")),
            _ => None,
        };
        if let Some(code) = code {
            return format!("{code}linalg.yield %r : f32");
        }
    }
    let binary = |f: &str, i: &str| format!("%r = {} %a0, %a1 : {e}\nlinalg.yield %r : {e}", if float { f } else { i });
    let unary = |name: &str| format!("%r = {name} %a0 : {e}\nlinalg.yield %r : {e}");
    match op {
        Elementwise::Binary(BinaryKind::Add) => binary("arith.addf", "arith.addi"),
        Elementwise::Binary(BinaryKind::Sub) => binary("arith.subf", "arith.subi"),
        Elementwise::Binary(BinaryKind::Mul) => binary("arith.mulf", "arith.muli"),
        Elementwise::Binary(BinaryKind::Div) if float => binary("arith.divf", ""),
        // Integer division never traps: x / 0 = 0, and MIN / -1 wraps to MIN.
        Elementwise::Binary(BinaryKind::Div) => format!(
            "%zero = arith.constant 0 : {e}\n%one = arith.constant 1 : {e}\n%minus = arith.constant -1 : {e}\n\
             %by_zero = arith.cmpi eq, %a1, %zero : {e}\n%by_minus = arith.cmpi eq, %a1, %minus : {e}\n\
             %special = arith.ori %by_zero, %by_minus : i1\n%safe = arith.select %special, %one, %a1 : {e}\n\
             %q = arith.divsi %a0, %safe : {e}\n%negated = arith.subi %zero, %a0 : {e}\n\
             %q1 = arith.select %by_minus, %negated, %q : {e}\n%r = arith.select %by_zero, %zero, %q1 : {e}\n\
             linalg.yield %r : {e}"
        ),
        Elementwise::Binary(BinaryKind::Max) => binary("arith.maximumf", "arith.maxsi"),
        Elementwise::Binary(BinaryKind::Min) => binary("arith.minimumf", "arith.minsi"),
        Elementwise::Binary(BinaryKind::Pow) => binary("math.powf", "math.ipowi"),
        Elementwise::Binary(BinaryKind::And) => binary("arith.andi", "arith.andi"),
        Elementwise::Binary(BinaryKind::Or) => binary("arith.ori", "arith.ori"),
        Elementwise::Unary(UnaryKind::Neg) if float => unary("arith.negf"),
        Elementwise::Unary(UnaryKind::Neg) => {
            format!("%z = arith.constant 0 : {e}\n%r = arith.subi %z, %a0 : {e}\nlinalg.yield %r : {e}")
        }
        Elementwise::Unary(UnaryKind::Relu) => {
            let (zero, max) = if float { ("0.0", "arith.maximumf") } else { ("0", "arith.maxsi") };
            format!("%z = arith.constant {zero} : {e}\n%r = {max} %a0, %z : {e}\nlinalg.yield %r : {e}")
        }
        Elementwise::Unary(UnaryKind::Sigmoid) => format!(
            "%one = arith.constant 1.0 : {e}\n%n = arith.negf %a0 : {e}\n%x = math.exp %n : {e}\n%d = arith.addf %one, %x : {e}\n%r = arith.divf %one, %d : {e}\nlinalg.yield %r : {e}"
        ),
        Elementwise::Unary(UnaryKind::Abs) if float => unary("math.absf"),
        // max(x, -x) (wrapping: the smallest integer stays itself).
        Elementwise::Unary(UnaryKind::Abs) => {
            format!(
                "%z = arith.constant 0 : {e}\n%n = arith.subi %z, %a0 : {e}\n%r = arith.maxsi %a0, %n : {e}\nlinalg.yield %r : {e}"
            )
        }
        // Never reached after temporal-autodiff (which removes it): the value.
        Elementwise::Unary(UnaryKind::StopGradient) => format!("linalg.yield %a0 : {e}"),
        Elementwise::Unary(UnaryKind::Not) => {
            "%true = arith.constant true\n%r = arith.xori %a0, %true : i1\nlinalg.yield %r : i1".to_string()
        }
        Elementwise::Unary(u) => unary(match u {
            UnaryKind::Exp => "math.exp",
            UnaryKind::Log => "math.log",
            UnaryKind::Sqrt => "math.sqrt",
            UnaryKind::Tanh => "math.tanh",
            UnaryKind::Sin => "math.sin",
            UnaryKind::Cos => "math.cos",
            _ => unreachable!("handled above"),
        }),
        Elementwise::Cast(_) | Elementwise::Select => conversion_body(op, element),
        Elementwise::Compare(_) => unreachable!("compare_body types its operands"),
    }
}

/// An ordered (floats) or signed (integers) comparison of operands of type
/// `operand`.
pub(super) fn compare_body(predicate: Predicate, operand: ElementType) -> String {
    let e = operand.mlir();
    let line = if operand.is_float() {
        let p = match predicate {
            Predicate::Eq => "oeq",
            Predicate::Ne => "one",
            Predicate::Lt => "olt",
            Predicate::Le => "ole",
            Predicate::Gt => "ogt",
            Predicate::Ge => "oge",
        };
        format!("%r = arith.cmpf {p}, %a0, %a1 : {e}")
    } else {
        let p = match predicate {
            Predicate::Eq => "eq",
            Predicate::Ne => "ne",
            Predicate::Lt => "slt",
            Predicate::Le => "sle",
            Predicate::Gt => "sgt",
            Predicate::Ge => "sge",
        };
        format!("%r = arith.cmpi {p}, %a0, %a1 : {e}")
    };
    format!("{line}\nlinalg.yield %r : i1")
}

/// Bodies whose input and result element types differ.
/// Float to integer conversion with the semantics of `temporal.cast`:
/// truncation toward zero, saturating at the integer type's limits, NaN to
/// 0 (LLVM's plain `fptosi` is poison out of range; this is what the
/// interpreter and `llvm.fptosi.sat` give). Computes `%r`.
pub(super) fn saturating_float_to_int(f: &str, t: &str, bits: usize) -> String {
    let limit = 1u128 << (bits - 1);
    let (min, max) = (format!("-{limit}"), (limit - 1).to_string());
    [
        format!("%lo = arith.constant -{limit}.0 : {f}"),
        format!("%hi = arith.constant {limit}.0 : {f}"),
        format!("%nan = arith.cmpf uno, %a0, %a0 : {f}"),
        format!("%below = arith.cmpf olt, %a0, %lo : {f}"),
        format!("%above = arith.cmpf oge, %a0, %hi : {f}"),
        "%out1 = arith.ori %nan, %below : i1".to_string(),
        "%out = arith.ori %out1, %above : i1".to_string(),
        format!("%zf = arith.constant 0.0 : {f}"),
        format!("%safe = arith.select %out, %zf, %a0 : {f}"),
        format!("%c = arith.fptosi %safe : {f} to {t}"),
        format!("%imin = arith.constant {min} : {t}"),
        format!("%imax = arith.constant {max} : {t}"),
        format!("%zi = arith.constant 0 : {t}"),
        format!("%r1 = arith.select %above, %imax, %c : {t}"),
        format!("%r2 = arith.select %below, %imin, %r1 : {t}"),
        format!("%r = arith.select %nan, %zi, %r2 : {t}"),
    ]
    .join("\n")
}

pub(super) fn conversion_body(op: Elementwise, element: ElementType) -> String {
    let e = element.mlir();
    match op {
        Elementwise::Select => format!("%r = arith.select %a0, %a1, %a2 : {e}\nlinalg.yield %r : {e}"),
        Elementwise::Cast(from) => {
            let (f, t) = (from.mlir(), e);
            let line = match (from, element) {
                (a, b) if a == b => return "linalg.yield %a0 : ".to_string() + e,
                (ElementType::I1, b) if b.is_float() => format!("%r = arith.uitofp %a0 : i1 to {t}"),
                (ElementType::I1, _) => format!("%r = arith.extui %a0 : i1 to {t}"),
                (a, ElementType::I1) if a.is_float() => {
                    format!("%z = arith.constant 0.0 : {f}\n%r = arith.cmpf une, %a0, %z : {f}")
                }
                (_, ElementType::I1) => format!("%z = arith.constant 0 : {f}\n%r = arith.cmpi ne, %a0, %z : {f}"),
                (ElementType::F32, ElementType::F64) => format!("%r = arith.extf %a0 : {f} to {t}"),
                (ElementType::F64, ElementType::F32) => format!("%r = arith.truncf %a0 : {f} to {t}"),
                (a, b) if a.is_float() => saturating_float_to_int(f, t, b.byte_size() * 8),
                (_, b) if b.is_float() => format!("%r = arith.sitofp %a0 : {f} to {t}"),
                (ElementType::I32, ElementType::I64) => format!("%r = arith.extsi %a0 : {f} to {t}"),
                _ => format!("%r = arith.trunci %a0 : {f} to {t}"),
            };
            format!("{line}\nlinalg.yield %r : {t}")
        }
        _ => unreachable!("only conversions"),
    }
}

/// The operands of an elementwise node (`None` for other kinds).
pub(super) fn operands_of(kind: &NodeKind) -> Option<Vec<usize>> {
    match kind {
        NodeKind::Unary(_, a) | NodeKind::Cast(a) => Some(vec![*a]),
        NodeKind::Binary(_, a, b) | NodeKind::Compare(_, a, b) => Some(vec![*a, *b]),
        NodeKind::Select(c, a, b) => Some(vec![*c, *a, *b]),
        _ => None,
    }
}

/// The elementwise nodes computed inside their only user's loop: used
/// once, by an elementwise node of the same type shape or by a sum, maximum
/// or mean, and not the branch's result.
pub(super) fn inlined_nodes(branch: &tempo_passes::program::Branch) -> Vec<bool> {
    let n = branch.nodes.len();
    let mut uses = vec![0usize; n];
    let mut user = vec![usize::MAX; n];
    for (k, node) in branch.nodes.iter().enumerate() {
        for a in tempo_passes::rewrite::operands(&node.kind) {
            uses[a] += 1;
            user[a] = k;
        }
    }
    (0..n)
        .map(|k| {
            let fusing_user = match &branch.nodes.get(user[k]).map(|u| &u.kind) {
                // Same shape: no broadcasting on the way to the user.
                Some(kind) if operands_of(kind).is_some() => branch.nodes[k].ty.shape == branch.nodes[user[k]].ty.shape,
                Some(NodeKind::Reduce(ReduceKind::Sum | ReduceKind::Max | ReduceKind::Mean, ..)) => true,
                _ => false,
            };
            k != branch.result && uses[k] == 1 && operands_of(&branch.nodes[k].kind).is_some() && fusing_user
        })
        .collect()
}

/// The op of an elementwise node.
fn op_of(node: &Node, nodes: &[Node]) -> Elementwise {
    match &node.kind {
        NodeKind::Unary(op, _) => Elementwise::Unary(*op),
        NodeKind::Binary(op, _, _) => Elementwise::Binary(*op),
        NodeKind::Compare(p, _, _) => Elementwise::Compare(*p),
        NodeKind::Select(..) => Elementwise::Select,
        NodeKind::Cast(a) => Elementwise::Cast(nodes[*a].ty.element),
        _ => unreachable!("elementwise"),
    }
}

/// The scalar body of node `k`'s op with its values renamed: operand `i`
/// is `operand[i]`, the result `%r{k}`, temporaries `%{name}_{k}`; without
/// the final `linalg.yield`, whose value (renamed: `%r{k}`, or an operand
/// for a body that only forwards it, such as a cast to the same type) is
/// returned with the lines. `tag` is appended to every name the body
/// defines (to keep names apart from other code in the same scope).
pub(super) fn renamed_body(
    k: usize,
    nodes: &[Node],
    operands: &[String],
    tag: &str,
    approximate: bool,
) -> (String, String) {
    let node = &nodes[k];
    let body = match op_of(node, nodes) {
        Elementwise::Compare(p) => compare_body(p, nodes[operands_of(&node.kind).expect("elementwise")[0]].ty.element),
        op => scalar_body(op, node.ty.element, approximate),
    };
    let mut out = String::new();
    let mut value = format!("%r{k}{tag}");
    for line in body.lines() {
        let renamed = rename_values(line, |name| match name.strip_prefix('a').and_then(|i| i.parse::<usize>().ok()) {
            Some(i) if i < operands.len() => operands[i].clone(),
            _ if name == "r" => format!("%r{k}{tag}"),
            _ => format!("%{name}_{k}{tag}"),
        });
        if let Some(yielded) = renamed.trim_start().strip_prefix("linalg.yield ") {
            value = yielded.split_whitespace().next().unwrap_or_default().to_string();
            continue;
        }
        out += &renamed;
        out.push('\n');
    }
    (out, value)
}

/// An elementwise node with the inlined elementwise nodes under it: its
/// distinct leaves (views read by the fused loop) and the scalar code
/// computing it from them.
pub(super) struct TextChain {
    /// The SSA value of the chain's result in the body.
    value: String,
    leaf_views: Vec<View>,
    lines: Vec<String>,
}

impl TextChain {
    pub(super) fn of(root: usize, nodes: &[Node], views: &[View], inlined: &[bool], approximate: bool) -> TextChain {
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
        let mut lines = Vec::new();
        let mut values: std::collections::HashMap<usize, String> = std::collections::HashMap::new();
        for &k in &order {
            let operands: Vec<String> = operands_of(&nodes[k].kind)
                .expect("elementwise")
                .iter()
                .map(|&a| match leaves.iter().position(|&l| l == a) {
                    Some(i) => format!("%a{i}"),
                    None => values[&a].clone(),
                })
                .collect();
            let (body, value) = renamed_body(k, nodes, &operands, "", approximate);
            lines.extend(body.lines().map(str::to_string));
            values.insert(k, value);
        }
        let value = values[&root].clone();
        let leaf_views = leaves
            .iter()
            .map(|&l| View { name: views[l].name.clone(), ty: views[l].ty.clone(), sizes: views[l].sizes.clone() })
            .collect();
        TextChain { value, leaf_views, lines }
    }

    /// The views the fused loop reads.
    pub(super) fn leaf_views(&self) -> Vec<&View> {
        self.leaf_views.iter().collect()
    }

    /// The scalar code, ending with the chain's value in [`Chain::value`].
    pub(super) fn body_lines(&self) -> &[String] {
        &self.lines
    }

    pub(super) fn value(&self) -> String {
        self.value.clone()
    }
}

impl Emitter<'_, '_> {
    /// Node `root` with the chain of inlined elementwise nodes under it, as
    /// one `linalg.generic` into `target` over the chain's leaves.
    pub(super) fn fused_elementwise(
        &mut self,
        root: usize,
        nodes: &[Node],
        views: &[View],
        inlined: &[bool],
        target: &View,
        indent: &str,
        out: &mut String,
    ) {
        let chain = Chain::of(root, nodes, inlined);
        let mut operands = KernelOperands::default();
        let leaves = chain.leaves.iter().map(|&l| operands.view(&views[l])).collect();
        let target = operands.view(target);
        self.call_kernel(operands, Kernel::Elementwise { leaves, target, chain }, indent, out);
    }
}
