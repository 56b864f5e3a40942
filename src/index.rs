//! Symbolic index expressions and branch conditions.
//!
//! An [`Index`] is an affine expression over dimension variables (`t`) and
//! bounds (`T`): `t - 1`, `T - 1 - t`, `t % 2`, `t / 2` (floor division),
//! constants. A [`Cond`] is a conjunction of affine (in)equalities on them.
//! Both print in MLIR's affine syntax with the program's own names.

use std::fmt;
use std::ops::{Add, Mul, Neg, Rem, Sub};

/// An affine index expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Index {
    /// A dimension variable, by name.
    Var(String),
    /// A bound symbol, by name.
    Bound(String),
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

    /// The variables the expression uses.
    pub fn vars(&self, out: &mut Vec<String>) {
        match self {
            Index::Var(v) => out.push(v.clone()),
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
    /// The expression as `sum(coefficient * atom) + constant`, where atoms are
    /// variables, bounds and `mod`/`floordiv` subexpressions (printed).
    fn linear(&self, scale: i64, terms: &mut Vec<(String, i64)>, constant: &mut i64) {
        let mut add = |atom: String, k: i64| match terms.iter_mut().find(|(a, _)| *a == atom) {
            Some((_, c)) => *c += k,
            None => terms.push((atom, k)),
        };
        match self {
            Index::Var(v) | Index::Bound(v) => add(v.clone(), scale),
            Index::Const(c) => *constant += scale * c,
            Index::Add(a, b) => {
                a.linear(scale, terms, constant);
                b.linear(scale, terms, constant);
            }
            Index::Scale(a, k) => a.linear(scale * k, terms, constant),
            Index::Mod(a, k) => add(format!("({} mod {k})", operand(a)), scale),
            Index::FloorDiv(a, k) => add(format!("({} floordiv {k})", operand(a)), scale),
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
        self.linear(1, &mut terms, &mut constant);
        let mut first = true;
        for (atom, k) in terms.into_iter().filter(|(_, k)| *k != 0) {
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
    /// The constraints: an expression and whether it is `== 0` (else
    /// `>= 0`).
    pub(crate) fn constraints(&self) -> &[(Index, bool)] {
        &self.constraints
    }
    pub(crate) fn vars(&self, out: &mut Vec<String>) {
        for (e, _) in &self.constraints {
            e.vars(out);
        }
    }
}
