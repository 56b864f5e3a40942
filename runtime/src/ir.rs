//! Queries of a module's IR that the runtime makes (which ops a compiled
//! program uses: the OpenMP runtime, GPU launches, MPI collectives).

/// Whether an op under `op` has a name starting with `prefix`.
pub fn contains_op(op: melior::ir::OperationRef, prefix: &str) -> bool {
    contains_op_with(op, prefix, None)
}

/// Whether an op under `op` has a name starting with `prefix` and, when
/// `attribute` is given, an attribute of that name.
pub(crate) fn contains_op_with(op: melior::ir::OperationRef, prefix: &str, attribute: Option<&str>) -> bool {
    struct Search<'a> {
        prefix: &'a [u8],
        attribute: Option<&'a str>,
        found: bool,
    }
    unsafe extern "C" fn visit(op: mlir_sys::MlirOperation, search: *mut std::ffi::c_void) -> mlir_sys::MlirWalkResult {
        // SAFETY: the walk passes the `Search` given below and live ops.
        unsafe {
            let search = &mut *(search as *mut Search);
            let name = mlir_sys::mlirIdentifierStr(mlir_sys::mlirOperationGetName(op));
            let bytes = std::slice::from_raw_parts(name.data as *const u8, name.length);
            let has = |name: &str| {
                let attribute = mlir_sys::mlirOperationGetAttributeByName(op, melior::StringRef::new(name).to_raw());
                !attribute.ptr.is_null()
            };
            if bytes.starts_with(search.prefix) && search.attribute.is_none_or(has) {
                search.found = true;
                return mlir_sys::MlirWalkResult_MlirWalkResultInterrupt;
            }
        }
        mlir_sys::MlirWalkResult_MlirWalkResultAdvance
    }
    let mut search = Search { prefix: prefix.as_bytes(), attribute, found: false };
    unsafe {
        mlir_sys::mlirOperationWalk(
            op.to_raw(),
            Some(visit),
            &mut search as *mut Search as *mut std::ffi::c_void,
            mlir_sys::MlirWalkOrder_MlirWalkPreOrder,
        )
    };
    search.found
}
