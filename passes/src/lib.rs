//! Temporal-level analyses and passes, and the pass infrastructure shared by
//! every level: the [`pass::TempoPass`] trait, the [`pass::PassRegistry`],
//! pipeline parsing and execution, and located diagnostics.

pub mod affine;
pub mod collectives;
pub mod compile_options;
pub mod data_reads;
pub mod diagnostics;
pub mod emit;
pub mod fault;
pub mod optimize;
pub mod pass;
pub mod pipeline;
pub mod print;
pub mod program;
pub mod rewrite;
pub mod sdg;
pub mod shifts;
pub mod stops;
pub mod support;
pub mod temporal_autodiff;
pub mod temporal_dce;
pub mod temporal_dedup;
pub mod temporal_drop_pinned_dims;
pub mod temporal_fuse_attention;
pub mod temporal_fuse_collectives;
pub mod temporal_lift_recurrences;
pub mod temporal_pack_products;
pub mod temporal_share_values;
pub mod temporal_simplify;
pub mod temporal_split_products;
pub mod temporal_split_recurrences;
pub mod temporal_tile_ranges;
pub mod temporal_vectorize;
pub mod temporal_verify;
pub mod verify;

/// Registers the temporal-level passes of this crate.
pub fn register_passes(registry: &mut pass::PassRegistry) {
    registry.add_pass(temporal_autodiff::TemporalAutodiff);
    registry.add_pass(temporal_verify::VerifyTemporal);
    registry.add_pass(temporal_dce::TemporalDce);
    registry.add_pass(temporal_dedup::TemporalDedup);
    registry.add_pass(temporal_drop_pinned_dims::TemporalDropPinnedDims);
    registry.add_pass(temporal_fuse_collectives::TemporalFuseCollectives);
    registry.add_pass(temporal_simplify::TemporalSimplify);
    registry.add_pass(temporal_lift_recurrences::TemporalLiftRecurrences);
    registry.add_pass(temporal_split_recurrences::TemporalSplitRecurrences);
    registry.add_pass(temporal_split_products::TemporalSplitProducts);
    registry.add_pass(temporal_vectorize::TemporalVectorize);
    registry.add_pass(temporal_tile_ranges::TemporalTileRanges);
    registry.add_pass(temporal_fuse_attention::TemporalFuseAttention);
    registry.add_pass(temporal_share_values::TemporalShareValues);
    registry.add_pass(temporal_pack_products::TemporalPackProducts);
}
