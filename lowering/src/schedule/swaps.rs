//! Swap planning: under a memory budget, which stores move points out of
//! memory while they wait for a later loop, and back when it needs them.
//!
//! The pattern is back-propagation through time: a tensor `x[.., t]` is
//! computed by a forward loop over `t` (the rollout, the forward pass) and
//! read again, point by point, by a later backward loop over `t` inside the
//! same outer loops (the adjoint). Store selection keeps every point of it
//! (a `full` slice per `t`): memory grows with the episode. When the
//! program's stores, sized at the run's bounds, exceed the budget, the
//! largest such tensors (largest first, until the estimate fits) become
//! `blocks` stores along `t` with a swap space (a temporary file on the
//! CPU): the forward loop spills each block once its own reads (at most
//! `reach` steps back) are past it, the backward loop reloads each spilled
//! block just before its first read and discards each block after its
//! last. Resident: about two blocks per swapped store, whatever `T` is.
//!
//! A tensor qualifies when
//! - its domain is the loops around its loop plus that loop's dimension
//!   (the loop is innermost and forward; no tensor of it is retimed);
//! - its reads in its own loop are bounded steps back (`x[t-1]`, windows),
//!   at the present coordinates of the outer loops;
//! - every other read is by tensors of one later innermost backward loop
//!   over the same dimension, with the same outer loops, at exactly the
//!   point being computed (`x[t]`; no ranges, no reads after the loop).
//!
//! Other tensors are never swapped (the plan is an optimization, not a
//! promise: when nothing qualifies the budget is exceeded, not refused).
//!
//! Assumes a checked schedule and its stores (`Schedule`).

use super::store_selection::Slicing;
use super::{Schedule, Step, Storage};
use std::collections::BTreeMap;
use tempo_passes::program::Program;
use tempo_passes::shifts::{Edge, read_edges};

/// How one tensor is swapped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swap {
    /// The dimension (program index) of the loops it is written and read in.
    pub dim: usize,
    /// Points per block (the unit spilled and reloaded).
    pub block: usize,
    /// How many steps back its own loop reads it (a block is spilled once
    /// the loop is that far past it).
    pub reach: i64,
    /// The tensors of the later backward loop that read it.
    pub readers: Vec<usize>,
    /// Estimated bytes of its store at the bounds, before and after.
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// Bytes resident at most whatever the bounds (the block being written
    /// and those its own reads reach): at other bounds than the plan's, the
    /// resident bytes are the smaller of these and the whole store's.
    pub resident: u64,
}

/// An innermost loop of the schedule: its dimension, direction, the
/// tensors of its body, and where it sits (the enclosing loops' path and
/// its position among its siblings).
struct InnerLoop {
    dim: usize,
    forward: bool,
    body: Vec<usize>,
    outer: Vec<usize>,
    parent: Vec<usize>,
    position: usize,
}

fn innermost_loops(steps: &[Step], outer: &[usize], parent: &[usize], out: &mut Vec<InnerLoop>) {
    for (position, step) in steps.iter().enumerate() {
        if let Step::Loop { dim, forward, body } = step {
            let mut path = parent.to_vec();
            path.push(position);
            let mut dims = outer.to_vec();
            dims.push(*dim);
            if body.iter().all(|s| matches!(s, Step::Compute(_))) {
                let body = body.iter().filter_map(|s| if let Step::Compute(t) = s { Some(*t) } else { None }).collect();
                out.push(InnerLoop {
                    dim: *dim,
                    forward: *forward,
                    body,
                    outer: outer.to_vec(),
                    parent: parent.to_vec(),
                    position,
                });
            } else {
                innermost_loops(body, &dims, &path, out);
            }
        }
    }
}

/// Points per block of a swapped store: whole 4 KiB pages, and at least
/// 64 KiB per block where points are small (fewer, larger file writes).
pub fn swap_block_points(point_bytes: usize) -> usize {
    const PAGE: usize = 4096;
    const LEAST: usize = 16 * 1024;
    let point_bytes = point_bytes.max(1);
    // The fewest points filling whole pages.
    let (mut a, mut b) = (PAGE, point_bytes);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    let unit = PAGE / a;
    unit * LEAST.div_ceil(unit * point_bytes).max(1)
}

/// Bytes of tensor `i`'s store as `storage`, at the bound values `bounds`
/// (by dimension; an unknown bound counts as exceeding any budget).
pub fn store_bytes(program: &Program, i: usize, storage: Storage, bounds: &[Option<i64>]) -> u64 {
    let tensor = &program.tensors[i];
    let point = tensor.point.shape.iter().product::<i64>().max(1) as u64 * tensor.point.element.byte_size() as u64;
    let bound = |k: usize| bounds.get(tensor.domain[k]).copied().flatten().map_or(u64::MAX, |b| b.max(0) as u64);
    let all = |keep: &dyn Fn(usize) -> bool| {
        (0..tensor.domain.len()).filter(|&k| keep(k)).fold(point, |bytes, k| bytes.saturating_mul(bound(k)))
    };
    match storage {
        Storage::Input | Storage::Output => 0,
        Storage::Point => point,
        Storage::Ring(slots, s) | Storage::Window(slots, s) | Storage::Blocks(slots, s) => {
            let slots = if matches!(storage, Storage::Window(..)) { 2 * slots } else { slots } as u64;
            let per_slot = all(&|k| k != s.along && !s.drops(k));
            if matches!(storage, Storage::Blocks(..)) {
                // Blocks grow to the bound.
                per_slot.saturating_mul(bound(s.along))
            } else {
                per_slot.saturating_mul(slots)
            }
        }
        Storage::Full => all(&|_| true),
    }
}

