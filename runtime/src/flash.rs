//! `tempo_flash_attention`, the kernel behind `temporal.flash_attention`
//! (`tempo_passes::program::Flash`, whose module documents the three parts
//! and the band of keys each query position sees): softmax attention and
//! its two backward halves for one group (one head of one batch row),
//! computed FlashAttention-2 style so that no `Tq x Tk` value exists.
//!
//! The query rows (flattened as `(t, r)`) go in blocks of [`BQ`], the keys
//! in blocks of [`BK`]; a pair of blocks that no row and key of them pair
//! up in the band is skipped, and only the blocks the band cuts through
//! are masked. The forward part keeps a running maximum and sum per row
//! and rescales its output when the maximum grows; the query part then
//! takes a second pass over the same key blocks for `dQ` with the final
//! statistics; the key part goes over the query blocks that see each key
//! block and sums `dK`, `dV` over them. Every operand is first copied into
//! contiguous scratch of the calling thread (queries scaled by `scale`,
//! keys and values both as rows and transposed per key block, feature axes
//! padded with zeros to [`CH`] elements), so that the inner loops are
//! unit-stride multiply-adds on fixed-size arrays that LLVM vectorizes,
//! four rows at a time sharing each load (four independent chains of
//! multiply-adds, enough to keep AVX-512's units busy): scores `s[r][..]
//! += q[r][d] kt[d][..]`, outputs `o[r][..] += p[r][j] v[j][..]`. They are
//! compiled three times (AVX-512, AVX2 with FMA, portable) and chosen at
//! run time. Exponentials are a branch-free polynomial
//! ([`Element::exp`]) and row maxima integer maxima of order-preserving
//! keys, so that both vectorize too. The scratch (a thread-local `Vec` per
//! element type, grown on demand and kept: about `(2 Tq R + 4 Tk) D`
//! elements) is the only memory a call takes beyond its stack.
//!
//! Measured on one core of the 2-core AVX-512 development machine (f32,
//! causal, `R = 1`, one group): `Tq = Tk = 256`, `Dk = Dv = 16`: forward
//! 62 us, query 129 us, key 90 us (34-47 GFLOP/s); `Tq = Tk = 1024`, `Dk =
//! Dv = 64`: forward 2.0 ms, query 4.5 ms, key 3.7 ms (68-74 GFLOP/s; see
//! `flash_timing`).
//!
//! f32 accumulates in f32, f64 in f64. Results are not bit for bit those
//! of [`reference`] (sums are blocked, the maximum rescales, `D` is taken
//! as `dO . O`), as the spec allows.

use std::cell::RefCell;
use std::ops::{Add, Div, Mul, Sub};
use tempo_passes::program::{Band, FlashPart};

/// Query rows per block.
pub const BQ: usize = 64;
/// Keys per block.
pub const BK: usize = 64;
/// Width of the register accumulators; the packed feature axes are padded
/// to a multiple of it.
pub const CH: usize = 16;

/// Number of words of the table [`tempo_flash_attention`] reads.
pub const TABLE_WORDS: usize = 37;

/// One group's softmax attention or one of its backward halves, described
/// by the table of [`TABLE_WORDS`] i64 words at address `table`:
///
/// ```text
/// 0: part (0 forward, 1 query, 2 key)      1: element kind (0 f32, 1 f64)
/// 2: tq  3: tk  4: rows R  5: dk  6: dv
/// 7: band lower (i64::MIN = unbounded)     8: band upper (i64::MAX = unbounded)
/// 9: address of the scale (one element of the element kind)
/// q:   10 address, 11 stride t, 12 stride r, 13 stride d
/// k:   14 address, 15 stride n, 16 stride d
/// v:   17 address, 18 stride n, 19 stride e
/// dO:  20 address, 21 stride t, 22 stride r, 23 stride e
/// m:   24 address, 25 stride t, 26 stride r
/// l:   27 address, 28 stride t, 29 stride r
/// D:   30 address, 31 stride t, 32 stride r
/// out: 33 address, 34 stride t (n for key), 35 stride r (unused for key),
///      36 stride of the last axis
/// ```
///
/// Addresses are byte addresses of the element at index 0 of every axis,
/// strides are in elements (any, transposed and negative included);
/// operands a part does not read may be 0. The result (`[Tq, R, Dv + 2]`
/// forward, `[Tq, R, Dv + 3 + Dk]` query, `[Tk, Dk + Dv]` key) is written
/// whole. Runs on the calling thread, with scratch of that thread: calls
/// on several threads at once are independent.
///
/// # Safety
/// `table` must hold the words above, the addresses and strides must
/// describe valid arrays of those sizes (the generated code passes its
/// buffers' metadata), the output overlapping no input.
pub unsafe extern "C" fn tempo_flash_attention(table: i64) {
    // SAFETY: the caller's contract.
    let words: [i64; TABLE_WORDS] = unsafe { *(table as *const [i64; TABLE_WORDS]) };
    let job = Job::new(&words);
    if words[1] == 1 {
        // SAFETY: the caller's contract.
        unsafe { dispatch::<f64>(&job) }
    } else {
        // SAFETY: the caller's contract.
        unsafe { dispatch::<f32>(&job) }
    }
}

/// A float type the kernel computes in.
trait Element:
    Copy + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> + 'static
{
    const ZERO: Self;
    const ONE: Self;
    const NEG_INF: Self;

    /// A signed integer of the same width.
    type Key: Copy + Ord;

    /// An integer key in the order of the floats (`-0` before `+0`, NaN
    /// with the sign bit set before everything, without it after), and back.
    fn key(x: Self) -> Self::Key;
    fn from_key(k: Self::Key) -> Self;

    /// `a * b + c`, fused where `FMA` (the target has the instruction).
    fn madd<const FMA: bool>(a: Self, b: Self, c: Self) -> Self;

    /// `e^x` by range reduction and a polynomial, branch-free (selects
    /// only) so that loops of it vectorize: within a few units in the last
    /// place, 0 below the smallest normal result, NaN for NaN. Only for `x
    /// <= 88` (f32) or `x <= 709` (f64), above which it saturates: the
    /// kernel takes it only of scores minus their maximum, at most 0.
    fn exp<const FMA: bool>(x: Self) -> Self;

    #[cfg(test)]
    fn from_f64(x: f64) -> Self;
    #[cfg(test)]
    fn to_f64(self) -> f64;

    /// The scratch of this element type on the calling thread, at least
    /// `len` elements long (contents unspecified), passed to `f`.
    fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [Self]) -> R) -> R;
}

