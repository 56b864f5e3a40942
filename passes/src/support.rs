//! Utilities the passes, the lowering and the runtime share, which are not
//! passes themselves: a fallible bitset over a tensor's points (`bits`:
//! point checks and the interpreter), parsing MLIR text with the source's
//! own locations (`source`: the tools and the Rust API), and splicing code
//! parsed from text into a module (`splice`: the lowerings that still
//! write text).

pub mod bits;
pub mod source;
pub mod splice;
