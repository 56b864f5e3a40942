//! Vector-Jacobian products of contractions: matrix products (of matrices,
//! vectors and batches) and einsums.

use super::{shape_of, unsupported};
use crate::diagnostics::PassDiagnostic;
use crate::program::{DYNAMIC, Einsum};
use crate::temporal_autodiff::body::Body;

/// Of `matmul(a, b)` for operand `i`.
pub(super) fn matmul<'c>(
    body: &mut Body<'c>,
    n: usize,
    i: usize,
    a: usize,
    b: usize,
    c: usize,
) -> Result<usize, PassDiagnostic<'c>> {
    Ok({
        let (x, y) = (shape_of(body, a), shape_of(body, b));
        match (x.len(), y.len(), i) {
            (2, 2, 0) => {
                let bt = body.transpose_last(b);
                body.matmul(c, bt)
            }
            (2, 2, _) => {
                let at = body.transpose_last(a);
                body.matmul(at, c)
            }
            // a[k] B[k, n]: da = B c, dB = a^T c (an outer product).
            (1, 2, 0) => body.matmul(b, c),
            (1, 2, _) => {
                let column = body.reshape(a, &[x[0], 1]);
                let row = body.reshape(c, &[1, y[1]]);
                body.matmul(column, row)
            }
            // A[m, k] b[k]: dA = c b^T, db = A^T c.
            (2, 1, 0) => {
                let column = body.reshape(c, &[x[0], 1]);
                let row = body.reshape(b, &[1, y[0]]);
                body.matmul(column, row)
            }
            (2, 1, _) => {
                let at = body.transpose_last(a);
                body.matmul(at, c)
            }
            (rx, ry, _) if rx >= 2 && ry >= 2 => {
                let g = if i == 0 {
                    let bt = body.transpose_last(b);
                    body.matmul(c, bt)
                } else {
                    let at = body.transpose_last(a);
                    body.matmul(at, c)
                };
                body.unbroadcast(g, if i == 0 { &x } else { &y })
            }
            _ => return Err(unsupported(body, n, "a batched product of a vector")),
        }
    })
}

/// Of an einsum of `ops` for operand `i`: the contraction of the cotangent
/// with the other operands.
pub(super) fn einsum<'c>(
    body: &mut Body<'c>,
    n: usize,
    i: usize,
    spec: &Einsum,
    ops: &[usize],
    c: usize,
) -> Result<usize, PassDiagnostic<'c>> {
    Ok({
        let own = &spec.operands[i];
        let mut operands = vec![spec.result.clone()];
        let mut values = vec![c];
        for (k, labels) in spec.operands.iter().enumerate() {
            if k != i {
                operands.push(labels.clone());
                values.push(ops[k]);
            }
        }
        // Labels of this operand alone (summed in it only) are
        // broadcast back.
        let shape = shape_of(body, ops[i]);
        let everywhere: Vec<char> = operands.iter().flatten().copied().collect();
        let sizes: Vec<(char, i64)> = own.iter().copied().zip(shape.iter().copied()).collect();
        if own.iter().zip(&shape).any(|(l, &size)| !everywhere.contains(l) && size == DYNAMIC) {
            return Err(unsupported(body, n, "an einsum summing a range's axis in one operand only"));
        }
        let pairs: Vec<(usize, Vec<char>)> = values.into_iter().zip(operands).collect();
        body.contract(&pairs, own, &sizes)
    })
}
