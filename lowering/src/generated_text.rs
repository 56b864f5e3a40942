//! Helpers for the MLIR text the lowering to loops generates: value and
//! symbol names, renaming values in generated text, reading a memref
//! type's layout back, broadcasting indices. Shared by the loop lowering
//! (`temporal_to_loops`), the CPU contraction kernel (`contraction`) and
//! the schedule's IR (`schedule_pass`); they go away as the lowering
//! builds typed IR instead of text (issue 29).

/// `name` as a valid SSA value or symbol name: characters other than ASCII
/// letters, digits and `_` become `_`.
pub(crate) fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// The sizes, element type, strides and offset of a memref type (`?` for
/// dynamic ones); an identity layout gives row-major strides.
pub(crate) fn memref_layout(ty: &str) -> Option<(Vec<String>, String, Vec<String>, String)> {
    let inner = ty.strip_prefix("memref<")?.strip_suffix('>')?;
    let (shape, layout) = match inner.split_once(", ") {
        Some((shape, layout)) => (shape, Some(layout)),
        None => (inner, None),
    };
    let mut parts: Vec<String> = shape.split('x').map(str::to_string).collect();
    let element = parts.pop()?;
    let dims = parts;
    let (strides, offset) = match layout {
        None => {
            let mut strides = vec!["1".to_string(); dims.len()];
            for k in (0..dims.len().saturating_sub(1)).rev() {
                strides[k] = match (strides[k + 1].parse::<i64>(), dims[k + 1].parse::<i64>()) {
                    (Ok(s), Ok(d)) => (s * d).to_string(),
                    _ => "?".to_string(),
                };
            }
            (strides, "0".to_string())
        }
        Some(layout) => {
            let rest = layout.strip_prefix("strided<[")?;
            let (list, rest) = rest.split_once(']')?;
            let strides: Vec<String> = if list.trim().is_empty() {
                Vec::new()
            } else {
                list.split(',').map(|s| s.trim().to_string()).collect()
            };
            let offset =
                rest.split_once("offset:").map_or("0".to_string(), |(_, o)| o.trim_end_matches('>').trim().to_string());
            (strides, offset)
        }
    };
    (strides.len() == dims.len()).then_some((dims, element, strides, offset))
}
