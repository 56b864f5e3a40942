//! Gradients through reads of ranges (`x[0:t+1]`, windows
//! `x[max(0, t-w+1):t+1]`, future ranges `x[t:T]`, whole dimensions
//! `x[0:T]`), one range dimension per read.
//!
//! A read `V = X[lo(p):hi(p), ...]` at a reader point `p` has a dynamic
//! length, so its cotangent cannot live in a tensor over the reader's
//! domain. But everything the reader's branch does with `V` before it
//! collapses the range (a sum, mean or maximum along it, a contraction of
//! its label: softmax attention is all of these) is elementwise along the
//! range: element `s` of every such value depends on `V[s]` and on values
//! without the range (*row* values). So the gradient is computed where it
//! is needed, at the source point `q` (the *element frame*): a tensor over
//! `X`'s domain recomputes the branch's element-level nodes at `q` from
//! `X[q]` (and the same element of other reads of the same range), with
//! the row values they need and the cotangents of the collapsing nodes
//! read, as a range over the reader points that read `q` (`t >= q` for
//! `x[0:t+1]`), from tensors over the reader's domain (the *stash*: the
//! reader's own backward sweep computes it beside its point reads'
//! cotangents, `cotangents` in `temporal_autodiff.rs`); seeds each
//! collapsing node's operands with its vector-Jacobian product and sweeps
//! back to `X[q]`. Reads of one range whose sources share a domain (an
//! attention's keys and values) are differentiated in one frame, and a
//! softmax along the range as one unit (`vjp/softmax.rs`): with both,
//! the backward pass of causal attention is FlashAttention-2's (`P` again
//! from the stashed maximum and sum, `dS = P * (dP - D)`, dK and dV from
//! one sweep). Values that depend
//! on the reader point carry a leading dimension of dynamic size, so the
//! sum over reader points is the sweep's own sum over broadcast
//! dimensions. Where branch conditions cut the reader points, the points
//! where the branch defines the reader are split into disjoint intervals,
//! one tensor each.
//!
//! Refused with the read's location: boxes over several range dimensions,
//! bounds other than `r + c`, `c - r` or constants, a reader dimension in
//! several coordinates or several varying ones, clamped point coordinates
//! beside the range, and element-level uses of the range this frame cannot
//! follow (a running sum, flip or slice along it, a reshape moving it, a
//! gather from it, another range of a different extent combined with it).

mod analysis;
mod frame;
mod pieces;

use super::body::Body;
use super::pullback::{self, Case, Coordinate};
use super::vjp::softmax::{self, Softmax};
use super::{Contribution, live_nodes, vjp};
use crate::affine::{AffineExpr, AffineMap, Constraint, IntegerSet};
use crate::diagnostics::PassDiagnostic;
use crate::program::{Branch, DYNAMIC, NodeKind, PointType, Program, ReduceKind};
use analysis::{Carry, analyse, same_range};
use frame::Frame;
pub(super) use frame::Stash;
use pieces::{Piece, active_pieces, ge0, sub};
use std::collections::HashMap;

/// What one range read's gradient needs, found before the stash is built.
struct Plan<'c> {
    k: usize,
    read: crate::program::Node<'c>,
    x: usize,
    what: String,
    range_dim: usize,
    carry: Vec<Carry>,
    on: Vec<bool>,
    collapses: Vec<usize>,
    units: Vec<Softmax>,
    /// Conditions on q from the point coordinates.
    constraints: Vec<Constraint>,
    /// The reader's point over q (`Dim(x_dims)`: the varying dimension).
    point: Vec<AffineExpr>,
    /// The varying dimension's bounds, if one varies.
    varying: Option<(Vec<AffineExpr>, Vec<AffineExpr>)>,
    pieces: Vec<Piece>,
    requests: Vec<Stash>,
    /// Other reads of the same range whose sources share the pivot's
    /// domain and element type, differentiated in the pivot's frame (one
    /// sweep: the scores and weights of an attention computed once for the
    /// keys' and the values' cotangents): `(read node, source)`.
    others: Vec<(usize, usize)>,
}

