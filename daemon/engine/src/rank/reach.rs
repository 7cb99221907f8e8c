//! The reach signal: code the question's named definitions lead to that also shares its words.
//!
//! A question that names an API — `JsonAdapter`, `builtin_str`, `AsStringVisitor`, a function
//! in its traceback — is about what that definition does, and what it does lives as much in
//! the code it calls (and, for a class, in its members) as in its own lines. Neither of the
//! other signals sees that code as such: content BM25 ranks it among every node sharing the
//! question's words, and the personalised walk spreads from the named definitions by graph
//! shape alone, to callees that share nothing with the question as readily as to the one
//! holding its words. This signal keeps the intersection: nodes within [`HOPS`] call or
//! containment steps of the best-mentioned definitions, ordered by their content BM25.

use crate::link::{EdgeKind, Graph};

/// How many of the mention signal's best nodes the reach starts from.
pub const SEEDS: usize = 10;
/// How many call or containment steps it follows from them.
pub const HOPS: usize = 3;
/// How many reached nodes join the candidate pool, best content match first.
pub const DEPTH: usize = 15;

/// The nodes within [`HOPS`] call or containment steps of `seeds` (not the seeds themselves)
/// that match the question's words (`content`, by node), best match first, at most `depth`.
pub fn reach(g: &Graph, seeds: &[u32], content: &[f32], depth: usize) -> Vec<u32> {
    let mut seen: std::collections::HashSet<u32> = seeds.iter().copied().collect();
    let mut frontier: Vec<u32> = seeds.to_vec();
    let mut reached: Vec<u32> = Vec::new();
    for _ in 0..HOPS {
        let mut next = Vec::new();
        for &node in &frontier {
            for t in g.targets(node, &[EdgeKind::Calls, EdgeKind::Contains]) {
                if seen.insert(t) {
                    next.push(t);
                    if content[t as usize] > 0.0 {
                        reached.push(t);
                    }
                }
            }
        }
        frontier = next;
    }
    reached.sort_by(|&a, &b| {
        content[b as usize]
            .total_cmp(&content[a as usize])
            .then(a.cmp(&b))
    });
    reached.truncate(depth);
    reached
}

#[cfg(test)]
mod tests {
    use super::reach;
    use crate::testing::{graph_of, node_named};

    #[test]
    fn reached_code_that_shares_the_questions_words_comes_first_and_the_rest_not_at_all() {
        let g = graph_of(&[(
            "src/api.py",
            "def load(path):\n    return parse(read(path))\n\n\
             def parse(text):\n    return decode(text)\n\n\
             def decode(text):\n    return text\n\n\
             def read(path):\n    return open(path).read()\n\n\
             def far(x):\n    return x\n",
        )]);
        let by_name = |name: &str| node_named(&g, name);
        let (load, parse, decode, read, far) = (
            by_name("load"),
            by_name("parse"),
            by_name("decode"),
            by_name("read"),
            by_name("far"),
        );
        let mut content = vec![0.0f32; g.nodes.len()];
        // The question's words: in `decode` (two calls away) most, in `read` a little, in `far`
        // (never called from `load`) too; `parse` shares none.
        content[decode as usize] = 3.0;
        content[read as usize] = 1.0;
        content[far as usize] = 5.0;
        content[load as usize] = 9.0;
        assert_eq!(reach(&g, &[load], &content, 15), vec![decode, read]);
        assert!(!reach(&g, &[load], &content, 15).contains(&parse));
        assert_eq!(reach(&g, &[load], &content, 1), vec![decode]);
        assert!(reach(&g, &[], &content, 15).is_empty());
    }
}
