//! Reads through data (`temporal.read_at`) on cycles: the *data groups* of
//! a program, which the compiler runs depth by depth.
//!
//! A data group is a strongly connected component of the dependence graph
//! (every read between computed tensors: points, ranges and reads through
//! data) in which some read through data reads a tensor of the component
//! itself: `h[n]` reading `h[left[n]]`, or `c[n]` and `h[n]` of a TreeLSTM
//! reading each other's children. Such a cycle cannot be ordered at
//! compile time, since the points it reads are data; the compiled code
//! orders it at run time by each point's depth (the length of the longest
//! chain of reads through data below it) and runs all points of one depth
//! together.
//!
//! What the compiler orders this way ([`data_groups`] refuses the rest at
//! the read, naming it):
//! - every tensor of the group is over the same single dimension `n`;
//! - reads between the group's tensors are reads through data or reads of
//!   the very same point (`c[n]` read by `h[n]`); the latter order the
//!   group's tensors within a point (a cycle of them is a zero-distance
//!   cycle, which `temporal-verify` refuses);
//! - the coordinates of a read through data of the group do not depend on
//!   the group's own values (they come from inputs, or from tensors
//!   computed before the group), so the order of all points can be
//!   computed before any of them;
//! - the coordinate is linear in the data, the position and the bounds
//!   (`left[n]`, `left[n] + 1`, `N - 1 - left[n]`).
//!
//! Reads through data that are not on a cycle (`out[b]` reading
//! `h[root[b]]`) need none of this: their source is computed before them,
//! in full, and the coordinate is checked at run time.

use crate::diagnostics::PassDiagnostic;
use crate::program::{NodeKind, Program};
use crate::rewrite::operands;
use melior::ir::Location;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashMap;

/// Every read through data of `program` as (tensor, branch, node), in
/// program order: the numbers compiled code reports run-time errors of
/// these reads by.
pub fn read_sites(program: &Program) -> Vec<(usize, usize, usize)> {
    let mut sites = Vec::new();
    for (t, tensor) in program.tensors.iter().enumerate() {
        for (k, branch) in tensor.branches.iter().enumerate() {
            for (n, node) in branch.nodes.iter().enumerate() {
                if matches!(node.kind, NodeKind::ReadAt { .. }) {
                    sites.push((t, k, n));
                }
            }
        }
    }
    sites
}

/// One data group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataGroup {
    /// The dimension every tensor of the group is over.
    pub dim: usize,
    /// The group's tensors in the order they are computed at one point
    /// (same-point reads first).
    pub tensors: Vec<usize>,
}

impl DataGroup {
    /// Whether `t` is one of the group's tensors.
    pub fn contains(&self, t: usize) -> bool {
        self.tensors.contains(&t)
    }
}

/// Whether node `n` of a branch reads a tensor of `members` (directly).
fn reads_member(kind: &NodeKind, member: &impl Fn(usize) -> bool) -> bool {
    crate::rewrite::source(kind).is_some_and(member)
}

/// For each node, whether it is one the data operands of node `read` are
/// computed from (the operands themselves included).
pub fn data_ancestors(nodes: &[crate::program::Node], read: usize) -> Vec<bool> {
    let mut needed = vec![false; nodes.len()];
    for a in operands(&nodes[read].kind) {
        needed[a] = true;
    }
    for k in (0..read).rev() {
        if needed[k] {
            for a in operands(&nodes[k].kind) {
                needed[a] = true;
            }
        }
    }
    needed
}

/// The data groups of `program`, checked (see the module's doc); errors
/// are located at the read that cannot be ordered.
pub fn data_groups<'c>(program: &Program<'c>) -> Result<Vec<DataGroup>, PassDiagnostic<'c>> {
    // Most programs read nothing through data: no graph to build (the
    // scheduler asks once per nest).
    let any_data_read = program
        .tensors
        .iter()
        .flat_map(|t| t.branches.iter().flat_map(|b| &b.nodes))
        .any(|node| matches!(node.kind, NodeKind::ReadAt { .. }));
    if !any_data_read {
        return Ok(Vec::new());
    }
    let computed = |t: usize| !program.tensors[t].is_input;
    let mut graph = DiGraph::<usize, ()>::new();
    let nodes: Vec<NodeIndex> = (0..program.tensors.len()).map(|t| graph.add_node(t)).collect();
    for (reader, tensor) in program.tensors.iter().enumerate() {
        for node in tensor.branches.iter().flat_map(|b| &b.nodes) {
            if let Some(source) = crate::rewrite::source(&node.kind)
                && computed(source)
            {
                graph.add_edge(nodes[reader], nodes[source], ());
            }
        }
    }
    let mut groups = Vec::new();
    for component in petgraph::algo::tarjan_scc(&graph) {
        let mut members: Vec<usize> = component.iter().map(|n| graph[*n]).collect();
        members.sort();
        let member = |t: usize| members.contains(&t);
        let on_cycle = members
            .iter()
            .flat_map(|&t| program.tensors[t].branches.iter().flat_map(|b| &b.nodes))
            .find(|node| matches!(node.kind, NodeKind::ReadAt { source, .. } if member(source)));
        let Some(first) = on_cycle else { continue };
        groups.push(check_group(program, &members, first.location)?);
    }
    groups.sort_by_key(|g| g.tensors[0]);
    Ok(groups)
}

