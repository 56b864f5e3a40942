//! The processes of a run in `lower-temporal-to-loops`: `temporal.rank`,
//! `temporal.world_size` and `temporal.all_reduce`, lowered to MLIR's `mpi`
//! dialect (`mpi.comm_world`, `mpi.comm_rank`, `mpi.allreduce`), which
//! `convert-to-llvm` turns into calls of the MPI library for the ABI of the
//! module's DLTI entry `"MPI:Implementation"` (set here from the pass's
//! option `mpi-implementation`). On the GPU target (`gpu=true`) the
//! all-reduce is a call of the runtime's [`GPU_ALL_REDUCE`] on the flat
//! buffer instead (NCCL on the kernels' stream; `tempo_runtime::nccl`).
//!
//! Gaps of MLIR 22.1.8's `mpi` lowering worked around here:
//! - `mpi.comm_size` is not lowered (left in the IR, no error): the number
//!   of processes comes from the runtime's [`WORLD_SIZE`] function, called
//!   once at entry.
//! - `mpi.allreduce` on a memref of rank 2 or more passes the size of
//!   dimension 0 as the count: the value is copied into a contiguous 1-D
//!   buffer (allocated once), reduced in place there, and copied out.
//! - For Open MPI, `MPI_SUM`/`MPI_MAX`/`MPI_MIN` are lowered to globals
//!   named `ompi_mpi_sum`, ... that Open MPI does not define (its are
//!   `ompi_mpi_op_sum`, ...): the runtime defines MLIR's names
//!   (`runtime/src/mpi.rs`, `symbols`).

use super::node_kinds::Elementwise;
use super::views::{View, plain_type, reshaped, view_type};
use super::{Built, Emitter};
use crate::ir_builder::{Builder, declare};
use melior::ir::attribute::IntegerAttribute;
use melior::ir::r#type::IntegerType;
use melior::ir::{Attribute, Location, Type, attribute::AttributeLike, operation::OperationLike};
use tempo_passes::diagnostics::PassDiagnostic;
use tempo_passes::program::{BinaryKind, Collective, PointType, Program};

pub use tempo_passes::collectives::{GPU_ALL_REDUCE, WORLD_SIZE, element_code, reduction_code};

/// The MPI ABIs MLIR's lowering knows (values of the DLTI entry).
const IMPLEMENTATIONS: [&str; 2] = ["MPICH", "OpenMPI"];

