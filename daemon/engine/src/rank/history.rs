//! The history signal: definitions of the files that past commits resembling the question
//! changed ([`crate::history`]).
//!
//! History says which files, not which of their definitions. Within a file the definitions
//! sharing the question's words come first, so the list runs over files in the order of their
//! history score, each contributing its best few definitions by content score; a file none of
//! whose definitions shares a word contributes nothing (its region of interest is unknown,
//! and a whole file is not an answer).

use crate::link::Graph;
use crate::model::DefKind;

/// How deep the history list goes into the fused pool.
pub const DEPTH: usize = 10;
/// How many of the history's best files contribute.
const FILES: usize = 5;
/// How many definitions each file contributes.
const PER_FILE: usize = 2;

/// The history order: per file of the best [`FILES`] by `file_scores` (one score per graph
/// file), its [`PER_FILE`] definitions with the highest positive `content` score, best file
/// first.
pub fn order(g: &Graph, file_scores: &[f32], content: &[f32]) -> Vec<u32> {
    let scores = &file_scores[..file_scores.len().min(g.files.len())];
    let mut out = Vec::new();
    for f in crate::index::best_first(scores, FILES) {
        let (start, end) = (
            g.file_start[f as usize],
            g.file_start
                .get(f as usize + 1)
                .copied()
                .unwrap_or(g.nodes.len() as u32),
        );
        let mut nodes: Vec<u32> = (start..end)
            .filter(|&n| content.get(n as usize).is_some_and(|&c| c > 0.0))
            .filter(|&n| g.def(n).kind != DefKind::Region)
            .collect();
        nodes.sort_by(|&a, &b| {
            content[b as usize]
                .total_cmp(&content[a as usize])
                .then(a.cmp(&b))
        });
        out.extend(nodes.into_iter().take(PER_FILE));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{graph_of, node_named};

    #[test]
    fn files_in_history_order_each_with_its_best_matching_definitions() {
        let g = graph_of(&[
            ("a.py", "def alpha():\n    pass\n\ndef beta():\n    pass\n"),
            ("b.py", "def gamma():\n    pass\n\ndef delta():\n    pass\n"),
            ("c.py", "def epsilon():\n    pass\n"),
        ]);
        let (alpha, beta, gamma, delta, epsilon) = (
            node_named(&g, "alpha"),
            node_named(&g, "beta"),
            node_named(&g, "gamma"),
            node_named(&g, "delta"),
            node_named(&g, "epsilon"),
        );
        let mut content = vec![0.0; g.nodes.len()];
        content[alpha as usize] = 1.0;
        content[beta as usize] = 2.0;
        content[gamma as usize] = 5.0;
        content[epsilon as usize] = 3.0;
        let mut files = vec![0.0; g.files.len()];
        let file = |n: u32| g.nodes[n as usize].file as usize;
        files[file(alpha)] = 1.0;
        files[file(gamma)] = 2.0;
        // c.py had no commit like the question: its match comes from other signals.
        assert_eq!(order(&g, &files, &content), vec![gamma, beta, alpha]);
        // delta shares no word: never listed, though its file is.
        assert!(!order(&g, &files, &content).contains(&delta));
        assert!(order(&g, &vec![0.0; g.files.len()], &content).is_empty());
        let _ = epsilon;
    }
}
