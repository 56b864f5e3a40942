//! Point expressions: what a branch computes at one point, built with
//! operator overloading (`&a + &b`, `a.tanh()`, `w.matmul(&h)`, `x * 0.5`).
//!
//! Expressions are immutable trees with shared subtrees (`Rc`); a subtree
//! used twice in one branch is emitted once. Each node remembers the Rust
//! source location that built it, so the compiler's diagnostics point at the
//! user's code.

use crate::index::Index;
use tempo_passes::affine::{AffineExpr, AffineMap};

/// Identifies a tensor within its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorId(pub(crate) usize);
use crate::site::Site;
use std::ops::{Add, Div, Mul, Neg, Sub};
use std::rc::Rc;
use std::sync::Arc;
pub use tempo_passes::program::{BinaryKind as Binary, Movement, Predicate, ReduceKind as Reduce, UnaryKind as Unary};
use tempo_passes::program::{Collective, DYNAMIC, ElementType, NodeKind, PointType};

/// How a range read indexes one dimension of its source.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Coordinate {
    /// One point.
    Point(Index),
    /// The interval `[max(lower), min(upper))`; it becomes a leading
    /// dimension of dynamic size.
    Range { lower: Vec<Index>, upper: Vec<Index> },
    /// The point `min(max(at_least...), at_most...)`: a clamped point such
    /// as `min(t + 3, T - 1)` or `max(0, t - 2)`.
    Clamped { at_least: Vec<Index>, at_most: Vec<Index> },
}

impl Coordinate {
    /// `lo:hi`.
    pub fn range(lo: impl Into<Index>, hi: impl Into<Index>) -> Coordinate {
        Coordinate::Range { lower: vec![lo.into()], upper: vec![hi.into()] }
    }
    /// `max(lower...):min(upper...)`, e.g. a window `max(0, t-w+1):t+1`.
    pub fn clamped(lower: Vec<Index>, upper: Vec<Index>) -> Coordinate {
        Coordinate::Range { lower, upper }
    }
    /// The point `min(value, at_most)`, e.g. `min(t + 3, T - 1)`.
    pub fn min(value: impl Into<Index>, at_most: impl Into<Index>) -> Coordinate {
        Coordinate::Clamped { at_least: vec![value.into()], at_most: vec![at_most.into()] }
    }
    /// The point `max(value, at_least)`, e.g. `max(0, t - 2)`.
    pub fn max(value: impl Into<Index>, at_least: impl Into<Index>) -> Coordinate {
        Coordinate::Clamped { at_least: vec![value.into(), at_least.into()], at_most: vec![] }
    }
    /// The point `min(max(value, low), high)`.
    pub fn clamp(value: impl Into<Index>, low: impl Into<Index>, high: impl Into<Index>) -> Coordinate {
        Coordinate::Clamped { at_least: vec![value.into(), low.into()], at_most: vec![high.into()] }
    }
}

/// A constant's elements as given: floats, or integers kept exact.
enum Values {
    Floats(Vec<f64>),
    Integers(Vec<i64>),
    /// One value everywhere (`splat`), whatever the type's size (or a bad
    /// type's: no elements then).
    SplatFloat(f64),
    SplatInteger(i64),
}

/// What an expression computes: a node of the compiler's program model
/// ([`NodeKind`]) whose operand numbers are positions in `operands`.
///
/// Dimensions are named by their number in the program, not by a reader's
/// domain, since an expression is built before the tensor whose branch
/// uses it: the maps of `Read`, `ReadRange` and `DynamicSlice` take the
/// program's dimensions (`Dim(number)`) and bounds (`Symbol(number)`);
/// `Position` and `Bound` name program dimensions (as in the compiler);
/// a `ReadAt`'s map takes only its data coordinates. Building the program
/// (`program/build.rs`) renumbers the maps to the reader's domain.
#[derive(Debug)]
pub(crate) struct ExprData {
    pub(crate) kind: NodeKind,
    pub(crate) operands: Vec<Expr>,
    pub(crate) ty: PointType,
    pub(crate) location: Site,
    /// Why the op cannot be made (an ill-formed einsum spec, a read of a
    /// dimension its tensor lacks), said at `location` when the program is
    /// built.
    pub(crate) refused: Vec<String>,
    /// The program whose handles (tensor, dimensions) the node was made
    /// from, by identity; a program reading it must be that one.
    pub(crate) program: Option<u64>,
}

/// A point expression.
#[derive(Clone, Debug)]
pub struct Expr(pub(crate) Rc<ExprData>);

