//! [`DynamicGenerator`]: random programs with dynamic structure.
//!
//! - **Trees** ([`DynamicGenerator::tree`]): cells over the nodes `n < N` of
//!   a complete `B`-ary tree in heap order (node `m`'s children `B m + 1 ..
//!   B m + B`), numbered forward or reversed (`n = N - 1 - m`, children then
//!   before their parents), whose children are read through data: their
//!   numbers computed in the cell's own definition from its position and
//!   the bound, or by a tensor of their own, or as an offset from the first
//!   child (`k + j`). The children's vectors are combined by a sum or by
//!   movement ops ([`Combine`]: concatenated along their axis, stacked as
//!   rows or set side by side, sliced, flipped, permuted) then a product,
//!   a reduction or an einsum. Cells as models have them: a sum, a gated cell
//!   (`sigmoid` gate mixing two children), a Tree-GRU-like update, and a
//!   TreeLSTM-like pair (`c` and `h`, `h` reading `c` at its own point and
//!   both read through data); leaves from the input (`tanh(x W)`); the
//!   root read through data by a tensor without a domain.
//! - **Stopping loops** ([`DynamicGenerator::stopping`]): an RNN over `t`
//!   with an integer counter, stopped where a statistic of its state (a
//!   sum, a maximum, an argmax compared with a token, the counter) first
//!   passes a threshold; after the loop, reductions of the whole range
//!   `h[0:T]`, a reversed copy `h[T - 1 - t]` and a last-step read, which
//!   all see the stop. One in two is ragged: over a batch `b` too (in
//!   either order), each `b` stopping on its own (the counter starts at
//!   `b`), read per `b` after the loop; in half of those each `b` starts
//!   from the last state of `b - 1` (read at its own length), so where `b`
//!   stops depends on where `b - 1` did.
//!
//! Every program is well-formed; inputs are random (`--seed`).

use super::*;

/// Declares `%name`, an input or a computed tensor over `domain`.
fn decl(out: &mut String, name: &str, domain: &str, ty: &str, input: bool) {
    let op = if input { "input" } else { "tensor" };
    let _ = writeln!(
        out,
        "  %{name} = \"temporal.{op}\"() {{sym_name = \"{name}\", domain = [{domain}], element = {ty}}} : () -> !temporal.rtensor"
    );
}

/// How a tree cell combines its children's vectors: a sum, or movement
/// ops over them (concatenations along the vector's axis, rows stacked or
/// set side by side, slices, flips, permutations) then a product, a
/// reduction or an einsum. Depth batching puts the batch's axis next to
/// the point's axis 0, where the concatenations of the first kinds are.
#[derive(Clone, Copy, Debug)]
enum Combine {
    Sum,
    ConcatProduct,
    ConcatSlice,
    StackMax,
    RowsProduct,
    PermutedSum,
    Einsum,
    FlipSlice,
}

impl Combine {
    const ALL: [Combine; 8] = [
        Combine::Sum,
        Combine::ConcatProduct,
        Combine::ConcatSlice,
        Combine::StackMax,
        Combine::RowsProduct,
        Combine::PermutedSum,
        Combine::Einsum,
        Combine::FlipSlice,
    ];
}

pub(crate) struct DynamicGenerator {
    rng: ChaCha8Rng,
    next: usize,
    body: String,
}

impl DynamicGenerator {
    fn new(seed: u64) -> Self {
        Self { rng: ChaCha8Rng::seed_from_u64(seed), next: 0, body: String::new() }
    }

