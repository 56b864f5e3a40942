//! The interpreter's values and the meaning of each spatial op on them:
//! broadcasting, elementwise arithmetic with its rounding and NaN rules,
//! movement, gathers, seeded random values, matrix products, einsums,
//! attention and reductions, each in the order `semantics.md` gives.

use super::*;

/// A value with its run-time shape.
#[derive(Clone, Debug)]
pub(super) struct Value {
    pub(super) shape: Vec<usize>,
    pub(super) data: Data,
}

/// Every point of a box of intervals, row-major.
pub(super) fn points_in(intervals: &[(i64, i64, bool)]) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for &(lo, hi, _) in intervals {
        all = all.into_iter().flat_map(|p| (lo..hi).map(move |i| [p.clone(), vec![i]].concat())).collect();
    }
    all
}

/// Applies a movement op: each result element is copied from the operand
/// element [`Movement::source`] names (or is its own position for arange).
pub(super) fn move_elements(
    movement: &Movement,
    inputs: &[&Value],
    static_out: &[usize],
    element: ElementType,
) -> Value {
    let shape: Vec<usize> = match movement {
        Movement::Permute(p) => p.iter().map(|&k| inputs[0].shape[k]).collect(),
        Movement::Flip(_) => inputs[0].shape.clone(),
        Movement::Concat(axis) => {
            let mut s = inputs[0].shape.clone();
            s[*axis] += inputs[1].shape[*axis];
            s
        }
        _ => static_out.to_vec(),
    };
    let input_shapes: Vec<Vec<usize>> = inputs.iter().map(|v| v.shape.clone()).collect();
    let mut parts = Vec::new();
    let extents: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    for index in points(&extents) {
        let index: Vec<usize> = index.iter().map(|&v| v as usize).collect();
        match movement.source(&index, &shape, &input_shapes) {
            Some((k, at)) => {
                let flat = at.iter().zip(&input_shapes[k]).fold(0usize, |acc, (&i, &n)| acc * n + i);
                parts.push(slice(&inputs[k].data, flat, 1));
            }
            None => parts.push(cast(&Data::I64(vec![index[0] as i64]), element)),
        }
    }
    Value { shape, data: concat(element, &parts) }
}

