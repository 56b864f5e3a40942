//! Store selection: where each tensor's points live, chosen from how the
//! tensor is read once the schedule is known.
//!
//! For every computed tensor that is not an output, the reads of it (the
//! schedule's read summaries: per dimension an interval of shifts relative
//! to the reader's point) decide the kind, smallest first:
//! - `Point`: every read is in the tensor's own nest at exactly the point
//!   being computed, so one point is enough (it is overwritten at every
//!   iteration: the value is consumed at once);
//! - `Ring(k)`: a one-dimensional tensor whose reads are all point reads in
//!   its own nest at most `k - 1` steps back in loop order (`t - 1`, `t - 2`,
//!   or `t + 1` in a backward loop): `k` slots indexed `p mod k`. A tensor
//!   of several dimensions whose first one is its nest's outer loop, read
//!   at most `k - 1` steps back along it (`h[t-1, l]`, `h[t, l-1]`), keeps
//!   `k` whole slices `[k, inner bounds...]`;
//! - `InnerRing(k)`: a tensor of several dimensions read only at the
//!   present coordinates of its outer dimensions and at most `k - 1` steps
//!   back along the innermost one (in the same run of that loop, or its last
//!   points right after it, e.g. `s[b, t-1]` and `total[b] = s[b, T-1]`): `k`
//!   points, like a one-dimensional ring;
//! - `Window(w)`: as a ring, but some reads are ranges within the last `w`
//!   points (`max(0, t-w+1):t+1`): `2w` slots, each point written at
//!   `p mod w` and `p mod w + w`, so that any run of at most `w` consecutive
//!   points is one contiguous view;
//! Reads from later nests of the last points a loop wrote (`x[T-1]` after a
//! forward loop) count as reads that far back: the store is freed only
//! after those nests.
//! - `Blocks(B)`: a one-dimensional tensor read through prefixes (`0:t+1`)
//!   in its own forward nest, or suffixes (`t:T`) in a backward one: memory
//!   is committed `B` points at a time as the loop reaches them (see
//!   `crate::store_to_memref`);
//! - `Full`: everything else (reads from other nests, unbounded ranges,
//!   reads of the future in a forward loop); every point is kept.
//!
//! Assumes the schedule's nests and read summaries (`crate::schedule`).

use crate::schedule::{Edge, Nest, in_past};
use std::collections::HashMap;
use tempo_passes::program::Program;

/// Where a tensor's points live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// A program input, read in place.
    Input,
    /// An output: stored in full, in the output buffer.
    Output,
    /// One point, overwritten at every iteration of its nest.
    Point,
    /// The last `k` points of a one-dimensional tensor, at `p mod k`.
    Ring(usize),
    /// The last `k` points along the innermost dimension of a tensor of
    /// several dimensions, all read at the present coordinates of the outer
    /// ones: `k` slots at `p mod k` of the last coordinate.
    InnerRing(usize),
    /// The last `w` points of a one-dimensional tensor, twice (`2w` slots).
    Window(usize),
    /// A one-dimensional tensor read through prefixes (`0:t+1`) in a forward
    /// loop, or suffixes in a backward one: room for the bound is reserved,
    /// memory is committed in blocks of this many points as the loop
    /// reaches them.
    Blocks(usize),
    /// Every point (one point for a tensor without a domain).
    Full,
}

impl Storage {
    /// Slots (points) the store holds; `None` where it depends on the bounds.
    pub fn slots(self) -> Option<usize> {
        match self {
            Storage::Point => Some(1),
            Storage::Ring(k) | Storage::InnerRing(k) => Some(k),
            Storage::Window(w) => Some(w.saturating_mul(2)),
            _ => None,
        }
    }
}

impl std::fmt::Display for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Storage::Input => write!(f, "input"),
            Storage::Output => write!(f, "output"),
            Storage::Point => write!(f, "point"),
            Storage::Ring(k) => write!(f, "ring<{k}>"),
            Storage::InnerRing(k) => write!(f, "inner-ring<{k}>"),
            Storage::Window(w) => write!(f, "window<{w}>"),
            Storage::Blocks(b) => write!(f, "blocks<{b}>"),
            Storage::Full => write!(f, "full"),
        }
    }
}

