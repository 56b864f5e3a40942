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

#[cfg(test)]
mod tests {
    use super::*;

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
}
