//! [`GeneralGenerator`]: random programs over `t < T` and `b < B`.

use super::*;

/// A coordinate of a generated read, for one source dimension.
#[derive(Clone, Copy, Debug)]
enum Coordinate {
    /// The reader's variable of the same dimension plus a shift.
    Shift(i64),
    /// `bound - 1 - v`.
    Reverse,
    /// A constant.
    Constant(i64),
    /// `v floordiv 2`.
    Half,
    /// `v mod 2`.
    Parity,
    /// `min(max(v + k, 0), bound - 1)`: a shift clamped into the extent
    /// (read through `temporal.read_range` with a cap).
    Clamped(i64),
}

/// A range over one source dimension of a generated range read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RangeForm {
    /// `0 : v + 1`
    Prefix,
    /// `v : bound`
    Suffix,
    /// `max(0, v - 1) : v + 1`
    Window,
    /// `0 : bound`
    All,
    /// `0 : v` (the strict past)
    Before,
    /// `v + 1 : bound` (the strict future)
    After,
}

impl RangeForm {
    fn interval(self, var: Option<i64>, bound: i64) -> (i64, i64) {
        match (self, var) {
            (RangeForm::Prefix, Some(v)) => (0, v + 1),
            (RangeForm::Suffix, Some(v)) => (v, bound),
            (RangeForm::Window, Some(v)) => ((v - 1).max(0), v + 1),
            (RangeForm::Before, Some(v)) => (0, v),
            (RangeForm::After, Some(v)) => (v + 1, bound),
            _ => (0, bound),
        }
    }
    /// Lower and upper map results.
    fn text(self, var: Option<&str>, bound: &str) -> (String, String) {
        match (self, var) {
            (RangeForm::Prefix, Some(v)) => ("0".into(), format!("{v} + 1")),
            (RangeForm::Suffix, Some(v)) => (v.into(), bound.into()),
            (RangeForm::Window, Some(v)) => (format!("0, {v} - 1"), format!("{v} + 1")),
            (RangeForm::Before, Some(v)) => ("0".into(), v.into()),
            (RangeForm::After, Some(v)) => (format!("{v} + 1"), bound.into()),
            _ => ("0".into(), bound.into()),
        }
    }
}

/// A condition on one dimension of the reader.
#[derive(Clone, Copy, Debug)]
enum DimCondition {
    Equal(i64),
    AtLeast(i64),
    AtMost(i64),
    /// `bound - 1 - v >= c`: at least `c` points after this one.
    BeforeEnd(i64),
    Even,
    Always,
}

/// Dimensions of generated general programs: `t < T` and `b < B`.
const DIMS: [(&str, &str); 2] = [("t", "T"), ("b", "B")];

pub(crate) struct GeneralGenerator {
    inner: Generator,
    /// Points of different `b` never depend on each other (what
    /// temporal-vectorize batches): reads of tensors over `b` from tensors
    /// over `b` are at the reader's own `b`, no condition mentions `b`,
    /// tensors without `b` read no computed tensor over `b`, and no seeded
    /// random values are made.
    independent_b: bool,
}

impl GeneralGenerator {
    fn coordinate_value(c: Coordinate, var: Option<i64>, bound: i64) -> i64 {
        match (c, var) {
            (Coordinate::Shift(k), Some(v)) => v + k,
            (Coordinate::Reverse, Some(v)) => bound - 1 - v,
            (Coordinate::Reverse, None) => bound - 1,
            (Coordinate::Constant(c), _) => c,
            (Coordinate::Half, Some(v)) => v.div_euclid(2),
            (Coordinate::Parity, Some(v)) => v.rem_euclid(2),
            (Coordinate::Clamped(k), Some(v)) => (v + k).max(0).min(bound - 1),
            _ => unreachable!("only constants and reverse without a variable"),
        }
    }

    fn coordinate_text(c: Coordinate, var: Option<&str>, bound: &str) -> String {
        match (c, var) {
            (Coordinate::Shift(0), Some(v)) => v.to_string(),
            (Coordinate::Shift(k), Some(v)) => format!("{v} + {k}"),
            (Coordinate::Reverse, Some(v)) => format!("{bound} - 1 - {v}"),
            (Coordinate::Reverse, None) => format!("{bound} - 1"),
            (Coordinate::Constant(c), _) => c.to_string(),
            (Coordinate::Half, Some(v)) => format!("{v} floordiv 2"),
            (Coordinate::Parity, Some(v)) => format!("{v} mod 2"),
            // The lower results; the cap is `bound - 1`.
            (Coordinate::Clamped(k), Some(v)) => format!("{v} + {k}, 0"),
            _ => unreachable!("only constants and reverse without a variable"),
        }
    }

