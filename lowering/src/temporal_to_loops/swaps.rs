//! The swap planning's code in the loops (`lower-temporal-to-loops`
//! with `memory-budget`): the pass options, and per swapped tensor
//! ([`crate::schedule::swaps`]) the `store.spill` at the end of the forward
//! iterations that complete a block, and the `store.reload` and
//! `store.discard` around the backward iterations that enter and leave one.

use super::{Built, Emitter};
use crate::ir_builder::{Builder, affine_map};
use crate::schedule::Step;
use melior::ir::Value;
use tempo_dialects::store;
use tempo_passes::affine::{AffineExpr, Constraint, IntegerSet};
use tempo_passes::pass::PassOptions;
use tempo_passes::program::Program;

/// The `memory-budget` and `bounds` options of a pass (`None` without a
/// budget): the budget in bytes and the bound values by dimension.
pub(crate) fn memory_budget(
    program: &Program,
    options: &PassOptions,
) -> Result<Option<(u64, Vec<Option<i64>>)>, String> {
    let Some(budget) = options.unsigned("memory-budget") else {
        if options.bounds("bounds").is_some() {
            return Err("bounds are given for memory-budget, which is missing".into());
        }
        return Ok(None);
    };
    let bounds = options.bound_values(program);
    Ok(Some((budget, bounds)))
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
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
    /// affine expressions of the loop variable `var` (`d0`) and the bound
    /// (`s0`), when `condition` (constraints of the same) holds.
    fn swap_op(
        &mut self,
        i: usize,
        op: &str,
        condition: Vec<Constraint>,
        range: [AffineExpr; 2],
        (var, bound): (Value<'c, 'a>, Value<'c, 'a>),
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        let set = IntegerSet { num_dims: 1, num_symbols: 1, constraints: condition };
        let (then, _) = b.affine_if(&set, &[var, bound], false)?;
        let [lo, hi] =
            range.map(|e| then.affine_value("affine.apply", affine_map(self.context, 1, 1, &[e]), &[var, bound]));
        let (store, range) = (self.store_of(i)?, [lo?, hi?]);
        let (context, location) = (self.context, then.location);
        then.insert_op(match op {
            "spill" => store::SpillOp::build(context, location, store, &range),
            "reload" => store::ReloadOp::build(context, location, store, &range),
            _ => store::DiscardOp::build(context, location, store, &range),
        });
        Ok(())
    }

    /// In the forward loop writing swapped tensor `i`, at the end of
    /// iteration `var`: spill the block its own reads (`reach` back) are
    /// past.
    pub(super) fn spill(&mut self, i: usize, var: Value<'c, 'a>, b: &Builder<'c, 'a>) -> Built<()> {
        let swap = &self.schedule.swaps[&i];
        let (n, k) = (swap.block as i64, swap.reach);
        let bound = self.function.bound_args[swap.dim];
        let end = AffineExpr::Dim(0) + (1 - k);
        let condition = vec![Constraint::equal_zero(end.clone() % n), Constraint::at_least_zero(end.clone() + -n)];
        self.swap_op(i, "spill", condition, [end.clone() + -n, end], (var, bound), b)
    }

    /// In the backward loop reading swapped tensor `i`, before iteration
    /// `var`: reload the block it enters, if it was spilled.
    pub(super) fn reload(
        &mut self,
        i: usize,
        var: Value<'c, 'a>,
        bound: Value<'c, 'a>,
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        let swap = &self.schedule.swaps[&i];
        let (n, k) = (swap.block as i64, swap.reach);
        let end = AffineExpr::Dim(0) + 1;
        let left = (AffineExpr::Symbol(0) + -k) - end.clone();
        let condition = vec![Constraint::equal_zero(end.clone() % n), Constraint::at_least_zero(left)];
        self.swap_op(i, "reload", condition, [end.clone() + -n, end], (var, bound), b)
    }

    /// In the backward loop reading swapped tensor `i`, after iteration
    /// `var`: discard the block it leaves.
    pub(super) fn discard(&mut self, i: usize, var: Value<'c, 'a>, b: &Builder<'c, 'a>) -> Built<()> {
        let swap = &self.schedule.swaps[&i];
        let n = swap.block as i64;
        let bound = self.function.bound_args[swap.dim];
        let condition = vec![Constraint::equal_zero(AffineExpr::Dim(0) % n)];
        self.swap_op(i, "discard", condition, [AffineExpr::Dim(0), AffineExpr::Dim(0) + n], (var, bound), b)
    }
}
