//! Contractions in `lower-temporal-to-loops`: `matmul` with any number of
//! batch dimensions (broadcast under NumPy's rules) and `einsum`.
//!
//! - A matmul of ranks `(2, 2)`, `(1, 2)`, `(2, 1)` or `(3, 3)` with one
//!   batch size goes straight to the register-tiled kernel
//!   ([`super::matmul_kernel`]), or to a `linalg` named op where the kernel
//!   does not apply (integers).
//! - Other batched matmuls loop over the result's batch dimensions
//!   (`scf.for`) and multiply rank-reduced 2-D subviews of the operands (a
//!   size-1 or missing batch dimension of an operand stays at index 0), so
//!   no operand is copied or broadcast in memory.
//! - An einsum that is a batched matmul up to a permutation of each
//!   operand (one summed label; the result is the batch labels, then one
//!   label of the first operand, then one of the second) becomes that matmul
//!   of transposed views (`memref.transpose`, no copy). Any other einsum is
//!   one `linalg.generic` over all labels, result labels first (parallel),
//!   then the summed ones (reduction) in order of first appearance, after a
//!   fill with zero: the loops `convert-linalg-to-loops` makes visit the
//!   summed points in the interpreter's order, so results agree bit for bit.
//!
//! Assumes shapes as the verifier checked them (`matmul_shape`,
//! `Einsum::label_sizes`) and dynamic sizes proved equal.

use super::kernels::{element_type, loop_nest};
use super::views::{self, View, same, static_size, unit_inner_stride};
use super::{Emitter, library_gemm, matmul_kernel, scalar};
use crate::ir_builder::{Builder, Extent};
use melior::ir::attribute::{ArrayAttribute, DenseI32ArrayAttribute};
use melior::ir::operation::OperationBuilder;
use melior::ir::{AffineExpr, AffineMap, Attribute, Block, BlockLike, Identifier, Region, RegionLike, Type, Value};
use tempo_passes::program::Einsum;
use tempo_passes::program::{ElementType, PointType};

/// An epilogue for the next matrix product (see `matmul_kernel`): the
/// chain's leaves other than the product, which leaf the product is, and
/// the chain.
pub(super) struct PendingEpilogue<'c, 'a> {
    pub leaves: Vec<View<'c, 'a>>,
    pub sum_argument: usize,
    pub chain: scalar::Chain,
}

/// How a matrix product is built.
enum Strategy {
    /// The register-tiled kernel, as planned.
    Tiled(matmul_kernel::Plan),
    /// A call of the runtime's GEMM.
    Library { parallel: bool },
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// `target = a @ b` (`target` is overwritten).
    pub(super) fn matmul(
        &mut self,
        a: &View<'c, 'a>,
        b: &View<'c, 'a>,
        target: &View<'c, 'a>,
        element: ElementType,
        at: &Builder<'c, 'a>,
    ) -> Built<()> {
        let (ra, rb) = (a.sizes.len(), b.sizes.len());
        // (For the GPU, a product summing a growing range, in two stages:
        // the same sums as the einsum of these labels.)
        let labels = match (ra, rb) {
            (1, 2) => Some((vec!['k'], vec!['k', 'n'], vec!['n'])),
            (2, 1) => Some((vec!['m', 'k'], vec!['k'], vec!['m'])),
            (2, 2) => Some((vec!['m', 'k'], vec!['k', 'n'], vec!['m', 'n'])),
            _ => None,
        };
        if let Some((la, lb, result)) = labels {
            let spec = Einsum { operands: vec![la, lb], result };
            if self.gpu_split_einsum(&spec, &[a, b], target, element, at)? {
                return Ok(());
            }
        }
        let unit = |e: &Extent| matches!(e, Extent::Static(1));
        let one_batch =
            ra == 3 && rb == 3 && (same(&a.sizes[0], &b.sizes[0]) || (!unit(&a.sizes[0]) && !unit(&b.sizes[0])));
        if matches!((ra, rb), (2, 2) | (1, 2) | (2, 1)) || one_batch {
            return self.matmul_kernel(a, b, target, element, at);
        }
        // A batch of matrices by one shared matrix (the cotangents of all
        // steps by a transposed weight, `[T, B, n] x [n, k]`): one product
        // of the batch's rows, where the batched operand and the result are
        // contiguous (each element still sums its terms in order).
        if rb == 2
            && ra >= 3
            && self.nest.epilogue.is_none()
            && let Some((rows_a, rows_c)) = rows_collapsed(a, target, element, at)?
        {
            return self.matmul_kernel(&rows_a, b, &rows_c, element, at);
        }
        // Loops over the batch dimensions of the result.
        let batch = &target.sizes[..target.sizes.len() - 2];
        let order: Vec<usize> = (0..batch.len()).collect();
        let (inner, ivs) = loop_nest(at, batch, &order)?;
        let x = views::matrix(&inner, a, &ivs, batch)?;
        let y = views::matrix(&inner, b, &ivs, batch)?;
        let z = views::matrix(&inner, target, &ivs, batch)?;
        self.matmul_kernel(&x, &y, &z, element, &inner)
    }

