//! Contractions in `lower-temporal-to-loops`: `matmul` with any number of
//! batch dimensions (broadcast under NumPy's rules) and `einsum`.
//!
//! - A matmul of ranks `(2, 2)`, `(1, 2)`, `(2, 1)` or `(3, 3)` with one
//!   batch size goes straight to the register-tiled kernel
//!   ([`crate::contraction`]), or to a `linalg` named op where the kernel
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

use super::kernels::{EpilogueArg, Kernel, KernelOperands, Strategy, TypedView, element_type};
use super::{Emitter, View, library_gemm, matmul_kernel, memref_layout, scalar, transposed_view};
use crate::ir_builder::Builder;
use melior::ir::attribute::{ArrayAttribute, DenseI32ArrayAttribute};
use melior::ir::operation::OperationBuilder;
use melior::ir::{AffineExpr, AffineMap, Attribute, Block, BlockLike, Identifier, Region, RegionLike, Type, Value};
use std::fmt::Write;
use tempo_passes::program::Einsum;
use tempo_passes::program::ElementType;

/// An epilogue for the next matrix product (see `matmul_kernel`): the
/// chain's leaves other than the product, which leaf the product is, and
/// the chain.
pub(super) struct PendingEpilogue {
    pub leaves: Vec<View>,
    pub sum_argument: usize,
    pub chain: scalar::Chain,
}

