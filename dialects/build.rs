//! Makes MLIR's C API a shared library, `libMLIR-C.so`, so that every
//! binary and library of the project uses the one copy of MLIR in Debian's
//! `libMLIR.so` (issue 25).
//!
//! Debian ships MLIR's C++ API as `libMLIR.so` but the C API only as static
//! archives (`libMLIRCAPI*.a`). `mlir-sys` built with
//! `MLIR_SYS_LINK_SHARED=1` (set in `.cargo/config.toml`) links
//! `-lMLIR -lMLIR-C`; this script links the archives, whole, into
//! `<target>/<profile>/mlir-c/libMLIR-C.so` against `libMLIR.so` and
//! `libLLVM.so` (once: it is kept while the archives are no newer), and
//! tells Cargo to search that directory. Binaries find it at run time
//! through the rpaths `.cargo/config.toml` gives every link
//! (`$ORIGIN/mlir-c`, `$ORIGIN/../mlir-c`, then MLIR's own directory).
//! Every crate that links MLIR depends on this one, so the search path
//! reaches all of them.

use std::path::PathBuf;

#[path = "mlir_c.rs"]
mod mlir_c;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=mlir_c.rs");
    println!("cargo:rerun-if-env-changed=MLIR_SYS_220_PREFIX");
    println!("cargo:rerun-if-env-changed=MLIR_SYS_LINK_SHARED");
    if std::env::var("MLIR_SYS_LINK_SHARED").map_or(true, |v| v != "1") {
        // Linked statically: the C API comes from the archives.
        return;
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    // OUT_DIR is <profile>/build/<package>-<hash>/out.
    let profile = out.ancestors().nth(3).expect("OUT_DIR is inside the target directory").to_path_buf();
    let dir = profile.join("mlir-c");
    mlir_c::ensure(&dir);
    println!("cargo:rustc-link-search=native={}", dir.display());
}