    /// A contraction of ranks `(2, 2)`, `(1, 2)`, `(2, 1)` or `(3, 3)`
    /// (one batch size): the vector kernel, or a `linalg` named op after a
    /// fill with zero (for the GPU, whose mapping parallelizes `linalg`
    /// ops, or the shared-memory kernel of [`super::gpu_matmul`]).
    fn matmul_kernel(
        &mut self,
        a: &View<'c, 'a>,
        b: &View<'c, 'a>,
        target: &View<'c, 'a>,
        element: ElementType,
        at: &Builder<'c, 'a>,
    ) -> Built<()> {
        let epilogue = self.nest.epilogue.take();
        let shape = |v: &View| matmul_kernel::Shape {
            sizes: v.sizes.iter().map(static_size).collect(),
            unit_inner_stride: unit_inner_stride(v.ty()),
        };
        let (sa, sb, sc) = (shape(a), shape(b), shape(target));
        let strategy = if !self.options.gpu
            && self.options.fast_math
            && self.options.library_gemm
            && library_gemm::applies(&sa, &sb, &sc, element)
            && !(epilogue.is_some() && target.sizes.len() == 3)
        {
            Some(Strategy::Library { parallel: self.options.parallel })
        } else if self.options.gpu {
            None
        } else {
            let has_epilogue = epilogue.is_some();
            let exact = !self.options.fast_math;
            matmul_kernel::plan(
                &sa,
                &sb,
                &sc,
                element,
                exact,
                self.options.parallel,
                self.options.fuse,
                has_epilogue,
                self.options.registers,
            )
            .map(Strategy::Tiled)
        };
        if let Some(strategy) = strategy {
            let approximate = self.config().approximate();
            let epilogue = epilogue.as_ref().map(|e| matmul_kernel::Epilogue {
                leaves: &e.leaves,
                sum_argument: e.sum_argument,
                chain: &e.chain,
                approximate,
            });
            return match strategy {
                Strategy::Tiled(plan) => matmul_kernel::build(at, &plan, a, b, target, epilogue.as_ref()),
                Strategy::Library { parallel } => {
                    library_gemm::build(at, a, b, target, element, epilogue.as_ref(), parallel)
                }
            };
        }
        // Not applied: the caller computes it after the product.
        self.nest.epilogue = epilogue;
        if self.gpu_split_k(a, b, target, element, at)? {
            return Ok(());
        }
        match self.uses_gpu_matmul(a, b, element) {
            true => self.gpu_matmul(a, b, target, element, at),
            false => build_named_matmul(at, a, b, target, element),
        }
    }

    /// `target = einsum(spec, inputs)`.
    pub(super) fn einsum(
        &mut self,
        spec: &Einsum,
        inputs: &[&View<'c, 'a>],
        target: &View<'c, 'a>,
        element: ElementType,
        at: &Builder<'c, 'a>,
    ) -> Built<()> {
        // (For the GPU, a sum over a growing range in two stages.)
        if self.gpu_split_einsum(spec, inputs, target, element, at)? {
            return Ok(());
        }
        // A product by a matrix packed in panels (`temporal-pack-products`).
        if !self.options.gpu
            && self.options.fast_math
            && self.options.library_gemm
            && library_gemm::packed_applies(spec, inputs, target, element)
        {
            return library_gemm::build_packed(at, inputs[0], inputs[1], target, self.options.parallel);
        }
        let perms = matmul_permutations(spec).filter(|_| element.is_float());
        // (For the GPU, one summed label and not a product of two matrices,
        // which the shared-memory kernels take: a thread per result, the
        // running sum in a register.)
        let matrices = perms.as_ref().is_some_and(|(pa, pb)| pa.len() == 2 && pb.len() == 2);
        if self.options.gpu
            && !matrices
            && let [summed] = spec.summed()[..]
            && let Some(n) = spec
                .operands
                .iter()
                .zip(inputs)
                .find_map(|(labels, v)| labels.iter().position(|&c| c == summed).map(|p| v.sizes[p]))
        {
            let n = at.extent(n)?;
            let results: Vec<Value> = target.sizes.iter().map(|&s| at.extent(s)).collect::<Built<_>>()?;
            let leaves: Vec<View<'c, 'a>> = inputs.iter().map(|v| (*v).clone()).collect();
            let stages = super::gpu_reduction::Stages::Einsum { spec };
            return super::gpu_reduction::build_one_stage(at, &stages, &leaves, &[], n, &results, element, target);
        }
        if let Some((pa, pb)) = perms {
            let permuted = |v: &View<'c, 'a>, p: &[usize]| -> Built<View<'c, 'a>> {
                if p.iter().enumerate().all(|(i, &k)| i == k) { Ok(v.clone()) } else { views::transposed(at, v, p) }
            };
            let a = permuted(inputs[0], &pa)?;
            let b = permuted(inputs[1], &pb)?;
            return self.matmul(&a, &b, target, element, at);
        }
        let inputs: Vec<View<'c, 'a>> = inputs.iter().map(|v| (*v).clone()).collect();
        build_einsum(at, spec, &inputs, target, element)
    }
}

