//! A deterministic generator for tests and benchmarks (every crate's and the end-to-end ones):
//! xorshift64 (13, 7, 17). Random-input tests use it so that a failure repeats exactly.

#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is replaced: xorshift would stay at 0 forever).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x2545_F491_4F6C_DD1D
        } else {
            seed
        })
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// One of `items` (which must not be empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A fresh directory `fittok-{name}-{pid}` under the temporary directory holding `files`
/// (path, text).
#[cfg(feature = "testing")]
pub fn temp_repo(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fittok-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_sequence_repeats_and_stays_in_range() {
        let mut a = super::Rng::new(7);
        let mut b = super::Rng::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
            assert!(a.below(10) < 10);
            b.below(10);
        }
        assert_ne!(super::Rng::new(0).next_u64(), 0);
    }
}
