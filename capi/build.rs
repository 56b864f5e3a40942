//! Compiles the C++ shim (`shim/passes.cpp`): the one entry point MLIR's C
//! API lacks, registering a pass or a pipeline by name in MLIR's global
//! registry. Built against Debian's MLIR headers, without RTTI as MLIR is.

fn main() {
    let prefix = std::env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into());
    println!("cargo:rerun-if-changed=shim/passes.cpp");
    println!("cargo:rerun-if-env-changed=MLIR_SYS_220_PREFIX");
    cc::Build::new()
        .cpp(true)
        .file("shim/passes.cpp")
        .include(format!("{prefix}/include"))
        .flag("-std=c++17")
        .flag("-fno-rtti")
        .flag("-fvisibility=hidden")
        .warnings(false)
        .compile("tempo_capi_shim");
}
