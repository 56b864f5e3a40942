//! Batched einsums as matrix products. Batching an einsum of one varying
//! operand by a shared one (queries by all keys, `thqd,nhd->thqn`) adds
//! the batch's label to one operand only, which no batched matrix product
//! of the operands' own layouts expresses: the lowering would loop over
//! every label of the result. Here such an einsum becomes one batched
//! product: the labels both operands and the result share lead (`Z`, one
//! dimension), the batch and the varying operand's other result labels
//! form the rows (`M`), the summed labels the inner dimension (`K`, in
//! their order of first appearance, so each element sums in the same
//! order), the shared operand's result labels the columns (`N`):
//! `einsum("zmk,zkn->zmn")` of permuted and reshaped operands, reshaped
//! and permuted back. Products of floats commute exactly, so the varying
//! operand goes first either way.

use crate::program::{Einsum, Movement, NodeKind, PointType};

impl<'c> super::Batcher<'_, 'c> {
    /// The batched einsum of `spec` (the unbatched program's) of new
    /// nodes `operands` as one batched matrix product, where exactly one of
    /// two float operands is batched and every summed label is on both;
    /// `None` otherwise (the caller batches the einsum as it is).
    pub(super) fn einsum_as_product(
        &mut self,
        spec: &Einsum,
        operands: &[usize],
        location: melior::ir::Location<'c>,
    ) -> Option<usize> {
        let [x, y] = operands else { return None };
        let (varying, shared, i) = match (self.batched[*x], self.batched[*y]) {
            (true, false) => (*x, *y, 0),
            (false, true) => (*y, *x, 1),
            _ => return None,
        };
        let (lv, ls) = (&spec.operands[i], &spec.operands[1 - i]);
        if self.nodes[varying].ty.shape.len() != 1 + lv.len() || self.nodes[shared].ty.shape.len() != ls.len() {
            return None;
        }
        let element = self.nodes[varying].ty.element;
        if !element.is_float() || self.nodes[shared].ty.element != element {
            return None;
        }
        let summed = spec.summed();
        if summed.iter().any(|c| !lv.contains(c) || !ls.contains(c)) {
            return None;
        }
        let zs: Vec<char> = spec.result.iter().copied().filter(|c| lv.contains(c) && ls.contains(c)).collect();
        let ms: Vec<char> = spec.result.iter().copied().filter(|c| lv.contains(c) && !ls.contains(c)).collect();
        let ns: Vec<char> = spec.result.iter().copied().filter(|c| ls.contains(c) && !lv.contains(c)).collect();
        // The varying operand's value is [D, lv...]; the shared one's [ls...].
        let size_v =
            |this: &Self, c: char| this.nodes[varying].ty.shape[1 + lv.iter().position(|&x| x == c).expect("a label")];
        let size_s =
            |this: &Self, c: char| this.nodes[shared].ty.shape[ls.iter().position(|&x| x == c).expect("a label")];
        let product = |sizes: Vec<i64>| sizes.iter().product::<i64>();
        let z = product(zs.iter().map(|&c| size_v(self, c)).collect());
        let m = self.size * product(ms.iter().map(|&c| size_v(self, c)).collect());
        let k = product(summed.iter().map(|&c| size_v(self, c)).collect());
        let n = product(ns.iter().map(|&c| size_s(self, c)).collect());
        if [z, m, k, n].iter().any(|&s| s <= 0) {
            return None;
        }
        // Varying: [D, lv...] -> [zs..., D, ms..., summed...] -> [z, m, k].
        let position_v = |c: &char| 1 + lv.iter().position(|x| x == c).expect("a label");
        let order: Vec<usize> = zs
            .iter()
            .map(position_v)
            .chain([0])
            .chain(ms.iter().map(position_v))
            .chain(summed.iter().map(position_v))
            .collect();
        let a = self.arranged(varying, &order, vec![z, m, k], location);
        // Shared: [ls...] -> [zs..., summed..., ns...] -> [z, k, n].
        let position_s = |c: &char| ls.iter().position(|x| x == c).expect("a label");
        let order: Vec<usize> =
            zs.iter().map(position_s).chain(summed.iter().map(position_s)).chain(ns.iter().map(position_s)).collect();
        let b = self.arranged(shared, &order, vec![z, k, n], location);
        let spec_result = spec.result.clone();
        let spec = Einsum { operands: vec![vec!['z', 'm', 'k'], vec!['z', 'k', 'n']], result: vec!['z', 'm', 'n'] };
        let ty = PointType { shape: vec![z, m, n], element };
        let c = self.push(NodeKind::Einsum(spec, vec![a, b]), ty, false, location);
        // [z, m, n] -> [zs..., D, ms..., ns...] -> [D, result...].
        let labels: Vec<char> =
            zs.iter().copied().chain(['\0']).chain(ms.iter().copied()).chain(ns.iter().copied()).collect();
        let sizes: Vec<i64> = zs
            .iter()
            .map(|&c| size_v(self, c))
            .chain([self.size])
            .chain(ms.iter().map(|&c| size_v(self, c)))
            .chain(ns.iter().map(|&c| size_s(self, c)))
            .collect();
        let unfolded = self.push(
            NodeKind::Move(Movement::Reshape, vec![c]),
            PointType { shape: sizes.clone(), element },
            false,
            location,
        );
        let order: Vec<usize> = std::iter::once('\0')
            .chain(spec_result.iter().copied())
            .map(|c| labels.iter().position(|&x| x == c).expect("a label"))
            .collect();
        let shape: Vec<i64> = order.iter().map(|&p| sizes[p]).collect();
        Some(self.push(
            NodeKind::Move(Movement::Permute(order), vec![unfolded]),
            PointType { shape, element },
            true,
            location,
        ))
    }

    /// `x` permuted by `order` (result axis `i` is axis `order[i]`) and
    /// reshaped to `shape`, each step only where it changes something; an
    /// unbatched value (the batch, where `x` has it, is folded in).
    fn arranged(&mut self, x: usize, order: &[usize], shape: Vec<i64>, location: melior::ir::Location<'c>) -> usize {
        let element = self.nodes[x].ty.element;
        let mut value = x;
        if order.iter().enumerate().any(|(i, &k)| i != k) {
            let permuted: Vec<i64> = order.iter().map(|&k| self.nodes[x].ty.shape[k]).collect();
            let ty = PointType { shape: permuted, element };
            value = self.push(NodeKind::Move(Movement::Permute(order.to_vec()), vec![x]), ty, false, location);
        }
        if self.nodes[value].ty.shape != shape {
            let ty = PointType { shape, element };
            value = self.push(NodeKind::Move(Movement::Reshape, vec![value]), ty, false, location);
        }
        value
    }
}
