//! Symbolic index expressions and branch conditions.
//!
//! An [`Index`] is an affine expression over dimension variables (`t`) and
//! bounds (`T`): `t - 1`, `T - 1 - t`, `t % 2`, `t / 2` (floor division),
//! constants. A [`Cond`] is a conjunction of affine (in)equalities on them.
//! Both print in MLIR's affine syntax with the program's own names, and
//! become the compiler's affine expressions ([`AffineExpr`]) over the
//! program's dimensions by number: variables as dims, bounds as symbols.

use std::fmt;
use std::ops::{Add, Mul, Neg, Rem, Sub};
use tempo_passes::affine::AffineExpr;

/// A dimension's variable or bound as index expressions name it: its name,
/// as printed, and its number in its program (dimensions in declaration
/// order; a bound takes the number of the first dimension it bounds), as
/// the compiler's maps name it. Made by [`crate::Dim`]'s handles.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DimRef {
    pub(crate) name: String,
    pub(crate) number: usize,
    /// The program's identity ([`crate::Program`]'s).
    pub(crate) program: u64,
}

impl DimRef {
    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// An affine index expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Index {
    /// A dimension variable.
    Var(DimRef),
    /// A bound symbol.
    Bound(DimRef),
    Const(i64),
    Add(Box<Index>, Box<Index>),
    /// Product with a constant.
    Scale(Box<Index>, i64),
    Mod(Box<Index>, i64),
    FloorDiv(Box<Index>, i64),
}

impl Index {
    /// `self mod k` (non-negative for k > 0).
    pub fn modulo(self, k: i64) -> Index {
        Index::Mod(Box::new(self), k)
    }
    /// `floor(self / k)`.
    pub fn floordiv(self, k: i64) -> Index {
        Index::FloorDiv(Box::new(self), k)
    }
    /// `self == other`.
    pub fn eq(self, other: impl Into<Index>) -> Cond {
        Cond::of(self - other.into(), true)
    }
    /// `self >= other`.
    pub fn ge(self, other: impl Into<Index>) -> Cond {
        Cond::of(self - other.into(), false)
    }
    /// `self > other`.
    pub fn gt(self, other: impl Into<Index>) -> Cond {
        Cond::of(self - other.into() - 1, false)
    }
    /// `self <= other`.
    pub fn le(self, other: impl Into<Index>) -> Cond {
        Cond::of(other.into() - self, false)
    }
    /// `self < other`.
    pub fn lt(self, other: impl Into<Index>) -> Cond {
        Cond::of(other.into() - self - 1, false)
    }

    /// The dimensions (variables and bounds) the expression names.
    pub(crate) fn dims<'e>(&'e self, out: &mut Vec<&'e DimRef>) {
        match self {
            Index::Var(d) | Index::Bound(d) => out.push(d),
            Index::Const(_) => {}
            Index::Add(a, b) => {
                a.dims(out);
                b.dims(out);
            }
            Index::Scale(a, _) | Index::Mod(a, _) | Index::FloorDiv(a, _) => a.dims(out),
        }
    }

    /// The variables the expression uses.
    pub fn vars(&self, out: &mut Vec<String>) {
        match self {
            Index::Var(v) => out.push(v.name.clone()),
            Index::Bound(_) | Index::Const(_) => {}
            Index::Add(a, b) => {
                a.vars(out);
                b.vars(out);
            }
            Index::Scale(a, _) | Index::Mod(a, _) | Index::FloorDiv(a, _) => a.vars(out),
        }
    }
}

impl Index {
    /// The compiler's form over the program's dimensions (`Dim(number)`)
    /// and bounds (`Symbol(number)`), built as MLIR's parser builds the
    /// printed form: `sum(coefficient * atom) + constant`, equal atoms
    /// merged, in order of first appearance.
    pub(crate) fn affine(&self) -> AffineExpr {
        let mut terms: Vec<(&Index, i64)> = Vec::new();
        let mut constant = 0;
        self.atoms(1, &mut terms, &mut constant);
        let mut sum: Option<AffineExpr> = None;
        for (atom, k) in terms.into_iter().filter(|(_, k)| *k != 0) {
            let atom = match atom {
                Index::Var(v) => AffineExpr::Dim(v.number),
                Index::Bound(b) => AffineExpr::Symbol(b.number),
                Index::Mod(a, k) => AffineExpr::Mod(Box::new(a.affine()), Box::new(AffineExpr::Constant(*k))),
                Index::FloorDiv(a, k) => AffineExpr::FloorDiv(Box::new(a.affine()), Box::new(AffineExpr::Constant(*k))),
                _ => unreachable!("atoms are variables, bounds, mod and floordiv"),
            };
            let term = if k == 1 { atom } else { AffineExpr::Mul(Box::new(atom), Box::new(AffineExpr::Constant(k))) };
            sum = Some(match sum {
                None => term,
                Some(s) => AffineExpr::Add(Box::new(s), Box::new(term)),
            });
        }
        match (sum, constant) {
            (None, c) => AffineExpr::Constant(c),
            (Some(s), 0) => s,
            (Some(s), c) => AffineExpr::Add(Box::new(s), Box::new(AffineExpr::Constant(c))),
        }
    }