impl<'c> Plan<'c> {
    /// An element frame for this read (empty body).
    fn frame<'a>(&'a self, branch: &'a Branch<'c>, program: &Program<'c>) -> Frame<'a, 'c> {
        Frame {
            branch,
            carry: &self.carry,
            units: &self.units,
            k: self.k,
            x_point: program.tensors[self.x].point.clone(),
            x_dims: program.tensors[self.x].domain.len(),
            range_dim: self.range_dim,
            point: self.point.clone(),
            num_symbols: program.dims.len(),
            body: Body::new(self.read.location),
            elem: HashMap::new(),
            row: HashMap::new(),
            requests: Vec::new(),
            values: HashMap::new(),
            batched: self.varying.is_some(),
            what: self.what.clone(),
        }
    }
}

/// Plans the gradient of range read `k` of `branch` (branch `b` of reader
/// `r`): which reader points read each source point, the pieces where the
/// branch defines them, and the row values the element frame requests.
fn plan<'c>(
    program: &Program<'c>,
    r: usize,
    b: usize,
    branch: &Branch<'c>,
    k: usize,
) -> Result<Plan<'c>, PassDiagnostic<'c>> {
    let reader = program.tensors[r].clone();
    let read = branch.nodes[k].clone();
    let NodeKind::ReadRange { source: x, lower, upper, caps } = &read.kind else { unreachable!("a range read") };
    let x = *x;
    let (lower, upper, caps) = (lower.clone(), upper.clone(), caps.clone());
    let what = program.tensors[x].name.clone();
    let refuse = |why: &str| {
        PassDiagnostic::new(
            read.location,
            format!("temporal-autodiff: no gradient through this read of a range of '{what}' yet: {why}"),
        )
    };
    let range_dims: Vec<usize> = (0..upper.len()).filter(|&j| !upper[j].results.is_empty()).collect();
    let [range_dim] = range_dims[..] else {
        return Err(refuse("a box over several range dimensions"));
    };
    let carry = analyse(branch, k);
    let on = vjp::on_path(&branch.nodes, k, branch.result);
    // Softmax units are differentiated whole (as the reader's frame does):
    // the inner collapses (maximum and sum) of one that nothing else reads
    // then pass no cotangent.
    let units: Vec<Softmax> =
        softmax::all(&branch.nodes).into_iter().filter(|u| on[u.p] && matches!(carry[u.p], Carry::Axis(_))).collect();
    let silent: Vec<usize> =
        units.iter().filter(|u| softmax::closed(&branch.nodes, u)).flat_map(|u| u.inner.iter().copied()).collect();
    let collapses: Vec<usize> =
        (0..branch.nodes.len()).filter(|&c| on[c] && carry[c] == Carry::Collapse && !silent.contains(&c)).collect();
    if let Some(n) = (0..branch.nodes.len()).find(|&n| on[n] && matches!(carry[n], Carry::Unsupported(_))) {
        let Carry::Unsupported(why) = &carry[n] else { unreachable!("unsupported") };
        return Err(PassDiagnostic::new(
            branch.nodes[n].location,
            format!("temporal-autodiff: no gradient through this read of a range of '{what}' yet: {why}"),
        ));
    }
    // Which reader points read q: per source dimension.
    let source_domain = program.tensors[x].domain.clone();
    let x_dims = source_domain.len();
    let bounds = reader.domain.clone();
    let dims = bounds.len();
    let mut constraints: Vec<Constraint> = Vec::new();
    let mut coords: Vec<Option<Coordinate>> = vec![None; dims];
    for j in 0..x_dims {
        let case = if j == range_dim {
            let (constraints, assign) =
                pullback::range_case(j, source_domain[j], &lower[j].results, &upper[j].results, &bounds)
                    .map_err(|why| refuse(&why))?;
            Case { constraints, assign: assign.map(|(rd, los, his)| (rd, Coordinate::Box(los, his))) }
        } else {
            match &pullback::cases(j, source_domain[j], &lower[j].results, &caps[j].results, &bounds)
                .map_err(|why| refuse(&why))?[..]
            {
                [case] => case.clone(),
                _ => return Err(refuse("a clamped point coordinate beside the range")),
            }
        };
        constraints.extend(case.constraints);
        if let Some((rd, coordinate)) = case.assign {
            if coords[rd].is_some() {
                return Err(refuse("one reader dimension in several coordinates"));
            }
            coords[rd] = Some(coordinate);
        }
    }
    // The reader's point: expressions of q, and at most one dimension that
    // varies (over an interval).
    let mut point: Vec<AffineExpr> = Vec::new();
    let mut varying: Option<(Vec<AffineExpr>, Vec<AffineExpr>)> = None;
    for (rd, coordinate) in coords.into_iter().enumerate() {
        let extent = AffineExpr::Symbol(bounds[rd]);
        let (los, his) = match coordinate {
            Some(Coordinate::Point(e)) => {
                point.push(e);
                continue;
            }
            Some(Coordinate::Box(los, his)) => (los, his),
            Some(Coordinate::Range(..) | Coordinate::Strided(..)) => {
                return Err(refuse("a coordinate with floordiv or mod beside the range"));
            }
            None => (vec![AffineExpr::Constant(0)], vec![extent]),
        };
        if varying.is_some() {
            return Err(refuse("several reader dimensions reading one point (not yet)"));
        }
        point.push(AffineExpr::Dim(x_dims));
        varying = Some((los, his));
    }
    let pieces = active_pieces(&reader.branches, b, &point, x_dims).map_err(|why| refuse(&why))?;
    let mut plan = Plan {
        k,
        read: read.clone(),
        x,
        what: what.clone(),
        range_dim,
        carry,
        on,
        collapses,
        units,
        constraints,
        point,
        varying,
        pieces,
        requests: Vec::new(),
        others: Vec::new(),
    };
    let mut frame = plan.frame(branch, program);
    frame.build(&plan.on, &plan.collapses)?;
    let requests = std::mem::take(&mut frame.requests);
    plan.requests = requests;
    Ok(plan)
}

