//! Store selection: where each tensor's points live, chosen from how the
//! tensor is read once the schedule is known.
//!
//! For every computed tensor that is not an output, the reads of it (the
//! schedule's read summaries: per dimension an interval of shifts relative
//! to the reader's point) decide the kind, smallest first:
//! - `Point`: every read is in the tensor's own nest at exactly the point
//!   being computed, so one point is enough (it is overwritten at every
//!   iteration: the value is consumed at once);
//! - `Ring(k)`: point reads in the tensor's own nest at most `k - 1` steps
//!   back in loop order along one dimension (`t - 1`, `t - 2`, or `t + 1` in
//!   a backward loop): `k` slots indexed `p mod k`;
//! - `Window(w)`: as a ring, but some reads are ranges within the last `w`
//!   points (`max(0, t-w+1):t+1`): `2w` slots, each point written at
//!   `p mod w` and `p mod w + w`, so that any run of at most `w` consecutive
//!   points is one contiguous view;
//! - `Blocks(B)`: reads through prefixes (`0:t+1`) in the tensor's own
//!   forward loop, or suffixes (`t:T`) in a backward one: memory is
//!   committed `B` points at a time as the loop reaches them (see
//!   `crate::store_to_memref`);
//! - `Full`: everything else (reads from other nests, unbounded ranges,
//!   reads of the future in a forward loop); every point is kept.
//!
//! Reads from later nests of the last points a one-dimensional loop wrote
//! (`x[T-1]` after a forward loop) count as reads that far back: the store
//! is freed only after those nests.
//!
//! A tensor of several dimensions gets a ring, window or blocks along one of
//! them, the *along* dimension, chosen among those that work, smallest store
//! first ([`Slicing`]). The others are
//! - *dropped* when their loops enclose the along loop: every read is at
//!   their present coordinates, in the same run of the along loop (or, for
//!   the along dimension last in the domain, at one of the last points of
//!   that run, by a shallower tensor right after it: `total[b] = s[b, T-1]`),
//!   so the store holds one slice of them at a time (`s[b, t-1]` with `b`
//!   outer keeps 2 points, not `2B`);
//! - *kept* when their loops are inside the along loop: every slice has its
//!   own ring, window or blocks, and reads may take any coordinates, ranges
//!   included, along them. Keys of a layered decoder, `k[l, t]` read as
//!   `k[l, t-63:t+1]` in loops `t` then `l`, are a window along `t` per
//!   layer: `2 * 64 * L` points, whatever `T` is.
//!
//! Assumes the schedule's nests and read summaries (`crate::schedule`).

use super::{Edge, Layout, Nest, in_past};
use std::collections::HashMap;
use tempo_passes::program::Program;

/// How a ring, window or blocks store of a tensor of several dimensions
/// sits in its domain (one-dimensional tensors: the default, along their
/// dimension).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slicing {
    /// Domain position of the dimension the ring, window or blocks run along.
    pub along: usize,
    /// Domain positions (bit `k` for position `k`) the store leaves out:
    /// their loops enclose the along loop and every read is at their
    /// present coordinates, so one slice of them is live at a time.
    pub dropped: u64,
}

impl Slicing {
    /// Whether domain position `k` is left out of the store.
    pub fn drops(self, k: usize) -> bool {
        k < 64 && self.dropped & (1 << k) != 0
    }

    /// The domain positions the store has a dimension for, in domain order.
    pub fn kept(self, rank: usize) -> impl Iterator<Item = usize> {
        (0..rank).filter(move |&k| !self.drops(k))
    }

    /// The store dimension of the along dimension (its position among the
    /// kept ones).
    pub fn along_in_store(self) -> usize {
        (0..self.along).filter(|&k| !self.drops(k)).count()
    }
}

