//! The scheduler: a legal execution order for every program whose
//! cycles move in time by constant shifts, and where each tensor is stored.
//!
//! Algorithm: strongly connected components of the SDG (Tarjan, via
//! petgraph), placed in dependence order (list scheduling on the
//! condensation): among the components whose sources are placed, first one
//! that fuses into the current nest while the result is still legal, then
//! the one that is the last reader of the most tensors (their stores are
//! freed soonest), ties in declaration order. A nest's loops are the domain
//! of its deepest tensor; a tensor whose domain is the outer loops of a
//! nest joins it (imperfect nesting). Every read between tensors of a nest must be
//! bounded relative to the reader's variables: per dimension an interval of
//! shifts, `[c, c]` for a point `d + c`, `(-inf, 0]` for the prefix
//! `0:d+1`, `[1, +inf)` for `d+1:D`. The intervals use what the read's
//! branch condition says about the reader's variable (`t <= T - 2` makes
//! `min(t + 1, T - 1)` the point `t + 1`) besides `0 <= d < D`. Taking the dimensions outer to inner,
//! each must run in a direction in which every read not yet ordered by an
//! outer dimension stays in the past or present (forward for `t - k` and
//! prefixes, backward for `t + k` and suffixes); reads that may touch the
//! present point stay for the inner dimensions, and those left at the end
//! order the body (a same-point cycle there is an error). Reads between
//! nests may use any index: the source nest runs first and stores every
//! point that a later nest can read.
//!
//! A component with no such nest may still be a cycle carried by an outer
//! loop alone: a training run whose parameters `W[i]` read the previous
//! iteration's gradient, with a forward recurrence over `t` and its
//! adjoint running backward inside each iteration. When every read
//! between the component's tensors reaches into the past along one
//! dimension `i` they all have (in one direction, some strictly), `i`
//! becomes the outer loop of a *sequence nest*, and the reads that may see
//! `i`'s present point are scheduled again, recursively, inside one
//! iteration: their own components in dependence order, fused into nests
//! with their own loops and directions (a forward loop over `t`, then a
//! backward one; [`Nest::inner`]), or carried again by a further
//! dimension. A ready component joins a sequence nest when it fits in its
//! loops. Consumers walk every nest as a tree of loops ([`Step`]).
//!
//! Where each tensor lives is chosen afterwards from the same read
//! summaries ([`store_selection`]).

mod sink;
pub mod store_selection;
pub mod swaps;
mod tree;

pub(crate) use tree::Layout;
pub use tree::Step;

use melior::ir::Location;
use petgraph::graph::{DiGraph, NodeIndex};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use tempo_passes::data_reads::data_groups;
use tempo_passes::diagnostics::PassDiagnostic;
use tempo_passes::program::Program;
pub(crate) use tempo_passes::shifts::{Edge, Shift, in_past, read_edges, touches_present};

pub use store_selection::Storage;

/// One loop nest and the tensors computed in its body. Consumers walk it
/// as a tree of loops ([`Nest::steps`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nest {
    /// Loop dimensions, outer to inner (empty: computed once). For a
    /// sequence nest, the loops around all of its inner nests.
    pub dims: Vec<usize>,
    /// Direction of each loop: `true` from 0 up, `false` from the bound down.
    pub forward: Vec<bool>,
    /// Tensors in body order (for a sequence nest, its inner nests' bodies
    /// one after the other). A tensor sits in the first `domain.len()`
    /// loops; a shallower tensor between two deeper ones closes the inner
    /// loops, which open again after it.
    pub body: Vec<usize>,
    /// Empty for a plain nest. A sequence nest (a cycle carried only by its
    /// outer loops: every read going around it reaches strictly into their
    /// past) runs these nests one after the other in each iteration of the
    /// loops over `dims`; each begins with the loops `dims` in the same
    /// directions and goes on with its own (in one iteration `i` of a
    /// training run: a forward loop over `t`, then a backward one).
    pub inner: Vec<Nest>,
    /// Retiming of a plain nest (empty for most): tensors computed a fixed
    /// number of iterations late along the nest's last loop, which then
    /// runs that many iterations past its bound. In iteration `v` of that
    /// loop, a tensor with lag `l` computes its point `v - l` when that is
    /// in `0..bound` (only forward loops are retimed, and only tensors in
    /// every loop of the nest). So `G[t]` reading `r[t : t+n]` runs in the
    /// forward loop that computes `r`, `n - 1` steps behind it, and `r`
    /// keeps a window of `n` points instead of every one.
    pub lags: BTreeMap<usize, i64>,
}

/// The most iterations a tensor may be computed late ([`Nest::lags`]).
pub const MAX_LAG: i64 = 1 << 16;

impl Schedule {
    /// How many iterations late tensor `t` is computed ([`Nest::lags`]).
    pub fn lag(&self, t: usize) -> i64 {
        self.nests.iter().map(|n| n.lag(t)).max().unwrap_or(0)
    }
}

impl Nest {
    /// How many iterations late tensor `t` is computed along the last loop
    /// of its plain nest (0 when not retimed or not in this nest).
    pub fn lag(&self, t: usize) -> i64 {
        self.plain_nest_of(t).and_then(|n| n.lags.get(&t).copied()).unwrap_or(0)
    }

    /// The shifts of read `e` between iterations of the loops rather than
    /// between points: along a retimed loop, a reader computed `l_r` late
    /// reading a source computed `l_s` late sees the source's point `p + c`
    /// that was computed `c + l_s - l_r` iterations from its own.
    pub(crate) fn iteration_shifts(&self, e: &Edge) -> Option<HashMap<usize, Shift>> {
        let mut shifts = e.shifts.clone()?;
        if let Some(plain) = self.plain_nest_of(e.reader)
            && !plain.lags.is_empty()
            && plain.body.contains(&e.source)
        {
            let delta = plain.lags.get(&e.source).unwrap_or(&0) - plain.lags.get(&e.reader).unwrap_or(&0);
            if let (true, Some(d)) = (delta != 0, plain.dims.last())
                && let Some(s) = shifts.get_mut(d)
            {
                *s = (s.0.map(|x| x + delta), s.1.map(|x| x + delta));
            }
        }
        Some(shifts)
    }
}

