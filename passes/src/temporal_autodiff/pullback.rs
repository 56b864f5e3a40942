//! Reads reversed: where a reader `R` reads `X[f(p)]` at its points `p`,
//! the gradient of `X` at `q` collects the contributions `C[p]` of every
//! `p` with `f(p) = q`. This module turns a point read's index into the
//! branches of a tensor over `X`'s domain that gathers them: per source
//! dimension the reader dimension its coordinate determines (`t - 1`:
//! `p = q + 1`; `T - 1 - t`; `2t`: `q` even), the conditions under which
//! such a `p` exists, clamped coordinates (`min(t + 3, T - 1)`: the last
//! `q` collects every `p` clamped onto it, as a sum over a range of `p`),
//! and reader dimensions no coordinate determines (a weight without a
//! domain read at every `t`: a sum over all of them).
//!
//! Supported: per source dimension an expression `a * r + c` of at most
//! one reader dimension `r` (`c` over the bounds), each reader dimension in
//! at most one source dimension, clamps `max`/`min` of such a term
//! (coefficient 1 or -1) with one constant lower and one constant cap,
//! `(r + c) floordiv k` (`q` is read by `k` consecutive reader points: a
//! range) and `(r + c) mod k` (by every `k`-th: a strided running sum).
//! Anything else (`t + l`, `2t mod 3`) is refused with the read's
//! location.

use crate::affine::{AffineExpr, AffineMap, Constraint, IntegerSet};

/// How the coordinate of one source dimension relates to reader points.
#[derive(Clone, Debug)]
pub(super) struct Case {
    /// Conditions on the gradient's point `q` (its dims, the bounds).
    pub constraints: Vec<Constraint>,
    /// The reader dimension this case determines, and how.
    pub assign: Option<(usize, Coordinate)>,
}

/// Reader coordinates as expressions of `q` and the bounds.
#[derive(Clone, Debug)]
pub(super) enum Coordinate {
    Point(AffineExpr),
    /// `[lo, hi)`, clipped to the reader's extent by the caller.
    Range(AffineExpr, AffineExpr),
    /// `[max(lows), min(highs))`, the reader's extent among them.
    Box(Vec<AffineExpr>, Vec<AffineExpr>),
    /// Every `first + k * m` inside the reader's extent (a read at
    /// `t mod k`): the caller sums them with a strided running sum.
    Strided(AffineExpr, i64),
}

fn add(a: AffineExpr, b: AffineExpr) -> AffineExpr {
    AffineExpr::Add(Box::new(a), Box::new(b))
}

fn scale(a: AffineExpr, k: i64) -> AffineExpr {
    if k == 1 { a } else { AffineExpr::Mul(Box::new(a), Box::new(AffineExpr::Constant(k))) }
}

fn sub(a: AffineExpr, b: AffineExpr) -> AffineExpr {
    add(a, scale(b, -1))
}

fn constant(k: i64) -> AffineExpr {
    AffineExpr::Constant(k)
}

pub(super) fn ge0(e: AffineExpr) -> Constraint {
    Constraint { expr: e, is_equality: false }
}

pub(super) fn eq0(e: AffineExpr) -> Constraint {
    Constraint { expr: e, is_equality: true }
}

/// `sum(symbols[j] * s_j) + c`: the part of a linear form over the bounds.
fn symbolic(symbols: &[i64], c: i64) -> AffineExpr {
    let mut e: Option<AffineExpr> = (c != 0).then(|| constant(c));
    for (j, &k) in symbols.iter().enumerate() {
        if k != 0 {
            let term = scale(AffineExpr::Symbol(j), k);
            e = Some(match e {
                Some(e) => add(e, term),
                None => term,
            });
        }
    }
    e.unwrap_or(constant(0))
}

/// One term of a coordinate: `a * r + c(bounds)` or a constant `c`.
struct Term {
    dim: Option<(usize, i64)>,
    rest: AffineExpr,
}

fn term(e: &AffineExpr) -> Result<Term, String> {
    let (dims, symbols, c) = e.linear().ok_or("a coordinate with mod or division")?;
    let used: Vec<(usize, i64)> = dims.iter().enumerate().filter(|(_, k)| **k != 0).map(|(d, k)| (d, *k)).collect();
    let rest = symbolic(&symbols, c);
    match used[..] {
        [] => Ok(Term { dim: None, rest }),
        [(d, k)] => Ok(Term { dim: Some((d, k)), rest }),
        _ => Err("a coordinate mixing several dimensions of the reader".into()),
    }
}

