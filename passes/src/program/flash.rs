//! `temporal.flash_attention`, `temporal.flash_attention_query_grad` and
//! `temporal.flash_attention_key_grad` (one node kind, [`Flash`], its
//! [`FlashPart`] telling which): softmax attention and the two halves of
//! its backward pass as single ops over whole sequences, computed by the
//! runtime's tiled kernels (`tempo_flash_attention`) in blocks of queries
//! and keys with a running maximum and sum, so that no `T x T` value
//! exists. Made by `temporal-fuse-attention` (per step: one query
//! position, the keys of a range) and batched by `temporal-vectorize`
//! (every query position at once, the range becoming a band of keys
//! around each).
//!
//! Operands have canonical shapes, with `Tq` query positions, `Tk` key
//! positions, `G` groups (heads and batch rows: the labels shared by
//! queries and keys), `R` query rows per position and group (labels of
//! the query alone), `Dk` the contracted label of the scores, `Dv` the
//! values' label:
//!
//! - `forward` (`flash_attention`): `q [Tq, G, R, Dk]`, `k [Tk, G, Dk]`, `v [Tk, G, Dv]`,
//!   `scale []`; result `[Tq, G, R, Dv + 2]`: per row the output `O`
//!   then the maximum `m` of the scaled scores and the sum `l` of their
//!   exponentials `exp(s - m)`.
//! - `query` (`flash_attention_query_grad`): `q`, `k`, `v`, `dO [Tq, G, R, Dv]`, `scale`; result
//!   `[Tq, G, R, Dv + 3 + Dk]`: `O`, `m`, `l`, then `D = sum_n P[n]
//!   dP[n]` (`dP[n] = dO . v[n]`, equal to `dO . O`) and the query's
//!   cotangent `dQ = sum_n scale P[n] (dP[n] - D) k[n]`.
//! - `key` (`flash_attention_key_grad`): `q`, `dO`, `m [Tq, G, R]`, `l [Tq, G, R]`, `D [Tq, G, R]`,
//!   `k`, `v`, `scale`; result `[Tk, G, Dk + Dv]`: per key `dK = sum
//!   scale P (dP - D) q` and `dV = sum P dO` over the query rows that see
//!   it, with `P = exp(scale q . k - m) / l` from the forward statistics.
//!
//! Which keys a query position `t` sees: `n` in `[0, Tk)` and, with
//! `lower`, `n >= t + lower`, with `upper`, `n < t + upper` (a causal
//! prefix `k[0:t+1]` is `upper = 1`; a window of `w` adds `lower = 1 - w`).
//! Rows that see no key have `O = 0`, `m = -inf`, `l = 0`, `D = 0`,
//! `dQ = 0`.
//!
//! Not exact bit for bit against the written chain (the running maximum
//! rescales, products are summed in blocks): made only where rounding may
//! change (`-O3`, or `--fast-math`).

use std::fmt;

/// Which computation a `temporal.flash_attention` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlashPart {
    Forward,
    Query,
    Key,
}

impl FlashPart {
    pub fn name(self) -> &'static str {
        match self {
            FlashPart::Forward => "forward",
            FlashPart::Query => "query",
            FlashPart::Key => "key",
        }
    }

    pub fn parse(text: &str) -> Option<FlashPart> {
        match text {
            "forward" => Some(FlashPart::Forward),
            "query" => Some(FlashPart::Query),
            "key" => Some(FlashPart::Key),
            _ => None,
        }
    }

    /// The op's name (without the dialect's prefix).
    pub fn op_name(self) -> &'static str {
        match self {
            FlashPart::Forward => "flash_attention",
            FlashPart::Query => "flash_attention_query_grad",
            FlashPart::Key => "flash_attention_key_grad",
        }
    }

    /// The part of op `name` (with the dialect's prefix).
    pub fn of_op(name: &str) -> Option<FlashPart> {
        [FlashPart::Forward, FlashPart::Query, FlashPart::Key]
            .into_iter()
            .find(|p| name.strip_prefix("temporal.") == Some(p.op_name()))
    }

    /// The number of operands.
    pub fn arity(self) -> usize {
        match self {
            FlashPart::Forward => 4,
            FlashPart::Query => 5,
            FlashPart::Key => 8,
        }
    }

    /// The operands read over the other side's positions (a range per
    /// step): keys and values for `forward` and `query`, the query rows
    /// and their statistics for `key`.
    pub fn range_operands(self) -> &'static [usize] {
        match self {
            FlashPart::Forward | FlashPart::Query => &[1, 2],
            FlashPart::Key => &[0, 1, 2, 3, 4],
        }
    }

    /// The operands of the op's own position (one per step): queries
    /// (and their output cotangents) for `forward` and `query`, the key
    /// and value for `key`.
    pub fn own_operands(self) -> &'static [usize] {
        match self {
            FlashPart::Forward => &[0],
            FlashPart::Query => &[0, 3],
            FlashPart::Key => &[5, 6],
        }
    }

    /// The code the runtime's kernel takes (table word 0).
    pub fn code(self) -> i64 {
        match self {
            FlashPart::Forward => 0,
            FlashPart::Query => 1,
            FlashPart::Key => 2,
        }
    }
}