impl Expr {
    pub(crate) fn new(kind: NodeKind, operands: Vec<Expr>, ty: PointType, location: Site) -> Expr {
        Expr::checked(kind, operands, ty, location, Vec::new(), None)
    }

    /// An expression refused for each reason in `why` (none: a valid one),
    /// made from handles of `program` (its identity) where it is `Some`: a
    /// program that uses it is not built, and says each reason at
    /// `location`.
    pub(crate) fn checked(
        kind: NodeKind,
        operands: Vec<Expr>,
        ty: PointType,
        location: Site,
        why: Vec<String>,
        program: Option<u64>,
    ) -> Expr {
        Expr(Rc::new(ExprData { kind, operands, ty, location, refused: why, program }))
    }

    /// A constant of type `ty` with `values`; values the type cannot hold
    /// refuse it.
    fn constant_of(values: Values, ty: PointType, location: Site) -> Expr {
        let (kind, why) = constant(&values, &ty);
        Expr::checked(kind, Vec::new(), ty, location, why, None)
    }

    /// The static type of the expression's value.
    pub fn point_type(&self) -> &PointType {
        &self.0.ty
    }

    /// A constant filled with `value`, of the given type.
    #[track_caller]
    pub fn splat(value: f64, ty: PointType) -> Expr {
        Expr::constant_of(Values::SplatFloat(value), ty, Site::caller())
    }

    /// A constant filled with the integer `value`, of the given type: exact
    /// for integer elements of any size (a float type converts it).
    #[track_caller]
    pub fn splat_int(value: i64, ty: PointType) -> Expr {
        Expr::constant_of(Values::SplatInteger(value), ty, Site::caller())
    }

    /// A constant with the given row-major elements.
    #[track_caller]
    pub fn constant(values: Vec<f64>, ty: PointType) -> Expr {
        Expr::constant_of(Values::Floats(values), ty, Site::caller())
    }

    /// A constant with the given row-major integer elements (exact).
    #[track_caller]
    pub fn constant_ints(values: Vec<i64>, ty: PointType) -> Expr {
        Expr::constant_of(Values::Integers(values), ty, Site::caller())
    }

    #[track_caller]
    fn unary(self, op: Unary) -> Expr {
        let ty = self.0.ty.clone();
        Expr::new(NodeKind::Unary(op, 0), vec![self], ty, Site::caller())
    }

    #[track_caller]
    fn binary(self, op: Binary, rhs: Expr) -> Expr {
        // NumPy broadcasting; shapes that do not broadcast are reported with
        // a location when the program is emitted.
        let ty = PointType { shape: broadcast(&[&self, &rhs]), element: self.0.ty.element };
        Expr::new(NodeKind::Binary(op, 0, 1), vec![self, rhs], ty, Site::caller())
    }

    /// A call of `callee` on `args` giving `result`.
    #[track_caller]
    fn call_of(callee: &str, args: &[&Expr], result: PointType, batched: bool) -> Expr {
        let args: Vec<Expr> = args.iter().map(|&a| a.clone()).collect();
        let kind = NodeKind::Call { callee: callee.to_string(), site: 0, args: (0..args.len()).collect(), batched };
        Expr::new(kind, args, result, Site::caller())
    }

    #[track_caller]
    fn reduce(&self, kind: Reduce, axis: usize) -> Expr {
        let mut shape = self.0.ty.shape.clone();
        if axis < shape.len() {
            shape.remove(axis);
        }
        let ty = PointType { shape, element: self.0.ty.element };
        Expr::new(NodeKind::Reduce(kind, 0, axis), vec![self.clone()], ty, Site::caller())
    }

    /// Sum along `axis` (removed from the shape).
    #[track_caller]
    pub fn sum(&self, axis: usize) -> Expr {
        self.reduce(Reduce::Sum, axis)
    }

    /// Maximum along `axis` (removed from the shape).
    #[track_caller]
    pub fn max_along(&self, axis: usize) -> Expr {
        self.reduce(Reduce::Max, axis)
    }

    /// Mean along `axis` (floats).
    #[track_caller]
    pub fn mean(&self, axis: usize) -> Expr {
        self.reduce(Reduce::Mean, axis)
    }

    /// Index (i64) of the first maximum along `axis`.
    #[track_caller]
    pub fn argmax(&self, axis: usize) -> Expr {
        let mut shape = self.0.ty.shape.clone();
        if axis < shape.len() {
            shape.remove(axis);
        }
        let ty = PointType { shape, element: ElementType::I64 };
        Expr::new(NodeKind::Reduce(Reduce::ArgMax, 0, axis), vec![self.clone()], ty, Site::caller())
    }

