//! The key half of attention's backward pass (`temporal.flash_attention`
//! with `part = "key"`): per key, over the query rows that read it (a
//! range of stashed rows: queries, output cotangents, the softmax's
//! maximum, sum and `D`), the keys' and values' cotangents
//!
//! ```text
//! s = q[r] . k; P = exp(s * c - m[r]) / l[r]
//! dV = sum_r P dO[r];  dS = P * (dO[r] . v - D[r]) * c;  dK = sum_r dS q[r]
//! ```
//!
//! as `temporal-autodiff` writes them for the keys and values of one range
//! (`ranges::join`). Matched from `dK`'s contraction.

use super::{Input, Output, Plan, Sizes, first_operand, rename, same_scale, same_set, unique};
use crate::program::{BinaryKind, Branch, DYNAMIC, FlashPart, NodeKind, UnaryKind};
use crate::temporal_tile_ranges::{contraction, swapped};

/// `a - b` at node `k`.
fn difference(branch: &Branch, k: usize) -> Option<(usize, usize)> {
    match branch.nodes[k].kind {
        NodeKind::Binary(BinaryKind::Sub, a, b) => Some((a, b)),
        _ => None,
    }
}

/// The nodes of the key half ending at `dK`'s contraction.
struct Chain {
    ds: usize,
    ds0: usize,
    q_rows: usize,
    p: usize,
    diff: usize,
    e: usize,
    l: usize,
    sub: usize,
    x: usize,
    m: usize,
    dpv: usize,
    d: usize,
    s: usize,
    scale: Option<usize>,
}

/// The chain's nodes from `dK = dS . q[r]` (`dS = P * (dPv - D)`, scaled
/// by the scores' scale, `P = exp(X - m) / l`, `X = s * c | s`).
fn chain(branch: &Branch, a: usize, b: usize) -> Option<Chain> {
    let nodes = &branch.nodes;
    // dS: a product with P, possibly scaled.
    let scaled = |x: usize| -> Option<(usize, Option<usize>)> {
        let scalar = |k: usize| nodes[k].ty.shape.iter().all(|&d| d == 1);
        match nodes[x].kind {
            NodeKind::Binary(BinaryKind::Mul, u, w) if scalar(w) && !scalar(u) => Some((u, Some(w))),
            NodeKind::Binary(BinaryKind::Mul, u, w) if scalar(u) && !scalar(w) => Some((w, Some(u))),
            _ => None,
        }
    };
    let (ds, q_rows) = [(a, b), (b, a)].into_iter().find(|&(ds, _)| {
        let inner = scaled(ds).map_or(ds, |(u, _)| u);
        matches!(nodes[inner].kind, NodeKind::Binary(BinaryKind::Mul, ..))
    })?;
    let (ds0, ds_scale) = match scaled(ds) {
        Some((u, c)) if matches!(nodes[u].kind, NodeKind::Binary(BinaryKind::Mul, ..)) => (u, c),
        _ => (ds, None),
    };
    let NodeKind::Binary(BinaryKind::Mul, u, w) = nodes[ds0].kind else { return None };
    let is_weights = |p: usize| matches!(nodes[p].kind, NodeKind::Binary(BinaryKind::Div, e, _) if matches!(nodes[e].kind, NodeKind::Unary(UnaryKind::Exp, _)));
    let (p, diff) = if is_weights(u) { (u, w) } else { (w, u) };
    let NodeKind::Binary(BinaryKind::Div, e, l) = nodes[p].kind else { return None };
    let NodeKind::Unary(UnaryKind::Exp, sub) = nodes[e].kind else { return None };
    let (x, m) = difference(branch, sub)?;
    let (dpv, d) = difference(branch, diff)?;
    let (s, scale) = match scaled(x) {
        Some((s, c)) if contraction(branch, s).is_some() => (s, c),
        _ => (x, None),
    };
    match (scale, ds_scale) {
        (None, None) => {}
        (Some(c), Some(c2)) if same_scale(branch, c, c2) => {}
        _ => return None,
    }
    Some(Chain { ds, ds0, q_rows, p, diff, e, l, sub, x, m, dpv, d, s, scale })
}