/// The cases of one source dimension (coordinate `q = Dim(position)` of
/// the gradient) read at `max(lower) capped by min(caps)` (a plain read:
/// one lower, no caps). `bounds[r]` is the bound symbol of reader dim `r`.
pub(super) fn cases(
    position: usize,
    source_bound: usize,
    lower: &[AffineExpr],
    caps: &[AffineExpr],
    bounds: &[usize],
) -> Result<Vec<Case>, String> {
    let q = AffineExpr::Dim(position);
    // `(r + c) floordiv k` and `(r + c) mod k` (or `c - r` for floordiv).
    if let ([AffineExpr::FloorDiv(u, k) | AffineExpr::Mod(u, k)], []) = (lower, caps)
        && let AffineExpr::Constant(k) = **k
        && k > 0
        && let Ok(Term { dim: Some((r, a)), rest: c }) = term(u)
        && (a == 1 || a == -1)
    {
        let extent = AffineExpr::Symbol(bounds[r]);
        let kq = scale(q.clone(), k);
        if matches!(lower[0], AffineExpr::FloorDiv(..)) {
            // k q <= r + c < k q + k, or k q <= c - r < k q + k.
            let (lo, hi) = if a == 1 {
                let lo = sub(kq, c);
                (lo.clone(), add(lo, constant(k)))
            } else {
                let hi = add(sub(c, kq), constant(1));
                (sub(hi.clone(), constant(k)), hi)
            };
            return Ok(vec![Case { constraints: Vec::new(), assign: Some((r, Coordinate::Range(lo, hi))) }]);
        }
        if a == 1 {
            // r = q - c + k m: the first such r is (q - c) mod k; q < k.
            let first = AffineExpr::Mod(Box::new(sub(q.clone(), c)), Box::new(constant(k)));
            let constraints =
                vec![ge0(sub(constant(k - 1), q.clone())), ge0(sub(sub(extent, constant(1)), first.clone()))];
            return Ok(vec![Case { constraints, assign: Some((r, Coordinate::Strided(first, k))) }]);
        }
    }
    let terms: Vec<Term> = lower.iter().map(term).collect::<Result<_, _>>()?;
    let cap_terms: Vec<Term> = caps.iter().map(term).collect::<Result<_, _>>()?;
    if cap_terms.iter().any(|t| t.dim.is_some()) {
        return Err("a cap that depends on the reader's dimensions".into());
    }
    let varying: Vec<&Term> = terms.iter().filter(|t| t.dim.is_some()).collect();
    let fixed: Vec<&Term> = terms.iter().filter(|t| t.dim.is_none()).collect();
    let last = |r: usize| sub(AffineExpr::Symbol(bounds[r]), constant(1));
    match (&varying[..], &fixed[..], &cap_terms[..]) {
        // A constant coordinate: only q equal to it is read.
        ([], [c], []) => Ok(vec![Case { constraints: vec![eq0(sub(q, c.rest.clone()))], assign: None }]),
        ([], ..) => Err("a constant coordinate with clamps".into()),
        // q = a r + c: r = (q - c) / a where that is a reader point.
        ([t], [], []) => {
            let (r, a) = t.dim.expect("varying");
            // The reader's own variable of the same dimension: every q is read once.
            if a == 1 && t.rest == constant(0) && bounds[r] == source_bound {
                return Ok(vec![Case { constraints: Vec::new(), assign: Some((r, Coordinate::Point(q))) }]);
            }
            let (numerator, divisor) = if a > 0 { (sub(q, t.rest.clone()), a) } else { (sub(t.rest.clone(), q), -a) };
            let p = if divisor == 1 {
                numerator.clone()
            } else {
                AffineExpr::FloorDiv(Box::new(numerator.clone()), Box::new(constant(divisor)))
            };
            let mut constraints = vec![ge0(p.clone()), ge0(sub(last(r), p.clone()))];
            if divisor != 1 {
                constraints.push(eq0(AffineExpr::Mod(Box::new(numerator), Box::new(constant(divisor)))));
            }
            Ok(vec![Case { constraints, assign: Some((r, Coordinate::Point(p))) }])
        }
        // q = clamp(u, lo, hi), u = r + c or c - r.
        ([t], low, high) if low.len() <= 1 && high.len() <= 1 => {
            let (r, a) = t.dim.expect("varying");
            if a != 1 && a != -1 {
                return Err("a clamped coordinate whose dimension has a coefficient other than 1 or -1".into());
            }
            let c = t.rest.clone();
            let extent = AffineExpr::Symbol(bounds[r]);
            // r where u = v: v - c (a = 1) or c - v (a = -1).
            let at = |v: AffineExpr| if a == 1 { sub(v, c.clone()) } else { sub(c.clone(), v) };
            // The r with u <= v, and with u >= v, as ranges of r.
            let at_most = |v: AffineExpr| {
                if a == 1 {
                    Coordinate::Range(constant(0), add(at(v), constant(1)))
                } else {
                    Coordinate::Range(at(v), extent.clone())
                }
            };
            let at_least = |v: AffineExpr| {
                if a == 1 {
                    Coordinate::Range(at(v), extent.clone())
                } else {
                    Coordinate::Range(constant(0), add(at(v), constant(1)))
                }
            };
            let lo = low.first().map(|t| t.rest.clone());
            let hi = high.first().map(|t| t.rest.clone());
            let mut out = Vec::new();
            if let (Some(lo), Some(hi)) = (&lo, &hi) {
                // lo >= hi: every reader point reads hi.
                out.push(Case {
                    constraints: vec![ge0(sub(lo.clone(), hi.clone())), eq0(sub(q.clone(), hi.clone()))],
                    assign: Some((r, Coordinate::Range(constant(0), extent.clone()))),
                });
            }
            if let Some(lo) = &lo {
                out.push(Case {
                    constraints: vec![eq0(sub(q.clone(), lo.clone()))],
                    assign: Some((r, at_most(lo.clone()))),
                });
            }
            if let Some(hi) = &hi {
                out.push(Case {
                    constraints: vec![eq0(sub(q.clone(), hi.clone()))],
                    assign: Some((r, at_least(hi.clone()))),
                });
            }
            // Strictly inside: the one r with u = q, if it is a reader point.
            let p = at(q.clone());
            let mut constraints = vec![ge0(p.clone()), ge0(sub(sub(extent.clone(), constant(1)), p.clone()))];
            if let Some(lo) = &lo {
                constraints.push(ge0(sub(sub(q.clone(), lo.clone()), constant(1))));
            }
            if let Some(hi) = &hi {
                constraints.push(ge0(sub(sub(hi.clone(), q.clone()), constant(1))));
            }
            out.push(Case { constraints, assign: Some((r, Coordinate::Point(p))) });
            Ok(out)
        }
        _ => Err("a clamp with several constant bounds or several varying terms".into()),
    }
}