/// `plans` with those of reads of one range whose sources share a domain
/// and an element type (and so the reader points and pieces) joined into
/// the first one's frame: the union of their paths, collapses and units,
/// and the requests of the joined frame.
fn join<'c>(
    plans: Vec<Plan<'c>>,
    branch: &Branch<'c>,
    program: &Program<'c>,
) -> Result<Vec<Plan<'c>>, PassDiagnostic<'c>> {
    let mut out: Vec<Plan<'c>> = Vec::new();
    for plan in plans {
        let fits = |lead: &Plan<'c>| {
            let (a, b) = (&program.tensors[lead.x], &program.tensors[plan.x]);
            same_range(branch, lead.k, plan.k)
                && a.domain == b.domain
                && a.point.element == b.point.element
                && lead.range_dim == plan.range_dim
                && lead.point == plan.point
                && lead.varying == plan.varying
                && lead.constraints == plan.constraints
                && lead.pieces == plan.pieces
        };
        match out.iter_mut().find(|lead| fits(lead)) {
            Some(lead) => {
                for (n, on) in plan.on.iter().enumerate() {
                    lead.on[n] |= *on;
                }
                lead.others.push((plan.k, plan.x));
            }
            None => out.push(plan),
        }
    }
    for lead in out.iter_mut().filter(|p| !p.others.is_empty()) {
        let (on, carry) = (&lead.on, &lead.carry);
        lead.units = softmax::all(&branch.nodes)
            .into_iter()
            .filter(|u| on[u.p] && matches!(carry[u.p], Carry::Axis(_)))
            .collect();
        let silent: Vec<usize> = lead
            .units
            .iter()
            .filter(|u| softmax::closed(&branch.nodes, u))
            .flat_map(|u| u.inner.iter().copied())
            .collect();
        lead.collapses =
            (0..branch.nodes.len()).filter(|&c| on[c] && carry[c] == Carry::Collapse && !silent.contains(&c)).collect();
        let reads = lead.reads(program);
        let mut frame = lead.frame(branch, program);
        frame.build_all(&lead.on, &lead.collapses, &reads)?;
        lead.requests = std::mem::take(&mut frame.requests);
    }
    Ok(out)
}

impl<'c> Plan<'c> {
    /// The reads the frame differentiates, with their sources' point types.
    fn reads(&self, program: &Program<'c>) -> Vec<(usize, PointType)> {
        std::iter::once((self.k, self.x))
            .chain(self.others.iter().copied())
            .map(|(k, x)| (k, program.tensors[x].point.clone()))
            .collect()
    }
}

/// The planned gradients of the range reads of one branch: the element
/// frames to build and the row values they read at the reader's points
/// (the *stash*, which the reader's own backward sweep computes beside the
/// cotangents of its point reads: `cotangents` in `temporal_autodiff.rs`).
pub(super) struct Planned<'c> {
    plans: Vec<Plan<'c>>,
    pub requests: Vec<Stash>,
}