type Built<T> = Result<T, String>;

/// `a` (`[batch..., m, k]`) and `c` (`[batch..., m, n]`) seen as matrices of
/// `batch * m` rows, without a copy: `None` unless both are contiguous
/// row-major views of static sizes (see `views::reshaped`).
#[allow(clippy::type_complexity)]
fn rows_collapsed<'c, 'a>(
    a: &View<'c, 'a>,
    c: &View<'c, 'a>,
    element: ElementType,
    at: &Builder<'c, 'a>,
) -> Built<Option<(View<'c, 'a>, View<'c, 'a>)>> {
    let shape = |v: &View| v.sizes.iter().map(static_size).collect::<Option<Vec<i64>>>();
    let (Some(sa), Some(sc)) = (shape(a), shape(c)) else { return Ok(None) };
    let rows = |s: &[i64]| {
        let (lead, last) = s.split_at(s.len() - 1);
        PointType { shape: vec![lead.iter().product(), last[0]], element }
    };
    let point = |s: Vec<i64>| PointType { shape: s, element };
    let (Some(ra), Some(rc)) = (
        views::reshaped(at, a, &point(sa.clone()), &rows(&sa))?,
        views::reshaped(at, c, &point(sc.clone()), &rows(&sc))?,
    ) else {
        return Ok(None);
    };
    Ok(Some((ra, rc)))
}

/// `c = a b` as the `linalg` named op of the operands' ranks
/// (`batch_matmul`, `matmul`, `matvec`, `vecmat`) after a fill with zero:
/// where the register-tiled kernel does not apply (integers), and on the
/// GPU, whose mapping parallelizes `linalg` ops.
pub(super) fn build_named_matmul<'c, 'a>(
    b: &Builder<'c, 'a>,
    a: &View<'c, 'a>,
    bm: &View<'c, 'a>,
    c: &View<'c, 'a>,
    element: ElementType,
) -> Built<()> {
    let context = b.context();
    b.fill(super::movement::zero(b, element)?, c.value)?;
    let d = |k: usize| AffineExpr::dim(context, k);
    let (name, maps) = match (a.sizes.len(), bm.sizes.len()) {
        (3, 3) => {
            ("linalg.batch_matmul", Some((4, [vec![d(0), d(1), d(3)], vec![d(0), d(3), d(2)], vec![d(0), d(1), d(2)]])))
        }
        (2, 2) => ("linalg.matmul", Some((3, [vec![d(0), d(2)], vec![d(2), d(1)], vec![d(0), d(1)]]))),
        (2, 1) => ("linalg.matvec", None),
        _ => ("linalg.vecmat", None),
    };
    let e = element_type(b, element);
    let region = Region::new();
    let block = region.append_block(Block::new(&[(e, b.location), (e, b.location), (e, b.location)]));
    let (mul, add) = if element.is_float() { ("arith.mulf", "arith.addf") } else { ("arith.muli", "arith.addi") };
    let argument = |k: usize| -> Built<Value<'c, '_>> { block.argument(k).map(Value::from).map_err(|e| e.to_string()) };
    let operation = |name: &str, operands: &[Value<'c, '_>], results: &[Type<'c>]| {
        OperationBuilder::new(name, b.location)
            .add_operands(operands)
            .add_results(results)
            .build()
            .map_err(|e| format!("compiler fault: cannot build '{name}': {e}"))
    };
    let product = block.append_operation(operation(mul, &[argument(0)?, argument(1)?], &[e])?);
    let product: Value = product.result(0).map_err(|e| e.to_string())?.into();
    let sum = block.append_operation(operation(add, &[argument(2)?, product], &[e])?);
    let sum: Value = sum.result(0).map_err(|e| e.to_string())?.into();
    block.append_operation(operation("linalg.yield", &[sum], &[])?);
    let mut attributes =
        vec![(Identifier::new(context, "operandSegmentSizes"), DenseI32ArrayAttribute::new(context, &[2, 1]).into())];
    if let Some((dims, maps)) = maps {
        let maps: Vec<Attribute> = maps
            .iter()
            .map(|exprs| unsafe {
                Attribute::from_raw(mlir_sys::mlirAffineMapAttrGet(AffineMap::new(context, dims, 0, exprs).to_raw()))
            })
            .collect();
        attributes.push((Identifier::new(context, "indexing_maps"), ArrayAttribute::new(context, &maps).into()));
    }
    let op = OperationBuilder::new(name, b.location)
        .add_operands(&[a.value, bm.value, c.value])
        .add_attributes(&attributes)
        .add_regions([region])
        .build()
        .map_err(|e| format!("compiler fault: cannot build '{name}': {e}"))?;
    b.insert_op(op);
    Ok(())
}

