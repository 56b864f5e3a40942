//! External calls in `lower-temporal-to-loops`: arguments copied into
//! contiguous buffers whose addresses go to the runtime's trampoline.

use super::node_kinds::Elementwise;
use super::views::{View, plain_type, view_type};
use super::{Built, Emitter};
use crate::ir_builder::{Builder, declare};
use melior::ir::Value;
use melior::ir::r#type::MemRefType;
use tempo_passes::program::PointType;

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// A call of external call site `site`: the arguments are copied into
    /// contiguous buffers (allocated once), whose addresses sit in a table
    /// passed with the site number and the result buffer's address to the
    /// runtime's trampoline `tempo_external_call`; the result is copied
    /// into `target`.
    pub(super) fn external_call(
        &mut self,
        site: usize,
        args: &[(&View<'c, 'a>, &PointType)],
        target: &View<'c, 'a>,
        ty: &PointType,
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        let context = self.context;
        let word = b.integer_type(64);
        declare(b.module()?, "tempo_external_call", &[word, word, word], &[])?;
        let entry = self.function.entry.at(b.location);
        // The address of a buffer, as an integer.
        let address = |buffer: Value<'c, 'a>| -> Built<Value<'c, 'a>> {
            let raw = entry.value("memref.extract_aligned_pointer_as_index", &[buffer], entry.index_type(), &[])?;
            entry.index_cast(raw, word)
        };
        let table_type = MemRefType::new(word, &[args.len().max(1) as i64], None, None).into();
        let table = entry.alloc(table_type, &[])?;
        self.function.exit.op("memref.dealloc", &[table], &[], &[])?;
        let mut arg_views = Vec::new();
        for (k, (_, arg_type)) in args.iter().enumerate() {
            let buffer = entry.alloc(plain_type(context, arg_type), &[])?;
            self.function.exit.op("memref.dealloc", &[buffer], &[], &[])?;
            let at = entry.index(k as i64)?;
            entry.store(address(buffer)?, table, &[at])?;
            arg_views.push(View::fixed(entry.cast(buffer, view_type(context, arg_type))?, arg_type));
        }
        let result = entry.alloc(plain_type(context, ty), &[])?;
        self.function.exit.op("memref.dealloc", &[result], &[], &[])?;
        let result_word = address(result)?;
        let table_word = address(table)?;
        let result_view = View::fixed(entry.cast(result, view_type(context, ty))?, ty);
        for ((view, arg_type), buffer) in args.iter().zip(&arg_views) {
            let op = Elementwise::Cast(arg_type.element);
            self.elementwise(&[view], &[arg_type.element], buffer, arg_type, op, b)?;
        }
        let site_word = b.i64(site as i64)?;
        b.call("tempo_external_call", &[site_word, table_word, result_word], &[])?;
        self.elementwise(&[&result_view], &[ty.element], target, ty, Elementwise::Cast(ty.element), b)
    }
}
