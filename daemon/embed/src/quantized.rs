//! A node's vector kept as one byte per dimension: a quarter of the f32 memory.
//!
//! Each vector gets its own scale (its largest magnitude maps to ±127), so the rounding error
//! of a component is at most half a step of that vector's range. Sentence embeddings are
//! unit vectors spread over all 384 dimensions; the cosine error this leaves is about 1e-3,
//! well below the gaps between the similarities that order a question's candidates (the
//! agreement with f32 on real vectors is measured in `bench/results/daemon.md`). The cache
//! keeps f32 vectors, so a build that ranks with f32 again reads the same cache.

/// An 8-bit vector with its scale: `value[i] ≈ codes[i] × scale`.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantizedVector {
    scale: f32,
    codes: Box<[i8]>,
}

impl QuantizedVector {
    /// Quantizes `v` symmetrically around zero. Non-finite components become 0, so a damaged
    /// vector can lower one node's similarity but never poison a ranking with NaN.
    pub fn new(v: &[f32]) -> QuantizedVector {
        let clean = |x: f32| if x.is_finite() { x } else { 0.0 };
        let max = v.iter().fold(0.0f32, |m, &x| m.max(clean(x).abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 0.0 };
        let codes = v
            .iter()
            .map(|&x| {
                if scale > 0.0 {
                    (clean(x) / scale).round().clamp(-127.0, 127.0) as i8
                } else {
                    0
                }
            })
            .collect();
        QuantizedVector { scale, codes }
    }

    /// The dot product with an f32 vector (the question's): [`super::dot`] on the codes,
    /// scaled once.
    pub fn dot(&self, query: &[f32]) -> f32 {
        super::dot_widened(&self.codes, query) * self.scale
    }

    /// Heap bytes this vector holds.
    pub fn heap_bytes(&self) -> usize {
        self.codes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random unit vectors (xorshift), shaped like sentence embeddings.
    fn unit_vectors(count: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut s = seed;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f32 / (1u64 << 53) as f32 - 0.5
        };
        (0..count)
            .map(|_| {
                let v: Vec<f32> = (0..dim).map(|_| next()).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.into_iter().map(|x| x / norm).collect()
            })
            .collect()
    }

    #[test]
    fn the_dot_product_stays_within_a_thousandth_of_f32s() {
        let vectors = unit_vectors(200, 384, 7);
        let query = &unit_vectors(1, 384, 99)[0];
        for v in &vectors {
            let exact = crate::dot(v, query);
            let q = QuantizedVector::new(v);
            assert!(
                (q.dot(query) - exact).abs() < 1e-3,
                "{exact} {}",
                q.dot(query)
            );
            assert_eq!(q.heap_bytes(), 384);
        }
    }

    /// The vector as f32 again (with the rounding).
    fn to_f32(q: &QuantizedVector) -> Vec<f32> {
        q.codes.iter().map(|&c| f32::from(c) * q.scale).collect()
    }

    #[test]
    fn the_largest_component_round_trips_and_zero_and_nan_are_safe() {
        let v = [0.5f32, -0.25, 0.0, 0.125];
        let back = to_f32(&QuantizedVector::new(&v));
        assert!((back[0] - 0.5).abs() < 1e-6);
        assert!((back[1] + 0.25).abs() < 0.5 / 127.0);
        assert_eq!(QuantizedVector::new(&[0.0; 8]).dot(&[1.0; 8]), 0.0);
        let damaged = QuantizedVector::new(&[f32::NAN, 1.0, f32::INFINITY]);
        assert!(damaged.dot(&[1.0, 1.0, 1.0]).is_finite());
    }

    #[test]
    fn a_ranking_by_quantized_vectors_keeps_f32s_top_ten() {
        // 5,000 candidates: the ten nearest by f32 stay the ten nearest (as a set) for each
        // of 20 questions, bar near-ties.
        let vectors = unit_vectors(5000, 384, 3);
        let quantized: Vec<QuantizedVector> =
            vectors.iter().map(|v| QuantizedVector::new(v)).collect();
        let mut kept = 0;
        for query in unit_vectors(20, 384, 11) {
            let top = |score: &dyn Fn(usize) -> f32| {
                let mut ids: Vec<usize> = (0..vectors.len()).collect();
                ids.sort_by(|&a, &b| score(b).total_cmp(&score(a)));
                ids.truncate(10);
                ids
            };
            let exact = top(&|i| crate::dot(&vectors[i], &query));
            let approx = top(&|i| quantized[i].dot(&query));
            kept += exact.iter().filter(|i| approx.contains(i)).count();
        }
        assert!(kept >= 190, "{kept} of 200");
    }
}
