//! Sinking: computing a tensor as late as possible where that shrinks its
//! store.
//!
//! List scheduling fuses a ready component into the current nest whenever
//! that is legal, which is right for a tensor read in that nest but not
//! for one whose readers all come in a later nest: back-propagation
//! through time fuses the cotangent of a loss's read of `h[t]` (it reads
//! only `h[t]` and constants) into the forward loop over `t`, while its
//! only reader runs in the backward loop, so it keeps all `T` points
//! (`full`); computed in the backward loop right before its reader it
//! needs one (`point`).
//!
//! After ordering, each tensor of a plain nest whose readers are all in
//! later nests of the same sequence (the top-level nests, or the inner
//! nests of one iteration of a sequence nest) is tried in the first of
//! those nests, the reader's nest fused again with it ([`nest_for`]), and
//! the move is kept when
//! - the whole schedule is still legal (the checks of
//!   [`Schedule::with_nests`](super::Schedule::with_nests)),
//! - the tensor's own store gets smaller (fewer dimensions of points kept,
//!   or fewer slots), and
//! - no store grows and none lives longer: each tensor keeps at most the
//!   points it kept, from its nest to the last nest reading it (the
//!   lowering's `store.alloc`/`store.free`, per top-level nest). So a
//!   tensor reading a large source moves only when that source is stored
//!   at least that long anyway (`h` is `full` for the backward loop), or
//!   is an input; the bytes live at every nest, hence the peak, never
//!   grow.
//!
//! Moves repeat until none applies (a chain of such tensors sinks one at a
//! time, the last first, when the ones before are stored anyway); nests
//! left empty are dropped. A chain whose links are only profitable
//! together (`s` a point feeding `b`, both read only later) stays where
//! it is: moves are tried one tensor at a time
//! (`test/lowering/schedule/sink.mlir`).

use super::store_selection::{Storage, select_stores};
use super::{Edge, Nest, Search, check_nest, check_shape, depth, nest_for};
use std::collections::{BTreeSet, HashMap};
use tempo_passes::program::Program;

/// The nests with every profitable move made (see the module documentation).
pub(super) fn sink<'c>(program: &Program<'c>, edges: &[Edge<'c>], mut nests: Vec<Nest>) -> Vec<Nest> {
    if nests.is_empty() {
        return nests;
    }
    let refs: Vec<&Edge> = edges.iter().collect();
    let mut storage = select_stores(program, &nests, edges);
    // Every tensor is tried at most once per change; a bounded number of
    // rounds keeps pathological programs cheap.
    for _ in 0..program.tensors.len() {
        let Some((moved, moved_storage)) = first_move(program, edges, &refs, &nests, &storage) else { break };
        nests = moved;
        storage = moved_storage;
    }
    drop_empty(nests)
}

