//! The program model: an owned, checked view of a temporal-dialect module
//! (dimensions, recurrent tensors, their ordered branches and the per-point
//! expression of each branch). Every temporal-level analysis, the lowering
//! and the runtime checks read programs through this model; building it
//! performs the structural and type checks of `temporal-verify`.

use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::diagnostics::PassDiagnostic;
use melior::ir::{
    Attribute, Location, OperationRef, RegionLike, Type, Value, ValueLike, attribute::AttributeLike,
    operation::OperationLike, r#type::TypeLike,
};
use mlir_sys::{
    mlirArrayAttrGetElement, mlirArrayAttrGetNumElements, mlirAttributeGetType, mlirAttributeIsAArray,
    mlirAttributeIsADenseElements, mlirAttributeIsAString, mlirAttributeIsAType, mlirIntegerTypeGetWidth,
    mlirShapedTypeGetDimSize, mlirShapedTypeGetElementType, mlirShapedTypeGetRank, mlirStringAttrGetValue,
    mlirTypeAttrGetValue, mlirTypeEqual, mlirTypeIsAF32, mlirTypeIsAF64, mlirTypeIsAInteger, mlirTypeIsARankedTensor,
};
use std::fmt;
use std::sync::Arc;
use tempo_dialects::{block_operations, temporal};

/// Element types of point values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    F32,
    F64,
    I32,
    I64,
    I1,
}

impl ElementType {
    /// MLIR spelling.
    pub fn mlir(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F64 => "f64",
            Self::I32 => "i32",
            Self::I64 => "i64",
            Self::I1 => "i1",
        }
    }
    /// Whether this is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, Self::F32 | Self::F64)
    }
    /// Size in bytes of one element in memory.
    pub fn byte_size(self) -> usize {
        match self {
            Self::F32 | Self::I32 => 4,
            Self::F64 | Self::I64 => 8,
            Self::I1 => 1,
        }
    }
    /// numpy dtype name.
    pub fn numpy(self) -> &'static str {
        match self {
            Self::F32 => "float32",
            Self::F64 => "float64",
            Self::I32 => "int32",
            Self::I64 => "int64",
            Self::I1 => "bool",
        }
    }
}

/// The type of one point of a recurrent tensor (`tensor<4x3xf32>`, always
/// static) or of a value computed in a branch, whose leading dimensions may
/// be dynamic ([`DYNAMIC`], printed `?`) after a range read.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PointType {
    pub shape: Vec<i64>,
    pub element: ElementType,
}

/// The largest static size of one value (a tensor's point or an op's
/// result), in bytes: larger types are refused where they are declared
/// rather than overflowing sizes or allocations later.
pub const MAX_VALUE_BYTES: u64 = 1 << 30;

/// A dimension of dynamic size.
pub const DYNAMIC: i64 = -1;

impl PointType {
    /// Reads a ranked, static-shaped tensor type of a supported element type.
    pub fn from_type(ty: Type) -> Result<Self, String> {
        unsafe {
            let raw = ty.to_raw();
            if !mlirTypeIsARankedTensor(raw) {
                return Err(format!("point type must be a ranked tensor, got {ty}"));
            }
            let rank = mlirShapedTypeGetRank(raw);
            let shape = (0..rank)
                .map(|i| mlirShapedTypeGetDimSize(raw, i as isize))
                .map(|d| if d < 0 { DYNAMIC } else { d })
                .collect();
            let el = mlirShapedTypeGetElementType(raw);
            let element = if mlirTypeIsAF32(el) {
                ElementType::F32
            } else if mlirTypeIsAF64(el) {
                ElementType::F64
            } else if mlirTypeIsAInteger(el) {
                match mlirIntegerTypeGetWidth(el) {
                    1 => ElementType::I1,
                    32 => ElementType::I32,
                    64 => ElementType::I64,
                    w => return Err(format!("unsupported integer width {w} in {ty}")),
                }
            } else {
                return Err(format!("unsupported element type in {ty}"));
            };
            let point = Self { shape, element };
            // Static sizes of 0 would reach the lowering as slices of
            // nothing (which MLIR's verifier refuses): one meaning for both
            // modes, refused here at the op. Zero bounds along temporal
            // dimensions and empty dynamic ranges are values of their own.
            if point.shape.contains(&0) {
                return Err(format!(
                    "{ty} has a dimension of size 0: values without elements are not supported (a temporal dimension's bound may be 0, and a range read may be empty)"
                ));
            }
            let bytes = point
                .shape
                .iter()
                .filter(|&&d| d != DYNAMIC)
                .try_fold(element.byte_size() as u64, |acc, &d| acc.checked_mul(d as u64));
            match bytes {
                Some(b) if b <= MAX_VALUE_BYTES => Ok(point),
                _ => Err(format!(
                    "{ty} is too large: a value of one point may hold at most {MAX_VALUE_BYTES} bytes (1 GiB)"
                )),
            }
        }
    }

