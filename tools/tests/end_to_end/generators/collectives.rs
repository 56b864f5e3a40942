//! [`CollectiveGenerator`]: random programs of several all-reduces over
//! `t < T` (an iteration dimension of a data-parallel run), some of them
//! independent and some reading others at the same point, the one before
//! (through a tensor of two branches), the reversed point or a range: the
//! shapes `temporal-fuse-collectives` merges or must leave apart.

use super::*;

/// How a collective reads an earlier one.
#[derive(Clone, Copy, Debug)]
enum Dependence {
    None,
    /// `c[t]`: the same point (never merged with it).
    Same,
    /// `m[t]`, where `m[0] = 0` and `m[t] = c[t - 1]`: the point before.
    Before,
    /// `c[T - 1 - t]`: possibly the same point or a later one.
    Reverse,
    /// `sum(c[0:t])`: the strict past, a range.
    Past,
    /// `sum(c[0:t + 1])`: a range holding the present point.
    Prefix,
}

/// Random programs of 3 to 6 all-reduces (sum, mean or max; f64 or f32;
/// scalars or 3 values) over `t`, each of one branch or of two (the first
/// at `t = 0`), reading the input `x[t]` and at most one earlier
/// collective; every collective is an output.
pub(crate) struct CollectiveGenerator;

