//! fittok's engine: a repository → a code graph → the slice of source that answers a question.
//!
//! Stages, one module each, in data-flow order: [`walk`] → [`parse`] → [`link`] → index →
//! rank → render; [`repo`] runs the first three over a whole repository. See ARCHITECTURE.md
//! for the invariants of each.

pub mod embed;
pub mod engine;
pub mod index;
pub mod link;
pub mod model;
pub mod parse;
pub mod question;
pub mod rank;
pub mod render;
pub mod repo;
pub mod store;
pub mod tokens;
pub mod walk;

pub use engine::{Engine, EngineError, Query};
pub use render::Answer;

/// Where fittok keeps its caches: `FITTOK_CACHE_DIR`, else `$XDG_CACHE_HOME/fittok`, else
/// `~/.cache/fittok`.
pub fn cache_dir() -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("FITTOK_CACHE_DIR").filter(|d| !d.is_empty()) {
        return dir.into();
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return std::path::PathBuf::from(dir).join("fittok");
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => std::path::PathBuf::from(home).join(".cache").join("fittok"),
        None => std::env::temp_dir().join("fittok-cache"),
    }
}