    /// `self * scale` as atoms with coefficients (equal atoms merged) and a
    /// constant.
    fn atoms<'e>(&'e self, scale: i64, terms: &mut Vec<(&'e Index, i64)>, constant: &mut i64) {
        match self {
            Index::Var(_) | Index::Bound(_) | Index::Mod(..) | Index::FloorDiv(..) => {
                match terms.iter_mut().find(|(a, _)| *a == self) {
                    Some((_, c)) => *c += scale,
                    None => terms.push((self, scale)),
                }
            }
            Index::Const(c) => *constant += scale * c,
            Index::Add(a, b) => {
                a.atoms(scale, terms, constant);
                b.atoms(scale, terms, constant);
            }
            Index::Scale(a, k) => a.atoms(scale * k, terms, constant),
        }
    }
}

/// `a`, parenthesized unless it prints as one token.
fn operand(a: &Index) -> String {
    let text = a.to_string();
    if text.contains(' ') { format!("({text})") } else { text }
}

/// Prints in MLIR affine syntax, simplified: `t - 1`, `-t + T - 1`, `(t mod 2)`.
impl fmt::Display for Index {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let mut terms = Vec::new();
        let mut constant = 0;
        self.atoms(1, &mut terms, &mut constant);
        let mut first = true;
        for (atom, k) in terms.into_iter().filter(|(_, k)| *k != 0) {
            let atom = match atom {
                Index::Var(v) | Index::Bound(v) => v.name.clone(),
                Index::Mod(a, k) => format!("({} mod {k})", operand(a)),
                Index::FloorDiv(a, k) => format!("({} floordiv {k})", operand(a)),
                _ => unreachable!("atoms are variables, bounds, mod and floordiv"),
            };
            let sign = if k < 0 { "-" } else { "+" };
            match (first, k.abs()) {
                (true, 1) => write!(f, "{}{atom}", if k < 0 { "-" } else { "" })?,
                (true, m) => write!(f, "{}{atom} * {m}", if k < 0 { "-" } else { "" })?,
                (false, 1) => write!(f, " {sign} {atom}")?,
                (false, m) => write!(f, " {sign} {atom} * {m}")?,
            }
            first = false;
        }
        match (first, constant) {
            (true, c) => write!(f, "{c}"),
            (false, 0) => Ok(()),
            (false, c) => write!(f, " {} {}", if c < 0 { "-" } else { "+" }, c.abs()),
        }
    }
}

impl From<i64> for Index {
    fn from(c: i64) -> Self {
        Index::Const(c)
    }
}

impl From<&Index> for Index {
    fn from(i: &Index) -> Self {
        i.clone()
    }
}

impl<R: Into<Index>> Add<R> for Index {
    type Output = Index;
    fn add(self, rhs: R) -> Index {
        Index::Add(Box::new(self), Box::new(rhs.into()))
    }
}

impl<R: Into<Index>> Sub<R> for Index {
    type Output = Index;
    fn sub(self, rhs: R) -> Index {
        Index::Add(Box::new(self), Box::new(Index::Scale(Box::new(rhs.into()), -1)))
    }
}

impl Sub<Index> for i64 {
    type Output = Index;
    fn sub(self, rhs: Index) -> Index {
        Index::Const(self) - rhs
    }
}

impl Add<Index> for i64 {
    type Output = Index;
    fn add(self, rhs: Index) -> Index {
        Index::Const(self) + rhs
    }
}

impl Mul<i64> for Index {
    type Output = Index;
    fn mul(self, k: i64) -> Index {
        Index::Scale(Box::new(self), k)
    }
}

impl Neg for Index {
    type Output = Index;
    fn neg(self) -> Index {
        self * -1
    }
}

impl Rem<i64> for Index {
    type Output = Index;
    fn rem(self, k: i64) -> Index {
        self.modulo(k)
    }
}

/// A branch condition: a conjunction of `expr == 0` / `expr >= 0`. The empty
/// conjunction ([`Cond::always`]) holds everywhere.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cond {
    constraints: Vec<(Index, bool)>,
}

impl Cond {
    /// Holds everywhere ("otherwise").
    pub fn always() -> Cond {
        Cond::default()
    }
    fn of(expr: Index, is_equality: bool) -> Cond {
        Cond { constraints: vec![(expr, is_equality)] }
    }
    /// Both conditions.
    pub fn and(mut self, other: Cond) -> Cond {
        self.constraints.extend(other.constraints);
        self
    }
    /// The constraints in the compiler's form over the program's
    /// dimensions and bounds ([`Index::affine`]), with whether each is an
    /// equality.
    pub(crate) fn affine(&self) -> Vec<(AffineExpr, bool)> {
        self.constraints.iter().map(|(e, is_equality)| (e.affine(), *is_equality)).collect()
    }

    /// The dimensions the condition names.
    pub(crate) fn dims(&self) -> Vec<&DimRef> {
        let mut out = Vec::new();
        self.constraints.iter().for_each(|(e, _)| e.dims(&mut out));
        out
    }
}
