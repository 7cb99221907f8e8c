//! fittok's engine: a repository → a code graph → the slice of source that answers a question;
//! and Markdown → a Fitted Information Tree.
//!
//! Stages, one module each, in data-flow order: [`walk`] → [`parse`] → [`link`] → [`index`] →
//! [`rank`] → [`pack`] → [`render`]; [`repo`] runs the first three over a whole repository and
//! [`engine`] orchestrates the rest. [`fit`] is independent of the graph.
//!
//! API boundary: plain synchronous Rust. No async runtime, no network, no command line and no
//! environment: every setting arrives in a [`Config`] built by the binary that embeds the
//! engine. Errors are typed ([`EngineError`], [`fit::FitError`], [`store::StoreError`]).
//! See ARCHITECTURE.md for the invariants of each stage.

pub mod config;
pub mod embed;
pub mod engine;
pub mod fit;
pub mod history;
pub mod index;
pub mod lines;
pub mod link;
pub mod matching;
pub mod memory;
pub mod model;
pub mod pack;
mod par;
pub mod parse;
pub mod question;
pub mod rank;
pub mod render;
pub mod repo;
pub mod scrub;
pub mod snapshot;
pub mod store;
#[doc(hidden)]
pub mod testing;
pub mod tokens;
pub mod walk;

#[cfg(test)]
mod update_tests;

pub use config::Config;
pub use engine::{Engine, EngineError, Query};
pub use render::Answer;
