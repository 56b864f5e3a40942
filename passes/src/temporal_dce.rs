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

use crate::program::Program;
use crate::rewrite::{remove_dead_nodes, retain_tensors, source};

/// The `temporal-dce` pass.
pub struct TemporalDce;

crate::option_free_rewrite!(
    TemporalDce,
    "temporal-dce",
    "Remove body ops whose values reach no branch result or external call, and tensors no output depends on",
    eliminate_dead_code
);

/// Removes dead nodes and tensors; returns whether anything changed.
pub fn eliminate_dead_code(program: &mut Program) -> bool {
    let changed = remove_dead_nodes(program);
    // Tensors reachable from the outputs through reads.
    let mut needed = vec![false; program.tensors.len()];
    // The outputs, and what ends a dimension (it decides their extent).
    let mut work: Vec<usize> = program.outputs.iter().copied().chain(program.stops.iter().map(|s| s.done)).collect();
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
