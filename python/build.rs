//! Puts MLIR's C API library, `libMLIR-C.so`, beside the extension
//! (`tempo/mlir-c/`, where its rpath `$ORIGIN/mlir-c` finds it), so that
//! the wheel maturin writes carries it (`[tool.maturin] include`) on every
//! path: `pip install ./python` (maturin's PEP 517 backend), `maturin
//! build` and `python/build.sh`. Copied from the project's own build of
//! the same target directory where that one is up to date, else linked
//! from Debian's archives as `tempo-dialects` links it.

use std::path::PathBuf;

#[path = "../dialects/mlir_c.rs"]
mod mlir_c;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../dialects/mlir_c.rs");
    println!("cargo:rerun-if-changed=tempo/mlir-c/libMLIR-C.so");
    println!("cargo:rerun-if-env-changed=MLIR_SYS_220_PREFIX");
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    // OUT_DIR is <profile>/build/<package>-<hash>/out.
    let profile = out.ancestors().nth(3).expect("OUT_DIR is inside the target directory").to_path_buf();
    mlir_c::ensure_from(&here.join("tempo").join("mlir-c"), &profile.join("mlir-c"));
}
