//! The contribution of one point read to its source's adjoint: the read
//! reversed. A read `x[f(p)]` at reader point `p` gives `x`'s point `q`
//! the cotangent at the reader points with `f(p) = q`: per source
//! dimension the cases of its coordinate (`pullback`), and per combination
//! of cases a branch of a tensor over `x`'s domain (`g$a$...`) reading the
//! cotangent `C` there: at one point, over a range of reader points (a
//! weight read at every step), or through a running sum along the one
//! reader dimension summed whole (`g$s$...`, back-propagation through
//! time; `running_sums` may turn it forward). A read at `t mod k` first
//! sums every `k`-th point (`g$m$...`).

use super::body::Body;
use super::cotangents::Packed;
use super::pullback::{self, Coordinate};
use super::{Contribution, add, identity, push_tensor, running_sums, sub, universe, unpack, zero_branch};
use crate::affine::AffineExpr;
use crate::diagnostics::PassDiagnostic;
use crate::program::{Branch, DYNAMIC, Node, NodeKind, PointType, Program, Tensor};

/// What the phases of [`contribution`] share: the read, its reader and
/// source, and where its cotangent is (`c`, whose points are
/// `packed_point`, the read's part of them at `extract`; `c_point` the
/// read's own point type).
struct Reversal<'a, 'c> {
    num_symbols: usize,
    g_name: &'a str,
    reader: Tensor<'c>,
    b: usize,
    k: usize,
    read: &'a Node<'c>,
    x: usize,
    x_dims: usize,
    c: usize,
    packed_point: PointType,
    extract: Option<(i64, PointType)>,
    c_point: PointType,
}

