//! Which reader points read a source point, where branch conditions cut
//! them: disjoint pieces of the varying reader dimension, each with its
//! conditions on `q` and the bounds it keeps.

use crate::affine::{AffineExpr, Constraint};
use crate::program::Branch;
use crate::temporal_autodiff::pullback;

pub(super) fn add(a: AffineExpr, b: AffineExpr) -> AffineExpr {
    AffineExpr::Add(Box::new(a), Box::new(b))
}

pub(super) fn sub(a: AffineExpr, b: AffineExpr) -> AffineExpr {
    crate::temporal_autodiff::sub(a, b)
}

pub(super) fn neg(a: AffineExpr) -> AffineExpr {
    AffineExpr::Mul(Box::new(a), Box::new(AffineExpr::Constant(-1)))
}

/// One piece of the reader points where a branch defines the reader: the
/// conditions on `q`, and the bounds the varying reader dimension
/// (`Dim(var)`) must keep (lower bounds, exclusive upper bounds).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Piece {
    pub(super) conditions: Vec<Constraint>,
    pub(super) los: Vec<AffineExpr>,
    pub(super) his: Vec<AffineExpr>,
}

impl Piece {
    /// Adds `c` (over `q` and `Dim(var)`); an error where the varying
    /// dimension enters with a coefficient other than 1 or -1 or through a
    /// division.
    fn and(mut self, c: &Constraint, var: usize) -> Result<Piece, String> {
        let (coefficient, rest) = match c.expr.linear() {
            // rest = e - a * r, rebuilt from its coefficients.
            Some((dims, symbols, constant)) => {
                let mut rest = AffineExpr::Constant(constant);
                for (d, &k) in dims.iter().enumerate() {
                    if k != 0 && d != var {
                        rest =
                            add(rest, AffineExpr::Mul(Box::new(AffineExpr::Dim(d)), Box::new(AffineExpr::Constant(k))));
                    }
                }
                for (j, &k) in symbols.iter().enumerate() {
                    if k != 0 {
                        rest = add(
                            rest,
                            AffineExpr::Mul(Box::new(AffineExpr::Symbol(j)), Box::new(AffineExpr::Constant(k))),
                        );
                    }
                }
                (dims.get(var).copied().unwrap_or(0), rest)
            }
            None if !mentions(&c.expr, var) => (0, c.expr.clone()),
            None => return Err("a branch condition with mod or division of the reader's varying dimension".into()),
        };
        match (coefficient, c.is_equality) {
            (0, _) => self.conditions.push(c.clone()),
            // r + rest >= 0: r >= -rest.
            (1, false) => self.los.push(neg(rest)),
            // rest - r >= 0: r < rest + 1.
            (-1, false) => self.his.push(add(rest, AffineExpr::Constant(1))),
            (1, true) => {
                self.los.push(neg(rest.clone()));
                self.his.push(add(neg(rest), AffineExpr::Constant(1)));
            }
            (-1, true) => {
                self.los.push(rest.clone());
                self.his.push(add(rest, AffineExpr::Constant(1)));
            }
            _ => {
                return Err(
                    "a branch condition with a coefficient other than 1 or -1 on the reader's varying dimension".into(),
                );
            }
        }
        Ok(self)
    }
}

/// Whether `e` names `Dim(var)`.
fn mentions(e: &AffineExpr, var: usize) -> bool {
    match e {
        AffineExpr::Dim(d) => *d == var,
        AffineExpr::Symbol(_) | AffineExpr::Constant(_) => false,
        AffineExpr::Add(a, b)
        | AffineExpr::Mul(a, b)
        | AffineExpr::Mod(a, b)
        | AffineExpr::FloorDiv(a, b)
        | AffineExpr::CeilDiv(a, b) => mentions(a, var) || mentions(b, var),
    }
}

/// `not c` as disjoint constraints.
fn negate(c: &Constraint) -> Vec<Constraint> {
    let minus_one = |e: AffineExpr| add(e, AffineExpr::Constant(-1));
    if c.is_equality {
        vec![ge0(minus_one(c.expr.clone())), ge0(minus_one(neg(c.expr.clone())))]
    } else {
        vec![ge0(minus_one(neg(c.expr.clone())))]
    }
}

pub(super) fn ge0(e: AffineExpr) -> Constraint {
    pullback::ge0(e)
}

/// The reader points (as pieces) where branch `b` of `branches` defines
/// the reader, their conditions substituted with `point` (over `q` and
/// `Dim(var)`): `b`'s condition and no earlier one's, as disjoint pieces.
pub(super) fn active_pieces(
    branches: &[Branch],
    b: usize,
    point: &[AffineExpr],
    var: usize,
) -> Result<Vec<Piece>, String> {
    let subst = |c: &Constraint| Constraint { expr: pullback::substitute(&c.expr, point), is_equality: c.is_equality };
    let mut pieces = vec![Piece::default()];
    for c in &branches[b].when.constraints {
        pieces = pieces.into_iter().map(|p| p.and(&subst(c), var)).collect::<Result<_, _>>()?;
    }
    for earlier in &branches[..b] {
        // not (c1 and ... and cm) = (not c1) or (c1 and not c2) or ...
        let constraints: Vec<Constraint> = earlier.when.constraints.iter().map(subst).collect();
        let mut next = Vec::new();
        for piece in &pieces {
            for i in 0..constraints.len() {
                for negated in negate(&constraints[i]) {
                    let mut p = piece.clone();
                    for c in &constraints[..i] {
                        p = p.and(c, var)?;
                    }
                    next.push(p.and(&negated, var)?);
                }
            }
        }
        pieces = next;
        if pieces.len() > 16 {
            return Err("branch conditions that split the reader points into more than 16 pieces".into());
        }
    }
    Ok(pieces)
}
