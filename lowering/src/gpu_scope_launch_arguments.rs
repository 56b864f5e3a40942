//! `gpu-scope-launch-arguments`: brackets every kernel launch of host code
//! (`gpu.launch_func` outside `gpu.module`s) with `llvm.intr.stacksave` and
//! `llvm.intr.stackrestore`.
//!
//! Why: MLIR's translation of `gpu.launch_func` to LLVM IR (the
//! `#gpu.select_object` offloading handler) packs the kernel's arguments in
//! stack memory (`alloca`s) at the launch itself. A launch inside a host
//! loop (every step's kernels) is not in the function's entry block, so
//! each execution of it takes new stack space that is only given back when
//! `tempo_main` returns: about 300 bytes per launch, which overflowed the
//! 512 MiB stack of a GPT-2 decode of 4096 steps and of PPO's training run
//! on a GPU. The driver copies the argument values when the launch is
//! queued (`cuLaunchKernel`), so the stack can be given back right after.
//!
//! Assumes host code in the LLVM dialect or before it (the bracket is made
//! of LLVM-dialect ops whatever the launch's operands are); it is the last
//! step of the CUDA pipeline's host lowering.

use melior::ir::{OperationRef, operation::OperationLike};
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::pass::{PassOptions, TempoPass};

use crate::ir_builder::Builder;

/// The `gpu-scope-launch-arguments` pass.
pub struct GpuScopeLaunchArguments;

impl TempoPass for GpuScopeLaunchArguments {
    fn name(&self) -> &'static str {
        "gpu-scope-launch-arguments"
    }
    fn summary(&self) -> &'static str {
        "Bracket every kernel launch of host code with llvm.intr.stacksave/stackrestore, so that the stack memory the launch's translation packs its arguments in is given back after each launch (launches in loops)"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        let mut launches = Vec::new();
        host_launches(op, &mut launches);
        for launch in launches {
            let launch = unsafe { OperationRef::from_raw(launch) };
            scope(launch).map_err(|e| vec![PassDiagnostic::new(launch.location(), e)])?;
        }
        Ok(())
    }
}

/// `gpu.launch_func` ops under `op`, outside `gpu.module`s.
pub(crate) fn host_launches(op: OperationRef, out: &mut Vec<mlir_sys::MlirOperation>) {
    for inner in tempo_dialects::nested_operations(op) {
        match inner.name().as_string_ref().as_str().unwrap_or("") {
            "gpu.module" => continue,
            "gpu.launch_func" => out.push(inner.to_raw()),
            _ => host_launches(inner, out),
        }
    }
}

fn scope(launch: OperationRef) -> Result<(), String> {
    let next = launch.next_in_block().ok_or("compiler fault: a kernel launch ends its block")?;
    let before = Builder::before(launch)?;
    let saved = before.value("llvm.intr.stacksave", &[], before.pointer_type(), &[])?;
    let after = Builder::before(next)?;
    after.op("llvm.intr.stackrestore", &[saved], &[], &[])?;
    Ok(())
}
