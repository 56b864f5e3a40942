//! The optimizing pipelines of the temporal level (`-O` levels), run on a
//! program before it is scheduled and lowered:
//!
//! - `-O0`: none;
//! - `-O1`: `temporal-dce`, `temporal-dedup`, `temporal-dce`;
//! - `-O2` (the default of `tempo-run` and the Rust API): also
//!   `temporal-lift-recurrences`, `temporal-drop-pinned-dims` (a tensor
//!   read at one point of a dimension only, such as a gradient
//!   contribution of an LSTM's first step, computed at that point alone;
//!   after the lifting, which turns a prefix read at the last step into a
//!   running sum), `temporal-split-recurrences` (the
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
//!   sums, batching a masked range contracted with a second operand that
//!   carries it, which assumes finite points outside the ranges),
//!   `temporal-fuse-attention` on the CPU, and
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
    "temporal-drop-pinned-dims",
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
    "temporal-drop-pinned-dims",
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

use crate::compile_options::{CompileOptions, Target};
pub use crate::compile_options::{DEPTH_BATCHING, FUSION};
use crate::pass::OptionValue;
use crate::pipeline::Step;

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

/// The steps of the optimization level of `options` (gradients expanded
/// first, at every level), without the passes it disables; an error for a
/// level above 3 or a disabled name that is not one of the level's passes.
///
/// - The bound values feed `temporal-vectorize` and the splits, which
///   need them (without bounds they are left out).
/// - The GPU targets keep recurrences whole: no splits, and
///   `temporal-vectorize` batches whole dimensions only (`groups` off). Its
///   mapping fuses a step's input product into the step's kernel; a
///   batched one costs a kernel of its own, and the per-step launches have
///   not been measured against it on a GPU yet.
/// - Fast math lets `temporal-split-products` sum a weight gradient's
///   per-step products as one product over all steps (`inexact`, as level
///   3 does), and packs products and fuses attention for the CPU runtime's
///   kernels.
/// - A memory budget at level 2 tiles softmax attention over a range
///   (`temporal-tile-ranges`, which changes float rounding) where its
///   range-long temporaries could exceed it at the bounds, and nowhere
///   else (level 3 tiles all of it anyway; levels 0 and 1 do not tile).
pub fn optimization_steps(options: &CompileOptions) -> Result<Vec<Step>, String> {
    let level = options.level;
    let memory_budget = options.memory_budget;
    let budget = memory_budget.filter(|_| level == 2);
    let passes: &[&str] = match level {
        0 => &[],
        1 => O1_PASSES,
        2 if budget.is_some() => O3_PASSES,
        2 => O2_PASSES,
        3 => O3_PASSES,
        _ => return Err(format!("optimization level {level} does not exist (0 to 3)")),
    };
    for name in &options.disabled {
        if !O3_PASSES.contains(&name.as_str()) && name != FUSION && name != DEPTH_BATCHING {
            return Err(format!(
                "'{name}' is not a temporal optimization pass (one of {}), '{FUSION}' or '{DEPTH_BATCHING}'",
                unique(O3_PASSES).join(", ")
            ));
        }
    }
    let (cpu, fast_math) = (options.target == Target::Cpu, options.fast_math);
    let has_bounds = !options.bounds.is_empty();
    let bounds = || ("bounds", OptionValue::Bounds(options.bound_pairs()));
    let inexact = ("inexact", OptionValue::Flag(true));
    let mut registry = crate::pass::PassRegistry::default();
    crate::register_passes(&mut registry);
    let mut steps = vec![step(&registry, "temporal-autodiff", vec![])?];
    for &name in passes {
        let kept = !options.is_disabled(name)
            && ((name != "temporal-vectorize" && !SPLITS.contains(&name)) || has_bounds)
            && (cpu || !SPLITS.contains(&name))
            // The packed products are for the runtime's kernel, which the
            // lowering calls with fast math on the CPU.
            && (name != PACKING || (cpu && fast_math))
            // The fused attention is the CPU runtime's kernels, and inexact:
            // level 3, or level 2 with fast math.
            && (name != FUSED_ATTENTION || (cpu && (level == 3 || fast_math)))
            // Sharing values keeps them stored: not where memory is budgeted.
            && (name != SHARING || memory_budget.is_none());
        if !kept {
            continue;
        }
        let given = match name {
            "temporal-vectorize" if !cpu => vec![bounds(), ("groups", OptionValue::Flag(false))],
            // Masked ranges contracted with a second carrier (causal
            // attention): exact only for finite points outside the ranges.
            "temporal-vectorize" if level == 3 || fast_math => vec![bounds(), inexact.clone()],
            "temporal-split-products" if level == 3 || fast_math => {
                let mut given = vec![bounds(), inexact.clone()];
                given.extend(memory_budget.map(|bytes| ("memory-budget", OptionValue::Unsigned(bytes))));
                given
            }
            _ if name == "temporal-vectorize" || SPLITS.contains(&name) => vec![bounds()],
            "temporal-tile-ranges" if level == 2 => {
                vec![("memory-budget", OptionValue::Unsigned(budget.unwrap_or_default())), bounds()]
            }
            _ if level == 3 && INEXACT.contains(&name) => vec![inexact.clone()],
            _ => vec![],
        };
        steps.push(step(&registry, name, given)?);
    }
    Ok(steps)
}

