//! `libTempoCAPI.so`: the project for C and C++ hosts on MLIR 22, declared
//! in `include/tempo-c/Tempo.h`.
//!
//! - Dialect handles (`mlirGetDialectHandle__temporal__`,
//!   `mlirGetDialectHandle__store__`) for MLIR's dialect-handle C API: load
//!   the project's IRDL dialects into any context, idempotently.
//! - `tempoRegisterPasses`: every pass and named pipeline of the project in
//!   MLIR's global pass registry, by name and with options as `tempo-opt`
//!   parses them, so `mlirParsePassPipeline` and `mlir-opt --pass-pipeline`
//!   find them (through the C++ shim, `shim/passes.cpp`: the C API cannot
//!   register a pass by name).
//! - `mlirGetPassPluginInfo`: the library is a pass plug-in for stock
//!   `mlir-opt --load-pass-plugin`.
//! - Compiling a program once and running it many times with DLPack
//!   tensors ([`executable`]).
//!
//! The library links Debian's `libMLIR.so` and `libMLIR-C.so` (one shared
//! MLIR, see `dialects/build.rs`), so a host and the library share MLIR's
//! registries and type uniquing; it defines no MLIR symbol itself.
//! Nothing here panics across the C boundary: failures are returned as
//! messages or emitted as MLIR diagnostics at the user's location.

#![allow(non_snake_case)]

pub mod executable;

use mlir_sys::{
    MlirContext, MlirDialect, MlirDialectHandle, MlirDialectRegistry, MlirOpPassManager, MlirOperation, MlirStringRef,
};
use std::ffi::{c_char, c_void};
use std::sync::{Once, OnceLock};
use tempo_passes::pass::{PassRegistry, RegistryEntry};
use tempo_passes::pipeline;

// ----------------------------------------------------------------------------
// Dialects.

/// MLIR's `MlirDialectRegistrationHooks` (`mlir/CAPI/Registration.h`): what
/// a dialect handle points at.
#[repr(C)]
struct DialectHooks {
    insert: unsafe extern "C" fn(MlirDialectRegistry),
    load: unsafe extern "C" fn(MlirContext) -> MlirDialect,
    namespace: unsafe extern "C" fn() -> MlirStringRef,
}

fn string_ref(text: &'static str) -> MlirStringRef {
    MlirStringRef { data: text.as_ptr() as *const c_char, length: text.len() }
}

/// IRDL dialects are made in a context, not in a registry: inserting into
/// a registry does nothing, and loading (`mlirDialectHandleLoadDialect`)
/// is how a host gets them.
unsafe extern "C" fn insert_nothing(_: MlirDialectRegistry) {}

/// Loads the project's dialects into `context` (both, once, and the gpu
/// dialect, whose `gpu.yield` ends a definition's body) and returns the
/// one named `name`.
fn load(raw: MlirContext, name: &str) -> MlirDialect {
    unsafe { mlir_sys::mlirDialectHandleLoadDialect(mlir_sys::mlirGetDialectHandle__gpu__(), raw) };
    let context = unsafe { melior::ContextRef::from_raw(raw) };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tempo_dialects::load_project_dialects(unsafe { context.to_ref() })
    }));
    if outcome.is_err() {
        return MlirDialect { ptr: std::ptr::null_mut() };
    }
    unsafe { mlir_sys::mlirContextGetOrLoadDialect(raw, melior::StringRef::new(name).to_raw()) }
}

unsafe extern "C" fn load_temporal(context: MlirContext) -> MlirDialect {
    load(context, "temporal")
}
unsafe extern "C" fn load_store(context: MlirContext) -> MlirDialect {
    load(context, "store")
}
unsafe extern "C" fn temporal_namespace() -> MlirStringRef {
    string_ref("temporal")
}
unsafe extern "C" fn store_namespace() -> MlirStringRef {
    string_ref("store")
}

static TEMPORAL: DialectHooks =
    DialectHooks { insert: insert_nothing, load: load_temporal, namespace: temporal_namespace };
static STORE: DialectHooks = DialectHooks { insert: insert_nothing, load: load_store, namespace: store_namespace };

/// The `temporal` dialect's handle.
#[unsafe(no_mangle)]
pub extern "C" fn mlirGetDialectHandle__temporal__() -> MlirDialectHandle {
    MlirDialectHandle { ptr: &TEMPORAL as *const DialectHooks as *const c_void as *mut c_void }
}

/// The `store` dialect's handle.
#[unsafe(no_mangle)]
pub extern "C" fn mlirGetDialectHandle__store__() -> MlirDialectHandle {
    MlirDialectHandle { ptr: &STORE as *const DialectHooks as *const c_void as *mut c_void }
}

// ----------------------------------------------------------------------------
// Passes.

type Message = unsafe extern "C" fn(MlirStringRef, *mut c_void);

unsafe extern "C" {
    fn tempoShimRegisterPass(
        argument: MlirStringRef,
        summary: MlirStringRef,
        check: unsafe extern "C" fn(MlirStringRef, MlirStringRef, Message, *mut c_void) -> bool,
        run: unsafe extern "C" fn(MlirStringRef, MlirStringRef, MlirOperation) -> bool,
    );
    fn tempoShimRegisterPipeline(
        argument: MlirStringRef,
        summary: MlirStringRef,
        build: unsafe extern "C" fn(MlirStringRef, MlirStringRef, MlirOpPassManager, Message, *mut c_void) -> bool,
    );
    fn tempoShimRegisterUpstreamPasses();
    fn tempoShimIsRegistered(argument: MlirStringRef) -> bool;
}

