//! Test helpers: the deterministic generator (for the end-to-end tests too), and for this
//! crate's tests a linked graph of a few files, a node by name, a temporary repository and a
//! file too big for its outline.

#[cfg(test)]
pub use fittok_graph::testing::{graph_of, node_named, temp_repo};
pub use fittok_util::testing::Rng;

/// `books.py`: a two-line `parse_amount` and a `Ledger` class of 150 small methods, far too big
/// for its outline in a small answer.
#[cfg(test)]
pub fn ledger_source() -> String {
    let members: String = (0..150)
        .map(|i| format!("    def entry_{i}(self):\n        return self.rows[{i}]\n\n"))
        .collect();
    format!(
        "def parse_amount(text):\n    return int(text)\n\n\nclass Ledger:\n    \"\"\"Ledger of amounts.\"\"\"\n\n{members}"
    )
}
