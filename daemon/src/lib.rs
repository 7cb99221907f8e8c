//! fittok's engine: a repository → a code graph → the slice of source that answers a question.
//!
//! Stages, one module each, in data-flow order: [`walk`] → [`parse`] → [`link`] → index →
//! rank → render; [`repo`] runs the first three over a whole repository. See ARCHITECTURE.md
//! for the invariants of each.

pub mod embed;
pub mod engine;
pub mod fit;
pub mod index;
pub mod link;
pub mod model;
pub mod parse;
pub mod question;
pub mod rank;
pub mod render;
pub mod repo;
pub mod resident;
pub mod scrub;
pub mod service;
pub mod store;
pub mod tokens;
pub mod walk;
pub mod watch;

#[cfg(test)]
mod update_tests;

pub use engine::{Engine, EngineError, Query};
pub use render::Answer;

/// Where fittok keeps its caches (shared with the clients through the wire crate).
pub use fittok_proto::paths::cache_dir;
