use super::*;
use crate::testing::Rng;

#[test]
fn ranks_matching_document_first() {
    let mut b = Bm25Builder::default();
    b.add("def parse_config(path): read the configuration file");
    b.add("def send_request(url): open a socket and send bytes");
    b.add("def unrelated(): pass");
    let ix = b.finish();
    let s = ix.score(&query_terms("how is the config parsed?"));
    assert!(s[0] > s[1] && s[0] > s[2], "{s:?}");
    let s = ix.score(&query_terms("sendRequest"));
    assert!(s[1] > 0.0 && s[0] == 0.0);
}

const WORDS: [&str; 12] = [
    "parse", "config", "socket", "send", "bytes", "retry", "token", "cache", "walk", "graph",
    "segment", "merge",
];

fn random_text(rng: &mut Rng) -> String {
    let n = 1 + rng.below(12);
    (0..n)
        .map(|_| *rng.pick(&WORDS))
        .collect::<Vec<_>>()
        .join(" ")
}

fn fresh(texts: &[String]) -> Bm25 {
    let mut b = Bm25Builder::default();
    for t in texts {
        b.add(t);
    }
    b.finish()
}

fn assert_equal(updated: &Bm25, texts: &[String], rng: &mut Rng, round: usize) {
    let built = fresh(texts);
    assert!(updated.same_as(&built), "round {round}: content differs");
    for _ in 0..4 {
        let q = query_terms(&random_text(rng));
        let (a, b) = (updated.score(&q), built.score(&q));
        // Bit for bit: the same statistics make the same floating-point sums.
        assert_eq!(
            a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            b.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            "round {round}"
        );
    }
    for w in WORDS {
        assert_eq!(updated.idf(w), built.idf(w), "round {round}: idf of {w}");
    }
}

/// Random edit sequences — documents changed, removed, inserted anywhere (ids shift, as node
/// ids do when a file gains or loses definitions) — keep the index equal to a fresh build,
/// through partial and full merges.
#[test]
fn updates_and_merges_equal_a_fresh_build() {
    let mut rng = Rng::new(7);
    let mut texts: Vec<String> = (0..40).map(|_| random_text(&mut rng)).collect();
    let mut ix = fresh(&texts);
    let mut most_parts = 0;
    for round in 0..300 {
        // The new documents: each old one kept, changed or removed; some inserted.
        let mut next: Vec<(Option<u32>, String)> = Vec::new();
        for (d, t) in texts.iter().enumerate() {
            match rng.below(20) {
                0 => {}                                            // removed
                1 | 2 => next.push((None, random_text(&mut rng))), // changed
                _ => next.push((Some(d as u32), t.clone())),
            }
            if rng.below(30) == 0 {
                next.push((None, random_text(&mut rng)));
            }
        }
        let mut remap = vec![None; texts.len()];
        let mut fresh_docs = Vec::new();
        for (id, (old, text)) in next.iter().enumerate() {
            match old {
                Some(o) => remap[*o as usize] = Some(id as u32),
                None => fresh_docs.push((id as u32, text.clone())),
            }
        }
        let old_texts = texts.clone();
        ix = Bm25::update(&ix, &remap, next.len(), &fresh_docs, |d| {
            old_texts[d as usize].clone()
        });
        texts = next.into_iter().map(|(_, t)| t).collect();
        most_parts = most_parts.max(ix.segments());
        assert!(
            ix.segments() <= MAX_PARTS,
            "round {round}: {}",
            ix.segments()
        );
        assert_equal(&ix, &texts, &mut rng, round);
        if round % 37 == 36 {
            ix = ix.merged(true);
            assert_eq!(ix.segments(), 1);
            assert_equal(&ix, &texts, &mut rng, round);
        }
    }
    assert_eq!(most_parts, MAX_PARTS, "the partial merge never ran");
}

/// A full merge becomes due once enough documents changed, and leaves one segment whose
/// documents are exactly the live ones.
#[test]
fn a_full_merge_is_due_after_enough_changes() {
    let mut rng = Rng::new(3);
    let n = 4 * MERGE_MIN_DOCS;
    let texts: Vec<String> = (0..n).map(|_| random_text(&mut rng)).collect();
    let mut ix = fresh(&texts);
    assert!(!ix.merge_due());
    // Change the last 3/4 MERGE_MIN_DOCS documents in one update: with their dead versions,
    // more than MERGE_MIN_DOCS and an eighth of the documents, less than half.
    let keep = n - 3 * MERGE_MIN_DOCS / 4;
    let remap: Vec<Option<u32>> = (0..n as u32)
        .map(|d| (d < keep as u32).then_some(d))
        .collect();
    let fresh_docs: Vec<(u32, String)> = (keep..n).map(|d| (d as u32, texts[d].clone())).collect();
    ix = Bm25::update(&ix, &remap, n, &fresh_docs, |d| texts[d as usize].clone());
    assert!(ix.merge_due());
    assert_eq!(
        ix.segments(),
        2,
        "merged at once below the backstop's fraction"
    );
    let merged = ix.merged(true);
    assert!(!merged.merge_due());
    assert_eq!(merged.segments(), 1);
    assert!(merged.same_as(&fresh(&texts)));
}

/// An update that changes most documents merges at once, so an index whose owner never merges
/// stays bounded.
#[test]
fn an_update_changing_most_documents_merges_at_once() {
    let mut rng = Rng::new(11);
    let n = 2 * MERGE_MIN_DOCS + 10;
    let texts: Vec<String> = (0..n).map(|_| random_text(&mut rng)).collect();
    let ix = fresh(&texts);
    let remap = vec![None; n];
    let fresh_docs: Vec<(u32, String)> = (0..n).map(|d| (d as u32, texts[d].clone())).collect();
    let ix = Bm25::update(&ix, &remap, n, &fresh_docs, |d| texts[d as usize].clone());
    assert_eq!(ix.segments(), 1);
    assert!(ix.same_as(&fresh(&texts)));
}
