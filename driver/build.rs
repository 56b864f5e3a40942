//! Fingerprints the compiler's sources for the compilation cache
//! (`TEMPO_SOURCES_HASH`, `src/cache.rs`): any change to the dialects,
//! passes, lowering, runtime or driver makes new cache keys.

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
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the driver is in the workspace");
    let mut paths = Vec::new();
    for crate_dir in ["dialects", "passes", "lowering", "runtime", "driver"] {
        for part in ["src", "Cargo.toml", "build.rs", "shim"] {
            let path = root.join(crate_dir).join(part);
            // Only paths that exist: a missing one (`dialects/shim`) would
            // make Cargo run this script, and rebuild every crate above the
            // driver, on every build.
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