/// The smallest lags (iterations late, [`Nest::lags`]) along a forward
/// loop over `d` under which every read in `edges` stays in the past or
/// present of its reader's iteration: `l_r >= l_s + c` for the farthest
/// shift `c` of each read (a longest path, Bellman-Ford). `None` when a
/// read reaches unboundedly far ahead, or a cycle reaches ahead (no lag
/// satisfies it), or a lag would exceed [`MAX_LAG`].
fn retime(tensors: &[usize], edges: &[&&Edge], d: usize) -> Option<BTreeMap<usize, i64>> {
    let mut lags: HashMap<usize, i64> = tensors.iter().map(|&t| (t, 0)).collect();
    let constraints: Vec<(usize, usize, i64)> =
        edges.iter().map(|e| Some((e.reader, e.source, e.shifts.as_ref()?.get(&d)?.1?))).collect::<Option<_>>()?;
    for _ in 0..=tensors.len() {
        let mut changed = false;
        for &(reader, source, reach) in &constraints {
            let need = lags[&source] + reach;
            if lags[&reader] < need {
                if need > MAX_LAG {
                    return None;
                }
                lags.insert(reader, need);
                changed = true;
            }
        }
        if !changed {
            return Some(lags.into_iter().filter(|&(_, l)| l != 0).collect());
        }
    }
    None
}

/// The schedule of a whole program.
#[derive(Clone, Debug)]
pub struct Schedule {
    pub nests: Vec<Nest>,
    /// Storage of each tensor (by tensor index).
    pub storage: Vec<Storage>,
    /// The tensors swapped under a memory budget ([`Schedule::plan_swaps`]).
    pub swaps: BTreeMap<usize, swaps::Swap>,
}

impl Schedule {
    /// Plans swaps for a memory budget of `budget` bytes at the bound values
    /// `bounds` (by dimension; see [`swaps`]).
    pub fn plan_swaps(&mut self, program: &Program, budget: u64, bounds: &[Option<i64>]) {
        self.swaps = swaps::plan(program, self, budget, bounds);
    }

    /// Schedules `program`, or explains why no schedule exists.
    pub fn new<'c>(program: &Program<'c>) -> Result<Self, Vec<PassDiagnostic<'c>>> {
        data_groups(program).map_err(|d| vec![d])?;
        let edges = read_edges(program);
        // What uses a stopped dimension's bound runs after the stop.
        let ordering: Vec<Edge> = edges.iter().cloned().chain(tempo_passes::stops::stop_edges(program)).collect();
        let nests = sink::sink(program, &ordering, order_nests(program, &ordering, &Search::new(true))?);
        let storage = store_selection::select_stores(program, &nests, &edges);
        Ok(Self { nests, storage, swaps: BTreeMap::new() })
    }

    /// Checks that `program` can be scheduled, with the errors
    /// [`Schedule::new`] gives where it cannot: the checks of a program as
    /// written before the optimizations change it, which need no good
    /// schedule. Each component's own nest in dependence order (no fusion,
    /// no sinking, no stores) is a schedule; only where one is not found
    /// is the whole search run, so that the verdict and its diagnostics are
    /// exactly those of [`Schedule::new`] (a fused nest may order what the
    /// components' own nests do not). The 16-layer PPO program as written
    /// (before `-O2`): 1.34 s with fusion, 0.05 s without.
    pub fn check<'c>(program: &Program<'c>) -> Result<(), Vec<PassDiagnostic<'c>>> {
        data_groups(program).map_err(|d| vec![d])?;
        let ordering: Vec<Edge> =
            read_edges(program).into_iter().chain(tempo_passes::stops::stop_edges(program)).collect();
        if order_nests(program, &ordering, &Search::new(false)).is_ok() {
            return Ok(());
        }
        order_nests(program, &ordering, &Search::new(true)).map(|_| ())
    }

    /// Checks a schedule given from outside (e.g. read back from the
    /// schedule level's IR) and chooses the stores for it: every computed
    /// tensor is placed once, each nest loops over exactly its tensors'
    /// domain, a nest reads only from itself and earlier nests, and inside
    /// a nest the loop directions and the body order respect every read.
    pub fn with_nests<'c>(
        program: &Program<'c>,
        nests: Vec<Nest>,
        location: Location<'c>,
    ) -> Result<Self, Vec<PassDiagnostic<'c>>> {
        data_groups(program).map_err(|d| vec![d])?;
        let edges = read_edges(program);
        let ordering: Vec<Edge> = edges.iter().cloned().chain(tempo_passes::stops::stop_edges(program)).collect();
        let fail = |message: String| vec![PassDiagnostic::new(location, message)];
        let mut nest_of = HashMap::new();
        for (k, nest) in nests.iter().enumerate() {
            if nest.dims.len() != nest.forward.len() {
                return Err(fail(format!("nest {k} has a direction per loop")));
            }
            for &t in &nest.body {
                if program.tensors[t].is_input {
                    return Err(fail(format!("'{}' is an input; it is not computed", program.tensors[t].name)));
                }
                if nest_of.insert(t, k).is_some() {
                    return Err(fail(format!("'{}' is computed twice in the schedule", program.tensors[t].name)));
                }
            }
        }
        if let Some(t) = (0..program.tensors.len()).find(|&t| !program.tensors[t].is_input && !nest_of.contains_key(&t))
        {
            return Err(fail(format!("the schedule does not compute '{}'", program.tensors[t].name)));
        }
        for e in ordering.iter().filter(|e| !program.tensors[e.source].is_input) {
            if nest_of[&e.source] > nest_of[&e.reader] {
                return Err(vec![PassDiagnostic::new(
                    e.location,
                    format!(
                        "the schedule computes '{}' after '{}', which reads it ({})",
                        program.tensors[e.source].name, program.tensors[e.reader].name, e.text
                    ),
                )]);
            }
        }
        for nest in &nests {
            check_shape(program, nest, &[], location).map_err(|d| vec![d])?;
            check_nest(program, nest, &edges).map_err(|d| vec![d])?;
        }
        let storage = store_selection::select_stores(program, &nests, &edges);
        Ok(Self { nests, storage, swaps: BTreeMap::new() })
    }
}

/// Orders the strongly connected components and fuses them into nests.
fn order_nests<'c>(
    program: &Program<'c>,
    edges: &[Edge<'c>],
    search: &Search<'c>,
) -> Result<Vec<Nest>, Vec<PassDiagnostic<'c>>> {
    let computed: Vec<usize> = (0..program.tensors.len()).filter(|&i| !program.tensors[i].is_input).collect();
    let edges: Vec<&Edge> = edges.iter().collect();
    order_group(program, &computed, &edges, &[], search)
}