/// The store of every tensor (by tensor index).
pub(crate) fn select_stores(program: &Program, nests: &[Nest], edges: &[Edge]) -> Vec<Storage> {
    let nest_of: HashMap<usize, usize> =
        nests.iter().enumerate().flat_map(|(k, nest)| nest.body.iter().map(move |&t| (t, k))).collect();
    (0..program.tensors.len())
        .map(|i| {
            let tensor = &program.tensors[i];
            if tensor.is_input {
                return Storage::Input;
            }
            if program.outputs.contains(&i) {
                return Storage::Output;
            }
            if tensor.domain.is_empty() {
                return Storage::Full;
            }
            let nest = &nests[nest_of[&i]];
            let all_reads: Vec<&Edge> = edges.iter().filter(|e| e.source == i).collect();
            // Reads from later nests of the last points the loop wrote
            // (`T - 1 - j` after a forward loop, `j` after a backward one)
            // only need the store to keep those points until then.
            let forward = nest.forward.first().copied().unwrap_or(true);
            let mut final_reach = None::<i64>;
            let mut reads = Vec::new();
            for e in all_reads {
                let later = nest_of.get(&e.reader).is_some_and(|&r| r > nest_of[&i]);
                match e.fixed {
                    Some((j, from_end)) if later && tensor.domain.len() == 1 && from_end == forward => {
                        final_reach = Some(final_reach.unwrap_or(0).max(j));
                    }
                    _ => reads.push(e),
                }
            }
            let local = |e: &&Edge| nest_of.get(&e.reader) == Some(&nest_of[&i]) && e.shifts.is_some();
            if !reads.iter().all(local) {
                return Storage::Full;
            }
            // At the point being computed, in the same iteration of every
            // loop of the tensor (not in another run of an inner loop).
            let at_present = |e: &&Edge| {
                !e.spans
                    && nest.shared_loops(program, e.reader, i) >= tensor.domain.len()
                    && e.shifts.as_ref().expect("local").values().all(|&s| s == (Some(0), Some(0)))
            };
            if reads.iter().all(at_present) && final_reach.is_none_or(|j| j == 0) {
                return Storage::Point;
            }
            if tensor.domain.len() != 1 {
                return inner_ring(program, i, nest, &reads)
                    .unwrap_or_else(|| outer_ring(tensor.domain[0], nest, &reads));
            }
            let dim = tensor.domain[0];
            // How far back (in loop order) each read reaches.
            let mut farthest = final_reach.unwrap_or(0);
            let mut unbounded = false;
            for e in &reads {
                let shift = e.shifts.as_ref().expect("local")[&dim];
                if !in_past(shift, forward) {
                    return Storage::Full;
                }
                let reach = if forward { shift.0.map(|l| -l) } else { shift.1 };
                match reach {
                    Some(r) => farthest = farthest.max(r),
                    None => unbounded = true,
                }
            }
            if unbounded {
                // Prefixes of a forward loop (suffixes of a backward one)
                // grow with it, a block at a time.
                return if final_reach.is_none() {
                    Storage::Blocks(block_points(
                        tensor.point.shape.iter().product::<i64>() as usize * tensor.point.element.byte_size(),
                    ))
                } else {
                    Storage::Full
                };
            }
            let slots = (farthest as usize).saturating_add(1);
            if reads.iter().any(|e| e.spans) { Storage::Window(slots) } else { Storage::Ring(slots) }
        })
        .map(|storage| match storage.slots() {
            // A read reaching millions of steps back gains nothing from a
            // ring (and the ring could exceed the bound): store in full.
            Some(n) if n > MAX_RING_SLOTS => Storage::Full,
            _ => storage,
        })
        .collect()
}

/// The most slots a ring, inner ring or window may have; a tensor whose
/// reads reach farther back is stored in full.
pub const MAX_RING_SLOTS: usize = 1 << 16;

/// An inner ring for tensor `i` (several dimensions, read only in its own
/// nest), if every read is at the present coordinates of all but the last
/// dimension and either in the same run of the innermost loop, at most
/// `k - 1` steps back along it, or after that run by a tensor one loop
/// shallower, at one of the last `k` points the run wrote (`s[b, T-1]` read
/// by `total[b]` after the `t` loop).
fn inner_ring(program: &Program, i: usize, nest: &Nest, reads: &[&Edge]) -> Option<Storage> {
    let domain = &program.tensors[i].domain;
    let n = domain.len();
    let (last, forward) = (domain[n - 1], nest.forward[n - 1]);
    let position = |t: usize| nest.body.iter().position(|&x| x == t).expect("in the body");
    let mut farthest = 0;
    for e in reads {
        let shifts = e.shifts.as_ref().expect("local");
        if domain[..n - 1].iter().any(|d| shifts.get(d) != Some(&(Some(0), Some(0)))) {
            return None;
        }
        let shared = nest.shared_loops(program, e.reader, i);
        if shared >= n {
            let shift = shifts[&last];
            let reach = if forward { shift.0.map(|l| -l) } else { shift.1 };
            match reach {
                Some(r) if in_past(shift, forward) && !e.spans => farthest = farthest.max(r),
                _ => return None,
            }
        } else if shared == n - 1 && program.tensors[e.reader].domain.len() == n - 1 && position(i) < position(e.reader)
        {
            match e.fixed {
                Some((j, from_end)) if from_end == forward => farthest = farthest.max(j),
                _ => return None,
            }
        } else {
            return None;
        }
    }
    Some(Storage::InnerRing((farthest as usize).saturating_add(1)))
}

/// The store of a multi-dimensional tensor read only in its own nest: a
/// ring along its first dimension when that is the nest's outer loop and
/// every read reaches a bounded number of steps back along it at a single
/// coordinate (any coordinates, ranges included, along the inner
/// dimensions, which the ring keeps whole): `k` slices `[k, inner
/// bounds...]`. `Full` otherwise.
fn outer_ring(first: usize, nest: &Nest, reads: &[&Edge]) -> Storage {
    if nest.dims.first() != Some(&first) {
        return Storage::Full;
    }
    let forward = nest.forward[0];
    let mut farthest = 0;
    for e in reads {
        let shift = e.shifts.as_ref().expect("local")[&first];
        let reach = if forward { shift.0.map(|l| -l) } else { shift.1 };
        match reach {
            Some(r) if in_past(shift, forward) && !e.spanned.contains(&0) => farthest = farthest.max(r),
            _ => return Storage::Full,
        }
    }
    Storage::Ring((farthest as usize).saturating_add(1))
}

/// Points per block of a `blocks` store whose points take `point_bytes`:
/// at least 64, and a whole number of 4 KiB pages per block (memory is
/// committed page-wise).
pub fn block_points(point_bytes: usize) -> usize {
    const PAGE: usize = 4096;
    let unit = PAGE / gcd(PAGE, point_bytes.max(1));
    unit * 64usize.div_ceil(unit)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}
