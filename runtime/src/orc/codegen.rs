//! From partitions of a lowered module to object code: each partition
//! translated to LLVM IR (in its own `LLVMContext`, on the calling thread:
//! the translation reads the MLIR context), then optimized with LLVM's
//! default pipeline of the level (the new pass manager, as MLIR's
//! ExecutionEngine runs it: loop and SLP vectorization on; unrolling and
//! interleaving only of the loops whose metadata asks for it) and compiled
//! to an ELF object for the host CPU, one thread per partition.
//!
//! The large code model (as the JIT's own objects): every reference to a
//! symbol of another partition or of the process is a 64-bit address, so
//! the linker may place the objects anywhere.

use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::target_machine::*;
use llvm_sys::transforms::pass_builder::*;
use std::ffi::{CStr, CString};

/// An owned LLVM context and module, handed to a compile thread.
pub struct Unit {
    context: LLVMContextRef,
    module: LLVMModuleRef,
}

// SAFETY: a context and the module in it are used by one thread at a time
// (the translation's, then the compile thread's).
unsafe impl Send for Unit {}

impl Drop for Unit {
    fn drop(&mut self) {
        unsafe {
            LLVMDisposeModule(self.module);
            LLVMContextDispose(self.context);
        }
    }
}

/// Takes a C string LLVM allocated.
///
/// # Safety
/// `s` is null or a string to free with `LLVMDisposeMessage`.
unsafe fn message(s: *mut libc::c_char) -> String {
    if s.is_null() {
        return String::new();
    }
    unsafe {
        let text = CStr::from_ptr(s).to_string_lossy().into_owned();
        LLVMDisposeMessage(s);
        text
    }
}

/// The host CPU's name and features, as LLVM sees them.
pub fn host_cpu() -> (String, String) {
    unsafe { (message(LLVMGetHostCPUName()), message(LLVMGetHostCPUFeatures())) }
}

/// The host's target machine at `level` (0 to 3).
fn host_machine(level: usize) -> Result<LLVMTargetMachineRef, String> {
    super::initialize();
    unsafe {
        let triple = LLVMGetDefaultTargetTriple();
        let mut target = std::ptr::null_mut();
        let mut error = std::ptr::null_mut();
        if LLVMGetTargetFromTriple(triple, &mut target, &mut error) != 0 {
            LLVMDisposeMessage(triple);
            return Err(format!("no LLVM target for the host: {}", message(error)));
        }
        let (cpu, features) = (LLVMGetHostCPUName(), LLVMGetHostCPUFeatures());
        let level = match level {
            0 => LLVMCodeGenOptLevel::LLVMCodeGenLevelNone,
            1 => LLVMCodeGenOptLevel::LLVMCodeGenLevelLess,
            2 => LLVMCodeGenOptLevel::LLVMCodeGenLevelDefault,
            _ => LLVMCodeGenOptLevel::LLVMCodeGenLevelAggressive,
        };
        let machine = LLVMCreateTargetMachine(
            target,
            triple,
            cpu,
            features,
            level,
            LLVMRelocMode::LLVMRelocDefault,
            LLVMCodeModel::LLVMCodeModelLarge,
        );
        LLVMDisposeMessage(triple);
        LLVMDisposeMessage(cpu);
        LLVMDisposeMessage(features);
        if machine.is_null() { Err("LLVM could not create a target machine for the host".into()) } else { Ok(machine) }
    }
}

/// Translates each partition to LLVM IR, in its own context.
pub fn translate(partitions: &[super::partition::Partition]) -> Result<Vec<Unit>, String> {
    partitions
        .iter()
        .map(|p| unsafe {
            let context = LLVMContextCreate();
            let module = mlir_sys::mlirTranslateModuleToLLVMIR(p.op, context as mlir_sys::LLVMContextRef);
            if module.is_null() {
                LLVMContextDispose(context);
                return Err("the lowered module could not be translated to LLVM IR".to_string());
            }
            Ok(Unit { context, module: module as LLVMModuleRef })
        })
        .collect()
}

