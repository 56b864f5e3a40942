//! Collectives of the program model: `temporal.all_reduce` and what every
//! pass asks of it (which reduction, whether a program has any).

use super::{NodeKind, Program};

/// The reduction of a `temporal.all_reduce` over the processes of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    Sum,
    /// The sum divided by the number of processes (floats).
    Mean,
    Max,
    Min,
}

impl Collective {
    /// Parses the `reduction` attribute's value.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "sum" => Self::Sum,
            "mean" => Self::Mean,
            "max" => Self::Max,
            "min" => Self::Min,
            _ => return None,
        })
    }

    /// The attribute text.
    pub fn text(self) -> &'static str {
        match self {
            Self::Sum => "sum",
            Self::Mean => "mean",
            Self::Max => "max",
            Self::Min => "min",
        }
    }
}

impl NodeKind {
    /// Whether the node has an effect besides its value, so that it runs
    /// once per computed point even when nothing uses its value, and two
    /// such nodes are never merged: an external call (a callback may have
    /// effects) or a collective (every process must reach the same
    /// collectives in the same order).
    pub fn has_effect(&self) -> bool {
        matches!(self, NodeKind::Call { .. } | NodeKind::AllReduce(..))
    }

    /// Whether the node's value depends on the process of the run (its
    /// rank) or on the run's processes together.
    pub fn is_collective_or_process(&self) -> bool {
        matches!(self, NodeKind::AllReduce(..) | NodeKind::Rank | NodeKind::WorldSize)
    }
}

impl Program<'_> {
    /// Whether the program has a collective (`temporal.all_reduce`): only
    /// then does a run touch MPI.
    pub fn has_collectives(&self) -> bool {
        self.tensors
            .iter()
            .flat_map(|t| &t.branches)
            .flat_map(|b| &b.nodes)
            .any(|n| matches!(n.kind, NodeKind::AllReduce(..)))
    }

    /// Whether the program uses MPI at all: a collective, or the rank or
    /// the number of processes as a value.
    pub fn uses_processes(&self) -> bool {
        self.tensors.iter().flat_map(|t| &t.branches).flat_map(|b| &b.nodes).any(|n| n.kind.is_collective_or_process())
    }
}
