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
pub mod history;
pub mod index;
pub mod layout;
pub mod matching;
pub mod memory;
pub mod navigate;
pub mod pack;
pub mod question;
pub mod rank;
pub mod render;
pub mod snapshot;
#[doc(hidden)]
pub mod testing;

pub use fittok_fit as fit;
pub use fittok_graph::{link, repo, store};
pub use fittok_parse::{model, parse, walk};
pub use fittok_scrub as scrub;
pub use fittok_tokens as tokens;
pub use fittok_util::lines;

#[cfg(test)]
mod update_tests;

pub use config::Config;
pub use engine::{Engine, EngineError, Query};
pub use render::Answer;