/// Where a tensor's points live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// A program input, read in place.
    Input,
    /// An output: stored in full, in the output buffer.
    Output,
    /// One point, overwritten at every iteration of its nest.
    Point,
    /// The last `k` points along one dimension, at `p mod k`, per slice of
    /// the kept dimensions.
    Ring(usize, Slicing),
    /// The last `w` points along one dimension, twice (`2w` slots), per
    /// slice of the kept dimensions.
    Window(usize, Slicing),
    /// Points read through prefixes (`0:t+1`) in a forward loop, or
    /// suffixes in a backward one: room for the bound is reserved per slice
    /// of the kept dimensions, memory is committed in blocks of this many
    /// points along the along dimension as the loop reaches them.
    Blocks(usize, Slicing),
    /// Every point (one point for a tensor without a domain).
    Full,
}

impl Storage {
    /// Slots (points) the store holds along its along dimension, per kept
    /// slice; `None` where it depends on the bounds.
    pub fn slots(self) -> Option<usize> {
        match self {
            Storage::Point => Some(1),
            Storage::Ring(k, _) => Some(k),
            Storage::Window(w, _) => Some(w.saturating_mul(2)),
            _ => None,
        }
    }

    /// How a ring, window or blocks store sits in its tensor's domain.
    pub fn slicing(self) -> Option<Slicing> {
        match self {
            Storage::Ring(_, s) | Storage::Window(_, s) | Storage::Blocks(_, s) => Some(s),
            _ => None,
        }
    }

    /// The kind with, for a tensor of several dimensions, the dimension it
    /// runs along and the kept ones (`window<64> along t per l`); `names`
    /// are the tensor's domain dimensions.
    pub fn describe(self, names: &[&str]) -> String {
        let mut text = self.to_string();
        if let Some(slicing) = self.slicing()
            && names.len() > 1
        {
            text += &format!(" along {}", names[slicing.along]);
            let kept: Vec<&str> = slicing.kept(names.len()).filter(|&k| k != slicing.along).map(|k| names[k]).collect();
            if !kept.is_empty() {
                text += &format!(" per {}", kept.join(", "));
            }
        }
        text
    }
}

impl std::fmt::Display for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Storage::Input => write!(f, "input"),
            Storage::Output => write!(f, "output"),
            Storage::Point => write!(f, "point"),
            Storage::Ring(k, _) => write!(f, "ring<{k}>"),
            Storage::Window(w, _) => write!(f, "window<{w}>"),
            Storage::Blocks(b, _) => write!(f, "blocks<{b}>"),
            Storage::Full => write!(f, "full"),
        }
    }
}

