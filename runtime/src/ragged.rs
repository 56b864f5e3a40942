//! The run-time half of ragged stops (`temporal.stop` over `done[b, t]`,
//! see `lowering/src/temporal_to_loops/stops.rs`): the compiled code hands
//! each ragged stop's lengths over ([`tempo_ragged_lengths`]) once its
//! nest has run, and the runtime zeroes the outputs past them
//! ([`zero_past`]) and reports them.

use std::cell::RefCell;

thread_local! {
    /// Per ragged stop (by number), its lengths in the run.
    static LENGTHS: RefCell<Vec<(usize, Vec<i64>)>> = const { RefCell::new(Vec::new()) };
}

thread_local! {
    /// The first point of a stop's tensor that no branch defines, as
    /// `(stop, coordinate along the stopped dimension, batch point)`.
    static UNDEFINED: RefCell<Option<(usize, i64, i64)>> = const { RefCell::new(None) };
}

/// Forgets the lengths and the undefined point of an earlier run.
pub fn clear() {
    LENGTHS.with(|l| l.borrow_mut().clear());
    UNDEFINED.with(|u| *u.borrow_mut() = None);
}

/// The first point of a stop's tensor the run found undefined, if any.
pub fn take_undefined() -> Option<(usize, i64, i64)> {
    UNDEFINED.with(|u| u.borrow_mut().take())
}

/// Called by the compiled code where stop `stop`'s tensor has no branch
/// for the point it looks at (`t` along the stopped dimension, `batch` the
/// row-major number of its batch point); the run then fails with it.
pub extern "C" fn tempo_undefined_stop_point(stop: i64, t: i64, batch: i64) {
    UNDEFINED.with(|u| {
        u.borrow_mut().get_or_insert((stop.max(0) as usize, t, batch));
    });
}

/// The lengths the run handed over, by stop number.
pub fn take() -> Vec<(usize, Vec<i64>)> {
    LENGTHS.with(|l| std::mem::take(&mut *l.borrow_mut()))
}

/// Called by the compiled code: ragged stop `stop`'s `count` lengths
/// (`i64`) are at `address`.
///
/// # Safety
/// `address` points to `count` readable `i64` words.
pub unsafe extern "C" fn tempo_ragged_lengths(stop: i64, address: i64, count: i64) {
    let count = count.max(0) as usize;
    let lengths = if count == 0 {
        Vec::new()
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(address as *const i64, count) }.to_vec()
    };
    LENGTHS.with(|l| l.borrow_mut().push((stop.max(0) as usize, lengths)));
}

/// The element ranges `(first, count)` of an output laid out with
/// `extents` along its domain (row-major, `point_len` elements per point)
/// that are past a ragged stop's lengths: points whose coordinate along
/// axis `axis` is at least the length of their batch point. `batch_axes`
/// are the batch dimensions' axes in the stop's order and `batch_extents`
/// their extents in the lengths' numbering.
pub fn past_lengths(
    extents: &[usize],
    point_len: usize,
    axis: usize,
    batch_axes: &[usize],
    batch_extents: &[usize],
    lengths: &[i64],
) -> Vec<(usize, usize)> {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let points: usize = extents.iter().product();
    let mut point = vec![0usize; extents.len()];
    for flat in 0..points {
        let mut b = 0usize;
        for (&a, &e) in batch_axes.iter().zip(batch_extents) {
            b = b * e + point[a];
        }
        let length = lengths.get(b).copied().unwrap_or(0).max(0) as usize;
        if point[axis] >= length {
            match ranges.last_mut() {
                Some((first, count)) if *first + *count == flat * point_len => *count += point_len,
                _ => ranges.push((flat * point_len, point_len)),
            }
        }
        for k in (0..point.len()).rev() {
            point[k] += 1;
            if point[k] < extents[k] {
                break;
            }
            point[k] = 0;
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::past_lengths;

    #[test]
    fn points_past_their_batch_length_are_found() {
        // Over (b, t), 2 x 3, points of 2 elements; lengths 1 and 3.
        assert_eq!(past_lengths(&[2, 3], 2, 1, &[0], &[2], &[1, 3]), vec![(2, 4)]);
        // Over (t, b): t first.
        assert_eq!(past_lengths(&[3, 2], 1, 0, &[1], &[2], &[1, 3]), vec![(2, 1), (4, 1)]);
    }
}
