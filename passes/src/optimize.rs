//! The optimizing pipelines of the temporal level (`-O` levels), run on a
//! program before it is scheduled and lowered:
//!
//! - `-O0`: none;
//! - `-O1`: `temporal-dce`, `temporal-dedup`, `temporal-dce`;
//! - `-O2` (the default of `tempo-run` and the Rust API): also
//!   `temporal-lift-recurrences`, `temporal-split-recurrences` (the
//!   time-parallel work of recurrent bodies into tensors of their own),
//!   `temporal-split-products` (the same out of tensors with per-step
//!   products of two varying values: weight gradients),
//!   `temporal-vectorize` (with the bound
//!   values of the run, which the program is then specialized for),
//!   `temporal-pack-products` (on the CPU with fast math: the weight of
//!   a per-step product of few rows packed once outside its loop, for the
//!   runtime's packed kernel), `temporal-fuse-attention` (on the CPU
//!   with fast math: softmax attention over ranges and its backward
//!   halves as `temporal.flash_attention`, the runtime's tiled kernels,
//!   which change float rounding as fast math allows),
//!   `temporal-simplify`, `temporal-share-values` (a large product
//!   several tensors compute at the same point, the forward pass's and
//!   the backward pass's copy, computed once) and
//!   `temporal-fuse-collectives` (independent
//!   all-reduces in one message); every pass exact, so results stay bit
//!   for bit those of the unoptimized program (with more than two
//!   processes, the MPI library may sum a fused message in another order);
//! - `-O3`: the same with the rewrites that may change float rounding:
//!   `inexact=true` (float matmul reassociation, lifting float suffix
//!   sums), `temporal-fuse-attention` on the CPU, and
//!   `temporal-tile-ranges` (softmax attention over dynamic ranges in
//!   static blocks, with a running maximum and sum).
//!
//! With a memory budget (`--memory-budget BYTES`), level 2 also runs
//! `temporal-tile-ranges`, limited to the attention whose temporaries could
//! exceed the budget: the one inexact rewrite, where memory needs it.
//!
//! Any pass can be left out of a level by name (`--disable-pass`), and so
//! can [`FUSION`], the fusion `lower-temporal-to-loops` does (its `fuse`
//! option), which is on at levels 1 to 3 and off at level 0.

/// The passes of level 2, in order: dead code goes first (less to look
/// at), duplicates are merged before and after the rewrites (which make
/// more ops equal), recurrences are lifted before batch dimensions are
/// vectorized, simplification cleans up after both (reshape chains), and
/// what became dead is removed last.
pub const O2_PASSES: &[&str] = &[
    "temporal-dce",
    "temporal-dedup",
    "temporal-lift-recurrences",
    "temporal-split-recurrences",
    "temporal-split-products",
    "temporal-fuse-attention",
    "temporal-vectorize",
    "temporal-pack-products",
    "temporal-simplify",
    "temporal-dedup",
    "temporal-share-values",
    "temporal-fuse-collectives",
    "temporal-dce",
];

/// The passes of level 3: level 2's with attention tiled after
/// vectorization (which does not batch the op tiling makes).
pub const O3_PASSES: &[&str] = &[
    "temporal-dce",
    "temporal-dedup",
    "temporal-lift-recurrences",
    "temporal-split-recurrences",
    "temporal-split-products",
    "temporal-fuse-attention",
    "temporal-vectorize",
    "temporal-tile-ranges",
    "temporal-pack-products",
    "temporal-simplify",
    "temporal-dedup",
    "temporal-share-values",
    "temporal-fuse-collectives",
    "temporal-dce",
];

/// The name `--disable-pass` takes for the fusion of
/// `lower-temporal-to-loops` (not a temporal pass: an option of the
/// lowering, `fuse`).
pub const FUSION: &str = "fusion";

/// The name `--disable-pass` takes for the batching of data groups by
/// `lower-temporal-to-loops` (its `batch-by-depth` option): without it,
/// the points of one depth run one by one.
pub const DEPTH_BATCHING: &str = "depth-batching";

/// Whether `lower-temporal-to-loops` computes the points of one depth of a
/// data group together, with the passes named in `disabled` left out (at
/// every level, `-O0` included: it changes no result).
pub fn depth_batching_enabled(disabled: &[String]) -> bool {
    !disabled.iter().any(|d| d == DEPTH_BATCHING)
}

/// Whether `lower-temporal-to-loops` fuses at optimization `level` with the
/// passes named in `disabled` left out.
pub fn fusion_enabled(level: u8, disabled: &[String]) -> bool {
    level >= 1 && !disabled.iter().any(|d| d == FUSION)
}

/// The passes of level 1.
pub const O1_PASSES: &[&str] = &["temporal-dce", "temporal-dedup", "temporal-dce"];

