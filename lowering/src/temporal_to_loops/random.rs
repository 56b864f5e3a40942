//! Seeded random values (`temporal.random`) in `lower-temporal-to-loops`:
//! the same bits as `tempo_passes::program::random_bits`, computed in the
//! generated code, built as typed IR.

use super::kernels::element_type;
use super::views::View;
use crate::ir_builder::Builder;
use melior::ir::{AffineMap, Type, Value};
use tempo_passes::program::{ElementType, PointType};

/// Each element of `target` computed from the seed, the point's
/// `coordinates` and the element's row-major position, with the
/// arithmetic of `tempo_passes::program::random_bits`: splitmix64 over the
/// seed mixed with each coordinate and the position, the top 24 bits as a
/// uniform number in [0, 1), and for `normal` the Box-Muller transform of
/// two such numbers.
pub(super) fn build<'c, 'a>(
    b: &Builder<'c, 'a>,
    seed: i64,
    normal: bool,
    coordinates: &[Value<'c, 'a>],
    target: &View<'c, 'a>,
    ty: &PointType,
) -> Result<(), String> {
    let i64_type = b.integer_type(64);
    let e = element_type(b, ty.element);
    let coordinates: Vec<Value> = coordinates.iter().map(|&d| b.index_cast(d, i64_type)).collect::<Result<_, _>>()?;
    let rank = ty.shape.len();
    let identity = AffineMap::multi_dim_identity(b.context(), rank);
    let (body, _) = b.generic(&[], &[target.value], &[identity], &vec!["parallel"; rank])?;
    // Row-major position of the element.
    let mut position = body.index(0)?;
    for k in 0..rank {
        let stride: i64 = ty.shape[k + 1..].iter().product();
        let index = body.linalg_index(k)?;
        let term = body.arith("muli", index, body.index(stride)?)?;
        position = body.arith("addi", position, term)?;
    }
    let element = body.index_cast(position, i64_type)?;
    let golden = body.i64(-7046029254386353131)?;
    let first = body.i64(-4658895280553007687)?;
    let second = body.i64(-7723592293110705685)?;
    let shifts = [body.i64(30)?, body.i64(27)?, body.i64(31)?, body.i64(40)?];
    let splitmix = |x: Value<'c, 'a>| -> Result<Value<'c, 'a>, String> {
        let z = body.arith("addi", x, golden)?;
        let z = body.arith("xori", z, body.arith("shrui", z, shifts[0])?)?;
        let z = body.arith("muli", z, first)?;
        let z = body.arith("xori", z, body.arith("shrui", z, shifts[1])?)?;
        let z = body.arith("muli", z, second)?;
        body.arith("xori", z, body.arith("shrui", z, shifts[2])?)
    };
    let mut x = body.i64(seed)?;
    for &c in coordinates.iter().chain(std::iter::once(&element)) {
        x = splitmix(body.arith("xori", x, c)?)?;
    }
    let f64_type = Type::float64(b.context());
    let scale = body.float(5.9604644775390625e-08, f64_type)?;
    let uniform = |bits: Value<'c, 'a>| -> Result<Value<'c, 'a>, String> {
        let top = body.arith("shrui", bits, shifts[3])?;
        let u = body.arith("mulf", body.convert("arith.uitofp", top, f64_type)?, scale)?;
        match ty.element {
            ElementType::F64 => Ok(u),
            _ => body.convert("arith.truncf", u, e),
        }
    };
    let u1 = uniform(x)?;
    let value = if normal {
        let u2 = uniform(splitmix(x)?)?;
        let tau = if ty.element == ElementType::F64 { std::f64::consts::TAU } else { std::f32::consts::TAU as f64 };
        let rest = body.arith("subf", body.float(1.0, e)?, u1)?;
        let scaled = body.arith("mulf", body.float(-2.0, e)?, body.unary("math.log", rest)?)?;
        let radius = body.unary("math.sqrt", scaled)?;
        let angle = body.arith("mulf", body.float(tau, e)?, u2)?;
        body.arith("mulf", radius, body.unary("math.cos", angle)?)?
    } else {
        u1
    };
    body.yield_values("linalg.yield", &[value])
}
