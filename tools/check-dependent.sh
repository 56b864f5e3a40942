#!/usr/bin/env bash
# Builds and runs a scratch crate outside this repository that depends on
# `tempo` by path, with only the configuration the README's "Using tempo
# from another crate" says to add: what a user of the crate does. Builds in
# this repository's target directory (the dependencies are reused; the
# tempo crates themselves are compiled again, unoptimized: see below).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src" "$scratch/.cargo"
cat > "$scratch/Cargo.toml" <<TOML
[package]
name = "uses-tempo"
version = "0.1.0"
edition = "2024"

[dependencies]
tempo = { path = "$root" }

[workspace]

# Outside this repository's workspace, cargo compiles the tempo crates
# again for the dependent (path dependencies that are not members are
# units of their own); unoptimized, they take a fraction of the time
# (this checks the configuration, building, linking and running, not
# speed). Their dependencies keep the release profile and are reused.
[profile.release.package.tempo]
opt-level = 0
[profile.release.package.tempo-dialects]
opt-level = 0
[profile.release.package.tempo-passes]
opt-level = 0
[profile.release.package.tempo-lowering]
opt-level = 0
[profile.release.package.tempo-runtime]
opt-level = 0
TOML
# Exactly the block the README gives.
sed -n '/^# tempo-dependent-config-begin$/,/^# tempo-dependent-config-end$/p' "$root/README.md" \
  | grep -v '^# tempo-dependent-config' > "$scratch/.cargo/config.toml"
cp "$root/Cargo.lock" "$scratch/Cargo.lock"
cat > "$scratch/src/main.rs" <<'RUST'
use tempo::{Data, Program, i64s};

fn main() {
    // x[0] = 1, x[t] = 2 x[t-1]: compiled once, run at two bounds.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.tensor("x", &[&t], i64s(&[]));
    p.define(&x, t.eq(0), tempo::Expr::splat_int(1, i64s(&[])));
    p.otherwise(&x, 2 * x.at([&t - 1]));
    p.output(&x);
    let compiled = p.runner().compile().expect("compiles");
    for steps in [4, 10] {
        let out = compiled.run(&[("T", steps)], &[]).expect("runs");
        let Data::I64(values) = &out[0].data else { panic!("i64") };
        assert_eq!(values.last(), Some(&(1i64 << (steps - 1))));
        println!("T = {steps}: {values:?}");
    }
}
RUST
cd "$scratch"
CARGO_TARGET_DIR="$root/target" cargo run --release --quiet
