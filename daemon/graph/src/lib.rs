//! A repository's code graph: [`repo`] runs walk → parse → [`link`] over a whole repository,
//! taking unchanged files' parses from the [`store`]; [`link`] resolves references to
//! definitions across files into call, import, type-use and inheritance edges.
//!
//! Invariant: the graph is a pure function of the set of parsed files, so an incremental
//! update gives exactly the graph a fresh build would.
//!
//! API boundary: [`repo`] and [`store`] touch the file system (the repository, the redb
//! cache); [`link`] is pure. Errors are typed ([`store::StoreError`], `walk::WalkError`).

pub mod link;
pub mod repo;
pub mod store;
#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub mod testing;

use fittok_parse::{model, parse, walk};
use fittok_util::par;

/// This crate's sources, hashed: a snapshot of a linked graph is read only by a build whose
/// linking is the same.
pub const SOURCE_ID: u64 = fittok_util::source_id::parse_id(env!("FITTOK_SOURCE_ID"));