thread_local! {
    static SCRATCH_F32: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    static SCRATCH_F64: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

impl Element for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const NEG_INF: Self = f32::NEG_INFINITY;

    type Key = i32;

    #[inline(always)]
    fn key(x: Self) -> i32 {
        let i = x.to_bits() as i32;
        i ^ ((i >> (i32::BITS - 1)) & i32::MAX)
    }

    #[inline(always)]
    fn from_key(k: i32) -> Self {
        f32::from_bits((k ^ ((k >> (i32::BITS - 1)) & i32::MAX)) as u32)
    }

    #[inline(always)]
    fn madd<const FMA: bool>(a: Self, b: Self, c: Self) -> Self {
        if FMA { a.mul_add(b, c) } else { a * b + c }
    }

    #[inline(always)]
    fn exp<const FMA: bool>(x: Self) -> Self {
        // Cephes' expf: x = n ln 2 + r, |r| <= ln 2 / 2 (ln 2 in two parts,
        // the first exact times any n here), e^r by a degree-7 polynomial,
        // 2^n put in the exponent bits. n is read from the bits of
        // x log2(e) + 1.5 * 2^23 (rounded to the nearest integer there).
        const LOG2E: f32 = std::f32::consts::LOG2_E;
        const C1: f32 = 0.693_359_4;
        const C2: f32 = -2.121_944_4e-4;
        const MAGIC: f32 = 12_582_912.0;
        let under = x < -87.0;
        let x = x.clamp(-87.0, 88.0);
        let fma = Self::madd::<FMA>;
        let big = fma(x, LOG2E, MAGIC);
        let kf = big - MAGIC;
        let n = (big.to_bits() as i32).wrapping_sub(MAGIC.to_bits() as i32);
        let r = fma(-kf, C2, fma(-kf, C1, x));
        let z = r * r;
        let mut y = 1.987_569_1e-4;
        for c in [1.398_2e-3, 8.333_452e-3, 4.166_579_6e-2, 1.666_666_5e-1, 0.5] {
            y = fma(y, r, c);
        }
        let y = fma(y, z, r) + 1.0;
        let e = y * f32::from_bits((n.wrapping_add(127) as u32) << 23);
        if under { 0.0 } else { e }
    }

    #[cfg(test)]
    fn from_f64(x: f64) -> Self {
        x as f32
    }

    #[cfg(test)]
    fn to_f64(self) -> f64 {
        self as f64
    }

    fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [Self]) -> R) -> R {
        SCRATCH_F32.with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < len {
                s.resize(len, 0.0);
            }
            f(&mut s[..len])
        })
    }
}

impl Element for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const NEG_INF: Self = f64::NEG_INFINITY;

    type Key = i64;

    #[inline(always)]
    fn key(x: Self) -> i64 {
        let i = x.to_bits() as i64;
        i ^ ((i >> (i64::BITS - 1)) & i64::MAX)
    }

    #[inline(always)]
    fn from_key(k: i64) -> Self {
        f64::from_bits((k ^ ((k >> (i64::BITS - 1)) & i64::MAX)) as u64)
    }

    #[inline(always)]
    fn madd<const FMA: bool>(a: Self, b: Self, c: Self) -> Self {
        if FMA { a.mul_add(b, c) } else { a * b + c }
    }

    #[inline(always)]
    fn exp<const FMA: bool>(x: Self) -> Self {
        // As for f32, with Cephes' two-part ln 2 for doubles and the Taylor
        // series of e^r to r^12 (remainder below 1e-14 relative for
        // |r| <= ln 2 / 2).
        const LOG2E: f64 = std::f64::consts::LOG2_E;
        const C1: f64 = 6.931_457_519_531_25e-1;
        const C2: f64 = 1.428_606_820_309_417_3e-6;
        const MAGIC: f64 = 6_755_399_441_055_744.0;
        let under = x < -708.0;
        let x = x.clamp(-708.0, 709.0);
        let fma = Self::madd::<FMA>;
        let big = fma(x, LOG2E, MAGIC);
        let kf = big - MAGIC;
        let n = (big.to_bits() as i64).wrapping_sub(MAGIC.to_bits() as i64);
        let r = fma(-kf, C2, fma(-kf, C1, x));
        const INV: [f64; 13] = [
            1.0,
            1.0,
            1.0 / 2.0,
            1.0 / 6.0,
            1.0 / 24.0,
            1.0 / 120.0,
            1.0 / 720.0,
            1.0 / 5040.0,
            1.0 / 40320.0,
            1.0 / 362880.0,
            1.0 / 3628800.0,
            1.0 / 39916800.0,
            1.0 / 479001600.0,
        ];
        let mut y = INV[12];
        let mut k = 12;
        while k > 0 {
            k -= 1;
            y = fma(y, r, INV[k]);
        }
        let e = y * f64::from_bits((n.wrapping_add(1023) as u64) << 52);
        if under { 0.0 } else { e }
    }

    #[cfg(test)]
    fn from_f64(x: f64) -> Self {
        x
    }

    #[cfg(test)]
    fn to_f64(self) -> f64 {
        self
    }

    fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [Self]) -> R) -> R {
        SCRATCH_F64.with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < len {
                s.resize(len, 0.0);
            }
            f(&mut s[..len])
        })
    }
}

/// An operand or the result: the address of element 0 and up to three
/// strides in elements (0 for absent axes).
#[derive(Clone, Copy, Debug)]
struct View {
    base: i64,
    strides: [isize; 3],
}

impl View {
    fn new(base: i64, strides: [i64; 3]) -> View {
        View { base, strides: strides.map(|s| s as isize) }
    }

    #[inline(always)]
    fn at(&self, a: usize, b: usize, c: usize) -> isize {
        a as isize * self.strides[0] + b as isize * self.strides[1] + c as isize * self.strides[2]
    }

    /// # Safety
    /// The view must be valid at that index.
    #[inline(always)]
    unsafe fn get<T: Copy>(&self, a: usize, b: usize, c: usize) -> T {
        unsafe { *(self.base as *const T).offset(self.at(a, b, c)) }
    }

    /// # Safety
    /// The view must be valid at that index and not read meanwhile.
    #[inline(always)]
    unsafe fn set<T: Copy>(&self, a: usize, b: usize, c: usize, x: T) {
        unsafe { *(self.base as *mut T).offset(self.at(a, b, c)) = x }
    }
}

/// The table, decoded.
#[derive(Clone, Copy, Debug)]
struct Job {
    part: i64,
    tq: usize,
    tk: usize,
    rows: usize,
    dk: usize,
    dv: usize,
    lower: Option<i64>,
    upper: Option<i64>,
    scale: i64,
    q: View,
    k: View,
    v: View,
    d_o: View,
    m: View,
    l: View,
    dd: View,
    out: View,
}

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// The width of a packed feature axis of `n` elements: a multiple of
/// [`CH`], at least one.
fn padded(n: usize) -> usize {
    round_up(n.max(1), CH)
}

impl Job {
    fn new(w: &[i64; TABLE_WORDS]) -> Job {
        let size = |x: i64| x.max(0) as usize;
        Job {
            part: w[0],
            tq: size(w[2]),
            tk: size(w[3]),
            rows: size(w[4]),
            dk: size(w[5]),
            dv: size(w[6]),
            lower: (w[7] != i64::MIN).then_some(w[7]),
            upper: (w[8] != i64::MAX).then_some(w[8]),
            scale: w[9],
            q: View::new(w[10], [w[11], w[12], w[13]]),
            k: View::new(w[14], [w[15], 0, w[16]]),
            v: View::new(w[17], [w[18], 0, w[19]]),
            d_o: View::new(w[20], [w[21], w[22], w[23]]),
            m: View::new(w[24], [w[25], w[26], 0]),
            l: View::new(w[27], [w[28], w[29], 0]),
            dd: View::new(w[30], [w[31], w[32], 0]),
            out: if w[0] == 2 { View::new(w[33], [w[34], 0, w[36]]) } else { View::new(w[33], [w[34], w[35], w[36]]) },
        }
    }

    /// The keys `[lo, hi)` query position `t` sees (empty when `lo >= hi`).
    #[inline(always)]
    fn keys_of(&self, t: usize) -> (usize, usize) {
        let (t, tk) = (t as i64, self.tk as i64);
        let lo = self.lower.map_or(0, |lo| t.saturating_add(lo).clamp(0, tk));
        let hi = self.upper.map_or(tk, |hi| t.saturating_add(hi).clamp(0, tk));
        (lo as usize, hi as usize)
    }

    /// The query positions `[lo, hi)` among which lie all that see a key
    /// of `[j0, j1)` (`j0 < j1`): `t` sees `n` iff `n - upper < t <= n -
    /// lower`.
    fn positions_of(&self, j0: usize, j1: usize) -> (usize, usize) {
        let tq = self.tq as i64;
        let lo = self.upper.map_or(0, |hi| (j0 as i64).saturating_sub(hi).saturating_add(1).clamp(0, tq));
        let hi = self.lower.map_or(tq, |lo| (j1 as i64 - 1).saturating_sub(lo).saturating_add(1).clamp(0, tq));
        (lo as usize, hi as usize)
    }
}

