//! A repository's source files, parsed: [`walk`] lists and reads them (ignore rules, binary,
//! huge, generated and vendored files left out, secrets scrubbed), [`parse`] turns each into a
//! [`model::ParsedFile`] of definitions, references and imports with tree-sitter, for sixteen
//! languages whose grammars are linked in.
//!
//! Invariant: the parser never fails. A syntax error, an unknown construct or a grammar that
//! refuses a file gives a partial parse with a diagnostic, never an error or a panic.
//!
//! API boundary: [`walk::list`]/[`walk::read`] touch the file system; everything else is pure.
//! [`PARSER_ID`] names this build's parses for caches.

pub mod model;
pub mod msbuild;
pub mod parse;
pub mod walk;

use fittok_scrub as scrub;
#[cfg(test)]
use fittok_util::testing;
use fittok_util::{lines, par};

/// Identifies the parser build: what a file parses to depends on this crate, the scrubber that
/// runs before it and the line arithmetic it uses, so parses cached by another build of any
/// of them are re-parsed.
pub const PARSER_ID: u64 = fittok_util::source_id::parse_id(env!("FITTOK_SOURCE_ID"))
    ^ fittok_scrub::SOURCE_ID.rotate_left(21)
    ^ fittok_util::SOURCE_ID.rotate_left(42);
