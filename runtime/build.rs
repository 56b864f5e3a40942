//! Compiles the C shim `shim/guard.c` (setjmp/longjmp around a run of the
//! compiled code, which Rust cannot express soundly; see `src/guard.rs`),
//! and fingerprints the compiler's sources for the compilation cache
//! (`TEMPO_SOURCES_HASH`, `src/cache.rs`): any change to the dialects,
//! passes, lowering or runtime makes new cache keys.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// Files under `dir`, sorted (so the hash does not depend on the order
/// the file system lists them in).
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(listing) = std::fs::read_dir(dir) else { return };
    for item in listing.flatten() {
        let path = item.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=shim/guard.c");
    cc::Build::new().file("shim/guard.c").flag("-std=c11").warnings(true).compile("tempo_runtime_guard");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the runtime is in the workspace");
    let mut paths = Vec::new();
    for crate_dir in ["dialects", "passes", "lowering", "runtime"] {
        for part in ["src", "Cargo.toml", "build.rs", "shim"] {
            let path = root.join(crate_dir).join(part);
            // Only paths that exist: a missing one (`dialects/shim`) would
            // make Cargo run this script, and rebuild every crate above the
            // runtime, on every build.
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
            if path.is_dir() {
                files(&path, &mut paths);
            } else if path.exists() {
                paths.push(path);
            }
        }
    }
    paths.sort();
    // (std's SipHash with fixed keys: deterministic for a given toolchain,
    // which is all a fingerprint compared with itself needs.)
    let mut hash = std::collections::hash_map::DefaultHasher::new();
    for path in &paths {
        path.strip_prefix(root).unwrap_or(path).hash(&mut hash);
        std::fs::read(path).unwrap_or_default().hash(&mut hash);
    }
    println!("cargo:rustc-env=TEMPO_SOURCES_HASH={:016x}", hash.finish());
}