/// The first profitable move of one tensor into a later nest, with the
/// stores it gives.
fn first_move<'c>(
    program: &Program<'c>,
    edges: &[Edge<'c>],
    refs: &[&Edge<'c>],
    nests: &[Nest],
    storage: &[Storage],
) -> Option<(Vec<Nest>, Vec<Storage>)> {
    let mut readers: HashMap<usize, BTreeSet<usize>> = HashMap::new();
    for e in edges {
        readers.entry(e.source).or_default().insert(e.reader);
    }
    for path in sequences(nests) {
        let (list, outer) = list_at(nests, &path);
        for (k, nest) in list.iter().enumerate() {
            if !nest.inner.is_empty() {
                continue;
            }
            // Later tensors first: a chain sinks from its end.
            for &x in nest.body.iter().rev() {
                if depth(program, x) == 0 || program.outputs.contains(&x) || storage[x] == Storage::Point {
                    continue;
                }
                let Some(readers) = readers.get(&x) else { continue };
                // The readers' nests in this list (readers outside it run
                // after it).
                let places: Vec<usize> = readers
                    .iter()
                    .filter(|&&r| r != x)
                    .filter_map(|&r| list.iter().position(|n| n.body.contains(&r)))
                    .collect();
                let Some(&m) = places.iter().min() else { continue };
                if m <= k || !list[m].inner.is_empty() {
                    continue;
                }
                let mut fused = list[m].body.clone();
                fused.push(x);
                let Ok(target) = nest_for(program, &fused, refs, &outer, false, &Search::new(true)) else { continue };
                let mut new_list = list.to_vec();
                new_list[k].body.retain(|&t| t != x);
                new_list[k].lags.remove(&x);
                // What is left of a retimed nest may need smaller lags.
                if !new_list[k].lags.is_empty()
                    && let Ok(again) = nest_for(program, &new_list[k].body, refs, &outer, false, &Search::new(true))
                    && again.dims == new_list[k].dims
                {
                    new_list[k] = again;
                }
                new_list[m] = target;
                let moved = with_list(nests, &path, new_list);
                if !legal(program, edges, &moved) {
                    continue;
                }
                let moved_storage = select_stores(program, &moved, edges);
                if better(program, edges, x, (nests, storage), (&moved, &moved_storage)) {
                    return Some((moved, moved_storage));
                }
            }
        }
    }
    None
}

/// The paths of every sequence of nests: the top-level one (`[]`), then
/// the inner nests of each sequence nest (`[j]` for `nests[j].inner`,
/// `[j, l]` for `nests[j].inner[l].inner`, ...).
fn sequences(nests: &[Nest]) -> Vec<Vec<usize>> {
    fn walk(list: &[Nest], path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        out.push(path.clone());
        for (j, nest) in list.iter().enumerate() {
            if !nest.inner.is_empty() {
                path.push(j);
                walk(&nest.inner, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    walk(nests, &mut Vec::new(), &mut out);
    out
}

/// The sequence of nests at `path` and the loops open around it.
fn list_at<'n>(nests: &'n [Nest], path: &[usize]) -> (&'n [Nest], Vec<(usize, bool)>) {
    let mut list = nests;
    let mut outer = Vec::new();
    for &j in path {
        let nest = &list[j];
        outer = nest.dims.iter().copied().zip(nest.forward.iter().copied()).collect();
        list = &nest.inner;
    }
    (list, outer)
}

/// `nests` with the sequence at `path` replaced by `list` (the bodies of
/// the sequence nests around it follow).
fn with_list(nests: &[Nest], path: &[usize], list: Vec<Nest>) -> Vec<Nest> {
    let Some((&j, rest)) = path.split_first() else { return list };
    let mut out = nests.to_vec();
    let nest = &nests[j];
    let inner = with_list(&nest.inner, rest, list);
    out[j] = Nest::sequence(nest.dims.clone(), nest.forward.clone(), inner);
    out
}

/// Whether `nests` is a legal schedule: every read from an earlier or the
/// same top-level nest, each nest well formed and ordered by its reads.
fn legal<'c>(program: &Program<'c>, edges: &[Edge<'c>], nests: &[Nest]) -> bool {
    let top = top_nest_of(nests);
    if edges.iter().any(|e| matches!((top.get(&e.source), top.get(&e.reader)), (Some(s), Some(r)) if s > r)) {
        return false;
    }
    let Some(location) = program.tensors.first().map(|t| t.location) else { return true };
    nests
        .iter()
        .all(|nest| check_shape(program, nest, &[], location).is_ok() && check_nest(program, nest, edges).is_ok())
}

/// The top-level nest of each computed tensor.
fn top_nest_of(nests: &[Nest]) -> HashMap<usize, usize> {
    nests.iter().enumerate().flat_map(|(k, nest)| nest.body.iter().map(move |&t| (t, k))).collect()
}

/// The top-level nests each tensor's store lives through: from the nest
/// computing it to the last nest reading it.
fn lifetimes(edges: &[Edge], nests: &[Nest]) -> HashMap<usize, (usize, usize)> {
    let top = top_nest_of(nests);
    let mut life: HashMap<usize, (usize, usize)> = top.iter().map(|(&t, &k)| (t, (k, k))).collect();
    for e in edges {
        if let (Some(&r), Some(l)) = (top.get(&e.reader), life.get_mut(&e.source)) {
            l.1 = l.1.max(r);
        }
    }
    life
}

/// What a store keeps, up to the size of a point: the dimensions whose
/// every point it holds, and the slots along the remaining one (`None`:
/// not counted among the live stores, inputs and outputs).
fn footprint(program: &Program, t: usize, storage: Storage) -> Option<(BTreeSet<usize>, usize)> {
    let domain = &program.tensors[t].domain;
    let kept = |slicing: super::store_selection::Slicing, with_along: bool| -> BTreeSet<usize> {
        slicing.kept(domain.len()).filter(|&k| with_along || k != slicing.along).map(|k| domain[k]).collect()
    };
    match storage {
        Storage::Input | Storage::Output => None,
        Storage::Point => Some((BTreeSet::new(), 1)),
        Storage::Ring(k, slicing) => Some((kept(slicing, false), k)),
        Storage::Window(w, slicing) => Some((kept(slicing, false), w.saturating_mul(2))),
        // Committed up to the bound.
        Storage::Blocks(_, slicing) => Some((kept(slicing, true), 1)),
        Storage::Full => Some((domain.iter().copied().collect(), 1)),
    }
}

/// Whether footprint `a` is at most `b` whatever the bounds (large ones:
/// fewer dimensions of points win).
fn at_most(a: &(BTreeSet<usize>, usize), b: &(BTreeSet<usize>, usize)) -> bool {
    a.0.is_subset(&b.0) && (a.0 != b.0 || a.1 <= b.1)
}

/// Whether the schedule `after` (moving `x`) is better than `before`:
/// `x`'s store is smaller, no store is larger or lives longer.
fn better(
    program: &Program,
    edges: &[Edge],
    x: usize,
    before: (&[Nest], &[Storage]),
    after: (&[Nest], &[Storage]),
) -> bool {
    let (old_life, new_life) = (lifetimes(edges, before.0), lifetimes(edges, after.0));
    for t in 0..program.tensors.len() {
        let (old, new) = (footprint(program, t, before.1[t]), footprint(program, t, after.1[t]));
        match (&old, &new) {
            (None, None) => continue,
            (Some(old), Some(new)) if at_most(new, old) => {}
            _ => return false,
        }
        if t == x && old == new {
            return false;
        }
        if let (Some(o), Some(n)) = (old_life.get(&t), new_life.get(&t))
            && (n.0 < o.0 || n.1 > o.1)
        {
            return false;
        }
    }
    true
}

/// `nests` without the nests left empty; a sequence nest left with one
/// inner nest is that nest.
fn drop_empty(nests: Vec<Nest>) -> Vec<Nest> {
    nests
        .into_iter()
        .filter(|nest| !nest.body.is_empty())
        .map(|nest| {
            if nest.inner.is_empty() {
                return nest;
            }
            let mut inner = drop_empty(nest.inner);
            if inner.len() == 1 {
                inner.pop().expect("one nest")
            } else {
                Nest::sequence(nest.dims, nest.forward, inner)
            }
        })
        .collect()
}