impl Emitter<'_, '_> {
    /// `target = a @ b` (`target` is overwritten).
    pub(super) fn matmul(
        &mut self,
        a: &View,
        b: &View,
        target: &View,
        element: ElementType,
        indent: &str,
        out: &mut String,
    ) {
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
            let spec = tempo_passes::program::Einsum { operands: vec![la, lb], result };
            if self.gpu_split_einsum(&spec, &[a, b], target, element, indent, out) {
                return;
            }
        }
        let one_batch = ra == 3 && rb == 3 && (a.sizes[0] == b.sizes[0] || (a.sizes[0] != "1" && b.sizes[0] != "1"));
        if matches!((ra, rb), (2, 2) | (1, 2) | (2, 1)) || one_batch {
            self.matmul_kernel(a, b, target, element, indent, out);
            return;
        }
        // Loops over the batch dimensions of the result.
        let batch = &target.sizes[..target.sizes.len() - 2];
        let order: Vec<usize> = (0..batch.len()).collect();
        let nest = self.open_loops(batch, &order, indent, out);
        let (ivs, inner) = (nest.ivs.clone(), nest.inner.clone());
        let x = self.matrix_view(a, &ivs, batch, &inner, out);
        let y = self.matrix_view(b, &ivs, batch, &inner, out);
        let z = self.matrix_view(target, &ivs, batch, &inner, out);
        self.matmul_kernel(&x, &y, &z, element, &inner, out);
        nest.close(out);
    }

    /// The matrix (last two dimensions) of `v` at the batch index `ivs` of a
    /// result with batch sizes `batch`: a rank-reduced subview; an operand
    /// dimension of size 1 under a larger one, or missing, is not indexed.
    fn matrix_view(&mut self, v: &View, ivs: &[String], batch: &[String], indent: &str, out: &mut String) -> View {
        let own = v.sizes.len() - 2;
        let skip = batch.len() - own;
        let mut offsets: Vec<String> = (0..own)
            .map(|d| if v.sizes[d] == "1" && batch[skip + d] != "1" { "0".to_string() } else { ivs[skip + d].clone() })
            .collect();
        offsets.extend(["0".to_string(), "0".to_string()]);
        let mut sizes: Vec<String> = vec!["1".to_string(); own];
        sizes.extend(v.sizes[own..].iter().cloned());
        let (dims, element, strides, _) = memref_layout(&v.ty).expect("views are strided memrefs");
        let ty = format!(
            "memref<{}x{}x{element}, strided<[{}, {}], offset: ?>>",
            dims[own],
            dims[own + 1],
            strides[own],
            strides[own + 1]
        );
        let ones: Vec<&str> = sizes.iter().map(|_| "1").collect();
        let name = self.fresh("mat");
        let _ = writeln!(
            out,
            "{indent}{name} = memref.subview {}[{}] [{}] [{}] : {} to {ty}",
            v.name,
            offsets.join(", "),
            sizes.join(", "),
            ones.join(", "),
            v.ty
        );
        View { name, ty, sizes: v.sizes[own..].to_vec() }
    }

    /// A contraction of ranks `(2, 2)`, `(1, 2)`, `(2, 1)` or `(3, 3)`
    /// (one batch size): the vector kernel, or a `linalg` named op after a
    /// fill with zero (for the GPU, whose mapping parallelizes `linalg`
    /// ops, or the shared-memory kernel of [`super::gpu_matmul`]).
    fn matmul_kernel(
        &mut self,
        a: &View,
        b: &View,
        target: &View,
        element: ElementType,
        indent: &str,
        out: &mut String,
    ) {
        let epilogue = self.epilogue.take();
        let shape = |v: &View| matmul_kernel::Shape {
            sizes: v.sizes.iter().map(|s| s.parse::<i64>().ok()).collect(),
            unit_inner_stride: matmul_kernel::unit_inner_stride(&v.ty),
        };
        let (sa, sb, sc) = (shape(a), shape(b), shape(target));
        let strategy = if !self.gpu
            && self.fast_math
            && self.library_gemm
            && library_gemm::applies(&sa, &sb, &sc, element)
            && !(epilogue.is_some() && target.sizes.len() == 3)
        {
            Some(Strategy::Library { parallel: self.parallel })
        } else if self.gpu {
            None
        } else {
            let has_epilogue = epilogue.is_some();
            let exact = !self.fast_math;
            matmul_kernel::plan(&sa, &sb, &sc, element, exact, self.parallel, self.fuse, has_epilogue)
                .map(Strategy::Tiled)
        };
        if let Some(strategy) = strategy {
            let mut operands = KernelOperands::default();
            let (a, b, c) = (operands.view(a), operands.view(b), operands.view(target));
            let epilogue = epilogue.map(|e| EpilogueArg {
                leaves: e.leaves.iter().map(|v| operands.view(v)).collect(),
                sum_argument: e.sum_argument,
                chain: e.chain,
            });
            let kernel = Kernel::Matmul { a, b, c, element, strategy, epilogue };
            self.call_kernel(operands, kernel, indent, out);
            return;
        }
        // Not applied: the caller computes it after the product.
        self.epilogue = epilogue;
        let mut operands = KernelOperands::default();
        let (a_arg, b_arg, c_arg) = (operands.view(a), operands.view(b), operands.view(target));
        let kernel = match self.uses_gpu_matmul(a, b, element) {
            true => Kernel::GpuMatmul { a: a_arg, b: b_arg, c: c_arg, element },
            false => Kernel::NamedMatmul { a: a_arg, b: b_arg, c: c_arg, element },
        };
        self.call_kernel(operands, kernel, indent, out);
    }

    /// `target = einsum(spec, inputs)`.
    pub(super) fn einsum(
        &mut self,
        spec: &Einsum,
        inputs: &[&View],
        target: &View,
        element: ElementType,
        indent: &str,
        out: &mut String,
    ) {
        // (For the GPU, a sum over a growing range in two stages.)
        if self.gpu_split_einsum(spec, inputs, target, element, indent, out) {
            return;
        }
        if element.is_float()
            && let Some((pa, pb)) = matmul_permutations(spec)
        {
            let mut permuted = |this: &mut Self, v: &View, p: &[usize]| {
                if p.iter().enumerate().all(|(i, &k)| i == k) {
                    View { name: v.name.clone(), ty: v.ty.clone(), sizes: v.sizes.clone() }
                } else {
                    let name = this.fresh("perm");
                    transposed_view(v, p, name, indent, out)
                }
            };
            let a = permuted(self, inputs[0], &pa);
            let b = permuted(self, inputs[1], &pb);
            self.matmul(&a, &b, target, element, indent, out);
            return;
        }
        let mut operands = KernelOperands::default();
        let inputs = inputs.iter().map(|v| operands.view(v)).collect();
        let target = operands.view(target);
        self.call_kernel(operands, Kernel::Einsum { spec: spec.clone(), inputs, target, element }, indent, out);
    }
}

type Built<T> = Result<T, String>;

/// `c = a b` as the `linalg` named op of the operands' ranks
/// (`batch_matmul`, `matmul`, `matvec`, `vecmat`) after a fill with zero:
/// where the register-tiled kernel does not apply (integers), and on the
/// GPU, whose mapping parallelizes `linalg` ops.
pub(super) fn build_named_matmul<'c, 'a>(
    b: &Builder<'c, 'a>,
    a: &TypedView<'c, 'a>,
    bm: &TypedView<'c, 'a>,
    c: &TypedView<'c, 'a>,
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
    inputs: &[TypedView<'c, 'a>],
    target: &TypedView<'c, 'a>,
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