/// The lengths of the scratch arrays in elements (multiples of [`CH`];
/// zero for those the part does not use).
struct Layout {
    qs: usize,
    dor: usize,
    kt: usize,
    kr: usize,
    vr: usize,
    vt: usize,
    stats: usize,
    acc1: usize,
    acc2: usize,
    blocks: usize,
}

impl Layout {
    fn new(job: &Job) -> Layout {
        let nq = job.tq * job.rows;
        let nkb = job.tk.div_ceil(BK);
        let (dkp, dvp) = (padded(job.dk), padded(job.dv));
        let r = |n: usize| round_up(n, CH);
        let (fwd, query, key) = (job.part == 0, job.part == 1, job.part == 2);
        Layout {
            qs: packed_rows(nq) * dkp,
            dor: if query || key { packed_rows(nq) * dvp } else { 0 },
            kt: r(nkb * job.dk * BK),
            kr: if query { nkb * BK * dkp } else { 0 },
            vr: if fwd || query { nkb * BK * dvp } else { 0 },
            vt: if query || key { r(nkb * job.dv * BK) } else { 0 },
            stats: r(nq),
            acc1: if key { BK * dkp } else { BQ * dvp },
            acc2: if key {
                BK * dvp
            } else if query {
                BQ * dkp
            } else {
                0
            },
            blocks: if key { 2 * BQ * BK } else { 0 },
        }
    }

    fn total(&self) -> usize {
        self.qs
            + self.dor
            + self.kt
            + self.kr
            + self.vr
            + self.vt
            + 3 * self.stats
            + self.acc1
            + self.acc2
            + self.blocks
    }
}

/// The scratch arrays, carved from the thread's scratch by [`Layout`].
struct Scratch<'a, T> {
    /// Queries times the scale, `[packed_rows(nq), dkp]`.
    qs: &'a mut [T],
    /// Output cotangents, `[packed_rows(nq), dvp]`.
    dor: &'a mut [T],
    /// Keys transposed per key block, `[nkb, dk, BK]`.
    kt: &'a mut [T],
    /// Keys, `[nkb * BK, dkp]`.
    kr: &'a mut [T],
    /// Values, `[nkb * BK, dvp]`.
    vr: &'a mut [T],
    /// Values transposed per key block, `[nkb, dv, BK]`.
    vt: &'a mut [T],
    /// Per query row: the maximum, the sum (its inverse for key) and `D`.
    m: &'a mut [T],
    l: &'a mut [T],
    dd: &'a mut [T],
    /// Accumulators: `O [BQ, dvp]` and `dQ [BQ, dkp]`, or for key
    /// `dK [BK, dkp]` and `dV [BK, dvp]`.
    acc1: &'a mut [T],
    acc2: &'a mut [T],
    /// For key: `P` and `dS` of a pair of blocks, `[BQ, BK]` each.
    blocks: &'a mut [T],
}