impl CollectiveGenerator {
    pub(crate) fn program(seed: u64) -> String {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xc011ec7);
        let mut text = String::from(HEADER);
        let _ = writeln!(
            text,
            "%x = \"temporal.input\"() {{sym_name = \"x\", domain = [\"t\"], element = tensor<3xf64>}} : () -> !temporal.rtensor"
        );
        // Per collective: its element type and its point shape ("" or "3x").
        let mut made: Vec<(&'static str, &'static str)> = Vec::new();
        let count = rng.random_range(3..=6);
        for k in 0..count {
            let element = if rng.random_bool(0.75) { "f64" } else { "f32" };
            let shape = if rng.random_bool(0.5) { "" } else { "3x" };
            let reduction = *["sum", "mean", "max"].choose(&mut rng).expect("not empty");
            let dependence = if k == 0 {
                Dependence::None
            } else {
                *[
                    Dependence::None,
                    Dependence::Same,
                    Dependence::Before,
                    Dependence::Reverse,
                    Dependence::Past,
                    Dependence::Prefix,
                ]
                .choose(&mut rng)
                .expect("not empty")
            };
            let source = rng.random_range(0..k.max(1));
            let ty = format!("tensor<{shape}{element}>");
            let _ = writeln!(
                text,
                "%c{k} = \"temporal.tensor\"() {{sym_name = \"c{k}\", domain = [\"t\"], element = {ty}}} : () -> !temporal.rtensor"
            );
            // The point before, through a tensor of two branches.
            if let Dependence::Before = dependence {
                let (e, s) = made[source];
                let sty = format!("tensor<{s}{e}>");
                let _ = writeln!(
                    text,
                    "%m{k} = \"temporal.tensor\"() {{sym_name = \"m{k}\", domain = [\"t\"], element = {sty}}} : () -> !temporal.rtensor\n\
                     \"temporal.define\"(%m{k}) ({{\n  %z = \"temporal.constant\"() {{value = dense<0.5> : {sty}}} : () -> {sty}\n  \"gpu.yield\"(%z) : ({sty}) -> ()\n}}) {{when = affine_set<(t)[T] : (t == 0)>}} : (!temporal.rtensor) -> ()\n\
                     \"temporal.define\"(%m{k}) ({{\n  %v = \"temporal.read\"(%c{source}) {{index = affine_map<(t)[T] -> (t - 1)>}} : (!temporal.rtensor) -> {sty}\n  \"gpu.yield\"(%v) : ({sty}) -> ()\n}}) {{when = affine_set<(t)[T] : (0 == 0)>}} : (!temporal.rtensor) -> ()"
                );
            }
            let two_branches = rng.random_bool(0.4);
            let branches: &[&str] = if two_branches { &["t == 0", "0 == 0"] } else { &["0 == 0"] };
            for (b, when) in branches.iter().enumerate() {
                let mut body = String::new();
                let _ = writeln!(
                    body,
                    "  %x0 = \"temporal.read\"(%x) {{index = affine_map<(t)[T] -> (t)>}} : (!temporal.rtensor) -> tensor<3xf64>"
                );
                // The first of two branches reads x only, scaled.
                let _ = writeln!(
                    body,
                    "  %x1 = \"temporal.{}\"(%x0) : (tensor<3xf64>) -> tensor<3xf64>",
                    if b == 0 && two_branches { "neg" } else { "tanh" }
                );
                let mut value = "%x1".to_string();
                let mut value_ty = "tensor<3xf64>".to_string();
                if shape.is_empty() {
                    let _ = writeln!(
                        body,
                        "  %x2 = \"temporal.reduce_sum\"(%x1) {{axis = 0 : i64}} : (tensor<3xf64>) -> tensor<f64>"
                    );
                    value = "%x2".into();
                    value_ty = "tensor<f64>".into();
                }
                if element == "f32" {
                    let to = format!("tensor<{shape}f32>");
                    let _ = writeln!(body, "  %x3 = \"temporal.cast\"({value}) : ({value_ty}) -> {to}");
                    value = "%x3".into();
                    value_ty = to;
                }
                let reads_source = !(two_branches && b == 0) && !matches!(dependence, Dependence::None);
                if reads_source {
                    let (e, s) = made[source];
                    let sty = format!("tensor<{s}{e}>");
                    let read = match dependence {
                        Dependence::Same => {
                            format!("\"temporal.read\"(%c{source}) {{index = affine_map<(t)[T] -> (t)>}}")
                        }
                        Dependence::Before => {
                            format!("\"temporal.read\"(%m{k}) {{index = affine_map<(t)[T] -> (t)>}}")
                        }
                        Dependence::Reverse => {
                            format!("\"temporal.read\"(%c{source}) {{index = affine_map<(t)[T] -> (T - 1 - t)>}}")
                        }
                        Dependence::Past | Dependence::Prefix => {
                            let upper = if let Dependence::Past = dependence { "t" } else { "t + 1" };
                            format!(
                                "\"temporal.read_range\"(%c{source}) {{lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> ({upper})>], caps = [affine_map<(t)[T] -> ()>]}}"
                            )
                        }
                        Dependence::None => unreachable!("reads a source"),
                    };
                    let (mut d, mut dty) = if let Dependence::Past | Dependence::Prefix = dependence {
                        let ranged = format!("tensor<?x{s}{e}>");
                        let _ = writeln!(body, "  %d0 = {read} : (!temporal.rtensor) -> {ranged}");
                        let _ = writeln!(
                            body,
                            "  %d1 = \"temporal.reduce_sum\"(%d0) {{axis = 0 : i64}} : ({ranged}) -> {sty}"
                        );
                        ("%d1".to_string(), sty.clone())
                    } else {
                        let _ = writeln!(body, "  %d1 = {read} : (!temporal.rtensor) -> {sty}");
                        ("%d1".to_string(), sty.clone())
                    };
                    if s == "3x" && shape.is_empty() {
                        let to = format!("tensor<{e}>");
                        let _ =
                            writeln!(body, "  %d2 = \"temporal.reduce_max\"({d}) {{axis = 0 : i64}} : ({dty}) -> {to}");
                        d = "%d2".into();
                        dty = to;
                    }
                    if e != element {
                        let to = dty.replace(e, element);
                        let _ = writeln!(body, "  %d3 = \"temporal.cast\"({d}) : ({dty}) -> {to}");
                        d = "%d3".into();
                        dty = to;
                    }
                    let _ = writeln!(body, "  %s = \"temporal.add\"({value}, {d}) : ({value_ty}, {dty}) -> {ty}");
                    value = "%s".into();
                    value_ty = ty.clone();
                }
                let _ = writeln!(
                    body,
                    "  %y = \"temporal.all_reduce\"({value}) {{reduction = \"{reduction}\"}} : ({value_ty}) -> {ty}\n  \"gpu.yield\"(%y) : ({ty}) -> ()"
                );
                let _ = writeln!(
                    text,
                    "\"temporal.define\"(%c{k}) ({{\n{body}}}) {{when = affine_set<(t)[T] : ({when})>}} : (!temporal.rtensor) -> ()"
                );
            }
            made.push((element, shape));
        }
        for k in 0..count {
            let _ = writeln!(text, "\"temporal.output\"(%c{k}) : (!temporal.rtensor) -> ()");
        }
        text
    }
}
