//! The host side of the CUDA target, on any machine: in a dry run
//! (`tempo_runtime::cuda::set_dry_run`) the compiled host code runs with
//! host memory and the runtime records module loads and kernel launches
//! instead of making them. Checks that the JIT resolves every runtime
//! symbol, that the module constructors load one PTX module per kernel,
//! that every time step launches its kernels with the mapping's block size,
//! and that block stores reserve through the managed-memory functions.
//! (Results are not computed: no kernel runs.)

use crate::{context, example, options};
use melior::ir::Module;
use std::sync::Mutex;
use tempo_runtime::{RunOptions, Target, cuda, run_module};

/// Dry runs change the runtime's global mode: one test at a time.
static DRY: Mutex<()> = Mutex::new(());

fn dry_run(source: &str, bounds: &[(&str, i64)]) -> cuda::DryRun {
    let _one = DRY.lock().unwrap_or_else(|e| e.into_inner());
    let context = context();
    let mut module = Module::parse(&context, source).expect("program parses");
    cuda::set_dry_run(true);
    let run = run_module(
        &context,
        &mut module,
        &RunOptions { target: Target::Cuda { chip: 90 }, ..options(bounds, vec![], Some(1)) },
    );
    let record = cuda::dry_run_record().expect("dry run on");
    cuda::set_dry_run(false);
    run.expect("the host code of a CUDA run completes");
    record
}

#[test]
fn rnn_host_code_loads_its_kernels_and_launches_them_every_step() {
    let record = dry_run(&example("rnn.mlir"), &[("T", 5)]);
    assert_eq!(record.modules.len(), 4, "one module per kernel");
    assert!(record.modules.iter().all(|m| m.contains(".target sm_90") && m.contains(".entry tempo_main_kernel")));
    assert_eq!(record.functions.len(), record.launches.len(), "each launch looks its kernel up");
    // Every step runs 2 kernels: the fills and matrix-vector products
    // fused into one (scf-parallel-loop-fusion), then the fused add and
    // tanh.
    assert_eq!(record.launches.len(), 2 + 4 * 2);
    for (grid, block, parameters) in &record.launches {
        assert_eq!(block, &[256, 1, 1], "flattened loops, 256 threads per block");
        assert_eq!(grid, &[1, 1, 1], "4 points fit one block");
        assert!(*parameters > 0);
    }
}

#[test]
fn causal_attention_reserves_its_block_stores_in_managed_memory() {
    let record = dry_run(&example("causal_attention.mlir"), &[("T", 70)]);
    assert!(!record.modules.is_empty());
    // k and v: blocks of 64 points of 4 floats, reserved for T = 70 (two
    // blocks each, 2 KiB), in whole pages.
    assert_eq!(record.reservations, vec![4096, 4096]);
    // Every step launches kernels, whatever the length of its prefix.
    assert!(record.launches.len() >= 70, "{} launches", record.launches.len());
}

#[test]
fn gpt_and_tiled_attention_host_code_runs() {
    // The corpus program that writes temporal.attention directly: its rows
    // are one kernel per step.
    let source = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/corpus/attention_op.mlir"))
        .expect("the corpus program");
    let record = dry_run(&source, &[("T", 9), ("H", 2)]);
    assert!(record.launches.len() >= 9, "{} launches", record.launches.len());
    // A GPT decode (2 layers, 4 heads, width 32), causal: every step and
    // layer launches its kernels, and the caches are block stores.
    let gpt = std::process::Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/examples/gpt"))
        .args(["--layers", "2", "--heads", "4", "--width", "32", "--mlir"])
        .output();
    let Ok(gpt) = gpt else {
        eprintln!("target/release/examples/gpt is not built (tools/test.sh builds it); skipping the GPT dry run");
        return;
    };
    let record = dry_run(&String::from_utf8(gpt.stdout).unwrap(), &[("T", 6), ("L", 2)]);
    assert!(record.modules.len() > 10);
    assert!(record.launches.len() >= 6 * 2 * 10, "{} launches", record.launches.len());
    assert_eq!(record.reservations.len(), 2, "k and v");
}
