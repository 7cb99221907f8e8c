//! Dense weights in half precision, and the kernel for short texts.
//!
//! Why: a question is a dozen tokens, so each linear layer is a skinny product (12 × 384 by
//! 384 × 1536); on f32 weights through gemm its cost was mostly reading the 42 MB of weights
//! (8–10 ms per pass on two cores). Kept here as f16 (21 MB) in column panels of [`NR`], each
//! panel contiguous, and widened to f32 in registers (F16C) just before the fused
//! multiply-adds, the same products read half the bytes in one sequential sweep and the pass
//! is bound by the multiply-adds (~5 ms); the model also takes half the memory. Tall products
//! (batches of code) widen a layer's weights to f32 for gemm, one layer at a time.
//! Activations and sums stay f32: vectors keep cosine ≥ 0.9999 with sentence-transformers
//! (tested).
//!
//! x86-64 with AVX2, FMA and F16C only (every x86-64 CPU since 2013–2015); elsewhere
//! [`HalfDense::new`] returns `None` and the f32 path is used. Unoptimised (debug) builds do
//! not use it by default: the kernel is intrinsics that only pay off when inlined.

use rayon::prelude::*;

/// Columns per panel: two 8-lane registers.
pub const NR: usize = 16;

/// Whether this CPU can run the kernel.
pub fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("f16c")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A dense layer's weight `[k, n]` as f16 panels: panel `p` holds columns `p*NR..(p+1)*NR`
/// for every row, row after row.
pub struct HalfDense {
    k: usize,
    n: usize,
    panels: Vec<u16>,
    bias: Vec<f32>,
}

impl HalfDense {
    /// From a row-major `[k, n]` weight and its bias; `None` when the CPU lacks the kernel's
    /// instructions or `n` is not a whole number of panels.
    pub fn new(weight: &[f32], k: usize, n: usize, bias: &[f32]) -> Option<HalfDense> {
        if !supported() || !n.is_multiple_of(NR) || weight.len() != k * n || bias.len() != n {
            return None;
        }
        let mut panels = vec![0u16; k * n];
        for (p, panel) in panels.chunks_exact_mut(k * NR).enumerate() {
            for (row, dst) in panel.chunks_exact_mut(NR).enumerate() {
                let src = &weight[row * n + p * NR..][..NR];
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `supported()` checked F16C above; both slices hold NR values.
                unsafe {
                    x86::to_half(src, dst)
                };
                #[cfg(not(target_arch = "x86_64"))]
                let _ = (src, dst);
            }
        }
        Some(HalfDense {
            k,
            n,
            panels,
            bias: bias.to_vec(),
        })
    }

    pub fn inputs(&self) -> usize {
        self.k
    }

    pub fn outputs(&self) -> usize {
        self.n
    }

    /// The weight back as row-major f32 `[k, n]`, for products too tall for the kernel.
    /// Bytes held: the f16 panels and the f32 bias.
    pub fn bytes(&self) -> usize {
        self.panels.len() * 2 + self.bias.len() * 4
    }

    pub fn widen(&self) -> Vec<f32> {
        let (k, n) = (self.k, self.n);
        let mut out = vec![0.0f32; k * n];
        for (p, panel) in self.panels.chunks_exact(k * NR).enumerate() {
            for (row, src) in panel.chunks_exact(NR).enumerate() {
                let dst = &mut out[row * n + p * NR..][..NR];
                #[cfg(target_arch = "x86_64")]
                // SAFETY: a HalfDense exists only where `supported()` holds; NR values each.
                unsafe {
                    x86::to_single(src, dst)
                };
                #[cfg(not(target_arch = "x86_64"))]
                let _ = (src, dst);
            }
        }
        out
    }

    /// `x` (`[rows, k]`, row-major) times the weight, plus the bias: `[rows, n]`. Panels are
    /// spread over the current rayon pool.
    pub fn forward(&self, x: &[f32], rows: usize) -> Vec<f32> {
        let (k, n) = (self.k, self.n);
        assert_eq!(x.len(), rows * k, "input is not [rows, k]");
        // Results panel by panel ([panel][row][NR]), so each task owns a contiguous slice; one
        // run of panels per thread (a 384-wide layer is 24 panels: thirds of 8 would leave one
        // of two threads twice the work).
        let mut by_panel = vec![0.0f32; rows * n];
        let per_thread = (n / NR).div_ceil(rayon::current_num_threads()).max(1);
        by_panel
            .par_chunks_mut(rows * NR)
            .enumerate()
            .with_min_len(per_thread)
            .for_each(|(p, out)| {
                let w = &self.panels[p * k * NR..][..k * NR];
                let bias = &self.bias[p * NR..][..NR];
                #[cfg(target_arch = "x86_64")]
                // SAFETY: a HalfDense exists only where `supported()` holds; the slices have
                // the lengths the kernel reads (x: rows×k, w: k×NR, bias: NR, out: rows×NR).
                unsafe {
                    x86::panel(x, rows, k, w, bias, out)
                };
                #[cfg(not(target_arch = "x86_64"))]
                let _ = (w, bias, out);
            });
        let mut out = vec![0.0f32; rows * n];
        for (p, chunk) in by_panel.chunks_exact(rows * NR).enumerate() {
            for (r, vals) in chunk.chunks_exact(NR).enumerate() {
                out[r * n + p * NR..][..NR].copy_from_slice(vals);
            }
        }
        out
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::NR;
    use std::arch::x86_64::*;

    /// Rows per tile: 6 rows × 2 registers of accumulators + 2 of weights + 1 broadcast fit
    /// in AVX2's 16 registers.
    const MR: usize = 6;

    /// Rounds NR f32 to f16 (nearest even).
    #[target_feature(enable = "avx2,f16c")]
    pub unsafe fn to_half(src: &[f32], dst: &mut [u16]) {
        for (s, d) in src.chunks_exact(8).zip(dst.chunks_exact_mut(8)) {
            // SAFETY: 8 floats read, 8 halves written, both within the chunks.
            unsafe {
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_loadu_ps(s.as_ptr()));
                _mm_storeu_si128(d.as_mut_ptr().cast(), h);
            }
        }
    }

