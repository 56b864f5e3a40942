//! A [`Program`] printed as temporal-dialect text (tests only: the oracle
//! the typed IR of [`crate::emit`] is checked against).
//!
//! The text uses generic op syntax, `d0`/`s0` names in affine maps and sets
//! (no clash with the program's own names), and keeps every node's
//! location. Reading the printed text gives back an equal program (same
//! dims, tensors, branches, nodes and outputs, in the same order).

use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::program::{Movement, Node, NodeKind, PointType, Program};
use melior::ir::Location;
use std::fmt::Write;

/// MLIR string literal contents.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

fn names(prefix: char, count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{prefix}{i}")).collect()
}

/// The dims and symbols of a map or set, `(d0, d1)[s0]`.
pub fn header(num_dims: usize, num_symbols: usize) -> String {
    format!("({})[{}]", names('d', num_dims).join(", "), names('s', num_symbols).join(", "))
}

/// Affine expressions over `d0..`/`s0..`, separated by commas.
pub fn exprs(list: &[AffineExpr], num_dims: usize, num_symbols: usize) -> String {
    let (d, s) = (names('d', num_dims), names('s', num_symbols));
    list.iter().map(|e| e.display(&d, &s).to_string()).collect::<Vec<_>>().join(", ")
}

/// `affine_map<(d0)[s0] -> (...)>`.
pub fn map_text(map: &AffineMap) -> String {
    format!(
        "affine_map<{} -> ({})>",
        header(map.num_dims, map.num_symbols),
        exprs(&map.results, map.num_dims, map.num_symbols)
    )
}

/// `affine_set<(d0)[s0] : (...)>` (`0 == 0` when it always holds).
pub fn set_text(set: &IntegerSet) -> String {
    let (d, s) = (names('d', set.num_dims), names('s', set.num_symbols));
    let constraints: Vec<String> = set
        .constraints
        .iter()
        .map(|c| format!("{} {} 0", c.expr.display(&d, &s), if c.is_equality { "==" } else { ">=" }))
        .collect();
    let constraints = if constraints.is_empty() { "0 == 0".to_string() } else { constraints.join(", ") };
    format!("affine_set<{} : ({constraints})>", header(set.num_dims, set.num_symbols))
}

fn location(location: &Location) -> String {
    location.to_string()
}

fn integers(values: impl IntoIterator<Item = i64>) -> String {
    values.into_iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
}

