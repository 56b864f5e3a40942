//! `temporal-dce`: removes what reaches no output. Within each branch body,
//! nodes whose values reach neither the branch's result nor an external
//! call are removed; then every computed tensor that no output depends on
//! (through the reads of the remaining nodes) is removed with its
//! definitions.
//!
//! Exact: a program's results are its outputs, and evaluation is driven by
//! demand (a point nobody needs is never computed, and the bound-dependent
//! checks only look at needed points), so removing what no output needs
//! changes nothing observable. External calls are kept in any branch that
//! is still computed, since a callback may have effects. Inputs are kept:
//! they are the program's interface.
//!
//! Assumes a program accepted by `temporal-verify`.

use crate::diagnostics::PassResult;
use crate::pass::{PassOptions, TempoPass};
use crate::print::replace_program;
use crate::program::{Branch, NodeKind, Program};
use crate::rewrite::{map_operands, operands, retain_tensors, source};
use crate::verify::verify_program;
use melior::ir::OperationRef;

/// The `temporal-dce` pass.
pub struct TemporalDce;

impl TempoPass for TemporalDce {
    fn name(&self) -> &'static str {
        "temporal-dce"
    }
    fn summary(&self) -> &'static str {
        "Remove body ops whose values reach no branch result or external call, and tensors no output depends on"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        let mut program = verify_program(op)?;
        if eliminate_dead_code(&mut program) {
            replace_program(op, &program)?;
        }
        Ok(())
    }
}

/// Removes the nodes of `branch` for which `live` is false, renumbering the
/// others; returns whether any was removed.
pub fn compact_branch(branch: &mut Branch, live: &[bool]) -> bool {
    if live.iter().all(|&l| l) {
        return false;
    }
    let mut new_index = vec![usize::MAX; live.len()];
    let mut kept = Vec::new();
    for (k, node) in std::mem::take(&mut branch.nodes).into_iter().enumerate() {
        if live[k] {
            new_index[k] = kept.len();
            kept.push(node);
        }
    }
    for node in &mut kept {
        node.kind = map_operands(&node.kind, |a| new_index[a]);
    }
    branch.nodes = kept;
    branch.result = new_index[branch.result];
    true
}

/// The nodes of `branch` whose values reach its result or an external call.
pub fn live_nodes(branch: &Branch) -> Vec<bool> {
    let mut live = vec![false; branch.nodes.len()];
    live[branch.result] = true;
    for (k, node) in branch.nodes.iter().enumerate() {
        if matches!(node.kind, NodeKind::Call { .. }) {
            live[k] = true;
        }
    }
    // Operands precede their users: one backward sweep closes the set.
    for k in (0..branch.nodes.len()).rev() {
        if live[k] {
            for a in operands(&branch.nodes[k].kind) {
                live[a] = true;
            }
        }
    }
    live
}

/// Removes the body ops whose values reach neither their branch's result
/// nor an external call ([`live_nodes`]); returns whether any was removed.
///
/// This is the evaluation rule of the language, not only an optimization:
/// such ops are never evaluated ("Evaluation is demand-driven" in
/// `dialects/README.md`), so a dead read needs no point and is never out of
/// bounds. The interpreter and the bound checks skip them; the lowering
/// removes them before emitting code at every optimization level.
pub fn remove_dead_nodes(program: &mut Program) -> bool {
    let mut changed = false;
    for tensor in &mut program.tensors {
        for branch in &mut tensor.branches {
            let live = live_nodes(branch);
            changed |= compact_branch(branch, &live);
        }
    }
    changed
}

/// Removes dead nodes and tensors; returns whether anything changed.
pub fn eliminate_dead_code(program: &mut Program) -> bool {
    let changed = remove_dead_nodes(program);
    // Tensors reachable from the outputs through reads.
    let mut needed = vec![false; program.tensors.len()];
    let mut work: Vec<usize> = program.outputs.clone();
    while let Some(t) = work.pop() {
        if std::mem::replace(&mut needed[t], true) {
            continue;
        }
        for node in program.tensors[t].branches.iter().flat_map(|b| &b.nodes) {
            if let Some(s) = source(&node.kind)
                && !needed[s]
            {
                work.push(s);
            }
        }
    }
    let keep: Vec<bool> = program.tensors.iter().zip(&needed).map(|(t, &n)| n || t.is_input).collect();
    if keep.iter().all(|&k| k) {
        return changed;
    }
    retain_tensors(program, &keep);
    true
}