/// Checks one group (`members` sorted) and orders its tensors.
fn check_group<'c>(
    program: &Program<'c>,
    members: &[usize],
    location: Location<'c>,
) -> Result<DataGroup, PassDiagnostic<'c>> {
    let name = |t: usize| program.tensors[t].name.as_str();
    let member = |t: usize| members.contains(&t);
    let names: Vec<&str> = members.iter().map(|&t| name(t)).collect();
    let first = &program.tensors[members[0]];
    if first.domain.len() != 1 {
        return Err(PassDiagnostic::new(
            location,
            format!(
                "not yet: a cycle through reads through data ({}) is compiled for tensors over one dimension; '{}' is over {}",
                names.join(", "),
                first.name,
                first.domain.len()
            ),
        ));
    }
    let dim = first.domain[0];
    // Same-point reads order the group's tensors within a point.
    let mut before: HashMap<usize, Vec<usize>> = HashMap::new();
    for &t in members {
        let tensor = &program.tensors[t];
        if tensor.domain != [dim] {
            return Err(PassDiagnostic::new(
                tensor.location,
                format!(
                    "not yet: the tensors of a cycle through reads through data ({}) must be over one and the same dimension ('{}'), and '{}' is not",
                    names.join(", "),
                    program.dims[dim].name,
                    tensor.name
                ),
            ));
        }
        for branch in &tensor.branches {
            for (k, node) in branch.nodes.iter().enumerate() {
                match &node.kind {
                    NodeKind::Read { source, index } if member(*source) => {
                        if !matches!(index.results[..], [crate::affine::AffineExpr::Dim(0)]) {
                            return Err(PassDiagnostic::new(
                                node.location,
                                format!(
                                    "not yet: on a cycle through reads through data, '{}' reads '{}' at another point than its own; only reads through data and reads of the same point are compiled there",
                                    tensor.name,
                                    name(*source)
                                ),
                            ));
                        }
                        before.entry(t).or_default().push(*source);
                    }
                    NodeKind::ReadRange { source, .. } if member(*source) => {
                        return Err(PassDiagnostic::new(
                            node.location,
                            format!(
                                "not yet: a range read of '{}' on a cycle through reads through data",
                                name(*source)
                            ),
                        ));
                    }
                    NodeKind::ReadAt { source, index, .. } if member(*source) => {
                        let ancestors = data_ancestors(&branch.nodes, k);
                        let from_group = branch
                            .nodes
                            .iter()
                            .zip(&ancestors)
                            .find(|(n, needed)| **needed && reads_member(&n.kind, &member));
                        if let Some((n, _)) = from_group {
                            return Err(PassDiagnostic::new(
                                n.location,
                                format!(
                                    "the coordinates of a read through data of '{}' on a cycle depend on this read of the cycle's own values: the order of the cycle's points must be known before they are computed",
                                    name(*source)
                                ),
                            ));
                        }
                        if index.results.iter().any(|e| e.linear().is_none()) {
                            return Err(PassDiagnostic::new(
                                node.location,
                                "not yet: on a cycle, the coordinates of a read through data must be linear in the data, the position and the bounds (no mod, floordiv, min or max)",
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    // Body order: a tensor after the ones it reads at the same point.
    let mut order: Vec<usize> = Vec::new();
    let mut placed = vec![false; program.tensors.len()];
    while order.len() < members.len() {
        let next = members
            .iter()
            .copied()
            .find(|&t| !placed[t] && before.get(&t).is_none_or(|sources| sources.iter().all(|&s| placed[s] || s == t)));
        let Some(t) = next else {
            return Err(PassDiagnostic::new(
                location,
                format!("the same-point reads between {} form a cycle", names.join(", ")),
            ));
        };
        placed[t] = true;
        order.push(t);
    }
    Ok(DataGroup { dim, tensors: order })
}
