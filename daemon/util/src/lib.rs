//! Small pieces every fittok crate shares: an order-preserving parallel map ([`par`]), FNV
//! hashing ([`hash`]), line arithmetic over source bytes ([`lines`]), and a deterministic
//! generator for tests ([`testing`]); and the build-script helper that gives each cache
//! stage an identity from its sources ([`source_id`]).
//!
//! API boundary: plain data and functions over std. At run time no I/O but [`testing`]'s
//! `temp_repo`, behind the `testing` feature).

pub mod hash;
pub mod lines;
pub mod par;
pub mod source_id;
#[doc(hidden)]
pub mod testing;

/// This crate's sources, hashed: line arithmetic decides parses, so the parse cache's identity
/// includes it.
pub const SOURCE_ID: u64 = source_id::parse_id(env!("FITTOK_SOURCE_ID"));