/// Every pass and named pipeline of the project.
fn registry() -> &'static PassRegistry {
    static REGISTRY: OnceLock<PassRegistry> = OnceLock::new();
    REGISTRY.get_or_init(tempo_lowering::registry)
}

fn text<'s>(text: MlirStringRef) -> &'s str {
    if text.data.is_null() {
        return "";
    }
    let bytes = unsafe { std::slice::from_raw_parts(text.data as *const u8, text.length) };
    std::str::from_utf8(bytes).unwrap_or("")
}

fn say(message: Message, data: *mut c_void, what: &str) {
    unsafe { message(MlirStringRef { data: what.as_ptr() as *const c_char, length: what.len() }, data) }
}

unsafe extern "C" fn check_options(
    argument: MlirStringRef,
    options: MlirStringRef,
    message: Message,
    data: *mut c_void,
) -> bool {
    match registry().get(text(argument)) {
        Some(RegistryEntry::Pass(pass)) => match pipeline::parse_options(pass.as_ref(), text(options)) {
            Ok(_) => true,
            Err(e) => {
                say(message, data, &e.0);
                false
            }
        },
        _ => {
            say(message, data, &format!("no pass '{}' in libTempoCAPI", text(argument)));
            false
        }
    }
}

unsafe extern "C" fn run_pass(argument: MlirStringRef, options: MlirStringRef, op: MlirOperation) -> bool {
    let op = unsafe { melior::ir::OperationRef::from_raw(op) };
    let Some(RegistryEntry::Pass(pass)) = registry().get(text(argument)) else { return false };
    match pipeline::parse_options(pass.as_ref(), text(options)) {
        Ok(options) => pipeline::run_reported(pass.as_ref(), op, &options),
        Err(e) => {
            use melior::ir::operation::OperationLike;
            tempo_passes::diagnostics::PassDiagnostic::new(op.location(), e.0).emit();
            false
        }
    }
}

unsafe extern "C" fn build_pipeline(
    argument: MlirStringRef,
    options: MlirStringRef,
    manager: MlirOpPassManager,
    message: Message,
    data: *mut c_void,
) -> bool {
    let name = text(argument);
    let Some(RegistryEntry::Pipeline { text: pipeline_text, .. }) = registry().get(name) else {
        say(message, data, &format!("no pipeline '{name}' in libTempoCAPI"));
        return false;
    };
    if !text(options).trim().is_empty() {
        say(message, data, &format!("pipeline '{name}' takes no options"));
        return false;
    }
    // Parsed by MLIR, which finds the project's passes in its registry (as
    // registered passes, they declare the dialects they build ops of).
    let elements = match pipeline::parse_pipeline(pipeline_text) {
        Ok(elements) => elements,
        Err(e) => {
            say(message, data, &e.0);
            return false;
        }
    };
    let mlir_text = pipeline::print_elements(&elements);
    let added = unsafe {
        mlir_sys::mlirOpPassManagerAddPipeline(
            manager,
            MlirStringRef { data: mlir_text.as_ptr() as *const c_char, length: mlir_text.len() },
            Some(message),
            data,
        )
    };
    added.value != 0
}

/// Registers every pass and named pipeline of the project in MLIR's global
/// pass registry (and MLIR's own passes, which the pipelines use, unless
/// the host registered them). Idempotent.
#[unsafe(no_mangle)]
pub extern "C" fn tempoRegisterPasses() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        unsafe { tempoShimRegisterUpstreamPasses() };
        for entry in registry().entries() {
            let name = string_ref(entry.name());
            if unsafe { tempoShimIsRegistered(name) } {
                continue;
            }
            match entry {
                RegistryEntry::Pass(pass) => unsafe {
                    tempoShimRegisterPass(name, string_ref(pass.summary()), check_options, run_pass)
                },
                RegistryEntry::Pipeline { summary, .. } => unsafe {
                    tempoShimRegisterPipeline(name, string_ref(summary), build_pipeline)
                },
            }
        }
    });
}

// ----------------------------------------------------------------------------
// The mlir-opt plug-in.

/// `mlir::PassPluginLibraryInfo` (`mlir/Tools/Plugins/PassPlugin.h`): a
/// plain C struct.
#[repr(C)]
pub struct PassPluginLibraryInfo {
    pub api_version: u32,
    pub plugin_name: *const c_char,
    pub plugin_version: *const c_char,
    pub register_pass_registry_callbacks: extern "C" fn(),
}

/// `MLIR_PLUGIN_API_VERSION` of MLIR 22.
const PLUGIN_API_VERSION: u32 = 1;

extern "C" fn register_for_plugin() {
    tempoRegisterPasses();
}

/// What `mlir-opt --load-pass-plugin=libTempoCAPI.so` asks the library:
/// its passes are registered when mlir-opt calls back.
#[unsafe(no_mangle)]
pub extern "C" fn mlirGetPassPluginInfo() -> PassPluginLibraryInfo {
    PassPluginLibraryInfo {
        api_version: PLUGIN_API_VERSION,
        plugin_name: c"tempo".as_ptr(),
        plugin_version: concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char,
        register_pass_registry_callbacks: register_for_plugin,
    }
}