    /// Running sum along `axis` (same shape).
    #[track_caller]
    pub fn cumsum(&self, axis: usize) -> Expr {
        Expr::new(NodeKind::Reduce(Reduce::CumSum, 0, axis), vec![self.clone()], self.0.ty.clone(), Site::caller())
    }

    #[track_caller]
    fn moved(&self, movement: Movement, others: &[&Expr], shape: Vec<i64>) -> Expr {
        let ty = PointType { shape, element: self.0.ty.element };
        let operands: Vec<Expr> = std::iter::once(self.clone()).chain(others.iter().map(|e| (*e).clone())).collect();
        let numbers = (0..operands.len()).collect();
        Expr::new(NodeKind::Move(movement, numbers), operands, ty, Site::caller())
    }

    /// Result dimension `i` is dimension `permutation[i]`.
    #[track_caller]
    pub fn permute(&self, permutation: &[usize]) -> Expr {
        let shape = permutation.iter().map(|&k| self.0.ty.shape.get(k).copied().unwrap_or(DYNAMIC)).collect();
        self.moved(Movement::Permute(permutation.to_vec()), &[], shape)
    }

    /// Reverses dimension `axis`.
    #[track_caller]
    pub fn flip(&self, axis: usize) -> Expr {
        self.moved(Movement::Flip(axis), &[], self.0.ty.shape.clone())
    }

    /// The static box at `offsets` with the given `sizes`.
    #[track_caller]
    pub fn slice(&self, offsets: &[i64], sizes: &[i64]) -> Expr {
        self.moved(Movement::Slice(offsets.to_vec()), &[], sizes.to_vec())
    }

    /// The same elements in another shape: static, or with one dynamic
    /// size ([`DYNAMIC`], -1) where the operand has one, with the same
    /// static sizes around it (`[?, 2, 8]` to `[DYNAMIC, 16]`).
    #[track_caller]
    pub fn reshape(&self, shape: &[i64]) -> Expr {
        self.moved(Movement::Reshape, &[], shape.to_vec())
    }

    /// Broadcast to `shape` (trailing dimensions align; size-1 ones repeat
    /// to a static size; a dynamic one, [`DYNAMIC`] in `shape`, stays itself).
    #[track_caller]
    pub fn expand(&self, shape: &[i64]) -> Expr {
        self.moved(Movement::Expand, &[], shape.to_vec())
    }

    /// Concatenation with `other` along `axis`.
    #[track_caller]
    pub fn concat(&self, other: &Expr, axis: usize) -> Expr {
        let mut shape = self.0.ty.shape.clone();
        if let (Some(a), Some(b)) = (shape.get(axis).copied(), other.0.ty.shape.get(axis).copied()) {
            shape[axis] = if a == DYNAMIC || b == DYNAMIC { DYNAMIC } else { a + b };
        }
        self.moved(Movement::Concat(axis), &[other], shape)
    }

    /// Rows of `self` (a table, along its first dimension) at integer
    /// `indices`, clamped into the table (an embedding lookup).
    #[track_caller]
    pub fn gather(&self, indices: &Expr) -> Expr {
        let mut shape = indices.0.ty.shape.clone();
        shape.extend(self.0.ty.shape.iter().skip(1));
        let ty = PointType { shape, element: self.0.ty.element };
        Expr::new(NodeKind::Gather(0, 1), vec![self.clone(), indices.clone()], ty, Site::caller())
    }

    /// Calls the external function `callee` on `args`, returning a value of
    /// type `result`: once per point, with the callback registered under
    /// `callee` ([`crate::Program::external`]).
    #[track_caller]
    pub fn call(callee: &str, args: &[&Expr], result: PointType) -> Expr {
        Expr::call_of(callee, args, result, false)
    }

    /// Like [`Expr::call`], for a function that takes a batch of points
    /// as well as one: where `temporal-vectorize` batches a dimension of
    /// the calling tensor's domain (compiled at `-O2` with the run's bound
    /// values), the callback gets every argument with a leading dimension
    /// of the batch's points and returns the result with one (row `k` of
    /// the result is row `k`'s point's value: the points of the batch are
    /// independent); elsewhere, and in the interpreter, it gets one point.
    #[track_caller]
    pub fn call_batched(callee: &str, args: &[&Expr], result: PointType) -> Expr {
        Expr::call_of(callee, args, result, true)
    }

    /// Seeded uniform values in [0, 1) of type `ty` (floats), a pure function
    /// of the seed, the point and the element position.
    #[track_caller]
    pub fn random_uniform(seed: i64, ty: PointType) -> Expr {
        Expr::new(NodeKind::Random { seed, normal: false }, vec![], ty, Site::caller())
    }