    /// Number of elements of one point (static shapes only).
    pub fn num_elements(&self) -> usize {
        self.shape.iter().product::<i64>() as usize
    }

    /// Whether every dimension has a static size.
    pub fn is_static(&self) -> bool {
        self.shape.iter().all(|&d| d != DYNAMIC)
    }

    /// The shape that operands of these shapes broadcast to under NumPy's
    /// rules: shapes are aligned at their last dimension, missing leading
    /// dimensions and static size-1 dimensions stretch, every other size must
    /// match, where a dynamic size matches any size but 1 (that the sizes are
    /// equal at run time is `dynamic_sizes`' proof, which refuses a range
    /// against a static size). `None` when they do not broadcast.
    pub fn broadcast_shape(shapes: &[&[i64]]) -> Option<Vec<i64>> {
        let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
        let mut result = vec![1; rank];
        for shape in shapes {
            let skip = rank - shape.len();
            for (k, &d) in shape.iter().enumerate() {
                let r = &mut result[skip + k];
                if d == 1 {
                    continue;
                }
                if *r == 1 || *r == DYNAMIC {
                    *r = d;
                } else if *r != d && d != DYNAMIC {
                    return None;
                }
            }
        }
        Some(result)
    }

    /// Whether a value of type `self` may be used where `other` is expected:
    /// the same element type and rank, sizes equal or one of them dynamic.
    pub fn compatible(&self, other: &PointType) -> bool {
        self.element == other.element
            && self.shape.len() == other.shape.len()
            && self.shape.iter().zip(&other.shape).all(|(&a, &b)| a == b || a == DYNAMIC || b == DYNAMIC)
    }
}

impl fmt::Display for PointType {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "tensor<")?;
        for &d in &self.shape {
            if d == DYNAMIC {
                write!(f, "?x")?;
            } else {
                write!(f, "{d}x")?;
            }
        }
        write!(f, "{}>", self.element.mlir())
    }
}

/// A temporal dimension `name < bound`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dim {
    pub name: String,
    pub bound: String,
}

/// Elementwise unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryKind {
    Neg,
    Exp,
    Log,
    Sqrt,
    Tanh,
    Sigmoid,
    Relu,
    Sin,
    Cos,
    Abs,
    /// 1, -1, or the operand (zero, NaN) by its sign.
    Sign,
    Not,
    /// The operand's value; no gradient passes (`temporal.stop_gradient`,
    /// removed by `temporal-autodiff`).
    StopGradient,
}

impl UnaryKind {
    /// The op's name in the temporal dialect, without the prefix.
    pub fn op_name(self) -> &'static str {
        match self {
            Self::Neg => "neg",
            Self::Exp => "exp",
            Self::Log => "log",
            Self::Sqrt => "sqrt",
            Self::Tanh => "tanh",
            Self::Sigmoid => "sigmoid",
            Self::Relu => "relu",
            Self::Sin => "sin",
            Self::Cos => "cos",
            Self::Abs => "abs",
            Self::Sign => "sign",
            Self::Not => "not",
            Self::StopGradient => "stop_gradient",
        }
    }

    /// What the operand must be, if `element` is not it (the verifier's
    /// message): `not` takes booleans, negation, relu and abs any number,
    /// the others floats.
    pub fn operand_needs(self, element: ElementType) -> Option<&'static str> {
        let boolean = element == ElementType::I1;
        match self {
            Self::Not => (!boolean).then_some("a boolean (i1)"),
            Self::StopGradient => None,
            Self::Neg | Self::Relu | Self::Abs | Self::Sign => boolean.then_some("a numeric"),
            _ => (!element.is_float()).then_some("a floating-point"),
        }
    }

    /// Every kind, in declaration order.
    pub const ALL: [Self; 13] = [
        Self::Neg,
        Self::Exp,
        Self::Log,
        Self::Sqrt,
        Self::Tanh,
        Self::Sigmoid,
        Self::Relu,
        Self::Sin,
        Self::Cos,
        Self::Abs,
        Self::Sign,
        Self::Not,
        Self::StopGradient,
    ];

    /// The kind of op `name` (with the dialect's prefix), if it is one.
    pub fn of_op(name: &str) -> Option<Self> {
        let short = name.strip_prefix("temporal.")?;
        Self::ALL.into_iter().find(|k| k.op_name() == short)
    }
}

/// Elementwise binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryKind {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Pow,
    And,
    Or,
}

