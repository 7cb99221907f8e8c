//! An answer's budget: the code gets what the text around it (provenance, map, referenced
//! signatures, pointers) leaves. That text depends on what is selected, so packing runs a few
//! rounds — select, lay out, count — shrinking the code's share when the answer overshoots and
//! growing it when reserves went unused, and keeps the fullest answer that fits.
//!
//! Invariant: this module is the one place a budget is enforced. Each round's layout is fitted
//! by [`fit_frame`] (fewer map files, signatures, pointers or blocks until the text fits, the
//! text cut as a last resort); rendering shows what it is given and never trims.

use super::{Packer, Selection};
use crate::rank::Ranked;
use crate::render::{Answer, Frame};
use crate::tokens::Encoding;

/// Provenance line and reading note, in tokens.
const FRAME_TOKENS: usize = 70;
/// First guesses for the map, referenced signatures and pointers: shares of the budget, each
/// capped (they stop growing with the budget: 8 files, 8 signatures, 8 pointers at most).
const MAP_SHARE: (usize, usize) = (12, 300);
const REFERENCED_SHARE: (usize, usize) = (8, 250);
const POINTERS_SHARE: (usize, usize) = (6, 150);
/// Rounds of select → lay out → count. Answers mostly settle within three; five bounds the
/// cost of an unlucky question.
const ROUNDS: usize = 5;
/// Unused tokens below this are not worth another round.
const ENOUGH_SLACK: usize = 60;
/// Growing the code's share by all the slack overshoots as often as not (new blocks bring map
/// lines and signatures): keep this much back.
const GROW_MARGIN: usize = 30;
/// Shrinking by exactly the overshoot lands on the edge; take this much more.
const SHRINK_MARGIN: usize = 20;

/// The code's share of `budget` before the first round: the budget less the first guesses
/// for the text around the code, but never below half of it (0 = no cap).
pub fn first_code_budget(budget: usize) -> usize {
    if budget == 0 {
        return 0;
    }
    let share = |(percent, cap): (usize, usize)| (budget * percent / 100).min(cap);
    budget
        .saturating_sub(
            FRAME_TOKENS + share(MAP_SHARE) + share(REFERENCED_SHARE) + share(POINTERS_SHARE),
        )
        .max(budget / 2)
}

/// Packs `ranked` into an answer of at most `budget` tokens (0 = no cap: as much code as the
/// nodes above the relevance cliff take shown whole, packed in one round): `lay_out` turns a
/// selection into an answer, `tokens` counts it. The fullest answer within the budget wins;
/// if none fits (a budget too small for anything but the frame), the last try.
pub fn fit_answer<A>(
    packer: &Packer<'_>,
    ranked: &[Ranked],
    budget: usize,
    mut lay_out: impl FnMut(Selection) -> A,
    tokens: impl Fn(&A) -> usize,
) -> A {
    // No cap: the relevance cliff decides how much code the answer holds, and that much is
    // then packed as a budget's code would be (by expected relevance per token, long nodes as
    // excerpts): blocks taken whole in rank order until the cliff spend the same tokens on
    // fewer relevant lines. The code's tokens, not the whole text's, set the
    // length: the blocks then follow from the ranking alone, whatever the provenance line says.
    if budget == 0 {
        let natural = packer.select(ranked, 0);
        let code: usize = natural.blocks.iter().map(|b| b.tokens).sum();
        let packed = packer.select(ranked, code);
        return lay_out(if packed.blocks.is_empty() {
            natural
        } else {
            packed
        });
    }
    let mut code_budget = first_code_budget(budget);
    let mut best: Option<(A, usize)> = None;
    let mut over: Option<A> = None;
    for _ in 0..ROUNDS {
        let a = lay_out(packer.select(ranked, code_budget));
        let n = tokens(&a);
        if n <= budget {
            let slack = budget - n;
            let fuller = best.as_ref().is_none_or(|(_, b)| n > *b);
            if fuller {
                best = Some((a, n));
            }
            if slack < ENOUGH_SLACK {
                break;
            }
            code_budget += slack - GROW_MARGIN;
        } else {
            code_budget = code_budget.saturating_sub(n - budget + SHRINK_MARGIN);
            over = Some(a);
        }
    }
    match (best, over) {
        (Some((a, _)), _) => a,
        (None, Some(a)) => a,
        // ROUNDS > 0: a round always leaves one or the other.
        (None, None) => lay_out(packer.select(ranked, code_budget)),
    }
}

/// One part of a frame, to be narrowed.
type FramePart = fn(&mut Frame) -> &mut usize;