/// For a program using the processes of its run, sets the module's DLTI
/// entry `"MPI:Implementation"` to `option` ("MPICH" when not given,
/// MLIR's default); a module that already names another implementation is
/// refused (compiled code works only with the library it was lowered
/// for). (The verifier refuses all-reduces of booleans: every target
/// reduces f32, f64, i32 and i64.)
pub(super) fn prepare<'c>(
    module: melior::ir::OperationRef<'c, '_>,
    program: &Program<'c>,
    option: Option<&str>,
) -> Result<(), Vec<PassDiagnostic<'c>>> {
    let fail = |location: Location<'c>, message: String| Err(vec![PassDiagnostic::new(location, message)]);
    let nodes = program.tensors.iter().flat_map(|t| &t.branches).flat_map(|b| &b.nodes);
    if !nodes.into_iter().any(|n| n.kind.is_collective_or_process()) {
        return Ok(());
    }
    if let Some(value) = option.filter(|v| !IMPLEMENTATIONS.contains(v)) {
        return fail(
            module.location(),
            format!("mpi-implementation: unknown MPI implementation '{value}' (MPICH or OpenMPI)"),
        );
    }
    let existing = module.attribute("dlti.map").ok().map(|a| a.to_string());
    let named = existing.as_deref().map(|text| {
        IMPLEMENTATIONS.iter().copied().find(|v| text.contains(&format!("\"MPI:Implementation\" = \"{v}\"")))
    });
    match (named, option) {
        (Some(Some(found)), Some(wanted)) if found != wanted => fail(
            module.location(),
            format!(
                "the module is for the MPI implementation {found} (its DLTI entry \"MPI:Implementation\"), but the \
                 MPI library of this run is {wanted}: compiled code works only with the implementation it is \
                 lowered for"
            ),
        ),
        (Some(Some(_)), _) => Ok(()),
        (Some(None), _) => fail(
            module.location(),
            "the module's dlti.map has no \"MPI:Implementation\" entry: add one (MPICH or OpenMPI)".into(),
        ),
        (None, wanted) => {
            let wanted = wanted.unwrap_or("MPICH");
            let text = format!("#dlti.map<\"MPI:Implementation\" = \"{wanted}\">");
            let context = module.context();
            let attribute = Attribute::parse(unsafe { context.to_ref() }, &text)
                .ok_or_else(|| vec![PassDiagnostic::new(module.location(), "compiler fault: a DLTI entry")])?;
            // SAFETY: setting an attribute on the live module operation.
            unsafe {
                mlir_sys::mlirOperationSetAttributeByName(
                    module.to_raw(),
                    melior::StringRef::new("dlti.map").to_raw(),
                    attribute.to_raw(),
                )
            };
            Ok(())
        }
    }
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// `temporal.rank` into `target`: `mpi.comm_rank` of `mpi.comm_world`,
    /// asked once at entry (host code: on the GPU target the store is in
    /// a kernel, which gets the value as an argument).
    pub(super) fn rank(&mut self, target: &View<'c, 'a>, ty: &PointType, b: &Builder<'c, 'a>) -> Built<()> {
        let entry = self.function.entry.at(b.location);
        let comm = entry.value("mpi.comm_world", &[], communicator(&entry)?, &[])?;
        let rank = entry.value("mpi.comm_rank", &[comm], entry.integer_type(32), &[])?;
        let index = entry.index_cast(rank, entry.index_type())?;
        b.store(super::branch_body::index_as(b, index, ty.element)?, target.value, &[])
    }

    /// `temporal.world_size` into `target`: the runtime's [`WORLD_SIZE`]
    /// (`mpi.comm_size` is not lowered by MLIR 22.1.8), called at entry.
    pub(super) fn world_size(&mut self, target: &View<'c, 'a>, ty: &PointType, b: &Builder<'c, 'a>) -> Built<()> {
        let size = self.world_size_index(b.location)?;
        b.store(super::branch_body::index_as(b, size, ty.element)?, target.value, &[])
    }

    /// The number of processes as an index, from the runtime, at entry.
    fn world_size_index(&mut self, location: Location<'c>) -> Built<melior::ir::Value<'c, 'a>> {
        let entry = self.function.entry.at(location);
        let word = entry.integer_type(64);
        declare(entry.module()?, WORLD_SIZE, &[], &[word])?;
        let size = entry.call(WORLD_SIZE, &[], &[word])?[0];
        entry.index_cast(size, entry.index_type())
    }

    /// `temporal.all_reduce` of `operand` (of type `ty`) into `target`: the
    /// operand copied into a contiguous 1-D buffer (allocated once; MLIR's
    /// lowering counts only dimension 0 of a memref of higher rank), an
    /// in-place `mpi.allreduce` on it, the result copied into `target`
    /// (for the mean, divided by the number of processes).
    pub(super) fn all_reduce(
        &mut self,
        kind: Collective,
        operand: &View<'c, 'a>,
        target: &View<'c, 'a>,
        ty: &PointType,
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        let context = self.context;
        let entry = self.function.entry.at(b.location);
        let count = ty.num_elements() as i64;
        let flat = PointType { shape: vec![count], element: ty.element };
        let buffer = entry.alloc(plain_type(context, &flat), &[])?;
        self.function.exit.op("memref.dealloc", &[buffer], &[], &[])?;
        let flat_view = View::fixed(entry.cast(buffer, view_type(context, &flat))?, &flat);
        let shaped = reshaped(&entry, &flat_view, &flat, ty)?
            .ok_or("compiler fault: the all-reduce buffer does not take the value's shape")?;
        let copy = Elementwise::Cast(ty.element);
        // On the GPU target, the copies of a single value are kernels of
        // one thread (as `branch_body` makes for other single values),
        // the runtime's call between them on the host.
        let gpu = self.config().gpu;
        let one_point = |b: &Builder<'c, 'a>| -> Built<Option<Builder<'c, 'a>>> {
            Ok(if gpu && ty.shape.is_empty() { Some(b.scf_parallel(&[b.index(1)?])?.0) } else { None })
        };
        let unit = one_point(b)?;
        self.elementwise(&[operand], &[ty.element], &shaped, ty, copy, unit.as_ref().unwrap_or(b))?;
        if gpu {
            // The runtime's all-reduce of the flat buffer (device memory on
            // the CUDA target: NCCL on the kernels' stream).
            let word = b.integer_type(64);
            let half = b.integer_type(32);
            declare(b.module()?, GPU_ALL_REDUCE, &[word, word, half, half], &[])?;
            let address = b.value("memref.extract_aligned_pointer_as_index", &[buffer], b.index_type(), &[])?;
            let address = b.index_cast(address, word)?;
            let element =
                element_code(ty.element).ok_or("compiler fault: an all-reduce of booleans on the GPU target")?;
            let op = reduction_code(kind);
            let arguments = [address, b.i64(count)?, b.i32(element as i64)?, b.i32(op as i64)?];
            b.call(GPU_ALL_REDUCE, &arguments, &[])?;
        } else {
            let comm = b.value("mpi.comm_world", &[], communicator(b)?, &[])?;
            // MPI_OpClassEnum: MPI_MAX 1, MPI_MIN 2, MPI_SUM 3.
            let class = match kind {
                Collective::Sum | Collective::Mean => 3,
                Collective::Max => 1,
                Collective::Min => 2,
            };
            let class: Attribute = IntegerAttribute::new(IntegerType::new(context, 32).into(), class).into();
            b.op("mpi.allreduce", &[buffer, buffer, comm], &[], &[("op", class)])?;
        }
        if kind != Collective::Mean {
            let unit = one_point(b)?;
            return self.elementwise(&[&shaped], &[ty.element], target, ty, copy, unit.as_ref().unwrap_or(b));
        }
        // The mean: the sum divided by the number of processes (a scalar
        // of the element type, made at entry).
        let scalar = PointType { shape: vec![], element: ty.element };
        let size = self.world_size_index(b.location)?;
        let entry = self.function.entry.at(b.location);
        let divisor = entry.alloc(plain_type(context, &scalar), &[])?;
        self.function.exit.op("memref.dealloc", &[divisor], &[], &[])?;
        entry.store(super::branch_body::index_as(&entry, size, ty.element)?, divisor, &[])?;
        let divisor = View::fixed(entry.cast(divisor, view_type(context, &scalar))?, &scalar);
        let divide = Elementwise::Binary(BinaryKind::Div);
        let unit = one_point(b)?;
        let b = unit.as_ref().unwrap_or(b);
        self.elementwise(&[&shaped, &divisor], &[ty.element, ty.element], target, ty, divide, b)
    }
}

/// `!mpi.comm`.
fn communicator<'c>(b: &Builder<'c, '_>) -> Built<Type<'c>> {
    Type::parse(b.context(), "!mpi.comm").ok_or_else(|| "compiler fault: the mpi dialect is not available".into())
}