impl BinaryKind {
    /// The op's name in the temporal dialect, without the prefix.
    pub fn op_name(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Sub => "sub",
            Self::Mul => "mul",
            Self::Div => "div",
            Self::Max => "max",
            Self::Min => "min",
            Self::Pow => "pow",
            Self::And => "and",
            Self::Or => "or",
        }
    }

    /// Every kind, in declaration order.
    pub const ALL: [Self; 9] =
        [Self::Add, Self::Sub, Self::Mul, Self::Div, Self::Max, Self::Min, Self::Pow, Self::And, Self::Or];

    /// The kind of op `name` (with the dialect's prefix), if it is one.
    pub fn of_op(name: &str) -> Option<Self> {
        let short = name.strip_prefix("temporal.")?;
        Self::ALL.into_iter().find(|k| k.op_name() == short)
    }
}

/// Comparison predicates (ordered for floats, signed for integers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Predicate {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Predicate {
    /// Parses the `predicate` attribute's value.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "eq" => Self::Eq,
            "ne" => Self::Ne,
            "lt" => Self::Lt,
            "le" => Self::Le,
            "gt" => Self::Gt,
            "ge" => Self::Ge,
            _ => return None,
        })
    }
    /// Whether `ordering` (of lhs against rhs) satisfies the predicate.
    pub fn holds(self, ordering: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            Self::Eq => ordering == Equal,
            Self::Ne => ordering != Equal,
            Self::Lt => ordering == Less,
            Self::Le => ordering != Greater,
            Self::Gt => ordering == Greater,
            Self::Ge => ordering != Less,
        }
    }
    /// The attribute text.
    pub fn text(self) -> &'static str {
        match self {
            Self::Eq => "eq",
            Self::Ne => "ne",
            Self::Lt => "lt",
            Self::Le => "le",
            Self::Gt => "gt",
            Self::Ge => "ge",
        }
    }
}

/// Reductions along one axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    Sum,
    Max,
    /// Sum divided by the length of the axis (floats).
    Mean,
    /// Index (i64) of the first maximum along the axis; 0 for an empty axis.
    ArgMax,
    /// Running sum along the axis, which is kept.
    CumSum,
}

impl ReduceKind {
    /// The op's name in the temporal dialect, without the prefix.
    pub fn op_name(self) -> &'static str {
        match self {
            Self::Sum => "reduce_sum",
            Self::Max => "reduce_max",
            Self::Mean => "reduce_mean",
            Self::ArgMax => "argmax",
            Self::CumSum => "cumsum",
        }
    }

    /// Every kind, in declaration order.
    pub const ALL: [Self; 5] = [Self::Sum, Self::Max, Self::Mean, Self::ArgMax, Self::CumSum];

    /// The kind of op `name` (with the dialect's prefix), if it is one.
    pub fn of_op(name: &str) -> Option<Self> {
        let short = name.strip_prefix("temporal.")?;
        Self::ALL.into_iter().find(|k| k.op_name() == short)
    }
}

/// Ops that only move elements; every result element comes from one
/// operand element ([`Movement::source`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Movement {
    /// Result dimension `i` is operand dimension `permutation[i]`.
    Permute(Vec<usize>),
    Flip(usize),
    Slice(Vec<i64>),
    Reshape,
    Expand,
    Concat(usize),
    Arange,
}

impl Movement {
    /// For a result element at `index` (result shape `out`, operand shapes
    /// `inputs`), the operand it comes from and its index there; `None` for
    /// [`Movement::Arange`], whose element is its own position.
    pub fn source(&self, index: &[usize], out: &[usize], inputs: &[Vec<usize>]) -> Option<(usize, Vec<usize>)> {
        let strides = |shape: &[usize]| {
            let mut s = vec![1usize; shape.len()];
            for k in (0..shape.len().saturating_sub(1)).rev() {
                s[k] = s[k + 1] * shape[k + 1];
            }
            s
        };
        Some(match self {
            Movement::Permute(p) => {
                let mut at = vec![0; index.len()];
                for (i, &k) in p.iter().enumerate() {
                    at[k] = index[i];
                }
                (0, at)
            }
            Movement::Flip(axis) => {
                let mut at = index.to_vec();
                at[*axis] = out[*axis] - 1 - index[*axis];
                (0, at)
            }
            Movement::Slice(offsets) => (0, index.iter().zip(offsets).map(|(&i, &o)| i + o as usize).collect()),
            Movement::Reshape => {
                let linear: usize = index.iter().zip(strides(out)).map(|(i, s)| i * s).sum();
                let input = &inputs[0];
                (0, strides(input).iter().zip(input).map(|(&s, &n)| (linear / s) % n.max(1)).collect())
            }
            Movement::Expand => {
                let input = &inputs[0];
                let skip = out.len() - input.len();
                (0, input.iter().enumerate().map(|(k, &n)| if n == 1 { 0 } else { index[skip + k] }).collect())
            }
            Movement::Concat(axis) => {
                let first = inputs[0][*axis];
                if index[*axis] < first {
                    (0, index.to_vec())
                } else {
                    let mut at = index.to_vec();
                    at[*axis] -= first;
                    (1, at)
                }
            }
            Movement::Arange => return None,
        })
    }
}