    /// Seeded standard normal values of type `ty` (floats).
    #[track_caller]
    pub fn random_normal(seed: i64, ty: PointType) -> Expr {
        Expr::new(NodeKind::Random { seed, normal: true }, vec![], ty, Site::caller())
    }

    /// This process's rank among the processes of the run (0 to the world
    /// size minus 1; 0 in a run without `mpirun`), a scalar of `element`.
    #[track_caller]
    pub fn process_rank(element: ElementType) -> Expr {
        let ty = PointType { shape: vec![], element };
        Expr::new(NodeKind::Rank, vec![], ty, Site::caller())
    }

    /// The number of processes of the run (1 without `mpirun`), a scalar
    /// of `element`.
    #[track_caller]
    pub fn world_size(element: ElementType) -> Expr {
        let ty = PointType { shape: vec![], element };
        Expr::new(NodeKind::WorldSize, vec![], ty, Site::caller())
    }

    /// The elementwise `reduction` (sum, mean, max, min) of this value over
    /// the processes of the run, the same on every process
    /// (`temporal.all_reduce`, a collective: see `dialects/README.md` for
    /// where one may be used).
    #[track_caller]
    pub fn all_reduce(&self, reduction: Collective) -> Expr {
        Expr::new(NodeKind::AllReduce(reduction, 0), vec![self.clone()], self.0.ty.clone(), Site::caller())
    }

    /// `[0, 1, ..., n-1]` as a vector of `element`.
    #[track_caller]
    pub fn arange(n: i64, element: ElementType) -> Expr {
        let ty = PointType { shape: vec![n], element };
        Expr::new(NodeKind::Move(Movement::Arange, vec![]), vec![], ty, Site::caller())
    }

    /// The rank of the value.
    pub fn rank(&self) -> usize {
        self.0.ty.shape.len()
    }

    /// `self` reduced along `axis` with the axis kept as size 1, so that it
    /// broadcasts against `self` (`x / x.sum_keepdims(1)`). The other
    /// dimensions must be static (a reshape; dynamic reshapes are not in
    /// the op set yet); a reduction of the first axis needs no reshape, as a
    /// missing leading dimension broadcasts.
    #[track_caller]
    pub fn keep_dims(reduced: Expr, axis: usize) -> Expr {
        if axis == 0 {
            return reduced;
        }
        let mut shape = reduced.0.ty.shape.clone();
        shape.insert(axis.min(shape.len()), 1);
        reduced.reshape(&shape)
    }

    /// Sum along `axis`, kept as a dimension of size 1.
    #[track_caller]
    pub fn sum_keepdims(&self, axis: usize) -> Expr {
        Expr::keep_dims(self.sum(axis), axis)
    }

    /// Maximum along `axis`, kept as a dimension of size 1.
    #[track_caller]
    pub fn max_keepdims(&self, axis: usize) -> Expr {
        Expr::keep_dims(self.max_along(axis), axis)
    }

    /// Mean along `axis`, kept as a dimension of size 1.
    #[track_caller]
    pub fn mean_keepdims(&self, axis: usize) -> Expr {
        Expr::keep_dims(self.mean(axis), axis)
    }

    /// Layer normalization along the last axis:
    /// `(x - mean) / sqrt(var + eps)`.
    #[track_caller]
    pub fn layer_norm(&self, eps: f64) -> Expr {
        self.layer_norm_along(self.rank().saturating_sub(1), eps)
    }

    /// Layer normalization along `axis`.
    #[track_caller]
    pub fn layer_norm_along(&self, axis: usize, eps: f64) -> Expr {
        let centered = self - &self.mean_keepdims(axis);
        let variance = (&centered * &centered).mean_keepdims(axis);
        &centered / &(variance + eps).sqrt()
    }

    /// RMS normalization along the last axis: `x / sqrt(mean(x^2) + eps)`.
    #[track_caller]
    pub fn rms_norm(&self, eps: f64) -> Expr {
        self.rms_norm_along(self.rank().saturating_sub(1), eps)
    }

    /// RMS normalization along `axis`.
    #[track_caller]
    pub fn rms_norm_along(&self, axis: usize, eps: f64) -> Expr {
        self / &((self * self).mean_keepdims(axis) + eps).sqrt()
    }

    /// Softmax along the last axis: `exp(x - max(x)) / sum(exp(x - max(x)))`,
    /// built from the primitive ops.
    #[track_caller]
    pub fn softmax(&self) -> Expr {
        self.softmax_along(self.rank().saturating_sub(1))
    }

