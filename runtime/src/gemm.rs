//! `tempo_gemm`, the matrix product that code lowered with
//! `lower-temporal-to-loops{fast-math library-gemm}` calls for large
//! contractions (see `tempo_lowering::library_gemm`): the `gemm` crate, a
//! cache-blocked, packed matrix product with kernels for each x86 level
//! up to AVX-512 chosen at run time.
//!
//! A product runs on the calling thread. Splitting large ones over rayon's
//! threads, next to the OpenMP threads of the generated code's parallel
//! loops, was measured slower: the LSTM training step at batch 64, width
//! 256 took 269 ms per iteration on 2 cores with products of 2^22
//! multiply-adds and more split in two, 230 ms with none split.

/// `C = A B` with `C` of `m x n` and `k` terms per element. `kind` 0 is
/// f32, 1 f64; each matrix is the address of its element (0, 0) and its
/// row and column strides in elements (any strides, transposed views
/// included).
///
/// # Safety
/// The addresses and strides must describe valid matrices of those sizes
/// (the generated code passes its buffers' metadata), `C` not overlapping
/// `A` or `B`.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tempo_gemm(
    kind: i64,
    m: i64,
    n: i64,
    k: i64,
    c: i64,
    c_rs: i64,
    c_cs: i64,
    a: i64,
    a_rs: i64,
    a_cs: i64,
    b: i64,
    b_rs: i64,
    b_cs: i64,
) {
    let (m, n, k) = (m.max(0) as usize, n.max(0) as usize, k.max(0) as usize);
    if m == 0 || n == 0 {
        return;
    }
    let parallelism = gemm::Parallelism::None;
    let (c_rs, c_cs, a_rs, a_cs, b_rs, b_cs) =
        (c_rs as isize, c_cs as isize, a_rs as isize, a_cs as isize, b_rs as isize, b_cs as isize);
    // SAFETY: the caller's contract; with k = 0 the product writes zeros
    // (read_dst is false: C is overwritten, not accumulated into).
    unsafe {
        if kind == 1 {
            gemm::gemm(
                m,
                n,
                k,
                c as *mut f64,
                c_cs,
                c_rs,
                false,
                a as *const f64,
                a_cs,
                a_rs,
                b as *const f64,
                b_cs,
                b_rs,
                0.0,
                1.0,
                false,
                false,
                false,
                parallelism,
            );
        } else {
            gemm::gemm(
                m,
                n,
                k,
                c as *mut f32,
                c_cs,
                c_rs,
                false,
                a as *const f32,
                a_cs,
                a_rs,
                b as *const f32,
                b_cs,
                b_rs,
                0.0,
                1.0,
                false,
                false,
                false,
                parallelism,
            );
        }
    }
}

/// The panel width of [`tempo_gemm_packed`]: columns of `B` per panel, two
/// AVX2 vectors of f32 (one AVX-512 vector).
pub const PANEL: usize = 16;

/// `C[i, j, r] = sum_k A[i, k] P[j, k, r]`: the product of `A` (`m x k`) by
/// a matrix `B` packed in panels, `P[j, k, r] = B[k, j * PANEL + r]`, for
/// panels `j` in `[0, panels)` (`temporal-pack-products` makes `P` once
/// per value of the weight, outside the loop that multiplies it; the
/// generated code passes a block of panels per thread). `C` and `P` have
/// unit stride along `r` (`width` elements, [`PANEL`] for the vector
/// kernel); every other stride is in elements. `kind` 0 is f32, 1 f64.
///
/// The packed panel (`k x 16`, 16 KiB for `k = 256`) is read in order
/// and stays in the first-level cache while a tile of up to six rows of
/// `A` multiplies it with twelve accumulators: the shape of a
/// recurrence's per-step product (a few rows by a large weight) for which
/// the general GEMM packs the weight again at every call. Each element sums
/// its `k` terms in increasing order (with fused multiply-adds on the
/// vector path, which only fast math uses).
///
/// # Safety
/// The addresses and strides must describe valid arrays of those sizes,
/// `C` not overlapping `A` or `P`.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tempo_gemm_packed(
    kind: i64,
    m: i64,
    k: i64,
    panels: i64,
    width: i64,
    c: i64,
    c_is: i64,
    c_js: i64,
    a: i64,
    a_is: i64,
    a_ks: i64,
    p: i64,
    p_js: i64,
    p_ks: i64,
) {
    let (m, k, panels, width) = (m.max(0) as usize, k.max(0) as usize, panels.max(0) as usize, width.max(0) as usize);
    let (c_is, c_js, a_is, a_ks, p_js, p_ks) =
        (c_is as isize, c_js as isize, a_is as isize, a_ks as isize, p_js as isize, p_ks as isize);
    // SAFETY (all calls): the caller's contract.
    if kind == 1 {
        unsafe {
            packed_scalar::<f64>(
                m,
                k,
                panels,
                width,
                (c as *mut f64, c_is, c_js),
                (a as *const f64, a_is, a_ks),
                (p as *const f64, p_js, p_ks),
            )
        };
        return;
    }
    let (c, a, p) = ((c as *mut f32, c_is, c_js), (a as *const f32, a_is, a_ks), (p as *const f32, p_js, p_ks));
    #[cfg(target_arch = "x86_64")]
    if width == PANEL
        && p_ks == PANEL as isize
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        unsafe { packed_avx2::product(m, k, panels, c, a, p) };
        return;
    }
    unsafe { packed_scalar::<f32>(m, k, panels, width, c, a, p) };
}