/// Adds `_mlir_NAME(void **arguments)`, calling `NAME` with the values
/// `arguments[i]` point to (and storing a result through
/// `arguments[count]`): the packed form MLIR's ExecutionEngine gives
/// every function, which the runtime calls the entry through.
///
/// # Safety
/// `module` is a live module.
unsafe fn add_packed_wrapper(module: LLVMModuleRef, name: &str) -> bool {
    unsafe {
        let cname = CString::new(name).expect("no NUL in a symbol");
        let function = LLVMGetNamedFunction(module, cname.as_ptr());
        if function.is_null() || LLVMCountBasicBlocks(function) == 0 {
            return false;
        }
        let context = LLVMGetModuleContext(module);
        let ty = LLVMGlobalGetValueType(function);
        let count = LLVMCountParamTypes(ty) as usize;
        let mut params = vec![std::ptr::null_mut(); count];
        LLVMGetParamTypes(ty, params.as_mut_ptr());
        let pointer = LLVMPointerTypeInContext(context, 0);
        let i64_type = LLVMInt64TypeInContext(context);
        let mut argument_types = [pointer];
        let wrapper_type = LLVMFunctionType(LLVMVoidTypeInContext(context), argument_types.as_mut_ptr(), 1, 0);
        let wrapper_name = CString::new(format!("_mlir_{name}")).expect("no NUL in a symbol");
        let wrapper = LLVMAddFunction(module, wrapper_name.as_ptr(), wrapper_type);
        let block = LLVMAppendBasicBlockInContext(context, wrapper, c"entry".as_ptr());
        let builder = LLVMCreateBuilderInContext(context);
        LLVMPositionBuilderAtEnd(builder, block);
        let packed = LLVMGetParam(wrapper, 0);
        let slot = |k: usize| {
            let mut index = [LLVMConstInt(i64_type, k as u64, 0)];
            let at = LLVMBuildGEP2(builder, pointer, packed, index.as_mut_ptr(), 1, c"".as_ptr());
            LLVMBuildLoad2(builder, pointer, at, c"".as_ptr())
        };
        let mut values: Vec<LLVMValueRef> =
            params.iter().enumerate().map(|(k, &t)| LLVMBuildLoad2(builder, t, slot(k), c"".as_ptr())).collect();
        let result = LLVMBuildCall2(builder, ty, function, values.as_mut_ptr(), values.len() as u32, c"".as_ptr());
        let returns = LLVMGetReturnType(ty);
        if LLVMGetTypeKind(returns) != llvm_sys::LLVMTypeKind::LLVMVoidTypeKind {
            LLVMBuildStore(builder, result, slot(count));
        }
        LLVMBuildRetVoid(builder);
        LLVMDisposeBuilder(builder);
        true
    }
}

/// LLVM's code generation options of the CPU code, set once per process
/// (they are LLVM's global command-line options: in a process that also
/// compiles CUDA kernels, those get them too).
///
/// `-disable-lsr`: no loop strength reduction. The loops the lowering
/// makes index memory with one affine expression of the induction
/// variables per access (strides as values, unrolled register tiles), and
/// LLVM's strength reduction searched for rewrites of all of them: it
/// and the larger code it left took 45% of `llc`'s time on the LSTM
/// training step's nests (0.90 s -> 0.50 s without it), and the code ran
/// no slower (bench/README, issue 42, sixth part).
fn set_code_generation_options() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let arguments = [c"tempo".as_ptr(), c"-disable-lsr".as_ptr()];
        // The C API parses into LLVM's null stream: an error (an option
        // this LLVM lacks) is ignored, not fatal.
        unsafe {
            llvm_sys::support::LLVMParseCommandLineOptions(arguments.len() as i32, arguments.as_ptr(), c"".as_ptr())
        };
    });
}