/// One body node as an op (`%v{k} = ...`).
fn node_text(k: usize, node: &Node, nodes: &[Node], dims: &[crate::program::Dim]) -> String {
    let ty = &node.ty;
    let loc = location(&node.location);
    let value = |i: usize| format!("%v{i}");
    let generic = |op: &str, operands: &[usize], attributes: String| {
        let names: Vec<String> = operands.iter().map(|&i| value(i)).collect();
        let types: Vec<String> = operands.iter().map(|&i| nodes[i].ty.to_string()).collect();
        let attributes = if attributes.is_empty() { String::new() } else { format!(" {{{attributes}}}") };
        format!("%v{k} = \"temporal.{op}\"({}){attributes} : ({}) -> {ty} {loc}", names.join(", "), types.join(", "))
    };
    match &node.kind {
        NodeKind::Read { source, index } => format!(
            "%v{k} = \"temporal.read\"(%t{source}) {{index = {}}} : (!temporal.rtensor) -> {ty} {loc}",
            map_text(index)
        ),
        NodeKind::ReadAt { source, index, data } => {
            let names: Vec<String> = data.iter().map(|&i| value(i)).collect();
            let types: Vec<String> = data.iter().map(|&i| nodes[i].ty.to_string()).collect();
            format!(
                "%v{k} = \"temporal.read_at\"(%t{source}{}{}) {{index = {}}} : (!temporal.rtensor{}{}) -> {ty} {loc}",
                if names.is_empty() { "" } else { ", " },
                names.join(", "),
                map_text(index),
                if types.is_empty() { "" } else { ", " },
                types.join(", ")
            )
        }
        NodeKind::ReadRange { source, lower, upper, caps } => {
            let list = |maps: &[AffineMap]| maps.iter().map(map_text).collect::<Vec<_>>().join(", ");
            format!(
                "%v{k} = \"temporal.read_range\"(%t{source}) {{caps = [{}], lower = [{}], upper = [{}]}} : (!temporal.rtensor) -> {ty} {loc}",
                list(caps),
                list(lower),
                list(upper)
            )
        }
        NodeKind::Reduce(kind, a, axis) => generic(kind.op_name(), &[*a], format!("axis = {axis} : i64")),
        NodeKind::Compare(predicate, a, b) => {
            generic("cmp", &[*a, *b], format!("predicate = \"{}\"", predicate.text()))
        }
        NodeKind::Select(c, a, b) => generic("select", &[*c, *a, *b], String::new()),
        NodeKind::Cast(a) => generic("cast", &[*a], String::new()),
        NodeKind::Move(movement, operands) => {
            let (op, attributes) = match movement {
                Movement::Permute(p) => {
                    ("permute", format!("permutation = [{}]", integers(p.iter().map(|&k| k as i64))))
                }
                Movement::Flip(axis) => ("flip", format!("axis = {axis} : i64")),
                Movement::Slice(offsets) => ("slice", format!("offsets = [{}]", integers(offsets.iter().copied()))),
                Movement::Reshape => ("reshape", String::new()),
                Movement::Expand => ("expand", String::new()),
                Movement::Concat(axis) => ("concat", format!("axis = {axis} : i64")),
                Movement::Arange => ("arange", String::new()),
            };
            generic(op, operands, attributes)
        }
        NodeKind::Gather(table, indices) => generic("gather", &[*table, *indices], String::new()),
        NodeKind::DynamicSlice(a, offsets) => {
            generic("dynamic_slice", &[*a], format!("offsets = {}", map_text(offsets)))
        }
        NodeKind::Einsum(spec, operands) => generic("einsum", operands, format!("spec = \"{spec}\"")),
        NodeKind::FlashAttention(f, operands) => generic(f.part.op_name(), operands, format!("band = \"{}\"", f.band)),
        NodeKind::Attention(a, operands) => generic(
            "attention",
            operands,
            format!("score = \"{}\", combine = \"{}\", block = {} : i64", a.score, a.combine, a.block),
        ),
        NodeKind::Call { callee, args, batched, .. } => {
            let names: Vec<String> = args.iter().map(|&i| value(i)).collect();
            let types: Vec<String> = args.iter().map(|&i| nodes[i].ty.to_string()).collect();
            format!(
                "%v{k} = \"temporal.call\"() ({{\n    \"gpu.yield\"({}) : ({}) -> ()\n  }}) {{callee = \"{}\"{}}} : () -> {ty} {loc}",
                names.join(", "),
                types.join(", "),
                escape(callee),
                if *batched { ", batched" } else { "" }
            )
        }
        NodeKind::Position(d) => generic("position", &[], format!("dim = \"{}\"", escape(&dims[*d].name))),
        NodeKind::Bound(d) => generic("bound", &[], format!("dim = \"{}\"", escape(&dims[*d].name))),
        NodeKind::Rank => generic("rank", &[], String::new()),
        NodeKind::WorldSize => generic("world_size", &[], String::new()),
        NodeKind::AllReduce(kind, a) => generic("all_reduce", &[*a], format!("reduction = \"{}\"", kind.text())),
        NodeKind::Random { seed, normal } => generic(
            "random",
            &[],
            format!("seed = {seed} : i64, distribution = \"{}\"", if *normal { "normal" } else { "uniform" }),
        ),
        NodeKind::Constant { text, .. } => generic("constant", &[], format!("value = {text}")),
        NodeKind::Unary(kind, a) => generic(kind.op_name(), &[*a], String::new()),
        NodeKind::Binary(kind, a, b) => generic(kind.op_name(), &[*a, *b], String::new()),
        NodeKind::Matmul(a, b) => generic("matmul", &[*a, *b], String::new()),
    }
}

fn domain_text(program: &Program, domain: &[usize]) -> String {
    domain.iter().map(|&d| format!("\"{}\"", escape(&program.dims[d].name))).collect::<Vec<_>>().join(", ")
}

fn element_text(point: &PointType) -> String {
    point.to_string()
}

/// The whole program as temporal-dialect text (the ops of a module body).
pub fn program_text(program: &Program) -> String {
    let mut out = String::new();
    for (k, dim) in program.dims.iter().enumerate() {
        let loc = program.dim_locations.get(k).map(location).unwrap_or_default();
        let _ = writeln!(
            out,
            "\"temporal.dim\"() {{sym_name = \"{}\", bound = \"{}\"}} : () -> () {loc}",
            escape(&dim.name),
            escape(&dim.bound)
        );
    }
    for (i, t) in program.tensors.iter().enumerate() {
        let op = if t.is_input { "input" } else { "tensor" };
        let _ = writeln!(
            out,
            "%t{i} = \"temporal.{op}\"() {{sym_name = \"{}\", domain = [{}], element = {}}} : () -> !temporal.rtensor {}",
            escape(&t.name),
            domain_text(program, &t.domain),
            element_text(&t.point),
            location(&t.location)
        );
    }
    for (i, t) in program.tensors.iter().enumerate() {
        for branch in &t.branches {
            let _ = writeln!(out, "\"temporal.define\"(%t{i}) ({{");
            for (k, node) in branch.nodes.iter().enumerate() {
                let _ = writeln!(out, "  {}", node_text(k, node, &branch.nodes, &program.dims));
            }
            let _ = writeln!(
                out,
                "  \"gpu.yield\"(%v{}) : ({}) -> ()\n}}) {{when = {}}} : (!temporal.rtensor) -> () {}",
                branch.result,
                branch.nodes[branch.result].ty,
                set_text(&branch.when),
                location(&branch.location)
            );
        }
    }
    for &o in &program.outputs {
        let _ = writeln!(out, "\"temporal.output\"(%t{o}) : (!temporal.rtensor) -> ()");
    }
    for stop in &program.stops {
        let _ = writeln!(
            out,
            "\"temporal.stop\"(%t{}) {{dim = \"{}\"}} : (!temporal.rtensor) -> () {}",
            stop.done,
            program.dims[stop.dim].name,
            location(&stop.location)
        );
    }
    out
}
