//! Where the interpreter keeps computed points: one store per tensor,
//! row-major over the tensor's whole domain, with a bit per point for
//! "computed" and one for "in progress".
//!
//! An output keeps every point in one array, which is returned whole at the
//! end. Any other tensor keeps its points in chunks of [`CHUNK`] points:
//! a chunk is allocated when one of its points is first written and dropped
//! once no read of its points is left to be made. The reads left are
//! counted before evaluation (`Interpreter::count_reads`: every read that a
//! needed point makes, so at least every read the evaluation will make) and
//! counted down as reads are made, so a running total kept in an internal
//! tensor (`s[t] = s[t-1] + x[t]`, output `y[t] = s[t]`) holds a chunk or
//! two of `s`, not every point. A tensor whose reads were not counted keeps
//! every chunk. Reading a dropped chunk is an internal error, never a wrong
//! value.

use super::values::slice;
use crate::array::Data;
use crate::memory::{bytes_of, check_fits};
use tempo_passes::program::ElementType;
use tempo_passes::support::bits::Bits;

/// Points per chunk of a tensor that is not an output.
pub(super) const CHUNK: usize = 4096;

enum Chunk {
    Unwritten,
    Live(Data),
    Dropped,
}

/// The computed points of one tensor (see the module documentation).
pub(super) struct PointStore {
    pub(super) extents: Vec<i64>,
    point_len: usize,
    element: ElementType,
    /// Keep every point in `whole` (outputs).
    keep_all: bool,
    whole: Option<Data>,
    chunks: Vec<Chunk>,
    /// Per chunk, the reads of its points still to be made; empty when
    /// they were not counted (nothing is dropped).
    pending: Vec<u64>,
    allocated: bool,
    /// Chunks allocated and not dropped, now and at most so far.
    live_chunks: usize,
    peak_live_chunks: usize,
    done: Bits,
    busy: Bits,
}

impl PointStore {
    pub(super) fn new(extents: Vec<i64>, point_len: usize, element: ElementType, keep_all: bool) -> Self {
        Self {
            extents,
            point_len,
            element,
            keep_all,
            whole: None,
            chunks: Vec::new(),
            pending: Vec::new(),
            allocated: false,
            live_chunks: 0,
            peak_live_chunks: 0,
            done: Bits::default(),
            busy: Bits::default(),
        }
    }

    /// The number of points of the domain (`None` past 2^64).
    pub(super) fn points(&self) -> Option<u64> {
        self.extents.iter().try_fold(1u64, |acc, &e| acc.checked_mul(e.max(0) as u64))
    }

    /// Row-major index of `point` (in bounds: reads are checked before).
    pub(super) fn index(&self, point: &[i64]) -> usize {
        point.iter().zip(&self.extents).fold(0usize, |acc, (&c, &e)| acc * e as usize + c as usize)
    }

    /// The point at row-major index `flat`.
    pub(super) fn point(&self, mut flat: u64) -> Vec<i64> {
        let mut point = vec![0i64; self.extents.len()];
        for (c, &e) in point.iter_mut().zip(&self.extents).rev() {
            let e = e.max(1) as u64;
            *c = (flat % e) as i64;
            flat /= e;
        }
        point
    }

    pub(super) fn is_done(&self, point: &[i64]) -> bool {
        self.done.get(self.index(point))
    }

    pub(super) fn is_busy(&self, point: &[i64]) -> bool {
        self.busy.get(self.index(point))
    }

    /// The check made before the store is allocated: the whole store (every
    /// point and both bitsets) fits in memory, whether or not its chunks
    /// are dropped later.
    pub(super) fn check_fits(&self, name: &str) -> Result<(), String> {
        let bytes = self.points().and_then(|p| {
            let bits = p.div_ceil(64).checked_mul(16)?;
            bytes_of([p, self.point_len as u64], self.element.byte_size() as u64)?.checked_add(bits)
        });
        check_fits(bytes, &format!("the interpreter's store of every point of '{name}'"))
    }

