//! Owned Rust mirrors of MLIR affine expressions, maps and integer sets,
//! read through the C API, with exact integer evaluation (MLIR semantics:
//! `floordiv`/`ceildiv` round toward -inf/+inf, `mod` is non-negative for a
//! positive divisor) and printing with the program's own variable names.

use melior::ir::{Attribute, attribute::AttributeLike};
use mlir_sys::{
    MlirAffineExpr, mlirAffineBinaryOpExprGetLHS, mlirAffineBinaryOpExprGetRHS, mlirAffineConstantExprGetValue,
    mlirAffineDimExprGetPosition, mlirAffineExprIsAAdd, mlirAffineExprIsACeilDiv, mlirAffineExprIsAConstant,
    mlirAffineExprIsADim, mlirAffineExprIsAFloorDiv, mlirAffineExprIsAMod, mlirAffineExprIsAMul,
    mlirAffineExprIsASymbol, mlirAffineMapAttrGetValue, mlirAffineMapGetNumDims, mlirAffineMapGetNumResults,
    mlirAffineMapGetNumSymbols, mlirAffineMapGetResult, mlirAffineSymbolExprGetPosition, mlirAttributeIsAAffineMap,
    mlirAttributeIsAIntegerSet, mlirIntegerSetAttrGetValue, mlirIntegerSetGetConstraint,
    mlirIntegerSetGetNumConstraints, mlirIntegerSetGetNumDims, mlirIntegerSetGetNumSymbols,
    mlirIntegerSetIsConstraintEq,
};
use std::fmt;

/// An affine expression over dims `d_i` (the reader's domain variables) and
/// symbols `s_i` (the program's bounds).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AffineExpr {
    Dim(usize),
    Symbol(usize),
    Constant(i64),
    Add(Box<AffineExpr>, Box<AffineExpr>),
    Mul(Box<AffineExpr>, Box<AffineExpr>),
    Mod(Box<AffineExpr>, Box<AffineExpr>),
    FloorDiv(Box<AffineExpr>, Box<AffineExpr>),
    CeilDiv(Box<AffineExpr>, Box<AffineExpr>),
}

/// Evaluation failed: division or modulo by a non-positive value, or overflow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError(pub String);

impl AffineExpr {
    fn from_raw(raw: MlirAffineExpr) -> Self {
        unsafe {
            if mlirAffineExprIsADim(raw) {
                return Self::Dim(mlirAffineDimExprGetPosition(raw) as usize);
            }
            if mlirAffineExprIsASymbol(raw) {
                return Self::Symbol(mlirAffineSymbolExprGetPosition(raw) as usize);
            }
            if mlirAffineExprIsAConstant(raw) {
                return Self::Constant(mlirAffineConstantExprGetValue(raw));
            }
            let lhs = Box::new(Self::from_raw(mlirAffineBinaryOpExprGetLHS(raw)));
            let rhs = Box::new(Self::from_raw(mlirAffineBinaryOpExprGetRHS(raw)));
            if mlirAffineExprIsAAdd(raw) {
                Self::Add(lhs, rhs)
            } else if mlirAffineExprIsAMul(raw) {
                Self::Mul(lhs, rhs)
            } else if mlirAffineExprIsAMod(raw) {
                Self::Mod(lhs, rhs)
            } else if mlirAffineExprIsAFloorDiv(raw) {
                Self::FloorDiv(lhs, rhs)
            } else {
                debug_assert!(mlirAffineExprIsACeilDiv(raw));
                Self::CeilDiv(lhs, rhs)
            }
        }
    }

    /// Whether the expression names symbol `s`.
    pub fn uses_symbol(&self, s: usize) -> bool {
        match self {
            Self::Symbol(k) => *k == s,
            Self::Dim(_) | Self::Constant(_) => false,
            Self::Add(a, b) | Self::Mul(a, b) | Self::Mod(a, b) | Self::FloorDiv(a, b) | Self::CeilDiv(a, b) => {
                a.uses_symbol(s) || b.uses_symbol(s)
            }
        }
    }

