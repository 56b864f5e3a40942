//! Building branch bodies for `temporal-autodiff`: typed constructors of
//! body nodes (each computes its result type the way the verifier would),
//! and the broadcasting helpers gradients need.

use crate::print::dense;
use crate::program::{
    BinaryKind, DYNAMIC, Einsum, ElementType, Movement, Node, NodeKind, PointType, Predicate, ReduceKind, UnaryKind,
};
use melior::ir::Location;

/// The nodes of one branch body under construction. Nodes are appended in
/// topological order; every new node gets `location`.
pub(super) struct Body<'c> {
    pub nodes: Vec<Node<'c>>,
    pub location: Location<'c>,
}

impl<'c> Body<'c> {
    pub fn new(location: Location<'c>) -> Self {
        Self { nodes: Vec::new(), location }
    }

    pub fn ty(&self, n: usize) -> &PointType {
        &self.nodes[n].ty
    }

    fn shape(&self, n: usize) -> Vec<i64> {
        self.nodes[n].ty.shape.clone()
    }

    fn element(&self, n: usize) -> ElementType {
        self.nodes[n].ty.element
    }

    pub fn push(&mut self, kind: NodeKind, ty: PointType) -> usize {
        self.nodes.push(Node { kind, ty, location: self.location });
        self.nodes.len() - 1
    }

    /// A scalar constant.
    pub fn scalar(&mut self, value: f64, element: ElementType) -> usize {
        let ty = PointType { shape: Vec::new(), element };
        let integers = crate::program::integers_of(&[value], element);
        self.push(
            NodeKind::Constant { text: dense(&[value], &ty).into(), values: [value].into(), integers: integers.into() },
            ty,
        )
    }

    /// `value` in every element of `ty` (a scalar broadcast, so that large
    /// shapes need no large constant).
    pub fn splat(&mut self, value: f64, ty: &PointType) -> usize {
        let s = self.scalar(value, ty.element);
        if ty.shape.is_empty() { s } else { self.expand(s, &ty.shape) }
    }

    pub fn zeros(&mut self, ty: &PointType) -> usize {
        self.splat(0.0, ty)
    }

    pub fn unary(&mut self, kind: UnaryKind, a: usize) -> usize {
        let ty = self.ty(a).clone();
        self.push(NodeKind::Unary(kind, a), ty)
    }

    fn broadcast(&self, operands: &[usize]) -> Vec<i64> {
        let shapes: Vec<&[i64]> = operands.iter().map(|&o| self.nodes[o].ty.shape.as_slice()).collect();
        PointType::broadcast_shape(&shapes).expect("gradient operands broadcast")
    }

    pub fn binary(&mut self, kind: BinaryKind, a: usize, b: usize) -> usize {
        let ty = PointType { shape: self.broadcast(&[a, b]), element: self.element(a) };
        self.push(NodeKind::Binary(kind, a, b), ty)
    }

    pub fn add(&mut self, a: usize, b: usize) -> usize {
        self.binary(BinaryKind::Add, a, b)
    }

    pub fn mul(&mut self, a: usize, b: usize) -> usize {
        self.binary(BinaryKind::Mul, a, b)
    }

    pub fn div(&mut self, a: usize, b: usize) -> usize {
        self.binary(BinaryKind::Div, a, b)
    }

    pub fn neg(&mut self, a: usize) -> usize {
        self.unary(UnaryKind::Neg, a)
    }

    /// `value - a`, `value` a scalar of `a`'s element type.
    pub fn rsub_scalar(&mut self, value: f64, a: usize) -> usize {
        let s = self.scalar(value, self.element(a));
        self.binary(BinaryKind::Sub, s, a)
    }

    pub fn mul_scalar(&mut self, a: usize, value: f64) -> usize {
        let s = self.scalar(value, self.element(a));
        self.mul(a, s)
    }

    pub fn compare(&mut self, predicate: Predicate, a: usize, b: usize) -> usize {
        let ty = PointType { shape: self.broadcast(&[a, b]), element: ElementType::I1 };
        self.push(NodeKind::Compare(predicate, a, b), ty)
    }

    /// Compares `a` with the scalar `value`.
    pub fn compare_scalar(&mut self, predicate: Predicate, a: usize, value: f64) -> usize {
        let s = self.scalar(value, self.element(a));
        self.compare(predicate, a, s)
    }

