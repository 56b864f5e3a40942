//! Reductions in `lower-temporal-to-loops`: sums, maxima and means along
//! an axis (`linalg.generic` reductions), argmax (first maximum) and
//! cumulative sums, each summing in the interpreter's order.

use super::kernels::{Config, element_type, loop_nest};
use super::reduction_parts::{ReduceInput, combine_op, lowest};
use super::scalar::Chain;
use super::views::View;
use super::{Emitter, elementwise};
use crate::ir_builder::{Builder, Compare, Extent, FloatCompare};
use melior::ir::{AffineExpr, AffineMap, Attribute, Value};
use tempo_passes::program::{ElementType, PointType, ReduceKind};

/// An elementwise chain fused into a reduction: its scalar steps and the
/// views of its leaves.
pub(super) struct Fused<'r, 'c, 'a> {
    pub chain: &'r Chain,
    pub leaves: Vec<View<'c, 'a>>,
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// Sum, maximum or mean along `axis` into `target` (see
    /// [`build_reduce`]) of `input`, of `sizes`; with `fused`, of an
    /// elementwise chain fused into the reduction: its leaves are read and
    /// its value computed per element.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn reduce(
        &mut self,
        kind: ReduceKind,
        sizes: &[Extent<'c, 'a>],
        input: Option<&View<'c, 'a>>,
        axis: usize,
        target: &View<'c, 'a>,
        ty: &PointType,
        fused: Option<Fused<'_, 'c, 'a>>,
        b: &Builder<'c, 'a>,
    ) -> Result<(), String> {
        let leaves: Vec<View<'c, 'a>> = match (&fused, input) {
            (Some(f), _) => f.leaves.clone(),
            (None, Some(v)) => vec![v.clone()],
            (None, None) => return Err("compiler fault: a reduction of nothing".into()),
        };
        let chain = fused.as_ref().map(|f| f.chain);
        let input = ReduceInput { leaves: &leaves, chain, shape: sizes };
        if self.gpu_split_reduce(kind, &input, axis, target, ty, b)? {
            return Ok(());
        }
        if self.options.gpu {
            // A thread per result, the running value in a register.
            let n = b.extent(sizes[axis])?;
            let results: Vec<Value> =
                (0..sizes.len()).filter(|&k| k != axis).map(|k| b.extent(sizes[k])).collect::<Result<_, _>>()?;
            let stages = super::gpu_reduction::Stages::Reduce { kind, chain, axis };
            return super::gpu_reduction::build_one_stage(b, &stages, &leaves, sizes, n, &results, ty.element, target);
        }
        build_reduce(b, kind, &input, axis, target, ty.element, self.config())
    }
}

/// Sum, maximum or mean of `input` along `axis` into `target`, in order:
/// the target filled with the starting value, one `linalg.generic`
/// combining each element into it (with `fast-math`, float sums may be
/// reassociated: vectorized), and for a mean a second dividing by the
/// axis's length (0 / 0 is NaN). (The GPU folds a register instead:
/// `gpu_reduction::build_one_stage`.)
pub(super) fn build_reduce<'c, 'a>(
    b: &Builder<'c, 'a>,
    kind: ReduceKind,
    input: &ReduceInput<'_, 'c, 'a>,
    axis: usize,
    target: &View<'c, 'a>,
    element: ElementType,
    config: Config,
) -> Result<(), String> {
    let e = element_type(b, element);
    let combine = combine_op(kind, element);
    let start = match kind {
        ReduceKind::Max => lowest(b, element)?,
        _ => super::movement::zero(b, element)?,
    };
    b.fill(start, target.value)?;
    let rank = input.shape.len();
    let (identity, kept, iterators) = reduction_maps(b, rank, axis);
    let mut maps = match input.chain {
        Some(_) => elementwise::broadcast_maps(b.context(), input.leaves, input.shape),
        None => vec![identity],
    };
    maps.push(kept);
    let inputs: Vec<Value> = input.leaves.iter().map(|v| v.value).collect();
    let (body, arguments) = b.generic(&inputs, &[target.value], &maps, &iterators)?;
    let n = inputs.len();
    let value = match input.chain {
        Some(chain) => chain.apply(&body, &arguments[..n], config.approximate())?,
        None => arguments[0],
    };
    let mut flags = Vec::new();
    if config.fast_math && element.is_float() {
        let reassoc =
            Attribute::parse(b.context(), "#arith.fastmath<reassoc>").ok_or("compiler fault: the fastmath flags")?;
        flags.push(("fastmath", reassoc));
    }
    let sum = body.value(combine, &[arguments[n], value], e, &flags)?;
    body.yield_values("linalg.yield", &[sum])?;
    if kind == ReduceKind::Mean {
        let length = match input.shape[axis] {
            Extent::Static(n) => b.float(n as f64, e)?,
            Extent::Value(v) => b.convert("arith.sitofp", b.index_cast(v, b.integer_type(64))?, e)?,
        };
        let rank = rank - 1;
        let identity = AffineMap::multi_dim_identity(b.context(), rank);
        let (body, arguments) = b.generic(&[], &[target.value], &[identity], &vec!["parallel"; rank])?;
        body.yield_values("linalg.yield", &[body.arith("divf", arguments[0], length)?])?;
    }
    Ok(())
}

