//! External calls in `lower-temporal-to-loops`: arguments copied into
//! contiguous buffers whose addresses go to the runtime's trampoline.

use super::{Elementwise, Emitter, View, plain_type};
use std::fmt::Write;
use tempo_passes::program::PointType;

impl Emitter<'_, '_> {
    /// A call of external call site `site`: the arguments are copied into
    /// contiguous buffers (allocated once), whose addresses sit in a table
    /// passed with the site number and the result buffer's address to the
    /// runtime's trampoline `tempo_external_call`; the result is copied
    /// into `target`.
    pub(super) fn external_call(
        &mut self,
        site: usize,
        args: &[(&View, &PointType)],
        target: &View,
        ty: &PointType,
        indent: &str,
        out: &mut String,
    ) {
        if !self.globals.contains("@tempo_external_call") {
            self.globals += "  func.func private @tempo_external_call(i64, i64, i64)\n";
        }
        let mut entry = String::new();
        let address = |this: &mut Self, buffer: &str, buffer_type: &str, entry: &mut String| -> String {
            let raw = this.fresh("p");
            let _ = writeln!(
                entry,
                "    {raw} = memref.extract_aligned_pointer_as_index {buffer} : {buffer_type} -> index"
            );
            let word = this.fresh("p");
            let _ = writeln!(entry, "    {word} = arith.index_cast {raw} : index to i64");
            word
        };
        let table = self.fresh("calltable");
        let table_type = format!("memref<{}xi64>", args.len().max(1));
        let _ = writeln!(entry, "    {table} = memref.alloc() : {table_type}");
        let _ = writeln!(self.exit, "    memref.dealloc {table} : {table_type}");
        let mut arg_views = Vec::new();
        for (k, (_, arg_type)) in args.iter().enumerate() {
            let buffer = self.fresh("callarg");
            let buffer_type = plain_type(arg_type);
            let _ = writeln!(entry, "    {buffer} = memref.alloc() : {buffer_type}");
            let _ = writeln!(self.exit, "    memref.dealloc {buffer} : {buffer_type}");
            let word = address(self, &buffer, &buffer_type, &mut entry);
            let slot = self.fresh("c");
            let _ = writeln!(entry, "    {slot} = arith.constant {k} : index");
            let _ = writeln!(entry, "    memref.store {word}, {table}[{slot}] : {table_type}");
            let view = self.cast(&buffer, arg_type, "    ", &mut entry);
            arg_views.push(View::fixed(view, arg_type));
        }
        let result = self.fresh("callresult");
        let result_type = plain_type(ty);
        let _ = writeln!(entry, "    {result} = memref.alloc() : {result_type}");
        let _ = writeln!(self.exit, "    memref.dealloc {result} : {result_type}");
        let result_word = address(self, &result, &result_type, &mut entry);
        let table_word = address(self, &table, &table_type, &mut entry);
        let result_view = View::fixed(self.cast(&result, ty, "    ", &mut entry), ty);
        self.entry += &entry;

        for ((view, arg_type), buffer) in args.iter().zip(&arg_views) {
            let op = Elementwise::Cast(arg_type.element);
            self.elementwise(&[view], &[arg_type.element], buffer, arg_type, op, indent, out);
        }
        let site_word = self.fresh("site");
        let _ = writeln!(out, "{indent}{site_word} = arith.constant {site} : i64");
        let _ = writeln!(
            out,
            "{indent}func.call @tempo_external_call({site_word}, {table_word}, {result_word}) : (i64, i64, i64) -> ()"
        );
        self.elementwise(&[&result_view], &[ty.element], target, ty, Elementwise::Cast(ty.element), indent, out);
    }
}