/// The swap plan of `schedule` for a budget of `budget` bytes at the
/// bound values `bounds`: changes the stores of the swapped tensors to
/// `blocks` along their loop and returns how each is swapped.
pub fn plan(program: &Program, schedule: &mut Schedule, budget: u64, bounds: &[Option<i64>]) -> BTreeMap<usize, Swap> {
    let edges = read_edges(program);
    let mut total: u64 = (0..program.tensors.len())
        .map(|i| store_bytes(program, i, schedule.storage[i], bounds))
        .fold(0u64, u64::saturating_add);
    let mut plans = BTreeMap::new();
    if total <= budget {
        return plans;
    }
    let mut candidates: Vec<(usize, Swap, Storage)> = Vec::new();
    for nest in &schedule.nests {
        let mut loops = Vec::new();
        innermost_loops(&nest.steps(program), &[], &[], &mut loops);
        for (k, writer) in loops.iter().enumerate() {
            if !writer.forward || writer.body.iter().any(|&t| schedule.lag(t) != 0) {
                continue;
            }
            for &i in &writer.body {
                if let Some(candidate) = qualify(program, schedule, &edges, &loops, k, i, bounds) {
                    candidates.push(candidate);
                }
            }
        }
    }
    candidates.sort_by_key(|(i, swap, _)| (std::cmp::Reverse(swap.bytes_before - swap.bytes_after), *i));
    for (i, swap, storage) in candidates {
        if total <= budget {
            break;
        }
        total = total.saturating_sub(swap.bytes_before).saturating_add(swap.bytes_after);
        schedule.storage[i] = storage;
        plans.insert(i, swap);
    }
    plans
}

/// Whether tensor `i` of innermost loop `loops[k]` can be swapped (see the
/// module documentation), with its plan and new store.
fn qualify(
    program: &Program,
    schedule: &Schedule,
    edges: &[Edge],
    loops: &[InnerLoop],
    k: usize,
    i: usize,
    bounds: &[Option<i64>],
) -> Option<(usize, Swap, Storage)> {
    let writer = &loops[k];
    let tensor = &program.tensors[i];
    let storage = schedule.storage[i];
    if !matches!(storage, Storage::Full | Storage::Ring(..) | Storage::Window(..) | Storage::Blocks(..)) {
        return None;
    }
    // The domain: the outer loops' dimensions and the loop's own, each once.
    let mut dims: Vec<usize> = writer.outer.clone();
    dims.push(writer.dim);
    if tensor.domain.len() != dims.len() || !dims.iter().all(|d| tensor.domain.contains(d)) {
        return None;
    }
    let present = |e: &Edge| {
        e.shifts.as_ref().is_some_and(|s| writer.outer.iter().all(|d| s.get(d) == Some(&(Some(0), Some(0)))))
    };
    let mut reach = 0i64;
    let mut reader_loop: Option<usize> = None;
    let mut readers = Vec::new();
    for e in edges.iter().filter(|e| e.source == i) {
        if !present(e) {
            return None;
        }
        let shift = e.shifts.as_ref().and_then(|s| s.get(&writer.dim).copied())?;
        if writer.body.contains(&e.reader) {
            // Bounded steps back in its own loop.
            let (Some(lo), Some(hi)) = shift else { return None };
            if hi > 0 {
                return None;
            }
            reach = reach.max(-lo);
            continue;
        }
        let r = loops.iter().position(|l| l.body.contains(&e.reader))?;
        let reading = &loops[r];
        let later_sibling = reading.parent == writer.parent && reading.position > writer.position;
        if !later_sibling || reading.forward || reading.dim != writer.dim || reading.outer != writer.outer {
            return None;
        }
        if reading.body.iter().any(|&t| schedule.lag(t) != 0) || e.spans || shift != (Some(0), Some(0)) {
            return None;
        }
        if reader_loop.is_some_and(|l| l != r) {
            return None;
        }
        reader_loop = Some(r);
        if !readers.contains(&e.reader) {
            readers.push(e.reader);
        }
    }
    reader_loop?;
    let point = tensor.point.shape.iter().product::<i64>().max(1) as usize * tensor.point.element.byte_size();
    let block = swap_block_points(point);
    let along = tensor.domain.iter().position(|&d| d == writer.dim)?;
    let dropped = (0..tensor.domain.len()).filter(|&k| k != along).fold(0u64, |m, k| m | 1 << k);
    let swapped = Storage::Blocks(block, Slicing { along, dropped });
    let bytes_before = store_bytes(program, i, storage, bounds);
    // Resident: the block being written and those its own reads reach.
    let resident_blocks = 1 + (reach as u64).div_ceil(block as u64) + 1;
    let resident = resident_blocks * block as u64 * point as u64;
    let bytes_after = resident.min(store_bytes(program, i, swapped, bounds));
    if bytes_after >= bytes_before {
        return None;
    }
    let swap = Swap { dim: writer.dim, block, reach, readers, bytes_before, bytes_after, resident };
    Some((i, swap, swapped))
}

/// The line the printed schedule adds to a swapped tensor's store.
pub fn describe(swap: &Swap) -> String {
    format!(
        "swapped to a file in blocks of {} (about {} bytes resident, {} without)",
        swap.block, swap.bytes_after, swap.bytes_before
    )
}
