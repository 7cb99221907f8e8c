//! FNV-1a, for the short keys of indexes and caches: fast, and stable across runs, platforms
//! and Rust versions (std's SipHash resists hash flooding, which an index of one's own
//! repository does not need, and is randomly keyed).

/// FNV-1a as a [`std::hash::Hasher`], for maps keyed by short strings.
#[derive(Default, Clone, Copy)]
pub struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

pub type FnvBuild = std::hash::BuildHasherDefault<Fnv>;

/// FNV-1a over bytes from a given offset basis.
pub fn fnv(bytes: &[u8], basis: u64) -> u64 {
    let mut h = basis;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}