    /// Softmax along `axis`.
    #[track_caller]
    pub fn softmax_along(&self, axis: usize) -> Expr {
        let e = (self - &self.max_keepdims(axis)).exp();
        &e / &e.sum_keepdims(axis)
    }

    /// `e^x`.
    #[track_caller]
    pub fn exp(&self) -> Expr {
        self.clone().unary(Unary::Exp)
    }
    /// Natural logarithm.
    #[track_caller]
    pub fn log(&self) -> Expr {
        self.clone().unary(Unary::Log)
    }
    /// Square root.
    #[track_caller]
    pub fn sqrt(&self) -> Expr {
        self.clone().unary(Unary::Sqrt)
    }
    /// Hyperbolic tangent.
    #[track_caller]
    pub fn tanh(&self) -> Expr {
        self.clone().unary(Unary::Tanh)
    }
    /// Logistic sigmoid.
    #[track_caller]
    pub fn sigmoid(&self) -> Expr {
        self.clone().unary(Unary::Sigmoid)
    }
    /// `max(x, 0)`.
    #[track_caller]
    pub fn relu(&self) -> Expr {
        self.clone().unary(Unary::Relu)
    }
    /// Sine.
    #[track_caller]
    pub fn sin(&self) -> Expr {
        self.clone().unary(Unary::Sin)
    }
    /// Cosine.
    #[track_caller]
    pub fn cos(&self) -> Expr {
        self.clone().unary(Unary::Cos)
    }
    /// Absolute value.
    #[track_caller]
    pub fn abs(&self) -> Expr {
        self.clone().unary(Unary::Abs)
    }
    /// Sign: 1 where positive, -1 where negative, the value itself
    /// elsewhere (zeros, NaN); no gradient passes through it.
    #[track_caller]
    pub fn sign(&self) -> Expr {
        self.clone().unary(Unary::Sign)
    }
    /// SiLU (swish), `x * sigmoid(x)`, elementwise (floats): LLaMA's MLP
    /// activation. Composed of `sigmoid` and a product (no op of its own:
    /// the lowering fuses `g * sigmoid(g)` of a product into its kernel).
    #[track_caller]
    pub fn silu(&self) -> Expr {
        self * &self.sigmoid()
    }
    /// GELU in its tanh form, elementwise (floats): GPT-2's activation,
    /// PyTorch's `gelu(x, approximate="tanh")`,
    /// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`. Composed of
    /// `tanh`, products and sums (no op of its own).
    #[track_caller]
    pub fn gelu(&self) -> Expr {
        let cubed = &(self * self) * self;
        let inner = (self + &(cubed * 0.044715)) * (2.0 / std::f64::consts::PI).sqrt();
        (self * 0.5) * (inner.tanh() + 1.0)
    }
    /// Logical not (booleans).
    #[track_caller]
    pub fn not(&self) -> Expr {
        self.clone().unary(Unary::Not)
    }
    /// The value of `self`, through which no gradient passes
    /// (`temporal.stop_gradient`): for [`crate::Program::grad`] it is a
    /// constant, so the gradient becomes the partial one along the other
    /// paths. A parameter updated from its own gradient reads that
    /// gradient through it (`W[i] = W[i-1] - lr * stop_gradient(g[i-1])`).
    #[track_caller]
    pub fn stop_gradient(&self) -> Expr {
        self.clone().unary(Unary::StopGradient)
    }
    /// `self ^ exponent` (floats).
    #[track_caller]
    pub fn pow(&self, exponent: &Expr) -> Expr {
        self.clone().binary(Binary::Pow, exponent.clone())
    }
    /// Logical and (booleans).
    #[track_caller]
    pub fn and(&self, other: &Expr) -> Expr {
        self.clone().binary(Binary::And, other.clone())
    }
    /// Logical or (booleans).
    #[track_caller]
    pub fn or(&self, other: &Expr) -> Expr {
        self.clone().binary(Binary::Or, other.clone())
    }
    /// Elementwise comparison, giving booleans.
    #[track_caller]
    pub fn compare(&self, predicate: Predicate, other: &Expr) -> Expr {
        let ty = PointType { shape: broadcast(&[self, other]), element: ElementType::I1 };
        Expr::new(NodeKind::Compare(predicate, 0, 1), vec![self.clone(), other.clone()], ty, Site::caller())
    }
    /// `self < other`, elementwise.
    #[track_caller]
    pub fn less(&self, other: &Expr) -> Expr {
        self.compare(Predicate::Lt, other)
    }
    /// `self > other`, elementwise.
    #[track_caller]
    pub fn greater(&self, other: &Expr) -> Expr {
        self.compare(Predicate::Gt, other)
    }
    /// `condition ? on_true : on_false` elementwise (`self` is the condition).
    #[track_caller]
    pub fn select(&self, on_true: &Expr, on_false: &Expr) -> Expr {
        let ty = PointType { shape: broadcast(&[self, on_true, on_false]), element: on_true.0.ty.element };
        Expr::new(NodeKind::Select(0, 1, 2), vec![self.clone(), on_true.clone(), on_false.clone()], ty, Site::caller())
    }
    /// Converts every element to `element`.
    #[track_caller]
    pub fn cast(&self, element: ElementType) -> Expr {
        let ty = PointType { shape: self.0.ty.shape.clone(), element };
        Expr::new(NodeKind::Cast(0), vec![self.clone()], ty, Site::caller())
    }