/// A contraction in Einstein notation (`"bqd,bkd->bqk"`): one label per
/// dimension of each operand and of the result. Every result element is the
/// sum, over the labels missing from the result (the summed labels, in the
/// order they first appear in the operands, row-major), of the product of
/// the operands' elements taken left to right, accumulated from zero in that
/// order (so compiled code can match the interpreter bit for bit).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Einsum {
    pub operands: Vec<Vec<char>>,
    pub result: Vec<char>,
}

impl Einsum {
    /// Parses `"ab,bc->ac"`: ASCII letters, one string per operand, the
    /// result after `->`. A label may appear once per operand (no
    /// diagonals) and once in the result, and every result label in some
    /// operand.
    pub fn parse(spec: &str) -> Result<Einsum, String> {
        let (inputs, result) = spec.split_once("->").ok_or_else(|| format!("einsum spec '{spec}' needs '->'"))?;
        let labels = |text: &str, what: &str| -> Result<Vec<char>, String> {
            let labels: Vec<char> = text.trim().chars().collect();
            if let Some(c) = labels.iter().find(|c| !c.is_ascii_alphabetic()) {
                return Err(format!("einsum spec '{spec}': '{c}' is not a label (ASCII letters)"));
            }
            if let Some(c) = labels.iter().find(|c| labels.iter().filter(|x| x == c).count() > 1) {
                return Err(format!(
                    "einsum spec '{spec}': label '{c}' appears twice in {what} (diagonals are not supported)"
                ));
            }
            Ok(labels)
        };
        let operands = inputs
            .split(',')
            .enumerate()
            .map(|(k, text)| labels(text, &format!("operand {k}")))
            .collect::<Result<Vec<_>, _>>()?;
        let result = labels(result, "the result")?;
        if let Some(c) = result.iter().find(|c| !operands.iter().any(|o| o.contains(c))) {
            return Err(format!("einsum spec '{spec}': result label '{c}' is in no operand"));
        }
        Ok(Einsum { operands, result })
    }

    /// The summed labels, in order of first appearance.
    pub fn summed(&self) -> Vec<char> {
        let mut out = Vec::new();
        for &c in self.operands.iter().flatten() {
            if !self.result.contains(&c) && !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }

    /// The size of every label (result labels, then summed ones) from the
    /// operands' shapes ([`DYNAMIC`] where every operand having it is
    /// dynamic); an error when ranks or static sizes disagree.
    pub fn label_sizes(&self, shapes: &[&[i64]]) -> Result<Vec<(char, i64)>, String> {
        if shapes.len() != self.operands.len() {
            return Err(format!("einsum '{self}' takes {} operands, got {}", self.operands.len(), shapes.len()));
        }
        let mut sizes: Vec<(char, i64)> = Vec::new();
        for (k, (labels, shape)) in self.operands.iter().zip(shapes).enumerate() {
            if labels.len() != shape.len() {
                return Err(format!("einsum '{self}': operand {k} has rank {}, not {}", shape.len(), labels.len()));
            }
            for (&c, &n) in labels.iter().zip(shape.iter()) {
                match sizes.iter_mut().find(|(x, _)| *x == c) {
                    Some((_, m)) if *m == DYNAMIC => *m = n,
                    Some((_, m)) if n != DYNAMIC && *m != n => {
                        return Err(format!("einsum '{self}': label '{c}' has sizes {m} and {n}"));
                    }
                    Some(_) => {}
                    None => sizes.push((c, n)),
                }
            }
        }
        let mut ordered: Vec<(char, i64)> =
            self.result.iter().map(|c| *sizes.iter().find(|(x, _)| x == c).expect("checked")).collect();
        ordered.extend(self.summed().iter().map(|c| *sizes.iter().find(|(x, _)| x == c).expect("an operand's")));
        Ok(ordered)
    }
}

impl std::fmt::Display for Einsum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let operands: Vec<String> = self.operands.iter().map(|o| o.iter().collect()).collect();
        write!(f, "{}->{}", operands.join(","), self.result.iter().collect::<String>())
    }
}

/// Softmax attention along one label: `combine(softmax_n(scale *
/// score(query, key)), value)` where `n` is the one label `combine` sums.
/// `score` is a two-operand einsum whose result has `n` (from the key, not
/// the query); `combine` is a two-operand einsum whose first operand is the
/// score's result (same labels) and whose only summed label is `n`.
/// `block` is the number of `n` positions compiled code takes at a time
/// (a running maximum and sum keep the softmax exact in real arithmetic;
/// see `temporal-tile-ranges`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Attention {
    pub score: Einsum,
    pub combine: Einsum,
    pub block: i64,
}

impl Attention {
    /// The largest block (positions per block; its scores are one buffer).
    pub const MAX_BLOCK: i64 = 1 << 16;