/// Registered pass `name` with options `given`.
fn step(
    registry: &crate::pass::PassRegistry,
    name: &str,
    given: Vec<(&'static str, OptionValue)>,
) -> Result<Step, String> {
    match registry.get(name) {
        Some(crate::pass::RegistryEntry::Pass(pass)) => {
            let options = crate::pass::PassOptions::of(pass.as_ref(), given)?;
            Ok(Step::Pass { pass: pass.clone(), options })
        }
        _ => Err(format!("no temporal pass named '{name}'")),
    }
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

    use crate::pipeline::print_steps;

    /// The level's pipeline as text, for `bounds` (`T=9`: one bound).
    fn text(level: u8, disabled: &[&str], bounds: &str, budget: Option<u64>, target: Target, fast: bool) -> String {
        let options = CompileOptions {
            level,
            disabled: disabled.iter().map(|d| d.to_string()).collect(),
            memory_budget: budget,
            fast_math: fast,
            target,
            bounds: bounds.split_once('=').map(|(k, v)| (k.to_string(), v.parse().unwrap())).into_iter().collect(),
            ..Default::default()
        };
        optimization_steps(&options).map(|s| print_steps(&s)).unwrap_or_else(|e| format!("error: {e}"))
    }
    fn cpu(level: u8, disabled: &[&str], bounds: &str) -> String {
        text(level, disabled, bounds, None, Target::Cpu, false)
    }

    #[test]
    fn levels_and_disabled_passes() {
        assert_eq!(cpu(0, &[], ""), "temporal-autodiff");
        assert_eq!(cpu(1, &[], ""), "temporal-autodiff, temporal-dce, temporal-dedup, temporal-dce");
        assert_eq!(
            cpu(2, &["temporal-dedup"], ""),
            "temporal-autodiff, temporal-dce, temporal-lift-recurrences, temporal-drop-pinned-dims, temporal-simplify, \
             temporal-share-values, temporal-fuse-collectives, temporal-dce"
        );
        // Attention fused for the CPU runtime's kernels: -O3, or -O2 with fast math.
        let fused =
            |level, target, fast| text(level, &[], "T=4", None, target, fast).contains("temporal-fuse-attention");
        assert!(fused(3, Target::Cpu, false) && fused(2, Target::Cpu, true));
        let gpu = Target::cuda(90);
        assert!(!fused(2, Target::Cpu, false) && !fused(3, gpu, false) && !fused(2, gpu, true));
        assert!(cpu(2, &[], "B=3").contains("temporal-vectorize{bounds=B=3}"));
        assert!(cpu(3, &[], "").contains("temporal-simplify{inexact=true}"));
        assert!(cpu(3, &[], "").contains("temporal-tile-ranges"));
        assert!(!cpu(2, &[], "").contains("temporal-tile-ranges"));
        assert!(cpu(4, &[], "").starts_with("error: optimization level 4"));
        assert!(cpu(2, &["canonicalize"], "").contains("not a temporal optimization pass"));
        // A memory budget tiles at level 2, only over it.
        assert_eq!(
            text(2, &[], "T=9", Some(1024), Target::Cpu, false),
            "temporal-autodiff, temporal-dce, temporal-dedup, temporal-lift-recurrences, temporal-drop-pinned-dims, \
             temporal-split-recurrences{bounds=T=9}, temporal-split-products{bounds=T=9}, temporal-vectorize{bounds=T=9}, \
             temporal-tile-ranges{memory-budget=1024 bounds=T=9}, temporal-simplify, temporal-dedup, \
             temporal-fuse-collectives, temporal-dce"
        );
        // Fast math (and level 3) sums weight gradients as one product.
        let inexact_split = "temporal-split-products{inexact=true bounds=T=9}";
        assert!(text(2, &[], "T=9", None, Target::Cpu, true).contains(inexact_split));
        assert!(cpu(3, &[], "T=9").contains(inexact_split));
        // Under a memory budget, only where its rows fit.
        assert!(
            text(2, &[], "T=9", Some(4096), Target::Cpu, true)
                .contains("temporal-split-products{inexact=true bounds=T=9 memory-budget=4096}")
        );
        // The GPU target keeps recurrences whole.
        let on_gpu = text(2, &[], "T=9", None, gpu, false);
        assert!(on_gpu.contains("temporal-vectorize{groups=false bounds=T=9}") && !on_gpu.contains("split"));
        // (Level 3 tiles all attention anyway; a budget leaves sharing out.)
        assert_eq!(text(3, &[], "", Some(1), Target::Cpu, false), cpu(3, &[SHARING], ""));
        assert_eq!(text(1, &[], "", Some(1), Target::Cpu, false), cpu(1, &[], ""));
        // Fusion is the lowering's: accepted, not a pass of the pipeline.
        assert_eq!(cpu(2, &[FUSION], ""), cpu(2, &[], ""));
    }

    /// Printed steps read back as the same steps.
    #[test]
    fn printed_steps_parse_back() {
        let mut registry = crate::pass::PassRegistry::default();
        crate::register_passes(&mut registry);
        for printed in
            [text(3, &[], "T=9", Some(4096), Target::Cpu, true), text(2, &[], "T=9", None, Target::cuda(90), false)]
        {
            let parsed = crate::pipeline::parse_steps(&registry, &printed).unwrap();
            assert_eq!(print_steps(&parsed), printed);
        }
    }
}
