//! The symbolic dependence graph (SDG) of a program: one node per recurrent
//! tensor, one edge per read (reader -> source), labelled with the read's
//! index map and, where the index is a constant shift of the reader's own
//! variables, its distance vector.

use crate::affine::AffineMap;
use crate::program::{NodeKind, Program};
use melior::ir::Location;
use petgraph::graph::{DiGraph, NodeIndex};

/// One read, as an SDG edge.
#[derive(Clone, Debug)]
pub struct ReadEdge<'c> {
    /// Branch of the reader the read appears in.
    pub branch: usize,
    pub index: AffineMap,
    /// For each source dimension (source domain order): `Some(c)` when the
    /// coordinate is `d + c` for the same-named reader variable `d`.
    pub shifts: Vec<Option<i64>>,
    pub location: Location<'c>,
}

impl ReadEdge<'_> {
    /// Whether the read is of the very same point (`x[t]` read at `t`).
    pub fn is_same_point(&self) -> bool {
        self.shifts.iter().all(|s| *s == Some(0))
    }
}

/// Where a range read's box lies along one source dimension, relative to
/// the reader's own coordinate of that dimension (its domain position
/// `at`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoxOffsets {
    /// A point, `max(lower)`: its offset when it is one known offset and
    /// uncapped.
    Point(Option<i64>),
    /// The offsets `[max(lower), min(upper))`, unknown sides unbounded.
    Range(i64, i64),
}

/// The box of a `temporal.read_range` along one source dimension (its
/// `lower`, `upper` and `caps` maps) as offsets from the reader's
/// coordinate at domain position `at`.
pub fn box_offsets(lower: &AffineMap, upper: &AffineMap, caps: &AffineMap, at: usize) -> BoxOffsets {
    let offsets = |m: &AffineMap| -> Vec<Option<i64>> { m.results.iter().map(|e| e.offset_from_dim(at)).collect() };
    let (lo, hi) = (offsets(lower), offsets(upper));
    if hi.is_empty() {
        return BoxOffsets::Point((lo.len() == 1 && caps.results.is_empty()).then(|| lo[0]).flatten());
    }
    let low = lo.iter().map(|o| o.unwrap_or(i64::MIN)).max().unwrap_or(i64::MIN);
    let high = hi.iter().map(|o| o.unwrap_or(i64::MAX)).min().unwrap_or(i64::MAX);
    BoxOffsets::Range(low, high)
}

/// The SDG: node weights are tensor indices (equal to node indices).
pub struct Sdg<'c> {
    pub graph: DiGraph<usize, ReadEdge<'c>>,
}

impl<'c> Sdg<'c> {
    /// Builds the graph of `program`.
    pub fn build(program: &Program<'c>) -> Self {
        let mut graph = DiGraph::new();
        for i in 0..program.tensors.len() {
            graph.add_node(i);
        }
        for (reader, tensor) in program.tensors.iter().enumerate() {
            for (b, branch) in tensor.branches.iter().enumerate() {
                for node in &branch.nodes {
                    if let NodeKind::ReadRange { source, lower, upper, caps } = &node.kind {
                        // Along each source dimension the reader also has:
                        // Some(0) when the box may hold the reader's own
                        // coordinate (a range [lo, hi) with lo <= t < hi for
                        // offsets of `t`, or an unknown side; a point at `t`).
                        let shifts = program.tensors[*source]
                            .domain
                            .iter()
                            .enumerate()
                            .map(|(k, dim)| {
                                let position = tensor.domain.iter().position(|d| d == dim)?;
                                match box_offsets(&lower[k], &upper[k], &caps[k], position) {
                                    BoxOffsets::Point(point) => (point == Some(0)).then_some(0),
                                    BoxOffsets::Range(low, high) => (low <= 0 && 0 < high).then_some(0),
                                }
                            })
                            .collect();
                        let index = AffineMap {
                            num_dims: tensor.domain.len(),
                            num_symbols: program.dims.len(),
                            results: Vec::new(),
                        };
                        graph.add_edge(
                            NodeIndex::new(reader),
                            NodeIndex::new(*source),
                            ReadEdge { branch: b, index, shifts, location: node.location },
                        );
                    }
                    if let NodeKind::Read { source, index } = &node.kind {
                        let shifts = program.tensors[*source]
                            .domain
                            .iter()
                            .zip(&index.results)
                            .map(|(dim, expr)| {
                                let position = tensor.domain.iter().position(|d| d == dim)?;
                                expr.offset_from_dim(position)
                            })
                            .collect();
                        graph.add_edge(
                            NodeIndex::new(reader),
                            NodeIndex::new(*source),
                            ReadEdge { branch: b, index: index.clone(), shifts, location: node.location },
                        );
                    }
                }
            }
        }
        Self { graph }
    }

    /// A cycle of same-point reads (`y[t]` needing `y[t]`), as the tensors on
    /// it in read order (first repeated at the end) and the first read's
    /// location; `None` if there is none.
    pub fn zero_distance_cycle(&self) -> Option<(Vec<usize>, Location<'c>)> {
        let same_point = self.graph.filter_map(|_, n| Some(*n), |_, e| e.is_same_point().then_some(e.location));
        for component in petgraph::algo::tarjan_scc(&same_point) {
            let start = *component.iter().min().expect("components are non-empty");
            let self_loop = same_point.find_edge(start, start);
            if component.len() == 1 && self_loop.is_none() {
                continue;
            }
            // Walk same-point edges inside the component until a node repeats.
            let mut path = vec![start];
            let mut locations = Vec::new();
            let mut current = start;
            loop {
                let edge = same_point
                    .edges(current)
                    .filter(|e| component.contains(&petgraph::visit::EdgeRef::target(e)))
                    .min_by_key(petgraph::visit::EdgeRef::target)
                    .expect("a strongly connected component has an edge inside it");
                let next = petgraph::visit::EdgeRef::target(&edge);
                locations.push(*edge.weight());
                if let Some(first) = path.iter().position(|n| *n == next) {
                    let mut cycle: Vec<usize> = path[first..].iter().map(|n| same_point[*n]).collect();
                    cycle.push(same_point[next]);
                    return Some((cycle, locations[first]));
                }
                path.push(next);
                current = next;
            }
        }
        None
    }
}
