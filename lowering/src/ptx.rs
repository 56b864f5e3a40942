//! The PTX of the kernels of a module lowered by `temporal-to-cuda`: the
//! text of each `gpu.binary` op's objects (`gpu-module-to-binary{format=isa}`).

use melior::ir::{OperationRef, RegionLike, attribute::AttributeLike, operation::OperationLike};

/// `(binary symbol, PTX text)` for every object of every `gpu.binary` op
/// directly in `module`, in module order.
pub fn kernels(module: OperationRef) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(body) = module.region(0).ok().and_then(|r| r.first_block()) else { return out };
    for op in tempo_dialects::block_operations(body) {
        if op.name().as_string_ref().as_str() != Ok("gpu.binary") {
            continue;
        }
        let symbol = op.attribute("sym_name").map(|a| a.to_string()).unwrap_or_default();
        let symbol = symbol.trim_matches('"').to_string();
        let Ok(objects) = op.attribute("objects") else { continue };
        // SAFETY: `objects` is an array attribute of `#gpu.object`s (the
        // op's verifier checks it).
        unsafe {
            let count = mlir_sys::mlirArrayAttrGetNumElements(objects.to_raw());
            for k in 0..count {
                let object = mlir_sys::mlirArrayAttrGetElement(objects.to_raw(), k);
                let text = mlir_sys::mlirGPUObjectAttrGetObject(object);
                let bytes = std::slice::from_raw_parts(text.data as *const u8, text.length);
                let ptx = String::from_utf8_lossy(bytes).trim_end_matches('\0').to_string();
                out.push((symbol.clone(), ptx));
            }
        }
    }
    out
}
