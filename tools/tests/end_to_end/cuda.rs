//! The host side of the CUDA target, on any machine: in a dry run
//! (`tempo_runtime::cuda::set_dry_run`) the compiled host code runs with
//! host memory and the runtime records module loads and kernel launches
//! instead of making them. Checks that the JIT resolves every runtime
//! symbol, that the module constructors load one PTX module per kernel,
//! that every time step launches its kernels with the mapping's block size
//! and the host waits for them only where it needs their results,
//! that buffers only kernels use are in device memory, and that block
//! stores reserve device address space and map device memory under their
//! blocks as they grow, all of it unmapped by the end. (Results are not
//! computed: no kernel runs.)

use crate::{context, example, options};
use melior::ir::Module;
use std::sync::Mutex;
use tempo_driver::{CompileOptions, RunOptions, Target, run_module_timed};
use tempo_runtime::{cuda, cuda_memory::DeviceMemory};

/// Dry runs change the runtime's global mode: one test at a time.
static DRY: Mutex<()> = Mutex::new(());

fn dry_run(source: &str, bounds: &[(&str, i64)]) -> cuda::DryRun {
    dry_run_with_memory(source, bounds).0
}

/// A dry run, with where its buffers went.
fn dry_run_with_memory(source: &str, bounds: &[(&str, i64)]) -> (cuda::DryRun, DeviceMemory) {
    dry_run_on(source, bounds, Target::cuda(90))
}

/// A dry run for `target`.
fn dry_run_on(source: &str, bounds: &[(&str, i64)], target: Target) -> (cuda::DryRun, DeviceMemory) {
    dry_run_profiled(source, bounds, target, None)
}

/// A dry run for `target`, its kernel profile written to `profile` if any.
fn dry_run_profiled(
    source: &str,
    bounds: &[(&str, i64)],
    target: Target,
    profile: Option<&std::path::Path>,
) -> (cuda::DryRun, DeviceMemory) {
    let _one = DRY.lock().unwrap_or_else(|e| e.into_inner());
    let context = context();
    let mut module = Module::parse(&context, source).expect("program parses");
    cuda::set_dry_run(true);
    tempo_runtime::cuda_profile::set_path(profile.map(|p| p.display().to_string()));
    let run = run_module_timed(
        &context,
        &mut module,
        &RunOptions { compile: CompileOptions { target, ..Default::default() }, ..options(bounds, vec![], Some(1)) },
    );
    tempo_runtime::cuda_profile::set_path(None);
    let record = cuda::dry_run_record().expect("dry run on");
    cuda::set_dry_run(false);
    let (_, report) = run.expect("the host code of a CUDA run completes");
    (record, report.device_memory.expect("a CUDA run reports its device memory"))
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
    // Launches are asynchronous: the host queues all ten and waits once,
    // when the run frees its buffers.
    assert_eq!(record.waits, 1, "one wait for {} launches", record.launches.len());
    for (grid, block, parameters) in &record.launches {
        assert_eq!(block, &[256, 1, 1], "flattened loops, 256 threads per block");
        assert_eq!(grid, &[1, 1, 1], "4 points fit one block");
        assert!(*parameters > 0);
    }
}

#[test]
fn the_kernel_profile_counts_each_kernels_launches() {
    // TEMPO_CUDA_PROFILE's report (set here through the runtime's
    // `set_path`): in a dry run, launches are counted (times are zero).
    let report = std::env::temp_dir().join(format!("tempo-profile-{}.txt", std::process::id()));
    let (record, _) = dry_run_profiled(&example("rnn.mlir"), &[("T", 5)], Target::cuda(90), Some(&report));
    let text = std::fs::read_to_string(&report).expect("the profile is written at the end of the run");
    let _ = std::fs::remove_file(&report);
    let header = text.lines().next().expect("a header line");
    assert!(header.contains(&format!("{} launches", record.launches.len())), "{header}");
    assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("# kernel launches total_ms")), "{text}");
    assert!(text.contains("# PTX of kernel") && text.contains(".entry tempo_main_kernel"), "{text}");
}

