//! Typing the ops about the processes of a run: `temporal.rank`,
//! `temporal.world_size` (scalars) and `temporal.all_reduce` (a value of
//! static shape, of a type MPI reduces: f32, f64, i32, i64).

use super::*;
use crate::program::Collective;

impl<'c> Builder<'c, '_> {
    pub(super) fn collective_node(
        &mut self,
        op: OperationRef<'c, '_>,
        name: &str,
        operand_nodes: &[usize],
        nodes: &[Node<'c>],
        ty: &PointType,
    ) -> Option<NodeKind> {
        if name != t::AllReduceOp::NAME {
            if !ty.shape.is_empty() || ty.element == ElementType::I1 {
                self.error(op, format!("'{name}' gives a scalar number (tensor<i64>, tensor<f32>, ...), not {ty}"));
                return None;
            }
            return Some(if name == t::RankOp::NAME { NodeKind::Rank } else { NodeKind::WorldSize });
        }
        let Some(reduction) = op.attribute("reduction").ok().and_then(string_attr) else {
            self.error(
                op,
                "temporal.all_reduce needs a string 'reduction': \"sum\", \"mean\", \"max\" or \"min\"".into(),
            );
            return None;
        };
        let Some(collective) = Collective::parse(&reduction) else {
            self.error(
                op,
                format!("temporal.all_reduce: unknown reduction '{reduction}' (\"sum\", \"mean\", \"max\" or \"min\")"),
            );
            return None;
        };
        let operand = &nodes[operand_nodes[0]].ty;
        if !operand.is_static() {
            self.error(
                op,
                format!(
                    "temporal.all_reduce needs a value of static shape (every process reduces as many elements), got {operand}"
                ),
            );
            return None;
        }
        if operand.element == ElementType::I1 {
            self.error(op, format!("temporal.all_reduce reduces numbers (f32, f64, i32, i64), not booleans ({operand}): cast them first"));
            return None;
        }
        if collective == Collective::Mean && !operand.element.is_float() {
            self.error(op, format!("temporal.all_reduce \"mean\" needs floats, got {operand}"));
            return None;
        }
        if ty != operand {
            self.error(op, format!("temporal.all_reduce of {operand} gives {operand}, not {ty}"));
            return None;
        }
        Some(NodeKind::AllReduce(collective, operand_nodes[0]))
    }
}