    /// Checks the specs' form (not shapes).
    pub fn new(score: Einsum, combine: Einsum, block: i64) -> Result<Attention, String> {
        if score.operands.len() != 2 || combine.operands.len() != 2 {
            return Err("attention: 'score' and 'combine' are einsums of two operands".into());
        }
        if combine.operands[0] != score.result {
            return Err(format!(
                "attention: the first operand of 'combine' ({combine}) must have the labels of the score's result ({score})"
            ));
        }
        let summed = combine.summed();
        let [n] = summed.as_slice() else {
            return Err(format!("attention: 'combine' ({combine}) must sum exactly one label"));
        };
        if !score.result.contains(n) || score.operands[0].contains(n) {
            return Err(format!("attention: the summed label '{n}' must be a score label from the key, not the query"));
        }
        if !(1..=Attention::MAX_BLOCK).contains(&block) {
            return Err(format!("attention: block must be between 1 and {}, got {block}", Attention::MAX_BLOCK));
        }
        Ok(Attention { score, combine, block })
    }

    /// The label the softmax runs along.
    pub fn label(&self) -> char {
        self.combine.summed()[0]
    }

    /// Its position in the score's result.
    pub fn axis(&self) -> usize {
        let n = self.label();
        self.score.result.iter().position(|&c| c == n).expect("checked in new")
    }
}

/// Whether a reshape of `input` to `output` keeps elements in row-major
/// order with sizes fixed by the operand: both static with as many
/// elements, or one dynamic dimension in each with equal static products
/// before it and after it (so the dynamic size carries over: `?x2x8` to
/// `?x16`).
/// Row-major strides (in elements) of an array of `shape`: the last
/// dimension's is 1, each other's the product of the sizes after it.
/// The exact elements of an integer constant of `element` whose values
/// are `values` (empty for floats).
pub fn integers_of(values: &[f64], element: ElementType) -> Vec<i64> {
    if element.is_float() { Vec::new() } else { values.iter().map(|&v| v as i64).collect() }
}

pub fn row_major_strides(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * shape[k + 1];
    }
    strides
}

pub fn reshape_fits(input: &[i64], output: &[i64]) -> bool {
    let dynamic = |shape: &[i64]| shape.iter().filter(|&&d| d == DYNAMIC).count();
    match (dynamic(input), dynamic(output)) {
        (0, 0) => input.iter().product::<i64>() == output.iter().product::<i64>(),
        (1, 1) => {
            let i = input.iter().position(|&d| d == DYNAMIC).expect("one");
            let o = output.iter().position(|&d| d == DYNAMIC).expect("one");
            input[..i].iter().product::<i64>() == output[..o].iter().product::<i64>()
                && input[i + 1..].iter().product::<i64>() == output[o + 1..].iter().product::<i64>()
        }
        _ => false,
    }
}

/// Whether `input` broadcasts to `output` with every size fixed by the
/// operand: aligned at the last dimension, a size-1 dimension stretches to
/// a static size, a dynamic one stays itself, others are equal.
pub fn expand_fits(input: &[i64], output: &[i64]) -> bool {
    let Some(skip) = output.len().checked_sub(input.len()) else { return false };
    output[..skip].iter().all(|&d| d != DYNAMIC)
        && input.iter().zip(&output[skip..]).all(|(&n, &m)| match (n, m) {
            (DYNAMIC, m) => m == DYNAMIC,
            (1, m) => m != DYNAMIC,
            (n, m) => n == m,
        })
}

/// The shape of a matmul of `a` by `b` (NumPy's rules without vector
/// promotion in batches): `MxK * KxN`, `MxK * K`, `K * KxN`, and
/// `[batch..., M, K] * [batch..., K, N]` with the batch dimensions
/// broadcast; `None` when they do not fit (dynamic sizes count as fitting).
pub fn matmul_shape(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let same = |x: i64, y: i64| x == y || x == DYNAMIC || y == DYNAMIC;
    match (a, b) {
        ([m, k1], [k2]) if same(*k1, *k2) => Some(vec![*m]),
        ([k1], [k2, n]) if same(*k1, *k2) => Some(vec![*n]),
        _ if a.len() >= 2 && b.len() >= 2 => {
            let (ra, rb) = (a.len(), b.len());
            if !same(a[ra - 1], b[rb - 2]) {
                return None;
            }
            let mut shape = PointType::broadcast_shape(&[&a[..ra - 2], &b[..rb - 2]])?;
            shape.extend([a[ra - 2], b[rb - 1]]);
            Some(shape)
        }
        _ => None,
    }
}

/// When a range read states a static length for a range dimension (its
/// type), the error for a range of another length.
pub fn static_length_mismatch(lengths: &[i64], shape: &[i64]) -> Option<String> {
    lengths.iter().zip(shape).enumerate().find(|(_, (n, s))| **s != DYNAMIC && **n != **s).map(|(k, (n, s))| {
        format!("range dimension {k} of the read holds {n} points, but its type states {s} (the program was specialized for other bounds)")
    })
}