    /// Elementwise maximum.
    #[track_caller]
    pub fn max(&self, other: &Expr) -> Expr {
        self.clone().binary(Binary::Max, other.clone())
    }
    /// Elementwise minimum.
    #[track_caller]
    pub fn min(&self, other: &Expr) -> Expr {
        self.clone().binary(Binary::Min, other.clone())
    }

    /// Matrix product: `MxK * KxN`, `MxK * K`, `K * KxN`, and batched
    /// `[batch..., M, K] * [batch..., K, N]` with any number of batch
    /// dimensions, broadcast under NumPy's rules.
    #[track_caller]
    pub fn matmul(&self, other: &Expr) -> Expr {
        let (a, b) = (&self.0.ty, &other.0.ty);
        // Ill-shaped: keep the left type; the verifier reports it.
        let shape = tempo_passes::program::matmul_shape(&a.shape, &b.shape).unwrap_or_else(|| a.shape.clone());
        let ty = PointType { shape, element: a.element };
        Expr::new(NodeKind::Matmul(0, 1), vec![self.clone(), other.clone()], ty, Site::caller())
    }

    /// Einstein summation of one or two operands: `Expr::einsum("hqd,nhd->hqn",
    /// &[&q, &keys])` names each operand's dimensions and the result's; the
    /// labels missing from the result are summed. No copy is made for
    /// permuted operands.
    #[track_caller]
    pub fn einsum(spec: &str, operands: &[&Expr]) -> Expr {
        let element = operands.first().map_or(ElementType::F32, |o| o.0.ty.element);
        let shapes: Vec<&[i64]> = operands.iter().map(|o| o.0.ty.shape.as_slice()).collect();
        // An ill-formed spec or shapes: a scalar; the verifier reports it.
        let parsed = tempo_passes::program::Einsum::parse(spec);
        let shape = parsed
            .clone()
            .and_then(|e| Ok(e.label_sizes(&shapes)?.iter().take(e.result.len()).map(|&(_, n)| n).collect()))
            .unwrap_or_default();
        let ty = PointType { shape, element };
        let operands: Vec<Expr> = operands.iter().map(|&o| o.clone()).collect();
        match parsed {
            Ok(einsum) => {
                Expr::new(NodeKind::Einsum(einsum, (0..operands.len()).collect()), operands, ty, Site::caller())
            }
            Err(e) => {
                let why = format!("'temporal.einsum' spec \"{spec}\": {e}");
                Expr::checked(NodeKind::Rank, Vec::new(), ty, Site::caller(), vec![why], None)
            }
        }
    }

    /// The static box of `sizes` at `offsets` that depend on the point
    /// (affine in the reader's variables and the bounds, one per dimension):
    /// `x.slice_at([&h * 8, 0.into()], &[8, 64])` takes head `h`'s rows.
    #[track_caller]
    pub fn slice_at<I: Into<Index>>(&self, offsets: impl IntoIterator<Item = I>, sizes: &[i64]) -> Expr {
        let offsets: Vec<Index> = offsets.into_iter().map(Into::into).collect();
        let ty = PointType { shape: sizes.to_vec(), element: self.0.ty.element };
        let mut dims = Vec::new();
        offsets.iter().for_each(|i| i.dims(&mut dims));
        let map = global_map(offsets.iter().map(Index::affine).collect());
        let kind = NodeKind::DynamicSlice(0, map);
        let program = dims.first().map(|d| d.program);
        let mut why = Vec::new();
        if dims.iter().any(|d| Some(d.program) != program) {
            why.push("slice offsets use dimensions of different programs".to_string());
        }
        Expr::checked(kind, vec![self.clone()], ty, Site::caller(), why, program)
    }