/// Optimizes `unit` at `level` and compiles it to an object file's bytes;
/// with `wrap`, first adds the packed wrapper of that function.
fn compile(unit: Unit, level: usize, wrap: Option<&str>) -> Result<Vec<u8>, String> {
    let machine = host_machine(level)?;
    unsafe {
        let data = LLVMCreateTargetDataLayout(machine);
        let layout = llvm_sys::target::LLVMCopyStringRepOfTargetData(data);
        LLVMSetDataLayout(unit.module, layout);
        LLVMDisposeMessage(layout);
        llvm_sys::target::LLVMDisposeTargetData(data);
        let triple = LLVMGetTargetMachineTriple(machine);
        LLVMSetTarget(unit.module, triple);
        LLVMDisposeMessage(triple);
        if let Some(name) = wrap {
            add_packed_wrapper(unit.module, name);
        }
        let options = LLVMCreatePassBuilderOptions();
        LLVMPassBuilderOptionsSetLoopVectorization(options, 1);
        LLVMPassBuilderOptionsSetSLPVectorization(options, 1);
        // No loop unrolling but of the loops the kernels mark for it (the
        // register-tiled product's loop over k with a one-row tile:
        // `llvm-loop-annotations`; the vectorizer still interleaves): the
        // generated kernels are register-tiled and vectorized already, and LLVM fully unrolled every loop of
        // constant trip count under its threshold (a 64 x 16 division,
        // vectorized, became 579 instructions), so that its optimization
        // and code generation of the LSTM training step (batch 16, width
        // 256) took 6.3 s with the unroller and 1.6 s without; the GPT step
        // 3.7-4.1 s against 2.8-2.9 s. Run times were unchanged (the LSTM
        // at batch 64, width 256: 17.1% and 17.0% of 42k and 41k samples in
        // the compiled code over 20 runs each; bench/README, issue 42).
        LLVMPassBuilderOptionsSetLoopUnrolling(options, 0);
        // No interleaving either but of the loops that ask for it (a row's
        // float reduction with fast math: `interleave_hint`): the
        // vectorizer interleaved every elementwise loop four times, with
        // a scalar remainder and runtime checks each, doubling the
        // optimized IR. Without it, LLVM's time fell 13-21% on the bench
        // programs (LSTM training at width 64: 955 -> 757 ms, GPT at T =
        // 256: 1558 -> 1304 ms, medians of 4-5 interleaved runs) and their
        // run times were unchanged within this machine's noise (GPT at T
        // = 256: 517 and 522 ms for 2 iterations; bench/README, issue 42).
        LLVMPassBuilderOptionsSetLoopInterleaving(options, 0);
        let pipeline = CString::new(format!("default<O{}>", level.min(3))).expect("no NUL");
        let error = LLVMRunPasses(unit.module, pipeline.as_ptr(), machine, options);
        LLVMDisposePassBuilderOptions(options);
        if !error.is_null() {
            LLVMDisposeTargetMachine(machine);
            return Err(format!("LLVM's optimization failed: {}", super::error_text(error)));
        }
        let mut buffer = std::ptr::null_mut();
        let mut failure = std::ptr::null_mut();
        let failed = LLVMTargetMachineEmitToMemoryBuffer(
            machine,
            unit.module,
            LLVMCodeGenFileType::LLVMObjectFile,
            &mut failure,
            &mut buffer,
        );
        LLVMDisposeTargetMachine(machine);
        if failed != 0 {
            return Err(format!("LLVM's code generation failed: {}", message(failure)));
        }
        let start = LLVMGetBufferStart(buffer) as *const u8;
        let bytes = std::slice::from_raw_parts(start, LLVMGetBufferSize(buffer)).to_vec();
        LLVMDisposeMemoryBuffer(buffer);
        Ok(bytes)
    }
}

/// Compiles the translated partitions, each on its own thread (the first,
/// which holds the entry `entry`, with its packed wrapper): the objects,
/// in partition order.
pub fn compile_all(units: Vec<Unit>, level: usize, entry: &str) -> Result<Vec<Vec<u8>>, String> {
    set_code_generation_options();
    let wrapped = format!("_mlir_ciface_{entry}");
    std::thread::scope(|scope| {
        let handles: Vec<_> = units
            .into_iter()
            .enumerate()
            .map(|(k, unit)| {
                let wrap = (k == 0).then_some(wrapped.as_str());
                scope.spawn(move || compile(unit, level, wrap))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a code generation thread panicked".into())))
            .collect()
    })
}