/// The portable path of [`tempo_gemm_packed`]: one sum per element.
unsafe fn packed_scalar<T: Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>>(
    m: usize,
    k: usize,
    panels: usize,
    width: usize,
    (c, c_is, c_js): (*mut T, isize, isize),
    (a, a_is, a_ks): (*const T, isize, isize),
    (p, p_js, p_ks): (*const T, isize, isize),
) {
    for i in 0..m as isize {
        for j in 0..panels as isize {
            for r in 0..width as isize {
                let mut sum = T::default();
                for kk in 0..k as isize {
                    // SAFETY: the caller's contract.
                    sum = sum + unsafe { *a.offset(i * a_is + kk * a_ks) * *p.offset(j * p_js + kk * p_ks + r) };
                }
                unsafe { *c.offset(i * c_is + j * c_js + r) = sum };
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod packed_avx2 {
    use super::PANEL;
    use std::arch::x86_64::*;

    /// Tiles of up to six rows by one panel (two vectors per row).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn product(
        m: usize,
        k: usize,
        panels: usize,
        (c, c_is, c_js): (*mut f32, isize, isize),
        (a, a_is, a_ks): (*const f32, isize, isize),
        (p, p_js, _): (*const f32, isize, isize),
    ) {
        for j in 0..panels as isize {
            let panel = unsafe { p.offset(j * p_js) };
            let mut i = 0usize;
            while i < m {
                let rows = (m - i).min(6);
                let a = unsafe { a.offset(i as isize * a_is) };
                let c = unsafe { c.offset(i as isize * c_is + j * c_js) };
                unsafe {
                    match rows {
                        6 => tile::<6>(k, a, a_is, a_ks, panel, c, c_is),
                        5 => tile::<5>(k, a, a_is, a_ks, panel, c, c_is),
                        4 => tile::<4>(k, a, a_is, a_ks, panel, c, c_is),
                        3 => tile::<3>(k, a, a_is, a_ks, panel, c, c_is),
                        2 => tile::<2>(k, a, a_is, a_ks, panel, c, c_is),
                        _ => tile::<1>(k, a, a_is, a_ks, panel, c, c_is),
                    }
                }
                i += rows;
            }
        }
    }

    /// `R` rows of `C` (one panel wide) in `2 R` accumulators.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile<const R: usize>(
        k: usize,
        a: *const f32,
        a_is: isize,
        a_ks: isize,
        panel: *const f32,
        c: *mut f32,
        c_is: isize,
    ) {
        let mut acc = [[_mm256_setzero_ps(); 2]; R];
        for kk in 0..k {
            // SAFETY: the caller's contract (row kk of the panel, column kk of A's rows).
            unsafe {
                let b0 = _mm256_loadu_ps(panel.add(kk * PANEL));
                let b1 = _mm256_loadu_ps(panel.add(kk * PANEL + 8));
                for (r, row) in acc.iter_mut().enumerate() {
                    let x = _mm256_set1_ps(*a.offset(r as isize * a_is + kk as isize * a_ks));
                    row[0] = _mm256_fmadd_ps(x, b0, row[0]);
                    row[1] = _mm256_fmadd_ps(x, b1, row[1]);
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            // SAFETY: the caller's contract.
            unsafe {
                _mm256_storeu_ps(c.offset(r as isize * c_is), row[0]);
                _mm256_storeu_ps(c.offset(r as isize * c_is + 8), row[1]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Calls [`tempo_gemm_packed`]: the element kind, `[m, k, panels,
    /// width]`, then C's, A's and P's address and two strides.
    fn packed_call(kind: i64, sizes: [i64; 4], c: [i64; 3], a: [i64; 3], p: [i64; 3]) {
        let [m, k, panels, width] = sizes;
        // SAFETY: each test passes arrays that hold what it describes.
        unsafe { tempo_gemm_packed(kind, m, k, panels, width, c[0], c[1], c[2], a[0], a[1], a[2], p[0], p[1], p[2]) }
    }

    /// Against a plain triple loop, with B read transposed and C strided.
    #[test]
    fn products_with_any_strides() {
        let (m, n, k) = (5usize, 7usize, 3usize);
        let a: Vec<f64> = (0..m * k).map(|x| x as f64 * 0.5 - 3.0).collect();
        // B stored as n x k (B[kk][j] at j * k + kk).
        let bt: Vec<f64> = (0..n * k).map(|x| (x as f64).sin()).collect();
        let mut c = vec![f64::NAN; m * (n + 2)];
        unsafe {
            tempo_gemm(
                1,
                m as i64,
                n as i64,
                k as i64,
                c.as_mut_ptr() as i64,
                (n + 2) as i64,
                1,
                a.as_ptr() as i64,
                k as i64,
                1,
                bt.as_ptr() as i64,
                1,
                k as i64,
            )
        };
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k).map(|kk| a[i * k + kk] * bt[j * k + kk]).sum();
                assert!((c[i * (n + 2) + j] - want).abs() < 1e-12, "{i} {j}");
            }
            assert!(c[i * (n + 2) + n].is_nan(), "the padding is not written");
        }
        // k = 0: zeros.
        let mut z = vec![1.0f32; 4];
        unsafe {
            tempo_gemm(0, 2, 2, 0, z.as_mut_ptr() as i64, 2, 1, a.as_ptr() as i64, 0, 1, bt.as_ptr() as i64, 1, 1)
        };
        assert_eq!(z, vec![0.0; 4]);
    }

    /// The packed product against the plain sum, on the vector path (a
    /// panel of 16, rows not a multiple of six) and the portable one (f64,
    /// a narrower panel), with strided A and C.
    #[test]
    fn packed_products() {
        let (m, k, panels) = (13usize, 37usize, 3usize);
        let n = panels * PANEL;
        let a: Vec<f32> = (0..m * (k + 1)).map(|x| ((x * 7 % 23) as f32) * 0.25 - 2.0).collect();
        let b: Vec<f32> = (0..k * n).map(|x| ((x * 5 % 17) as f32) * 0.5 - 4.0).collect();
        let mut packed = vec![0f32; panels * k * PANEL];
        for j in 0..panels {
            for kk in 0..k {
                for r in 0..PANEL {
                    packed[(j * k + kk) * PANEL + r] = b[kk * n + j * PANEL + r];
                }
            }
        }
        let mut c = vec![f32::NAN; m * (n + 3)];
        packed_call(
            0,
            [m as i64, k as i64, panels as i64, PANEL as i64],
            [c.as_mut_ptr() as i64, (n + 3) as i64, PANEL as i64],
            [a.as_ptr() as i64, (k + 1) as i64, 1],
            [packed.as_ptr() as i64, (k * PANEL) as i64, PANEL as i64],
        );
        for i in 0..m {
            for j in 0..n {
                // Small integers and quarters: exact in any order.
                let want: f32 = (0..k).map(|kk| a[i * (k + 1) + kk] * b[kk * n + j]).sum();
                assert_eq!(c[i * (n + 3) + j], want, "{i} {j}");
            }
            assert!(c[i * (n + 3) + n].is_nan(), "the padding is not written");
        }
        // Every tile height and a range of depths and panel counts, with
        // small integers (exact in any order): the vector path against the
        // portable one (a panel stride of 17 takes the portable path).
        for m in 1..=13usize {
            for (k, panels) in [(1usize, 1usize), (7, 2), (64, 1), (129, 3)] {
                let a: Vec<f32> = (0..m * k).map(|x| ((x * 11 + m) % 7) as f32 - 3.0).collect();
                let p: Vec<f32> = (0..panels * k * 17).map(|x| ((x * 3 + k) % 5) as f32 - 2.0).collect();
                let run = |p_ks: usize| {
                    let mut c = vec![0f32; m * panels * PANEL];
                    packed_call(
                        0,
                        [m as i64, k as i64, panels as i64, PANEL as i64],
                        [c.as_mut_ptr() as i64, (panels * PANEL) as i64, PANEL as i64],
                        [a.as_ptr() as i64, k as i64, 1],
                        [p.as_ptr() as i64, (k * 17) as i64, p_ks as i64],
                    );
                    c
                };
                // The panels read with a row stride of 16 and of 17.
                for p_ks in [PANEL, 17] {
                    let c = run(p_ks);
                    for i in 0..m {
                        for j in 0..panels {
                            for r in 0..PANEL {
                                let want: f32 = (0..k).map(|kk| a[i * k + kk] * p[j * k * 17 + kk * p_ks + r]).sum();
                                assert_eq!(c[(i * panels + j) * PANEL + r], want, "m {m} k {k} ({i}, {j}, {r})");
                            }
                        }
                    }
                }
            }
        }
        // f64, panels of 4.
        let (width, panels) = (4usize, 2usize);
        let a64: Vec<f64> = (0..m * k).map(|x| (x as f64).sin()).collect();
        let p64: Vec<f64> = (0..panels * k * width).map(|x| (x as f64 * 0.3).cos()).collect();
        let mut c64 = vec![0f64; m * panels * width];
        packed_call(
            1,
            [m as i64, k as i64, panels as i64, width as i64],
            [c64.as_mut_ptr() as i64, (panels * width) as i64, width as i64],
            [a64.as_ptr() as i64, k as i64, 1],
            [p64.as_ptr() as i64, (k * width) as i64, width as i64],
        );
        for i in 0..m {
            for j in 0..panels {
                for r in 0..width {
                    let mut want = 0.0;
                    for kk in 0..k {
                        want += a64[i * k + kk] * p64[(j * k + kk) * width + r];
                    }
                    assert_eq!(c64[(i * panels + j) * width + r], want);
                }
            }
        }
    }
}