    /// A constant filled with `value` of this expression's type, or a
    /// scalar (broadcast) when the type has dynamic dimensions.
    #[track_caller]
    fn like(&self, value: f64) -> Expr {
        Expr::splat(value, self.scalar_type())
    }

    /// The same with an integer `value` (exact for integer elements).
    #[track_caller]
    fn like_int(&self, value: i64) -> Expr {
        Expr::splat_int(value, self.scalar_type())
    }

    /// This expression's type, or its scalar when it has dynamic sizes.
    fn scalar_type(&self) -> PointType {
        let ty = &self.0.ty;
        if ty.is_static() { ty.clone() } else { PointType { shape: vec![], element: ty.element } }
    }
}

macro_rules! binary_operator {
    ($trait:ident, $method:ident, $op:expr) => {
        impl $trait<&Expr> for &Expr {
            type Output = Expr;
            #[track_caller]
            fn $method(self, rhs: &Expr) -> Expr {
                self.clone().binary($op, rhs.clone())
            }
        }
        impl $trait<Expr> for Expr {
            type Output = Expr;
            #[track_caller]
            fn $method(self, rhs: Expr) -> Expr {
                self.binary($op, rhs)
            }
        }
        impl $trait<&Expr> for Expr {
            type Output = Expr;
            #[track_caller]
            fn $method(self, rhs: &Expr) -> Expr {
                self.binary($op, rhs.clone())
            }
        }
        impl $trait<Expr> for &Expr {
            type Output = Expr;
            #[track_caller]
            fn $method(self, rhs: Expr) -> Expr {
                self.clone().binary($op, rhs)
            }
        }
        /// With a scalar: the scalar is splat to the expression's type.
        impl $trait<f64> for &Expr {
            type Output = Expr;
            #[track_caller]
            fn $method(self, rhs: f64) -> Expr {
                let c = self.like(rhs);
                self.clone().binary($op, c)
            }
        }
        impl $trait<f64> for Expr {
            type Output = Expr;
            #[track_caller]
            fn $method(self, rhs: f64) -> Expr {
                let c = self.like(rhs);
                self.binary($op, c)
            }
        }
        /// A scalar on the left: `1.0 - x`.
        impl $trait<&Expr> for f64 {
            type Output = Expr;
            #[track_caller]
            fn $method(self, rhs: &Expr) -> Expr {
                rhs.like(self).binary($op, rhs.clone())
            }
        }
        impl $trait<Expr> for f64 {
            type Output = Expr;
            #[track_caller]
            fn $method(self, rhs: Expr) -> Expr {
                rhs.like(self).binary($op, rhs)
            }
        }
        /// With an integer: exact for integer elements of any size.
        impl $trait<i64> for &Expr {
            type Output = Expr;
            #[track_caller]
            fn $method(self, rhs: i64) -> Expr {
                let c = self.like_int(rhs);
                self.clone().binary($op, c)
            }
        }
        impl $trait<i64> for Expr {
            type Output = Expr;
            #[track_caller]
            fn $method(self, rhs: i64) -> Expr {
                let c = self.like_int(rhs);
                self.binary($op, c)
            }
        }
        impl $trait<&Expr> for i64 {
            type Output = Expr;
            #[track_caller]
            fn $method(self, rhs: &Expr) -> Expr {
                rhs.like_int(self).binary($op, rhs.clone())
            }
        }
        impl $trait<Expr> for i64 {
            type Output = Expr;
            #[track_caller]
            fn $method(self, rhs: Expr) -> Expr {
                rhs.like_int(self).binary($op, rhs)
            }
        }
    };
}

binary_operator!(Add, add, Binary::Add);
binary_operator!(Sub, sub, Binary::Sub);
binary_operator!(Mul, mul, Binary::Mul);
binary_operator!(Div, div, Binary::Div);

impl Neg for &Expr {
    type Output = Expr;
    #[track_caller]
    fn neg(self) -> Expr {
        self.clone().unary(Unary::Neg)
    }
}

impl Neg for Expr {
    type Output = Expr;
    #[track_caller]
    fn neg(self) -> Expr {
        self.unary(Unary::Neg)
    }
}

/// The shape of an elementwise result: NumPy broadcasting, or the first
/// operand's shape when the shapes do not broadcast (the verifier then
/// reports the op).
fn broadcast(operands: &[&Expr]) -> Vec<i64> {
    let shapes: Vec<&[i64]> = operands.iter().map(|e| e.0.ty.shape.as_slice()).collect();
    PointType::broadcast_shape(&shapes).unwrap_or_else(|| shapes[0].to_vec())
}

