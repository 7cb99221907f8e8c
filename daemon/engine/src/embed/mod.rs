//! The encoder ([`fittok_embed`], re-exported) and [`semantic`]: which definitions are
//! embedded, their vectors kept in the store, and similarity to a question.

pub use fittok_embed::*;

pub mod semantic;
pub mod state;
