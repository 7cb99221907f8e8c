//! fittok's wire contract: the gRPC messages and service of `fittokd` (generated from
//! `fittok.proto`), the protocol version, and where the daemon's socket, log and caches live.
//! The daemon's `service` module and the clients are the only users of these types.

#[allow(clippy::all, missing_docs)]
pub mod v1 {
    tonic::include_proto!("fittok.v1");
}

pub mod paths;

/// Bumped on any incompatible change to `fittok.proto`.
pub const PROTOCOL: u32 = 1;

/// The version every fittok binary of this build reports.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `1760` → `1,760`: token counts as people read them (link annotations, reports).
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Orders `a.b.c` versions numerically (`0.10.0` > `0.9.1`); non-numeric parts compare as 0.
pub fn version_key(version: &str) -> Vec<u64> {
    version
        .split(['.', '-', '+'])
        .map(|p| p.parse::<u64>().unwrap_or(0))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn versions_order_numerically() {
        assert!(super::version_key("0.10.0") > super::version_key("0.9.1"));
        assert!(super::version_key("1.0.0") > super::version_key("0.99"));
        assert_eq!(super::version_key("0.1.0"), super::version_key("0.1.0"));
    }
}