    fn condition_holds(c: DimCondition, v: i64, bound: i64) -> bool {
        match c {
            DimCondition::Equal(k) => v == k,
            DimCondition::AtLeast(k) => v >= k,
            DimCondition::AtMost(k) => v <= k,
            DimCondition::BeforeEnd(k) => bound - 1 - v >= k,
            DimCondition::Even => v % 2 == 0,
            DimCondition::Always => true,
        }
    }

    fn condition_text(c: DimCondition, v: &str, bound: &str) -> String {
        match c {
            DimCondition::Equal(k) => format!("{v} - {k} == 0"),
            DimCondition::AtLeast(k) => format!("{v} - {k} >= 0"),
            DimCondition::AtMost(k) => format!("{k} - {v} >= 0"),
            DimCondition::BeforeEnd(k) => format!("{bound} - 1 - {v} - {k} >= 0"),
            DimCondition::Even => format!("{v} mod 2 == 0"),
            DimCondition::Always => "0 == 0".into(),
        }
    }

    /// A program over `t` and `b`: tensors over `[t]`, `[b, t]` or nothing,
    /// reads of inputs and earlier tensors with any coordinate form, self
    /// reads shifted in a direction fixed per tensor and dimension. Reads are
    /// kept when a brute-force check over small bounds finds them in bounds
    /// wherever their branch is chosen (and sometimes anyway).
    pub(crate) fn program(seed: u64) -> String {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let element = *["f32", "f64", "i32", "i64"].choose(&mut rng).expect("non-empty");
        let shape: &[i64] = [&[][..], &[2], &[2, 2]].choose(&mut rng).expect("non-empty");
        let dims_text: String = shape.iter().map(|d| format!("{d}x")).collect();
        let point = format!("tensor<{dims_text}{element}>");
        let mut rng = rng;
        let independent_b = rng.random_bool(0.3);
        let mut g = GeneralGenerator {
            inner: Generator { rng, element, point, square: None, next: 0, shape: shape.to_vec() },
            independent_b,
        };
        // Domains: indices into DIMS, in domain order.
        let domains: [&[usize]; 3] = [&[0], &[1, 0], &[]];
        let inputs: Vec<(String, Vec<usize>)> = vec![("x0".into(), vec![0]), ("x1".into(), vec![1, 0])];
        let count = g.inner.rng.random_range(1..=4usize);
        let tensors: Vec<(String, Vec<usize>)> = (0..count)
            .map(|i| (format!("y{i}"), domains.choose(&mut g.inner.rng).expect("non-empty").to_vec()))
            .collect();
        let mut text = String::new();
        for (name, bound) in DIMS {
            let _ = writeln!(text, "\"temporal.dim\"() {{sym_name = \"{name}\", bound = \"{bound}\"}} : () -> ()");
        }
        let domain_text = |d: &[usize]| d.iter().map(|&k| format!("\"{}\"", DIMS[k].0)).collect::<Vec<_>>().join(", ");
        for (name, domain) in &inputs {
            let _ = writeln!(
                text,
                "%{name} = \"temporal.input\"() {{sym_name = \"{name}\", domain = [{}], element = {}}} : () -> !temporal.rtensor",
                domain_text(domain),
                g.inner.point
            );
        }
        for (name, domain) in &tensors {
            let _ = writeln!(
                text,
                "%{name} = \"temporal.tensor\"() {{sym_name = \"{name}\", domain = [{}], element = {}}} : () -> !temporal.rtensor",
                domain_text(domain),
                g.inner.point
            );
        }
        let samples: Vec<[i64; 2]> = [0, 1, 2, 3, 5, 8].iter().flat_map(|&t| [1, 2, 3].map(move |b| [t, b])).collect();
        // Definitions of each tensor, to copy for a duplicate.
        let mut definitions: Vec<String> = Vec::new();
        for (me, (name, domain)) in tensors.iter().enumerate() {
            let start = text.len();
            // A duplicate of an earlier tensor of the same domain (what
            // temporal-dedup merges): its definitions with the name changed.
            if let Some(original) = (0..me).find(|&o| tensors[o].1 == *domain && g.inner.rng.random_bool(0.3)) {
                let from = format!("%{})", tensors[original].0);
                let to = format!("%{name})");
                let copy = definitions[original].replace(&from, &to);
                text += &copy;
                definitions.push(copy);
                continue;
            }
            // Self reads go to the past along each dimension in this direction.
            let direction: Vec<i64> =
                domain.iter().map(|_| if g.inner.rng.random_bool(0.7) { -1 } else { 1 }).collect();
            let branches = g.inner.rng.random_range(1..=3usize);
            let mut conditions: Vec<Vec<DimCondition>> = Vec::new();
            for b in 0..branches {
                let last = b + 1 == branches;
                let condition: Vec<DimCondition> = domain
                    .iter()
                    .map(|&dim| {
                        if (last && g.inner.rng.random_bool(0.85)) || (g.independent_b && dim == 1) {
                            return DimCondition::Always;
                        }
                        match g.inner.rng.random_range(0..6) {
                            0 => DimCondition::Equal(g.inner.rng.random_range(0..3)),
                            1 => DimCondition::AtLeast(g.inner.rng.random_range(1..3)),
                            2 => DimCondition::AtMost(g.inner.rng.random_range(0..3)),
                            3 => DimCondition::BeforeEnd(g.inner.rng.random_range(1..3)),
                            4 => DimCondition::Even,
                            _ => DimCondition::Always,
                        }
                    })
                    .collect();
                conditions.push(condition);
            }
            // Points (per sample of bounds) where each branch is the chosen one.
            let chosen = |b: usize, bounds: &[i64; 2]| -> Vec<Vec<i64>> {
                let extents: Vec<i64> = domain.iter().map(|&d| bounds[d]).collect();
                points_of(&extents)
                    .into_iter()
                    .filter(|p| {
                        let holds = |c: &Vec<DimCondition>| {
                            c.iter().zip(domain).zip(p).all(|((&c, &d), &v)| Self::condition_holds(c, v, bounds[d]))
                        };
                        holds(&conditions[b]) && conditions[..b].iter().all(|c| !holds(c))
                    })
                    .collect()
            };
            for b in 0..branches {
                let mut body = String::new();
                let depth = g.inner.rng.random_range(0..=3);
                let points: Vec<([i64; 2], Vec<Vec<i64>>)> = samples.iter().map(|s| (*s, chosen(b, s))).collect();
                let result = g.expression(depth, me, &tensors, &inputs, domain, &direction, &points, &mut body);
                let header = format!("({})[T, B]", domain.iter().map(|&d| DIMS[d].0).collect::<Vec<_>>().join(", "));
                let condition: Vec<String> = conditions[b]
                    .iter()
                    .zip(domain)
                    .filter(|(c, _)| !matches!(c, DimCondition::Always))
                    .map(|(&c, &d)| Self::condition_text(c, DIMS[d].0, DIMS[d].1))
                    .collect();
                let condition = if condition.is_empty() { "0 == 0".to_string() } else { condition.join(", ") };
                let _ = writeln!(
                    text,
                    "\"temporal.define\"(%{name}) ({{\n{body}  \"gpu.yield\"({result}) : ({}) -> ()\n}}) {{when = affine_set<{header} : ({condition})>}} : (!temporal.rtensor) -> ()",
                    g.inner.point
                );
            }
            definitions.push(text[start..].to_string());
        }
        let mut outputs: Vec<usize> = (0..count).filter(|_| g.inner.rng.random_bool(0.6)).collect();
        if outputs.is_empty() {
            outputs.push(count - 1);
        }
        for o in outputs {
            let _ = writeln!(text, "\"temporal.output\"(%{}) : (!temporal.rtensor) -> ()", tensors[o].0);
        }
        text
    }