/// How [`order_group`] searches, and what it remembers.
///
/// `fuse`: whether components are fused into the nest before them.
/// Fusion is what makes a good schedule (values read in the step that
/// computes them stay in loop-local stores) and most of the scheduler's
/// work: each candidate is a nest of the growing fused set, checked
/// again. Whether a program can be scheduled at all does not need it:
/// every component's own nest, in dependence order, is a schedule.
///
/// `memo`: the nests found for a list of tensors inside open loops (and
/// whether a sequence nest may carry them), in one search over one
/// program's reads. The reads a nest of tensors `S` inside loops `L` is
/// ordered by are always the reads between members of `S` that may see
/// the present point along every loop of `L`, so the answer depends on
/// the key alone. Fusing a component into a sequence nest (a training
/// run's loop over iterations) schedules the iteration again, whose own
/// fusion attempts are mostly those of the attempt before: the 16-layer
/// PPO program made 2026 attempts of 187 tensors on average, TODO.
pub(crate) struct Search<'c> {
    fuse: bool,
    memo: RefCell<HashMap<(Vec<usize>, Vec<(usize, bool)>, bool), Result<Nest, PassDiagnostic<'c>>>>,
}

impl Search<'_> {
    pub(crate) fn new(fuse: bool) -> Self {
        Search { fuse, memo: RefCell::new(HashMap::new()) }
    }
}