#[test]
fn threads_per_block_is_an_option() {
    // 64 threads per block instead of 256: the 4 points of each RNN loop
    // still fit one block, of 64 threads.
    let target = Target::Cuda { chip: 90, threads_per_block: 64 };
    let (record, _) = dry_run_on(&example("rnn.mlir"), &[("T", 5)], target);
    assert_eq!(record.launches.len(), 10);
    assert!(record.launches.iter().all(|(grid, block, _)| grid == &[1, 1, 1] && block == &[64, 1, 1]));
}

#[test]
fn causal_attention_grows_its_block_stores_in_device_memory() {
    let (record, memory) = dry_run_with_memory(&example("causal_attention.mlir"), &[("T", 70)]);
    assert!(!record.modules.is_empty());
    // k and v: blocks of 64 points of 4 floats, reserved for T = 70 (two
    // blocks each, 2 KiB, in whole pages) in device address space (one
    // chunk of 2 MiB each); only kernels touch them.
    assert!(record.reservations.is_empty(), "no block store in managed memory");
    assert_eq!(record.device_reservations, vec![4096, 4096]);
    assert_eq!(memory.reserved_bytes, 2 * (2 << 20));
    // Each store maps its one chunk when its first block is committed
    // (the second block lies in the same chunk), and unmaps it when freed.
    assert_eq!((memory.maps, memory.unmaps), (2, 2));
    assert_eq!(memory.peak_mapped_bytes, 2 * (2 << 20));
    assert_eq!(memory.mapped_bytes, 0, "everything unmapped at the end");
    // The step's temporaries are device memory too.
    assert!(memory.device_buffers >= 4, "{memory:?}");
    // Every step launches kernels, whatever the length of its prefix; the
    // host never waits for them inside the time loop.
    assert!(record.launches.len() >= 70, "{} launches", record.launches.len());
    assert_eq!(record.waits, 1);
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
    assert_eq!(record.device_reservations.len(), 2, "k and v, in device memory");
}

#[test]
fn the_host_waits_for_the_kernels_before_each_external_call() {
    // Each step copies the call's arguments into its buffers (kernels),
    // calls the host function, and copies its result into the store (a
    // kernel): the host waits before each call (the callback reads what the
    // kernels wrote) and once at the end, never elsewhere.
    let _one = DRY.lock().unwrap_or_else(|e| e.into_inner());
    let source =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../test/tools/tempo-run/Inputs/external.mlir"))
            .expect("the program");
    let context = context();
    let mut module = Module::parse(&context, &source).expect("program parses");
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut options = RunOptions {
        compile: CompileOptions { target: Target::cuda(90), ..Default::default() },
        ..options(&[("T", 4)], vec![], Some(1))
    };
    let seen = calls.clone();
    options.externals.register("env_step", move |args| {
        seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(args.len(), 2);
        Ok(tempo_driver::HostArray { name: "r".into(), shape: vec![2], data: tempo_driver::Data::F32(vec![0.0; 2]) })
    });
    cuda::set_dry_run(true);
    let run = run_module_timed(&context, &mut module, &options);
    let record = cuda::dry_run_record().expect("dry run on");
    cuda::set_dry_run(false);
    run.expect("the host code completes");
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 4);
    assert!(record.launches.len() >= 8, "{} launches", record.launches.len());
    assert_eq!(record.waits, 4 + 1, "a wait before each of the 4 calls and one at the end");
}

/// The GPU lowering's all-reduce (`temporal.all_reduce` on the CUDA
/// target): each step's flat buffer, in device memory, goes to the
/// runtime's `tempo_gpu_all_reduce` (NCCL on the kernels' stream on a GPU;
/// recorded in a dry run): the sum of 6 f32, the mean's sum of 6 f64 and
/// the maximum of 3 i64 each step, with no wait for the kernels before
/// them.
#[test]
fn all_reduces_go_to_the_runtime_on_device_buffers() {
    let source = include_str!("../../../test/lowering/temporal-to-loops/collectives.mlir");
    let (record, memory) = dry_run_with_memory(source, &[("T", 3)]);
    let mut expected = vec![(6, 4, 0), (6, 8, 0), (3, 8, 1)].repeat(3);
    let mut found = record.collectives.clone();
    expected.sort();
    found.sort();
    assert_eq!(found, expected, "three all-reduces a step");
    assert_eq!(record.waits, 1, "the host waits once, at the end, not before each all-reduce");
    assert!(memory.device_buffers >= 3, "the all-reduce buffers are device memory: {memory:?}");
}