    /// Widens NR f16 to f32 (exact).
    #[target_feature(enable = "avx2,f16c")]
    pub unsafe fn to_single(src: &[u16], dst: &mut [f32]) {
        for (s, d) in src.chunks_exact(8).zip(dst.chunks_exact_mut(8)) {
            // SAFETY: 8 halves read, 8 floats written, both within the chunks.
            unsafe {
                let f = _mm256_cvtph_ps(_mm_loadu_si128(s.as_ptr().cast()));
                _mm256_storeu_ps(d.as_mut_ptr(), f);
            }
        }
    }

    /// One panel: `out[r][0..NR] = bias + x[r] · w[.., 0..NR]` for every row.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn panel(
        x: &[f32],
        rows: usize,
        k: usize,
        w: &[u16],
        bias: &[f32],
        out: &mut [f32],
    ) {
        let mut r0 = 0;
        while r0 < rows {
            let r = (rows - r0).min(MR);
            // SAFETY: rows r0..r0+r exist in x and out; the callee reads k×NR halves of w.
            unsafe {
                match r {
                    6 => tile::<6>(x, r0, k, w, bias, out),
                    5 => tile::<5>(x, r0, k, w, bias, out),
                    4 => tile::<4>(x, r0, k, w, bias, out),
                    3 => tile::<3>(x, r0, k, w, bias, out),
                    2 => tile::<2>(x, r0, k, w, bias, out),
                    _ => tile::<1>(x, r0, k, w, bias, out),
                }
            }
            r0 += r;
        }
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn tile<const R: usize>(
        x: &[f32],
        r0: usize,
        k: usize,
        w: &[u16],
        bias: &[f32],
        out: &mut [f32],
    ) {
        debug_assert!(x.len() >= (r0 + R) * k && w.len() >= k * NR && out.len() >= (r0 + R) * NR);
        // SAFETY: bounds as asserted above (guaranteed by the caller).
        unsafe {
            let b0 = _mm256_loadu_ps(bias.as_ptr());
            let b1 = _mm256_loadu_ps(bias.as_ptr().add(8));
            let mut lo = [b0; R];
            let mut hi = [b1; R];
            let xp = x.as_ptr().add(r0 * k);
            let wp = w.as_ptr().cast::<__m128i>();
            for kk in 0..k {
                let w0 = _mm256_cvtph_ps(_mm_loadu_si128(wp.add(2 * kk)));
                let w1 = _mm256_cvtph_ps(_mm_loadu_si128(wp.add(2 * kk + 1)));
                for r in 0..R {
                    let xb = _mm256_broadcast_ss(&*xp.add(r * k + kk));
                    lo[r] = _mm256_fmadd_ps(xb, w0, lo[r]);
                    hi[r] = _mm256_fmadd_ps(xb, w1, hi[r]);
                }
            }
            let op = out.as_mut_ptr().add(r0 * NR);
            for r in 0..R {
                _mm256_storeu_ps(op.add(r * NR), lo[r]);
                _mm256_storeu_ps(op.add(r * NR + 8), hi[r]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_f32_product_within_half_precision() {
        if !supported() {
            eprintln!("no AVX2/FMA/F16C here: the f32 path is used, nothing to compare");
            return;
        }
        let (k, n) = (40, 48);
        let weight: Vec<f32> = (0..k * n)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 64.0)
            .collect();
        let bias: Vec<f32> = (0..n).map(|j| j as f32 / 10.0).collect();
        let half = HalfDense::new(&weight, k, n, &bias).expect("supported");
        for rows in [1, 5, 6, 7, 13] {
            let x: Vec<f32> = (0..rows * k)
                .map(|i| ((i * 11 % 23) as f32 - 11.0) / 8.0)
                .collect();
            let got = half.forward(&x, rows);
            for r in 0..rows {
                for j in 0..n {
                    let want: f32 = bias[j]
                        + (0..k)
                            .map(|i| x[r * k + i] * weight[i * n + j])
                            .sum::<f32>();
                    let tol = 1e-3 * (1.0 + want.abs());
                    assert!(
                        (got[r * n + j] - want).abs() <= tol,
                        "rows {rows} [{r},{j}]: {} vs {want}",
                        got[r * n + j]
                    );
                }
            }
        }
    }

    #[test]
    fn widening_gives_back_the_rounded_weights() {
        if !supported() {
            return;
        }
        let (k, n) = (3, 32);
        let weight: Vec<f32> = (0..k * n).map(|i| i as f32 / 4.0 - 7.0).collect();
        let half = HalfDense::new(&weight, k, n, &[0.0; 32]).expect("supported");
        assert_eq!(half.widen(), weight, "quarters are exact in f16");
    }

    #[test]
    fn a_width_that_is_not_whole_panels_is_declined() {
        assert!(HalfDense::new(&[0.0; 4 * 20], 4, 20, &[0.0; 20]).is_none());
    }
}