/// Plans the gradients of the range reads `pivots` of `branch` (branch
/// `b` of reader `r`).
pub(super) fn prepare<'c>(
    program: &Program<'c>,
    r: usize,
    b: usize,
    branch: &Branch<'c>,
    pivots: &[usize],
) -> Result<Planned<'c>, PassDiagnostic<'c>> {
    let plans: Vec<Plan<'c>> = pivots.iter().map(|&k| plan(program, r, b, branch, k)).collect::<Result<_, _>>()?;
    let plans = join(plans, branch, program)?;
    let mut requests: Vec<Stash> = Vec::new();
    for plan in &plans {
        for item in &plan.requests {
            if !requests.contains(item) {
                requests.push(*item);
            }
        }
    }
    Ok(Planned { plans, requests })
}

/// The nodes whose cotangents (in the reader's backward sweep) the stash
/// of `requests` needs.
pub(super) fn swept(requests: &[Stash]) -> Vec<usize> {
    requests
        .iter()
        .filter_map(|s| match s {
            Stash::Cotangent(c) | Stash::SoftmaxDot(c) => Some(*c),
            _ => None,
        })
        .collect()
}

/// The value of each of `requests` in `body` (a copy of `branch`'s nodes
/// and its backward sweep, whose cotangents are `found` and whose softmax
/// units computed the sums `dots`).
pub(super) fn stash_values(
    body: &mut Body,
    branch: &Branch,
    requests: &[Stash],
    found: &HashMap<usize, usize>,
    dots: &HashMap<usize, usize>,
) -> Vec<usize> {
    let mut values = Vec::new();
    for item in requests {
        values.push(match *item {
            Stash::Forward(n) => n,
            Stash::Cotangent(c) => match found.get(&c) {
                Some(&ct) => ct,
                None => body.zeros(&branch.nodes[c].ty),
            },
            Stash::Count(c) => {
                let NodeKind::Reduce(_, a, axis) = branch.nodes[c].kind else { unreachable!("a mean") };
                let ones = body.like(a, 1.0, branch.nodes[c].ty.element);
                body.reduce(ReduceKind::Sum, ones, axis)
            }
            Stash::SoftmaxDot(p) => {
                let axis = softmax::find(&branch.nodes, p).expect("a softmax unit").axis;
                match (dots.get(&p), found.get(&p)) {
                    (Some(&dot), _) => dot,
                    (None, Some(&dp)) => {
                        let product = body.mul(p, dp);
                        body.reduce(ReduceKind::Sum, product, axis)
                    }
                    (None, None) => {
                        let mut ty = branch.nodes[p].ty.clone();
                        ty.shape.remove(axis);
                        body.zeros(&ty)
                    }
                }
            }
        });
    }
    values
}

