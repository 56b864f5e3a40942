//! The text of dense constants (exact: floats by their bits), which
//! constants of the program model keep beside their values; and, for the
//! tests, [`program_text`]: a [`Program`](crate::program::Program) printed as
//! temporal-dialect text (passes write their result as typed IR:
//! [`crate::emit`]).

use crate::program::{ElementType, PointType};

#[cfg(test)]
pub mod program_text;
#[cfg(test)]
pub use program_text::program_text;

/// A dense attribute with exact element values (floats as bit patterns):
/// `dense<[0x3F800000, ...]> : tensor<2xf32>`.
pub fn dense(values: &[f64], ty: &PointType) -> String {
    dense_text(&values.iter().map(|&v| float_element(v, ty.element)).collect::<Vec<_>>(), ty)
}

/// One element of a float constant as the attribute text writes it (floats
/// by their bits, so they round-trip exactly).
fn float_element(v: f64, element: ElementType) -> String {
    match element {
        ElementType::F32 => format!("0x{:08X}", (v as f32).to_bits()),
        ElementType::F64 => format!("0x{:016X}", v.to_bits()),
        ElementType::I1 => (v != 0.0).to_string(),
        ElementType::I32 | ElementType::I64 => (v as i64).to_string(),
    }
}

/// One element of an integer constant, exact.
fn integer_element(v: i64, element: ElementType) -> String {
    match element {
        ElementType::I1 => (v != 0).to_string(),
        ElementType::I32 => (v as i32).to_string(),
        _ => v.to_string(),
    }
}

/// `dense<v> : ty`, one value everywhere (MLIR's splat form), of any size.
pub fn dense_splat(value: f64, ty: &PointType) -> String {
    format!("dense<{}> : {ty}", float_element(value, ty.element))
}

/// [`dense_splat`] of an integer, exact.
pub fn dense_splat_integer(value: i64, ty: &PointType) -> String {
    format!("dense<{}> : {ty}", integer_element(value, ty.element))
}

/// `dense<...> : ty` of integer `values` (exact, whatever their size; for
/// a float type, converted to it).
pub fn dense_integers(values: &[i64], ty: &PointType) -> String {
    if ty.element.is_float() {
        return dense(&values.iter().map(|&v| v as f64).collect::<Vec<_>>(), ty);
    }
    dense_text(&values.iter().map(|&v| integer_element(v, ty.element)).collect::<Vec<_>>(), ty)
}

/// `dense<...> : ty` of elements already printed.
fn dense_text(elements: &[String], ty: &PointType) -> String {
    fn nested(elements: &[String], shape: &[i64]) -> String {
        match shape.split_first() {
            None => elements.first().cloned().unwrap_or_else(|| "0".into()),
            Some((&n, rest)) => {
                let stride: usize = rest.iter().product::<i64>() as usize;
                let parts: Vec<String> =
                    (0..n as usize).map(|i| nested(&elements[i * stride..(i + 1) * stride], rest)).collect();
                format!("[{}]", parts.join(", "))
            }
        }
    }
    if elements.len() != ty.num_elements() {
        // Wrong element count: let MLIR report the mismatch.
        return format!("dense<[]> : {ty}");
    }
    // One value everywhere: the splat form (a parameter-sized constant of
    // an optimizer is one number, not megabytes of text).
    if let [first, rest @ ..] = elements
        && !rest.is_empty()
        && rest.iter().all(|v| v == first)
    {
        return format!("dense<{first}> : {ty}");
    }
    format!("dense<{}> : {ty}", nested(elements, &ty.shape))
}
