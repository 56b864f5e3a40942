//! Data-dependent stops (`temporal.stop`) in a run's outputs: where each
//! stopped dimension ended, outputs cut to it, and ragged stops' points
//! past their batch point's end.

use tempo_runtime::array::{Data, HostArray};
use tempo_runtime::invoke::Engine;

/// An output over a ragged stop's dimension and batch dimensions: its
/// number, the stopped dimension's axis, the batch dimensions' axes and
/// bounds (in the stop's order), and the stop's number.
pub(crate) struct RaggedOutput {
    pub(crate) output: usize,
    pub(crate) axis: usize,
    pub(crate) batch_axes: Vec<usize>,
    pub(crate) batch_extents: Vec<usize>,
    pub(crate) stop: usize,
}

/// Where the outputs meet the program's stops: what a run does to its
/// outputs after the code ran ([`finish_stops`]).
pub(crate) struct StopLayout {
    /// Outputs over a stopped dimension: (output, axis, stop).
    pub(crate) stopped: Vec<(usize, usize, usize)>,
    /// Outputs over a ragged stop's dimension and batch dimensions.
    pub(crate) ragged: Vec<RaggedOutput>,
    /// Each output's number of domain dimensions.
    pub(crate) domain_lengths: Vec<usize>,
    /// Each stop's `done` tensor, for its errors.
    pub(crate) stop_tensors: Vec<StopTensor>,
}

/// After a run of a program with stops: each stop's lengths (per batch
/// point for a ragged stop), the points past a ragged stop's lengths
/// zeroed, and outputs over a stopped dimension cut at its length.
pub(crate) fn finish_stops(
    engine: &Engine,
    layout: &StopLayout,
    outputs: &mut [HostArray],
    targets: &[Option<*mut u8>],
) -> Vec<Vec<i64>> {
    let StopLayout { stopped, ragged, domain_lengths, stop_tensors } = layout;
    let stops = stop_tensors.len();
    let lengths = engine.lookup(tempo_lowering::temporal_to_loops::stops::STOP_LENGTHS).map(|p| {
        // SAFETY: the global is a `memref<Kxi64>`, one word per stop.
        (0..stops).map(|k| unsafe { *(p as *const i64).add(k) }).collect::<Vec<i64>>()
    });
    let handed = tempo_runtime::ragged::take();
    let stop_lengths: Vec<Vec<i64>> = (0..stops)
        .map(|k| match handed.iter().find(|(s, _)| *s == k) {
            Some((_, per_point)) => per_point.clone(),
            None => lengths.as_ref().and_then(|l| l.get(k)).map(|&l| vec![l]).unwrap_or_default(),
        })
        .collect();
    // Points past a ragged stop's lengths are zero (the code did
    // not compute them), in the full layout before truncation.
    for RaggedOutput { output: o, axis, batch_axes: axes, batch_extents: extents, stop: k } in ragged {
        let Some((_, per_point)) = handed.iter().find(|(s, _)| s == k) else { continue };
        let shape = &outputs[*o].shape;
        let point_len: usize = shape[domain_lengths[*o]..].iter().product();
        let ranges = tempo_runtime::ragged::past_lengths(
            &shape[..domain_lengths[*o]],
            point_len,
            *axis,
            axes,
            extents,
            per_point,
        );
        let element = outputs[*o].data.element();
        for (first, count) in ranges {
            match targets[*o] {
                // SAFETY: the caller's memory holds the output's
                // elements (its shape and type were checked).
                Some(target) => unsafe {
                    std::ptr::write_bytes(target.add(first * element.byte_size()), 0, count * element.byte_size())
                },
                None => {
                    outputs[*o].data.write_at(first, &Data::zeros(element, count));
                }
            }
        }
    }
    for &(o, axis, k) in stopped {
        let Some(length) = lengths.as_ref().and_then(|l| l.get(k)).copied() else { continue };
        let length = length.max(0) as usize;
        match targets[o] {
            None => truncate(&mut outputs[o], axis, length),
            // Written in the caller's memory: its shape says how
            // much of it the run produced (the first `length`
            // entries along the axis).
            Some(_) => {
                if let Some(extent) = outputs[o].shape.get_mut(axis) {
                    *extent = (*extent).min(length);
                }
            }
        }
    }

    stop_lengths
}

/// Keeps the first `length` entries of `array` along `axis` (a stopped
/// dimension's points up to its stop).
pub(crate) fn truncate(array: &mut HostArray, axis: usize, length: usize) {
    let Some(&extent) = array.shape.get(axis) else { return };
    if length >= extent {
        return;
    }
    let outer: usize = array.shape[..axis].iter().product();
    let inner: usize = array.shape[axis + 1..].iter().product();
    let element = array.data.element();
    let mut kept = Data::zeros(element, outer * length * inner);
    for o in 0..outer {
        let from = tempo_runtime::interpreter::slice(&array.data, o * extent * inner, length * inner);
        kept.write_at(o * length * inner, &from);
    }
    array.shape[axis] = length;
    array.data = kept;
}

/// A stop's tensor as a run reports a point of it that no branch defines
/// (`tempo_undefined_stop_point`): where it is declared, its name, its
/// dimensions (each with its position among the stop's batch dimensions,
/// none for the stopped one) and the batch dimensions' extents.
pub(crate) struct StopTensor {
    pub(crate) location: String,
    pub(crate) name: String,
    pub(crate) domain: Vec<(String, Option<usize>)>,
    pub(crate) batch_extents: Vec<i64>,
}

impl StopTensor {
    /// The error for the point at `t` of batch point `flat` (row-major),
    /// worded as the interpreter's.
    pub(crate) fn undefined_point(&self, t: i64, flat: i64) -> String {
        let mut batch = vec![0i64; self.batch_extents.len()];
        let mut rest = flat;
        for (k, &e) in self.batch_extents.iter().enumerate().rev() {
            if e > 0 {
                batch[k] = rest % e;
                rest /= e;
            }
        }
        let coordinates: Vec<String> =
            self.domain.iter().map(|(name, position)| format!("{name}={}", position.map_or(t, |k| batch[k]))).collect();
        format!(
            "{}: error: point {}[{}] is needed but no branch of '{}' defines it",
            self.location,
            self.name,
            coordinates.join(", "),
            self.name
        )
    }
}