    pub fn select(&mut self, condition: usize, on_true: usize, on_false: usize) -> usize {
        let ty = PointType { shape: self.broadcast(&[condition, on_true, on_false]), element: self.element(on_true) };
        self.push(NodeKind::Select(condition, on_true, on_false), ty)
    }

    /// `condition ? value : 0`.
    pub fn mask(&mut self, condition: usize, value: usize) -> usize {
        let zero = self.scalar(0.0, self.element(value));
        self.select(condition, value, zero)
    }

    pub fn cast(&mut self, a: usize, element: ElementType) -> usize {
        if self.element(a) == element {
            return a;
        }
        let ty = PointType { shape: self.shape(a), element };
        self.push(NodeKind::Cast(a), ty)
    }

    pub fn reshape(&mut self, a: usize, shape: &[i64]) -> usize {
        if self.ty(a).shape == shape {
            return a;
        }
        let ty = PointType { shape: shape.to_vec(), element: self.element(a) };
        self.push(NodeKind::Move(Movement::Reshape, vec![a]), ty)
    }

    pub fn expand(&mut self, a: usize, shape: &[i64]) -> usize {
        if self.ty(a).shape == shape {
            return a;
        }
        let ty = PointType { shape: shape.to_vec(), element: self.element(a) };
        self.push(NodeKind::Move(Movement::Expand, vec![a]), ty)
    }

    pub fn permute(&mut self, a: usize, permutation: &[usize]) -> usize {
        let shape = self.shape(a);
        let ty = PointType { shape: permutation.iter().map(|&k| shape[k]).collect(), element: self.element(a) };
        self.push(NodeKind::Move(Movement::Permute(permutation.to_vec()), vec![a]), ty)
    }

    /// The last two dimensions swapped.
    pub fn transpose_last(&mut self, a: usize) -> usize {
        let rank = self.shape(a).len();
        let mut permutation: Vec<usize> = (0..rank).collect();
        permutation.swap(rank - 2, rank - 1);
        self.permute(a, &permutation)
    }

    pub fn flip(&mut self, a: usize, axis: usize) -> usize {
        let ty = self.ty(a).clone();
        self.push(NodeKind::Move(Movement::Flip(axis), vec![a]), ty)
    }

    pub fn slice(&mut self, a: usize, offsets: &[i64], shape: &[i64]) -> usize {
        let ty = PointType { shape: shape.to_vec(), element: self.element(a) };
        self.push(NodeKind::Move(Movement::Slice(offsets.to_vec()), vec![a]), ty)
    }

    pub fn concat(&mut self, a: usize, b: usize, axis: usize) -> usize {
        let mut shape = self.shape(a);
        shape[axis] += self.shape(b)[axis];
        let ty = PointType { shape, element: self.element(a) };
        self.push(NodeKind::Move(Movement::Concat(axis), vec![a, b]), ty)
    }

    pub fn arange(&mut self, n: i64, element: ElementType) -> usize {
        self.push(NodeKind::Move(Movement::Arange, vec![]), PointType { shape: vec![n], element })
    }

    /// A reduction along `axis` (removed, except for a running sum).
    pub fn reduce(&mut self, kind: ReduceKind, a: usize, axis: usize) -> usize {
        let mut shape = self.shape(a);
        if kind != ReduceKind::CumSum {
            shape.remove(axis);
        }
        let ty = PointType { shape, element: self.element(a) };
        self.push(NodeKind::Reduce(kind, a, axis), ty)
    }

    /// The dialect's matmul: vector-matrix, matrix-vector, matrix-matrix
    /// and batched (broadcast batch dimensions).
    pub fn matmul(&mut self, a: usize, b: usize) -> usize {
        let (x, y) = (self.shape(a), self.shape(b));
        let shape = match (x.len(), y.len()) {
            (1, 2) => vec![y[1]],
            (2, 1) => vec![x[0]],
            (rx, ry) => {
                let mut shape = PointType::broadcast_shape(&[&x[..rx - 2], &y[..ry - 2]]).expect("batch dims");
                shape.extend([x[rx - 2], y[ry - 1]]);
                shape
            }
        };
        let ty = PointType { shape, element: self.element(a) };
        self.push(NodeKind::Matmul(a, b), ty)
    }