/// The nests computing `tensors` inside open loops `outer` (dimension and
/// direction, outer to inner; none at the top level), ordered by `edges`
/// (the reads between them that the outer loops leave unordered: those
/// that may see the present point along every outer dimension).
///
/// The strongly connected components of those reads are placed in
/// dependence order among those whose sources are placed: first one that
/// fuses into the last nest (its reads then stay in loop-local stores),
/// otherwise the one that is the last reader of the most tensors (so that
/// their stores are freed soonest), ties by declaration order.
fn order_group<'c>(
    program: &Program<'c>,
    tensors: &[usize],
    edges: &[&Edge<'c>],
    outer: &[(usize, bool)],
    search: &Search<'c>,
) -> Result<Vec<Nest>, Vec<PassDiagnostic<'c>>> {
    let edges: Vec<&Edge> = edges_within(program, tensors, edges);
    // Components in dependence order.
    let mut graph = DiGraph::<usize, ()>::new();
    let nodes: HashMap<usize, NodeIndex> = tensors.iter().map(|&i| (i, graph.add_node(i))).collect();
    for e in &edges {
        graph.add_edge(nodes[&e.reader], nodes[&e.source], ());
    }
    let components = petgraph::algo::tarjan_scc(&graph);
    let mut component_of = HashMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (c, component) in components.iter().enumerate() {
        let mut tensors: Vec<usize> = component.iter().map(|n| graph[*n]).collect();
        tensors.sort();
        for &t in &tensors {
            component_of.insert(t, c);
        }
        members.push(tensors);
    }
    let mut needs: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); members.len()];
    let mut readers_of: HashMap<usize, BTreeSet<usize>> = HashMap::new();
    for e in &edges {
        let (r, s) = (component_of[&e.reader], component_of[&e.source]);
        if r != s {
            needs[r].insert(s);
            readers_of.entry(s).or_default().insert(r);
        }
    }
    let mut nests: Vec<Nest> = Vec::new();
    let mut errors = Vec::new();
    let mut done = vec![false; members.len()];
    // Each component's own nest, once asked for.
    let mut own: Vec<Option<Result<Nest, PassDiagnostic<'c>>>> = (0..members.len()).map(|_| None).collect();
    let mut own_nest = |c: usize| -> Result<Nest, PassDiagnostic<'c>> {
        own[c].get_or_insert_with(|| nest_for(program, &members[c], &edges, outer, true, search)).clone()
    };
    for _ in 0..members.len() {
        let mut ready: Vec<usize> =
            (0..members.len()).filter(|&c| !done[c] && needs[c].iter().all(|&s| done[s])).collect();
        ready.sort_by_key(|&c| members[c][0]);
        // Where the last nest or the component is a sequence nest (a cycle
        // carried by outer loops), the fused nest may be one too: what runs
        // in those loops' iterations joins them.
        let fusion = nests.last().filter(|_| search.fuse).and_then(|last| {
            ready.iter().find_map(|&c| {
                let mut fused: Vec<usize> = last.body.clone();
                fused.extend(&members[c]);
                let carry = !last.inner.is_empty()
                    || (members[c].len() > 1 && own_nest(c).is_ok_and(|nest| !nest.inner.is_empty()));
                nest_for(program, &fused, &edges, outer, carry, search).ok().map(|nest| (c, nest))
            })
        });
        if let Some((c, nest)) = fusion {
            done[c] = true;
            *nests.last_mut().expect("non-empty") = nest;
            continue;
        }
        let frees = |c: usize| {
            needs[c]
                .iter()
                .filter(|s| readers_of.get(s).is_some_and(|readers| readers.iter().all(|&r| r == c || done[r])))
                .count()
        };
        let next = *ready
            .iter()
            .min_by_key(|&&c| (std::cmp::Reverse(frees(c)), members[c][0]))
            .expect("the condensation of a graph is acyclic");
        done[next] = true;
        match own_nest(next) {
            Ok(nest) => nests.push(nest),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(nests)
}

/// The nest of a data group (reads through data on a cycle,
/// [`tempo_passes::data_reads`]) when `tensors` are exactly its tensors: one
/// loop over the group's dimension, which the lowering runs depth by depth
/// (its order is the data's), the tensors in the group's order.
fn data_nest(program: &Program, tensors: &[usize]) -> Option<Nest> {
    // A data group's tensors read one of them through data: without such a
    // read among `tensors`, none (without looking at the whole program,
    // which the scheduler would do once per candidate nest).
    let member = |t: usize| tensors.contains(&t);
    let reads_member_through_data =
        tensors.iter().any(|&t| {
            program.tensors[t].branches.iter().flat_map(|b| &b.nodes).any(
                |node| matches!(node.kind, tempo_passes::program::NodeKind::ReadAt { source, .. } if member(source)),
            )
        });
    if !reads_member_through_data {
        return None;
    }
    let mut sorted = tensors.to_vec();
    sorted.sort();
    data_groups(program).ok()?.into_iter().find_map(|g| {
        let mut members = g.tensors.clone();
        members.sort();
        (members == sorted).then(|| Nest {
            dims: vec![g.dim],
            forward: vec![true],
            body: g.tensors,
            inner: Vec::new(),
            lags: Default::default(),
        })
    })
}

/// Whether `nest` is the nest of a data group ([`data_nest`]).
pub(crate) fn is_data_nest(program: &Program, nest: &Nest) -> bool {
    nest.inner.is_empty()
        && data_nest(program, &nest.body).is_some_and(|d| d.dims == nest.dims && d.forward == nest.forward)
}

/// How many loops a tensor sits in: the size of its domain.
fn depth(program: &Program, t: usize) -> usize {
    program.tensors[t].domain.len()
}

/// Checks that each tensor of `nest` sits in the loops over its domain
/// (the first `domain.len()` loops of the nest, at least one when the nest
/// has loops).
fn check_structure<'c>(program: &Program<'c>, dims: &[usize], tensors: &[usize]) -> Result<(), PassDiagnostic<'c>> {
    for &t in tensors {
        let k = depth(program, t);
        let domain: BTreeSet<_> = program.tensors[t].domain.iter().collect();
        if k > dims.len() || domain != dims[..k].iter().collect() || (k == 0 && !dims.is_empty()) {
            return Err(PassDiagnostic::new(
                program.tensors[t].location,
                format!(
                    "'{}' cannot be computed in loops over ({}): its domain is not the outer loops of the nest",
                    program.tensors[t].name,
                    dims.iter().map(|&d| program.dims[d].name.as_str()).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Checks the shape of `nest` inside open loops `outer`: a direction per
/// loop, the open loops as its first ones, each tensor in the loops over
/// its domain; a sequence nest has loops of its own around inner nests of
/// that shape, and its body is theirs.
fn check_shape<'c>(
    program: &Program<'c>,
    nest: &Nest,
    outer: &[(usize, bool)],
    location: Location<'c>,
) -> Result<(), PassDiagnostic<'c>> {
    let fail = |message: &str| Err(PassDiagnostic::new(location, message.to_string()));
    if outer.is_empty() && is_data_nest(program, nest) {
        return Ok(());
    }
    if nest.dims.len() != nest.forward.len() {
        return fail("a nest has a direction per loop");
    }
    let prefix: Vec<(usize, bool)> = nest.dims.iter().copied().zip(nest.forward.iter().copied()).collect();
    if prefix.len() < outer.len() || prefix[..outer.len()] != *outer {
        return fail("an inner nest begins with the loops of its sequence");
    }
    for (&t, &lag) in &nest.lags {
        let name = &program.tensors[t].name;
        if !nest.inner.is_empty() || !nest.body.contains(&t) {
            return fail(&format!("'{name}' has a lag outside the plain nest computing it"));
        }
        if !(1..=MAX_LAG).contains(&lag) {
            return fail(&format!("the lag of '{name}' is {lag}; lags run from 1 to {MAX_LAG}"));
        }
        if depth(program, t) != nest.dims.len() || nest.dims.len() <= outer.len() || nest.forward.last() != Some(&true)
        {
            return fail(&format!(
                "'{name}' has a lag, but only tensors in every loop of their nest, along a forward last loop of its own, are computed late"
            ));
        }
    }
    if nest.inner.is_empty() {
        return check_structure(program, &nest.dims, &nest.body);
    }
    if nest.dims.len() <= outer.len() {
        return fail("a sequence of nests is inside a loop of its own");
    }
    let body: Vec<usize> = nest.inner.iter().flat_map(|n| n.body.iter().copied()).collect();
    if body != nest.body {
        return fail("a sequence nest's body is its inner nests' bodies");
    }
    nest.inner.iter().try_for_each(|n| check_shape(program, n, &prefix, location))
}

/// Checks that `nest`'s loop directions and body order respect every read
/// between its tensors. A read is ordered by the first loop, outer to
/// inner among the loops whose iteration reader and source share, along
/// which it reaches strictly into the past; a read that sees the present
/// along all of them needs the source computed earlier.
fn check_nest<'c, 'e>(
    program: &Program<'c>,
    nest: &Nest,
    edges: impl IntoIterator<Item = &'e Edge<'c>>,
) -> Result<(), PassDiagnostic<'c>>
where
    'c: 'e,
{
    if is_data_nest(program, nest) {
        return Ok(());
    }
    // (The shape of a sequence nest is checked by whoever builds or reads it.)
    if nest.inner.is_empty() {
        check_structure(program, &nest.dims, &nest.body)?;
    }
    let layout = Layout::of(program, nest);
    let mut member = vec![false; program.tensors.len()];
    for &t in &nest.body {
        member[t] = true;
    }
    for e in edges.into_iter().filter(|e| member[e.reader] && member[e.source]) {
        let Some(shifts) = nest.iteration_shifts(e) else {
            return Err(PassDiagnostic::new(
                e.location,
                format!("read {} is inside one nest but is not bounded relative to the reader's variables", e.text),
            ));
        };
        let mut present = true;
        for k in 0..layout.shared_loops(e.reader, e.source) {
            let (d, forward) = layout.loop_at(e.reader, k);
            let shift = shifts[&d];
            if !in_past(shift, forward) {
                return Err(PassDiagnostic::new(
                    e.location,
                    format!(
                        "the schedule runs '{}' {} but read {} by '{}' then reaches a point not yet computed",
                        program.dims[d].name,
                        if forward { "forward" } else { "backward" },
                        e.text,
                        program.tensors[e.reader].name
                    ),
                ));
            }
            if !touches_present(shift) {
                present = false;
                break;
            }
        }
        if present && layout.position(e.source) >= layout.position(e.reader) {
            return Err(PassDiagnostic::new(
                e.location,
                format!(
                    "read {} by '{}' sees the point being computed, but the schedule does not compute '{}' first",
                    e.text, program.tensors[e.reader].name, program.tensors[e.source].name
                ),
            ));
        }
    }
    Ok(())
}

/// The loop nest computing `tensors` together inside open loops `outer`,
/// if legal. The loops are the dimensions of the deepest tensor, `outer`
/// first, in an order where every other tensor's domain is the outer loops
/// (layers `l` inside `t`: `h[t, l]` and `y[t]` share the `t` loop, `y`
/// placed after the `l` loop). The deepest tensor's domain order is tried
/// first; when the reads admit no loop directions in it, other orders are
/// (loop interchange: `x[i, t]` on a cycle with `w[t]` that reads
/// `x[T-1-?, t-1]` needs `t` outside `i`, and a shallower tensor over `t`
/// forces it too). Where no order works and `carry` allows, a sequence
/// nest: a loop along which every read reaches into the past, around the
/// nests of one iteration ([`carried_nest`]).
fn nest_for<'c>(
    program: &Program<'c>,
    tensors: &[usize],
    edges: &[&Edge<'c>],
    outer: &[(usize, bool)],
    carry: bool,
    search: &Search<'c>,
) -> Result<Nest, PassDiagnostic<'c>> {
    let key = (tensors.to_vec(), outer.to_vec(), carry);
    if let Some(found) = search.memo.borrow().get(&key) {
        return found.clone();
    }
    let found = find_nest(program, tensors, edges, outer, carry, search);
    search.memo.borrow_mut().insert(key, found.clone());
    found
}

/// [`nest_for`], searched.
fn find_nest<'c>(
    program: &Program<'c>,
    tensors: &[usize],
    edges: &[&Edge<'c>],
    outer: &[(usize, bool)],
    carry: bool,
    search: &Search<'c>,
) -> Result<Nest, PassDiagnostic<'c>> {
    if outer.is_empty()
        && let Some(nest) = data_nest(program, tensors)
    {
        return Ok(nest);
    }
    let deepest = *tensors.iter().max_by_key(|&&t| (depth(program, t), std::cmp::Reverse(t))).expect("non-empty");
    let mut orders = loop_orders(program, tensors, &program.tensors[deepest].domain);
    orders.retain(|order| order.iter().zip(outer).all(|(&d, &(o, _))| d == o) && order.len() >= outer.len());
    let Some(first) = orders.first() else {
        // No single order of loops nests every domain (parameters over
        // (i, e) with a rollout over (i, t)): a cycle carried by the shared
        // outer dimension may still be split into nests inside its loop.
        if carry
            && let Ok(nest) = carried_nest(program, tensors, edges, outer, &program.tensors[deepest].domain, search)
        {
            return Ok(nest);
        }
        let dims = &program.tensors[deepest].domain;
        let other = tensors
            .iter()
            .find(|&&t| !program.tensors[t].domain.iter().all(|d| dims.contains(d)))
            .or_else(|| tensors.iter().find(|&&t| t != deepest))
            .expect("another tensor");
        return Err(PassDiagnostic::new(
            program.tensors[*other].location,
            format!(
                "cannot schedule '{}' with '{}': tensors on one cycle must have nested domains",
                program.tensors[*other].name, program.tensors[deepest].name
            ),
        ));
    };
    let first_error = match nest_with_loops(program, tensors, edges, first.clone(), outer) {
        Ok(nest) => return Ok(nest),
        Err(e) => e,
    };
    if let Some(nest) =
        orders[1..].iter().find_map(|dims| nest_with_loops(program, tensors, edges, dims.clone(), outer).ok())
    {
        return Ok(nest);
    }
    if !carry {
        return Err(first_error);
    }
    match carried_nest(program, tensors, edges, outer, &program.tensors[deepest].domain, search) {
        Ok(nest) => Ok(nest),
        Err(inner) => Err(inner.unwrap_or(first_error)),
    }
}

/// A cycle carried by an outer loop: the polyhedral schedule of a training
/// run, a loop over iterations `i` around each iteration's forward loop
/// over `t` and then its backward one. Among the dimensions of `dims` (the
/// deepest tensor's, in order) that every tensor has and `outer` does not
/// open, the first along which every read between `tensors` reaches into
/// the past in one direction (each read going around the cycle strictly:
/// `W[i]` reading `g[i-1]`) becomes a loop around the nests of one
/// iteration, scheduled again from the reads it leaves unordered (those
/// that may see its present): their own components, in dependence order,
/// each with its own loops and directions.
///
/// `Err(None)` when no dimension carries the cycle; `Err(Some(_))` with
/// the first error scheduling an iteration where one does.
fn carried_nest<'c>(
    program: &Program<'c>,
    tensors: &[usize],
    edges: &[&Edge<'c>],
    outer: &[(usize, bool)],
    dims: &[usize],
    search: &Search<'c>,
) -> Result<Nest, Option<PassDiagnostic<'c>>> {
    let inside: Vec<&Edge> = edges_within(program, tensors, edges);
    if inside.iter().any(|e| e.shifts.is_none()) {
        return Err(None);
    }
    let mut first_error = None;
    for &d in dims {
        if outer.iter().any(|&(o, _)| o == d) || !tensors.iter().all(|&t| program.tensors[t].domain.contains(&d)) {
            continue;
        }
        let shift = |e: &Edge| e.shifts.as_ref().expect("bounded")[&d];
        // Something must go strictly into the past, or the loop orders nothing.
        if inside.iter().all(|e| touches_present(shift(e))) {
            continue;
        }
        for forward in [true, false] {
            if !inside.iter().all(|e| in_past(shift(e), forward)) {
                continue;
            }
            let unordered: Vec<&Edge> = inside.iter().copied().filter(|e| touches_present(shift(e))).collect();
            let mut loops = outer.to_vec();
            loops.push((d, forward));
            let nest = order_group(program, tensors, &unordered, &loops, search)
                .map_err(|mut e| e.swap_remove(0))
                .and_then(|mut nests| {
                    let nest = if nests.len() == 1 {
                        nests.pop().expect("one nest")
                    } else {
                        Nest::sequence(loops.iter().map(|l| l.0).collect(), loops.iter().map(|l| l.1).collect(), nests)
                    };
                    // Every read, those the loop carries included.
                    check_nest(program, &nest, inside.iter().copied()).map(|()| nest)
                });
            match nest {
                Ok(nest) => return Ok(nest),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
    }
    Err(first_error)
}

/// The orders of `dims` (the deepest tensor's domain, tried first) in which
/// every tensor's domain is a set of outer loops; none when the domains
/// are not nested.
fn loop_orders(program: &Program, tensors: &[usize], dims: &[usize]) -> Vec<Vec<usize>> {
    // At most 6! = 720 orders are looked at; deeper nests keep the
    // domain order alone.
    let mut candidates: Vec<Vec<usize>> = vec![dims.to_vec()];
    if dims.len() <= 6 {
        let mut permutation: Vec<usize> = (0..dims.len()).collect();
        while next_permutation(&mut permutation) {
            candidates.push(permutation.iter().map(|&k| dims[k]).collect());
        }
    }
    candidates.retain(|order| check_structure(program, order, tensors).is_ok());
    candidates
}

/// Advances `p` to the next permutation in lexicographic order; false after
/// the last.
fn next_permutation(p: &mut [usize]) -> bool {
    let Some(i) = (1..p.len()).rev().find(|&i| p[i - 1] < p[i]) else { return false };
    let j = (i..p.len()).rev().find(|&j| p[j] > p[i - 1]).expect("p[i] qualifies");
    p.swap(i - 1, j);
    p[i..].reverse();
    true
}

/// The nest of `tensors` in loops `dims` (outer to inner; the open loops
/// `outer` first, in their directions), if the reads admit loop directions
/// and a body order.
/// The edges of `edges` whose reader and source are both among `tensors`.
fn edges_within<'e, 'c>(program: &Program<'c>, tensors: &[usize], edges: &[&'e Edge<'c>]) -> Vec<&'e Edge<'c>> {
    let mut member = vec![false; program.tensors.len()];
    for &t in tensors {
        member[t] = true;
    }
    edges.iter().copied().filter(|e| member[e.reader] && member[e.source]).collect()
}

fn nest_with_loops<'c>(
    program: &Program<'c>,
    tensors: &[usize],
    edges: &[&Edge<'c>],
    dims: Vec<usize>,
    outer: &[(usize, bool)],
) -> Result<Nest, PassDiagnostic<'c>> {
    let inside: Vec<&Edge> = edges_within(program, tensors, edges);
    for e in &inside {
        if e.shifts.is_none() {
            return Err(PassDiagnostic::new(
                e.location,
                format!(
                    "read {} is on a cycle but is not bounded relative to the reader's variables; the scheduler cannot order it",
                    e.text
                ),
            ));
        }
    }
    let common = |e: &Edge| depth(program, e.reader).min(depth(program, e.source));
    let mut remaining: Vec<&Edge> = inside.clone();
    let mut forward = Vec::new();
    let mut lags = BTreeMap::new();
    for (k, &d) in dims.iter().enumerate() {
        let along: Vec<&&Edge> = remaining.iter().filter(|e| common(e) > k).collect();
        let shift = |e: &Edge| e.shifts.as_ref().expect("bounded")[&d];
        let fits = |direction: bool| along.iter().all(|e| in_past(shift(e), direction));
        // The last loop may also run forward with some tensors computed
        // late, when the reads ahead reach a bounded distance (n-step
        // returns `r[t : t+n]` read in the loop computing `r`).
        let last = k + 1 == dims.len();
        let retimed = || {
            let deep: Vec<usize> = tensors.iter().copied().filter(|&t| depth(program, t) == dims.len()).collect();
            retime(&deep, &along, d)
        };
        let direction = match outer.get(k) {
            Some(&(_, open)) if fits(open) => open,
            None if fits(true) => true,
            None if fits(false) => false,
            None if last && let Some(found) = retimed() => {
                lags = found;
                true
            }
            _ => {
                let e = along.iter().find(|e| !in_past(shift(e), outer.get(k).is_none_or(|o| o.1))).expect("mixed");
                return Err(PassDiagnostic::new(
                    e.location,
                    format!(
                        "reads on one cycle go both to the past and to the future along '{}' (e.g. {}); no loop direction satisfies them{}",
                        program.dims[d].name,
                        e.text,
                        if last && outer.get(k).is_none() {
                            ", and no retiming does (a read reaches unboundedly far ahead, or the cycle itself does)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        };
        forward.push(direction);
        // Reads that may see the present point along `d` (in iterations,
        // where tensors are computed late) are ordered by the inner
        // dimensions or the body.
        let delta = |e: &Edge| lags.get(&e.source).unwrap_or(&0) - lags.get(&e.reader).unwrap_or(&0);
        remaining.retain(|e| {
            common(e) <= k || {
                let (lo, hi) = shift(e);
                touches_present((lo.map(|x| x + delta(e)), hi.map(|x| x + delta(e))))
            }
        });
    }
    // Body order: reads that may see the same point order the tensors
    // (tensors of the same depth kept together where possible); a cycle
    // among them (possible through ranges that include the present) means
    // a point needs itself.
    // (Each step takes the first ready tensor of the last one's depth, else
    // the first ready one; a tensor is ready when the sources of its
    // remaining reads are placed: counted, not searched, so that a group of
    // thousands of tensors is ordered in time linear in its reads.)
    let mut body: Vec<usize> = Vec::new();
    let mut placed = vec![false; program.tensors.len()];
    let mut waiting = vec![0usize; program.tensors.len()];
    let mut readers: HashMap<usize, Vec<usize>> = HashMap::new();
    for e in &remaining {
        waiting[e.reader] += 1;
        readers.entry(e.source).or_default().push(e.reader);
    }
    while body.len() < tensors.len() {
        let last_depth = body.last().map(|&t| depth(program, t));
        let ready = |t: &usize| !placed[*t] && waiting[*t] == 0;
        let next = tensors
            .iter()
            .copied()
            .find(|t| ready(t) && Some(depth(program, *t)) == last_depth)
            .or_else(|| tensors.iter().copied().find(ready));
        let Some(next) = next else {
            let e = remaining.iter().find(|e| !placed[e.reader]).expect("an unplaced tensor has a read");
            return Err(PassDiagnostic::new(
                e.location,
                format!(
                    "read {} by '{}' can reach the point being computed: a point would need itself (zero-distance cycle)",
                    e.text, program.tensors[e.reader].name
                ),
            ));
        };
        placed[next] = true;
        for &reader in readers.get(&next).map(Vec::as_slice).unwrap_or(&[]) {
            waiting[reader] -= 1;
        }
        body.push(next);
    }
    let nest = Nest { dims, forward, body, inner: Vec::new(), lags };
    check_nest(program, &nest, inside.iter().copied())?;
    Ok(nest)
}

#[cfg(test)]
mod tests {
    use super::store_selection::Slicing;
    use super::*;
    use melior::ir::Module;
    use tempo_passes::verify::verify_program;

    fn schedule_of(body: &str) -> Result<(Schedule, Vec<String>), Vec<String>> {
        let context = tempo_dialects::create_context();
        let source = format!(
            "\"temporal.dim\"() {{sym_name = \"t\", bound = \"T\"}} : () -> ()\n\"temporal.dim\"() {{sym_name = \"b\", bound = \"B\"}} : () -> ()\n{body}"
        );
        let module = Module::parse(&context, &source).expect("parses");
        let program = verify_program(module.as_operation()).expect("verifies");
        let names = program.tensors.iter().map(|t| t.name.clone()).collect();
        let messages = |e: Vec<PassDiagnostic>| e.into_iter().map(|d| d.message).collect::<Vec<String>>();
        let found = Schedule::new(&program).map(|s| (s, names)).map_err(messages);
        // The check of a program as written agrees with the search: the same
        // verdict, the same diagnostics.
        assert_eq!(Schedule::check(&program).map_err(messages), found.as_ref().map(|_| ()).map_err(Clone::clone));
        found
    }

    fn tensor(name: &str, domain: &str) -> String {
        format!(
            "%{name} = \"temporal.tensor\"() {{sym_name = \"{name}\", domain = [{domain}], element = tensor<f32>}} : () -> !temporal.rtensor\n"
        )
    }

    /// A branch of `target` (over `dims`) summing reads `(source, index)`.
    fn define(target: &str, dims: &str, when: &str, reads: &[(&str, &str)]) -> String {
        let mut body =
            String::from("  %c = \"temporal.constant\"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>\n");
        let mut last = "%c".to_string();
        for (k, (source, index)) in reads.iter().enumerate() {
            body += &format!(
                "  %r{k} = \"temporal.read\"(%{source}) {{index = affine_map<({dims})[T, B] -> ({index})>}} : (!temporal.rtensor) -> tensor<f32>\n"
            );
            body += &format!("  %s{k} = \"temporal.add\"({last}, %r{k}) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n");
            last = format!("%s{k}");
        }
        format!(
            "\"temporal.define\"(%{target}) ({{\n{body}  \"gpu.yield\"({last}) : (tensor<f32>) -> ()\n}}) {{when = affine_set<({dims})[T, B] : ({when})>}} : (!temporal.rtensor) -> ()\n"
        )
    }

    #[test]
    fn rings_hold_the_farthest_read_plus_one() {
        let body = tensor("x", "\"t\"")
            + &tensor("y", "\"t\"")
            + &define("x", "t", "t - 2 >= 0", &[("x", "t - 1"), ("x", "t - 3")])
            + &define("x", "t", "0 == 0", &[])
            + &define("y", "t", "0 == 0", &[("x", "t")])
            + "\"temporal.output\"(%y) : (!temporal.rtensor) -> ()\n";
        let (schedule, _) = schedule_of(&body).unwrap();
        assert_eq!(schedule.storage, vec![Storage::Ring(4, Default::default()), Storage::Output]);
        assert_eq!(
            schedule.nests,
            vec![Nest {
                dims: vec![0],
                forward: vec![true],
                body: vec![0, 1],
                inner: vec![],
                lags: Default::default()
            }]
        );
    }

    #[test]
    fn future_reads_run_backward_and_same_step_reads_order_the_body() {
        // g[t] = r[t] + g[t+1] (returns) where r[t] is computed in the same step.
        let body = tensor("g", "\"t\"")
            + &tensor("r", "\"t\"")
            + &define("g", "t", "t + 2 - T <= 0", &[("r", "t"), ("g", "t + 1")])
            + &define("g", "t", "0 == 0", &[("r", "t")])
            + &define("r", "t", "0 == 0", &[])
            + "\"temporal.output\"(%g) : (!temporal.rtensor) -> ()\n";
        let (schedule, _) = schedule_of(&body).unwrap();
        assert_eq!(
            schedule.nests,
            vec![Nest {
                dims: vec![0],
                forward: vec![false],
                body: vec![1, 0],
                inner: vec![],
                lags: Default::default()
            }]
        );
        assert_eq!(schedule.storage[1], Storage::Point);
    }

    #[test]
    fn reads_of_other_nests_force_full_storage() {
        // m[t] reads x[T - 1 - t]: x must be complete before m starts.
        let body = tensor("x", "\"t\"")
            + &tensor("m", "\"t\"")
            + &define("x", "t", "0 == 0", &[])
            + &define("m", "t", "0 == 0", &[("x", "T - 1 - t")])
            + "\"temporal.output\"(%m) : (!temporal.rtensor) -> ()\n";
        let (schedule, _) = schedule_of(&body).unwrap();
        assert_eq!(schedule.nests.len(), 2);
        assert_eq!(schedule.storage[0], Storage::Full);
    }

    #[test]
    fn two_dimensions_pick_a_direction_per_loop() {
        // h[b, t] reads h[b, t - 1] and h[b + 1, t + 2]: b runs backward, t forward.
        let body = tensor("h", "\"b\", \"t\"")
            + &define(
                "h",
                "b, t",
                "t - 1 >= 0, B - b - 2 >= 0, T - t - 3 >= 0",
                &[("h", "b, t - 1"), ("h", "b + 1, t + 2")],
            )
            + &define("h", "b, t", "0 == 0", &[])
            + "\"temporal.output\"(%h) : (!temporal.rtensor) -> ()\n";
        let (schedule, _) = schedule_of(&body).unwrap();
        assert_eq!(
            schedule.nests,
            vec![Nest {
                dims: vec![1, 0],
                forward: vec![false, true],
                body: vec![0],
                inner: vec![],
                lags: Default::default()
            }]
        );
    }

    #[test]
    fn ranges_over_the_past_can_be_on_a_cycle() {
        // y[t] = 1 + sum(y[0:t]): the prefix stops before t.
        let body = tensor("y", "\"t\"")
            + &define("y", "t", "0 == 0", &[])
            + "\"temporal.output\"(%y) : (!temporal.rtensor) -> ()\n";
        let (schedule, _) = schedule_of(&body).unwrap();
        assert_eq!(schedule.nests.len(), 1);
    }

    #[test]
    fn branch_conditions_bound_clamped_reads_on_cycles() {
        // z[t] = z[min(t + 1, T - 1)] where t <= T - 2: there the clamp is
        // t + 1, so t runs backward and z needs a ring of 2. Without the
        // condition the read could reach z[t] itself.
        let read = |when: &str| {
            format!(
                "{}\"temporal.define\"(%z) ({{\n  %r = \"temporal.read_range\"(%z) {{caps = [affine_map<(t)[T, B] -> (T - 1)>], lower = [affine_map<(t)[T, B] -> (t + 1)>], upper = [affine_map<(t)[T, B] -> ()>]}} : (!temporal.rtensor) -> tensor<f32>\n  \"gpu.yield\"(%r) : (tensor<f32>) -> ()\n}}) {{when = affine_set<(t)[T, B] : ({when})>}} : (!temporal.rtensor) -> ()\n{}",
                tensor("z", "\"t\""),
                define("z", "t", "0 == 0", &[])
            )
        };
        let (schedule, _) = schedule_of(&read("T - t - 2 >= 0")).unwrap();
        assert_eq!(
            schedule.nests,
            vec![Nest { dims: vec![0], forward: vec![false], body: vec![0], inner: vec![], lags: Default::default() }]
        );
        assert_eq!(schedule.storage, vec![Storage::Ring(2, Default::default())]);
        let error = schedule_of(&read("T - t - 1 >= 0")).unwrap_err().join("\n");
        assert!(error.contains("zero-distance cycle"), "{error}");
    }

    #[test]
    fn shallower_tensors_share_the_outer_loops_of_deeper_ones() {
        // h[t, b] = h[t - 1, b] + 1 and y[t] = h[t, B - 1]: y runs in h's t
        // loop after its b loop, and h keeps the t-slices of t and t - 1.
        let body = tensor("h", "\"t\", \"b\"")
            + &tensor("y", "\"t\"")
            + &define("h", "t, b", "t - 1 >= 0", &[("h", "t - 1, b")])
            + &define("h", "t, b", "0 == 0", &[])
            + &define("y", "t", "0 == 0", &[("h", "t, B - 1")])
            + "\"temporal.output\"(%y) : (!temporal.rtensor) -> ()\n";
        let (schedule, _) = schedule_of(&body).unwrap();
        assert_eq!(
            schedule.nests,
            vec![Nest {
                dims: vec![0, 1],
                forward: vec![true, true],
                body: vec![0, 1],
                inner: vec![],
                lags: Default::default()
            }]
        );
        assert_eq!(schedule.storage, vec![Storage::Ring(2, Default::default()), Storage::Output]);
    }

    #[test]
    fn unschedulable_cycles_are_explained() {
        let mixed = tensor("a", "\"t\"")
            + &tensor("z", "\"t\"")
            + &define("a", "t", "t - 1 >= 0", &[("z", "t - 1")])
            + &define("a", "t", "0 == 0", &[])
            + &define("z", "t", "T - t - 2 >= 0", &[("a", "t + 1")])
            + &define("z", "t", "0 == 0", &[]);
        // a[t] needs z[t-1], which needs a[t]: computing z a step late
        // (a retiming) lines both reads up on one iteration, where the
        // point needs itself.
        let error = schedule_of(&mixed).unwrap_err().join("\n");
        assert!(error.contains("a point would need itself (zero-distance cycle)"), "{error}");

        // z[t] reading every later point of a has no bounded retiming.
        let error = schedule_of(&mixed.replace("t + 1)", "T - 1)")).unwrap_err().join("\n");
        assert!(error.contains("is on a cycle but is not bounded") || error.contains("no retiming"), "{error}");

        let reversed = tensor("a", "\"t\"")
            + &define("a", "t", "t - 1 >= 0, T - t - 2 >= 0", &[("a", "T - 1 - t")])
            + &define("a", "t", "0 == 0", &[]);
        let error = schedule_of(&reversed).unwrap_err().join("\n");
        assert!(error.contains("is on a cycle but is not bounded relative to the reader"), "{error}");
    }

    /// The skeleton of back-propagation through time in a training run,
    /// with `b` as the iterations: `w[b]` reads `z[b-1, 0]`, `a[b, t]`
    /// reads `a[b, t-1]` and `w[b]`, `z[b, t]` reads `z[b, t+1]` and
    /// `a[b, t]`.
    fn carried_cycle() -> String {
        tensor("w", "\"b\"")
            + &tensor("a", "\"b\", \"t\"")
            + &tensor("z", "\"b\", \"t\"")
            + &define("w", "b", "b - 1 >= 0", &[("w", "b - 1"), ("z", "b - 1, 0")])
            + &define("w", "b", "0 == 0", &[])
            + &define("a", "b, t", "t - 1 >= 0", &[("a", "b, t - 1"), ("w", "b")])
            + &define("a", "b, t", "0 == 0", &[("w", "b")])
            + &define("z", "b, t", "T - t - 2 >= 0", &[("z", "b, t + 1"), ("a", "b, t")])
            + &define("z", "b, t", "0 == 0", &[("a", "b, t")])
            + "\"temporal.output\"(%w) : (!temporal.rtensor) -> ()\n"
    }

    #[test]
    fn cycles_carried_by_an_outer_loop_run_a_sequence_of_nests_in_it() {
        let (schedule, _) = schedule_of(&carried_cycle()).unwrap();
        // One loop over b (dimension 1) around w and a's forward loop over t
        // (dimension 0), then z's backward one.
        let first = Nest {
            dims: vec![1, 0],
            forward: vec![true, true],
            body: vec![0, 1],
            inner: vec![],
            lags: Default::default(),
        };
        let second = Nest {
            dims: vec![1, 0],
            forward: vec![true, false],
            body: vec![2],
            inner: vec![],
            lags: Default::default(),
        };
        assert_eq!(schedule.nests, vec![Nest::sequence(vec![1], vec![true], vec![first, second])]);
        assert_eq!(schedule.nests[0].body, vec![0, 1, 2]);
        // a: one slice along t, overwritten by each b; z: two (w reads z[b-1, 0]).
        let along_b = Slicing { along: 0, dropped: 0 };
        assert_eq!(schedule.storage, vec![Storage::Output, Storage::Ring(1, along_b), Storage::Ring(2, along_b)]);
    }

    #[test]
    fn sequence_nests_read_back_from_their_loops_are_the_same_schedule() {
        let context = tempo_dialects::create_context();
        let source = format!(
            "\"temporal.dim\"() {{sym_name = \"t\", bound = \"T\"}} : () -> ()\n\"temporal.dim\"() {{sym_name = \"b\", bound = \"B\"}} : () -> ()\n{}",
            carried_cycle()
        );
        let module = Module::parse(&context, &source).expect("parses");
        let program = verify_program(module.as_operation()).expect("verifies");
        let schedule = Schedule::new(&program).unwrap();
        let steps = schedule.nests[0].steps(&program);
        let compute = |t| Step::Compute(t);
        let t_loop = |forward, body| Step::Loop { dim: 0, forward, body };
        let expected = vec![Step::Loop {
            dim: 1,
            forward: true,
            body: vec![compute(0), t_loop(true, vec![compute(1)]), t_loop(false, vec![compute(2)])],
        }];
        assert_eq!(steps, expected);
        // Read back, each step of the b loop is a nest of its own: the same
        // loops, so the same checks and stores.
        let read = Nest::from_step(&program, &steps[0]);
        assert_eq!(read.inner.len(), 3);
        assert_eq!(read.steps(&program), steps);
        let location = Location::unknown(&context);
        let again = Schedule::with_nests(&program, vec![read], location).map_err(|_| ()).unwrap();
        assert_eq!(again.storage, schedule.storage);
        // A plain nest reads back as itself.
        let plain = Nest {
            dims: vec![1, 0],
            forward: vec![true, true],
            body: vec![0, 1],
            inner: vec![],
            lags: Default::default(),
        };
        assert_eq!(Nest::from_step(&program, &plain.steps(&program)[0]), plain);
    }
}