/// Shorthand for point types: `f32s(&[4])` is `tensor<4xf32>`.
pub fn f32s(shape: &[i64]) -> PointType {
    PointType { shape: shape.to_vec(), element: ElementType::F32 }
}
/// `tensor<...xf64>`.
pub fn f64s(shape: &[i64]) -> PointType {
    PointType { shape: shape.to_vec(), element: ElementType::F64 }
}
/// `tensor<...xi32>`.
pub fn i32s(shape: &[i64]) -> PointType {
    PointType { shape: shape.to_vec(), element: ElementType::I32 }
}
/// `tensor<...xi64>`.
pub fn i64s(shape: &[i64]) -> PointType {
    PointType { shape: shape.to_vec(), element: ElementType::I64 }
}

/// A map of the program's dimensions and bounds to `results` (renumbered
/// to a reader's domain when the program is built).
pub(crate) fn global_map(results: Vec<AffineExpr>) -> AffineMap {
    let (mut dims, mut symbols) = (Vec::new(), Vec::new());
    results.iter().for_each(|e| numbers(e, &mut dims, &mut symbols));
    let extent = |numbers: Vec<usize>| numbers.into_iter().max().map_or(0, |n| n + 1);
    AffineMap { num_dims: extent(dims), num_symbols: extent(symbols), results }
}

/// The dimension and symbol numbers `e` names, each once.
pub(crate) fn numbers(e: &AffineExpr, dims: &mut Vec<usize>, symbols: &mut Vec<usize>) {
    match e {
        AffineExpr::Dim(d) if !dims.contains(d) => dims.push(*d),
        AffineExpr::Symbol(s) if !symbols.contains(s) => symbols.push(*s),
        AffineExpr::Dim(_) | AffineExpr::Symbol(_) | AffineExpr::Constant(_) => {}
        AffineExpr::Add(a, b)
        | AffineExpr::Mul(a, b)
        | AffineExpr::Mod(a, b)
        | AffineExpr::FloorDiv(a, b)
        | AffineExpr::CeilDiv(a, b) => {
            numbers(a, dims, symbols);
            numbers(b, dims, symbols);
        }
    }
}

/// The compiler's constant of type `ty` with `values`, and what is wrong
/// with them: a float an integer type cannot hold, or a count that is not
/// the type's.
fn constant(values: &Values, ty: &PointType) -> (NodeKind, Vec<String>) {
    let mut why = Vec::new();
    if let Some(bad) = inexact_integer(values, ty.element) {
        why.push(format!(
            "'temporal.constant': the number {bad} is not a value of {} (a float given where an integer \
             is meant: NaN, an infinity, a fraction or one out of range would be changed)",
            ty.element.mlir()
        ));
    }
    // (A negative or dynamic size is reported with the node's shape.)
    let n = if ty.shape.iter().all(|&d| d >= 0) { ty.num_elements() } else { 0 };
    let float = ty.element.is_float();
    let (floats, integers): (Vec<f64>, Vec<i64>) = match values {
        Values::Floats(v) => (v.clone(), Vec::new()),
        Values::Integers(v) => (v.iter().map(|&x| x as f64).collect(), v.clone()),
        Values::SplatFloat(v) => (vec![*v; n], Vec::new()),
        Values::SplatInteger(v) if float => (vec![*v as f64; n], Vec::new()),
        Values::SplatInteger(v) => (vec![*v as f64; n], vec![*v; n]),
    };
    let integers = if float { Vec::new() } else { integers };
    // (`floats` holds every element, integers converted.)
    if floats.len() != n {
        why.push(format!("'temporal.constant': {} values for a value of shape {:?}", floats.len(), ty.shape));
    }
    (NodeKind::Constant { text: Arc::from(""), values: Arc::from(floats), integers: Arc::from(integers) }, why)
}

/// The first of `values` that is not exactly a value of the integer type
/// `element` (none for a float type or integer values).
fn inexact_integer(values: &Values, element: ElementType) -> Option<f64> {
    // The range, its upper end excluded (2^31 and 2^63 are exact floats).
    let (low, high) = match element {
        ElementType::I1 => (0.0, 2.0),
        ElementType::I32 => (-(2f64.powi(31)), 2f64.powi(31)),
        ElementType::I64 => (-(2f64.powi(63)), 2f64.powi(63)),
        ElementType::F32 | ElementType::F64 => return None,
    };
    let floats: &[f64] = match values {
        Values::Floats(values) => values,
        Values::SplatFloat(v) => std::slice::from_ref(v),
        Values::Integers(_) | Values::SplatInteger(_) => return None,
    };
    floats.iter().copied().find(|&v| !(v.fract() == 0.0 && v >= low && v < high))
}