/// The passes that split tensors for group vectorization (CPU only): they
/// take the bound values.
const SPLITS: &[&str] = &["temporal-split-recurrences", "temporal-split-products"];

/// The pass that packs the weights of per-step products (CPU, fast math).
const PACKING: &str = "temporal-pack-products";

/// The pass that fuses attention for the runtime's kernels (CPU; level 3
/// or fast math).
const FUSED_ATTENTION: &str = "temporal-fuse-attention";

/// The pass that stores products several tensors compute (not under a
/// memory budget, which prefers computing them again).
const SHARING: &str = "temporal-share-values";

/// Passes taking the `inexact` option at level 3.
const INEXACT: &[&str] = &["temporal-simplify", "temporal-lift-recurrences"];

/// The pipeline text of optimization `level` without the passes named in
/// `disabled` (empty: nothing to run); an error for a level above 3 or a
/// name that is not one of the level's passes. `bounds` (`T=10,B=3`) are
/// the bound values of the run, for `temporal-vectorize`.
pub fn optimization_pipeline(level: u8, disabled: &[String], bounds: &str) -> Result<String, String> {
    optimization_pipeline_within(level, disabled, bounds, None)
}

/// [`optimization_pipeline`] with a memory budget (bytes): at level 2,
/// softmax attention over a range is tiled (`temporal-tile-ranges`, which
/// changes float rounding) where its range-long temporaries could exceed
/// the budget at the run's bounds, and nowhere else. (Level 3 tiles all of
/// it anyway; levels 0 and 1 do not tile.)
pub fn optimization_pipeline_within(
    level: u8,
    disabled: &[String],
    bounds: &str,
    memory_budget: Option<u64>,
) -> Result<String, String> {
    optimization_pipeline_for(level, disabled, bounds, memory_budget, true)
}

/// [`optimization_pipeline_within`] for the CPU (`cpu`) or the GPU target.
/// The GPU's keeps recurrences whole: `temporal-split-recurrences` is left
/// out and `temporal-vectorize` batches whole dimensions only (`groups`
/// off). Its mapping fuses a step's input product into the step's kernel;
/// a batched one costs a kernel of its own, and the per-step launches
/// have not been measured against it on a GPU yet.
pub fn optimization_pipeline_for(
    level: u8,
    disabled: &[String],
    bounds: &str,
    memory_budget: Option<u64>,
    cpu: bool,
) -> Result<String, String> {
    optimization_pipeline_of(level, disabled, bounds, memory_budget, cpu, false)
}

/// [`optimization_pipeline_for`] for a run with `fast_math`, which lets
/// `temporal-split-products` sum a weight gradient's per-step products as
/// one product over all steps (`inexact`, as level 3 does).
pub fn optimization_pipeline_of(
    level: u8,
    disabled: &[String],
    bounds: &str,
    memory_budget: Option<u64>,
    cpu: bool,
    fast_math: bool,
) -> Result<String, String> {
    let budget = memory_budget.filter(|_| level == 2);
    let passes: &[&str] = match level {
        0 => &[],
        1 => O1_PASSES,
        2 if budget.is_some() => O3_PASSES,
        2 => O2_PASSES,
        3 => O3_PASSES,
        _ => return Err(format!("optimization level {level} does not exist (0 to 3)")),
    };
    for name in disabled {
        if !O3_PASSES.contains(&name.as_str()) && name != FUSION && name != DEPTH_BATCHING {
            return Err(format!(
                "'{name}' is not a temporal optimization pass (one of {}), '{FUSION}' or '{DEPTH_BATCHING}'",
                unique(O3_PASSES).join(", ")
            ));
        }
    }
    let kept: Vec<String> = passes
        .iter()
        .filter(|p| !disabled.iter().any(|d| d == *p))
        .filter(|p| (**p != "temporal-vectorize" && !SPLITS.contains(p)) || !bounds.is_empty())
        .filter(|p| cpu || !SPLITS.contains(p))
        // The packed products are for the runtime's kernel, which the
        // lowering calls with fast math on the CPU.
        .filter(|p| **p != PACKING || (cpu && fast_math))
        // The fused attention is the CPU runtime's kernels, and inexact:
        // level 3, or level 2 with fast math.
        .filter(|p| **p != FUSED_ATTENTION || (cpu && (level == 3 || fast_math)))
        // Sharing values keeps them stored: not where memory is budgeted.
        .filter(|p| **p != SHARING || memory_budget.is_none())
        .map(|p| match *p {
            "temporal-vectorize" if !cpu => format!("{p}{{bounds={bounds} groups=false}}"),
            "temporal-split-products" if level == 3 || fast_math => match memory_budget {
                Some(bytes) => format!("{p}{{bounds={bounds} inexact=true memory-budget={bytes}}}"),
                None => format!("{p}{{bounds={bounds} inexact=true}}"),
            },
            _ if **p == *"temporal-vectorize" || SPLITS.contains(p) => format!("{p}{{bounds={bounds}}}"),
            "temporal-tile-ranges" if level == 2 => {
                format!("{p}{{memory-budget={} bounds={bounds}}}", budget.unwrap_or_default())
            }
            _ if level == 3 && INEXACT.contains(p) => format!("{p}{{inexact=true}}"),
            _ => p.to_string(),
        })
        .collect();
    // Gradients are expanded first, at every level.
    Ok(std::iter::once("temporal-autodiff".to_string()).chain(kept).collect::<Vec<_>>().join(", "))
}

