//! Which candidate a budget buys next, when the learned model ranked them: the one with the
//! most expected relevance per token, not merely the likeliest.
//!
//! The model's calibrated probability says how likely a node is to hold the fix; a node's size
//! says what showing it costs. A knapsack over expected relevant nodes per token would take
//! `p / tokens`; that over-rewards one-line constants (a getter at 20 tokens beats a 60-line
//! function at p ten times higher), so the cost is damped: `p / max(tokens, floor)^exponent`.
//! The best-ranked node keeps its place (`keep`): it is what the question is most likely about,
//! whatever its size, and it is the one cut to fit when big.
//!
//! Fusion's scores are reciprocal ranks, not probabilities, and are not reordered: a rank per
//! token says nothing about expected relevance. With vectors the model's probability misses
//! what they found and is not used either (see `rank::join_semantic`).

use crate::link::Graph;
use crate::rank::Ranked;

/// cl100k tokens per line of source, to estimate a block's cost before rendering it (a whole
/// block's real count needs its text; this runs over every considered candidate).
const TOKENS_PER_LINE: f32 = 9.0;

/// How candidates below the first are ordered when the model ranked them (`FITTOK_DENSITY`
/// sets it, for tuning; `off` keeps the model's order).
///
/// A model's probability says how likely a block holds what is asked, not what it costs: after
/// the first, blocks are ordered by probability per token (dampened by `exponent`), so a small
/// likely block is not pushed out by a large one barely more likely. The probabilities alone
/// order worse than the rank-shaped order, which adds fusion's tie-breaks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DensityOrder {
    pub exponent: f32,
    /// Tokens below which a block counts as this big: a small node costs at least a few lines
    /// of the reader's attention and of the answer's layout.
    pub floor_tokens: f32,
    /// How many of the first candidates keep their place.
    pub keep: usize,
}

impl Default for DensityOrder {
    fn default() -> DensityOrder {
        DensityOrder {
            exponent: 0.5,
            floor_tokens: 100.0,
            keep: 1,
        }
    }
}

impl DensityOrder {
    fn key(&self, probability: f32, lines: u32) -> f32 {
        // `lines` ≥ 1, so the cost is never below one line's tokens.
        let tokens = (lines as f32 * TOKENS_PER_LINE).max(self.floor_tokens);
        probability / tokens.powf(self.exponent)
    }
}

/// Reorders `order` (best first) below its first `keep` by expected relevance per token, when
/// every candidate carries the model's probability; otherwise leaves it as it is. Stable: equal
/// keys keep their rank order.
pub(super) fn reorder(g: &Graph, order: &mut [Ranked], d: &DensityOrder) {
    if order.iter().any(|r| r.probability.is_none()) {
        return;
    }
    let keep = d.keep.min(order.len());
    // Keys computed once (a `powf` each), not per comparison.
    let mut keyed: Vec<(f32, Ranked)> = order[keep..]
        .iter()
        .map(|r| {
            let def = g.def(r.node);
            let lines = def.end_line.saturating_sub(def.start_line) + 1;
            (d.key(r.probability.unwrap_or_default(), lines), *r)
        })
        .collect();
    keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (slot, (_, r)) in order[keep..].iter_mut().zip(keyed) {
        *slot = r;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::SignalRanks;
    use crate::testing::{graph_of, node_named};

    #[test]
    fn below_the_first_a_small_likely_node_goes_before_a_big_likelier_one() {
        let long_body: String = (0..120).map(|i| format!("    x{i} = {i}\n")).collect();
        let src = format!(
            "def best():\n    return 1\n\n\ndef huge():\n{long_body}\n\ndef small():\n    return 2\n"
        );
        let g = graph_of(&[("m.py", &src)]);
        let by_name = |name: &str| node_named(&g, name);
        let ranked = |node, score, probability| Ranked {
            node,
            score,
            ranks: SignalRanks::default(),
            probability,
        };
        let (best, huge, small) = (by_name("best"), by_name("huge"), by_name("small"));
        let order = vec![
            ranked(best, 0.3, Some(0.5)),
            ranked(huge, 0.2, Some(0.3)),
            ranked(small, 0.1, Some(0.2)),
        ];
        let d = DensityOrder::default();
        let mut by_density = order.clone();
        reorder(&g, &mut by_density, &d);
        let nodes: Vec<u32> = by_density.iter().map(|r| r.node).collect();
        // 0.3 / sqrt(9 x 121) < 0.2 / sqrt(100): the small one first, the best one kept first.
        assert_eq!(nodes, vec![best, small, huge]);
        // Kept in place: every candidate when `keep` covers them all.
        let mut kept = order.clone();
        reorder(&g, &mut kept, &DensityOrder { keep: 3, ..d });
        assert_eq!(kept, order);
        // Fusion's candidates (no probability) keep rank order.
        let mut fused: Vec<Ranked> = order
            .iter()
            .map(|r| Ranked {
                probability: None,
                ..*r
            })
            .collect();
        let before = fused.clone();
        reorder(&g, &mut fused, &d);
        assert_eq!(fused, before);
    }

    #[test]
    fn a_likelier_node_wins_at_equal_size_and_a_small_one_wins_at_equal_probability() {
        let d = DensityOrder::default();
        assert!(d.key(0.6, 40) > d.key(0.3, 40));
        assert!(d.key(0.3, 20) > d.key(0.3, 200));
    }

    #[test]
    fn the_cost_is_damped_and_floored() {
        let d = DensityOrder::default();
        // Ten times likelier at ten times the size still wins: the cost counts as its root.
        assert!(d.key(0.5, 200) > d.key(0.05, 20));
        // Below the floor, size no longer matters.
        assert_eq!(d.key(0.2, 1), d.key(0.2, 5));
        // Exponent 0 is the probability order itself.
        let flat = DensityOrder { exponent: 0.0, ..d };
        assert_eq!(flat.key(0.2, 1), flat.key(0.2, 900));
    }
}