    /// A fresh SSA name.
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%v{}", self.next)
    }

    /// Appends `%v = "temporal.OP"(operands) {attributes} : (types) -> result`.
    fn op(&mut self, op: &str, operands: &[(&str, &str)], attributes: &str, result: &str) -> String {
        let name = self.fresh();
        let names: Vec<&str> = operands.iter().map(|(n, _)| *n).collect();
        let types: Vec<&str> = operands.iter().map(|(_, t)| *t).collect();
        let attributes = if attributes.is_empty() { String::new() } else { format!(" {{{attributes}}}") };
        let _ = writeln!(
            self.body,
            "    {name} = \"temporal.{op}\"({}){attributes} : ({}) -> {result}",
            names.join(", "),
            types.join(", ")
        );
        name
    }

    fn constant(&mut self, value: &str, ty: &str) -> String {
        self.op("constant", &[], &format!("value = dense<{value}> : {ty}"), ty)
    }

    /// Ends the current body as a definition of `target` where `when` holds.
    fn define(&mut self, out: &mut String, target: &str, result: &str, ty: &str, header: &str, when: &str) {
        let body = std::mem::take(&mut self.body);
        let _ = writeln!(
            out,
            "  \"temporal.define\"(%{target}) ({{\n{body}    \"gpu.yield\"({result}) : ({ty}) -> ()\n  }}) {{when = affine_set<{header} : ({when})>}} : (!temporal.rtensor) -> ()"
        );
    }

    /// A random tree program (see the module's doc) over `n < N`.
    pub(crate) fn tree(seed: u64) -> String {
        let mut g = Self::new(seed);
        let width = g.rng.random_range(1..6i64);
        let arity = g.rng.random_range(1..4i64);
        let reversed = g.rng.random_bool(0.5);
        let cell = g.rng.random_range(0..4);
        let children_by = g.rng.random_range(0..3);
        let combine = Combine::ALL[g.rng.random_range(0..Combine::ALL.len())];
        let v = format!("tensor<{width}xf32>");
        let hdr = "(n)[N]";
        let mut out = String::from("module {\n  \"temporal.dim\"() {sym_name = \"n\", bound = \"N\"} : () -> ()\n");
        decl(&mut out, "x", "\"n\"", &v, true);
        decl(&mut out, "W", "", &format!("tensor<{width}x{width}xf32>"), true);
        decl(&mut out, "U", "", &format!("tensor<{width}x{width}xf32>"), true);
        // The weights that combine the children's vectors.
        decl(&mut out, "C", "", &format!("tensor<{}x{width}xf32>", arity * width), true);
        decl(&mut out, "E", "", &format!("tensor<{arity}x{width}xf32>"), true);
        decl(&mut out, "s", "\"n\"", &v, false);
        let lstm = cell == 3;
        if lstm {
            decl(&mut out, "c", "\"n\"", &v, false);
        }
        decl(&mut out, "root", "", &v, false);
        // The condition "internal" of node n (heap index m): all B children
        // exist, B m + B <= N - 1 (m = n, or N - 1 - n when reversed).
        let internal = if reversed {
            format!("N * {} + n * {arity} - 1 >= 0", 1 - arity)
        } else {
            format!("N - n * {arity} - {} >= 0", arity + 1)
        };
        // The children's numbers as tensors of their own.
        let i64t = "tensor<i64>";
        if children_by == 1 {
            for j in 0..arity {
                decl(&mut out, &format!("ch{j}"), "\"n\"", i64t, false);
                let number = g.child_number(j, arity, reversed);
                g.define(&mut out, &format!("ch{j}"), &number, i64t, hdr, "0 == 0");
            }
        }
        // Leaves: tanh(x W).
        let leaf_state = |g: &mut Self| -> String {
            let x = g.op("read", &[("%x", "!temporal.rtensor")], "index = affine_map<(n)[N] -> (n)>", &v);
            let w = g.op(
                "read",
                &[("%W", "!temporal.rtensor")],
                "index = affine_map<(n)[N] -> ()>",
                &format!("tensor<{width}x{width}xf32>"),
            );
            let p = g.op("matmul", &[(&x, &v), (&w, &format!("tensor<{width}x{width}xf32>"))], "", &v);
            g.op("tanh", &[(&p, &v)], "", &v)
        };
        // Children reads of tensor `of`.
        let children = |g: &mut Self, of: &str| -> Vec<String> {
            let mut values = Vec::new();
            let mut first = None;
            for j in 0..arity {
                let (k, offset) = match children_by {
                    0 => (g.child_number(j, arity, reversed), 0),
                    1 => (
                        g.op(
                            "read",
                            &[(&format!("%ch{j}"), "!temporal.rtensor")],
                            "index = affine_map<(n)[N] -> (n)>",
                            i64t,
                        ),
                        0,
                    ),
                    _ => {
                        let base = first.get_or_insert_with(|| g.child_number(0, arity, reversed)).clone();
                        (base, if reversed { -j } else { j })
                    }
                };
                let map = match offset {
                    0 => "(n, k)[N] -> (k)".to_string(),
                    o if o > 0 => format!("(n, k)[N] -> (k + {o})"),
                    o => format!("(n, k)[N] -> (k - {})", -o),
                };
                values.push(g.op(
                    "read_at",
                    &[(&format!("%{of}"), "!temporal.rtensor"), (&k, i64t)],
                    &format!("index = affine_map<{map}>"),
                    &v,
                ));
            }
            values
        };
        let u_ty = format!("tensor<{width}x{width}xf32>");
        let u = |g: &mut Self| g.op("read", &[("%U", "!temporal.rtensor")], "index = affine_map<(n)[N] -> ()>", &u_ty);
        // Internal nodes first (their condition), then the leaves.
        if lstm {
            // c: internal: sigmoid(h_0 U) * c_0 + sum of the others' c + x; leaves tanh(x W).
            let hs = children(&mut g, "s");
            let cs = children(&mut g, "c");
            let uu = u(&mut g);
            let hs0 = g.combine(combine, &hs, width);
            let gate_in = g.op("matmul", &[(&hs0, &v), (&uu, &u_ty)], "", &v);
            let gate = g.op("sigmoid", &[(&gate_in, &v)], "", &v);
            let mut acc = g.op("mul", &[(&gate, &v), (&cs[0], &v)], "", &v);
            for c in &cs[1..] {
                acc = g.op("add", &[(&acc, &v), (c, &v)], "", &v);
            }
            let x = g.op("read", &[("%x", "!temporal.rtensor")], "index = affine_map<(n)[N] -> (n)>", &v);
            let total = g.op("add", &[(&acc, &v), (&x, &v)], "", &v);
            g.define(&mut out, "c", &total, &v, hdr, &internal);
            let leaf = leaf_state(&mut g);
            g.define(&mut out, "c", &leaf, &v, hdr, "0 == 0");
            // h = tanh(c) at the node's own point.
            let c = g.op("read", &[("%c", "!temporal.rtensor")], "index = affine_map<(n)[N] -> (n)>", &v);
            let h = g.op("tanh", &[(&c, &v)], "", &v);
            g.define(&mut out, "s", &h, &v, hdr, "0 == 0");
        } else {
            let hs = children(&mut g, "s");
            let uu = u(&mut g);
            let sum = g.combine(combine, &hs, width);
            let value = match cell {
                0 => {
                    let half = g.constant("0.5", "tensor<f32>");
                    g.op("mul", &[(&sum, &v), (&half, "tensor<f32>")], "", &v)
                }
                1 => {
                    // A gate mixing the first child and the rest.
                    let gi = g.op("matmul", &[(&sum, &v), (&uu, &u_ty)], "", &v);
                    let gate = g.op("sigmoid", &[(&gi, &v)], "", &v);
                    let one = g.constant("1.0", "tensor<f32>");
                    let rest = g.op("sub", &[(&one, "tensor<f32>"), (&gate, &v)], "", &v);
                    let a = g.op("mul", &[(&gate, &v), (&hs[0], &v)], "", &v);
                    let last = hs.last().expect("a child").clone();
                    let b = g.op("mul", &[(&rest, &v), (&last, &v)], "", &v);
                    g.op("add", &[(&a, &v), (&b, &v)], "", &v)
                }
                _ => {
                    // GRU-like: z = sigmoid(x + sum U); h = tanh(sum U) * z + sum * (1 - z).
                    let x = g.op("read", &[("%x", "!temporal.rtensor")], "index = affine_map<(n)[N] -> (n)>", &v);
                    let su = g.op("matmul", &[(&sum, &v), (&uu, &u_ty)], "", &v);
                    let zi = g.op("add", &[(&su, &v), (&x, &v)], "", &v);
                    let z = g.op("sigmoid", &[(&zi, &v)], "", &v);
                    let cand = g.op("tanh", &[(&su, &v)], "", &v);
                    let a = g.op("mul", &[(&cand, &v), (&z, &v)], "", &v);
                    let one = g.constant("1.0", "tensor<f32>");
                    let rest = g.op("sub", &[(&one, "tensor<f32>"), (&z, &v)], "", &v);
                    let b = g.op("mul", &[(&sum, &v), (&rest, &v)], "", &v);
                    g.op("add", &[(&a, &v), (&b, &v)], "", &v)
                }
            };
            g.define(&mut out, "s", &value, &v, hdr, &internal);
            let leaf = leaf_state(&mut g);
            g.define(&mut out, "s", &leaf, &v, hdr, "0 == 0");
        }
        // The root (heap index 0), read through data from no domain.
        let number = if reversed {
            let n = g.op("bound", &[], "dim = \"n\"", i64t);
            let one = g.constant("1", i64t);
            g.op("sub", &[(&n, i64t), (&one, i64t)], "", i64t)
        } else {
            g.constant("0", i64t)
        };
        let r =
            g.op("read_at", &[("%s", "!temporal.rtensor"), (&number, i64t)], "index = affine_map<(k)[N] -> (k)>", &v);
        g.define(&mut out, "root", &r, &v, "()[N]", "0 == 0");
        let _ = writeln!(out, "  \"temporal.output\"(%s) : (!temporal.rtensor) -> ()");
        let _ = writeln!(out, "  \"temporal.output\"(%root) : (!temporal.rtensor) -> ()");
        out.push_str("}\n");
        out
    }

    /// The children's vectors (`tensor<{width}xf32>` each, read through
    /// data) combined into one such vector as `how` says.
    fn combine(&mut self, how: Combine, children: &[String], width: i64) -> String {
        let a = children.len() as i64;
        let v = format!("tensor<{width}xf32>");
        let row = format!("tensor<1x{width}xf32>");
        let weight = |g: &mut Self, name: &str, ty: &str| {
            g.op("read", &[(name, "!temporal.rtensor")], "index = affine_map<(n)[N] -> ()>", ty)
        };
        // Concatenates `values` (each of `shape`) along `axis`, pairwise.
        let concat = |g: &mut Self, values: &[String], shape: &[i64], axis: usize| -> (String, Vec<i64>) {
            let ty =
                |s: &[i64]| format!("tensor<{}xf32>", s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x"));
            let mut acc = values[0].clone();
            let mut acc_shape = shape.to_vec();
            for x in &values[1..] {
                let mut next = acc_shape.clone();
                next[axis] += shape[axis];
                acc = g.op(
                    "concat",
                    &[(&acc, &ty(&acc_shape)), (x, &ty(shape))],
                    &format!("axis = {axis} : i64"),
                    &ty(&next),
                );
                acc_shape = next;
            }
            (acc, acc_shape)
        };
        // The children as `[1, width]` rows.
        let rows =
            |g: &mut Self| -> Vec<String> { children.iter().map(|c| g.op("reshape", &[(c, &v)], "", &row)).collect() };
        let flat = format!("tensor<{}xf32>", a * width);
        let table = format!("tensor<{a}x{width}xf32>");
        match how {
            Combine::Sum => {
                let mut sum = children[0].clone();
                for h in &children[1..] {
                    sum = self.op("add", &[(&sum, &v), (h, &v)], "", &v);
                }
                sum
            }
            Combine::ConcatProduct => {
                let (all, _) = concat(self, children, &[width], 0);
                let c = weight(self, "%C", &format!("tensor<{}x{width}xf32>", a * width));
                self.op("matmul", &[(&all, &flat), (&c, &format!("tensor<{}x{width}xf32>", a * width))], "", &v)
            }
            Combine::ConcatSlice => {
                let (all, _) = concat(self, children, &[width], 0);
                let at = self.rng.random_range(0..=(a - 1) * width);
                let part = self.op("slice", &[(&all, &flat)], &format!("offsets = [{at}]"), &v);
                // Every child counts: the slice plus the sum of the whole.
                let total = self.op("reduce_sum", &[(&all, &flat)], "axis = 0 : i64", "tensor<f32>");
                self.op("add", &[(&part, &v), (&total, "tensor<f32>")], "", &v)
            }
            Combine::StackMax => {
                let r = rows(self);
                let (all, _) = concat(self, &r, &[1, width], 0);
                self.op("reduce_max", &[(&all, &table)], "axis = 0 : i64", &v)
            }
            Combine::RowsProduct => {
                let r = rows(self);
                let (all, _) = concat(self, &r, &[1, width], 1);
                let wide = format!("tensor<1x{}xf32>", a * width);
                let c_ty = format!("tensor<{}x{width}xf32>", a * width);
                let c = weight(self, "%C", &c_ty);
                let p = self.op("matmul", &[(&all, &wide), (&c, &c_ty)], "", &row);
                self.op("reshape", &[(&p, &row)], "", &v)
            }
            Combine::PermutedSum => {
                let r = rows(self);
                let (all, _) = concat(self, &r, &[1, width], 0);
                let t =
                    self.op("permute", &[(&all, &table)], "permutation = [1, 0]", &format!("tensor<{width}x{a}xf32>"));
                self.op("reduce_sum", &[(&t, &format!("tensor<{width}x{a}xf32>"))], "axis = 1 : i64", &v)
            }
            Combine::Einsum => {
                let r = rows(self);
                let (all, _) = concat(self, &r, &[1, width], 0);
                let e = weight(self, "%E", &table);
                self.op("einsum", &[(&all, &table), (&e, &table)], "spec = \"kw,kw->w\"", &v)
            }
            Combine::FlipSlice => {
                let (all, _) = concat(self, children, &[width], 0);
                let f = self.op("flip", &[(&all, &flat)], "axis = 0 : i64", &flat);
                let part = self.op("slice", &[(&f, &flat)], "offsets = [0]", &v);
                let total = self.op("reduce_max", &[(&f, &flat)], "axis = 0 : i64", "tensor<f32>");
                self.op("mul", &[(&part, &v), (&total, "tensor<f32>")], "", &v)
            }
        }
    }

    /// The number of child `j` of the reader node `n` (an `i64` value):
    /// heap index `B m + 1 + j` of the node's heap index `m`, numbered back
    /// when `reversed`.
    fn child_number(&mut self, j: i64, arity: i64, reversed: bool) -> String {
        let i64t = "tensor<i64>";
        let p = self.op("position", &[], "dim = \"n\"", i64t);
        let heap = if reversed {
            let n = self.op("bound", &[], "dim = \"n\"", i64t);
            let one = self.constant("1", i64t);
            let last = self.op("sub", &[(&n, i64t), (&one, i64t)], "", i64t);
            self.op("sub", &[(&last, i64t), (&p, i64t)], "", i64t)
        } else {
            p
        };
        let b = self.constant(&arity.to_string(), i64t);
        let scaled = self.op("mul", &[(&heap, i64t), (&b, i64t)], "", i64t);
        let offset = self.constant(&(1 + j).to_string(), i64t);
        let child = self.op("add", &[(&scaled, i64t), (&offset, i64t)], "", i64t);
        if !reversed {
            return child;
        }
        let n = self.op("bound", &[], "dim = \"n\"", i64t);
        let one = self.constant("1", i64t);
        let last = self.op("sub", &[(&n, i64t), (&one, i64t)], "", i64t);
        self.op("sub", &[(&last, i64t), (&child, i64t)], "", i64t)
    }

    /// A random stopping loop (see the module's doc) over `t < T`, ragged
    /// (over a batch `b < B` as well, in either order) one time in two.
    pub(crate) fn stopping(seed: u64) -> String {
        let mut g = Self::new(seed);
        let width = g.rng.random_range(1..6i64);
        let statistic = g.rng.random_range(0..4);
        let ragged = g.rng.random_bool(0.5);
        let t_first = g.rng.random_bool(0.5);
        let carry = ragged && g.rng.random_bool(0.5);
        let v = format!("tensor<{width}xf32>");
        let w_ty = format!("tensor<{width}x{width}xf32>");
        let i64t = "tensor<i64>";
        let rt = "!temporal.rtensor";
        // Domains, headers and coordinates with or without the batch.
        let over_t = match (ragged, t_first) {
            (false, _) => "\"t\"",
            (true, true) => "\"t\", \"b\"",
            (true, false) => "\"b\", \"t\"",
        };
        let hdr = match (ragged, t_first) {
            (false, _) => "(t)[T]".to_string(),
            (true, true) => "(t, b)[B, T]".to_string(),
            (true, false) => "(b, t)[B, T]".to_string(),
        };
        let after_hdr = if ragged { "(b)[B, T]".to_string() } else { "()[T]".to_string() };
        let at = |x: &str| match (ragged, t_first) {
            (false, _) => x.to_string(),
            (true, true) => format!("{x}, b"),
            (true, false) => format!("b, {x}"),
        };
        let index = |x: &str| format!("index = affine_map<{hdr} -> ({})>", at(x));
        let mut out = String::from("module {\n");
        if ragged {
            out.push_str("  \"temporal.dim\"() {sym_name = \"b\", bound = \"B\"} : () -> ()\n");
        }
        out.push_str("  \"temporal.dim\"() {sym_name = \"t\", bound = \"T\"} : () -> ()\n");
        let over_b = if ragged { "\"b\"" } else { "" };
        decl(&mut out, "x", over_t, &v, true);
        decl(&mut out, "W", "", &w_ty, true);
        decl(&mut out, "h", over_t, &v, false);
        decl(&mut out, "count", over_t, i64t, false);
        decl(&mut out, "done", over_t, "tensor<i1>", false);
        decl(&mut out, "total", over_b, "tensor<f32>", false);
        decl(&mut out, "back", over_t, &v, false);
        decl(&mut out, "last", over_b, &v, false);
        // h[t] = tanh(h[t-1] W + x[t]), h[0] = tanh(x[0]).
        let x = g.op("read", &[("%x", rt)], &index("t"), &v);
        let h0 = g.op("tanh", &[(&x, &v)], "", &v);
        if carry {
            // Each b starts from the previous b's last state, read at its
            // own length: where b stops depends on where b - 1 stopped.
            g.define(&mut out, "h", &h0, &v, &hdr, "t == 0, b == 0");
            let x = g.op("read", &[("%x", rt)], &index("t"), &v);
            let before = g.op("read", &[("%last", rt)], &format!("index = affine_map<{hdr} -> (b - 1)>"), &v);
            let z = g.op("add", &[(&x, &v), (&before, &v)], "", &v);
            let h0 = g.op("tanh", &[(&z, &v)], "", &v);
            g.define(&mut out, "h", &h0, &v, &hdr, "t == 0");
        } else {
            g.define(&mut out, "h", &h0, &v, &hdr, "t == 0");
        }
        let p = g.op("read", &[("%h", rt)], &index("t - 1"), &v);
        let w = g.op("read", &[("%W", rt)], &format!("index = affine_map<{hdr} -> ()>"), &w_ty);
        let pw = g.op("matmul", &[(&p, &v), (&w, &w_ty)], "", &v);
        let x = g.op("read", &[("%x", rt)], &index("t"), &v);
        let z = g.op("add", &[(&pw, &v), (&x, &v)], "", &v);
        let h = g.op("tanh", &[(&z, &v)], "", &v);
        g.define(&mut out, "h", &h, &v, &hdr, "0 == 0");
        // count[t] = count[t-1] + 1, from 0 (from b in a ragged batch, so
        // that each b stops at its own step).
        let start = if ragged { g.op("position", &[], "dim = \"b\"", i64t) } else { g.constant("0", i64t) };
        g.define(&mut out, "count", &start, i64t, &hdr, "t == 0");
        let p = g.op("read", &[("%count", rt)], &index("t - 1"), i64t);
        let one = g.constant("1", i64t);
        let c = g.op("add", &[(&p, i64t), (&one, i64t)], "", i64t);
        g.define(&mut out, "count", &c, i64t, &hdr, "0 == 0");
        // done[t]: a statistic of h[t] (or the counter) past a threshold.
        let hv = g.op("read", &[("%h", rt)], &index("t"), &v);
        let threshold = g.rng.random_range(-0.5..0.9f64);
        let done = match statistic {
            0 => {
                let s = g.op("reduce_sum", &[(&hv, &v)], "axis = 0 : i64", "tensor<f32>");
                let c = g.constant(&format!("{threshold:.3}"), "tensor<f32>");
                g.op("cmp", &[(&s, "tensor<f32>"), (&c, "tensor<f32>")], "predicate = \"gt\"", "tensor<i1>")
            }
            1 => {
                let s = g.op("reduce_max", &[(&hv, &v)], "axis = 0 : i64", "tensor<f32>");
                let c = g.constant(&format!("{threshold:.3}"), "tensor<f32>");
                g.op("cmp", &[(&s, "tensor<f32>"), (&c, "tensor<f32>")], "predicate = \"gt\"", "tensor<i1>")
            }
            2 => {
                let a = g.op("argmax", &[(&hv, &v)], "axis = 0 : i64", i64t);
                let token = g.rng.random_range(0..width).to_string();
                let token = g.constant(&token, i64t);
                g.op("cmp", &[(&a, i64t), (&token, i64t)], "predicate = \"eq\"", "tensor<i1>")
            }
            _ => {
                let k = g.op("read", &[("%count", rt)], &index("t"), i64t);
                let c = g.rng.random_range(0..8).to_string();
                let c = g.constant(&c, i64t);
                g.op("cmp", &[(&k, i64t), (&c, i64t)], "predicate = \"ge\"", "tensor<i1>")
            }
        };
        g.define(&mut out, "done", &done, "tensor<i1>", &hdr, "0 == 0");
        // After the loop: the sum over h[0:T], h reversed, and the last step.
        let (lower, upper) = match (ragged, t_first) {
            (false, _) => ("affine_map<()[T] -> (0)>".to_string(), "affine_map<()[T] -> (T)>".to_string()),
            (true, true) => (
                format!("affine_map<{after_hdr} -> (0)>, affine_map<{after_hdr} -> (b)>"),
                format!("affine_map<{after_hdr} -> (T)>, affine_map<{after_hdr} -> ()>"),
            ),
            (true, false) => (
                format!("affine_map<{after_hdr} -> (b)>, affine_map<{after_hdr} -> (0)>"),
                format!("affine_map<{after_hdr} -> ()>, affine_map<{after_hdr} -> (T)>"),
            ),
        };
        let all = g.op(
            "read_range",
            &[("%h", rt)],
            &format!("caps = [], lower = [{lower}], upper = [{upper}]"),
            &format!("tensor<?x{width}xf32>"),
        );
        let s = g.op("reduce_sum", &[(&all, &format!("tensor<?x{width}xf32>"))], "axis = 0 : i64", &v);
        let s = g.op("reduce_sum", &[(&s, &v)], "axis = 0 : i64", "tensor<f32>");
        g.define(&mut out, "total", &s, "tensor<f32>", &after_hdr, "0 == 0");
        let r = g.op("read", &[("%h", rt)], &index("T - 1 - t"), &v);
        g.define(&mut out, "back", &r, &v, &hdr, "0 == 0");
        let last = match (ragged, t_first) {
            (false, _) => "T - 1",
            (true, true) => "T - 1, b",
            (true, false) => "b, T - 1",
        };
        let l = g.op("read", &[("%h", rt)], &format!("index = affine_map<{after_hdr} -> ({last})>"), &v);
        g.define(&mut out, "last", &l, &v, &after_hdr, "0 == 0");
        for name in ["h", "count", "total", "back", "last"] {
            let _ = writeln!(out, "  \"temporal.output\"(%{name}) : (!temporal.rtensor) -> ()");
        }
        let _ = writeln!(out, "  \"temporal.stop\"(%done) {{dim = \"t\"}} : (!temporal.rtensor) -> ()");
        out.push_str("}\n");
        out
    }
}
