//! Seeded random values in `lower-temporal-to-loops`: the same bits as
//! `tempo_passes::program::random_bits`, computed in the generated code.

use super::*;

impl Emitter<'_, '_> {
    /// Seeded random values into `target`, each element computed from the
    /// seed, the point's coordinates (`reader_dims`) and its position, with
    /// the same arithmetic as `tempo_passes::program::random_bits`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn random(
        &mut self,
        seed: i64,
        normal: bool,
        reader_dims: &[String],
        target: &View,
        ty: &PointType,
        indent: &str,
        out: &mut String,
    ) {
        let e = ty.element.mlir();
        let coordinates: Vec<String> = reader_dims
            .iter()
            .map(|d| {
                let c = self.fresh("i");
                let _ = writeln!(out, "{indent}{c} = arith.index_cast {d} : index to i64");
                c
            })
            .collect();
        let rank = ty.shape.len();
        let dims: Vec<String> = (0..rank).map(|i| format!("d{i}")).collect();
        let iterators: Vec<&str> = (0..rank).map(|_| "\"parallel\"").collect();
        let _ = writeln!(
            out,
            "{indent}linalg.generic {{indexing_maps = [affine_map<({d}) -> ({d})>], iterator_types = [{}]}} outs({} : {}) {{",
            iterators.join(", "),
            target.name,
            target.ty,
            d = dims.join(", ")
        );
        let o = self.fresh("o");
        let _ = writeln!(out, "{indent}^bb0({o}: {e}):");
        let body = format!("{indent}  ");
        let mut lines = Vec::new();
        let constant = |this: &mut Self, value: &str, t: &str, lines: &mut Vec<String>| {
            let c = this.fresh("k");
            lines.push(format!("{c} = arith.constant {value} : {t}"));
            c
        };
        // Row-major position of the element.
        let mut position = constant(self, "0", "index", &mut lines);
        for k in 0..rank {
            let stride: i64 = ty.shape[k + 1..].iter().product();
            let index = self.fresh("k");
            lines.push(format!("{index} = linalg.index {k} : index"));
            let s = constant(self, &stride.to_string(), "index", &mut lines);
            let term = self.fresh("k");
            lines.push(format!("{term} = arith.muli {index}, {s} : index"));
            let next = self.fresh("k");
            lines.push(format!("{next} = arith.addi {position}, {term} : index"));
            position = next;
        }
        let element = self.fresh("k");
        lines.push(format!("{element} = arith.index_cast {position} : index to i64"));
        let golden = constant(self, "-7046029254386353131", "i64", &mut lines);
        let first = constant(self, "-4658895280553007687", "i64", &mut lines);
        let second = constant(self, "-7723592293110705685", "i64", &mut lines);
        let shifts: Vec<String> =
            ["30", "27", "31", "40"].iter().map(|s| constant(self, s, "i64", &mut lines)).collect();
        let splitmix = |this: &mut Self, x: &str, lines: &mut Vec<String>| -> String {
            let mut step = |text: String, lines: &mut Vec<String>| {
                let v = this.fresh("k");
                lines.push(format!("{v} = {text}"));
                v
            };
            let z = step(format!("arith.addi {x}, {golden} : i64"), lines);
            let s = step(format!("arith.shrui {z}, {} : i64", shifts[0]), lines);
            let z = step(format!("arith.xori {z}, {s} : i64"), lines);
            let z = step(format!("arith.muli {z}, {first} : i64"), lines);
            let s = step(format!("arith.shrui {z}, {} : i64", shifts[1]), lines);
            let z = step(format!("arith.xori {z}, {s} : i64"), lines);
            let z = step(format!("arith.muli {z}, {second} : i64"), lines);
            let s = step(format!("arith.shrui {z}, {} : i64", shifts[2]), lines);
            step(format!("arith.xori {z}, {s} : i64"), lines)
        };
        let mut x = constant(self, &seed.to_string(), "i64", &mut lines);
        for c in coordinates.iter().chain(std::iter::once(&element)) {
            let mixed = self.fresh("k");
            lines.push(format!("{mixed} = arith.xori {x}, {c} : i64"));
            x = splitmix(self, &mixed, &mut lines);
        }
        let scale = constant(self, "5.9604644775390625e-08", "f64", &mut lines);
        let uniform = |this: &mut Self, bits: &str, lines: &mut Vec<String>| -> String {
            let top = this.fresh("k");
            lines.push(format!("{top} = arith.shrui {bits}, {} : i64", shifts[3]));
            let wide = this.fresh("k");
            lines.push(format!("{wide} = arith.uitofp {top} : i64 to f64"));
            let u = this.fresh("k");
            lines.push(format!("{u} = arith.mulf {wide}, {scale} : f64"));
            if e == "f64" {
                u
            } else {
                let narrow = this.fresh("k");
                lines.push(format!("{narrow} = arith.truncf {u} : f64 to {e}"));
                narrow
            }
        };
        let u1 = uniform(self, &x, &mut lines);
        let value = if normal {
            let next = splitmix(self, &x, &mut lines);
            let u2 = uniform(self, &next, &mut lines);
            let one = constant(self, "1.0", e, &mut lines);
            let minus_two = constant(self, "-2.0", e, &mut lines);
            let tau = constant(self, if e == "f64" { "6.283185307179586" } else { "6.2831855" }, e, &mut lines);
            let mut step = |text: String, lines: &mut Vec<String>| {
                let v = self.fresh("k");
                lines.push(format!("{v} = {text}"));
                v
            };
            let rest = step(format!("arith.subf {one}, {u1} : {e}"), &mut lines);
            let log = step(format!("math.log {rest} : {e}"), &mut lines);
            let scaled = step(format!("arith.mulf {minus_two}, {log} : {e}"), &mut lines);
            let radius = step(format!("math.sqrt {scaled} : {e}"), &mut lines);
            let angle = step(format!("arith.mulf {tau}, {u2} : {e}"), &mut lines);
            let cosine = step(format!("math.cos {angle} : {e}"), &mut lines);
            step(format!("arith.mulf {radius}, {cosine} : {e}"), &mut lines)
        } else {
            u1
        };
        for line in lines {
            let _ = writeln!(out, "{body}{line}");
        }
        let _ = writeln!(out, "{body}linalg.yield {value} : {e}");
        let _ = writeln!(out, "{indent}}}");
    }
}