/// One step of splitmix64 (wrapping arithmetic).
pub fn splitmix64(x: u64) -> u64 {
    let z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random bits of element `element` of the point at `coordinates` of a
/// `temporal.random` op with `seed`: splitmix64 folded over the seed, each
/// coordinate and the element's row-major position.
pub fn random_bits(seed: i64, coordinates: &[i64], element: u64) -> u64 {
    let mut x = seed as u64;
    for &c in coordinates {
        x = splitmix64(x ^ c as u64);
    }
    splitmix64(x ^ element)
}

/// A uniform value in [0, 1) from the top 24 bits (exact in f32 and f64).
pub fn uniform_from_bits(bits: u64) -> f64 {
    (bits >> 40) as f64 * (1.0 / 16_777_216.0)
}

#[cfg(test)]
mod random_tests {
    use super::*;

    #[test]
    fn uniform_values_look_uniform_and_depend_on_every_input() {
        let n = 20_000;
        let values: Vec<f64> = (0..n).map(|k| uniform_from_bits(random_bits(5, &[k as i64 / 7, 3], k % 7))).collect();
        let mean = values.iter().sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
        assert!(values.iter().all(|v| (0.0..1.0).contains(v)));
        let below_tenth = values.iter().filter(|v| **v < 0.1).count() as f64 / n as f64;
        assert!((below_tenth - 0.1).abs() < 0.01, "fraction below 0.1: {below_tenth}");
        assert_ne!(random_bits(1, &[2, 3], 0), random_bits(1, &[3, 2], 0));
        assert_ne!(random_bits(1, &[2], 0), random_bits(2, &[2], 0));
        assert_ne!(random_bits(1, &[2], 0), random_bits(1, &[2], 1));
    }
}

/// What one node of a branch computes.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// A point of tensor `source` (index into `Program::tensors`).
    Read {
        source: usize,
        index: AffineMap,
    },
    /// A point of tensor `source` at coordinates given by data: `index`
    /// maps the reader's domain variables followed by one variable per
    /// `data` node (scalar integers of the branch), and the bounds, to one
    /// coordinate per source dimension (`h[left[n]]`).
    ReadAt {
        source: usize,
        index: AffineMap,
        data: Vec<usize>,
    },
    /// A box of points of `source`: per source dimension, the interval
    /// `[max(lower), min(upper))`, or the point `min(max(lower), caps...)`
    /// where `upper` has no results. `caps` has one map per source
    /// dimension (no results: no cap).
    ReadRange {
        source: usize,
        lower: Vec<AffineMap>,
        upper: Vec<AffineMap>,
        caps: Vec<AffineMap>,
    },
    /// A reduction of a node along `axis`.
    Reduce(ReduceKind, usize, usize),
    /// An elementwise comparison (booleans).
    Compare(Predicate, usize, usize),
    /// `condition ? on_true : on_false`, elementwise.
    Select(usize, usize, usize),
    /// An elementwise conversion to the node's element type.
    Cast(usize),
    /// A movement of elements (no arithmetic).
    Move(Movement, Vec<usize>),
    /// Rows of a table (first operand) at integer indices (second operand);
    /// indices are clamped into the table.
    Gather(usize, usize),
    /// The box of an operand (static shape) starting at offsets that are
    /// affine in the reader's domain variables and the bounds (one result
    /// per operand dimension), of the node's static shape. The box must
    /// lie inside the operand at every point computed.
    DynamicSlice(usize, AffineMap),
    /// An Einstein-summation contraction of the operands.
    Einsum(Einsum, Vec<usize>),
    /// Softmax attention of `[query, key, value, scale]` ([`Attention`];
    /// `scale` is a scalar the scores are multiplied by).
    Attention(Attention, [usize; 4]),
    /// Softmax attention or one of its backward halves over whole
    /// sequences, for the runtime's tiled kernels ([`Flash`]).
    FlashAttention(Flash, Vec<usize>),
    /// A call of the external function `callee` on the values of `args`;
    /// `site` numbers the call sites of the program (program order).
    /// `batched` (the op's `batched` attribute): the function takes a batch
    /// of points as well as one (a leading dimension on every argument and
    /// on the result, each row computed as the point alone would be), so
    /// `temporal-vectorize` may batch the call with its dimension.
    Call {
        callee: String,
        site: usize,
        args: Vec<usize>,
        batched: bool,
    },
    /// Seeded random values ([`random_bits`], [`uniform_from_bits`]).
    Random {
        seed: i64,
        normal: bool,
    },
    /// The reader's position along program dimension `dim` (in its domain),
    /// a scalar.
    Position(usize),
    /// The bound of program dimension `dim`, a scalar.
    Bound(usize),
    /// This process's rank in the run (`temporal.rank`), a scalar.
    Rank,
    /// The number of processes of the run (`temporal.world_size`), a scalar.
    WorldSize,
    /// A reduction of a node's value over the processes of the run
    /// (`temporal.all_reduce`, a collective: [`Collective`]).
    AllReduce(Collective, usize),
    /// A constant; `text` is the MLIR attribute text, `values` the elements in
    /// row-major order (as f64; integers are exact up to 2^53), `integers`
    /// the elements of an integer constant, exact (empty for floats).
    /// Shared (a weight-shaped constant is megabytes, and passes clone
    /// nodes).
    Constant {
        text: Arc<str>,
        values: Arc<[f64]>,
        integers: Arc<[i64]>,
    },
    Unary(UnaryKind, usize),
    Binary(BinaryKind, usize, usize),
    Matmul(usize, usize),
}

