//! The CPU JIT: a lowered module compiled to object code in partitions
//! on several threads ([`partition`], [`codegen`]) and the objects linked
//! into the process by an ORC `LLJIT` (LLVM's C API).
//!
//! MLIR's ExecutionEngine translates, optimizes and compiles the whole
//! module as one unit on one thread, and can only compile IR, not load
//! objects. Here the objects are ordinary ELF relocatable files: linked
//! with RuntimeDyld (as the ExecutionEngine links), resolving the
//! process's symbols (libc, libm), the OpenMP runtime's and the runtime
//! functions the compiled code calls (defined by address with
//! [`OrcEngine::define`]), so that compiled objects can also be kept and
//! loaded again (the compilation cache).

pub mod codegen;
pub mod partition;

use llvm_sys::error::*;
use llvm_sys::orc2::ee::LLVMOrcCreateRTDyldObjectLinkingLayerWithSectionMemoryManager;
use llvm_sys::orc2::lljit::*;
use llvm_sys::orc2::*;
use std::ffi::{CStr, CString};

/// Initializes LLVM's native target, once per process.
pub(crate) fn initialize() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| unsafe {
        llvm_sys::target::LLVM_InitializeNativeTarget();
        llvm_sys::target::LLVM_InitializeNativeAsmPrinter();
        llvm_sys::target::LLVM_InitializeNativeAsmParser();
    });
}

/// The message of an LLVM error (consumed).
///
/// # Safety
/// `error` is a live, unconsumed error.
pub(crate) unsafe fn error_text(error: LLVMErrorRef) -> String {
    unsafe {
        let m = LLVMGetErrorMessage(error);
        let text = CStr::from_ptr(m).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(m);
        text
    }
}

fn check(error: LLVMErrorRef, what: &str) -> Result<(), String> {
    if error.is_null() { Ok(()) } else { Err(format!("{what}: {}", unsafe { error_text(error) })) }
}

/// Objects linked into the process.
pub struct OrcEngine {
    jit: LLVMOrcLLJITRef,
    dylib: LLVMOrcJITDylibRef,
}

extern "C" fn rtdyld_layer(
    _: *mut libc::c_void,
    session: LLVMOrcExecutionSessionRef,
    _: *const libc::c_char,
) -> LLVMOrcObjectLayerRef {
    unsafe { LLVMOrcCreateRTDyldObjectLinkingLayerWithSectionMemoryManager(session) }
}

impl OrcEngine {
    /// Links `objects`, resolving undefined symbols in the process and, if
    /// given, the shared library `library` (the OpenMP runtime).
    pub fn load(objects: &[Vec<u8>], library: Option<&str>) -> Result<Self, String> {
        initialize();
        unsafe {
            let builder = LLVMOrcCreateLLJITBuilder();
            LLVMOrcLLJITBuilderSetObjectLinkingLayerCreator(builder, rtdyld_layer, std::ptr::null_mut());
            let mut jit = std::ptr::null_mut();
            check(LLVMOrcCreateLLJIT(&mut jit, builder), "cannot create the JIT")?;
            let engine = OrcEngine { jit, dylib: LLVMOrcLLJITGetMainJITDylib(jit) };
            let prefix = LLVMOrcLLJITGetGlobalPrefix(jit);
            if let Some(path) = library {
                let path = CString::new(path).map_err(|e| e.to_string())?;
                let mut generator = std::ptr::null_mut();
                check(
                    LLVMOrcCreateDynamicLibrarySearchGeneratorForPath(
                        &mut generator,
                        path.as_ptr(),
                        prefix,
                        None,
                        std::ptr::null_mut(),
                    ),
                    "cannot load the OpenMP runtime",
                )?;
                LLVMOrcJITDylibAddGenerator(engine.dylib, generator);
            }
            let mut generator = std::ptr::null_mut();
            check(
                LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                    &mut generator,
                    prefix,
                    None,
                    std::ptr::null_mut(),
                ),
                "cannot resolve the process's symbols",
            )?;
            LLVMOrcJITDylibAddGenerator(engine.dylib, generator);
            for (k, object) in objects.iter().enumerate() {
                let name = CString::new(format!("tempo-object-{k}")).expect("no NUL");
                let buffer = llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy(
                    object.as_ptr() as *const libc::c_char,
                    object.len(),
                    name.as_ptr(),
                );
                check(LLVMOrcLLJITAddObjectFile(jit, engine.dylib, buffer), "cannot add an object to the JIT")?;
            }
            Ok(engine)
        }
    }

    /// Makes `name` resolve to `pointer` (before the first lookup that
    /// needs it).
    pub fn define(&self, name: &str, pointer: *mut ()) -> Result<(), String> {
        let name = CString::new(name).map_err(|e| e.to_string())?;
        unsafe {
            let mut pair = LLVMOrcCSymbolMapPair {
                Name: LLVMOrcLLJITMangleAndIntern(self.jit, name.as_ptr()),
                Sym: LLVMJITEvaluatedSymbol {
                    Address: pointer as u64,
                    Flags: LLVMJITSymbolFlags {
                        GenericFlags: LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsExported as u8
                            | LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsCallable as u8,
                        TargetFlags: 0,
                    },
                },
            };
            let unit = LLVMOrcAbsoluteSymbols(&mut pair, 1);
            check(LLVMOrcJITDylibDefine(self.dylib, unit), "cannot define a runtime symbol")
        }
    }

    /// The address of `name`, linking what it needs first; an error when
    /// it is not defined or a symbol it needs cannot be resolved.
    pub fn lookup(&self, name: &str) -> Result<*mut (), String> {
        let cname = CString::new(name).map_err(|e| e.to_string())?;
        let mut address = 0u64;
        check(unsafe { LLVMOrcLLJITLookup(self.jit, &mut address, cname.as_ptr()) }, "JIT lookup failed")?;
        Ok(address as *mut ())
    }
}

impl Drop for OrcEngine {
    fn drop(&mut self) {
        unsafe {
            let error = LLVMOrcDisposeLLJIT(self.jit);
            if !error.is_null() {
                LLVMConsumeError(error);
            }
        }
    }
}