/// The contribution of read node `k` of branch `b` of `r` to its source's
/// adjoint, from its cotangent `packed`: the read (of `C`, or of the
/// tensor gathering `C` at the source's points) for the adjoint's body.
#[allow(clippy::too_many_arguments)]
pub(super) fn contribution<'c>(
    program: &mut Program<'c>,
    g_name: &str,
    r: usize,
    b: usize,
    branch: &Branch<'c>,
    k: usize,
    packed: &Packed,
    sums: &mut Vec<running_sums::RunningSum<'c>>,
) -> Result<Contribution<'c>, PassDiagnostic<'c>> {
    let read = &branch.nodes[k];
    // Per source dimension: the lower terms and caps of its coordinate.
    let coordinates: Vec<(Vec<AffineExpr>, Vec<AffineExpr>)> = match &read.kind {
        NodeKind::Read { index, .. } => index.results.iter().map(|e| (vec![e.clone()], Vec::new())).collect(),
        NodeKind::ReadRange { lower, caps, .. } => {
            lower.iter().zip(caps).map(|(l, c)| (l.results.clone(), c.results.clone())).collect()
        }
        _ => unreachable!("a read"),
    };
    let extract = packed.extract.clone();
    let mut at = Reversal {
        num_symbols: program.dims.len(),
        g_name,
        reader: program.tensors[r].clone(),
        b,
        k,
        read,
        x: crate::rewrite::source(&read.kind).expect("a read"),
        x_dims: 0,
        c: packed.c,
        packed_point: packed.c_point.clone(),
        // The read's own point type (what the adjoint adds up).
        c_point: extract.as_ref().map_or(packed.c_point.clone(), |(_, p)| p.clone()),
        extract,
    };
    at.x_dims = program.tensors[at.x].domain.len();
    at.strided_sum(program, &coordinates);
    let per_dim = at.cases(program, &coordinates)?;
    let source_domain = program.tensors[at.x].domain.clone();
    let bounds = at.reader.domain.clone();
    let (x_dims, num_symbols, dims) = (source_domain.len(), at.num_symbols, bounds.len());
    // Every combination of cases, in order (the first that holds is the
    // right one in each dimension).
    let mut combos: Vec<Vec<usize>> = vec![Vec::new()];
    for cases in &per_dim {
        combos =
            combos.into_iter().flat_map(|c| (0..cases.len()).map(move |i| [c.clone(), vec![i]].concat())).collect();
    }
    let mut a_branches: Vec<Branch<'c>> = Vec::new();
    for combo in &combos {
        let mut constraints = Vec::new();
        let mut coords: Vec<Option<Coordinate>> = vec![None; dims];
        for (j, &i) in combo.iter().enumerate() {
            let case = &per_dim[j][i];
            constraints.extend(case.constraints.iter().cloned());
            if let Some((rd, coordinate)) = &case.assign {
                coords[*rd] = Some(coordinate.clone());
            }
        }
        let coords: Vec<Coordinate> = coords
            .into_iter()
            .enumerate()
            .map(|(rd, c)| match c {
                Some(Coordinate::Strided(first, _)) => Coordinate::Point(first),
                Some(c) => c,
                None => Coordinate::Range(AffineExpr::Constant(0), AffineExpr::Symbol(bounds[rd])),
            })
            .collect();
        let ranges = coords.iter().filter(|c| matches!(c, Coordinate::Range(..))).count();
        // One reader dimension summed whole (a weight read at every step):
        // a running sum along it, backward, instead of a range of
        // contributions kept until the end.
        let free: Vec<usize> = (0..dims)
            .filter(|&rd| {
                matches!(&coords[rd], Coordinate::Range(lo, hi)
                    if *lo == AffineExpr::Constant(0) && *hi == AffineExpr::Symbol(bounds[rd]))
            })
            .collect();
        if let [f] = free[..]
            && ranges == 1
            && !source_domain.contains(&bounds[f])
        {
            // The reader's branch holds at one point of `f` only (an LSTM's
            // `t == 0` branch): the cotangent is zero at every other point,
            // and the sum is its value there.
            let branch = match pinned(&at.reader.branches[b].when, f, bounds[f]) {
                Some(point) => at.at_point(&coords, f, point, constraints),
                None => at.running_sum(program, &coords, f, constraints, sums),
            };
            a_branches.push(branch);
            continue;
        }
        // A permutation of the reader's dimensions needs no tensor of its own.
        if ranges == 0 && combos.len() == 1 && constraints.is_empty() {
            let index = pullback::map(x_dims, num_symbols, points(&coords));
            return Ok((NodeKind::Read { source: at.c, index }, at.packed_point, at.extract, read.location));
        }
        let mut body = Body::new(read.location);
        let node = at.gathered(&mut body, &coords, ranges, &mut constraints);
        a_branches.push(Branch {
            when: pullback::set(x_dims, num_symbols, constraints),
            nodes: body.nodes,
            result: node,
            location: read.location,
        });
    }
    if a_branches.last().is_some_and(|b| !b.when.is_universe()) {
        a_branches.push(zero_branch(universe(x_dims, num_symbols), &at.c_point, read.location));
    }
    let a_name = format!("{g_name}$a${}${}${}", at.reader.name, b, k);
    let a = push_tensor(program, a_name, source_domain, at.c_point.clone(), read.location);
    program.tensors[a].branches = a_branches;
    Ok((NodeKind::Read { source: a, index: identity(x_dims, num_symbols) }, at.c_point, None, read.location))
}

/// The one point of reader dimension `f` (bound symbol `bound`) where
/// `when` can hold, when one of its equalities fixes `f` alone to an
/// expression of constants and `f`'s bound (`t == 0`, `t == T - 1`).
fn pinned(when: &crate::affine::IntegerSet, f: usize, bound: usize) -> Option<AffineExpr> {
    when.constraints.iter().filter(|c| c.is_equality).find_map(|c| {
        let (dims, symbols, constant) = c.expr.linear()?;
        let coefficient = dims.get(f).copied().unwrap_or(0);
        let only_f = dims.iter().enumerate().all(|(d, &a)| d == f || a == 0);
        let only_bound = symbols.iter().enumerate().all(|(s, &a)| s == bound || a == 0);
        if !only_f || !only_bound || coefficient.abs() != 1 {
            return None;
        }
        // coefficient * f + a * bound + constant == 0.
        let a = symbols.get(bound).copied().unwrap_or(0);
        let (a, constant) = (-coefficient * a, -coefficient * constant);
        Some(match a {
            0 => AffineExpr::Constant(constant),
            1 => add(AffineExpr::Symbol(bound), AffineExpr::Constant(constant)),
            _ => add(
                AffineExpr::Mul(Box::new(AffineExpr::Symbol(bound)), Box::new(AffineExpr::Constant(a))),
                AffineExpr::Constant(constant),
            ),
        })
    })
}