    /// Allocates the bitsets (and, for an output, the array of every
    /// point), after checking that the whole store fits in memory.
    fn allocate(&mut self, name: &str) -> Result<(), String> {
        if self.allocated {
            return Ok(());
        }
        self.check_fits(name)?;
        let points = self.points().unwrap_or(0);
        let cannot = || format!("cannot allocate the interpreter's store of '{name}'");
        let done = Bits::new(points, false).ok_or_else(cannot)?;
        let busy = Bits::new(points, false).ok_or_else(cannot)?;
        let points = usize::try_from(points).map_err(|_| format!("the store of '{name}' is too large"))?;
        if self.keep_all {
            let len =
                points.checked_mul(self.point_len).ok_or_else(|| format!("the store of '{name}' is too large"))?;
            self.whole = Some(
                Data::try_zeros(self.element, len)
                    .map_err(|e| format!("the interpreter's store of every point of '{name}': {e}"))?,
            );
        } else {
            let count = points.div_ceil(CHUNK);
            let mut chunks = Vec::new();
            chunks.try_reserve_exact(count).map_err(|_| cannot())?;
            chunks.resize_with(count, || Chunk::Unwritten);
            self.chunks = chunks;
        }
        self.done = done;
        self.busy = busy;
        self.allocated = true;
        Ok(())
    }

    /// Sets the number of reads left per chunk (every chunk of a tensor
    /// that is not an output), enabling drops.
    pub(super) fn set_pending(&mut self, pending: Vec<u64>) {
        if !self.keep_all {
            self.pending = pending;
        }
    }

    /// Whether reads of this tensor are counted (it is not an output).
    pub(super) fn counts_reads(&self) -> bool {
        !self.keep_all
    }

    pub(super) fn set_busy(&mut self, name: &str, point: &[i64], on: bool) -> Result<(), String> {
        self.allocate(name)?;
        let i = self.index(point);
        self.busy.put(i, on);
        Ok(())
    }

    pub(super) fn put(&mut self, name: &str, point: &[i64], value: &Data) -> Result<(), String> {
        self.allocate(name)?;
        let i = self.index(point);
        let fits = value.len() == self.point_len;
        let written = if self.keep_all {
            fits && self.whole.as_mut().is_some_and(|data| data.write_at(i * self.point_len, value))
        } else {
            let (c, at) = (i / CHUNK, i % CHUNK * self.point_len);
            let len = CHUNK.min(self.points().unwrap_or(0) as usize - c * CHUNK) * self.point_len;
            match &mut self.chunks[c] {
                Chunk::Dropped => {
                    return Err(format!("internal error: a point of '{name}' is written after its chunk was dropped"));
                }
                chunk @ Chunk::Unwritten => {
                    let data = Data::try_zeros(self.element, len)
                        .map_err(|e| format!("the interpreter's store of '{name}': {e}"))?;
                    *chunk = Chunk::Live(data);
                    self.live_chunks += 1;
                    self.peak_live_chunks = self.peak_live_chunks.max(self.live_chunks);
                    let Chunk::Live(data) = chunk else { unreachable!("just set") };
                    fits && data.write_at(at, value)
                }
                Chunk::Live(data) => fits && data.write_at(at, value),
            }
        };
        if !written {
            return Err(format!(
                "a point of '{name}' has {} {} elements, but the tensor's points have {} {} elements",
                value.len(),
                value.element().numpy(),
                self.point_len,
                self.element.numpy()
            ));
        }
        self.done.set(i);
        Ok(())
    }

    /// The value of a computed point.
    pub(super) fn get(&self, name: &str, point: &[i64]) -> Result<Data, String> {
        let i = self.index(point);
        if self.keep_all {
            return Ok(match &self.whole {
                Some(data) => slice(data, i * self.point_len, self.point_len),
                None => Data::zeros(self.element, self.point_len),
            });
        }
        match self.chunks.get(i / CHUNK) {
            Some(Chunk::Live(data)) => Ok(slice(data, i % CHUNK * self.point_len, self.point_len)),
            _ => Err(format!("internal error: a point of '{name}' is read after its chunk was dropped")),
        }
    }

    /// One read of the point at row-major index `flat` is made: counts it
    /// off, dropping the point's chunk when it was the last read left.
    pub(super) fn read_made(&mut self, flat: usize) {
        let c = flat / CHUNK;
        if let Some(left) = self.pending.get_mut(c) {
            *left = left.saturating_sub(1);
            if *left == 0 && matches!(self.chunks[c], Chunk::Live(_)) {
                self.chunks[c] = Chunk::Dropped;
                self.live_chunks -= 1;
            }
        }
    }

    /// The most chunks this store held at once (0 for an output).
    #[cfg(test)]
    pub(super) fn peak_live_chunks(&self) -> usize {
        self.peak_live_chunks
    }

    /// The chunks it holds now.
    #[cfg(test)]
    pub(super) fn live_chunks(&self) -> usize {
        self.live_chunks
    }

    /// Every point, row-major (for an output; empty if nothing was written).
    pub(super) fn take_all(&mut self) -> Option<Data> {
        self.whole.take()
    }
}