    /// Whether the expression names a dimension variable.
    pub fn uses_dims(&self) -> bool {
        match self {
            Self::Dim(_) => true,
            Self::Symbol(_) | Self::Constant(_) => false,
            Self::Add(a, b) | Self::Mul(a, b) | Self::Mod(a, b) | Self::FloorDiv(a, b) | Self::CeilDiv(a, b) => {
                a.uses_dims() || b.uses_dims()
            }
        }
    }

    /// Evaluates with the given dim and symbol values.
    pub fn eval(&self, dims: &[i64], symbols: &[i64]) -> Result<i64, EvalError> {
        let overflow = || EvalError("integer overflow in index expression".into());
        Ok(match self {
            Self::Dim(i) => dims[*i],
            Self::Symbol(i) => symbols[*i],
            Self::Constant(c) => *c,
            Self::Add(a, b) => a.eval(dims, symbols)?.checked_add(b.eval(dims, symbols)?).ok_or_else(overflow)?,
            Self::Mul(a, b) => a.eval(dims, symbols)?.checked_mul(b.eval(dims, symbols)?).ok_or_else(overflow)?,
            Self::Mod(a, b) | Self::FloorDiv(a, b) | Self::CeilDiv(a, b) => {
                let (x, y) = (a.eval(dims, symbols)?, b.eval(dims, symbols)?);
                if y <= 0 {
                    return Err(EvalError(format!("division by non-positive value {y}")));
                }
                match self {
                    Self::Mod(..) => x.rem_euclid(y),
                    Self::FloorDiv(..) => x.div_euclid(y),
                    _ => -((-x).div_euclid(y)),
                }
            }
        })
    }

    /// The expression with every dimension `d` replaced by `dims[d]`.
    pub fn substitute_dims(&self, dims: &[AffineExpr]) -> AffineExpr {
        let go = |x: &AffineExpr| Box::new(x.substitute_dims(dims));
        match self {
            Self::Dim(d) => dims[*d].clone(),
            Self::Symbol(_) | Self::Constant(_) => self.clone(),
            Self::Add(a, b) => Self::Add(go(a), go(b)),
            Self::Mul(a, b) => Self::Mul(go(a), go(b)),
            Self::Mod(a, b) => Self::Mod(go(a), go(b)),
            Self::FloorDiv(a, b) => Self::FloorDiv(go(a), go(b)),
            Self::CeilDiv(a, b) => Self::CeilDiv(go(a), go(b)),
        }
    }

    /// If the expression is `d_dim + c` (c may be 0 or negative), returns `c`.
    pub fn offset_from_dim(&self, dim: usize) -> Option<i64> {
        let linear = self.linear()?;
        let (coefficients, symbols, constant) = linear;
        let only_dim = coefficients.iter().enumerate().all(|(i, &c)| if i == dim { c == 1 } else { c == 0 });
        (only_dim && symbols.iter().all(|&c| c == 0) && coefficients.len() > dim).then_some(constant)
    }

    /// If the expression is a constant, returns it.
    pub fn as_constant(&self) -> Option<i64> {
        let (dims, symbols, constant) = self.linear()?;
        (dims.iter().all(|&c| c == 0) && symbols.iter().all(|&c| c == 0)).then_some(constant)
    }

    /// A `mod`, `floordiv` or `ceildiv` whose right-hand side is not a
    /// positive constant (what the lowering to loops supports), or a
    /// constant past ±2^62 (near the i64 limits the generated code cannot
    /// even be printed and re-parsed), as text.
    pub fn unsupported_division(&self) -> Option<String> {
        match self {
            Self::Constant(c) if c.unsigned_abs() > MAX_AFFINE_CONSTANT => {
                Some(format!("the constant {c} is out of range (affine constants stay within ±2^62)"))
            }
            Self::Dim(_) | Self::Symbol(_) | Self::Constant(_) => None,
            Self::Add(a, b) | Self::Mul(a, b) => a.unsupported_division().or_else(|| b.unsupported_division()),
            Self::Mod(a, b) | Self::FloorDiv(a, b) | Self::CeilDiv(a, b) => {
                let op = match self {
                    Self::Mod(..) => "mod",
                    Self::FloorDiv(..) => "floordiv",
                    _ => "ceildiv",
                };
                match b.as_constant() {
                    Some(c) if c > 0 => a.unsupported_division(),
                    Some(c) => Some(format!("{op} by {c}")),
                    None => Some(format!("{op} by a non-constant")),
                }
            }
        }
    }