/// Seeded random values for the point at `coordinates`; normal values by
/// Box-Muller from two uniforms, computed in the element type.
pub(super) fn random(seed: i64, normal: bool, coordinates: &[i64], ty: &PointType) -> Value {
    use tempo_passes::program::{random_bits, splitmix64, uniform_from_bits};
    let shape: Vec<usize> = ty.shape.iter().map(|&d| d as usize).collect();
    let n: usize = shape.iter().product();
    let draw = |k: usize| {
        let bits = random_bits(seed, coordinates, k as u64);
        (uniform_from_bits(bits), uniform_from_bits(splitmix64(bits)))
    };
    let data = match ty.element {
        ElementType::F32 => Data::F32(
            (0..n)
                .map(|k| {
                    let (u1, u2) = draw(k);
                    let (u1, u2) = (u1 as f32, u2 as f32);
                    if normal { (-2.0f32 * (1.0f32 - u1).ln()).sqrt() * (6.283_185_5f32 * u2).cos() } else { u1 }
                })
                .collect(),
        ),
        _ => Data::F64(
            (0..n)
                .map(|k| {
                    let (u1, u2) = draw(k);
                    if normal { (-2.0f64 * (1.0f64 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos() } else { u1 }
                })
                .collect(),
        ),
    };
    Value { shape, data }
}

/// Rows of `table` at `indices`, each clamped into the table.
pub(super) fn gather(table: &Value, indices: &Value) -> Value {
    let rows = table.shape[0];
    let row: usize = table.shape[1..].iter().product();
    let parts: Vec<Data> = (0..indices.data.len())
        .map(|k| {
            let index = match &indices.data {
                Data::I32(v) => v[k] as i64,
                Data::I64(v) => v[k],
                _ => unreachable!("the verifier checks integer indices"),
            };
            if rows == 0 {
                // Nothing to take from an empty table: zeros.
                return Data::zeros(table.data.element(), row);
            }
            let clamped = index.clamp(0, rows as i64 - 1) as usize;
            slice(&table.data, clamped * row, row)
        })
        .collect();
    let mut shape = indices.shape.clone();
    shape.extend(&table.shape[1..]);
    Value { shape, data: concat(table.data.element(), &parts) }
}

/// Converts every element to `element`: floats to integers truncate toward
/// zero, anything to a boolean is `x != 0`, booleans are 0 or 1.
pub(super) fn cast(data: &Data, element: ElementType) -> Data {
    let n = data.len();
    let as_f64 = |k: usize| data.get_f64(k);
    let as_i64 = |k: usize| match data {
        Data::I32(v) => v[k] as i64,
        Data::I64(v) => v[k],
        Data::Bool(v) => v[k] as i64,
        Data::F32(v) => v[k] as i64,
        Data::F64(v) => v[k] as i64,
    };
    match element {
        ElementType::F32 => Data::F32(match data {
            Data::F64(v) => v.iter().map(|&x| x as f32).collect(),
            Data::F32(v) => v.clone(),
            _ => (0..n).map(|k| as_i64(k) as f32).collect(),
        }),
        ElementType::F64 => Data::F64((0..n).map(as_f64).collect()),
        ElementType::I32 => Data::I32(match data {
            Data::F32(v) => v.iter().map(|&x| x as i32).collect(),
            Data::F64(v) => v.iter().map(|&x| x as i32).collect(),
            _ => (0..n).map(|k| as_i64(k) as i32).collect(),
        }),
        ElementType::I64 => Data::I64((0..n).map(as_i64).collect()),
        ElementType::I1 => Data::Bool(match data {
            Data::F32(v) => v.iter().map(|&x| (x != 0.0) as u8).collect(),
            Data::F64(v) => v.iter().map(|&x| (x != 0.0) as u8).collect(),
            _ => (0..n).map(|k| (as_i64(k) != 0) as u8).collect(),
        }),
    }
}

/// The shape values of these (concrete) shapes broadcast to under NumPy's
/// rules, as the verifier computes it for types.
pub(super) fn broadcast_shape(shapes: &[&[usize]]) -> Result<Vec<usize>, String> {
    let wide: Vec<Vec<i64>> = shapes.iter().map(|s| s.iter().map(|&d| d as i64).collect()).collect();
    let refs: Vec<&[i64]> = wide.iter().map(Vec::as_slice).collect();
    tempo_passes::program::PointType::broadcast_shape(&refs)
        .map(|shape| shape.into_iter().map(|d| d as usize).collect())
        .ok_or_else(|| format!("elementwise operands of shapes {shapes:?} do not broadcast"))
}

/// `value` stretched to `shape` (which it broadcasts to).
pub(super) fn broadcast_to(value: &Value, shape: &[usize]) -> Value {
    if value.shape == shape {
        return value.clone();
    }
    let skip = shape.len() - value.shape.len();
    // Strides of the source, 0 where a dimension stretches.
    let mut strides = vec![0usize; shape.len()];
    let mut stride = 1;
    for k in (0..value.shape.len()).rev() {
        if value.shape[k] != 1 {
            strides[skip + k] = stride;
        }
        stride *= value.shape[k];
    }
    let n: usize = shape.iter().product();
    let mut indices = Vec::with_capacity(n);
    let mut position = vec![0usize; shape.len()];
    for _ in 0..n {
        indices.push(position.iter().zip(&strides).map(|(p, s)| p * s).sum());
        for k in (0..shape.len()).rev() {
            position[k] += 1;
            if position[k] < shape[k] {
                break;
            }
            position[k] = 0;
        }
    }
    Value { shape: shape.to_vec(), data: take(&value.data, &indices) }
}

/// The elements of `data` at `indices`.
pub(super) fn take(data: &Data, indices: &[usize]) -> Data {
    match data {
        Data::F32(v) => Data::F32(indices.iter().map(|&k| v[k]).collect()),
        Data::F64(v) => Data::F64(indices.iter().map(|&k| v[k]).collect()),
        Data::I32(v) => Data::I32(indices.iter().map(|&k| v[k]).collect()),
        Data::I64(v) => Data::I64(indices.iter().map(|&k| v[k]).collect()),
        Data::Bool(v) => Data::Bool(indices.iter().map(|&k| v[k]).collect()),
    }
}

/// Operands of a binary elementwise op, broadcast to one shape.
pub(super) fn broadcast(a: &Value, b: &Value) -> Result<(Value, Value), String> {
    let shape = broadcast_shape(&[&a.shape, &b.shape])?;
    Ok((broadcast_to(a, &shape), broadcast_to(b, &shape)))
}

/// `len` elements of `data` from `start`.
pub fn slice(data: &Data, start: usize, len: usize) -> Data {
    match data {
        Data::F32(v) => Data::F32(v[start..start + len].to_vec()),
        Data::F64(v) => Data::F64(v[start..start + len].to_vec()),
        Data::I32(v) => Data::I32(v[start..start + len].to_vec()),
        Data::I64(v) => Data::I64(v[start..start + len].to_vec()),
        Data::Bool(v) => Data::Bool(v[start..start + len].to_vec()),
    }
}

/// A constant's data: `values`, or for integers `integers` when given
/// (exact past 2^53).
pub(super) fn constant(values: &[f64], integers: &[i64], element: ElementType) -> Data {
    let exact = integers.len() == values.len() && !integers.is_empty();
    match element {
        ElementType::F32 => Data::F32(values.iter().map(|&v| v as f32).collect()),
        ElementType::F64 => Data::F64(values.to_vec()),
        ElementType::I32 if exact => Data::I32(integers.iter().map(|&v| v as i32).collect()),
        ElementType::I64 if exact => Data::I64(integers.to_vec()),
        ElementType::I32 => Data::I32(values.iter().map(|&v| v as i32).collect()),
        ElementType::I64 => Data::I64(values.iter().map(|&v| v as i64).collect()),
        ElementType::I1 => Data::Bool(values.iter().map(|&v| (v != 0.0) as u8).collect()),
    }
}

/// IEEE maximum/minimum that propagate NaN, as `arith.maximumf` does.
pub(super) fn nan_max<T: num_like::Float>(a: T, b: T) -> T {
    if a.is_nan() || b.is_nan() {
        T::NAN
    } else if a > b {
        a
    } else {
        b
    }
}
pub(super) fn nan_min<T: num_like::Float>(a: T, b: T) -> T {
    if a.is_nan() || b.is_nan() {
        T::NAN
    } else if a < b {
        a
    } else {
        b
    }
}

mod num_like {
    pub trait Float: Copy + PartialOrd {
        const NAN: Self;
        fn is_nan(self) -> bool;
    }
    impl Float for f32 {
        const NAN: Self = f32::NAN;
        fn is_nan(self) -> bool {
            f32::is_nan(self)
        }
    }
    impl Float for f64 {
        const NAN: Self = f64::NAN;
        fn is_nan(self) -> bool {
            f64::is_nan(self)
        }
    }
}

macro_rules! float_unary {
    ($kind:expr, $v:expr, $t:ty) => {
        $v.iter()
            .map(|&x: &$t| match $kind {
                UnaryKind::Neg => -x,
                UnaryKind::Exp => x.exp(),
                UnaryKind::Log => x.ln(),
                UnaryKind::Sqrt => x.sqrt(),
                UnaryKind::Tanh => x.tanh(),
                UnaryKind::Sigmoid => 1.0 / (1.0 + (-x).exp()),
                UnaryKind::Relu => nan_max(x, 0.0),
                UnaryKind::Sin => x.sin(),
                UnaryKind::Cos => x.cos(),
                UnaryKind::Abs => x.abs(),
                UnaryKind::Sign if x > 0.0 => 1.0,
                UnaryKind::Sign if x < 0.0 => -1.0,
                UnaryKind::Sign => x,
                UnaryKind::StopGradient => x,
                UnaryKind::Not => unreachable!("the verifier allows not only on booleans"),
            })
            .collect()
    };
}

macro_rules! int_unary {
    ($kind:expr, $x:expr) => {
        match $kind {
            UnaryKind::Neg => $x.wrapping_neg(),
            UnaryKind::Abs => $x.wrapping_abs(),
            UnaryKind::Sign => $x.signum(),
            _ => $x.max(0),
        }
    };
}

pub(super) fn unary(kind: UnaryKind, a: &Data) -> Data {
    if let UnaryKind::StopGradient = kind {
        return a.clone();
    }
    match a {
        Data::F32(v) => Data::F32(float_unary!(kind, v, f32)),
        Data::F64(v) => Data::F64(float_unary!(kind, v, f64)),
        // The verifier allows only neg, relu and abs on integers, not on booleans.
        Data::I32(v) => Data::I32(v.iter().map(|&x| int_unary!(kind, x)).collect()),
        Data::I64(v) => Data::I64(v.iter().map(|&x| int_unary!(kind, x)).collect()),
        Data::Bool(v) => Data::Bool(v.iter().map(|&x| (x == 0) as u8).collect()),
    }
}

macro_rules! float_binary {
    ($kind:expr, $a:expr, $b:expr) => {
        $a.iter()
            .zip($b.iter())
            .map(|(&x, &y)| match $kind {
                BinaryKind::Add => x + y,
                BinaryKind::Sub => x - y,
                BinaryKind::Mul => x * y,
                BinaryKind::Div => x / y,
                BinaryKind::Max => nan_max(x, y),
                BinaryKind::Min => nan_min(x, y),
                BinaryKind::Pow => x.powf(y),
                BinaryKind::And | BinaryKind::Or => unreachable!("the verifier allows and/or only on booleans"),
            })
            .collect()
    };
}

macro_rules! int_binary {
    ($kind:expr, $a:expr, $b:expr) => {
        $a.iter()
            .zip($b.iter())
            .map(|(&x, &y)| {
                Ok(match $kind {
                    BinaryKind::Add => x.wrapping_add(y),
                    BinaryKind::Sub => x.wrapping_sub(y),
                    BinaryKind::Mul => x.wrapping_mul(y),
                    // Defined everywhere: x / 0 = 0, MIN / -1 wraps.
                    BinaryKind::Div => {
                        if y == 0 {
                            0
                        } else {
                            x.wrapping_div(y)
                        }
                    }
                    BinaryKind::Max => x.max(y),
                    BinaryKind::Min => x.min(y),
                    BinaryKind::Pow | BinaryKind::And | BinaryKind::Or => {
                        unreachable!("the verifier allows pow only on floats, and/or only on booleans")
                    }
                })
            })
            .collect::<Result<_, String>>()?
    };
}

pub(super) fn binary(kind: BinaryKind, a: &Data, b: &Data) -> Result<Data, String> {
    Ok(match (a, b) {
        (Data::F32(x), Data::F32(y)) => Data::F32(float_binary!(kind, x, y)),
        (Data::F64(x), Data::F64(y)) => Data::F64(float_binary!(kind, x, y)),
        (Data::I32(x), Data::I32(y)) => Data::I32(int_binary!(kind, x, y)),
        (Data::I64(x), Data::I64(y)) => Data::I64(int_binary!(kind, x, y)),
        (Data::Bool(x), Data::Bool(y)) => {
            Data::Bool(x.iter().zip(y).map(|(&p, &q)| if kind == BinaryKind::And { p & q } else { p | q }).collect())
        }
        _ => unreachable!("the verifier checks operand types"),
    })
}

macro_rules! matmul_typed {
    ($x:expr, $y:expr, $m:expr, $k:expr, $n:expr, $zero:expr, $mul:expr, $add:expr) => {{
        let mut out = vec![$zero; $m * $n];
        for i in 0..$m {
            for j in 0..$n {
                let mut acc = $zero;
                for p in 0..$k {
                    acc = $add(acc, $mul($x[i * $k + p], $y[p * $n + j]));
                }
                out[i * $n + j] = acc;
            }
        }
        out
    }};
}

/// `MxK * KxN`, `MxK * K` and `K * KxN`, accumulating over `k` in order
/// from zero.
pub(super) fn matmul(a: &Value, b: &Value) -> Result<Value, String> {
    let (m, k, k2, n, shape) = match (a.shape.as_slice(), b.shape.as_slice()) {
        ([m, k], [k2, n]) => (*m, *k, *k2, *n, vec![*m, *n]),
        ([m, k], [k2]) => (*m, *k, *k2, 1, vec![*m]),
        ([k], [k2, n]) => (1, *k, *k2, *n, vec![*n]),
        _ if a.shape.len() >= 2 && b.shape.len() >= 2 => {
            // One product per entry of the broadcast batch dimensions.
            let (ra, rb) = (a.shape.len(), b.shape.len());
            let (m, k, k2, n) = (a.shape[ra - 2], a.shape[ra - 1], b.shape[rb - 2], b.shape[rb - 1]);
            if k != k2 {
                return Err(format!("matmul of shapes {:?} and {:?}: inner sizes differ", a.shape, b.shape));
            }
            let batch = broadcast_shape(&[&a.shape[..ra - 2], &b.shape[..rb - 2]])?;
            // The matrix of an operand at a batch index: size-1 and missing
            // batch dimensions stretch.
            let matrix = |v: &Value, index: &[usize], rows: usize, cols: usize| {
                let own = &v.shape[..v.shape.len() - 2];
                let skip = index.len() - own.len();
                let entry = own
                    .iter()
                    .enumerate()
                    .fold(0usize, |acc, (d, &size)| acc * size + if size == 1 { 0 } else { index[skip + d] });
                Value { shape: vec![rows, cols], data: slice(&v.data, entry * rows * cols, rows * cols) }
            };
            let extents: Vec<i64> = batch.iter().map(|&d| d as i64).collect();
            let mut parts = Vec::new();
            for index in points(&extents) {
                let index: Vec<usize> = index.iter().map(|&i| i as usize).collect();
                parts.push(matmul(&matrix(a, &index, m, k), &matrix(b, &index, k, n))?.data);
            }
            let mut shape = batch;
            shape.extend([m, n]);
            return Ok(Value { shape, data: concat(a.data.element(), &parts) });
        }
        _ => return Err(format!("matmul of shapes {:?} and {:?} does not fit", a.shape, b.shape)),
    };
    if k != k2 {
        return Err(format!("matmul of shapes {:?} and {:?}: inner sizes differ", a.shape, b.shape));
    }
    let data = match (&a.data, &b.data) {
        (Data::F32(x), Data::F32(y)) => {
            Data::F32(matmul_typed!(x, y, m, k, n, 0f32, |a: f32, b: f32| a * b, |a: f32, b: f32| a + b))
        }
        (Data::F64(x), Data::F64(y)) => {
            Data::F64(matmul_typed!(x, y, m, k, n, 0f64, |a: f64, b: f64| a * b, |a: f64, b: f64| a + b))
        }
        (Data::I32(x), Data::I32(y)) => {
            Data::I32(matmul_typed!(x, y, m, k, n, 0i32, |a: i32, b: i32| a.wrapping_mul(b), |a: i32, b: i32| a
                .wrapping_add(b)))
        }
        (Data::I64(x), Data::I64(y)) => {
            Data::I64(matmul_typed!(x, y, m, k, n, 0i64, |a: i64, b: i64| a.wrapping_mul(b), |a: i64, b: i64| a
                .wrapping_add(b)))
        }
        _ => unreachable!("the verifier checks matmul types"),
    };
    Ok(Value { shape, data })
}

macro_rules! einsum_typed {
    ($inputs:expr, $variant:ident, $zero:expr, $mul:expr, $add:expr, $walk:expr) => {{
        let data: Vec<&Vec<_>> = $inputs
            .iter()
            .map(|v| match &v.data {
                Data::$variant(x) => x,
                _ => unreachable!("the verifier checks einsum types"),
            })
            .collect();
        Data::$variant($walk(
            &mut |offsets: &[usize], acc: &mut _| {
                let mut product = data[0][offsets[0]];
                for (x, &o) in data.iter().zip(offsets).skip(1) {
                    product = $mul(product, x[o]);
                }
                *acc = $add(*acc, product);
            },
            $zero,
        ))
    }};
}

/// Einstein summation: every result element sums, over the summed labels
/// (row-major, in order of first appearance), the product of the operands'
/// elements taken left to right, from zero.
pub(super) fn einsum(spec: &Einsum, inputs: &[&Value]) -> Result<Value, String> {
    let shapes: Vec<Vec<i64>> = inputs.iter().map(|v| v.shape.iter().map(|&d| d as i64).collect()).collect();
    let refs: Vec<&[i64]> = shapes.iter().map(Vec::as_slice).collect();
    let sizes = spec.label_sizes(&refs)?;
    let extents: Vec<usize> = sizes.iter().map(|&(_, n)| n as usize).collect();
    let r = spec.result.len();
    // Per operand, the element stride of each label (0 where it has none).
    let strides: Vec<Vec<usize>> = spec
        .operands
        .iter()
        .zip(inputs)
        .map(|(labels, v)| {
            sizes
                .iter()
                .map(|(c, _)| {
                    labels.iter().position(|x| x == c).map_or(0, |d| v.shape[d + 1..].iter().product::<usize>())
                })
                .collect()
        })
        .collect();
    let (outer, inner): (usize, usize) = (extents[..r].iter().product(), extents[r..].iter().product());
    // Visits every result element (outer) and summed point (inner) in order.
    fn walk<T: Copy>(
        extents: &[usize],
        r: usize,
        strides: &[Vec<usize>],
        counts: (usize, usize),
        visit: &mut dyn FnMut(&[usize], &mut T),
        zero: T,
    ) -> Vec<T> {
        let mut out = Vec::with_capacity(counts.0);
        let mut index = vec![0usize; extents.len()];
        for _ in 0..counts.0 {
            let mut acc = zero;
            for _ in 0..counts.1 {
                let offsets: Vec<usize> =
                    strides.iter().map(|s| s.iter().zip(&index).map(|(a, b)| a * b).sum()).collect();
                visit(&offsets, &mut acc);
                advance(&mut index[r..], &extents[r..]);
            }
            out.push(acc);
            advance(&mut index[..r], &extents[..r]);
        }
        out
    }
    fn advance(index: &mut [usize], extents: &[usize]) {
        for k in (0..index.len()).rev() {
            index[k] += 1;
            if index[k] < extents[k] {
                return;
            }
            index[k] = 0;
        }
    }
    let counts = (outer, inner);
    let data = match inputs[0].data.element() {
        ElementType::F32 => einsum_typed!(
            inputs,
            F32,
            0f32,
            |a: f32, b: f32| a * b,
            |a: f32, b: f32| a + b,
            |v: &mut dyn FnMut(&[usize], &mut f32), z| walk(&extents, r, &strides, counts, v, z)
        ),
        ElementType::F64 => einsum_typed!(
            inputs,
            F64,
            0f64,
            |a: f64, b: f64| a * b,
            |a: f64, b: f64| a + b,
            |v: &mut dyn FnMut(&[usize], &mut f64), z| walk(&extents, r, &strides, counts, v, z)
        ),
        ElementType::I32 => einsum_typed!(
            inputs,
            I32,
            0i32,
            |a: i32, b: i32| a.wrapping_mul(b),
            |a: i32, b: i32| a.wrapping_add(b),
            |v: &mut dyn FnMut(&[usize], &mut i32), z| walk(&extents, r, &strides, counts, v, z)
        ),
        ElementType::I64 => einsum_typed!(
            inputs,
            I64,
            0i64,
            |a: i64, b: i64| a.wrapping_mul(b),
            |a: i64, b: i64| a.wrapping_add(b),
            |v: &mut dyn FnMut(&[usize], &mut i64), z| walk(&extents, r, &strides, counts, v, z)
        ),
        ElementType::I1 => unreachable!("the verifier refuses boolean einsums"),
    };
    Ok(Value { shape: extents[..r].to_vec(), data })
}

macro_rules! reduce_typed {
    ($v:expr, $outer:expr, $len:expr, $inner:expr, $init:expr, $combine:expr) => {{
        let mut out = vec![$init; $outer * $inner];
        for o in 0..$outer {
            for i in 0..$inner {
                let mut acc = $init;
                for r in 0..$len {
                    acc = $combine(acc, $v[(o * $len + r) * $inner + i]);
                }
                out[o * $inner + i] = acc;
            }
        }
        out
    }};
}

/// Softmax attention as its definition reads: the scores, times the scale,
/// a softmax along the attention's axis (maximum, difference, `exp`, sum,
/// quotient), then the combining contraction.
pub(super) fn attention(spec: &Attention, q: &Value, k: &Value, v: &Value, scale: &Value) -> Result<Value, String> {
    let scores = einsum(&spec.score, &[q, k])?;
    let (s, c) = broadcast(&scores, scale)?;
    let scaled = Value { shape: s.shape, data: binary(BinaryKind::Mul, &s.data, &c.data)? };
    let axis = spec.axis();
    let keep = |r: Value| {
        let mut shape = r.shape.clone();
        shape.insert(axis, 1);
        Value { shape, data: r.data }
    };
    let (x, m) = broadcast(&scaled, &keep(reduce(ReduceKind::Max, &scaled, axis)))?;
    let e = Value { shape: x.shape.clone(), data: unary(UnaryKind::Exp, &binary(BinaryKind::Sub, &x.data, &m.data)?) };
    let (e, total) = broadcast(&e, &keep(reduce(ReduceKind::Sum, &e, axis)))?;
    let p = Value { shape: e.shape, data: binary(BinaryKind::Div, &e.data, &total.data)? };
    einsum(&spec.combine, &[&p, v])
}

/// `temporal.flash_attention` ([`tempo_passes::program::Flash`]) as its
/// spec states it, in the element type: per group and query row (`t`,
/// `r`), the keys `n` position `t` sees in order, `s[n] = scale * (q .
/// k[n])`, their maximum `m` (`-inf` for none), `l = sum exp(s - m)`, `P[n]
/// = exp(s[n] - m) / l`, `O = sum P[n] v[n]`; for query `dP[n] = dO .
/// v[n]`, `D = sum P[n] dP[n]`, `dQ = sum scale P[n] (dP[n] - D) k[n]`; for
/// key, per key, over the rows (in order) whose position sees it, `P`
/// from the given `m` and `l`, `dV = sum P dO`, `dK = sum scale P (dO . v
/// - D) q`. Sums start from zero and go in increasing index order.
pub(super) fn flash_attention(spec: &tempo_passes::program::Flash, operands: &[&Value]) -> Result<Value, String> {
    let shapes: Vec<Vec<i64>> = operands.iter().map(|v| v.shape.iter().map(|&d| d as i64).collect()).collect();
    let shape_refs: Vec<&[i64]> = shapes.iter().map(Vec::as_slice).collect();
    let sizes = spec.sizes(&shape_refs)?;
    let shape: Vec<usize> = spec.result_shape(&sizes).iter().map(|&d| d as usize).collect();
    for (k, v) in operands.iter().enumerate() {
        let n: usize = v.shape.iter().product();
        if v.data.len() != n {
            return Err(format!("operand {k} holds {} elements for its shape {:?}", v.data.len(), v.shape));
        }
    }
    match &operands[0].data {
        Data::F32(_) => flash_typed::<f32>(spec, &sizes, operands, shape),
        Data::F64(_) => flash_typed::<f64>(spec, &sizes, operands, shape),
        _ => Err("flash_attention takes floats".to_string()),
    }
}

/// An element type [`flash_attention`] computes in.
trait FlashFloat:
    num_like::Float
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    const ZERO: Self;
    const NEG_INFINITY: Self;
    fn exp(self) -> Self;
    fn of(data: &Data) -> Option<&[Self]>;
    fn data(values: Vec<Self>) -> Data;
}

impl FlashFloat for f32 {
    const ZERO: Self = 0.0;
    const NEG_INFINITY: Self = f32::NEG_INFINITY;
    fn exp(self) -> Self {
        f32::exp(self)
    }
    fn of(data: &Data) -> Option<&[Self]> {
        if let Data::F32(v) = data { Some(v) } else { None }
    }
    fn data(values: Vec<Self>) -> Data {
        Data::F32(values)
    }
}

impl FlashFloat for f64 {
    const ZERO: Self = 0.0;
    const NEG_INFINITY: Self = f64::NEG_INFINITY;
    fn exp(self) -> Self {
        f64::exp(self)
    }
    fn of(data: &Data) -> Option<&[Self]> {
        if let Data::F64(v) = data { Some(v) } else { None }
    }
    fn data(values: Vec<Self>) -> Data {
        Data::F64(values)
    }
}

fn flash_typed<T: FlashFloat>(
    spec: &tempo_passes::program::Flash,
    sizes: &tempo_passes::program::FlashSizes,
    operands: &[&Value],
    shape: Vec<usize>,
) -> Result<Value, String> {
    use tempo_passes::program::FlashPart;
    let data: Vec<&[T]> = operands
        .iter()
        .enumerate()
        .map(|(k, v)| T::of(&v.data).ok_or_else(|| format!("operand {k} is not of the first operand's element type")))
        .collect::<Result<_, _>>()?;
    let size = |x: i64| x.max(0) as usize;
    let (tq, tk, g, rows, dk, dv) =
        (size(sizes.tq), size(sizes.tk), size(sizes.groups), size(sizes.rows), size(sizes.dk), size(sizes.dv));
    let (q, k, v, scale) = match spec.part {
        FlashPart::Forward | FlashPart::Query => (data[0], data[1], data[2], data[spec.part.arity() - 1]),
        FlashPart::Key => (data[0], data[5], data[6], data[7]),
    };
    let Some(&scale) = scale.first() else {
        return Err("the scale holds no element".to_string());
    };
    let dot = |a: &[T], b: &[T]| a.iter().zip(b).fold(T::ZERO, |acc, (&x, &y)| acc + x * y);
    let band = spec.band;
    let sees = |t: usize, n: usize| band.sees(t as i64, n as i64);
    // Row (t, g, r)'s offset in q, dO (times the feature width) and m, l, D.
    let row = |t: usize, gi: usize, r: usize| (t * g + gi) * rows + r;
    let q_of = |i: usize| &q[i * dk..][..dk];
    let k_of = |n: usize, gi: usize| &k[(n * g + gi) * dk..][..dk];
    let v_of = |n: usize, gi: usize| &v[(n * g + gi) * dv..][..dv];
    let width = *shape.last().unwrap_or(&0);
    let mut out = vec![T::ZERO; shape.iter().product()];
    match spec.part {
        FlashPart::Forward | FlashPart::Query => {
            let d_o = if spec.part == FlashPart::Query { data[3] } else { &[][..] };
            for t in 0..tq {
                let seen: Vec<usize> = (0..tk).filter(|&n| sees(t, n)).collect();
                for gi in 0..g {
                    for r in 0..rows {
                        let i = row(t, gi, r);
                        let s: Vec<T> = seen.iter().map(|&n| scale * dot(q_of(i), k_of(n, gi))).collect();
                        let m = s.iter().fold(T::NEG_INFINITY, |a, &b| nan_max(a, b));
                        let l = s.iter().fold(T::ZERO, |a, &b| a + (b - m).exp());
                        let p: Vec<T> = s.iter().map(|&b| (b - m).exp() / l).collect();
                        let o = &mut out[i * width..][..width];
                        for (&n, &pn) in seen.iter().zip(&p) {
                            for (x, &ve) in o[..dv].iter_mut().zip(v_of(n, gi)) {
                                *x = *x + pn * ve;
                            }
                        }
                        o[dv] = m;
                        o[dv + 1] = l;
                        if spec.part == FlashPart::Query {
                            let d_oi = &d_o[i * dv..][..dv];
                            let dp: Vec<T> = seen.iter().map(|&n| dot(d_oi, v_of(n, gi))).collect();
                            let d = p.iter().zip(&dp).fold(T::ZERO, |a, (&pn, &dpn)| a + pn * dpn);
                            o[dv + 2] = d;
                            for ((&n, &pn), &dpn) in seen.iter().zip(&p).zip(&dp) {
                                let ds = scale * pn * (dpn - d);
                                for (x, &kc) in o[dv + 3..].iter_mut().zip(k_of(n, gi)) {
                                    *x = *x + ds * kc;
                                }
                            }
                        }
                    }
                }
            }
        }
        FlashPart::Key => {
            let (d_o, m, l, dd) = (data[1], data[2], data[3], data[4]);
            for n in 0..tk {
                let positions: Vec<usize> = (0..tq).filter(|&t| sees(t, n)).collect();
                for gi in 0..g {
                    let o = &mut out[(n * g + gi) * width..][..width];
                    for &t in &positions {
                        for r in 0..rows {
                            let i = row(t, gi, r);
                            let p = (scale * dot(q_of(i), k_of(n, gi)) - m[i]).exp() / l[i];
                            let d_oi = &d_o[i * dv..][..dv];
                            for (x, &e) in o[dk..].iter_mut().zip(d_oi) {
                                *x = *x + p * e;
                            }
                            let ds = scale * p * (dot(d_oi, v_of(n, gi)) - dd[i]);
                            for (x, &qc) in o[..dk].iter_mut().zip(q_of(i)) {
                                *x = *x + ds * qc;
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(Value { shape, data: T::data(out) })
}

/// A reduction along `axis`, in order from the first element.
pub(super) fn reduce(kind: ReduceKind, a: &Value, axis: usize) -> Value {
    let outer: usize = a.shape[..axis].iter().product();
    let len = a.shape[axis];
    let inner: usize = a.shape[axis + 1..].iter().product();
    let mut shape = a.shape.clone();
    if kind != ReduceKind::CumSum {
        shape.remove(axis);
    }
    let at = |o: usize, r: usize, i: usize| (o * len + r) * inner + i;
    macro_rules! typed {
        ($v:expr, $variant:ident, $t:ty, $zero:expr, $lowest:expr, $add:expr) => {{
            let v: &Vec<$t> = $v;
            match kind {
                ReduceKind::Sum => Data::$variant(reduce_typed!(v, outer, len, inner, $zero, $add)),
                ReduceKind::Max => Data::$variant(reduce_typed!(v, outer, len, inner, $lowest, max_of::<$t>)),
                ReduceKind::Mean => {
                    let sums: Vec<$t> = reduce_typed!(v, outer, len, inner, $zero, $add);
                    Data::$variant(sums.into_iter().map(|s| mean_of(s, len)).collect())
                }
                ReduceKind::ArgMax => {
                    let mut out = vec![0i64; outer * inner];
                    for o in 0..outer {
                        for i in 0..inner {
                            let mut best = $lowest;
                            for r in 0..len {
                                let x = v[at(o, r, i)];
                                if x > best {
                                    best = x;
                                    out[o * inner + i] = r as i64;
                                }
                            }
                        }
                    }
                    return Value { shape, data: Data::I64(out) };
                }
                ReduceKind::CumSum => {
                    let mut out = v.clone();
                    for o in 0..outer {
                        for i in 0..inner {
                            for r in 1..len {
                                out[at(o, r, i)] = $add(out[at(o, r - 1, i)], v[at(o, r, i)]);
                            }
                        }
                    }
                    Data::$variant(out)
                }
            }
        }};
    }
    let data = match &a.data {
        Data::F32(v) => typed!(v, F32, f32, 0f32, f32::NEG_INFINITY, |x: f32, y: f32| x + y),
        Data::F64(v) => typed!(v, F64, f64, 0f64, f64::NEG_INFINITY, |x: f64, y: f64| x + y),
        Data::I32(v) => typed!(v, I32, i32, 0i32, i32::MIN, |x: i32, y: i32| x.wrapping_add(y)),
        Data::I64(v) => typed!(v, I64, i64, 0i64, i64::MIN, |x: i64, y: i64| x.wrapping_add(y)),
        Data::Bool(_) => unreachable!("the verifier rejects reductions of booleans"),
    };
    Value { shape, data }
}

/// Maximum that propagates NaN for floats, plain for integers.
pub(super) fn max_of<T: MaxOf>(a: T, b: T) -> T {
    T::max_of(a, b)
}

pub(super) trait MaxOf: Copy {
    fn max_of(a: Self, b: Self) -> Self;
}
impl MaxOf for f32 {
    fn max_of(a: Self, b: Self) -> Self {
        nan_max(a, b)
    }
}
impl MaxOf for f64 {
    fn max_of(a: Self, b: Self) -> Self {
        nan_max(a, b)
    }
}
impl MaxOf for i32 {
    fn max_of(a: Self, b: Self) -> Self {
        a.max(b)
    }
}
impl MaxOf for i64 {
    fn max_of(a: Self, b: Self) -> Self {
        a.max(b)
    }
}

/// `sum / len` for floats (the verifier allows the mean only on floats).
pub(super) fn mean_of<T: MeanOf>(sum: T, len: usize) -> T {
    T::mean_of(sum, len)
}

pub(super) trait MeanOf {
    fn mean_of(sum: Self, len: usize) -> Self;
}
impl MeanOf for f32 {
    fn mean_of(sum: Self, len: usize) -> Self {
        sum / len as f32
    }
}
impl MeanOf for f64 {
    fn mean_of(sum: Self, len: usize) -> Self {
        sum / len as f64
    }
}
impl MeanOf for i32 {
    fn mean_of(_: Self, _: usize) -> Self {
        unreachable!("the verifier allows the mean only on floats")
    }
}
impl MeanOf for i64 {
    fn mean_of(_: Self, _: usize) -> Self {
        unreachable!("the verifier allows the mean only on floats")
    }
}

/// Elementwise comparison of `x` and `y` (of one shape): 1 where
/// `predicate` holds (ordered: false when a NaN is involved).
pub(super) fn compare(predicate: tempo_passes::program::Predicate, x: &Value, y: &Value) -> Value {
    let flags = (0..x.data.len())
        .map(|k| {
            let ordering = match (&x.data, &y.data) {
                (Data::I32(p), Data::I32(q)) => Some(p[k].cmp(&q[k])),
                (Data::I64(p), Data::I64(q)) => Some(p[k].cmp(&q[k])),
                (Data::F32(p), Data::F32(q)) => p[k].partial_cmp(&q[k]),
                (Data::F64(p), Data::F64(q)) => p[k].partial_cmp(&q[k]),
                _ => unreachable!("the verifier checks compared types"),
            };
            ordering.is_some_and(|o| predicate.holds(o)) as u8
        })
        .collect();
    Value { shape: x.shape.clone(), data: Data::Bool(flags) }
}

/// `a` where `condition` holds, else `b` (all three broadcast to one
/// shape), of `element`s.
pub(super) fn select(condition: &Value, a: &Value, b: &Value, element: ElementType) -> Result<Value, String> {
    let shape = broadcast_shape(&[&condition.shape, &a.shape, &b.shape])?;
    let (condition, x, y) = (broadcast_to(condition, &shape), broadcast_to(a, &shape), broadcast_to(b, &shape));
    let Data::Bool(flags) = &condition.data else { unreachable!("the verifier checks the condition") };
    let parts: Vec<Data> =
        flags.iter().enumerate().map(|(k, &f)| slice(if f != 0 { &x.data } else { &y.data }, k, 1)).collect();
    Ok(Value { shape, data: concat(element, &parts) })
}

/// The shape of a movement's result of type `ty` whose first operand has
/// shape `input`: dynamic sizes of a reshape or expand come from the
/// operand.
pub(super) fn moved_shape(movement: &Movement, ty: &PointType, input: &[usize]) -> Vec<usize> {
    match movement {
        Movement::Reshape => {
            let known: usize = ty.shape.iter().filter(|&&d| d != DYNAMIC).map(|&d| d as usize).product();
            let total: usize = input.iter().product();
            ty.shape
                .iter()
                .map(|&d| if d == DYNAMIC { total.checked_div(known).unwrap_or(0) } else { d as usize })
                .collect()
        }
        Movement::Expand => {
            let skip = ty.shape.len() - input.len();
            ty.shape.iter().enumerate().map(|(k, &d)| if d == DYNAMIC { input[k - skip] } else { d as usize }).collect()
        }
        _ => static_shape(ty),
    }
}
