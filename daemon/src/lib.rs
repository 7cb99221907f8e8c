//! fittok's engine: a repository → a code graph → the slice of source that answers a question.
//!
//! Stages, one module each, in data-flow order: [`walk`] → [`parse`] → [`link`] → index →
//! rank → render; [`repo`] runs the first three over a whole repository. See ARCHITECTURE.md
//! for the invariants of each.

pub mod link;
pub mod model;
pub mod parse;
pub mod repo;
pub mod walk;