impl NodeKind {
    /// The name of the op this node stands for (`temporal.matmul`), for
    /// messages about it.
    pub fn op_name(&self) -> String {
        let short = match self {
            Self::Read { .. } => "read",
            Self::ReadAt { .. } => "read_at",
            Self::ReadRange { .. } => "read_range",
            Self::Reduce(kind, ..) => kind.op_name(),
            Self::Compare(..) => "cmp",
            Self::Select(..) => "select",
            Self::Cast(_) => "cast",
            Self::Move(movement, _) => match movement {
                Movement::Permute(_) => "permute",
                Movement::Flip(_) => "flip",
                Movement::Slice(_) => "slice",
                Movement::Reshape => "reshape",
                Movement::Expand => "expand",
                Movement::Concat(_) => "concat",
                Movement::Arange => "arange",
            },
            Self::Gather(..) => "gather",
            Self::DynamicSlice(..) => "dynamic_slice",
            Self::Einsum(..) => "einsum",
            Self::Attention(..) => "attention",
            Self::FlashAttention(..) => "flash_attention",
            Self::Call { .. } => "call",
            Self::Random { .. } => "random",
            Self::Constant { .. } => "constant",
            Self::Position(_) => "position",
            Self::Bound(_) => "bound",
            Self::Rank => "rank",
            Self::WorldSize => "world_size",
            Self::AllReduce(..) => "all_reduce",
            Self::Unary(kind, _) => kind.op_name(),
            Self::Binary(kind, ..) => kind.op_name(),
            Self::Matmul(..) => "matmul",
        };
        format!("temporal.{short}")
    }
}

/// One op of a branch body; operands refer to earlier nodes of the branch.
#[derive(Clone, Debug)]
pub struct Node<'c> {
    pub kind: NodeKind,
    pub ty: PointType,
    pub location: Location<'c>,
}

/// One conditional definition of a tensor.
#[derive(Clone, Debug)]
pub struct Branch<'c> {
    pub when: IntegerSet,
    pub nodes: Vec<Node<'c>>,
    /// The node whose value defines the point.
    pub result: usize,
    pub location: Location<'c>,
}

/// A recurrent tensor (input or computed).
#[derive(Clone, Debug)]
pub struct Tensor<'c> {
    pub name: String,
    /// Indices into `Program::dims`.
    pub domain: Vec<usize>,
    pub point: PointType,
    pub is_input: bool,
    pub branches: Vec<Branch<'c>>,
    pub location: Location<'c>,
}

/// A whole temporal program.
#[derive(Clone, Debug, Default)]
pub struct Program<'c> {
    pub dims: Vec<Dim>,
    /// Where each dimension is declared.
    pub dim_locations: Vec<Location<'c>>,
    /// The module the program was read from (errors about the program as a
    /// whole point here).
    pub location: Option<Location<'c>>,
    pub tensors: Vec<Tensor<'c>>,
    /// Output tensors, in program order.
    pub outputs: Vec<usize>,
    /// External call sites, numbered in program order.
    pub call_sites: Vec<CallSite<'c>>,
    /// `temporal.grad` declarations (until `temporal-autodiff` expands them).
    pub grads: Vec<GradDecl<'c>>,
    /// Data-dependent stops (`temporal.stop`), at most one per dimension.
    pub stops: Vec<Stop<'c>>,
}

/// One `temporal.stop`: dimension `dim` ends where tensor `done` (scalar
/// `i1` points over `dim` and, for a ragged stop, batch dimensions) first
/// holds: per point of the batch dimensions, its own length.
#[derive(Clone, Debug)]
pub struct Stop<'c> {
    pub dim: usize,
    pub done: usize,
    pub location: Location<'c>,
}