/// An einsum that is not a matrix product: one `linalg.generic` over all
/// labels, result labels first (parallel), then the summed ones
/// (reduction) in order of first appearance, after a fill with zero; the
/// loops `convert-linalg-to-loops` makes visit the summed points in the
/// interpreter's order, so results agree bit for bit.
pub(super) fn build_einsum<'c, 'a>(
    b: &Builder<'c, 'a>,
    spec: &Einsum,
    inputs: &[View<'c, 'a>],
    target: &View<'c, 'a>,
    element: ElementType,
) -> Built<()> {
    let context = b.context();
    b.fill(super::movement::zero(b, element)?, target.value)?;
    let labels: Vec<char> = spec.result.iter().copied().chain(spec.summed()).collect();
    let map = |names: &[char]| -> AffineMap<'c> {
        let exprs: Vec<AffineExpr> =
            names.iter().map(|c| AffineExpr::dim(context, labels.iter().position(|x| x == c).unwrap_or(0))).collect();
        AffineMap::new(context, labels.len(), 0, &exprs)
    };
    let mut maps: Vec<AffineMap> = spec.operands.iter().map(|o| map(o)).collect();
    maps.push(map(&spec.result));
    let iterators: Vec<&str> =
        (0..labels.len()).map(|k| if k < spec.result.len() { "parallel" } else { "reduction" }).collect();
    let values: Vec<Value> = inputs.iter().map(|v| v.value).collect();
    let (body, arguments) = b.generic(&values, &[target.value], &maps, &iterators)?;
    let (mul, add) = if element.is_float() { ("mulf", "addf") } else { ("muli", "addi") };
    let mut product = arguments[0];
    for &argument in &arguments[1..inputs.len()] {
        product = body.arith(mul, product, argument)?;
    }
    let sum = body.arith(add, arguments[inputs.len()], product)?;
    body.yield_values("linalg.yield", &[sum])
}

/// For an einsum that is a batched matmul up to permutations of its two
/// operands, the permutations putting the first operand in `[batch..., m,
/// k]` order and the second in `[batch..., k, n]` order.
fn matmul_permutations(spec: &Einsum) -> Option<(Vec<usize>, Vec<usize>)> {
    let [a, b] = spec.operands.as_slice() else { return None };
    let r = spec.result.len();
    let summed = spec.summed();
    if r < 2 || summed.len() != 1 {
        return None;
    }
    let (m, n, k) = (spec.result[r - 2], spec.result[r - 1], summed[0]);
    let batch = &spec.result[..r - 2];
    let order_a: Vec<char> = batch.iter().copied().chain([m, k]).collect();
    let order_b: Vec<char> = batch.iter().copied().chain([k, n]).collect();
    let permutation = |labels: &[char], order: &[char]| -> Option<Vec<usize>> {
        if labels.len() != order.len() {
            return None;
        }
        order.iter().map(|c| labels.iter().position(|x| x == c)).collect()
    };
    Some((permutation(a, &order_a)?, permutation(b, &order_b)?))
}