    /// The expression as `sum(a_i d_i) + sum(b_j s_j) + c` when it is linear
    /// (no mod/div, products only with constants).
    pub fn linear(&self) -> Option<(Vec<i64>, Vec<i64>, i64)> {
        fn add(into: &mut Vec<i64>, from: &[i64], scale: i64) {
            if into.len() < from.len() {
                into.resize(from.len(), 0);
            }
            for (i, v) in from.iter().enumerate() {
                into[i] += v * scale;
            }
        }
        match self {
            Self::Dim(i) => {
                let mut d = vec![0; i + 1];
                d[*i] = 1;
                Some((d, vec![], 0))
            }
            Self::Symbol(i) => {
                let mut s = vec![0; i + 1];
                s[*i] = 1;
                Some((vec![], s, 0))
            }
            Self::Constant(c) => Some((vec![], vec![], *c)),
            Self::Add(a, b) => {
                let (mut d, mut s, c) = a.linear()?;
                let (d2, s2, c2) = b.linear()?;
                add(&mut d, &d2, 1);
                add(&mut s, &s2, 1);
                Some((d, s, c + c2))
            }
            Self::Mul(a, b) => {
                let (k, other) = match (a.as_constant_shallow(), b.as_constant_shallow()) {
                    (Some(k), _) => (k, b),
                    (_, Some(k)) => (k, a),
                    _ => return None,
                };
                let (d, s, c) = other.linear()?;
                let mut d2 = vec![];
                let mut s2 = vec![];
                add(&mut d2, &d, k);
                add(&mut s2, &s, k);
                Some((d2, s2, c * k))
            }
            _ => None,
        }
    }

    fn as_constant_shallow(&self) -> Option<i64> {
        match self {
            Self::Constant(c) => Some(*c),
            _ => None,
        }
    }

    /// Prints with the given names for dims and symbols.
    pub fn display<'a>(&'a self, dims: &'a [String], symbols: &'a [String]) -> impl fmt::Display + 'a {
        Named { expr: self, dims, symbols }
    }
}

struct Named<'a> {
    expr: &'a AffineExpr,
    dims: &'a [String],
    symbols: &'a [String],
}

impl<'a> Named<'a> {
    fn with(&self, expr: &'a AffineExpr) -> Named<'a> {
        Named { expr, dims: self.dims, symbols: self.symbols }
    }
    /// Prints `expr`, parenthesized unless it is atomic.
    fn atom(&self, expr: &'a AffineExpr, f: &mut fmt::Formatter) -> fmt::Result {
        if matches!(expr, AffineExpr::Dim(_) | AffineExpr::Symbol(_) | AffineExpr::Constant(_)) {
            write!(f, "{}", self.with(expr))
        } else {
            write!(f, "({})", self.with(expr))
        }
    }
}

impl fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.expr {
            AffineExpr::Dim(i) => match self.dims.get(*i) {
                Some(name) => write!(f, "{name}"),
                None => write!(f, "d{i}"),
            },
            AffineExpr::Symbol(i) => match self.symbols.get(*i) {
                Some(name) => write!(f, "{name}"),
                None => write!(f, "s{i}"),
            },
            AffineExpr::Constant(c) => write!(f, "{c}"),
            AffineExpr::Add(a, b) => match b.as_ref() {
                AffineExpr::Constant(c) if *c < 0 => write!(f, "{} - {}", self.with(a), -c),
                AffineExpr::Mul(x, y) if matches!(y.as_ref(), AffineExpr::Constant(-1)) => {
                    write!(f, "{} - ", self.with(a))?;
                    self.atom(x, f)
                }
                AffineExpr::Mul(x, y) if matches!(x.as_ref(), AffineExpr::Constant(-1)) => {
                    write!(f, "{} - ", self.with(a))?;
                    self.atom(y, f)
                }
                _ => write!(f, "{} + {}", self.with(a), self.with(b)),
            },
            AffineExpr::Mul(a, b) => {
                if matches!(b.as_ref(), AffineExpr::Constant(-1)) {
                    write!(f, "-")?;
                    self.atom(a, f)
                } else {
                    self.atom(a, f)?;
                    write!(f, " * ")?;
                    self.atom(b, f)
                }
            }
            AffineExpr::Mod(a, b) | AffineExpr::FloorDiv(a, b) | AffineExpr::CeilDiv(a, b) => {
                let op = match self.expr {
                    AffineExpr::Mod(..) => "mod",
                    AffineExpr::FloorDiv(..) => "floordiv",
                    _ => "ceildiv",
                };
                self.atom(a, f)?;
                write!(f, " {op} ")?;
                self.atom(b, f)
            }
        }
    }
}