    #[allow(clippy::too_many_arguments)]
    fn expression(
        &mut self,
        depth: usize,
        me: usize,
        tensors: &[(String, Vec<usize>)],
        inputs: &[(String, Vec<usize>)],
        domain: &[usize],
        direction: &[i64],
        points: &[([i64; 2], Vec<Vec<i64>>)],
        body: &mut String,
    ) -> String {
        let independent = self.independent_b;
        // Reads of b by a reader over b stay at its own b.
        let own_b = independent && domain.contains(&1);
        let g = &mut self.inner;
        if depth == 0 || g.rng.random_bool(0.3) {
            if g.is_float() && !independent && g.rng.random_bool(0.08) {
                // Seeded random values: a pure function of seed, point and position.
                let v = g.fresh();
                let seed = g.rng.random_range(-5..5i64);
                let distribution = if g.rng.random_bool(0.5) { "uniform" } else { "normal" };
                let _ = writeln!(
                    body,
                    "  {v} = \"temporal.random\"() {{seed = {seed} : i64, distribution = \"{distribution}\"}} : () -> {}",
                    g.point
                );
                return v;
            }
            if !domain.is_empty() && g.rng.random_bool(0.05) {
                // A position or bound as a value (a rotary angle's step, a
                // 1/T): scaled by a constant of the point's type.
                let scalar = format!("tensor<{}>", g.element);
                let (op, dim) = match g.rng.random_bool(0.7) {
                    true => ("position", DIMS[*domain.choose(&mut g.rng).expect("non-empty")].0),
                    false => ("bound", DIMS[g.rng.random_range(0..DIMS.len())].0),
                };
                let value = g.fresh();
                let _ = writeln!(body, "  {value} = \"temporal.{op}\"() {{dim = \"{dim}\"}} : () -> {scalar}");
                let scale = g.constant(body);
                let v = g.fresh();
                let ty = &g.point;
                let _ = writeln!(body, "  {v} = \"temporal.mul\"({scale}, {value}) : ({ty}, {scalar}) -> {ty}");
                return v;
            }
            for _attempt in 0..8 {
                let pick = g.rng.random_range(0..3);
                let (source, source_domain, own) = match pick {
                    0 => {
                        let (n, d) = inputs.choose(&mut g.rng).expect("non-empty");
                        (n.clone(), d.clone(), false)
                    }
                    1 if me > 0 => {
                        let j = g.rng.random_range(0..me);
                        if independent && !domain.contains(&1) && tensors[j].1.contains(&1) {
                            continue;
                        }
                        (tensors[j].0.clone(), tensors[j].1.clone(), false)
                    }
                    2 if !domain.is_empty() => (tensors[me].0.clone(), tensors[me].1.clone(), true),
                    _ => break,
                };
                // Sometimes a reduction over a range of one source dimension;
                // of the tensor itself only over its strict past or future
                // (in its direction), so that the cycle stays schedulable.
                let ranged = (!source_domain.is_empty() && g.rng.random_bool(if own { 0.2 } else { 0.3 }))
                    .then(|| g.rng.random_range(0..source_domain.len()))
                    .filter(|&k| !(own_b && source_domain[k] == 1));
                let form = match ranged {
                    Some(k) if own => {
                        let p = domain.iter().position(|x| *x == source_domain[k]).expect("own domain");
                        if direction[p] < 0 { RangeForm::Before } else { RangeForm::After }
                    }
                    _ => *[RangeForm::Prefix, RangeForm::Suffix, RangeForm::Window, RangeForm::All]
                        .choose(&mut g.rng)
                        .expect("non-empty"),
                };
                let coordinates: Vec<Coordinate> = source_domain
                    .iter()
                    .map(|d| {
                        let position = domain.iter().position(|x| x == d);
                        if own_b && *d == 1 {
                            return Coordinate::Shift(0);
                        }
                        if own {
                            let p = position.expect("own domain");
                            let k = g.rng.random_range(0..=2i64);
                            return Coordinate::Shift(direction[p] * k);
                        }
                        match (position, g.rng.random_range(0..7)) {
                            (None, 0..3) => Coordinate::Constant(g.rng.random_range(0..2)),
                            (None, _) => Coordinate::Reverse,
                            (Some(_), 0 | 1) => Coordinate::Shift(g.rng.random_range(-2..=2)),
                            (Some(_), 2) => Coordinate::Reverse,
                            (Some(_), 3) => Coordinate::Constant(g.rng.random_range(0..2)),
                            (Some(_), 4) => Coordinate::Half,
                            (Some(_), 5) => Coordinate::Parity,
                            (Some(_), _) => Coordinate::Clamped(g.rng.random_range(-3..=3)),
                        }
                    })
                    .collect();
                // Often a prefix or suffix reduction at the reader's own
                // coordinates elsewhere: what temporal-lift-recurrences lifts.
                let mut coordinates = coordinates;
                if !own
                    && matches!(form, RangeForm::Prefix | RangeForm::Suffix | RangeForm::Window)
                    && source_domain.iter().all(|d| domain.contains(d))
                    && g.rng.random_bool(0.5)
                {
                    coordinates = source_domain.iter().map(|_| Coordinate::Shift(0)).collect();
                }
                // Or a whole range of a dimension the reader lacks, the others
                // at its own coordinates: what lifting incrementalizes.
                let whole_elsewhere = |k: usize| {
                    !domain.contains(&source_domain[k])
                        && source_domain.iter().enumerate().all(|(j, d)| j == k || domain.contains(d))
                };
                if !own && form == RangeForm::All && ranged.is_some_and(whole_elsewhere) && g.rng.random_bool(0.5) {
                    // (The ranged position's coordinate is not used.)
                    coordinates = (0..source_domain.len())
                        .map(|j| if Some(j) == ranged { Coordinate::Constant(0) } else { Coordinate::Shift(0) })
                        .collect();
                }
                if own && ranged.is_none() && coordinates.iter().all(|c| matches!(c, Coordinate::Shift(0))) {
                    continue;
                }
                let in_bounds = points.iter().all(|(bounds, chosen)| {
                    chosen.iter().all(|p| {
                        source_domain.iter().zip(&coordinates).enumerate().all(|(k, (&d, &c))| {
                            let var = domain.iter().position(|x| *x == d).map(|k| p[k]);
                            if ranged == Some(k) {
                                let (lo, hi) = form.interval(var, bounds[d]);
                                return hi <= lo || (lo >= 0 && hi <= bounds[d]);
                            }
                            let v = Self::coordinate_value(c, var, bounds[d]);
                            (0..bounds[d]).contains(&v)
                        })
                    })
                });
                if !in_bounds && !g.rng.random_bool(0.05) {
                    continue;
                }
                let results: Vec<String> = source_domain
                    .iter()
                    .zip(&coordinates)
                    .map(|(&d, &c)| {
                        let var = domain.contains(&d).then_some(DIMS[d].0);
                        Self::coordinate_text(c, var, DIMS[d].1)
                    })
                    .collect();
                let header = format!("({})[T, B]", domain.iter().map(|&d| DIMS[d].0).collect::<Vec<_>>().join(", "));
                let clamped = coordinates.iter().any(|c| matches!(c, Coordinate::Clamped(_)));
                if ranged.is_some() || clamped {
                    let mut lower = Vec::new();
                    let mut upper = Vec::new();
                    let mut caps = Vec::new();
                    for (j, ((&d, text), c)) in source_domain.iter().zip(&results).zip(&coordinates).enumerate() {
                        if ranged == Some(j) {
                            let (lo, hi) = form.text(domain.contains(&d).then_some(DIMS[d].0), DIMS[d].1);
                            lower.push(format!("affine_map<{header} -> ({lo})>"));
                            upper.push(format!("affine_map<{header} -> ({hi})>"));
                            caps.push(format!("affine_map<{header} -> ()>"));
                        } else {
                            lower.push(format!("affine_map<{header} -> ({text})>"));
                            upper.push(format!("affine_map<{header} -> ()>"));
                            let cap = if matches!(c, Coordinate::Clamped(_)) {
                                format!("{} - 1", DIMS[d].1)
                            } else {
                                String::new()
                            };
                            caps.push(format!("affine_map<{header} -> ({cap})>"));
                        }
                    }
                    let range = g.fresh();
                    let range_type =
                        if ranged.is_some() { g.point.replacen("tensor<", "tensor<?x", 1) } else { g.point.clone() };
                    let _ = writeln!(
                        body,
                        "  {range} = \"temporal.read_range\"(%{source}) {{caps = [{}], lower = [{}], upper = [{}]}} : (!temporal.rtensor) -> {range_type}",
                        caps.join(", "),
                        lower.join(", "),
                        upper.join(", ")
                    );
                    if ranged.is_none() {
                        return range;
                    }
                    let ops: &[&str] = if g.is_float() {
                        &[
                            "reduce_sum",
                            "reduce_max",
                            "reduce_mean",
                            "argmax",
                            "cumsum",
                            "reshaped",
                            "attention",
                            // (Twice: attention keeps its share among the forms.)
                            "attention",
                            "mapped",
                            "contracted",
                        ]
                    } else {
                        &["reduce_sum", "reduce_max", "argmax", "cumsum", "reshaped", "mapped", "contracted"]
                    };
                    let mut op = *ops.choose(&mut g.rng).expect("non-empty");
                    if op == "attention" && g.shape.is_empty() {
                        op = "reduce_max";
                    }
                    let v = g.fresh();
                    match op {
                        "reshaped" => {
                            // Reshape and expand of the range's dynamic
                            // length: [n, S] -> [n, S, 1] -> [n, S, 3], summed
                            // back over the last axis, then the maximum over n.
                            let inner: String = g.shape.iter().map(|d| format!("{d}x")).collect();
                            let column = format!("tensor<?x{inner}1x{}>", g.element);
                            let wide = format!("tensor<?x{inner}3x{}>", g.element);
                            let (c, w, r) = (g.fresh(), g.fresh(), g.fresh());
                            let last = g.shape.len() + 1;
                            let _ =
                                writeln!(body, "  {c} = \"temporal.reshape\"({range}) : ({range_type}) -> {column}");
                            let _ = writeln!(body, "  {w} = \"temporal.expand\"({c}) : ({column}) -> {wide}");
                            let _ = writeln!(
                                body,
                                "  {r} = \"temporal.reduce_sum\"({w}) {{axis = {last} : i64}} : ({wide}) -> {range_type}"
                            );
                            let _ = writeln!(
                                body,
                                "  {v} = \"temporal.reduce_max\"({r}) {{axis = 0 : i64}} : ({range_type}) -> {}",
                                g.point
                            );
                        }
                        "attention" => {
                            // Softmax attention of a constant query over the
                            // range (scaled scores, softmax along the range,
                            // weighted sum of the range): what
                            // temporal-tile-ranges tiles.
                            let labels: String = ('a'..='z').filter(|c| *c != 'n').take(g.shape.len()).collect();
                            let scores_ty = format!("tensor<?x{}>", g.element);
                            let scalar = format!("tensor<{}>", g.element);
                            let query = g.constant(body);
                            let (s, c, x, m, d, e, z, p) = (
                                g.fresh(),
                                g.fresh(),
                                g.fresh(),
                                g.fresh(),
                                g.fresh(),
                                g.fresh(),
                                g.fresh(),
                                g.fresh(),
                            );
                            let scale = format!("{:.2}", g.rng.random_range(0.1..2.0f64));
                            let _ = writeln!(
                                body,
                                "  {s} = \"temporal.einsum\"({query}, {range}) {{spec = \"{labels},n{labels}->n\"}} : ({}, {range_type}) -> {scores_ty}",
                                g.point
                            );
                            let _ = writeln!(
                                body,
                                "  {c} = \"temporal.constant\"() {{value = dense<{scale}> : {scalar}}} : () -> {scalar}"
                            );
                            let _ = writeln!(
                                body,
                                "  {x} = \"temporal.mul\"({s}, {c}) : ({scores_ty}, {scalar}) -> {scores_ty}"
                            );
                            // The maximum kept as a dimension of size 1, or not.
                            let kept = g.rng.random_bool(0.5);
                            let keep = |g: &mut Generator, r: String, body: &mut String| -> (String, String) {
                                if !kept {
                                    return (r, scalar.clone());
                                }
                                let one = format!("tensor<1x{}>", g.element);
                                let k = g.fresh();
                                let _ = writeln!(body, "  {k} = \"temporal.reshape\"({r}) : ({scalar}) -> {one}");
                                (k, one)
                            };
                            let _ = writeln!(
                                body,
                                "  {m} = \"temporal.reduce_max\"({x}) {{axis = 0 : i64}} : ({scores_ty}) -> {scalar}"
                            );
                            let (mk, mt) = keep(g, m, body);
                            let _ = writeln!(
                                body,
                                "  {d} = \"temporal.sub\"({x}, {mk}) : ({scores_ty}, {mt}) -> {scores_ty}"
                            );
                            let _ = writeln!(body, "  {e} = \"temporal.exp\"({d}) : ({scores_ty}) -> {scores_ty}");
                            let _ = writeln!(
                                body,
                                "  {z} = \"temporal.reduce_sum\"({e}) {{axis = 0 : i64}} : ({scores_ty}) -> {scalar}"
                            );
                            let (zk, zt) = keep(g, z, body);
                            let _ = writeln!(
                                body,
                                "  {p} = \"temporal.div\"({e}, {zk}) : ({scores_ty}, {zt}) -> {scores_ty}"
                            );
                            let _ = writeln!(
                                body,
                                "  {v} = \"temporal.einsum\"({p}, {range}) {{spec = \"n,n{labels}->{labels}\"}} : ({scores_ty}, {range_type}) -> {}",
                                g.point
                            );
                        }
                        "mapped" => {
                            // An elementwise op of the range and a constant
                            // point, then its sum or maximum along the range:
                            // what temporal-lift-recurrences lifts with the
                            // expression.
                            let c = g.constant(body);
                            let m = g.fresh();
                            let binary = *["add", "sub", "mul"].choose(&mut g.rng).expect("non-empty");
                            let reduce = *["reduce_sum", "reduce_max"].choose(&mut g.rng).expect("non-empty");
                            let _ = writeln!(
                                body,
                                "  {m} = \"temporal.{binary}\"({range}, {c}) : ({range_type}, {}) -> {range_type}",
                                g.point
                            );
                            let _ = writeln!(
                                body,
                                "  {v} = \"temporal.{reduce}\"({m}) {{axis = 0 : i64}} : ({range_type}) -> {}",
                                g.point
                            );
                        }
                        "contracted" => {
                            // An einsum summing the range's label: of the
                            // range times itself, or times a constant point
                            // (two operands: the dialect's variadic operand
                            // takes one type); lifted as a recurrence of the
                            // einsum of points.
                            let labels: String = ('a'..='z').filter(|c| *c != 'n').take(g.shape.len()).collect();
                            if g.rng.random_bool(0.5) {
                                let _ = writeln!(
                                    body,
                                    "  {v} = \"temporal.einsum\"({range}, {range}) {{spec = \"n{labels},n{labels}->{labels}\"}} : ({range_type}, {range_type}) -> {}",
                                    g.point
                                );
                            } else {
                                let c = g.constant(body);
                                let _ = writeln!(
                                    body,
                                    "  {v} = \"temporal.einsum\"({range}, {c}) {{spec = \"n{labels},{labels}->{labels}\"}} : ({range_type}, {}) -> {}",
                                    g.point, g.point
                                );
                            }
                        }
                        "argmax" => {
                            // Index of the maximum, cast back to the point's element type.
                            let indices = g.point.replace(g.element, "i64");
                            let a = g.fresh();
                            let _ = writeln!(
                                body,
                                "  {a} = \"temporal.argmax\"({range}) {{axis = 0 : i64}} : ({range_type}) -> {indices}"
                            );
                            let _ = writeln!(body, "  {v} = \"temporal.cast\"({a}) : ({indices}) -> {}", g.point);
                        }
                        "cumsum" => {
                            // Running sums along the range, then their maximum.
                            let c = g.fresh();
                            let _ = writeln!(
                                body,
                                "  {c} = \"temporal.cumsum\"({range}) {{axis = 0 : i64}} : ({range_type}) -> {range_type}"
                            );
                            let _ = writeln!(
                                body,
                                "  {v} = \"temporal.reduce_max\"({c}) {{axis = 0 : i64}} : ({range_type}) -> {}",
                                g.point
                            );
                        }
                        _ => {
                            let _ = writeln!(
                                body,
                                "  {v} = \"temporal.{op}\"({range}) {{axis = 0 : i64}} : ({range_type}) -> {}",
                                g.point
                            );
                        }
                    }
                    return v;
                }
                let v = g.fresh();
                let _ = writeln!(
                    body,
                    "  {v} = \"temporal.read\"(%{source}) {{index = affine_map<{header} -> ({})>}} : (!temporal.rtensor) -> {}",
                    results.join(", "),
                    g.point
                );
                return v;
            }
            return g.constant(body);
        }
        let ty = g.point.clone();
        let kind = g.rng.random_range(0..25);
        if kind >= 22 && !g.shape.is_empty() {
            // A contraction or a slice at point-dependent offsets that keeps
            // the point's type.
            let shape = g.shape.clone();
            let a = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
            let b = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
            let g = &mut self.inner;
            let v = g.fresh();
            let e = g.element;
            match (kind, shape.as_slice()) {
                (22, [_, _]) => {
                    let spec =
                        *["ij,jk->ik", "ij,kj->ik", "ji,jk->ik", "ij,ij->ji"].choose(&mut g.rng).expect("non-empty");
                    let _ = writeln!(
                        body,
                        "  {v} = \"temporal.einsum\"({a}, {b}) {{spec = \"{spec}\"}} : ({ty}, {ty}) -> {ty}"
                    );
                }
                (22, _) => {
                    let spec = *["i,j->i", "i,i->i", "i->i"].choose(&mut g.rng).expect("non-empty");
                    let (operands, types) = if spec == "i->i" {
                        (a.clone(), ty.clone())
                    } else {
                        (format!("{a}, {b}"), format!("{ty}, {ty}"))
                    };
                    let _ = writeln!(
                        body,
                        "  {v} = \"temporal.einsum\"({operands}) {{spec = \"{spec}\"}} : ({types}) -> {ty}"
                    );
                }
                (23, [_, _]) => {
                    // Rows of a against b with broadcast batch dimensions:
                    // [2, 1, 1, 2] x [1, 1, 2, 2] -> [2, 1, 1, 2].
                    let (l, r, m) = (g.fresh(), g.fresh(), g.fresh());
                    let left = format!("tensor<2x1x1x2x{e}>");
                    let right = format!("tensor<1x1x2x2x{e}>");
                    let _ = writeln!(body, "  {l} = \"temporal.reshape\"({a}) : ({ty}) -> {left}");
                    let _ = writeln!(body, "  {r} = \"temporal.reshape\"({b}) : ({ty}) -> {right}");
                    let _ = writeln!(body, "  {m} = \"temporal.matmul\"({l}, {r}) : ({left}, {right}) -> {left}");
                    let _ = writeln!(body, "  {v} = \"temporal.reshape\"({m}) : ({left}) -> {ty}");
                }
                _ => {
                    // Both side by side along the first axis, then the box at
                    // an offset of 0 to 2 chosen by the point.
                    let mut wide_shape = shape.clone();
                    wide_shape[0] *= 2;
                    let wide = format!("tensor<{}{e}>", wide_shape.iter().map(|d| format!("{d}x")).collect::<String>());
                    let c = g.fresh();
                    let _ = writeln!(
                        body,
                        "  {c} = \"temporal.concat\"({a}, {b}) {{axis = 0 : i64}} : ({ty}, {ty}) -> {wide}"
                    );
                    let var = domain.last().map_or("0".to_string(), |&d| format!("{} mod 3", DIMS[d].0));
                    let mut offsets = vec![var];
                    offsets.extend(shape[1..].iter().map(|_| "0".to_string()));
                    let header =
                        format!("({})[T, B]", domain.iter().map(|&d| DIMS[d].0).collect::<Vec<_>>().join(", "));
                    let _ = writeln!(
                        body,
                        "  {v} = \"temporal.dynamic_slice\"({c}) {{offsets = affine_map<{header} -> ({})>}} : ({wide}) -> {ty}",
                        offsets.join(", ")
                    );
                }
            }
            v
        } else if kind >= 20 && !g.shape.is_empty() {
            // A movement that keeps the point's type.
            let shape = g.shape.clone();
            let a = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
            let g = &mut self.inner;
            let v = g.fresh();
            if shape == [2, 2] && g.rng.random_bool(0.5) {
                let _ = writeln!(body, "  {v} = \"temporal.permute\"({a}) {{permutation = [1, 0]}} : ({ty}) -> {ty}");
            } else if shape.len() == 1 && shape[0] == 2 && g.rng.random_bool(0.5) {
                let half = ty.replacen("tensor<2x", "tensor<1x", 1);
                let (first, second) = (g.fresh(), g.fresh());
                let _ = writeln!(body, "  {first} = \"temporal.slice\"({a}) {{offsets = [0]}} : ({ty}) -> {half}");
                let _ = writeln!(body, "  {second} = \"temporal.slice\"({a}) {{offsets = [1]}} : ({ty}) -> {half}");
                let _ = writeln!(
                    body,
                    "  {v} = \"temporal.concat\"({second}, {first}) {{axis = 0 : i64}} : ({half}, {half}) -> {ty}"
                );
            } else {
                let axis = g.rng.random_range(0..shape.len());
                let _ = writeln!(body, "  {v} = \"temporal.flip\"({a}) {{axis = {axis} : i64}} : ({ty}) -> {ty}");
            }
            v
        } else if kind < 7 {
            let ops: &[&str] = if g.is_float() {
                &["neg", "relu", "tanh", "sigmoid", "sin", "cos", "abs", "sign"]
            } else {
                &["neg", "relu", "abs", "sign"]
            };
            let op = *ops.choose(&mut g.rng).expect("non-empty");
            let a = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
            let v = self.inner.fresh();
            let _ = writeln!(body, "  {v} = \"temporal.{op}\"({a}) : ({ty}) -> {ty}");
            v
        } else if kind < 10 {
            // where(cmp(a, b), c, d)
            let predicate = *["eq", "ne", "lt", "le", "gt", "ge"].choose(&mut g.rng).expect("non-empty");
            let flags = ty.replace(self.inner.element, "i1");
            let operands: Vec<String> = (0..4)
                .map(|_| self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body))
                .collect();
            let c = self.inner.fresh();
            let _ = writeln!(
                body,
                "  {c} = \"temporal.cmp\"({}, {}) {{predicate = \"{predicate}\"}} : ({ty}, {ty}) -> {flags}",
                operands[0], operands[1]
            );
            let v = self.inner.fresh();
            let _ = writeln!(
                body,
                "  {v} = \"temporal.select\"({c}, {}, {}) : ({flags}, {ty}, {ty}) -> {ty}",
                operands[2], operands[3]
            );
            v
        } else if kind < 11 {
            // A cast away and back: exact for the chosen pairs, or through booleans.
            let element = self.inner.element;
            let other = match (element, self.inner.rng.random_bool(0.3)) {
                (_, true) => "i1",
                ("f32", _) => "f64",
                ("f64", _) => "f32",
                ("i32", _) => "i64",
                _ => "i32",
            };
            let a = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
            let away = ty.replace(element, other);
            let middle = self.inner.fresh();
            let _ = writeln!(body, "  {middle} = \"temporal.cast\"({a}) : ({ty}) -> {away}");
            let v = self.inner.fresh();
            let _ = writeln!(body, "  {v} = \"temporal.cast\"({middle}) : ({away}) -> {ty}");
            v
        } else {
            let ops: &[&str] = if g.is_float() {
                &["add", "sub", "mul", "max", "min", "div", "pow"]
            } else {
                &["add", "sub", "mul", "max", "min", "div"]
            };
            let op = *ops.choose(&mut g.rng).expect("non-empty");
            // Sometimes both operands are the same subexpression written
            // twice (the same random choices replayed, with fresh names):
            // what temporal-dedup's common-subexpression merging removes.
            let twice = g.rng.random_bool(0.15);
            let replay = self.inner.rng.clone();
            let a = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
            let b = if twice {
                let after = std::mem::replace(&mut self.inner.rng, replay);
                let b = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
                self.inner.rng = after;
                b
            } else {
                self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body)
            };
            let v = self.inner.fresh();
            let _ = writeln!(body, "  {v} = \"temporal.{op}\"({a}, {b}) : ({ty}, {ty}) -> {ty}");
            v
        }
    }
}

fn points_of(extents: &[i64]) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for &e in extents {
        all = all.into_iter().flat_map(|p: Vec<i64>| (0..e).map(move |i| [p.clone(), vec![i]].concat())).collect();
    }
    all
}
