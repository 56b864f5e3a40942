//! MLIR dialects of the Tempo compiler, declared in Rust with the
//! `tempo_dialect_macros::dialect!` macro and registered through IRDL, so the
//! same definitions load into our tools and into stock `mlir-opt
//! --irdl-file=...`.

pub mod store;
pub mod temporal;

use melior::{
    Context,
    dialect::DialectRegistry,
    ir::{BlockLike, BlockRef, Module, OperationRef, RegionLike, operation::OperationLike},
    utility::{load_irdl_dialects, register_all_dialects, register_all_llvm_translations},
};

/// The operations of `block`, in order (melior 0.27 has no iterator for it).
pub fn block_operations<'c, 'a>(block: BlockRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut ops = Vec::new();
    let mut next = block.first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        ops.push(op);
    }
    ops
}

/// The operations directly inside `op`: of every block of every region,
/// in order (what a walk of the IR visits one level down).
pub fn nested_operations<'c, 'a>(op: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut ops = Vec::new();
    for r in 0..op.region_count() {
        let Ok(region) = op.region(r) else { continue };
        let mut block = region.first_block();
        while let Some(b) = block {
            ops.extend(block_operations(b));
            block = b.next_in_region();
        }
    }
    ops
}

/// The IRDL text of every dialect of the project, as one module.
pub fn irdl_module_text() -> String {
    format!("module {{\n{}{}}}\n", indent(temporal::IRDL), indent(store::IRDL))
}

fn indent(text: &str) -> String {
    text.lines().map(|line| format!("  {line}\n")).collect()
}

/// Creates an MLIR context with every upstream dialect registered and loaded,
/// the LLVM translations registered, and the project's IRDL dialects loaded
/// (exactly once, as loading twice into one context crashes MLIR).
pub fn create_context() -> Context {
    let registry = DialectRegistry::new();
    register_all_dialects(&registry);
    let context = Context::new_with_registry(&registry, false);
    context.load_all_available_dialects();
    register_all_llvm_translations(&context);
    load_project_dialects(&context);
    context
}

/// Loads the project's IRDL dialects (`temporal`, `store`) into `context`
/// unless they are there (loading twice into one context crashes MLIR).
pub fn load_project_dialects(context: &Context) {
    let loaded = |name: &str| unsafe {
        !mlir_sys::mlirContextGetOrLoadDialect(context.to_raw(), melior::StringRef::new(name).to_raw()).ptr.is_null()
    };
    if loaded("temporal") && loaded("store") {
        return;
    }
    let module = Module::parse(context, &irdl_module_text())
        .expect("the generated IRDL text parses (checked by the dialect tests)");
    assert!(load_irdl_dialects(&module), "the generated IRDL loads");
}

#[cfg(test)]
mod tests {
    use super::*;
    use melior::ir::RegionLike;

    #[test]
    fn irdl_text_snapshot() {
        insta::assert_snapshot!(irdl_module_text());
    }

    #[test]
    fn catalogue_lists_every_op_once() {
        let catalogues: [Vec<(&str, &str)>; 2] = [
            temporal::OPS.iter().map(|op| (op.name, op.summary)).collect(),
            store::OPS.iter().map(|op| (op.name, op.summary)).collect(),
        ];
        for ops in catalogues {
            let mut names: Vec<_> = ops.iter().map(|op| op.0).collect();
            let count = names.len();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), count);
            assert!(ops.iter().all(|op| !op.1.is_empty()));
        }
        assert_eq!(store::OPS.len(), 11);
    }

    #[test]
    fn program_round_trips_and_typed_views_work() {
        let context = create_context();
        let source = r#"
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
  "temporal.define"(%x) ({
    %c = "temporal.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    "gpu.yield"(%c) : (tensor<i64>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%x) : (!temporal.rtensor) -> ()
}
"#;
        let module = Module::parse(&context, source).expect("parses");
        assert!(module.as_operation().verify());
        let mut defines = 0;
        for op in block_operations(module.body()) {
            if let Some(define) = temporal::DefineOp::try_from(op) {
                defines += 1;
                assert!(define.when().is_some());
                assert_eq!(block_operations(define.body().first_block().unwrap()).len(), 2);
            }
        }
        assert_eq!(defines, 1);
        let printed = module.as_operation().to_string();
        let reparsed = Module::parse(&context, &printed).expect("re-parses");
        assert_eq!(reparsed.as_operation().to_string(), printed);
    }

    #[test]
    fn builders_make_verifiable_ops() {
        use melior::ir::{
            Block, Location, Region,
            attribute::{ArrayAttribute, StringAttribute, TypeAttribute},
            r#type::Type,
        };
        let context = create_context();
        let location = Location::unknown(&context);
        let module = Module::new(location);
        let point = Type::parse(&context, "tensor<4xf32>").unwrap();
        let handle_type = Type::parse(&context, temporal::RTENSOR_TYPE).unwrap();
        module.body().append_operation(temporal::DimOp::build(
            &context,
            location,
            StringAttribute::new(&context, "t").into(),
            StringAttribute::new(&context, "T").into(),
        ));
        let input = module.body().append_operation(temporal::InputOp::build(
            &context,
            location,
            StringAttribute::new(&context, "x").into(),
            ArrayAttribute::new(&context, &[StringAttribute::new(&context, "t").into()]).into(),
            TypeAttribute::new(point).into(),
            handle_type,
        ));
        let view = temporal::InputOp::try_from(input).unwrap();
        module.body().append_operation(temporal::OutputOp::build(&context, location, view.handle()));
        let _ = (Block::new(&[]), Region::new());
        assert!(module.as_operation().verify(), "{}", module.as_operation());
    }
}
