//! fittok's wire contract: the gRPC messages and service of `fittokd` (generated from
//! `fittok.proto`), the protocol version, and where the daemon's socket, log and caches live.
//! The daemon's `service` module and the clients are the only users of these types.

#[allow(clippy::all, missing_docs)]
pub mod v1 {
    tonic::include_proto!("fittok.v1");
}

pub mod failure;
pub mod paths;

/// Bumped on any incompatible change to `fittok.proto`.
pub const PROTOCOL: u32 = 2;

/// `RepoStatus.state` of a repository the memory budget dropped: its snapshot is in the cache
/// on disk, and the next question about it loads it from there.
pub const STATE_ON_DISK_ONLY: &str = "not resident (on disk only)";

/// The version every fittok binary of this build reports.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `1760` → `1,760`: token counts as people read them (link annotations, reports).
/// The smallest token budget an answer can be useful in: the provenance line, the reading
/// note and one small block. Smaller budgets (other than 0, no cap) are refused by every
/// front end, with this figure, rather than answered with a cut provenance line.
pub const MIN_BUDGET: u32 = 200;

/// Checks a requested budget (0 = no cap); the message names the minimum.
pub fn check_budget(budget: u64) -> Result<u32, String> {
    match u32::try_from(budget) {
        Ok(0) => Ok(0),
        Ok(b) if b >= MIN_BUDGET => Ok(b),
        Ok(b) => Err(format!(
            "a budget of {b} tokens is below the smallest useful answer ({MIN_BUDGET} tokens: provenance, note and one block); use {MIN_BUDGET} or more, or 0 for no cap"
        )),
        Err(_) => Err(format!(
            "a budget of {budget} tokens is more than {} ",
            u32::MAX
        )),
    }
}

/// [`check_budget`] for a command-line value.
pub fn parse_budget(s: &str) -> Result<u32, String> {
    let n: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of tokens"))?;
    check_budget(n)
}

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