impl<'a, T> Scratch<'a, T> {
    fn carve(layout: &Layout, mut rest: &'a mut [T]) -> Scratch<'a, T> {
        let mut take = |n: usize| {
            let (a, b) = std::mem::take(&mut rest).split_at_mut(n);
            rest = b;
            a
        };
        Scratch {
            qs: take(layout.qs),
            dor: take(layout.dor),
            kt: take(layout.kt),
            kr: take(layout.kr),
            vr: take(layout.vr),
            vt: take(layout.vt),
            m: take(layout.stats),
            l: take(layout.stats),
            dd: take(layout.stats),
            acc1: take(layout.acc1),
            acc2: take(layout.acc2),
            blocks: take(layout.blocks),
        }
    }
}

/// Runs `job` in `T` on the calling thread's scratch with the best
/// compilation of the kernel for this machine.
///
/// # Safety
/// As [`tempo_flash_attention`].
unsafe fn dispatch<T: Element>(job: &Job) {
    let layout = Layout::new(job);
    T::with_scratch(layout.total(), |buffer| {
        let mut s = Scratch::carve(&layout, buffer);
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            let level = if has!("avx512f") && has!("fma") {
                2
            } else if has!("avx2") && has!("fma") {
                1
            } else {
                0
            };
            #[cfg(test)]
            let level = tests::LEVEL.with(|l| l.get()).min(level);
            if level == 2 {
                // SAFETY: the features are there; the caller's contract.
                return unsafe { run_avx512(job, &mut s) };
            }
            if level == 1 {
                // SAFETY: as above.
                return unsafe { run_avx2(job, &mut s) };
            }
        }
        // SAFETY: the caller's contract.
        unsafe { run::<T, false>(job, &mut s) }
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
unsafe fn run_avx512<T: Element>(job: &Job, s: &mut Scratch<T>) {
    // SAFETY: the caller's.
    unsafe { run::<T, true>(job, s) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2<T: Element>(job: &Job, s: &mut Scratch<T>) {
    // SAFETY: the caller's.
    unsafe { run::<T, true>(job, s) }
}

/// Query rows (or, in the key part's sums, keys) a micro-kernel takes at
/// once: their sums are independent chains of multiply-adds sharing each
/// load of the other operand.
const RB: usize = 4;

/// `acc += x v`, lane by lane (a loop LLVM makes one vector operation or
/// a few).
#[inline(always)]
fn fma_lanes<T: Element, const F: bool>(acc: &mut [T; CH], x: T, v: &[T; CH]) {
    for l in 0..CH {
        acc[l] = T::madd::<F>(x, v[l], acc[l]);
    }
}

/// Scores of [`RB`] rows: `s[r][c] = x[r] . mt[.., c]` with `x[r] =
/// x[r * xs..][..len]` and `mt` of `[len, BK]`; [`CH`] columns at a time,
/// in `RB` registers (or pairs).
#[inline(always)]
fn scores<T: Element, const F: bool>(x: &[T], xs: usize, len: usize, mt: &[T], s: &mut [[T; BK]; RB]) {
    let mt = &mt[..len * BK];
    let xr: [&[T]; RB] = std::array::from_fn(|r| &x[r * xs..][..len]);
    for h in 0..BK / CH {
        let mut acc = [[T::ZERO; CH]; RB];
        for (d, m) in mt.chunks_exact(BK).enumerate() {
            let m: &[T; CH] = m[h * CH..][..CH].try_into().unwrap();
            // SAFETY: d < len, the length of every row.
            let xd: [T; RB] = std::array::from_fn(|r| unsafe { *xr[r].get_unchecked(d) });
            for r in 0..RB {
                fma_lanes::<T, F>(&mut acc[r], xd[r], m);
            }
        }
        for r in 0..RB {
            s[r][h * CH..][..CH].copy_from_slice(&acc[r]);
        }
    }
}

/// `acc[r] += sum_{j < n} coef[r * cr + j * cj] rows[j]` for the [`RB`]
/// rows `r` of `acc` and the rows `j` of `rows`, all `w` wide (a multiple
/// of [`CH`]) at stride `w`; [`CH`] columns at a time in registers.
#[inline(always)]
fn accumulate<T: Element, const F: bool>(
    acc: &mut [T],
    w: usize,
    coef: &[T],
    cr: usize,
    cj: usize,
    n: usize,
    rows: &[T],
) {
    if n == 0 {
        return;
    }
    let rows = &rows[..n * w];
    let coef = &coef[..(RB - 1) * cr + (n - 1) * cj + 1];
    let acc = &mut acc[..RB * w];
    for c in (0..w).step_by(CH) {
        let mut a: [[T; CH]; RB] = std::array::from_fn(|r| acc[r * w + c..][..CH].try_into().unwrap());
        for j in 0..n {
            let v: &[T; CH] = rows[j * w + c..][..CH].try_into().unwrap();
            // SAFETY: inside `coef`, whose length was checked above.
            let p: [T; RB] = std::array::from_fn(|r| unsafe { *coef.get_unchecked(r * cr + j * cj) });
            for r in 0..RB {
                fma_lanes::<T, F>(&mut a[r], p[r], v);
            }
        }
        for (r, a) in a.iter().enumerate() {
            acc[r * w + c..][..CH].copy_from_slice(a);
        }
    }
}

/// `-inf` outside the columns `[a, b)`.
#[inline(always)]
fn mask<T: Element>(s: &mut [T; BK], a: usize, b: usize) {
    for (c, x) in s.iter_mut().enumerate() {
        if c < a || c >= b {
            *x = T::NEG_INF;
        }
    }
}

/// The largest element, by the elements' ordered integer keys (integer
/// maxima, which LLVM vectorizes where it keeps float ones scalar).
#[inline(always)]
fn max_of<T: Element>(s: &[T; BK]) -> T {
    let mut lanes: [T::Key; CH] = std::array::from_fn(|l| T::key(s[l]));
    for chunk in s[CH..].chunks_exact(CH) {
        for l in 0..CH {
            lanes[l] = lanes[l].max(T::key(chunk[l]));
        }
    }
    let mut w = CH;
    while w > 1 {
        w /= 2;
        for l in 0..w {
            lanes[l] = lanes[l].max(lanes[l + w]);
        }
    }
    T::from_key(lanes[0])
}

/// The sum of the lanes, pairwise (halves added in a tree: a few vector
/// operations, where a sum in order is [`CH`] dependent scalar ones).
#[inline(always)]
fn sum_lanes<T: Element>(mut lanes: [T; CH]) -> T {
    let mut w = CH;
    while w > 1 {
        w /= 2;
        for l in 0..w {
            lanes[l] = lanes[l] + lanes[l + w];
        }
    }
    lanes[0]
}

/// `s = exp(s - m)`, returning the sum.
#[inline(always)]
fn exp_sum<T: Element, const F: bool>(s: &mut [T; BK], m: T) -> T {
    let mut lanes = [T::ZERO; CH];
    for chunk in s.chunks_exact_mut(CH) {
        for l in 0..CH {
            chunk[l] = T::exp::<F>(chunk[l] - m);
            lanes[l] = lanes[l] + chunk[l];
        }
    }
    sum_lanes(lanes)
}

/// `a . b`.
#[inline(always)]
fn dot<T: Element, const F: bool>(a: &[T], b: &[T]) -> T {
    let mut lanes = [T::ZERO; CH];
    for (x, y) in a.chunks_exact(CH).zip(b.chunks_exact(CH)) {
        for l in 0..CH {
            lanes[l] = T::madd::<F>(x[l], y[l], lanes[l]);
        }
    }
    sum_lanes(lanes)
}

/// The query rows of the packed queries: `nq` rounded up to a block, and
/// [`RB`] more, all zero past `nq` (micro-kernels read whole groups of
/// rows from any start).
fn packed_rows(nq: usize) -> usize {
    round_up(nq, BQ) + RB
}

/// Copies the operands the part reads into the scratch (see [`Scratch`]).
///
/// # Safety
/// As [`tempo_flash_attention`].
#[inline(always)]
unsafe fn pack<T: Element>(job: &Job, s: &mut Scratch<T>, scale: T) {
    let (rows, dk, dv) = (job.rows, job.dk, job.dv);
    let (dkp, dvp) = (padded(dk), padded(dv));
    let nkb = job.tk.div_ceil(BK);
    let nq = job.tq * rows;
    // SAFETY (all reads): the caller's contract, indices inside the sizes.
    unsafe {
        for (i, row) in s.qs.chunks_exact_mut(dkp).enumerate() {
            let (t, r) = (i / rows.max(1), i % rows.max(1));
            for (d, x) in row.iter_mut().enumerate() {
                *x = if i < nq && d < dk { scale * job.q.get::<T>(t, r, d) } else { T::ZERO };
            }
        }
        if !s.dor.is_empty() {
            for (i, row) in s.dor.chunks_exact_mut(dvp).enumerate() {
                let (t, r) = (i / rows.max(1), i % rows.max(1));
                for (e, x) in row.iter_mut().enumerate() {
                    *x = if i < nq && e < dv { job.d_o.get::<T>(t, r, e) } else { T::ZERO };
                }
            }
        }
        let kt = &mut s.kt[..nkb * dk * BK];
        kt.fill(T::ZERO);
        for n in 0..job.tk {
            let (b, c) = (n / BK, n % BK);
            for d in 0..dk {
                kt[(b * dk + d) * BK + c] = job.k.get::<T>(n, 0, d);
            }
        }
        if !s.kr.is_empty() {
            for (n, row) in s.kr.chunks_exact_mut(dkp).enumerate() {
                for (d, x) in row.iter_mut().enumerate() {
                    *x = if n < job.tk && d < dk { job.k.get::<T>(n, 0, d) } else { T::ZERO };
                }
            }
        }
        if !s.vr.is_empty() {
            for (n, row) in s.vr.chunks_exact_mut(dvp).enumerate() {
                for (e, x) in row.iter_mut().enumerate() {
                    *x = if n < job.tk && e < dv { job.v.get::<T>(n, 0, e) } else { T::ZERO };
                }
            }
        }
        if !s.vt.is_empty() {
            let vt = &mut s.vt[..nkb * dv * BK];
            vt.fill(T::ZERO);
            for n in 0..job.tk {
                let (b, c) = (n / BK, n % BK);
                for e in 0..dv {
                    vt[(b * dv + e) * BK + c] = job.v.get::<T>(n, 0, e);
                }
            }
        }
    }
}

/// Per row of a group, the keys it sees in a block, and their union.
type GroupRanges = ([(usize, usize); RB], Option<(usize, usize)>);

/// For the [`RB`] query rows from `g` (those from `end` on being past the
/// block), the keys of `[j0, j1)` each sees, and the union of those (or
/// `None` when no row sees any).
#[inline(always)]
fn group_ranges(job: &Job, g: usize, end: usize, j0: usize, j1: usize) -> GroupRanges {
    let rows = job.rows;
    let ranges: [(usize, usize); RB] = std::array::from_fn(|r| {
        if g + r >= end {
            return (j0, j0);
        }
        let (a, b) = job.keys_of((g + r) / rows);
        (a.max(j0), b.min(j1))
    });
    let mut union: Option<(usize, usize)> = None;
    for &(a, b) in &ranges {
        if a < b {
            union = Some(union.map_or((a, b), |(ua, ub)| (ua.min(a), ub.max(b))));
        }
    }
    (ranges, union)
}

/// The kernel, `F` saying whether to fuse multiply-adds.
///
/// # Safety
/// As [`tempo_flash_attention`].
#[inline(always)]
unsafe fn run<T: Element, const F: bool>(job: &Job, s: &mut Scratch<T>) {
    // SAFETY: the caller's contract.
    let scale: T = unsafe { *(job.scale as *const T) };
    // SAFETY: the caller's contract.
    unsafe { pack(job, s, scale) };
    let nq = job.tq * job.rows;
    if job.part == 2 {
        // SAFETY: the caller's contract.
        return unsafe { key_part::<T, F>(job, s) };
    }
    let query = job.part == 1;
    let (rows, dk, dv, tk) = (job.rows, job.dk, job.dv, job.tk);
    let (dkp, dvp) = (padded(dk), padded(dv));
    for i0 in (0..nq).step_by(BQ) {
        let i1 = (i0 + BQ).min(nq);
        let (klo, _) = job.keys_of(i0 / rows);
        let (_, khi) = job.keys_of((i1 - 1) / rows);
        let blocks = if klo < khi { klo / BK..khi.div_ceil(BK) } else { 0..0 };
        s.m[i0..i1].fill(T::NEG_INF);
        s.l[i0..i1].fill(T::ZERO);
        s.acc1.fill(T::ZERO);
        // Pass 1: the output and the statistics, online.
        for kb in blocks.clone() {
            let (j0, j1) = (kb * BK, (kb * BK + BK).min(tk));
            let ktb = &s.kt[kb * dk * BK..][..dk * BK];
            for g in (i0..i1).step_by(RB) {
                let (ranges, Some((ua, ub))) = group_ranges(job, g, i1, j0, j1) else { continue };
                let mut p = [[T::ZERO; BK]; RB];
                scores::<T, F>(&s.qs[g * dkp..], dkp, dk, ktb, &mut p);
                let o = &mut s.acc1[(g - i0) * dvp..][..RB * dvp];
                for (r, (p, &(a, b))) in p.iter_mut().zip(&ranges).enumerate() {
                    if a >= b {
                        *p = [T::ZERO; BK];
                        continue;
                    }
                    if a > j0 || b < j0 + BK {
                        mask(p, a - j0, b - j0);
                    }
                    let i = g + r;
                    let m_old = s.m[i];
                    let top = max_of(p);
                    let m_new = if top > m_old { top } else { m_old };
                    let sum = exp_sum::<T, F>(p, m_new);
                    if m_new != m_old {
                        let alpha = T::exp::<F>(m_old - m_new);
                        s.l[i] = s.l[i] * alpha + sum;
                        for x in o[r * dvp..][..dvp].iter_mut() {
                            *x = *x * alpha;
                        }
                    } else {
                        s.l[i] = s.l[i] + sum;
                    }
                    s.m[i] = m_new;
                }
                accumulate::<T, F>(o, dvp, &p.as_flattened()[ua - j0..], BK, 1, ub - ua, &s.vr[ua * dvp..]);
            }
        }
        for i in i0..i1 {
            let l = s.l[i];
            let inv = if l > T::ZERO { T::ONE / l } else { T::ZERO };
            let o_i = &mut s.acc1[(i - i0) * dvp..][..dvp];
            for x in o_i.iter_mut() {
                *x = *x * inv;
            }
            if query {
                s.dd[i] = dot::<T, F>(&s.dor[i * dvp..][..dvp], o_i);
            }
        }
        // Pass 2 (query): dQ with the final statistics.
        if query {
            s.acc2.fill(T::ZERO);
            for kb in blocks {
                let (j0, j1) = (kb * BK, (kb * BK + BK).min(tk));
                let ktb = &s.kt[kb * dk * BK..][..dk * BK];
                let vtb = &s.vt[kb * dv * BK..][..dv * BK];
                for g in (i0..i1).step_by(RB) {
                    let (ranges, Some((ua, ub))) = group_ranges(job, g, i1, j0, j1) else { continue };
                    let mut p = [[T::ZERO; BK]; RB];
                    scores::<T, F>(&s.qs[g * dkp..], dkp, dk, ktb, &mut p);
                    let mut dp = [[T::ZERO; BK]; RB];
                    scores::<T, F>(&s.dor[g * dvp..], dvp, dv, vtb, &mut dp);
                    for (r, ((p, dp), &(a, b))) in p.iter_mut().zip(&dp).zip(&ranges).enumerate() {
                        if a >= b {
                            *p = [T::ZERO; BK];
                            continue;
                        }
                        if a > j0 || b < j0 + BK {
                            mask(p, a - j0, b - j0);
                        }
                        let i = g + r;
                        let (m, inv, d) = (s.m[i], T::ONE / s.l[i], s.dd[i]);
                        for c in 0..BK {
                            p[c] = T::exp::<F>(p[c] - m) * inv * (dp[c] - d);
                        }
                    }
                    let dq = &mut s.acc2[(g - i0) * dkp..][..RB * dkp];
                    accumulate::<T, F>(dq, dkp, &p.as_flattened()[ua - j0..], BK, 1, ub - ua, &s.kr[ua * dkp..]);
                }
            }
        }
        // SAFETY (writes): the caller's contract, indices inside the sizes.
        for i in i0..i1 {
            let (t, r) = (i / rows, i % rows);
            let o_i = &s.acc1[(i - i0) * dvp..][..dv];
            unsafe {
                for (e, &x) in o_i.iter().enumerate() {
                    job.out.set(t, r, e, x);
                }
                job.out.set(t, r, dv, s.m[i]);
                job.out.set(t, r, dv + 1, s.l[i]);
                if query {
                    job.out.set(t, r, dv + 2, s.dd[i]);
                    let dq = &s.acc2[(i - i0) * dkp..][..dk];
                    for (d, &x) in dq.iter().enumerate() {
                        // The queries were scaled, the scores' derivative
                        // was not yet.
                        job.out.set(t, r, dv + 3 + d, scale * x);
                    }
                }
            }
        }
    }
}

/// The key part: `dK`, `dV` per key block over the query rows that see it.
///
/// # Safety
/// As [`tempo_flash_attention`].
#[inline(always)]
unsafe fn key_part<T: Element, const F: bool>(job: &Job, s: &mut Scratch<T>) {
    let (rows, dk, dv, tk) = (job.rows, job.dk, job.dv, job.tk);
    let (dkp, dvp) = (padded(dk), padded(dv));
    let nq = job.tq * rows;
    // SAFETY (reads): the caller's contract.
    unsafe {
        for i in 0..nq {
            let (t, r) = (i / rows, i % rows);
            s.m[i] = job.m.get(t, r, 0);
            s.l[i] = T::ONE / job.l.get::<T>(t, r, 0);
            s.dd[i] = job.dd.get(t, r, 0);
        }
    }
    // P and dS of a block of query rows by a block of keys, row-major.
    let (pb, dsb) = s.blocks.split_at_mut(BQ * BK);
    for kb in 0..tk.div_ceil(BK) {
        let (j0, j1) = (kb * BK, (kb * BK + BK).min(tk));
        let ktb = &s.kt[kb * dk * BK..][..dk * BK];
        let vtb = &s.vt[kb * dv * BK..][..dv * BK];
        let dk_acc = &mut s.acc1[..BK * dkp];
        let dv_acc = &mut s.acc2[..BK * dvp];
        dk_acc.fill(T::ZERO);
        dv_acc.fill(T::ZERO);
        let (plo, phi) = job.positions_of(j0, j1);
        let (rlo, rhi) = (plo * rows, phi.max(plo) * rows);
        for i0 in (rlo..rhi).step_by(BQ) {
            let i1 = (i0 + BQ).min(rhi);
            // The keys (from j0) any row of the block sees.
            let (mut clo, mut chi) = (BK, 0);
            for g in (i0..i1).step_by(RB) {
                let at = (g - i0) * BK;
                let (ranges, Some((ua, ub))) = group_ranges(job, g, i1, j0, j1) else {
                    pb[at..][..RB * BK].fill(T::ZERO);
                    dsb[at..][..RB * BK].fill(T::ZERO);
                    continue;
                };
                clo = clo.min(ua - j0);
                chi = chi.max(ub - j0);
                let mut p = [[T::ZERO; BK]; RB];
                scores::<T, F>(&s.qs[g * dkp..], dkp, dk, ktb, &mut p);
                let mut dp = [[T::ZERO; BK]; RB];
                scores::<T, F>(&s.dor[g * dvp..], dvp, dv, vtb, &mut dp);
                for (r, ((p, dp), &(a, b))) in p.iter_mut().zip(dp.iter_mut()).zip(&ranges).enumerate() {
                    if a >= b {
                        *p = [T::ZERO; BK];
                        *dp = [T::ZERO; BK];
                        continue;
                    }
                    if a > j0 || b < j0 + BK {
                        mask(p, a - j0, b - j0);
                    }
                    let i = g + r;
                    let (m, inv, d) = (s.m[i], s.l[i], s.dd[i]);
                    for c in 0..BK {
                        let pc = T::exp::<F>(p[c] - m) * inv;
                        p[c] = pc;
                        dp[c] = pc * (dp[c] - d);
                    }
                }
                pb[at..][..RB * BK].copy_from_slice(p.as_flattened());
                dsb[at..][..RB * BK].copy_from_slice(dp.as_flattened());
            }
            let h = i1 - i0;
            for c in (clo / RB * RB..chi).step_by(RB) {
                accumulate::<T, F>(&mut dv_acc[c * dvp..], dvp, &pb[c..], 1, BK, h, &s.dor[i0 * dvp..]);
                accumulate::<T, F>(&mut dk_acc[c * dkp..], dkp, &dsb[c..], 1, BK, h, &s.qs[i0 * dkp..]);
            }
        }
        // SAFETY (writes): the caller's contract, indices inside the sizes.
        unsafe {
            for n in j0..j1 {
                let c = n - j0;
                for d in 0..dk {
                    job.out.set(n, 0, d, dk_acc[c * dkp + d]);
                }
                for e in 0..dv {
                    job.out.set(n, 0, dk + e, dv_acc[c * dvp + e]);
                }
            }
        }
    }
}

/// One group's operands for [`reference`], each contiguous (row-major) in
/// its per-group shape: `q [tq, rows, dk]`, `k [tk, dk]`, `v [tk, dv]`,
/// `d_o [tq, rows, dv]`, `m`, `l`, `d [tq, rows]` (those the part does not
/// read may be empty).
#[derive(Clone, Copy, Debug)]
pub struct Problem<'a> {
    pub part: FlashPart,
    pub band: Band,
    pub tq: usize,
    pub tk: usize,
    pub rows: usize,
    pub dk: usize,
    pub dv: usize,
    pub scale: f64,
    pub q: &'a [f64],
    pub k: &'a [f64],
    pub v: &'a [f64],
    pub d_o: &'a [f64],
    pub m: &'a [f64],
    pub l: &'a [f64],
    pub d: &'a [f64],
}

impl Problem<'_> {
    /// The width of a result row: `dv + 2`, `dv + 3 + dk` or `dk + dv`.
    pub fn width(&self) -> usize {
        match self.part {
            FlashPart::Forward => self.dv + 2,
            FlashPart::Query => self.dv + 3 + self.dk,
            FlashPart::Key => self.dk + self.dv,
        }
    }

    /// The number of result rows: `tq * rows`, or `tk` for key.
    pub fn result_rows(&self) -> usize {
        match self.part {
            FlashPart::Forward | FlashPart::Query => self.tq * self.rows,
            FlashPart::Key => self.tk,
        }
    }
}

/// The spec, literally, in f64: the result `[tq, rows, width]` (or `[tk,
/// dk + dv]`) row-major.
pub fn reference(p: &Problem) -> Vec<f64> {
    let (rows, dk, dv, w) = (p.rows, p.dk, p.dv, p.width());
    let mut out = vec![0.0; p.result_rows() * w];
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let sees = |t: usize, n: usize| n < p.tk && p.band.sees(t as i64, n as i64);
    let score = |t: usize, r: usize, n: usize| p.scale * dot(&p.q[(t * rows + r) * dk..][..dk], &p.k[n * dk..][..dk]);
    match p.part {
        FlashPart::Forward | FlashPart::Query => {
            for t in 0..p.tq {
                for r in 0..rows {
                    let i = t * rows + r;
                    let seen: Vec<usize> = (0..p.tk).filter(|&n| sees(t, n)).collect();
                    let s: Vec<f64> = seen.iter().map(|&n| score(t, r, n)).collect();
                    let m = s.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
                    let l: f64 = s.iter().map(|&x| (x - m).exp()).sum();
                    let pr: Vec<f64> = s.iter().map(|&x| (x - m).exp() / l).collect();
                    let row = &mut out[i * w..][..w];
                    for (&n, &pn) in seen.iter().zip(&pr) {
                        for (x, &ve) in row[..dv].iter_mut().zip(&p.v[n * dv..][..dv]) {
                            *x += pn * ve;
                        }
                    }
                    row[dv] = m;
                    row[dv + 1] = l;
                    if p.part == FlashPart::Query {
                        let d_o = &p.d_o[i * dv..][..dv];
                        let dp: Vec<f64> = seen.iter().map(|&n| dot(d_o, &p.v[n * dv..][..dv])).collect();
                        let d: f64 = pr.iter().zip(&dp).map(|(a, b)| a * b).sum();
                        row[dv + 2] = d;
                        for ((&n, &pn), &dpn) in seen.iter().zip(&pr).zip(&dp) {
                            for (x, &kc) in row[dv + 3..].iter_mut().zip(&p.k[n * dk..][..dk]) {
                                *x += p.scale * pn * (dpn - d) * kc;
                            }
                        }
                    }
                }
            }
        }
        FlashPart::Key => {
            for n in 0..p.tk {
                let row = &mut out[n * w..][..w];
                for t in (0..p.tq).filter(|&t| sees(t, n)) {
                    for r in 0..rows {
                        let i = t * rows + r;
                        let pn = (score(t, r, n) - p.m[i]).exp() / p.l[i];
                        let d_o = &p.d_o[i * dv..][..dv];
                        for (x, &e) in row[dk..].iter_mut().zip(d_o) {
                            *x += pn * e;
                        }
                        let ds = p.scale * pn * (dot(d_o, &p.v[n * dv..][..dv]) - p.d[i]);
                        for (x, &qc) in row[..dk].iter_mut().zip(&p.q[i * dk..][..dk]) {
                            *x += ds * qc;
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in [-1, 1).
    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            })
            .collect()
    }

    /// How an array is laid out in memory.
    #[derive(Clone, Copy, Debug)]
    enum Layout {
        /// Row-major.
        Dense,
        /// Column-major (every axis reversed).
        Transposed,
        /// Row-major with gaps (every stride about doubled).
        Gapped,
        /// Row-major with the first axis reversed (a negative stride).
        Flipped,
    }

    /// An array of `T` with its strides; element 0 at `buf[offset]`.
    struct Strided<T> {
        buf: Vec<T>,
        offset: usize,
        strides: Vec<isize>,
        dims: Vec<usize>,
    }

    impl<T: Element> Strided<T> {
        fn new(dims: &[usize], layout: Layout, fill: T) -> Strided<T> {
            let rank = dims.len();
            let order: Vec<usize> = match layout {
                Layout::Transposed => (0..rank).collect(),
                _ => (0..rank).rev().collect(),
            };
            let mut strides = vec![0isize; rank];
            let mut next = 1isize;
            for &a in &order {
                strides[a] = next;
                next *= dims[a].max(1) as isize;
                if let Layout::Gapped = layout {
                    next = next * 2 + 1;
                }
            }
            if let (Layout::Flipped, true) = (layout, rank > 0) {
                strides[0] = -strides[0];
            }
            let (mut lo, mut hi) = (0isize, 0isize);
            for (&d, &s) in dims.iter().zip(&strides) {
                let far = (d.max(1) as isize - 1) * s;
                if far < 0 { lo += far } else { hi += far }
            }
            let buf = vec![fill; (hi - lo + 1) as usize];
            Strided { buf, offset: (-lo) as usize, strides, dims: dims.to_vec() }
        }

        fn from(dims: &[usize], layout: Layout, logical: &[f64]) -> Strided<T> {
            let mut a = Strided::new(dims, layout, T::ZERO);
            for (flat, &x) in logical.iter().enumerate() {
                let at = a.at(flat);
                a.buf[at] = T::from_f64(x);
            }
            a
        }

        /// The buffer position of the row-major `flat` index.
        fn at(&self, mut flat: usize) -> usize {
            let mut at = self.offset as isize;
            for (&d, &s) in self.dims.iter().zip(&self.strides).rev() {
                at += (flat % d) as isize * s;
                flat /= d;
            }
            at as usize
        }

        fn logical(&self) -> Vec<f64> {
            let n: usize = self.dims.iter().product();
            (0..n).map(|flat| self.buf[self.at(flat)].to_f64()).collect()
        }

        fn address(&self) -> i64 {
            // SAFETY: inside the buffer.
            unsafe { self.buf.as_ptr().add(self.offset) as i64 }
        }

        fn stride(&self, k: usize) -> i64 {
            self.strides[k] as i64
        }
    }

    /// Runs the kernel on `p`'s operands laid out as `layout` (the result
    /// too), returning the result row-major.
    fn kernel<T: Element>(p: &Problem, layout: Layout) -> Vec<f64> {
        let (tq, tk, rows, dk, dv) = (p.tq, p.tk, p.rows, p.dk, p.dv);
        let q = Strided::<T>::from(&[tq, rows, dk], layout, p.q);
        let k = Strided::<T>::from(&[tk, dk], layout, p.k);
        let v = Strided::<T>::from(&[tk, dv], layout, p.v);
        let none = Strided::<T>::new(&[0, 0, 0], Layout::Dense, T::ZERO);
        let d_o = if p.d_o.is_empty() { none.dims.clone() } else { vec![tq, rows, dv] };
        let d_o = Strided::<T>::from(&d_o, layout, p.d_o);
        let stat = |x: &[f64]| {
            let dims = if x.is_empty() { vec![0, 0] } else { vec![tq, rows] };
            Strided::<T>::from(&dims, layout, x)
        };
        let (m, l, d) = (stat(p.m), stat(p.l), stat(p.d));
        let scale = [T::from_f64(p.scale)];
        let out_dims = if p.part == FlashPart::Key { vec![tk, p.width()] } else { vec![tq, rows, p.width()] };
        let mut out = Strided::<T>::new(&out_dims, layout, T::from_f64(f64::NAN));
        let [lower, upper] = p.band.words();
        let mut w = [0i64; TABLE_WORDS];
        w[0] = p.part.code();
        w[1] = if std::mem::size_of::<T>() == 8 { 1 } else { 0 };
        w[2..7].copy_from_slice(&[tq, tk, rows, dk, dv].map(|x| x as i64));
        w[7] = lower;
        w[8] = upper;
        w[9] = scale.as_ptr() as i64;
        w[10..14].copy_from_slice(&[q.address(), q.stride(0), q.stride(1), q.stride(2)]);
        w[14..17].copy_from_slice(&[k.address(), k.stride(0), k.stride(1)]);
        w[17..20].copy_from_slice(&[v.address(), v.stride(0), v.stride(1)]);
        w[20..24].copy_from_slice(&[d_o.address(), d_o.stride(0), d_o.stride(1), d_o.stride(2)]);
        w[24..27].copy_from_slice(&[m.address(), m.stride(0), m.stride(1)]);
        w[27..30].copy_from_slice(&[l.address(), l.stride(0), l.stride(1)]);
        w[30..33].copy_from_slice(&[d.address(), d.stride(0), d.stride(1)]);
        let base = out.address();
        if p.part == FlashPart::Key {
            w[33..37].copy_from_slice(&[base, out.stride(0), 0, out.stride(1)]);
        } else {
            w[33..37].copy_from_slice(&[base, out.stride(0), out.stride(1), out.stride(2)]);
        }
        // SAFETY: the table describes the arrays above.
        unsafe { tempo_flash_attention(w.as_ptr() as i64) };
        let result = out.logical();
        out.buf.clear();
        result
    }

    /// Operands for a case; key's statistics come from the reference
    /// query part.
    struct Case {
        part: FlashPart,
        band: Band,
        sizes: [usize; 5],
        q: Vec<f64>,
        k: Vec<f64>,
        v: Vec<f64>,
        d_o: Vec<f64>,
        m: Vec<f64>,
        l: Vec<f64>,
        d: Vec<f64>,
        scale: f64,
    }

    impl Case {
        fn new(part: FlashPart, band: Band, [tq, tk, rows, dk, dv]: [usize; 5], seed: u64) -> Case {
            let mut c = Case {
                part,
                band,
                sizes: [tq, tk, rows, dk, dv],
                q: values(tq * rows * dk, seed),
                k: values(tk * dk, seed + 1),
                v: values(tk * dv, seed + 2),
                d_o: if part == FlashPart::Forward { vec![] } else { values(tq * rows * dv, seed + 3) },
                m: vec![],
                l: vec![],
                d: vec![],
                // Large enough for peaked softmaxes.
                scale: 2.5 / (dk.max(1) as f64).sqrt() * 2.0,
            };
            if part == FlashPart::Key {
                let stats = reference(&Problem { part: FlashPart::Query, ..c.problem() });
                let w = dv + 3 + dk;
                for row in stats.chunks(w) {
                    c.m.push(row[dv]);
                    c.l.push(row[dv + 1]);
                    c.d.push(row[dv + 2]);
                }
            }
            c
        }

        fn problem(&self) -> Problem<'_> {
            let [tq, tk, rows, dk, dv] = self.sizes;
            Problem {
                part: self.part,
                band: self.band,
                tq,
                tk,
                rows,
                dk,
                dv,
                scale: self.scale,
                q: &self.q,
                k: &self.k,
                v: &self.v,
                d_o: &self.d_o,
                m: &self.m,
                l: &self.l,
                d: &self.d,
            }
        }
    }

    /// The largest error relative to `1 + |expected|` (infinities must
    /// match exactly).
    fn error(got: &[f64], expected: &[f64]) -> f64 {
        assert_eq!(got.len(), expected.len());
        got.iter()
            .zip(expected)
            .map(|(&g, &e)| {
                if e.is_infinite() || g.is_infinite() {
                    if g == e { 0.0 } else { f64::INFINITY }
                } else {
                    let err = (g - e).abs() / (1.0 + e.abs());
                    if err.is_nan() { f64::INFINITY } else { err }
                }
            })
            .fold(0.0, f64::max)
    }

    fn bands() -> Vec<(&'static str, Band)> {
        vec![
            ("all", Band::ALL),
            ("causal", Band { lower: None, upper: Some(1) }),
            ("window", Band { lower: Some(-3), upper: Some(1) }),
            ("suffix", Band { lower: Some(0), upper: None }),
            ("shifted", Band { lower: Some(-70), upper: Some(-5) }),
            ("empty", Band { lower: Some(2), upper: Some(1) }),
            ("late", Band { lower: Some(1000), upper: None }),
        ]
    }

    fn check_all<T: Element>(tolerance: f64) {
        let sizes =
            [[7, 7, 1, 4, 4], [37, 53, 3, 5, 7], [150, 130, 1, 16, 16], [70, 140, 3, 20, 33], [130, 65, 2, 33, 17]];
        let layouts = [Layout::Dense, Layout::Transposed, Layout::Gapped, Layout::Flipped];
        let mut seed = 1;
        for part in [FlashPart::Forward, FlashPart::Query, FlashPart::Key] {
            for (name, band) in bands() {
                for (s, &size) in sizes.iter().enumerate() {
                    seed += 10;
                    let case = Case::new(part, band, size, seed);
                    let expected = reference(&case.problem());
                    let layout = layouts[(s + seed as usize / 10) % layouts.len()];
                    let got = kernel::<T>(&case.problem(), layout);
                    let e = error(&got, &expected);
                    assert!(
                        e <= tolerance,
                        "{} {name} {size:?} {layout:?}: error {e:e} (tolerance {tolerance:e})",
                        part.name()
                    );
                }
            }
        }
    }

    thread_local! {
        /// The most the kernel may use on this thread: 2 AVX-512, 1 AVX2
        /// and FMA, 0 the portable compilation.
        pub(super) static LEVEL: std::cell::Cell<u8> = const { std::cell::Cell::new(2) };
    }

    #[test]
    fn flash_matches_reference_f32() {
        check_all::<f32>(1e-4);
    }

    #[test]
    fn flash_matches_reference_f64() {
        check_all::<f64>(1e-10);
    }

    /// The AVX2 and portable compilations (the tests above take the best
    /// this machine has).
    #[test]
    fn flash_matches_reference_every_compilation() {
        for level in [0, 1] {
            LEVEL.with(|l| l.set(level));
            check_all::<f32>(1e-4);
            check_all::<f64>(1e-10);
        }
        LEVEL.with(|l| l.set(2));
    }

    #[test]
    fn flash_every_layout() {
        let band = Band { lower: Some(-40), upper: Some(1) };
        for part in [FlashPart::Forward, FlashPart::Query, FlashPart::Key] {
            let case = Case::new(part, band, [90, 80, 2, 9, 12], 7);
            let expected = reference(&case.problem());
            for layout in [Layout::Dense, Layout::Transposed, Layout::Gapped, Layout::Flipped] {
                let e = error(&kernel::<f32>(&case.problem(), layout), &expected);
                assert!(e <= 1e-4, "{} {layout:?}: error {e:e}", part.name());
                let e = error(&kernel::<f64>(&case.problem(), layout), &expected);
                assert!(e <= 1e-10, "{} {layout:?}: error {e:e}", part.name());
            }
        }
    }

    #[test]
    fn flash_empty_sizes() {
        for part in [FlashPart::Forward, FlashPart::Query, FlashPart::Key] {
            for size in [[0, 5, 1, 3, 3], [5, 0, 1, 3, 3], [5, 5, 0, 3, 3], [5, 5, 1, 0, 3], [5, 5, 2, 3, 0]] {
                let case = Case::new(part, Band { lower: None, upper: Some(1) }, size, 3);
                let expected = reference(&case.problem());
                let e = error(&kernel::<f32>(&case.problem(), Layout::Dense), &expected);
                assert!(e <= 1e-4, "{} {size:?}: error {e:e}", part.name());
            }
        }
    }

    fn exp_errors<const FMA: bool>() -> (f64, f64) {
        let mut worst = (0.0f64, 0.0f64);
        for i in 0..188_000 {
            let x = -100.0 + i as f64 * 1e-3;
            let e32 = <f32 as Element>::exp::<FMA>(x as f32) as f64;
            let want = (x as f32 as f64).exp();
            if want > 1e-37 {
                worst.0 = worst.0.max((e32 - want).abs() / want);
            } else {
                assert!(e32 <= 1.01e-37);
            }
            let e64 = <f64 as Element>::exp::<FMA>(x);
            if x > -700.0 {
                worst.1 = worst.1.max((e64 - x.exp()).abs() / x.exp());
            }
        }
        assert_eq!(<f32 as Element>::exp::<FMA>(f32::NEG_INFINITY), 0.0);
        assert_eq!(<f64 as Element>::exp::<FMA>(f64::NEG_INFINITY), 0.0);
        assert_eq!(<f64 as Element>::exp::<FMA>(-1000.0), 0.0);
        assert!(<f32 as Element>::exp::<FMA>(f32::NAN).is_nan());
        assert!(<f64 as Element>::exp::<FMA>(f64::NAN).is_nan());
        worst
    }

    #[test]
    fn flash_exp_is_accurate() {
        for worst in [exp_errors::<false>(), exp_errors::<true>()] {
            assert!(worst.0 < 4e-7 && worst.1 < 1e-14, "{worst:?}");
        }
    }

    /// Many threads at once, each with its own scratch.
    #[test]
    fn flash_concurrent_calls() {
        let case = Case::new(FlashPart::Query, Band { lower: None, upper: Some(1) }, [100, 100, 1, 16, 16], 11);
        let expected = reference(&case.problem());
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..20 {
                        let e = error(&kernel::<f32>(&case.problem(), Layout::Dense), &expected);
                        assert!(e <= 1e-4, "error {e:e}");
                    }
                });
            }
        });
    }

