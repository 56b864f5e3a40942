//! Compiles the C shim `shim/guard.c` (setjmp/longjmp around a run of the
//! compiled code, which Rust cannot express soundly; see `src/guard.rs`).

fn main() {
    println!("cargo:rerun-if-changed=shim/guard.c");
    cc::Build::new().file("shim/guard.c").flag("-std=c11").warnings(true).compile("tempo_runtime_guard");
}
