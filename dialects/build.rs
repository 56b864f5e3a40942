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

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MLIR_SYS_220_PREFIX");
    println!("cargo:rerun-if-env-changed=MLIR_SYS_LINK_SHARED");
    if std::env::var("MLIR_SYS_LINK_SHARED").map_or(true, |v| v != "1") {
        // Linked statically: the C API comes from the archives.
        return;
    }
    let prefix = PathBuf::from(std::env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into()));
    let lib = prefix.join("lib");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    // OUT_DIR is <profile>/build/<package>-<hash>/out.
    let profile = out.ancestors().nth(3).expect("OUT_DIR is inside the target directory").to_path_buf();
    let dir = profile.join("mlir-c");
    let library = dir.join("libMLIR-C.so");
    let mut archives: Vec<PathBuf> = std::fs::read_dir(&lib)
        .unwrap_or_else(|e| panic!("cannot read {}: {e} (run tools/setup.sh)", lib.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libMLIRCAPI") && n.ends_with(".a"))
        })
        .collect();
    archives.sort();
    if archives.is_empty() {
        panic!("no libMLIRCAPI*.a in {} (run tools/setup.sh: libmlir-22-dev)", lib.display());
    }
    if !up_to_date(&library, &archives) {
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        // Linked to a temporary name and renamed, so that a build
        // interrupted half-way leaves no broken library behind.
        let partial = dir.join(format!("libMLIR-C.so.{}", std::process::id()));
        let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        let status = Command::new(&compiler)
            .arg("-shared")
            .arg("-o")
            .arg(&partial)
            .arg("-Wl,-soname,libMLIR-C.so")
            .arg("-Wl,--whole-archive")
            .args(&archives)
            .arg("-Wl,--no-whole-archive")
            .arg(format!("-L{}", lib.display()))
            .args(["-lMLIR", "-lLLVM", "-Wl,--no-undefined"])
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .status()
            .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
        if !status.success() {
            panic!("linking {} failed ({status})", library.display());
        }
        std::fs::rename(&partial, &library).unwrap_or_else(|e| panic!("cannot write {}: {e}", library.display()));
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
}

/// Whether `library` exists and is newer than every archive.
fn up_to_date(library: &Path, archives: &[PathBuf]) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(built) = modified(library) else { return false };
    archives.iter().all(|a| modified(a).is_some_and(|m| m <= built))
}