/// An affine map: one expression per result.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AffineMap {
    pub num_dims: usize,
    pub num_symbols: usize,
    pub results: Vec<AffineExpr>,
}

impl AffineMap {
    /// Reads an `affine_map` attribute; `None` if it is not one.
    pub fn from_attribute(attribute: Attribute) -> Option<Self> {
        unsafe {
            if !mlirAttributeIsAAffineMap(attribute.to_raw()) {
                return None;
            }
            let map = mlirAffineMapAttrGetValue(attribute.to_raw());
            Some(Self {
                num_dims: mlirAffineMapGetNumDims(map) as usize,
                num_symbols: mlirAffineMapGetNumSymbols(map) as usize,
                results: (0..mlirAffineMapGetNumResults(map))
                    .map(|i| AffineExpr::from_raw(mlirAffineMapGetResult(map, i)))
                    .collect(),
            })
        }
    }

    /// Evaluates every result.
    pub fn eval(&self, dims: &[i64], symbols: &[i64]) -> Result<Vec<i64>, EvalError> {
        self.results.iter().map(|e| e.eval(dims, symbols)).collect()
    }
}

/// The interval `[lo, hi)` one source dimension of a range read selects at
/// a point, and whether it is a range (kept as a dimension of the value):
/// `[max(lower), min(upper))` for a range, the point `min(max(lower),
/// caps...)` (as `[p, p + 1)`) where `upper` has no results.
pub fn coordinate_interval(
    lower: &AffineMap,
    upper: &AffineMap,
    cap: &AffineMap,
    dims: &[i64],
    symbols: &[i64],
) -> Result<(i64, i64, bool), EvalError> {
    let lo = lower.eval(dims, symbols)?.into_iter().max().expect("verified non-empty");
    if upper.results.is_empty() {
        let p = cap.eval(dims, symbols)?.into_iter().fold(lo, i64::min);
        return Ok((p, p + 1, false));
    }
    let hi = upper.eval(dims, symbols)?.into_iter().min().expect("non-empty");
    Ok((lo, hi, true))
}

/// One constraint of an integer set: `expr == 0` or `expr >= 0`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Constraint {
    pub expr: AffineExpr,
    pub is_equality: bool,
}

impl Constraint {
    /// `expr >= 0`.
    pub fn at_least_zero(expr: AffineExpr) -> Self {
        Constraint { expr, is_equality: false }
    }

    /// `expr == 0`.
    pub fn equal_zero(expr: AffineExpr) -> Self {
        Constraint { expr, is_equality: true }
    }
}

/// `e + c` (`e` itself for `c = 0`).
impl std::ops::Add<i64> for AffineExpr {
    type Output = AffineExpr;
    fn add(self, c: i64) -> AffineExpr {
        if c == 0 { self } else { AffineExpr::Add(Box::new(self), Box::new(AffineExpr::Constant(c))) }
    }
}

/// `e - f`.
impl std::ops::Sub<AffineExpr> for AffineExpr {
    type Output = AffineExpr;
    fn sub(self, f: AffineExpr) -> AffineExpr {
        AffineExpr::Add(Box::new(self), Box::new(AffineExpr::Mul(Box::new(f), Box::new(AffineExpr::Constant(-1)))))
    }
}

/// `e mod n`.
impl std::ops::Rem<i64> for AffineExpr {
    type Output = AffineExpr;
    fn rem(self, n: i64) -> AffineExpr {
        AffineExpr::Mod(Box::new(self), Box::new(AffineExpr::Constant(n)))
    }
}

/// An integer set (conjunction of constraints); no constraints = always true.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IntegerSet {
    pub num_dims: usize,
    pub num_symbols: usize,
    pub constraints: Vec<Constraint>,
}

