//! The program model: an owned, checked view of a temporal-dialect module
//! (dimensions, recurrent tensors, their ordered branches and the per-point
//! expression of each branch). Every temporal-level analysis, the lowering
//! and the runtime checks read programs through this model; building it
//! performs the structural and type checks of `temporal-verify`.

use crate::affine::{AffineMap, IntegerSet};
use crate::diagnostics::{PassDiagnostic, PassResult};
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
    Not,
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
            Self::Not => "not",
        }
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
    /// A call of the external function `callee` on the values of `args`;
    /// `site` numbers the call sites of the program (program order).
    Call {
        callee: String,
        site: usize,
        args: Vec<usize>,
    },
    /// Seeded random values ([`random_bits`], [`uniform_from_bits`]).
    Random {
        seed: i64,
        normal: bool,
    },
    /// A constant; `text` is the MLIR attribute text, `values` the elements in
    /// row-major order (as f64; integers are exact up to 2^53).
    Constant {
        text: String,
        values: Vec<f64>,
    },
    Unary(UnaryKind, usize),
    Binary(BinaryKind, usize, usize),
    Matmul(usize, usize),
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
    /// Bound symbol names, in symbol order.
    pub fn bound_names(&self) -> Vec<String> {
        self.dims.iter().map(|d| d.bound.clone()).collect()
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

    /// Builds the model from a module, checking structure and types. The
    /// module holds the program's temporal ops and, at the schedule level,
    /// `func.func @tempo_schedule`; any other op at module level is refused
    /// (a stray `store.alloc` or an already lowered function would otherwise
    /// reach the JIT).
    pub fn from_module(module: OperationRef<'c, '_>) -> Result<Self, Vec<PassDiagnostic<'c>>> {
        let mut builder = Builder {
            program: Program::default(),
            errors: Vec::new(),
            handles: Vec::new(),
            rejected: Vec::new(),
            targeted: Vec::new(),
        };
        builder.program.location = Some(module.location());
        let Some(body) = module.region(0).ok().and_then(|r| r.first_block()) else {
            return Ok(builder.program);
        };
        let ops = block_operations(body);
        // Dims first, then declarations, then definitions and outputs, so
        // that program order of declarations does not matter.
        for op in &ops {
            if let Some(dim) = temporal::DimOp::try_from(*op) {
                builder.dim(dim);
            }
        }
        for op in &ops {
            let declared = builder.program.tensors.len();
            let handle = if let Some(input) = temporal::InputOp::try_from(*op) {
                builder.declare(*op, input.handle(), true);
                input.handle()
            } else if let Some(tensor) = temporal::TensorOp::try_from(*op) {
                builder.declare(*op, tensor.handle(), false);
                tensor.handle()
            } else {
                continue;
            };
            if builder.program.tensors.len() == declared {
                // Refused (already reported): its uses need no error of their own.
                builder.rejected.push(handle);
            }
        }
        for op in &ops {
            if let Some(define) = temporal::DefineOp::try_from(*op) {
                builder.define(define);
            } else if let Some(output) = temporal::OutputOp::try_from(*op) {
                if let Some(t) = builder.tensor_of(output.source(), *op) {
                    if builder.program.outputs.contains(&t) {
                        builder.error(
                            *op,
                            format!("tensor '{}' is marked as output twice", builder.program.tensors[t].name),
                        );
                    } else {
                        builder.program.outputs.push(t);
                    }
                }
            } else if is_temporal(*op)
                && temporal::DimOp::try_from(*op).is_none()
                && temporal::InputOp::try_from(*op).is_none()
                && temporal::TensorOp::try_from(*op).is_none()
            {
                builder.error(*op, format!("'{}' must appear inside a temporal.define body", op_name(*op)));
            } else if !is_temporal(*op) && !is_schedule_function(*op) {
                let name = op_name(*op);
                let hint = if name == "func.func" && symbol_name(*op).as_deref() == Some("tempo_main") {
                    " (this module is already lowered: run the temporal program it came from)"
                } else {
                    ""
                };
                builder.error(
                    *op,
                    format!(
                        "'{name}' is not part of a temporal program: its module holds temporal.dim, temporal.input, \
                         temporal.tensor, temporal.define and temporal.output ops (and the schedule \
                         @tempo_schedule){hint}"
                    ),
                );
            }
        }
        for (i, t) in builder.program.tensors.iter().enumerate() {
            if !t.is_input && !builder.targeted.contains(&i) {
                builder
                    .errors
                    .push(PassDiagnostic::new(t.location, format!("tensor '{}' has no temporal.define", t.name)));
            }
        }
        if builder.errors.is_empty() { Ok(builder.program) } else { Err(builder.errors) }
    }
}

fn op_name(op: OperationRef) -> String {
    op.name().as_string_ref().as_str().unwrap_or("?").to_string()
}

fn is_temporal(op: OperationRef) -> bool {
    op_name(op).starts_with("temporal.")
}

/// Names of dimensions, bounds and tensors are identifiers: a letter or
/// `_`, then letters, digits, `_`, `.`, `-` or `$`, at most 255 characters.
/// They end up in generated code, diagnostics, command lines (`--bound
/// T=10`, `--input x=...`) and file names (`NAME.npy`), so nothing else is
/// accepted (no empty names, NULs, quotes, slashes or spaces).
pub fn check_name(name: &str) -> Result<(), String> {
    let shown: String = name.chars().flat_map(char::escape_default).take(80).collect();
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '$'));
    if name.is_empty() {
        Err("must not be empty".into())
    } else if !first_ok || !rest_ok || name.len() > 255 {
        Err(format!(
            "'{shown}' is not an identifier (a letter or '_', then letters, digits, '_', '.', '-' or '$'; at most 255 characters)"
        ))
    } else {
        Ok(())
    }
}

