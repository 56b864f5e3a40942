//! Linking MLIR's C API archives into `libMLIR-C.so` (shared by the build
//! scripts of `tempo-dialects`, for the project's binaries, and of the
//! Python package, which carries its own copy in the wheel).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Links Debian's `libMLIRCAPI*.a` archives, whole, into
/// `dir/libMLIR-C.so` against `libMLIR.so` and `libLLVM.so` (the MLIR 22
/// prefix of `MLIR_SYS_220_PREFIX`), unless it is there and newer than
/// every archive.
pub fn ensure(dir: &Path) {
    let lib = library_dir();
    let library = dir.join("libMLIR-C.so");
    let archives = archives(&lib);
    if !up_to_date(&library, &archives) {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
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
}

/// `dir/libMLIR-C.so` as [`ensure`] makes it: copied from the directory
/// `built` where [`ensure`] made an up-to-date one already (the project's
/// own build of the same target directory), else linked.
#[allow(dead_code)] // tempo-dialects' build script links its own
pub fn ensure_from(dir: &Path, built: &Path) {
    let library = dir.join("libMLIR-C.so");
    let source = built.join("libMLIR-C.so");
    if !library.exists() && up_to_date(&source, &archives(&library_dir())) {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        let partial = dir.join(format!("libMLIR-C.so.{}", std::process::id()));
        // A failed copy leaves the linking below to make it.
        let _ = std::fs::copy(&source, &partial).and_then(|_| std::fs::rename(&partial, &library));
    }
    ensure(dir);
}

/// MLIR's library directory (`MLIR_SYS_220_PREFIX/lib`).
fn library_dir() -> PathBuf {
    let prefix = PathBuf::from(std::env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into()));
    prefix.join("lib")
}

/// The C API's archives in `lib`, sorted.
fn archives(lib: &Path) -> Vec<PathBuf> {
    let mut archives: Vec<PathBuf> = std::fs::read_dir(lib)
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
    archives
}

/// Whether `library` exists and is newer than every archive.
fn up_to_date(library: &Path, archives: &[PathBuf]) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let Some(built) = modified(library) else { return false };
    archives.iter().all(|a| modified(a).is_some_and(|m| m <= built))
}
