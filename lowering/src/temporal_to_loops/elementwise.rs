//! Elementwise ops in `lower-temporal-to-loops`: one `linalg.generic` per
//! op over the broadcast result (NumPy rules: a stretched dimension reads
//! index 0), with the scalar body of each op matching the interpreter's
//! arithmetic (NaN-propagating max/min, saturating float-to-int casts).
//!
//! Chains are fused: an elementwise op whose only user is an elementwise op
//! of the same shape, or a sum, maximum or mean (and which is not the
//! branch's result), gets no buffer and no loop of its own; its user's
//! `linalg.generic` computes it inline, from the leaves of the chain. The
//! scalar ops are the same, in the same order per element, so results do
//! not change; a softmax's or a norm's
//! chain of elementwise ops becomes one loop instead of several, with no
//! temporaries between them.

use super::Emitter;
use super::kernels::{Config, broadcast_at, contiguous_dimension, copy_loops, inner_dimension, spreads};
use super::node_kinds::Elementwise;
use super::scalar::Chain;
use super::values::NodeValue;
use super::views::View;
use crate::ir_builder::{Builder, Extent, element_of};
use melior::ir::{AffineExpr, AffineMap, Value};
use tempo_passes::program::Node;
use tempo_passes::program::{ElementType, PointType};

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// One elementwise op over `inputs` (of elements `input_elements`)
    /// into `target` (see [`build_elementwise`]).
    pub(super) fn elementwise(
        &self,
        inputs: &[&View<'c, 'a>],
        input_elements: &[ElementType],
        target: &View<'c, 'a>,
        point: &PointType,
        op: Elementwise,
        b: &Builder<'c, 'a>,
    ) -> Result<(), String> {
        let leaves: Vec<View<'c, 'a>> = inputs.iter().map(|v| (*v).clone()).collect();
        let operand = match op {
            Elementwise::Cast(from) => from,
            _ => input_elements[0],
        };
        let chain = Chain::single(op, inputs.len(), point.element, operand);
        build_elementwise(b, &leaves, target, &chain, self.config())
    }

    /// Node `root` with the chain of inlined elementwise nodes under it, as
    /// one `linalg.generic` into `target` over the chain's leaves.
    pub(super) fn fused_elementwise(
        &self,
        root: usize,
        nodes: &[Node],
        views: &[NodeValue<'c, 'a>],
        inlined: &[bool],
        target: &View<'c, 'a>,
        b: &Builder<'c, 'a>,
    ) -> Result<(), String> {
        let chain = Chain::of(root, nodes, inlined);
        let leaves = chain.leaves.iter().map(|&l| views[l].view().cloned()).collect::<Result<Vec<_>, _>>()?;
        build_elementwise(b, &leaves, target, &chain, self.config())
    }
}

/// An elementwise op, or a chain of them fused, over its leaves into
/// `target`: one `linalg.generic` over the result, the leaves broadcast as
/// NumPy does (a stretched dimension reads index 0).
pub(super) fn build_elementwise<'c, 'a>(
    b: &Builder<'c, 'a>,
    leaves: &[View<'c, 'a>],
    target: &View<'c, 'a>,
    chain: &Chain,
    config: Config,
) -> Result<(), String> {
    let rank = target.sizes.len();
    // A leaf contiguous along another dimension than the last (read
    // transposed) is read in tiles; a large result spreads over threads.
    let unit = |e: &Extent| matches!(e, Extent::Static(1));
    let transposed = leaves.iter().find_map(|leaf| {
        let skip = rank - leaf.sizes.len();
        let to_result = |k: usize| if unit(&leaf.sizes[k]) { None } else { Some(skip + k) };
        contiguous_dimension(leaf.ty(), &to_result).filter(|&d| Some(d) != inner_dimension(&target.sizes))
    });
    if !config.gpu && (transposed.is_some() || spreads(b, &target.sizes, config)) {
        let (inner, ivs) = copy_loops(b, &target.sizes, transposed, config)?;
        let zero = inner.index(0)?;
        let arguments = leaves
            .iter()
            .map(|leaf| {
                let at = broadcast_at(&leaf.sizes, &target.sizes, &ivs, zero);
                inner.load(leaf.value, &at, element_of(leaf.value)?)
            })
            .collect::<Result<Vec<_>, String>>()?;
        let value = chain.apply(&inner, &arguments, config.approximate())?;
        return inner.store(value, target.value, &ivs);
    }
    let mut maps = broadcast_maps(b.context(), leaves, &target.sizes);
    maps.push(AffineMap::multi_dim_identity(b.context(), rank));
    let inputs: Vec<Value> = leaves.iter().map(|v| v.value).collect();
    let (body, arguments) = b.generic(&inputs, &[target.value], &maps, &vec!["parallel"; rank])?;
    let value = chain.apply(&body, &arguments[..leaves.len()], config.approximate())?;
    body.yield_values("linalg.yield", &[value])
}

/// The indexing maps of `inputs` over a result of sizes `shape`, under
/// NumPy broadcasting: operands align at the last dimension, and a static
/// size 1 under a larger result dimension reads index 0.
pub(super) fn broadcast_maps<'c>(
    context: &'c melior::Context,
    inputs: &[View<'c, '_>],
    shape: &[Extent<'c, '_>],
) -> Vec<AffineMap<'c>> {
    let rank = shape.len();
    let unit = |e: &Extent| matches!(e, Extent::Static(1));
    inputs
        .iter()
        .map(|v| {
            let skip = rank - v.sizes.len();
            let exprs: Vec<AffineExpr> = (0..v.sizes.len())
                .map(|j| match unit(&v.sizes[j]) && !unit(&shape[skip + j]) {
                    true => AffineExpr::constant(context, 0),
                    false => AffineExpr::dim(context, skip + j),
                })
                .collect();
            AffineMap::new(context, rank, 0, &exprs)
        })
        .collect()
}