/// The maps of a reduction along `axis` of rank `rank`: the identity and
/// the projection dropping `axis`; and the iterator types.
fn reduction_maps<'c>(
    b: &Builder<'c, '_>,
    rank: usize,
    axis: usize,
) -> (AffineMap<'c>, AffineMap<'c>, Vec<&'static str>) {
    let context = b.context();
    let kept: Vec<AffineExpr> = (0..rank).filter(|&k| k != axis).map(|k| AffineExpr::dim(context, k)).collect();
    let iterators = (0..rank).map(|k| if k == axis { "reduction" } else { "parallel" }).collect();
    (AffineMap::multi_dim_identity(context, rank), AffineMap::new(context, rank, 0, &kept), iterators)
}

/// Index of the first maximum of `input` along `axis` into `target`
/// (`i64`), keeping the running maximum in `best`: one `linalg.generic`
/// replacing the best only on a strictly greater element.
pub(super) fn build_argmax<'c, 'a>(
    b: &Builder<'c, 'a>,
    input: &View<'c, 'a>,
    axis: usize,
    best: &View<'c, 'a>,
    target: &View<'c, 'a>,
    element: ElementType,
) -> Result<(), String> {
    b.fill(lowest(b, element)?, best.value)?;
    b.fill(b.i64(0)?, target.value)?;
    let (identity, kept, iterators) = reduction_maps(b, input.sizes.len(), axis);
    let (body, arguments) =
        b.generic(&[input.value], &[best.value, target.value], &[identity, kept, kept], &iterators)?;
    let [a, current, index] = arguments[..] else { return Err("compiler fault: argmax's arguments".into()) };
    let here = body.index_cast(body.linalg_index(axis)?, body.integer_type(64))?;
    let larger = match element.is_float() {
        true => body.compare_floats(FloatCompare::Ogt, a, current)?,
        false => body.compare(Compare::Sgt, a, current)?,
    };
    let new_best = body.select(larger, a, current)?;
    let new_index = body.select(larger, here, index)?;
    body.yield_values("linalg.yield", &[new_best, new_index])
}

/// Running sum of `input` along `axis` into `target`: explicit loops, the
/// axis innermost and sequential (for the GPU, inside one parallel loop
/// over the other dimensions), each element the previous sum plus itself.
pub(super) fn build_cumsum<'c, 'a>(
    b: &Builder<'c, 'a>,
    input: &View<'c, 'a>,
    axis: usize,
    target: &View<'c, 'a>,
    element: ElementType,
    config: Config,
) -> Result<(), String> {
    let rank = input.sizes.len();
    let outer: Vec<usize> = (0..rank).filter(|&k| k != axis).collect();
    let (inner, ivs) = if config.gpu {
        // The other dimensions are one parallel loop (a kernel; a single
        // scan is a loop of one), the axis a sequential loop in it.
        let sizes: Vec<Extent> = match outer.is_empty() {
            true => vec![Extent::Static(1)],
            false => outer.iter().map(|&k| input.sizes[k]).collect(),
        };
        let upper: Vec<Value> = sizes.iter().map(|&s| b.extent(s)).collect::<Result<_, _>>()?;
        let (parallel, outer_ivs) = b.scf_parallel(&upper)?;
        let (scan, scan_ivs) = loop_nest(&parallel, &[input.sizes[axis]], &[0])?;
        let mut ivs = scan_ivs.clone();
        ivs.resize(rank, scan_ivs[0]);
        for (j, &k) in outer.iter().enumerate() {
            ivs[k] = outer_ivs[j];
        }
        ivs[axis] = scan_ivs[0];
        (scan, ivs)
    } else {
        let mut order = outer.clone();
        order.push(axis);
        loop_nest(b, &input.sizes, &order)?
    };
    let e = element_type(&inner, element);
    let value = inner.load(input.value, &ivs, e)?;
    let first = inner.compare(Compare::Eq, ivs[axis], inner.index(0)?)?;
    let (then, otherwise, sum) = inner.scf_if(first, &[e])?;
    then.yield_values("scf.yield", &[value])?;
    let mut previous_index = ivs.clone();
    previous_index[axis] = otherwise.arith("subi", ivs[axis], otherwise.index(1)?)?;
    let previous = otherwise.load(target.value, &previous_index, e)?;
    let add = if element.is_float() { "addf" } else { "addi" };
    otherwise.yield_values("scf.yield", &[otherwise.arith(add, previous, value)?])?;
    inner.store(sum[0], target.value, &ivs)
}