    /// Sums `ct` (of a broadcast shape) back to `target`: over the leading
    /// dimensions `target` lacks and over those where `target` has size 1.
    pub fn unbroadcast(&mut self, ct: usize, target: &[i64]) -> usize {
        let mut value = ct;
        while self.shape(value).len() > target.len() {
            value = self.reduce(ReduceKind::Sum, value, 0);
        }
        let shape = self.shape(value);
        let mut reduced = false;
        for axis in (0..target.len()).rev() {
            if target[axis] == 1 && shape[axis] != 1 {
                value = self.reduce(ReduceKind::Sum, value, axis);
                reduced = true;
            }
        }
        if reduced { self.reshape(value, target) } else { value }
    }

    /// `value` (the shape of `a` without `axis`) with `axis` put back and
    /// repeated to `a`'s shape (dynamic sizes included: by broadcasting
    /// against zeros shaped like `a`).
    pub fn restore_axis(&mut self, value: usize, a: usize, axis: usize) -> usize {
        let full = self.shape(a);
        let mut kept = full.clone();
        kept[axis] = 1;
        let r = self.reshape(value, &kept);
        if full.contains(&DYNAMIC) {
            let zeros = self.like(a, 0.0, self.element(value));
            self.add(r, zeros)
        } else {
            self.expand(r, &full)
        }
    }

    /// `value` in every element of `a`'s shape (which may be dynamic: a
    /// select on `a == a`, true or not, of the same scalar twice).
    pub fn like(&mut self, a: usize, value: f64, element: ElementType) -> usize {
        let shape = self.shape(a);
        if !shape.contains(&DYNAMIC) {
            return self.splat(value, &PointType { shape, element });
        }
        let s = self.scalar(value, element);
        let same = self.compare(Predicate::Eq, a, a);
        self.select(same, s, s)
    }

    /// A contraction of `operands` (node, labels) to `result` labels, any
    /// of them rank 0 and result labels in no operand allowed (those are
    /// broadcast to `sizes`): an einsum over the operands with labels,
    /// times the scalars, expanded where needed. One operand is summed and
    /// permuted without an einsum.
    pub fn contract(&mut self, operands: &[(usize, Vec<char>)], result: &[char], sizes: &[(char, i64)]) -> usize {
        type Operands<'a> = Vec<&'a (usize, Vec<char>)>;
        let (scalars, tensors): (Operands, Operands) = operands.iter().partition(|(_, labels)| labels.is_empty());
        let present: Vec<char> =
            result.iter().copied().filter(|c| tensors.iter().any(|(_, l)| l.contains(c))).collect();
        let element = self.element(operands[0].0);
        let mut value = match tensors[..] {
            [] => None,
            [(a, labels)] => {
                let (mut v, mut labels) = (*a, labels.clone());
                for axis in (0..labels.len()).rev() {
                    if !present.contains(&labels[axis]) {
                        v = self.reduce(ReduceKind::Sum, v, axis);
                        labels.remove(axis);
                    }
                }
                if labels != present {
                    let permutation: Vec<usize> =
                        present.iter().map(|c| labels.iter().position(|x| x == c).expect("present")).collect();
                    v = self.permute(v, &permutation);
                }
                Some(v)
            }
            _ => {
                let spec =
                    Einsum { operands: tensors.iter().map(|(_, l)| l.clone()).collect(), result: present.clone() };
                let size = |c: &char| sizes.iter().find(|(x, _)| x == c).map(|(_, n)| *n).expect("a label's size");
                let ty = PointType { shape: present.iter().map(size).collect(), element };
                Some(self.push(NodeKind::Einsum(spec, tensors.iter().map(|(a, _)| *a).collect()), ty))
            }
        };
        for (s, _) in scalars {
            value = Some(match value {
                Some(v) => self.mul(v, *s),
                None => *s,
            });
        }
        let value = value.expect("an operand");
        if present.len() == result.len() {
            return value;
        }
        let size = |c: &char| sizes.iter().find(|(x, _)| x == c).map(|(_, n)| *n).expect("a label's size");
        let kept: Vec<i64> = result.iter().map(|c| if present.contains(c) { size(c) } else { 1 }).collect();
        let full: Vec<i64> = result.iter().map(size).collect();
        let r = self.reshape(value, &kept);
        self.expand(r, &full)
    }
}