/// The distinct names of `passes`, in order.
pub fn unique(passes: &[&'static str]) -> Vec<&'static str> {
    let mut out: Vec<&str> = Vec::new();
    for p in passes {
        if !out.contains(p) {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_disabled_passes() {
        assert_eq!(optimization_pipeline(0, &[], "").unwrap(), "temporal-autodiff");
        assert_eq!(
            optimization_pipeline(1, &[], "").unwrap(),
            "temporal-autodiff, temporal-dce, temporal-dedup, temporal-dce"
        );
        assert_eq!(
            optimization_pipeline(2, &["temporal-dedup".into()], "").unwrap(),
            "temporal-autodiff, temporal-dce, temporal-lift-recurrences, temporal-simplify, temporal-share-values, \
             temporal-fuse-collectives, temporal-dce"
        );
        // Attention fused for the CPU runtime's kernels: -O3, or -O2 with fast math.
        let fused = |level, cpu, fast| {
            optimization_pipeline_of(level, &[], "T=4", None, cpu, fast).unwrap().contains("temporal-fuse-attention")
        };
        assert!(fused(3, true, false) && fused(2, true, true));
        assert!(!fused(2, true, false) && !fused(3, false, false) && !fused(2, false, true));
        assert!(optimization_pipeline(2, &[], "B=3").unwrap().contains("temporal-vectorize{bounds=B=3}"));
        assert!(optimization_pipeline(3, &[], "").unwrap().contains("temporal-simplify{inexact=true}"));
        assert!(optimization_pipeline(3, &[], "").unwrap().contains("temporal-tile-ranges"));
        assert!(!optimization_pipeline(2, &[], "").unwrap().contains("temporal-tile-ranges"));
        assert!(optimization_pipeline(4, &[], "").is_err());
        let wrong = optimization_pipeline(2, &["canonicalize".into()], "").unwrap_err();
        assert!(wrong.contains("not a temporal optimization pass"));
        // A memory budget tiles at level 2, only over it.
        assert_eq!(
            optimization_pipeline_within(2, &[], "T=9", Some(1024)).unwrap(),
            "temporal-autodiff, temporal-dce, temporal-dedup, temporal-lift-recurrences, \
             temporal-split-recurrences{bounds=T=9}, temporal-split-products{bounds=T=9}, temporal-vectorize{bounds=T=9}, \
             temporal-tile-ranges{memory-budget=1024 bounds=T=9}, temporal-simplify, temporal-dedup, \
             temporal-fuse-collectives, temporal-dce"
        );
        // Fast math (and level 3) sums weight gradients as one product.
        assert!(
            optimization_pipeline_of(2, &[], "T=9", None, true, true)
                .unwrap()
                .contains("temporal-split-products{bounds=T=9 inexact=true}")
        );
        assert!(
            optimization_pipeline(3, &[], "T=9").unwrap().contains("temporal-split-products{bounds=T=9 inexact=true}")
        );
        // Under a memory budget, only where its rows fit.
        assert!(
            optimization_pipeline_of(2, &[], "T=9", Some(4096), true, true)
                .unwrap()
                .contains("temporal-split-products{bounds=T=9 inexact=true memory-budget=4096}")
        );
        // The GPU target keeps recurrences whole.
        let gpu = optimization_pipeline_for(2, &[], "T=9", None, false).unwrap();
        assert!(gpu.contains("temporal-vectorize{bounds=T=9 groups=false}") && !gpu.contains("split"));
        // (Level 3 tiles all attention anyway; a budget leaves sharing out.)
        assert_eq!(optimization_pipeline_within(3, &[], "", Some(1)), optimization_pipeline(3, &[SHARING.into()], ""));
        assert_eq!(optimization_pipeline_within(1, &[], "", Some(1)), optimization_pipeline(1, &[], ""));
        // Fusion is the lowering's: accepted, not a pass of the pipeline.
        assert_eq!(optimization_pipeline(2, &[FUSION.into()], ""), optimization_pipeline(2, &[], ""));
        assert!(fusion_enabled(2, &[]) && fusion_enabled(1, &[]));
        assert!(!fusion_enabled(0, &[]) && !fusion_enabled(3, &[FUSION.into()]));
    }
}