/// A reader dimension and its interval: lower bounds (a maximum) and
/// exclusive upper bounds (a minimum).
pub(super) type Interval = (usize, Vec<AffineExpr>, Vec<AffineExpr>);

/// The reader points whose read of a range along one source dimension
/// (`[max(lower), min(upper))`, coordinate `q = Dim(position)`) contains
/// `q`: conditions on `q` (terms without a reader dimension) and the
/// interval of the one reader dimension the terms use, as the lists of
/// its lower bounds (a maximum) and upper bounds (a minimum, exclusive),
/// the reader's extent included. Terms are `r + c`, `c - r` or `c`.
pub(super) fn range_case(
    position: usize,
    source_bound: usize,
    lower: &[AffineExpr],
    upper: &[AffineExpr],
    bounds: &[usize],
) -> Result<(Vec<Constraint>, Option<Interval>), String> {
    let q = AffineExpr::Dim(position);
    let mut constraints = Vec::new();
    let mut dim: Option<usize> = None;
    let (mut los, mut his) = (Vec::new(), Vec::new());
    for (is_upper, e) in lower.iter().map(|e| (false, e)).chain(upper.iter().map(|e| (true, e))) {
        let t = term(e)?;
        let c = t.rest;
        match (t.dim, is_upper) {
            // c <= q; q < c.
            (None, false) => constraints.push(ge0(sub(q.clone(), c))),
            (None, true) => constraints.push(ge0(sub(sub(c, q.clone()), constant(1)))),
            (Some((r, a)), _) => {
                if dim.is_some_and(|d| d != r) {
                    return Err("a range whose bounds use several dimensions of the reader".into());
                }
                dim = Some(r);
                match (a, is_upper) {
                    // r + c <= q: r < q - c + 1.
                    (1, false) => his.push(add(sub(q.clone(), c), constant(1))),
                    // c - r <= q: r >= c - q.
                    (-1, false) => los.push(sub(c, q.clone())),
                    // r + c > q: r >= q - c + 1.
                    (1, true) => los.push(add(sub(q.clone(), c), constant(1))),
                    // c - r > q: r < c - q.
                    (-1, true) => his.push(sub(c, q.clone())),
                    _ => return Err("a range bound whose dimension has a coefficient other than 1 or -1".into()),
                }
            }
        }
    }
    Ok((
        constraints,
        dim.map(|r| {
            // The reader's extent, unless a bound already implies it: `q + c`
            // (c >= 0) is at least 0; `q + c` (c <= 1) is at most the bound
            // of q's dimension where that is the reader's.
            let implied_low = los.iter().any(|e| {
                e.linear().is_some_and(|(d, s, c)| d.iter().all(|&k| k >= 0) && s.iter().all(|&k| k == 0) && c >= 0)
            });
            if !implied_low {
                los.push(constant(0));
            }
            let implied_high = source_bound == bounds[r]
                && his.iter().any(|e| {
                    e.linear().is_some_and(|(d, s, c)| {
                        d.iter().enumerate().all(|(j, &k)| k == i64::from(j == position))
                            && s.iter().all(|&k| k == 0)
                            && c <= 1
                    })
                });
            if !implied_high {
                his.push(AffineExpr::Symbol(bounds[r]));
            }
            (r, los, his)
        }),
    ))
}

/// `e` with every dimension `d` replaced by `dims[d]`.
pub(super) fn substitute(e: &AffineExpr, dims: &[AffineExpr]) -> AffineExpr {
    e.substitute_dims(dims)
}

/// The set of `constraints` over the gradient's domain.
pub(super) fn set(num_dims: usize, num_symbols: usize, constraints: Vec<Constraint>) -> IntegerSet {
    IntegerSet { num_dims, num_symbols, constraints }
}

/// A map with one result.
pub(super) fn map(num_dims: usize, num_symbols: usize, results: Vec<AffineExpr>) -> AffineMap {
    AffineMap { num_dims, num_symbols, results }
}