fn symbol_name(op: OperationRef) -> Option<String> {
    op.attribute("sym_name").ok().and_then(string_attr)
}

/// `func.func @tempo_schedule`, the schedule level's function, which may
/// sit beside the program it orders.
fn is_schedule_function(op: OperationRef) -> bool {
    op_name(op) == "func.func" && symbol_name(op).as_deref() == Some("tempo_schedule")
}

struct Builder<'c, 'v> {
    program: Program<'c>,
    errors: Vec<PassDiagnostic<'c>>,
    /// SSA handle of each tensor, to resolve operands.
    handles: Vec<Value<'c, 'v>>,
    /// Handles of declarations that were refused.
    rejected: Vec<Value<'c, 'v>>,
    /// Tensors targeted by some `temporal.define` (even a rejected one).
    targeted: Vec<usize>,
}

/// The value of a string attribute (empty strings included, which melior's
/// `StringAttribute::value` cannot read), or `None` for other attributes.
pub fn string_attr(attr: Attribute) -> Option<String> {
    unsafe {
        if !mlirAttributeIsAString(attr.to_raw()) {
            return None;
        }
        let s = mlirStringAttrGetValue(attr.to_raw());
        let bytes = std::slice::from_raw_parts(s.data as *const u8, s.length);
        Some(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// The elements of an array attribute, each converted by `element`; `None`
/// if it is not an array or an element does not convert.
fn array_attr<'c, T>(attr: Attribute<'c>, element: impl Fn(Attribute<'c>) -> Option<T>) -> Option<Vec<T>> {
    unsafe {
        if !mlirAttributeIsAArray(attr.to_raw()) {
            return None;
        }
        (0..mlirArrayAttrGetNumElements(attr.to_raw()))
            .map(|i| element(Attribute::from_raw(mlirArrayAttrGetElement(attr.to_raw(), i))))
            .collect()
    }
}

fn string_array_attr(attr: Attribute) -> Option<Vec<String>> {
    array_attr(attr, string_attr)
}

fn integer_attr(attr: Attribute) -> Option<i64> {
    melior::ir::attribute::IntegerAttribute::try_from(attr).ok().map(|i| i.value())
}

fn type_attr<'c>(attr: Attribute<'c>) -> Option<Type<'c>> {
    unsafe { mlirAttributeIsAType(attr.to_raw()).then(|| Type::from_raw(mlirTypeAttrGetValue(attr.to_raw()))) }
}

impl<'c, 'v> Builder<'c, 'v> {
    fn error(&mut self, op: OperationRef<'c, '_>, message: String) {
        self.errors.push(PassDiagnostic::new(op.location(), message));
    }

    fn dim(&mut self, dim: temporal::DimOp<'c, '_>) {
        let op = dim.operation();
        let name = dim.sym_name().and_then(string_attr);
        let bound = dim.bound().and_then(string_attr);
        match (name, bound) {
            (Some(name), Some(bound)) => {
                for (what, text) in [("dimension name", &name), ("bound name", &bound)] {
                    if let Err(e) = check_name(text) {
                        self.error(op, format!("{what} {e}"));
                        return;
                    }
                }
                if self.program.dims.iter().any(|d| d.name == name) {
                    self.error(op, format!("dimension '{name}' is declared twice"));
                } else if self.program.dims.iter().any(|d| d.bound == bound) {
                    self.error(op, format!("bound '{bound}' is used by two dimensions"));
                } else {
                    self.program.dims.push(Dim { name, bound });
                    self.program.dim_locations.push(op.location());
                }
            }
            _ => self.error(op, "temporal.dim needs string attributes 'sym_name' and 'bound'".into()),
        }
    }

    fn declare(&mut self, op: OperationRef<'c, 'v>, handle: Value<'c, 'v>, is_input: bool) {
        let kind = if is_input { "temporal.input" } else { "temporal.tensor" };
        let name = op.attribute("sym_name").ok().and_then(string_attr);
        let domain = op.attribute("domain").ok().and_then(string_array_attr);
        let element = op.attribute("element").ok().and_then(type_attr);
        let (Some(name), Some(domain_names), Some(element)) = (name, domain, element) else {
            self.error(
                op,
                format!("{kind} needs 'sym_name' (string), 'domain' (array of dimension names) and 'element' (type)"),
            );
            return;
        };
        if let Err(e) = check_name(&name) {
            self.error(op, format!("tensor name {e}"));
            return;
        }
        if self.program.tensors.iter().any(|t| t.name == name) {
            self.error(op, format!("tensor '{name}' is declared twice"));
            return;
        }
        let mut domain = Vec::new();
        for d in &domain_names {
            match self.program.dims.iter().position(|x| &x.name == d) {
                Some(i) if domain.contains(&i) => {
                    self.error(op, format!("dimension '{d}' appears twice in the domain of '{name}'"));
                    return;
                }
                Some(i) => domain.push(i),
                None => {
                    self.error(op, format!("unknown dimension '{d}' in the domain of '{name}'"));
                    return;
                }
            }
        }
        let point = match PointType::from_type(element) {
            Ok(p) if p.is_static() => p,
            Ok(_) => {
                self.error(
                    op,
                    format!("tensor '{name}': point type must be a statically shaped ranked tensor, got {element}"),
                );
                return;
            }
            Err(e) => {
                self.error(op, format!("tensor '{name}': {e}"));
                return;
            }
        };
        self.program.tensors.push(Tensor {
            name,
            domain,
            point,
            is_input,
            branches: Vec::new(),
            location: op.location(),
        });
        self.handles.push(handle);
    }

    fn tensor_of(&mut self, value: Value<'c, '_>, user: OperationRef<'c, '_>) -> Option<usize> {
        let found = self.handles.iter().position(|h| h.to_raw().ptr == value.to_raw().ptr);
        let refused = self.rejected.iter().any(|h| h.to_raw().ptr == value.to_raw().ptr);
        if found.is_none() && !refused {
            self.error(user, "operand is not the handle of a declared temporal.tensor or temporal.input".into());
        }
        found
    }

    fn define(&mut self, define: temporal::DefineOp<'c, 'v>) {
        let op = define.operation();
        let Some(target) = self.tensor_of(define.target(), op) else { return };
        self.targeted.push(target);
        let tensor_name = self.program.tensors[target].name.clone();
        if self.program.tensors[target].is_input {
            self.error(op, format!("'{tensor_name}' is an input and cannot be defined"));
            return;
        }
        let domain_len = self.program.tensors[target].domain.len();
        let num_bounds = self.program.dims.len();
        let Some(when) = define.when().and_then(IntegerSet::from_attribute) else {
            self.error(op, "temporal.define needs an affine_set attribute 'when'".into());
            return;
        };
        if let Err(e) = crate::affine::check_divisions(when.constraints.iter().map(|c| &c.expr)) {
            self.error(op, format!("condition of '{tensor_name}': {e}"));
            return;
        }
        if when.num_dims != domain_len || when.num_symbols != num_bounds {
            self.error(
                op,
                format!(
                    "condition of '{tensor_name}' must have {domain_len} dims (its domain) and {num_bounds} symbols (the bounds), has ({})[{}]",
                    when.num_dims, when.num_symbols
                ),
            );
            return;
        }
        let Some(block) = define.body().first_block() else {
            self.error(op, "temporal.define body is empty".into());
            return;
        };
        let ops = block_operations(block);
        let mut values: Vec<Value<'c, '_>> = Vec::new();
        let mut nodes: Vec<Node<'c>> = Vec::new();
        let mut result = None;
        for (position, body_op) in ops.iter().enumerate() {
            let name = op_name(*body_op);
            if name == "gpu.yield" {
                if position + 1 != ops.len() || body_op.operand_count() != 1 {
                    self.error(
                        *body_op,
                        "a temporal.define body ends with exactly one 'gpu.yield' of one value".into(),
                    );
                    return;
                }
                let yielded = body_op.operand(0).expect("one operand");
                match values.iter().position(|v| v.to_raw().ptr == yielded.to_raw().ptr) {
                    Some(i) => result = Some(i),
                    None => {
                        self.error(*body_op, "the yielded value must be computed in the same body".into());
                        return;
                    }
                }
                continue;
            }
            let Some(node) = self.node(*body_op, target, &values, &nodes) else { return };
            values.push(body_op.result(0).expect("checked one result").into());
            nodes.push(node);
        }
        let Some(result) = result else {
            self.error(op, "a temporal.define body must end with 'gpu.yield' of the defined value".into());
            return;
        };
        let expected = &self.program.tensors[target].point;
        if &nodes[result].ty != expected {
            let got = nodes[result].ty.clone();
            let expected = expected.clone();
            self.error(op, format!("branch of '{tensor_name}' yields {got} but the tensor holds {expected}"));
            return;
        }
        if let Err((node, message)) = crate::dynamic_sizes::check_branch(&nodes) {
            self.errors.push(PassDiagnostic::new(nodes[node].location, message));
            return;
        }
        self.program.tensors[target].branches.push(Branch { when, nodes, result, location: op.location() });
    }

    fn node(
        &mut self,
        op: OperationRef<'c, '_>,
        reader: usize,
        values: &[Value<'c, '_>],
        nodes: &[Node<'c>],
    ) -> Option<Node<'c>> {
        let name = op_name(op);
        let location = op.location();
        let regions_allowed = usize::from(name == "temporal.call");
        if op.result_count() != 1 || op.region_count() != regions_allowed {
            self.error(op, format!("'{name}' is not allowed in a temporal.define body"));
            return None;
        }
        let result_type: Type = op.result(0).expect("one result").r#type();
        let ty = match PointType::from_type(result_type) {
            Ok(t) => t,
            Err(e) => {
                self.error(op, format!("'{name}': {e}"));
                return None;
            }
        };
        // A call's arguments are the operands of the `gpu.yield` in its region.
        let argument_op = if name == "temporal.call" {
            use melior::ir::RegionLike;
            let region = op.region(0).expect("one region");
            let block = region.first_block();
            use melior::ir::BlockLike;
            let only = block.as_ref().and_then(|b| b.first_operation()).filter(|o| o.next_in_block().is_none());
            match only {
                Some(y) if op_name(y) == "gpu.yield" => Some(y),
                _ => {
                    self.error(
                        op,
                        "the 'args' region of temporal.call must hold exactly one gpu.yield of the arguments".into(),
                    );
                    return None;
                }
            }
        } else {
            None
        };
        let operand_source = argument_op.unwrap_or(op);
        let mut operand_nodes = Vec::new();
        for i in 0..operand_source.operand_count() {
            let v = operand_source.operand(i).expect("in range");
            if name == "temporal.read" || name == "temporal.read_range" {
                break;
            }
            match values.iter().position(|x| x.to_raw().ptr == v.to_raw().ptr) {
                Some(n) => operand_nodes.push(n),
                None => {
                    self.error(
                        op,
                        format!("operand #{i} of '{name}' must be computed earlier in the same temporal.define body"),
                    );
                    return None;
                }
            }
        }
        let kind = match name.as_str() {
            "temporal.read" => {
                let source = self.tensor_of(op.operand(0).expect("IRDL checked"), op)?;
                let Some(index) = op.attribute("index").ok().and_then(AffineMap::from_attribute) else {
                    self.error(op, "temporal.read needs an affine_map attribute 'index'".into());
                    return None;
                };
                if let Err(e) = crate::affine::check_divisions(&index.results) {
                    self.error(op, format!("read index: {e}"));
                    return None;
                }
                let reader_domain = self.program.tensors[reader].domain.len();
                let source_domain = self.program.tensors[source].domain.len();
                let source_name = self.program.tensors[source].name.clone();
                if index.num_dims != reader_domain || index.num_symbols != self.program.dims.len() {
                    self.error(
                        op,
                        format!(
                            "index of a read by '{}' must have {reader_domain} dims (the reader's domain) and {} symbols (the bounds), has ({})[{}]",
                            self.program.tensors[reader].name,
                            self.program.dims.len(),
                            index.num_dims,
                            index.num_symbols
                        ),
                    );
                    return None;
                }
                if index.results.len() != source_domain {
                    self.error(
                        op,
                        format!(
                            "read of '{source_name}' must give {source_domain} coordinates (its domain), gives {}",
                            index.results.len()
                        ),
                    );
                    return None;
                }
                if ty != self.program.tensors[source].point {
                    self.error(
                        op,
                        format!(
                            "read of '{source_name}' must produce {}, produces {ty}",
                            self.program.tensors[source].point
                        ),
                    );
                    return None;
                }
                NodeKind::Read { source, index }
            }
            "temporal.read_range" => {
                let source = self.tensor_of(op.operand(0).expect("IRDL checked"), op)?;
                let maps = |key: &str| op.attribute(key).ok().and_then(|a| array_attr(a, AffineMap::from_attribute));
                let (Some(lower), Some(upper), Some(caps)) = (maps("lower"), maps("upper"), maps("caps")) else {
                    self.error(
                        op,
                        "temporal.read_range needs 'lower', 'upper' and 'caps': arrays of affine_maps".into(),
                    );
                    return None;
                };
                if let Err(e) =
                    crate::affine::check_divisions(lower.iter().chain(&upper).chain(&caps).flat_map(|m| &m.results))
                {
                    self.error(op, format!("range bounds: {e}"));
                    return None;
                }
                let src = &self.program.tensors[source];
                let (source_name, source_domain, source_point) =
                    (src.name.clone(), src.domain.len(), src.point.clone());
                let reader_domain = self.program.tensors[reader].domain.len();
                let bounds = self.program.dims.len();
                if lower.len() != source_domain || upper.len() != source_domain {
                    self.error(op, format!("read_range of '{source_name}' needs one lower and one upper map per source dimension ({source_domain})"));
                    return None;
                }
                if !caps.is_empty() && caps.len() != source_domain {
                    self.error(op, format!("read_range of '{source_name}' needs 'caps' empty or with one map per source dimension ({source_domain})"));
                    return None;
                }
                if upper.iter().zip(&caps).any(|(u, c)| !u.results.is_empty() && !c.results.is_empty()) {
                    self.error(op, "a read_range cap applies to point dimensions only; a range dimension's cap must have no results".into());
                    return None;
                }
                if let Some(m) = lower
                    .iter()
                    .chain(&upper)
                    .chain(&caps)
                    .find(|m| m.num_dims != reader_domain || m.num_symbols != bounds)
                {
                    self.error(op, format!(
                        "read_range maps must have {reader_domain} dims (the reader's domain) and {bounds} symbols (the bounds), one has ({})[{}]",
                        m.num_dims, m.num_symbols
                    ));
                    return None;
                }
                if lower.iter().any(|m| m.results.is_empty()) {
                    self.error(op, "every lower map of a read_range needs at least one result".into());
                    return None;
                }
                let ranges = upper.iter().filter(|m| !m.results.is_empty()).count();
                let mut expected = vec![DYNAMIC; ranges];
                expected.extend(&source_point.shape);
                let expected = PointType { shape: expected, element: source_point.element };
                // A range dimension may state its length statically (the
                // program is then valid for bounds that give that length,
                // which is checked before running).
                let fits = ty.element == expected.element
                    && ty.shape.len() == expected.shape.len()
                    && ty.shape[..ranges].iter().all(|&n| n == DYNAMIC || n >= 0)
                    && ty.shape[ranges..] == expected.shape[ranges..];
                if !fits {
                    self.error(op, format!("read_range of '{source_name}' with {ranges} range dimension(s) must produce {expected}, produces {ty}"));
                    return None;
                }
                let caps = if caps.is_empty() {
                    vec![AffineMap { num_dims: reader_domain, num_symbols: bounds, results: Vec::new() }; source_domain]
                } else {
                    caps
                };
                NodeKind::ReadRange { source, lower, upper, caps }
            }
            "temporal.reduce_sum"
            | "temporal.reduce_max"
            | "temporal.reduce_mean"
            | "temporal.argmax"
            | "temporal.cumsum" => {
                let a = operand_nodes[0];
                let Some(axis) = op.attribute("axis").ok().and_then(integer_attr) else {
                    self.error(op, format!("'{name}' needs an integer attribute 'axis'"));
                    return None;
                };
                let input = &nodes[a].ty;
                if axis < 0 || axis as usize >= input.shape.len() {
                    self.error(op, format!("'{name}' axis {axis} is out of range for {input}"));
                    return None;
                }
                let kind = match name.as_str() {
                    "temporal.reduce_sum" => ReduceKind::Sum,
                    "temporal.reduce_max" => ReduceKind::Max,
                    "temporal.reduce_mean" => ReduceKind::Mean,
                    "temporal.argmax" => ReduceKind::ArgMax,
                    _ => ReduceKind::CumSum,
                };
                let mut shape = input.shape.clone();
                if kind != ReduceKind::CumSum {
                    shape.remove(axis as usize);
                }
                let element = if kind == ReduceKind::ArgMax { ElementType::I64 } else { input.element };
                let expected = PointType { shape, element };
                if !ty.compatible(&expected) || input.element == ElementType::I1 {
                    self.error(op, format!("'{name}' of {input} along axis {axis} gives {expected}, not {ty}"));
                    return None;
                }
                if kind == ReduceKind::Mean && !input.element.is_float() {
                    self.error(op, format!("'{name}' needs floating-point values, got {input}"));
                    return None;
                }
                NodeKind::Reduce(kind, a, axis as usize)
            }
            "temporal.constant" => {
                let Ok(value) = op.attribute("value") else {
                    self.error(op, "temporal.constant needs a 'value' attribute".into());
                    return None;
                };
                let same_type = unsafe {
                    mlirAttributeIsADenseElements(value.to_raw())
                        && mlirTypeEqual(mlirAttributeGetType(value.to_raw()), result_type.to_raw())
                };
                if !same_type {
                    self.error(op, format!("constant value must be dense elements of the result type {ty}"));
                    return None;
                }
                NodeKind::Constant {
                    text: value.to_string(),
                    values: dense_values(value, ty.num_elements(), ty.element),
                }
            }
            _ => {
                let unary = match name.as_str() {
                    "temporal.neg" => Some(UnaryKind::Neg),
                    "temporal.exp" => Some(UnaryKind::Exp),
                    "temporal.log" => Some(UnaryKind::Log),
                    "temporal.sqrt" => Some(UnaryKind::Sqrt),
                    "temporal.tanh" => Some(UnaryKind::Tanh),
                    "temporal.sigmoid" => Some(UnaryKind::Sigmoid),
                    "temporal.relu" => Some(UnaryKind::Relu),
                    "temporal.sin" => Some(UnaryKind::Sin),
                    "temporal.cos" => Some(UnaryKind::Cos),
                    "temporal.abs" => Some(UnaryKind::Abs),
                    "temporal.not" => Some(UnaryKind::Not),
                    _ => None,
                };
                let binary = match name.as_str() {
                    "temporal.add" => Some(BinaryKind::Add),
                    "temporal.sub" => Some(BinaryKind::Sub),
                    "temporal.mul" => Some(BinaryKind::Mul),
                    "temporal.div" => Some(BinaryKind::Div),
                    "temporal.max" => Some(BinaryKind::Max),
                    "temporal.min" => Some(BinaryKind::Min),
                    "temporal.pow" => Some(BinaryKind::Pow),
                    "temporal.and" => Some(BinaryKind::And),
                    "temporal.or" => Some(BinaryKind::Or),
                    _ => None,
                };
                if let Some(u) = unary {
                    let a = operand_nodes[0];
                    if !nodes[a].ty.compatible(&ty) {
                        self.error(op, format!("'{name}' operand is {} but the result is {ty}", nodes[a].ty));
                        return None;
                    }
                    let boolean = ty.element == ElementType::I1;
                    let wrong = match u {
                        UnaryKind::Not => (!boolean).then_some("a boolean (i1)"),
                        UnaryKind::Neg | UnaryKind::Relu | UnaryKind::Abs => boolean.then_some("a numeric"),
                        _ => (!ty.element.is_float()).then_some("a floating-point"),
                    };
                    if let Some(kind) = wrong {
                        self.error(op, format!("'{name}' needs {kind} operand, got {ty}"));
                        return None;
                    }
                    NodeKind::Unary(u, a)
                } else if let Some(b) = binary {
                    let (l, r) = (operand_nodes[0], operand_nodes[1]);
                    let (a, c) = (&nodes[l].ty, &nodes[r].ty);
                    let shape = PointType::broadcast_shape(&[&a.shape, &c.shape]);
                    let fits = a.element == ty.element
                        && c.element == ty.element
                        && shape.is_some_and(|shape| PointType { shape, element: ty.element }.compatible(&ty));
                    if !fits {
                        self.error(
                            op,
                            format!(
                                "'{name}' needs operands and result of one type, got {} and {} -> {ty}",
                                nodes[l].ty, nodes[r].ty
                            ),
                        );
                        return None;
                    }
                    let boolean = ty.element == ElementType::I1;
                    let wrong = match b {
                        BinaryKind::And | BinaryKind::Or => (!boolean).then_some("boolean (i1)"),
                        BinaryKind::Pow => (!ty.element.is_float()).then_some("floating-point"),
                        _ => boolean.then_some("numeric"),
                    };
                    if let Some(kind) = wrong {
                        self.error(op, format!("'{name}' needs {kind} operands, got {ty}"));
                        return None;
                    }
                    NodeKind::Binary(b, l, r)
                } else if name == "temporal.cmp" {
                    let (l, r) = (operand_nodes[0], operand_nodes[1]);
                    let Some(predicate) =
                        op.attribute("predicate").ok().and_then(string_attr).and_then(|t| Predicate::parse(&t))
                    else {
                        self.error(
                            op,
                            "temporal.cmp needs a 'predicate': one of \"eq\", \"ne\", \"lt\", \"le\", \"gt\", \"ge\""
                                .into(),
                        );
                        return None;
                    };
                    let (a, c) = (&nodes[l].ty, &nodes[r].ty);
                    let shape = PointType::broadcast_shape(&[&a.shape, &c.shape]);
                    let operands_fit = a.element == c.element && shape.is_some();
                    let expected = PointType { shape: shape.unwrap_or_default(), element: ElementType::I1 };
                    if !operands_fit || !ty.compatible(&expected) || a.element == ElementType::I1 {
                        self.error(
                            op,
                            format!(
                                "'temporal.cmp' compares numbers of one type into booleans; got {a} and {c} -> {ty}"
                            ),
                        );
                        return None;
                    }
                    NodeKind::Compare(predicate, l, r)
                } else if name == "temporal.select" {
                    let (c, a, b) = (operand_nodes[0], operand_nodes[1], operand_nodes[2]);
                    let condition = &nodes[c].ty;
                    let shape = PointType::broadcast_shape(&[&condition.shape, &nodes[a].ty.shape, &nodes[b].ty.shape]);
                    let fits = condition.element == ElementType::I1
                        && nodes[a].ty.element == ty.element
                        && nodes[b].ty.element == ty.element
                        && shape.is_some_and(|shape| PointType { shape, element: ty.element }.compatible(&ty));
                    if !fits {
                        self.error(op, format!(
                            "'temporal.select' needs a boolean condition and values of the result type {ty}, got {condition}, {} and {}",
                            nodes[a].ty, nodes[b].ty
                        ));
                        return None;
                    }
                    NodeKind::Select(c, a, b)
                } else if let Some(movement) = self.movement(op, &name, &operand_nodes, nodes, &ty) {
                    NodeKind::Move(movement?, operand_nodes.clone())
                } else if name == "temporal.call" {
                    let Some(callee) = op.attribute("callee").ok().and_then(string_attr) else {
                        self.error(op, "temporal.call needs a string 'callee'".into());
                        return None;
                    };
                    if let Err(e) = check_name(&callee) {
                        self.error(op, format!("callee {e}"));
                        return None;
                    }
                    if let Some(&a) = operand_nodes.iter().find(|&&a| !nodes[a].ty.is_static()) {
                        self.error(
                            op,
                            format!(
                                "arguments of external call '{callee}' must have static shapes, got {}",
                                nodes[a].ty
                            ),
                        );
                        return None;
                    }
                    if !ty.is_static() {
                        self.error(op, format!("external call '{callee}' must return a static shape, got {ty}"));
                        return None;
                    }
                    let site = self.program.call_sites.len();
                    self.program.call_sites.push(CallSite {
                        callee: callee.clone(),
                        args: operand_nodes.iter().map(|&a| nodes[a].ty.clone()).collect(),
                        result: ty.clone(),
                        tensor: reader,
                        location,
                    });
                    NodeKind::Call { callee, site, args: operand_nodes.clone() }
                } else if name == "temporal.random" {
                    let seed = op.attribute("seed").ok().and_then(integer_attr);
                    let distribution = op.attribute("distribution").ok().and_then(string_attr);
                    let normal = match distribution.as_deref() {
                        Some("uniform") => false,
                        Some("normal") => true,
                        _ => {
                            self.error(op, "temporal.random needs 'distribution' \"uniform\" or \"normal\"".into());
                            return None;
                        }
                    };
                    let Some(seed) = seed else {
                        self.error(op, "temporal.random needs an integer 'seed'".into());
                        return None;
                    };
                    if !ty.element.is_float() || !ty.is_static() {
                        self.error(op, format!("temporal.random produces static floating-point values, not {ty}"));
                        return None;
                    }
                    NodeKind::Random { seed, normal }
                } else if name == "temporal.gather" {
                    let (table, indices) = (operand_nodes[0], operand_nodes[1]);
                    let (t, i) = (&nodes[table].ty, &nodes[indices].ty);
                    let integer_indices = matches!(i.element, ElementType::I32 | ElementType::I64);
                    let expected = (!t.shape.is_empty()).then(|| {
                        let mut shape = i.shape.clone();
                        shape.extend(&t.shape[1..]);
                        PointType { shape, element: t.element }
                    });
                    if !integer_indices || !expected.is_some_and(|e| ty.compatible(&e)) {
                        self.error(
                            op,
                            format!("'temporal.gather' takes rows of {t} at integer indices {i}; it cannot give {ty}"),
                        );
                        return None;
                    }
                    NodeKind::Gather(table, indices)
                } else if name == "temporal.cast" {
                    let a = operand_nodes[0];
                    if nodes[a].ty.shape.len() != ty.shape.len()
                        || !(PointType { shape: nodes[a].ty.shape.clone(), element: ty.element }).compatible(&ty)
                    {
                        self.error(op, format!("'temporal.cast' keeps the shape: {} cannot become {ty}", nodes[a].ty));
                        return None;
                    }
                    NodeKind::Cast(a)
                } else if name == "temporal.matmul" {
                    let (l, r) = (operand_nodes[0], operand_nodes[1]);
                    let (a, b) = (&nodes[l].ty, &nodes[r].ty);
                    let expected = matmul_shape(&a.shape, &b.shape);
                    let ok = a.element == b.element
                        && expected.is_some_and(|shape| ty.compatible(&PointType { shape, element: a.element }));
                    if !ok || ty.element == ElementType::I1 {
                        self.error(op, format!("'temporal.matmul' cannot multiply {a} by {b} into {ty}"));
                        return None;
                    }
                    NodeKind::Matmul(l, r)
                } else if name == "temporal.einsum" {
                    let spec = op.attribute("spec").ok().and_then(string_attr).unwrap_or_default();
                    let einsum = match Einsum::parse(&spec) {
                        Ok(e) => e,
                        Err(e) => {
                            self.error(op, e);
                            return None;
                        }
                    };
                    if operand_nodes.len() > 2 {
                        self.error(
                            op,
                            format!("'temporal.einsum' takes one or two operands, got {}", operand_nodes.len()),
                        );
                        return None;
                    }
                    let shapes: Vec<&[i64]> = operand_nodes.iter().map(|&a| nodes[a].ty.shape.as_slice()).collect();
                    let sizes = match einsum.label_sizes(&shapes) {
                        Ok(sizes) => sizes,
                        Err(e) => {
                            self.error(op, e);
                            return None;
                        }
                    };
                    let shape: Vec<i64> = sizes[..einsum.result.len()].iter().map(|&(_, n)| n).collect();
                    let same_element = operand_nodes.iter().all(|&a| nodes[a].ty.element == ty.element);
                    if !same_element
                        || ty.element == ElementType::I1
                        || !ty.compatible(&PointType { shape, element: ty.element })
                    {
                        let operands: Vec<String> = operand_nodes.iter().map(|&a| nodes[a].ty.to_string()).collect();
                        self.error(
                            op,
                            format!("'temporal.einsum' '{einsum}' of {} cannot give {ty}", operands.join(", ")),
                        );
                        return None;
                    }
                    NodeKind::Einsum(einsum, operand_nodes.clone())
                } else if name == "temporal.attention" {
                    let text = |key: &str| op.attribute(key).ok().and_then(string_attr).unwrap_or_default();
                    let parsed = Einsum::parse(&text("score")).and_then(|score| {
                        let combine = Einsum::parse(&text("combine"))?;
                        let block = op.attribute("block").ok().and_then(integer_attr).unwrap_or(0);
                        Attention::new(score, combine, block)
                    });
                    let attention = match parsed {
                        Ok(a) => a,
                        Err(e) => {
                            self.error(op, e);
                            return None;
                        }
                    };
                    let &[q, k, v, scale] = operand_nodes.as_slice() else {
                        self.error(
                            op,
                            format!(
                                "'temporal.attention' takes query, key, value and scale, got {} operands",
                                operand_nodes.len()
                            ),
                        );
                        return None;
                    };
                    let shape_of = |a: usize| nodes[a].ty.shape.clone();
                    let checked = attention.score.label_sizes(&[&shape_of(q), &shape_of(k)]).and_then(|sizes| {
                        let scores: Vec<i64> = sizes[..attention.score.result.len()].iter().map(|&(_, n)| n).collect();
                        attention.combine.label_sizes(&[&scores, &shape_of(v)])
                    });
                    let sizes = match checked {
                        Ok(sizes) => sizes,
                        Err(e) => {
                            self.error(op, format!("'temporal.attention': {e}"));
                            return None;
                        }
                    };
                    // Only the attended label may be dynamic (compiled code
                    // keeps a row's buffers static).
                    let n = attention.label();
                    let labelled = [
                        (&attention.score.operands[0], q),
                        (&attention.score.operands[1], k),
                        (&attention.combine.operands[1], v),
                    ];
                    if let Some(c) = labelled.iter().find_map(|(labels, node)| {
                        labels
                            .iter()
                            .zip(&nodes[*node].ty.shape)
                            .find(|(c, d)| **c != n && **d == DYNAMIC)
                            .map(|(c, _)| *c)
                    }) {
                        self.error(
                            op,
                            format!("'temporal.attention': label '{c}' has a dynamic size; only the attended label '{n}' may"),
                        );
                        return None;
                    }
                    let shape: Vec<i64> = sizes[..attention.combine.result.len()].iter().map(|&(_, n)| n).collect();
                    let element = ty.element;
                    let same_element = [q, k, v, scale].iter().all(|&a| nodes[a].ty.element == element);
                    let scalar = nodes[scale].ty.shape.iter().all(|&d| d == 1);
                    if !same_element || !element.is_float() || !scalar || !ty.compatible(&PointType { shape, element })
                    {
                        let operands: Vec<String> = [q, k, v, scale].iter().map(|&a| nodes[a].ty.to_string()).collect();
                        self.error(
                            op,
                            format!(
                                "'temporal.attention' of {} cannot give {ty} (float operands of one type, a scalar scale)",
                                operands.join(", ")
                            ),
                        );
                        return None;
                    }
                    NodeKind::Attention(attention, [q, k, v, scale])
                } else if name == "temporal.dynamic_slice" {
                    let a = operand_nodes[0];
                    let input = nodes[a].ty.clone();
                    let Some(offsets) = op.attribute("offsets").ok().and_then(AffineMap::from_attribute) else {
                        self.error(op, "temporal.dynamic_slice needs an affine_map attribute 'offsets'".into());
                        return None;
                    };
                    if let Err(e) = crate::affine::check_divisions(&offsets.results) {
                        self.error(op, format!("slice offsets: {e}"));
                        return None;
                    }
                    let reader_domain = self.program.tensors[reader].domain.len();
                    if offsets.num_dims != reader_domain
                        || offsets.num_symbols != self.program.dims.len()
                        || offsets.results.len() != input.shape.len()
                    {
                        self.error(
                            op,
                            format!(
                                "slice offsets must map the reader's {reader_domain} domain variables and {} bounds to {} offsets (one per dimension of {input})",
                                self.program.dims.len(),
                                input.shape.len()
                            ),
                        );
                        return None;
                    }
                    let fits = input.is_static()
                        && ty.is_static()
                        && ty.element == input.element
                        && ty.shape.len() == input.shape.len()
                        && ty.shape.iter().zip(&input.shape).all(|(&n, &m)| n <= m);
                    if !fits {
                        self.error(
                            op,
                            format!("'temporal.dynamic_slice' takes a static box of {ty} out of a static {input}"),
                        );
                        return None;
                    }
                    NodeKind::DynamicSlice(a, offsets)
                } else {
                    self.error(op, format!("'{name}' is not allowed in a temporal.define body"));
                    return None;
                }
            }
        };
        Some(Node { kind, ty, location })
    }
}

impl<'c, 'v> Builder<'c, 'v> {
    /// Checks a movement op; `None` if `name` is not one, `Some(None)` after
    /// reporting an error.
    fn movement(
        &mut self,
        op: OperationRef<'c, '_>,
        name: &str,
        operands: &[usize],
        nodes: &[Node<'c>],
        ty: &PointType,
    ) -> Option<Option<Movement>> {
        let integer = |key: &str| op.attribute(key).ok().and_then(integer_attr);
        let integers = |key: &str| op.attribute(key).ok().and_then(|a| array_attr(a, integer_attr));
        let input = operands.first().map(|&a| nodes[a].ty.clone());
        let same_element = input.as_ref().is_none_or(|i| i.element == ty.element);
        let result: Result<Movement, String> = match name {
            "temporal.permute" => {
                let input = input.clone()?;
                match integers("permutation") {
                    Some(p)
                        if p.len() == input.shape.len() && {
                            let mut sorted = p.clone();
                            sorted.sort();
                            sorted.iter().enumerate().all(|(i, &v)| v == i as i64)
                        } =>
                    {
                        let shape: Vec<i64> = p.iter().map(|&k| input.shape[k as usize]).collect();
                        if ty.compatible(&PointType { shape, element: input.element }) {
                            Ok(Movement::Permute(p.iter().map(|&k| k as usize).collect()))
                        } else {
                            Err(format!("permuting {input} gives another shape than {ty}"))
                        }
                    }
                    _ => Err(format!(
                        "'permutation' must be a permutation of 0..{} (array of integers)",
                        input.shape.len()
                    )),
                }
            }
            "temporal.flip" => {
                let input = input.clone()?;
                match integer("axis") {
                    Some(a) if a >= 0 && (a as usize) < input.shape.len() && ty.compatible(&input) => {
                        Ok(Movement::Flip(a as usize))
                    }
                    _ => Err(format!("flip needs an 'axis' of {input} and the same result type, got {ty}")),
                }
            }
            "temporal.slice" => {
                let input = input.clone()?;
                match integers("offsets") {
                    Some(o)
                        if o.len() == input.shape.len()
                            && input.is_static()
                            && ty.is_static()
                            && ty.shape.len() == o.len()
                            && o.iter().zip(&ty.shape).zip(&input.shape).all(|((&o, &n), &m)| o >= 0 && o + n <= m) =>
                    {
                        Ok(Movement::Slice(o))
                    }
                    _ => Err(format!("slice needs static shapes and 'offsets' with the box of {ty} inside {input}")),
                }
            }
            "temporal.reshape" => {
                let input = input.clone()?;
                if reshape_fits(&input.shape, &ty.shape) {
                    Ok(Movement::Reshape)
                } else {
                    Err(format!(
                        "reshape keeps the elements: static shapes with as many elements, or one dynamic dimension in each with the same static sizes around it; not {input} to {ty}"
                    ))
                }
            }
            "temporal.expand" => {
                let input = input.clone()?;
                if expand_fits(&input.shape, &ty.shape) {
                    Ok(Movement::Expand)
                } else {
                    Err(format!(
                        "{input} does not broadcast to {ty} (a dynamic dimension stays itself; size 1 stretches to a static size)"
                    ))
                }
            }
            "temporal.concat" => {
                let (a, b) = (nodes[operands[0]].ty.clone(), nodes[operands[1]].ty.clone());
                match integer("axis") {
                    Some(axis) if axis >= 0 && (axis as usize) < a.shape.len() && a.shape.len() == b.shape.len() => {
                        let axis = axis as usize;
                        let mut shape = a.shape.clone();
                        shape[axis] = if a.shape[axis] == DYNAMIC || b.shape[axis] == DYNAMIC {
                            DYNAMIC
                        } else {
                            a.shape[axis] + b.shape[axis]
                        };
                        let others_equal = (0..a.shape.len()).all(|k| k == axis || a.shape[k] == b.shape[k]);
                        if others_equal
                            && a.element == b.element
                            && ty.compatible(&PointType { shape, element: a.element })
                        {
                            Ok(Movement::Concat(axis))
                        } else {
                            Err(format!("cannot concatenate {a} and {b} along {axis} into {ty}"))
                        }
                    }
                    _ => Err(format!("concat needs an 'axis' valid for {a} and {b} of one rank")),
                }
            }
            "temporal.arange" => {
                if ty.shape.len() == 1 && ty.is_static() && ty.element != ElementType::I1 {
                    Ok(Movement::Arange)
                } else {
                    Err(format!("arange produces a static vector of numbers, not {ty}"))
                }
            }
            _ => return None,
        };
        match result {
            Ok(m) if same_element => Some(Some(m)),
            Ok(_) => {
                self.error(op, format!("'{name}' keeps the element type; got {} -> {ty}", input.expect("operand")));
                Some(None)
            }
            Err(message) => {
                self.error(op, format!("'{name}': {message}"));
                Some(None)
            }
        }
    }
}

/// Elements of a dense attribute, row-major, as f64 (splats expanded).
fn dense_values(attr: Attribute, count: usize, element: ElementType) -> Vec<f64> {
    use mlir_sys::{
        mlirDenseElementsAttrGetBoolValue, mlirDenseElementsAttrGetDoubleValue, mlirDenseElementsAttrGetFloatValue,
        mlirDenseElementsAttrGetInt32Value, mlirDenseElementsAttrGetInt64Value, mlirDenseElementsAttrIsSplat,
    };
    unsafe {
        let raw = attr.to_raw();
        let splat = mlirDenseElementsAttrIsSplat(raw);
        (0..count)
            .map(|i| {
                let i = if splat { 0 } else { i as isize };
                match element {
                    ElementType::F32 => mlirDenseElementsAttrGetFloatValue(raw, i) as f64,
                    ElementType::F64 => mlirDenseElementsAttrGetDoubleValue(raw, i),
                    ElementType::I32 => mlirDenseElementsAttrGetInt32Value(raw, i) as f64,
                    ElementType::I64 => mlirDenseElementsAttrGetInt64Value(raw, i) as f64,
                    ElementType::I1 => mlirDenseElementsAttrGetBoolValue(raw, i) as i64 as f64,
                }
            })
            .collect()
    }
}

/// Runs `f` on the program of `module`, turning model errors into a pass result.
pub fn with_program<'c>(
    module: OperationRef<'c, '_>,
    f: impl FnOnce(&Program<'c>) -> PassResult<'c>,
) -> PassResult<'c> {
    let program = Program::from_module(module)?;
    f(&program)
}
