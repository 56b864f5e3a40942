//! `temporal.flash_attention` in `lower-temporal-to-loops`: one call of
//! the runtime's tiled kernel (`tempo_flash_attention`,
//! `runtime/src/flash.rs`) per group (the ops' second axis: heads and
//! batch rows), the groups spread over the threads with `parallel`.
//!
//! Each call gets the address of a row of 37 words describing its group
//! (see [`Flash`] for the operands and the packed result): the part, the
//! element kind, the sizes `Tq`, `Tk`, `R`, `Dk`, `Dv`, the band's sides
//! (`i64::MIN` and `i64::MAX` where unbounded), the scale's address, then
//! for each operand the byte address of the group's first element and its
//! strides in elements, as the runtime's module documents. The table is
//! one buffer of `G` rows made at entry, so the parallel iterations write
//! rows of their own.
//!
//! CPU only: the GPU target has no such kernel (`temporal-fuse-attention`
//! runs only in the CPU's pipelines).

use super::kernels::element_type;
use super::library_gemm::metadata;
use super::views::View;
use super::{Built, Emitter};
use crate::ir_builder::{Builder, Extent, declare};
use melior::ir::Value;
use melior::ir::r#type::MemRefType;
use tempo_passes::program::{ElementType, Flash, FlashPart};

/// The runtime's kernel.
pub const SYMBOL: &str = "tempo_flash_attention";

/// Words per group in the kernel's table.
pub const TABLE_WORDS: i64 = 37;

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// `target = flash_attention(operands)` as calls of [`SYMBOL`].
    pub(super) fn flash_attention(
        &mut self,
        spec: &Flash,
        operands: &[&View<'c, 'a>],
        target: &View<'c, 'a>,
        element: ElementType,
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        if self.options.gpu {
            return Err(
                "temporal.flash_attention has no GPU lowering (the runtime's tiled kernels run on the CPU)".into()
            );
        }
        if !matches!(element, ElementType::F32 | ElementType::F64) {
            return Err(format!("temporal.flash_attention of {element:?} values (f32 or f64 only)"));
        }
        let Extent::Static(groups) = target.sizes[1] else {
            return Err("compiler fault: a flash attention with a dynamic number of groups".into());
        };
        let word = b.integer_type(64);
        declare(b.module()?, SYMBOL, &[word], &[])?;
        let e = element_type(b, element);
        let bytes = b.index(element.byte_size() as i64)?;
        let meta = operands.iter().map(|x| metadata(b, x, e, bytes)).collect::<Built<Vec<_>>>()?;
        let (out, out_sizes, out_strides) = metadata(b, target, e, bytes)?;
        let entry = self.function.entry.at(b.location);
        let table_type = MemRefType::new(word, &[groups, TABLE_WORDS], None, None).into();
        let table = entry.alloc(table_type, &[])?;
        self.function.exit.op("memref.dealloc", &[table], &[], &[])?;
        let (c0, c1) = (b.index(0)?, b.index(1)?);
        let count = b.index(groups)?;
        let (inner, g) = if self.options.parallel && groups > 1 && !b.inside_parallel() {
            let (inner, ivs) = b.scf_parallel(&[count])?;
            (inner, ivs[0])
        } else {
            b.scf_for(c0, count, c1)?
        };
        // The group's first element: the address moved by g groups.
        let at = |(pointer, _, strides): &(Value<'c, 'a>, Vec<Value<'c, 'a>>, Vec<Value<'c, 'a>>),
                  axis: usize|
         -> Built<Value<'c, 'a>> {
            inner.arith("addi", *pointer, inner.arith("muli", inner.arith("muli", g, strides[axis])?, bytes)?)
        };
        let part = spec.part;
        // Operand positions: (queries, keys, values, output cotangents,
        // maxima, sums, row sums, scale).
        let (q, k, v, d_o, stats, scale) = match part {
            FlashPart::Forward => (0, 1, 2, None, None, 3),
            FlashPart::Query => (0, 1, 2, Some(3), None, 4),
            FlashPart::Key => (0, 5, 6, Some(1), Some([2, 3, 4]), 7),
        };
        let zero = inner.index(0)?;
        let mut words: Vec<Value<'c, 'a>> = Vec::with_capacity(TABLE_WORDS as usize);
        let constant = |v: i64| inner.index(v);
        words.push(constant(part.code())?);
        words.push(constant(i64::from(element == ElementType::F64))?);
        let sizes_q = &meta[q].1;
        let sizes_k = &meta[k].1;
        let sizes_v = &meta[v].1;
        words.extend([sizes_q[0], sizes_k[0], sizes_q[2], sizes_q[3], sizes_v[2]]);
        let [lower, upper] = spec.band.words();
        words.push(constant(lower)?);
        words.push(constant(upper)?);
        words.push(meta[scale].0);
        // Queries [Tq, G, R, Dk]: t, r, d strides.
        let m = &meta[q];
        words.extend([at(m, 1)?, m.2[0], m.2[2], m.2[3]]);
        // Keys and values [Tk, G, D]: n, d strides.
        for x in [k, v] {
            let m = &meta[x];
            words.extend([at(m, 1)?, m.2[0], m.2[2]]);
        }
        match d_o {
            Some(x) => {
                let m = &meta[x];
                words.extend([at(m, 1)?, m.2[0], m.2[2], m.2[3]]);
            }
            None => words.extend([zero; 4]),
        }
        match stats {
            Some(list) => {
                for x in list {
                    let m = &meta[x];
                    words.extend([at(m, 1)?, m.2[0], m.2[2]]);
                }
            }
            None => words.extend([zero; 9]),
        }
        let result = (out, out_sizes, out_strides.clone());
        let last = out_strides.len() - 1;
        let rows = if part == FlashPart::Key { zero } else { out_strides[2] };
        words.extend([at(&result, 1)?, out_strides[0], rows, out_strides[last]]);
        debug_assert_eq!(words.len() as i64, TABLE_WORDS);
        for (w, value) in words.iter().enumerate() {
            let value = inner.index_cast(*value, word)?;
            inner.store(value, table, &[g, inner.index(w as i64)?])?;
        }
        let raw = inner.value("memref.extract_aligned_pointer_as_index", &[table], inner.index_type(), &[])?;
        let row = inner.arith("muli", g, inner.index(TABLE_WORDS * 8)?)?;
        let address = inner.index_cast(inner.arith("addi", raw, row)?, word)?;
        inner.call(SYMBOL, &[address], &[])?;
        Ok(())
    }
}