/// The keys each query position sees, relative to it (see the module).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Band {
    pub lower: Option<i64>,
    pub upper: Option<i64>,
}

impl Band {
    /// Every key.
    pub const ALL: Band = Band { lower: None, upper: None };

    /// Whether query position `t` sees key `n` (`n` inside `[0, Tk)`).
    pub fn sees(&self, t: i64, n: i64) -> bool {
        self.lower.is_none_or(|lo| n >= t + lo) && self.upper.is_none_or(|hi| n < t + hi)
    }

    /// `"lower:upper"`, each side empty when unbounded.
    pub fn parse(text: &str) -> Option<Band> {
        let (lo, hi) = text.split_once(':')?;
        let side = |s: &str| -> Option<Option<i64>> {
            let s = s.trim();
            if s.is_empty() { Some(None) } else { s.parse().ok().map(Some) }
        };
        Some(Band { lower: side(lo)?, upper: side(hi)? })
    }

    /// The sentinels of the runtime's table: `i64::MIN` and `i64::MAX`
    /// for unbounded sides.
    pub fn words(&self) -> [i64; 2] {
        [self.lower.unwrap_or(i64::MIN), self.upper.unwrap_or(i64::MAX)]
    }
}

impl fmt::Display for Band {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = |s: Option<i64>| s.map(|v| v.to_string()).unwrap_or_default();
        write!(f, "{}:{}", side(self.lower), side(self.upper))
    }
}

/// A `temporal.flash_attention`'s attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Flash {
    pub part: FlashPart,
    pub band: Band,
}

/// The sizes of a flash attention's labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlashSizes {
    pub tq: i64,
    pub tk: i64,
    pub groups: i64,
    pub rows: i64,
    pub dk: i64,
    pub dv: i64,
}

impl Flash {
    /// The sizes from the operand shapes (`-1` for a dynamic size), or
    /// why they do not fit the part's canonical shapes.
    pub fn sizes(&self, shapes: &[&[i64]]) -> Result<FlashSizes, String> {
        let part = self.part;
        if shapes.len() != part.arity() {
            return Err(format!("'{}' takes {} operands, got {}", part.name(), part.arity(), shapes.len()));
        }
        let rank = |k: usize, r: usize, what: &str| -> Result<&[i64], String> {
            if shapes[k].len() == r {
                Ok(shapes[k])
            } else {
                Err(format!("operand {k} ({what}) must have rank {r}, got {:?}", shapes[k]))
            }
        };
        let (q, k, v, scale) = match part {
            FlashPart::Forward | FlashPart::Query => {
                (rank(0, 4, "queries")?, rank(1, 3, "keys")?, rank(2, 3, "values")?, shapes[part.arity() - 1])
            }
            FlashPart::Key => (rank(0, 4, "queries")?, rank(5, 3, "keys")?, rank(6, 3, "values")?, shapes[7]),
        };
        if !scale.iter().all(|&d| d == 1) {
            return Err(format!("the scale must be a scalar, got {scale:?}"));
        }
        let sizes = FlashSizes { tq: q[0], tk: k[0], groups: q[1], rows: q[2], dk: q[3], dv: v[2] };
        let agree = |a: i64, b: i64| a < 0 || b < 0 || a == b;
        let mut ok = agree(k[0], v[0]) && agree(q[1], k[1]) && agree(q[1], v[1]) && agree(q[3], k[2]);
        let rows = [sizes.tq, sizes.groups, sizes.rows];
        match part {
            FlashPart::Forward => {}
            FlashPart::Query => {
                let d_o = rank(3, 4, "output cotangents")?;
                ok &= rows.iter().zip(d_o).all(|(&a, &b)| agree(a, b)) && agree(d_o[3], sizes.dv);
            }
            FlashPart::Key => {
                let d_o = rank(1, 4, "output cotangents")?;
                ok &= rows.iter().zip(d_o).all(|(&a, &b)| agree(a, b)) && agree(d_o[3], sizes.dv);
                for (k, what) in [(2, "maxima"), (3, "sums"), (4, "row sums")] {
                    let s = rank(k, 3, what)?;
                    ok &= rows.iter().zip(s).all(|(&a, &b)| agree(a, b));
                }
            }
        }
        if !ok {
            return Err(format!(
                "operand shapes {shapes:?} do not agree (queries [Tq, G, R, Dk], keys [Tk, G, Dk], values [Tk, G, Dv])"
            ));
        }
        Ok(sizes)
    }

    /// The result shape for `sizes`.
    pub fn result_shape(&self, s: &FlashSizes) -> Vec<i64> {
        let wide = |extra: i64| if s.dv < 0 || s.dk < 0 { -1 } else { extra };
        match self.part {
            FlashPart::Forward => vec![s.tq, s.groups, s.rows, wide(s.dv + 2)],
            FlashPart::Query => vec![s.tq, s.groups, s.rows, wide(s.dv + 3 + s.dk)],
            FlashPart::Key => vec![s.tk, s.groups, wide(s.dk + s.dv)],
        }
    }
}