/// The coordinates of a combination whose one range is reader dimension
/// `f`, with `f` at `at`.
fn summed_at(coords: &[Coordinate], f: usize, at: &AffineExpr) -> Vec<AffineExpr> {
    coords
        .iter()
        .enumerate()
        .map(|(rd, c)| match c {
            _ if rd == f => at.clone(),
            Coordinate::Point(p) => p.clone(),
            Coordinate::Range(..) | Coordinate::Box(..) | Coordinate::Strided(..) => unreachable!("one range"),
        })
        .collect()
}

/// The coordinates of a combination without ranges, as expressions.
fn points(coords: &[Coordinate]) -> Vec<AffineExpr> {
    coords
        .iter()
        .map(|c| match c {
            Coordinate::Point(p) => p.clone(),
            Coordinate::Range(..) | Coordinate::Box(..) | Coordinate::Strided(..) => unreachable!("no ranges"),
        })
        .collect()
}

impl<'c> Reversal<'_, 'c> {
    /// A read at `t mod k`: `q` collects every `k`-th reader point, summed
    /// by a running sum along `t` with stride `k` (`g$m$...`), read at the
    /// first of them; the cotangent is then that sum's.
    fn strided_sum(&mut self, program: &mut Program<'c>, coordinates: &[(Vec<AffineExpr>, Vec<AffineExpr>)]) {
        let (num_symbols, read, reader) = (self.num_symbols, self.read, &self.reader);
        let (g_name, b) = (self.g_name, self.b);
        let (c, packed_point, extract, c_point, x) =
            (self.c, self.packed_point.clone(), self.extract.clone(), self.c_point.clone(), self.x);
        let strided = coordinates.iter().enumerate().find_map(|(j, (lower, caps))| {
            let bounds = &reader.domain;
            let cases = pullback::cases(j, program.tensors[x].domain[j], lower, caps, bounds).ok()?;
            cases.iter().find_map(|case| match &case.assign {
                Some((rd, Coordinate::Strided(_, k))) => Some((*rd, *k)),
                _ => None,
            })
        });
        let Some((rd, k)) = strided else { return };
        let m_name = format!("{g_name}$m${}${}${}", reader.name, b, k);
        let dims = reader.domain.len();
        let m = push_tensor(program, m_name, reader.domain.clone(), c_point.clone(), read.location);
        let mut branches = Vec::new();
        for more in [true, false] {
            let mut body = Body::new(read.location);
            let whole =
                body.push(NodeKind::Read { source: c, index: identity(dims, num_symbols) }, packed_point.clone());
            let here = unpack(&mut body, whole, extract.as_ref());
            let mut constraints = Vec::new();
            let result = if more {
                // p_r + k <= extent - 1
                let extent = AffineExpr::Symbol(reader.domain[rd]);
                constraints.push(pullback::ge0(sub(
                    sub(extent, AffineExpr::Constant(1)),
                    add(AffineExpr::Dim(rd), AffineExpr::Constant(k)),
                )));
                let mut next: Vec<AffineExpr> = (0..dims).map(AffineExpr::Dim).collect();
                next[rd] = add(AffineExpr::Dim(rd), AffineExpr::Constant(k));
                let later = body
                    .push(NodeKind::Read { source: m, index: pullback::map(dims, num_symbols, next) }, c_point.clone());
                body.add(here, later)
            } else {
                here
            };
            branches.push(Branch {
                when: pullback::set(dims, num_symbols, constraints),
                nodes: body.nodes,
                result,
                location: read.location,
            });
        }
        program.tensors[m].branches = branches;
        self.c = m;
        self.packed_point = c_point.clone();
        self.extract = None;
    }

    /// The read reversed, per source dimension: the cases of its
    /// coordinate (refused where the pullback has none, or where one
    /// reader dimension is in several coordinates).
    fn cases(
        &self,
        program: &Program<'c>,
        coordinates: &[(Vec<AffineExpr>, Vec<AffineExpr>)],
    ) -> Result<Vec<Vec<pullback::Case>>, PassDiagnostic<'c>> {
        let (read, x, dims) = (self.read, self.x, self.reader.domain.len());
        // The read reversed, per source dimension.
        let source_domain = program.tensors[x].domain.clone();
        let bounds: Vec<usize> = self.reader.domain.clone();
        let mut per_dim: Vec<Vec<pullback::Case>> = Vec::new();
        let mut determined = vec![false; dims];
        for (j, (lower, caps)) in coordinates.iter().enumerate() {
            let cases = pullback::cases(j, source_domain[j], lower, caps, &bounds).map_err(|why| {
                PassDiagnostic::new(
                    read.location,
                    format!(
                        "temporal-autodiff: no gradient through this read of '{}' yet: {why}",
                        program.tensors[x].name
                    ),
                )
            })?;
            let assigned: Vec<usize> = cases.iter().filter_map(|c| c.assign.as_ref().map(|(r, _)| *r)).collect();
            if let Some(&r) = assigned.first() {
                if determined[r] {
                    return Err(PassDiagnostic::new(
                        read.location,
                        format!(
                            "temporal-autodiff: no gradient through this read of '{}' yet: one reader dimension in several coordinates",
                            program.tensors[x].name
                        ),
                    ));
                }
                determined[r] = true;
            }
            per_dim.push(cases);
        }
        Ok(per_dim)
    }

    /// The branch (conditions `constraints`) of a combination whose one
    /// range is reader dimension `f`, summed whole: a running sum along `f`
    /// (`g$s$...`, backward; `running_sums` may choose forward), read at 0.
    fn running_sum(
        &self,
        program: &mut Program<'c>,
        coords: &[Coordinate],
        f: usize,
        constraints: Vec<crate::affine::Constraint>,
        sums: &mut Vec<running_sums::RunningSum<'c>>,
    ) -> Branch<'c> {
        let (num_symbols, read, reader, k) = (self.num_symbols, self.read, &self.reader, self.k);
        let (g_name, b, c, extract) = (self.g_name, self.b, self.c, &self.extract);
        let (packed_point, c_point) = (&self.packed_point, &self.c_point);
        let source_domain = program.tensors[self.x].domain.clone();
        let x_dims = source_domain.len();
        let bounds = &reader.domain;
        let mut body = Body::new(read.location);
        let location = read.location;
        let s_name = format!("{g_name}$s${}${}${}", reader.name, b, k);
        let mut s_domain = source_domain.clone();
        s_domain.push(bounds[f]);
        let s = push_tensor(program, s_name, s_domain, c_point.clone(), location);
        let along = AffineExpr::Dim(x_dims);
        // Coordinates of C at (q, f); the combination's conditions on q.
        let c_at = pullback::map(x_dims + 1, num_symbols, summed_at(coords, f, &along));
        let last = sub(AffineExpr::Symbol(bounds[f]), AffineExpr::Constant(1));
        // Backward (a suffix sum read at 0, what back-propagation
        // through time needs) or forward (a prefix sum read at the
        // end; chosen afterwards where the contributions need only a
        // bounded future, `running_sums`).
        let running = |forward: bool| {
            let (end, step) = if forward { (AffineExpr::Constant(0), -1) } else { (last.clone(), 1) };
            let mut branches = Vec::new();
            for (at_end, extra) in
                [(true, pullback::eq0(sub(along.clone(), end))), (false, pullback::ge0(AffineExpr::Constant(0)))]
            {
                let mut body = Body::new(location);
                let whole = body.push(NodeKind::Read { source: c, index: c_at.clone() }, packed_point.clone());
                let here = unpack(&mut body, whole, extract.as_ref());
                let result = if at_end {
                    here
                } else {
                    let mut next: Vec<AffineExpr> = (0..x_dims).map(AffineExpr::Dim).collect();
                    next.push(add(along.clone(), AffineExpr::Constant(step)));
                    let index = pullback::map(x_dims + 1, num_symbols, next);
                    let later = body.push(NodeKind::Read { source: s, index }, c_point.clone());
                    body.add(here, later)
                };
                let mut constraints = constraints.clone();
                constraints.push(extra);
                branches.push(Branch {
                    when: pullback::set(x_dims + 1, num_symbols, constraints),
                    nodes: body.nodes,
                    result,
                    location,
                });
            }
            branches.push(zero_branch(universe(x_dims + 1, num_symbols), c_point, location));
            branches
        };
        program.tensors[s].branches = running(false);
        let mut at_last: Vec<AffineExpr> = (0..x_dims).map(AffineExpr::Dim).collect();
        at_last.push(last.clone());
        sums.push(running_sums::RunningSum {
            sum: s,
            contribution: c,
            dim: bounds[f],
            forward: running(true),
            read_last: pullback::map(x_dims, num_symbols, at_last),
        });
        let mut first: Vec<AffineExpr> = (0..x_dims).map(AffineExpr::Dim).collect();
        first.push(AffineExpr::Constant(0));
        let node =
            body.push(NodeKind::Read { source: s, index: pullback::map(x_dims, num_symbols, first) }, c_point.clone());
        let mut constraints = constraints;
        constraints.push(pullback::ge0(last));
        Branch {
            when: pullback::set(x_dims, num_symbols, constraints),
            nodes: body.nodes,
            result: node,
            location: read.location,
        }
    }

    /// The branch (conditions `constraints`) of a combination whose one
    /// range is reader dimension `f`, summed whole, where the reader's
    /// branch holds only at `point` along `f`: the cotangent read there
    /// (where `point` is inside the dimension; elsewhere the sum is empty
    /// and the adjoint's zero branch applies).
    fn at_point(
        &self,
        coords: &[Coordinate],
        f: usize,
        point: AffineExpr,
        mut constraints: Vec<crate::affine::Constraint>,
    ) -> Branch<'c> {
        let location = self.read.location;
        let mut body = Body::new(location);
        let index = pullback::map(self.x_dims, self.num_symbols, summed_at(coords, f, &point));
        let whole = body.push(NodeKind::Read { source: self.c, index }, self.packed_point.clone());
        let node = unpack(&mut body, whole, self.extract.as_ref());
        let bound = AffineExpr::Symbol(self.reader.domain[f]);
        constraints.push(pullback::ge0(point.clone()));
        constraints.push(pullback::ge0(sub(sub(bound, AffineExpr::Constant(1)), point)));
        Branch {
            when: pullback::set(self.x_dims, self.num_symbols, constraints),
            nodes: body.nodes,
            result: node,
            location,
        }
    }

    /// The cotangent at a combination's reader points: read at one point,
    /// or a range of them summed (`constraints` gains the range's being
    /// non-empty).
    fn gathered(
        &self,
        body: &mut Body<'c>,
        coords: &[Coordinate],
        ranges: usize,
        constraints: &mut Vec<crate::affine::Constraint>,
    ) -> usize {
        let (num_symbols, c, extract, packed_point) = (self.num_symbols, self.c, &self.extract, &self.packed_point);
        let bounds = &self.reader.domain;
        let x_dims = self.x_dims;
        if ranges == 0 {
            let index = pullback::map(x_dims, num_symbols, points(coords));
            let whole = body.push(NodeKind::Read { source: c, index }, packed_point.clone());
            return unpack(body, whole, extract.as_ref());
        }
        let mut lower = Vec::new();
        let mut upper = Vec::new();
        let mut caps = Vec::new();
        for (rd, coordinate) in coords.iter().enumerate() {
            match coordinate {
                Coordinate::Point(p) => {
                    lower.push(pullback::map(x_dims, num_symbols, vec![p.clone()]));
                    upper.push(pullback::map(x_dims, num_symbols, Vec::new()));
                }
                Coordinate::Box(..) | Coordinate::Strided(..) => unreachable!("no boxes; strides read as points"),
                Coordinate::Range(lo, hi) => {
                    let extent = AffineExpr::Symbol(bounds[rd]);
                    // Not empty once clipped to [0, extent).
                    for e in [
                        sub(hi.clone(), add(lo.clone(), AffineExpr::Constant(1))),
                        sub(hi.clone(), AffineExpr::Constant(1)),
                        sub(extent.clone(), add(lo.clone(), AffineExpr::Constant(1))),
                        sub(extent.clone(), AffineExpr::Constant(1)),
                    ] {
                        let constraint = crate::affine::Constraint { expr: e, is_equality: false };
                        if !constraints.contains(&constraint) {
                            constraints.push(constraint);
                        }
                    }
                    let zero = AffineExpr::Constant(0);
                    let lows = if *lo == zero { vec![zero] } else { vec![lo.clone(), zero] };
                    let highs = if *hi == extent { vec![extent] } else { vec![hi.clone(), extent] };
                    lower.push(pullback::map(x_dims, num_symbols, lows));
                    upper.push(pullback::map(x_dims, num_symbols, highs));
                }
            }
            caps.push(pullback::map(x_dims, num_symbols, Vec::new()));
        }
        let mut shape = vec![DYNAMIC; ranges];
        shape.extend(&packed_point.shape);
        let ty = PointType { shape, element: packed_point.element };
        let read_range = body.push(NodeKind::ReadRange { source: c, lower, upper, caps }, ty);
        unpack(body, read_range, extract.as_ref())
    }
}