    /// Timings (`cargo test --release -p tempo-runtime flash_timing --
    /// --ignored --nocapture`): microseconds per call and GFLOP/s, counting
    /// `2 dk` or `2 dv` flops per seen (row, key) pair for each product
    /// (forward: scores, P V; query: those, then scores, dP, dQ again;
    /// key: scores, dP, dV, dK).
    #[test]
    #[ignore]
    fn flash_timing() {
        for (t, d) in [(256, 16), (1024, 64)] {
            let band = Band { lower: None, upper: Some(1) };
            let pairs = (t * (t + 1) / 2) as f64;
            for (part, flops) in [
                (FlashPart::Forward, 2 * d + 2 * d),
                (FlashPart::Query, 4 * d + 2 * d + 2 * d + 2 * d),
                (FlashPart::Key, 2 * d + 2 * d + 2 * d + 2 * d),
            ] {
                let case = Case::new(part, band, [t, t, 1, d, d], 5);
                let p = case.problem();
                let (tq, tk, rows, dk, dv) = (t, t, 1, d, d);
                let q: Vec<f32> = p.q.iter().map(|&x| x as f32).collect();
                let k: Vec<f32> = p.k.iter().map(|&x| x as f32).collect();
                let v: Vec<f32> = p.v.iter().map(|&x| x as f32).collect();
                let d_o: Vec<f32> = p.d_o.iter().map(|&x| x as f32).collect();
                let m: Vec<f32> = p.m.iter().map(|&x| x as f32).collect();
                let l: Vec<f32> = p.l.iter().map(|&x| x as f32).collect();
                let dd: Vec<f32> = p.d.iter().map(|&x| x as f32).collect();
                let scale = [p.scale as f32];
                let mut out = vec![0f32; p.result_rows() * p.width()];
                let wd = p.width() as i64;
                let [lower, upper] = band.words();
                let (dk, dv) = (dk as i64, dv as i64);
                let table: [i64; TABLE_WORDS] = [
                    part.code(),
                    0,
                    tq as i64,
                    tk as i64,
                    rows as i64,
                    dk,
                    dv,
                    lower,
                    upper,
                    scale.as_ptr() as i64,
                    q.as_ptr() as i64,
                    dk,
                    dk,
                    1,
                    k.as_ptr() as i64,
                    dk,
                    1,
                    v.as_ptr() as i64,
                    dv,
                    1,
                    d_o.as_ptr() as i64,
                    dv,
                    dv,
                    1,
                    m.as_ptr() as i64,
                    1,
                    1,
                    l.as_ptr() as i64,
                    1,
                    1,
                    dd.as_ptr() as i64,
                    1,
                    1,
                    out.as_mut_ptr() as i64,
                    wd,
                    wd,
                    1,
                ];
                let call = || unsafe { tempo_flash_attention(table.as_ptr() as i64) };
                call();
                let start = std::time::Instant::now();
                let mut calls = 0;
                while start.elapsed().as_secs_f64() < 0.5 {
                    call();
                    calls += 1;
                }
                let us = start.elapsed().as_secs_f64() / calls as f64 * 1e6;
                let gflops = pairs * flops as f64 / (us * 1e-6) / 1e9;
                println!("T = {t}, d = {d}, {}: {us:.1} us/call, {gflops:.1} GFLOP/s", part.name());
            }
        }
    }
}