/// The contributions of the planned range reads of `branch` (branch `b`
/// of reader `r`) to their sources' adjoints: per read (or joined reads)
/// and per piece of reader points a tensor over the read's source's
/// domain, reading the row values it needs from the tensors `stash` over
/// the reader's domain (where each request lies in them).
pub(super) fn contributions<'c>(
    program: &mut Program<'c>,
    g_name: &str,
    r: usize,
    b: usize,
    branch: &Branch<'c>,
    planned: Planned<'c>,
    stash: Vec<StashTensor>,
) -> Result<Vec<(usize, Contribution<'c>)>, PassDiagnostic<'c>> {
    let num_symbols = program.dims.len();
    let reader = program.tensors[r].clone();
    let plans = planned.plans;
    let location = plans[0].read.location;
    // Each packed value in a tensor of its own (cut from the packed one
    // point by point), so that reads of ranges of it need no slice of a
    // dynamic shape.
    let mut parts_split: HashMap<(usize, Stash), usize> = HashMap::new();
    for (f, parts) in &stash {
        for (item, extract) in parts {
            let Some((offset, part)) = extract else { continue };
            let dims = reader.domain.len();
            let mut body = Body::new(location);
            let ty = program.tensors[*f].point.clone();
            let whole = body.push(NodeKind::Read { source: *f, index: super::identity(dims, num_symbols) }, ty);
            let value = super::unpack(&mut body, whole, Some(&(*offset, part.clone())));
            let name = format!("{g_name}$f${}${}${}", reader.name, b, parts_split.len());
            let t = super::push_tensor(program, name, reader.domain.clone(), part.clone(), location);
            program.tensors[t].branches =
                vec![Branch { when: super::universe(dims, num_symbols), nodes: body.nodes, result: value, location }];
            parts_split.insert((*f, *item), t);
        }
    }
    let mut out = Vec::new();
    for plan in &plans {
        let (k, read, x, point, varying) = (plan.k, &plan.read, plan.x, &plan.point, &plan.varying);
        let source_domain = program.tensors[x].domain.clone();
        let x_dims = source_domain.len();
        let x_point = program.tensors[x].point.clone();
        for (index, piece) in plan.pieces.iter().enumerate() {
            let mut frame = plan.frame(branch, program);
            let mut when = plan.constraints.clone();
            when.extend(piece.conditions.iter().cloned());
            // The stashed values at the reader points reading q.
            let map = |results: Vec<AffineExpr>| AffineMap { num_dims: x_dims, num_symbols, results };
            let (mut l, mut u) = (Vec::new(), Vec::new());
            let mut interval = None;
            for e in point {
                if *e == AffineExpr::Dim(x_dims) {
                    let (mut los, mut his) = varying.clone().expect("a varying dimension");
                    los.extend(piece.los.iter().cloned());
                    his.extend(piece.his.iter().cloned());
                    for lo in &los {
                        for hi in &his {
                            let c = ge0(sub(sub(hi.clone(), lo.clone()), AffineExpr::Constant(1)));
                            if !when.contains(&c) {
                                when.push(c);
                            }
                        }
                    }
                    l.push(map(los.clone()));
                    u.push(map(his.clone()));
                    interval = Some(());
                } else {
                    l.push(map(vec![e.clone()]));
                    u.push(map(Vec::new()));
                }
            }
            for (f, parts) in &stash {
                for (item, extract) in parts {
                    let f = match extract {
                        None => *f,
                        Some(_) => parts_split[&(*f, *item)],
                    };
                    let point_ty = program.tensors[f].point.clone();
                    let value = if interval.is_some() {
                        let mut shape = vec![DYNAMIC];
                        shape.extend(&point_ty.shape);
                        let caps = vec![map(Vec::new()); point.len()];
                        let kind = NodeKind::ReadRange { source: f, lower: l.clone(), upper: u.clone(), caps };
                        frame.body.push(kind, PointType { shape, element: point_ty.element })
                    } else {
                        frame.body.push(NodeKind::Read { source: f, index: map(point.clone()) }, point_ty)
                    };
                    frame.values.insert(*item, value);
                }
            }
            let reads = plan.reads(program);
            let results = frame.build_all(&plan.on, &plan.collapses, &reads)?;
            // Several reads' cotangents side by side, flattened.
            let (result, a_point, extracts) = if let [only] = results[..] {
                (only, x_point.clone(), vec![None])
            } else {
                let mut packed: Option<usize> = None;
                let mut extracts = Vec::new();
                let mut offset = 0;
                for (&v, (_, point)) in results.iter().zip(&reads) {
                    let size = point.num_elements() as i64;
                    let flat = frame.body.reshape(v, &[size]);
                    packed = Some(packed.map_or(flat, |p| frame.body.concat(p, flat, 0)));
                    extracts.push(Some((offset, point.clone())));
                    offset += size;
                }
                let packed = packed.expect("several reads");
                (packed, frame.body.ty(packed).clone(), extracts)
            };
            let mut a_branch = Branch {
                when: IntegerSet { num_dims: x_dims, num_symbols, constraints: when },
                nodes: frame.body.nodes,
                result,
                location: read.location,
            };
            let live = live_nodes(&a_branch);
            let identity: Vec<usize> = (0..a_branch.nodes.len()).collect();
            super::compact(&mut a_branch, &live, &identity);
            let mut branches = vec![a_branch];
            if !branches[0].when.is_universe() {
                branches.push(super::zero_branch(super::universe(x_dims, num_symbols), &a_point, read.location));
            }
            let a_name = format!("{g_name}$a${}${}${}${}", reader.name, b, k, index);
            let a = super::push_tensor(program, a_name, source_domain.clone(), a_point.clone(), read.location);
            program.tensors[a].branches = branches;
            let identity = map((0..x_dims).map(AffineExpr::Dim).collect());
            let sources = std::iter::once(x).chain(plan.others.iter().map(|&(_, x)| x));
            for (source, extract) in sources.zip(extracts) {
                let read_a = NodeKind::Read { source: a, index: identity.clone() };
                out.push((source, (read_a, a_point.clone(), extract, read.location)));
            }
        }
    }
    Ok(out)
}

/// A stash tensor and where each stashed value sits in it.
pub(super) type StashTensor = (usize, Vec<(Stash, Option<(i64, PointType)>)>);