/// The next smaller frame after `shown` overshot: the least valuable part goes first —
/// referenced signatures and pointers down to three, then map files down to three, then the
/// declarations, the rest of the signatures and pointers, then blocks down to one, then the
/// map. `None` when nothing is left to drop.
fn smaller(shown: &Answer) -> Option<Frame> {
    let mut f = Frame {
        map: shown.map.len(),
        refs: shown.references.len() + shown.declarations.len(),
        declarations: shown.declarations.len(),
        pointers: shown.pointers.len(),
        blocks: shown.nodes.len(),
    };
    // (part, the count it keeps at this step), in the order parts go.
    let steps: [(FramePart, usize); 8] = [
        (|f| &mut f.refs, 3),
        (|f| &mut f.pointers, 3),
        (|f| &mut f.map, 3),
        (|f| &mut f.declarations, 0),
        (|f| &mut f.refs, 0),
        (|f| &mut f.pointers, 0),
        (|f| &mut f.blocks, 1),
        (|f| &mut f.map, 0),
    ];
    for (part, keeps) in steps {
        let n = part(&mut f);
        if *n > keeps {
            *n -= 1;
            return Some(f);
        }
    }
    None
}

/// Renders one selection (`render` shows what a [`Frame`] allows) in the largest frame whose
/// answer fits `budget` (0 = no cap). When even the barest frame does not fit (a budget
/// smaller than the provenance line and one block), the text itself is cut to the budget and
/// the answer lists nothing as shown. This and [`fit_answer`]'s rounds are where the budget is
/// enforced; rendering only reports what it wrote.
pub fn fit_frame(budget: usize, enc: Encoding, mut render: impl FnMut(Frame) -> Answer) -> Answer {
    let mut a = render(Frame::for_budget(budget));
    if budget == 0 {
        return a;
    }
    while a.tokens > budget {
        match smaller(&a) {
            Some(frame) => a = render(frame),
            None => break,
        }
    }
    if a.tokens > budget {
        a.text = crate::tokens::truncate(enc, &a.text, budget);
        a.tokens = crate::tokens::count(enc, &a.text);
        a.nodes.clear();
        a.inside_whole.clear();
        a.references.clear();
        a.declarations.clear();
        a.pointers.clear();
        a.map.clear();
    }
    debug_assert!(
        a.tokens <= budget,
        "{} tokens over a budget of {budget}",
        a.tokens
    );
    a
}

#[cfg(test)]
mod tests {
    use super::{first_code_budget, smaller};
    use crate::render::{Answer, Frame, MapEntry, Pointer, Provenance};

    /// An answer showing `map` files, `pointers` pointers and nothing else: `smaller` reads
    /// only the lengths of what was shown.
    fn shown(map: usize, pointers: usize) -> Answer {
        Answer {
            text: String::new(),
            tokens: 0,
            budget: 0,
            provenance: Provenance {
                repo: String::new(),
                freshness: String::new(),
                semantic_coverage: 0.0,
                semantic_note: None,
                already_shown: Vec::new(),
                files: 0,
            },
            map: (0..map)
                .map(|_| MapEntry {
                    path: String::new(),
                    names: Vec::new(),
                })
                .collect(),
            nodes: Vec::new(),
            inside_whole: Vec::new(),
            references: Vec::new(),
            declarations: Vec::new(),
            pointers: (0..pointers)
                .map(|_| Pointer {
                    id: String::new(),
                    tokens: 0,
                })
                .collect(),
            whole_files_tokens: None,
            confidence: 0.0,
            names_repo: false,
            matched: true,
            ranking: Vec::new(),
        }
    }

    #[test]
    fn a_frame_narrows_pointers_to_three_then_the_map_then_the_rest() {
        let frame = |map, pointers| Frame {
            map,
            refs: 0,
            declarations: 0,
            pointers,
            blocks: 0,
        };
        assert_eq!(smaller(&shown(5, 5)), Some(frame(5, 4)));
        assert_eq!(smaller(&shown(5, 3)), Some(frame(4, 3)));
        assert_eq!(smaller(&shown(3, 3)), Some(frame(3, 2)));
        assert_eq!(smaller(&shown(3, 0)), Some(frame(2, 0)));
        assert_eq!(smaller(&shown(0, 0)), None);
    }

    #[test]
    fn the_code_gets_most_of_a_budget_and_at_least_half() {
        assert_eq!(first_code_budget(0), 0);
        // 4000: 70 + 300 + 250 + 150 reserved.
        assert_eq!(first_code_budget(4000), 3230);
        // 200: the shares would leave less than half.
        assert_eq!(first_code_budget(200), 100);
    }
}
