//! The value of a branch's node while the branch is built (the core the
//! op kinds' lowerings share: a view of memory, or the sizes of a value its
//! users or its row group compute).

use super::Built;
use super::views::View;
use crate::ir_builder::Extent;

/// A node's value while its branch is built: a view, or only the sizes of
/// a value its users or its row group compute.
#[derive(Clone)]
pub(super) enum NodeValue<'c, 'a> {
    View(View<'c, 'a>),
    Sizes(Vec<Extent<'c, 'a>>),
}

impl<'c, 'a> NodeValue<'c, 'a> {
    pub(super) fn sizes(&self) -> &[Extent<'c, 'a>] {
        match self {
            NodeValue::View(v) => &v.sizes,
            NodeValue::Sizes(s) => s,
        }
    }

    /// The view; a value without one is a compiler fault.
    pub(super) fn view(&self) -> Built<&View<'c, 'a>> {
        match self {
            NodeValue::View(v) => Ok(v),
            NodeValue::Sizes(_) => Err("compiler fault: a value computed by its users is read as a view".into()),
        }
    }

    pub(super) fn as_view(&self) -> Option<&View<'c, 'a>> {
        match self {
            NodeValue::View(v) => Some(v),
            NodeValue::Sizes(_) => None,
        }
    }
}