impl Stop<'_> {
    /// The batch dimensions of the stop: those of `done` other than the
    /// stopped one, in `done`'s order (empty: one length for the run).
    pub fn batch(&self, program: &Program) -> Vec<usize> {
        program.tensors[self.done].domain.iter().copied().filter(|&d| d != self.dim).collect()
    }

    /// Whether the stop gives each point of its batch dimensions its own
    /// length (`done` over more than the stopped dimension).
    pub fn is_ragged(&self, program: &Program) -> bool {
        program.tensors[self.done].domain.len() > 1
    }
}

/// One `temporal.grad`: tensor `tensor` holds the gradient of `of` with
/// respect to `wrt` (indices into `Program::tensors`).
#[derive(Clone, Debug)]
pub struct GradDecl<'c> {
    pub tensor: usize,
    pub of: usize,
    pub wrt: usize,
    /// The op's `all_reduce` (`"mean"` or `"sum"`): the gradient is that
    /// reduction over the processes of the run of each process's gradient
    /// (data-parallel training); the gradients of one `of` that have one
    /// travel in one fused buffer (`temporal_autodiff::fused`).
    pub all_reduce: Option<Collective>,
    pub location: Location<'c>,
}

/// One `temporal.call` in a program.
#[derive(Clone, Debug)]
pub struct CallSite<'c> {
    pub callee: String,
    /// Argument types.
    pub args: Vec<PointType>,
    pub result: PointType,
    /// The tensor whose branch holds the call.
    pub tensor: usize,
    pub location: Location<'c>,
}

impl<'c> Program<'c> {
    /// Names of the domain variables of tensor `index`.
    pub fn domain_names(&self, tensor: usize) -> Vec<String> {
        self.tensors[tensor].domain.iter().map(|&d| self.dims[d].name.clone()).collect()
    }
    /// Whether anything depends on dimension `d`'s bound: a tensor over
    /// it, or a condition, read or slice naming its bound symbol, or its
    /// bound as a value. A run may leave the bound of an unused dimension
    /// out.
    pub fn uses_bound(&self, d: usize) -> bool {
        let in_exprs = |exprs: &[AffineExpr]| exprs.iter().any(|e| e.uses_symbol(d));
        let in_maps = |maps: &[AffineMap]| maps.iter().any(|m| in_exprs(&m.results));
        self.tensors.iter().any(|t| {
            t.domain.contains(&d)
                || t.branches.iter().any(|b| {
                    b.when.constraints.iter().any(|c| c.expr.uses_symbol(d))
                        || b.nodes.iter().any(|n| match &n.kind {
                            NodeKind::Read { index, .. } => in_exprs(&index.results),
                            NodeKind::ReadRange { lower, upper, caps, .. } => {
                                in_maps(lower) || in_maps(upper) || in_maps(caps)
                            }
                            NodeKind::DynamicSlice(_, offsets) => in_exprs(&offsets.results),
                            NodeKind::Bound(k) | NodeKind::Position(k) => *k == d,
                            _ => false,
                        })
                })
        })
    }

    /// Bound symbol names, in symbol order.
    pub fn bound_names(&self) -> Vec<String> {
        self.dims.iter().map(|d| d.bound.clone()).collect()
    }
    /// The bound value of each dimension given by `given` (bound name and
    /// value, as the `bounds` options hold them; names of no dimension are
    /// ignored).
    pub fn bound_values(&self, given: &[(String, i64)]) -> Vec<Option<i64>> {
        let mut values = vec![None; self.dims.len()];
        for (name, value) in given {
            if let Some(d) = self.dims.iter().position(|x| &x.bound == name) {
                values[d] = Some(*value);
            }
        }
        values
    }

    /// Looks a tensor up by name.
    pub fn tensor_index(&self, name: &str) -> Option<usize> {
        self.tensors.iter().position(|t| t.name == name)
    }
    /// The error for a read (`what`: "read x[t - 1]", "range read of 'x'")
    /// at point `at` whose coordinate along dimension `dim` (`found`: "t = -1",
    /// "t in 3..5") leaves `0..bound`.
    pub fn out_of_bounds(&self, what: &str, at: &str, dim: usize, found: &str, bound: i64) -> String {
        let d = &self.dims[dim];
        format!("{what} at {at} is out of bounds: {found} is outside 0..{bound} ({} = {bound})", d.bound)
    }

    /// Human-readable `x[t - 1]` for a read of `source` by a branch of `reader`.
    pub fn describe_read(&self, reader: usize, source: usize, index: &AffineMap) -> String {
        let dims = self.domain_names(reader);
        let bounds = self.bound_names();
        let coords: Vec<String> = index.results.iter().map(|e| e.display(&dims, &bounds).to_string()).collect();
        format!("{}[{}]", self.tensors[source].name, coords.join(", "))
    }
}

mod build;
mod collectives;
mod flash;
pub use flash::{Band, Flash, FlashPart, FlashSizes};
pub mod dynamic_sizes;
pub use build::{check_name, string_attr, with_program};
pub use collectives::Collective;