/// The largest magnitude of a constant in an affine expression.
pub const MAX_AFFINE_CONSTANT: u64 = 1 << 62;

/// The first unsupported division or constant in any of `exprs` (see
/// [`AffineExpr::unsupported_division`]), as an error message.
pub fn check_divisions<'a>(exprs: impl IntoIterator<Item = &'a AffineExpr>) -> Result<(), String> {
    match exprs.into_iter().find_map(AffineExpr::unsupported_division) {
        Some(what) if what.starts_with("the constant") => Err(what),
        Some(what) => Err(format!("{what}: mod, floordiv and ceildiv need a positive constant on the right")),
        None => Ok(()),
    }
}

impl IntegerSet {
    /// Reads an `affine_set` attribute; `None` if it is not one.
    pub fn from_attribute(attribute: Attribute) -> Option<Self> {
        unsafe {
            if !mlirAttributeIsAIntegerSet(attribute.to_raw()) {
                return None;
            }
            let set = mlirIntegerSetAttrGetValue(attribute.to_raw());
            let constraints = (0..mlirIntegerSetGetNumConstraints(set))
                .map(|i| Constraint {
                    expr: AffineExpr::from_raw(mlirIntegerSetGetConstraint(set, i)),
                    is_equality: mlirIntegerSetIsConstraintEq(set, i),
                })
                // MLIR prints the universe set as `(0 == 0)`: drop trivially true ones.
                .filter(|c| c.expr.as_constant() != Some(0) || !c.is_equality)
                .collect();
            Some(Self {
                num_dims: mlirIntegerSetGetNumDims(set) as usize,
                num_symbols: mlirIntegerSetGetNumSymbols(set) as usize,
                constraints,
            })
        }
    }

    /// Whether the set has no constraints (holds everywhere).
    pub fn is_universe(&self) -> bool {
        self.constraints.is_empty()
    }

    /// Whether the point satisfies every constraint.
    pub fn contains(&self, dims: &[i64], symbols: &[i64]) -> Result<bool, EvalError> {
        for c in &self.constraints {
            let v = c.expr.eval(dims, symbols)?;
            if (c.is_equality && v != 0) || (!c.is_equality && v < 0) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Prints the constraints with the program's names (`t == 0 and ...`).
    pub fn display(&self, dims: &[String], symbols: &[String]) -> String {
        if self.is_universe() {
            return "otherwise".into();
        }
        self.constraints
            .iter()
            .map(|c| format!("{} {} 0", c.expr.display(dims, symbols), if c.is_equality { "==" } else { ">=" }))
            .collect::<Vec<_>>()
            .join(" and ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(i: usize) -> Box<AffineExpr> {
        Box::new(AffineExpr::Dim(i))
    }
    fn c(v: i64) -> Box<AffineExpr> {
        Box::new(AffineExpr::Constant(v))
    }

    #[test]
    fn evaluation_follows_mlir_rounding() {
        assert_eq!(AffineExpr::Mod(d(0), c(3)).eval(&[-1], &[]), Ok(2));
        assert_eq!(AffineExpr::FloorDiv(d(0), c(2)).eval(&[-3], &[]), Ok(-2));
        assert_eq!(AffineExpr::CeilDiv(d(0), c(2)).eval(&[-3], &[]), Ok(-1));
        assert_eq!(AffineExpr::CeilDiv(d(0), c(2)).eval(&[3], &[]), Ok(2));
        assert!(AffineExpr::Mod(d(0), c(0)).eval(&[3], &[]).is_err());
    }

    #[test]
    fn offsets_and_names() {
        let e = AffineExpr::Add(d(0), c(-2));
        assert_eq!(e.offset_from_dim(0), Some(-2));
        assert_eq!(e.offset_from_dim(1), None);
        let names = ["t".to_string()];
        assert_eq!(e.display(&names, &[]).to_string(), "t - 2");
        assert_eq!(AffineExpr::Dim(0).offset_from_dim(0), Some(0));
        let sym = AffineExpr::Add(Box::new(AffineExpr::Symbol(0)), c(-1));
        assert_eq!(sym.offset_from_dim(0), None);
        assert_eq!(sym.display(&names, &["T".to_string()]).to_string(), "T - 1");
    }
}
