//! `llvm-loop-annotations`: makes the loop hints that the generated kernels
//! put on their loops reach LLVM's loop metadata.
//!
//! A kernel marks a loop with the discardable attribute
//! `llvm.loop_annotation` on its `scf.for` (for example the register-tiled
//! product's loop over `k`, to be unrolled a given number of times:
//! `#llvm.loop_annotation<unroll = <count = 4 : i32>>`).
//! `convert-scf-to-cf` carries it to the loop's back edge, and
//! `convert-to-llvm` to the `llvm.br` it becomes, still as a discardable
//! attribute, which the translation to LLVM IR ignores: only the branch's
//! own `loop_annotation` becomes `!llvm.loop` metadata. This pass moves the
//! one into the other on every `llvm.br` and `llvm.cond_br`.
//!
//! Why it matters: the CPU's code is optimized with LLVM's loop unroller
//! off except for loops whose metadata asks for it
//! (`runtime/src/orc/codegen.rs`), so these hints are the only unrolling
//! left.
//!
//! Assumes the LLVM dialect (after `convert-to-llvm`); other ops, and
//! branches without the attribute, are left as they are.

use melior::ir::{OperationRef, attribute::AttributeLike, operation::OperationLike};
use tempo_passes::diagnostics::PassResult;
use tempo_passes::pass::{PassOptions, TempoPass};

/// The discardable attribute a kernel sets on its loop.
pub const HINT: &str = "llvm.loop_annotation";

/// The `llvm-loop-annotations` pass.
pub struct LlvmLoopAnnotations;

impl TempoPass for LlvmLoopAnnotations {
    fn name(&self) -> &'static str {
        "llvm-loop-annotations"
    }
    fn summary(&self) -> &'static str {
        "Move the loop hints kernels set on their loops (llvm.loop_annotation, carried to the back edge's llvm.br) into the branch's loop_annotation, which becomes !llvm.loop metadata"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        move_hints(op);
        Ok(())
    }
}

fn move_hints(op: OperationRef) {
    let name = op.name();
    let name = name.as_string_ref().as_str().unwrap_or("");
    if matches!(name, "llvm.br" | "llvm.cond_br")
        && let Ok(hint) = op.attribute(HINT)
    {
        unsafe {
            mlir_sys::mlirOperationSetAttributeByName(
                op.to_raw(),
                melior::StringRef::new("loop_annotation").to_raw(),
                hint.to_raw(),
            );
            mlir_sys::mlirOperationRemoveAttributeByName(op.to_raw(), melior::StringRef::new(HINT).to_raw());
        }
    }
    for inner in tempo_dialects::nested_operations(op) {
        move_hints(inner);
    }
}
