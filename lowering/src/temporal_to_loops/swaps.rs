//! The swap planning's code in the loops (`lower-temporal-to-loops`
//! with `memory-budget`): the pass options, and per swapped tensor
//! ([`crate::schedule::swaps`]) the `store.spill` at the end of the forward
//! iterations that complete a block, and the `store.reload` and
//! `store.discard` around the backward iterations that enter and leave one.

use super::Emitter;
use crate::schedule::Step;
use std::fmt::Write;
use tempo_passes::pass::PassOptions;
use tempo_passes::program::Program;

/// The `memory-budget` and `bounds` options of a pass (`None` without a
/// budget): the budget in bytes and the bound values by dimension.
pub(crate) fn memory_budget(
    program: &Program,
    options: &PassOptions,
) -> Result<Option<(u64, Vec<Option<i64>>)>, String> {
    let Some(budget) = options.unsigned("memory-budget") else {
        if options.text("bounds").is_some() {
            return Err("bounds are given for memory-budget, which is missing".into());
        }
        return Ok(None);
    };
    let bounds = program.bound_values(options.text("bounds").unwrap_or(""))?;
    Ok(Some((budget, bounds)))
}

impl<'p, 'c> Emitter<'p, 'c> {
    /// The swapped tensors a loop over `dim` with `body` writes (`false`)
    /// or reads back (`true`) ([`crate::schedule::swaps`]).
    pub(super) fn swapped_in(&self, dim: usize, body: &[Step]) -> Vec<(usize, bool)> {
        let computes = |t: usize| body.iter().any(|s| matches!(s, Step::Compute(c) if *c == t));
        self.schedule
            .swaps
            .iter()
            .filter(|(_, swap)| swap.dim == dim)
            .filter_map(|(&i, swap)| {
                if computes(i) {
                    Some((i, false))
                } else if swap.readers.iter().any(|&r| computes(r)) {
                    Some((i, true))
                } else {
                    None
                }
            })
            .collect()
    }

    /// `store.<op>` of swapped tensor `i`'s points `[lo, hi)`, given as
    /// affine maps of the loop variable `var` (and the bound `s0`), when
    /// `condition` (an integer set of the same) holds.
    fn swap_op(
        &mut self,
        i: usize,
        op: &str,
        condition: &str,
        range: (&str, &str),
        at: (&str, &str),
        indent: &str,
        code: &mut String,
    ) {
        let operands = format!("({})[{}]", at.0, at.1);
        let (store, ty) = (self.store[i].clone(), self.store_type(i));
        let _ = writeln!(code, "{indent}affine.if affine_set<(d0)[s0] : ({condition})>{operands} {{");
        let lo = self.fresh("swap_from");
        let hi = self.fresh("swap_to");
        let _ = writeln!(code, "{indent}  {lo} = affine.apply affine_map<(d0)[s0] -> ({})>{operands}", range.0);
        let _ = writeln!(code, "{indent}  {hi} = affine.apply affine_map<(d0)[s0] -> ({})>{operands}", range.1);
        let _ = writeln!(code, "{indent}  \"store.{op}\"({store}, {lo}, {hi}) : ({ty}, index, index) -> ()");
        let _ = writeln!(code, "{indent}}}");
    }

    /// In the forward loop writing swapped tensor `i`, at the end of
    /// iteration `var`: spill the block its own reads (`reach` back) are
    /// past.
    pub(super) fn spill(&mut self, i: usize, var: &str, indent: &str, code: &mut String) {
        let swap = &self.schedule.swaps[&i];
        let (b, k) = (swap.block as i64, swap.reach);
        let bound = self.bound_args[swap.dim].clone();
        let condition = format!("(d0 + 1 - {k}) mod {b} == 0, d0 + 1 - {k} - {b} >= 0");
        let range = (format!("d0 + 1 - {k} - {b}"), format!("d0 + 1 - {k}"));
        self.swap_op(i, "spill", &condition, (&range.0, &range.1), (var, &bound), indent, code);
    }

    /// In the backward loop reading swapped tensor `i`, before iteration
    /// `var`: reload the block it enters, if it was spilled.
    pub(super) fn reload(&mut self, i: usize, var: &str, bound: &str, indent: &str, code: &mut String) {
        let swap = &self.schedule.swaps[&i];
        let (b, k) = (swap.block as i64, swap.reach);
        let condition = format!("(d0 + 1) mod {b} == 0, s0 - {k} - d0 - 1 >= 0");
        let range = (format!("d0 + 1 - {b}"), "d0 + 1".to_string());
        self.swap_op(i, "reload", &condition, (&range.0, &range.1), (var, bound), indent, code);
    }

    /// In the backward loop reading swapped tensor `i`, after iteration
    /// `var`: discard the block it leaves.
    pub(super) fn discard(&mut self, i: usize, var: &str, indent: &str, code: &mut String) {
        let swap = &self.schedule.swaps[&i];
        let b = swap.block as i64;
        let bound = self.bound_args[swap.dim].clone();
        let range = ("d0".to_string(), format!("d0 + {b}"));
        self.swap_op(i, "discard", &format!("d0 mod {b} == 0"), (&range.0, &range.1), (var, &bound), indent, code);
    }
}