/// The store of every tensor (by tensor index).
pub(crate) fn select_stores(program: &Program, nests: &[Nest], edges: &[Edge]) -> Vec<Storage> {
    let nest_of: HashMap<usize, usize> =
        nests.iter().enumerate().flat_map(|(k, nest)| nest.body.iter().map(move |&t| (t, k))).collect();
    let layouts: Vec<Layout> = nests.iter().map(|nest| Layout::of(program, nest)).collect();
    // Shifts between iterations: a tensor computed late (a retimed nest)
    // is read that many iterations closer.
    let edges: Vec<Edge> = edges
        .iter()
        .map(|e| {
            let mut e = e.clone();
            if let (Some(&k), Some(&s)) = (nest_of.get(&e.reader), nest_of.get(&e.source))
                && k == s
            {
                e.shifts = nests[k].iteration_shifts(&e);
            }
            e
        })
        .collect();
    // The tensors of a data group are computed depth by depth, in an order
    // only the data gives: every point is kept.
    let by_depth: Vec<usize> = nests
        .iter()
        .filter(|nest| super::is_data_nest(program, nest))
        .flat_map(|nest| nest.body.iter().copied())
        .collect();
    (0..program.tensors.len())
        .map(|i| {
            let tensor = &program.tensors[i];
            if tensor.is_input {
                return Storage::Input;
            }
            if program.outputs.contains(&i) {
                return Storage::Output;
            }
            if tensor.domain.is_empty() || by_depth.contains(&i) {
                return Storage::Full;
            }
            let layout = &layouts[nest_of[&i]];
            let all_reads: Vec<&Edge> = edges.iter().filter(|e| e.source == i).collect();
            // Reads from later nests of the last points the loop wrote
            // (`T - 1 - j` after a forward loop, `j` after a backward one)
            // only need the store to keep those points until then.
            let forward = layout.loops(i).next().is_none_or(|(_, forward)| forward);
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
                    && layout.shared_loops(e.reader, i) >= tensor.domain.len()
                    && e.shifts.as_ref().expect("local").values().all(|&s| s == (Some(0), Some(0)))
            };
            if reads.iter().all(at_present) && final_reach.is_none_or(|j| j == 0) {
                return Storage::Point;
            }
            if tensor.domain.len() != 1 {
                return sliced(program, i, layout, &reads);
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
                    Storage::Blocks(block_points(point_bytes(program, i)), Slicing::default())
                } else {
                    Storage::Full
                };
            }
            let slots = (farthest as usize).saturating_add(1);
            let slicing = Slicing::default();
            if reads.iter().any(|e| e.spans) { Storage::Window(slots, slicing) } else { Storage::Ring(slots, slicing) }
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

/// Bytes of one point of tensor `i`.
fn point_bytes(program: &Program, i: usize) -> usize {
    let point = &program.tensors[i].point;
    point.shape.iter().product::<i64>() as usize * point.element.byte_size()
}

/// The smallest ring, window or blocks store of tensor `i` (several
/// dimensions, every read in its own nest) along one of its dimensions
/// (see the module documentation for what each read allows); `Full` when
/// no dimension works.
fn sliced(program: &Program, i: usize, layout: &Layout, reads: &[&Edge]) -> Storage {
    let domain = &program.tensors[i].domain;
    let n = domain.len();
    if n > 64 {
        return Storage::Full;
    }
    let level = |d: usize| layout.level(i, d).expect("a tensor's dimensions are loops of its nest");
    let position = |t: usize| layout.position(t);
    // (kept slice dimensions, kind rank, slots): smaller is better; each
    // kept dimension multiplies the store by its bound.
    let mut best: Option<((usize, u8, usize), Storage)> = None;
    'candidates: for along in 0..n {
        let along_level = level(domain[along]);
        let forward = layout.loop_at(i, along_level).1;
        let dropped = (0..n).filter(|&k| level(domain[k]) < along_level).fold(0u64, |mask, k| mask | 1 << k);
        let slicing = Slicing { along, dropped };
        let (mut farthest, mut unbounded, mut spans, mut after_run) = (0i64, false, false, false);
        for e in reads {
            let shifts = e.shifts.as_ref().expect("local");
            let present = |k: usize| shifts.get(&domain[k]) == Some(&(Some(0), Some(0))) && !e.spanned.contains(&k);
            if (0..n).any(|k| slicing.drops(k) && !present(k)) {
                continue 'candidates;
            }
            let shared = layout.shared_loops(e.reader, i);
            if shared > along_level {
                // In the same iteration of the along loop (and of the loops
                // around it): so many steps back along it.
                let Some(&shift) = shifts.get(&domain[along]) else { continue 'candidates };
                if !in_past(shift, forward) {
                    continue 'candidates;
                }
                match if forward { shift.0.map(|l| -l) } else { shift.1 } {
                    Some(r) => farthest = farthest.max(r),
                    None => unbounded = true,
                }
                spans |= e.spanned.contains(&along);
            } else if shared == along_level && along == n - 1 && position(i) < position(e.reader) {
                // After the run of the along loop, one of its last points.
                match e.fixed {
                    Some((j, from_end)) if from_end == forward => {
                        farthest = farthest.max(j);
                        after_run = true;
                    }
                    _ => continue 'candidates,
                }
            } else {
                continue 'candidates;
            }
        }
        let slots = (farthest as usize).saturating_add(1);
        let (rank, storage) = if unbounded {
            if after_run {
                continue;
            }
            (2, Storage::Blocks(block_points(point_bytes(program, i)), slicing))
        } else if spans {
            (1, Storage::Window(slots, slicing))
        } else {
            (0, Storage::Ring(slots, slicing))
        };
        let kept = (0..n).filter(|&k| k != along && !slicing.drops(k)).count();
        let cost = (kept, rank, slots);
        if best.as_ref().is_none_or(|(c, _)| cost < *c) {
            best = Some((cost, storage));
        }
    }
    best.map_or(Storage::Full, |(_, storage)| storage)
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