/// The plan for the key half whose `dK` is contraction `dk`, and the
/// chain's nodes only it may use.
pub(super) fn plan(branch: &Branch, dk: usize, users: &[Vec<usize>]) -> Option<(Plan, Vec<usize>)> {
    let nodes = &branch.nodes;
    let (spec_dk, [a, b]) = contraction(branch, dk)?;
    let Chain { ds, ds0, q_rows, p, diff, e, l, sub, x, m, dpv, d, s, scale } = chain(branch, a, b)?;
    // The scores: the query rows by the key.
    let (score, k) = first_operand(branch, s, q_rows)?;
    let shape = nodes[s].ty.shape.clone();
    if [x, e, p, dpv, diff, ds0, m, l, d].iter().any(|&v| nodes[v].ty.shape != shape) {
        return None;
    }
    let (ql, kl, sl) = (&score.operands[0], &score.operands[1], &score.result);
    let summed = score.summed();
    let [dl] = summed.as_slice() else { return None };
    let rho_at = nodes[q_rows].ty.shape.iter().position(|&n| n == DYNAMIC)?;
    let rho = ql[rho_at];
    let groups: Vec<char> = kl.iter().copied().filter(|c| c != dl).collect();
    let rows: Vec<char> = ql.iter().copied().filter(|c| *c != rho && c != dl && !groups.contains(c)).collect();
    let s_labels: Vec<char> = std::iter::once(rho).chain(groups.iter().copied()).chain(rows.iter().copied()).collect();
    if ![ql, kl, sl].iter().all(|l| unique(l)) || kl.contains(&rho) || !ql.contains(dl) || !same_set(sl, &s_labels) {
        return None;
    }
    if !groups.iter().all(|g| ql.contains(g)) {
        return None;
    }
    let mut sizes = Sizes::default();
    sizes.add(ql, &nodes[q_rows].ty.shape)?;
    sizes.add(kl, &nodes[k].ty.shape)?;
    // dPv = dO[r] . v, named as the scores.
    let (spec0, [pa, pb]) = contraction(branch, dpv)?;
    let dynamic = |k: usize| nodes[k].ty.shape.contains(&DYNAMIC);
    let (spec_dpv, d_o, v) = match (dynamic(pa), dynamic(pb)) {
        (true, false) => (spec0, pa, pb),
        (false, true) => (swapped(&spec0), pb, pa),
        _ => return None,
    };
    let spec_dpv = rename(&spec_dpv, &spec_dpv.result.clone(), sl)?;
    let dol = spec_dpv.operands[0].clone();
    let vl = spec_dpv.operands[1].clone();
    let summed = spec_dpv.summed();
    let [el] = summed.as_slice() else { return None };
    let want_v: Vec<char> = groups.iter().copied().chain([*el]).collect();
    let want_do: Vec<char> = s_labels.iter().copied().chain([*el]).collect();
    if !unique(&vl) || !unique(&dol) || !same_set(&vl, &want_v) || !same_set(&dol, &want_do) {
        return None;
    }
    sizes.add(&dol, &nodes[d_o].ty.shape)?;
    sizes.add(&vl, &nodes[v].ty.shape)?;
    // dV = sum_r P dO[r]: a reader of P contracting it with the same rows.
    let (dv, dv_labels) = users[p].iter().find_map(|&u| {
        if u == ds0 {
            return None;
        }
        let (spec, other) = first_operand(branch, u, p)?;
        if other != d_o {
            return None;
        }
        let spec = rename(&spec, &spec.operands[0].clone(), sl)?;
        // dO's axes named as in dPv but for its own label.
        let e3 = spec.operands[1].iter().zip(&dol).find(|(_, y)| **y == *el).map(|(x, _)| *x)?;
        let fits = spec.operands[1].iter().zip(&dol).all(|(x, y)| if y == el { *x == e3 } else { x == y });
        let want: Vec<char> = groups.iter().copied().chain([e3]).collect();
        (fits && unique(&spec.result) && same_set(&spec.result, &want)).then(|| (u, (spec.result.clone(), e3)))
    })?;
    let (dv_result, e3) = dv_labels;
    // dK = sum_r dS q[r], named as the scores.
    let spec_dk = if a == ds { spec_dk } else { swapped(&spec_dk) };
    let spec_dk = rename(&spec_dk, &spec_dk.operands[0].clone(), sl)?;
    let d2 = spec_dk.operands[1].iter().zip(ql).find(|(_, y)| *y == dl).map(|(x, _)| *x)?;
    let fits = spec_dk.operands[1].iter().zip(ql).all(|(x, y)| if y == dl { *x == d2 } else { x == y });
    let want: Vec<char> = groups.iter().copied().chain([d2]).collect();
    if !fits || !unique(&spec_dk.result) || !same_set(&spec_dk.result, &want) {
        return None;
    }
    // The range dynamic, all else static; floats of one type.
    if sizes.0.get(&rho) != Some(&DYNAMIC) || sizes.0.iter().any(|(c, &n)| *c != rho && n == DYNAMIC) {
        return None;
    }
    let element = nodes[dk].ty.element;
    let all = [q_rows, d_o, m, l, d, k, v, dv];
    if !element.is_float() || all.iter().chain(scale.as_ref()).any(|&a| nodes[a].ty.element != element) {
        return None;
    }
    let gp = sizes.product(&groups);
    let rp = sizes.product(&rows);
    let (dkn, dvn) = (sizes.0[dl], sizes.0[el]);
    let rows_order = |tail: &[char]| -> Vec<char> { s_labels.iter().chain(tail).copied().collect() };
    let own = |tail: char| -> Vec<char> { groups.iter().copied().chain([tail]).collect() };
    // The statistics are named as the scores (their shapes are the scores').
    let stat_of =
        |node: usize| Input { node, labels: sl.clone(), order: rows_order(&[]), shape: vec![DYNAMIC, gp, rp] };
    let inputs = vec![
        Input { node: q_rows, labels: ql.clone(), order: rows_order(&[*dl]), shape: vec![DYNAMIC, gp, rp, dkn] },
        Input { node: d_o, labels: dol.clone(), order: rows_order(&[*el]), shape: vec![DYNAMIC, gp, rp, dvn] },
        stat_of(m),
        stat_of(l),
        stat_of(d),
        Input { node: k, labels: kl.clone(), order: own(*dl), shape: vec![1, gp, dkn] },
        Input { node: v, labels: vl.clone(), order: own(*el), shape: vec![1, gp, dvn] },
    ];
    sizes.add(&[d2], &[dkn])?;
    sizes.add(&[e3], &[dvn])?;
    let outputs = vec![
        Output {
            node: dk,
            offset: 0,
            width: dkn,
            order: own(d2),
            sizes: sizes.of(&own(d2)),
            labels: spec_dk.result.clone(),
        },
        Output { node: dv, offset: dkn, width: dvn, order: own(e3), sizes: sizes.of(&own(e3)), labels: dv_result },
    ];
    let mut internal = vec![s, e, p, sub, dpv, diff, ds0];
    if x != s {
        internal.push(x);
    }
    if ds != ds0 {
        internal.push(ds);
    }
    let plan = Plan { part: FlashPart::Key, inputs, scale, result: vec![1, gp, dkn + dvn], outputs, location: dk };
    Some((plan, internal))
}
