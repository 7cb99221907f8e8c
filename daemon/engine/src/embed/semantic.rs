//! The semantic signal: a vector per node (from the cache or the model), cosine per question.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::quantized::QuantizedVector;
use super::{Embedder, MODEL_ID};
use crate::index::{Sources, node_text};
use crate::link::Graph;
use crate::store::{Store, vector_key};

/// What is embedded for a node: where it is, what it is called, its signature and doc, and
/// its text (the tokenizer keeps the first 256 tokens).
pub fn embed_text(g: &Graph, sources: &Sources, node: u32) -> String {
    let def = g.def(node);
    let file = g.file_of(node);
    let mut s = format!("{} {} {}\n", file.path, def.kind.name(), def.qualified_name);
    if let Some(doc) = &def.doc {
        s.push_str(doc);
        s.push('\n');
    }
    let text = node_text(g, sources, node);
    let cut = text.char_indices().nth(1500).map_or(text.len(), |(i, _)| i);
    s.push_str(&text[..cut]);
    s
}

/// Whether a node gets a vector. Test code and documentation sections do not: tests are
/// demoted in ranking anyway and sections are prose the lexical signals read well; leaving
/// them out saves a large share of the embedding work on big repositories. Nor do trivial
/// accessors (`getName`, `set_size`, `isEmpty`, `has_key` of at most three lines): a
/// paraphrase never needs a vector to find a one-line getter, its name says what it is.
pub fn embeddable(g: &Graph, node: u32) -> bool {
    let def = g.def(node);
    !def.is_test
        && !matches!(
            def.kind,
            crate::model::DefKind::Section | crate::model::DefKind::Region
        )
        && !is_trivial_accessor(def)
}

fn is_trivial_accessor(def: &crate::model::Definition) -> bool {
    use crate::model::DefKind;
    if !matches!(def.kind, DefKind::Function | DefKind::Method) || def.end_line > def.start_line + 2
    {
        return false;
    }
    let name = def.name.as_str();
    ["get", "set", "is", "has"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase() || c == '_'))
    })
}

/// Whether `store` holds vectors for this graph's nodes, judged by `sample` embeddable nodes
/// spread over it: a repository embedded before (even an older checkout of it) has most of
/// them; one never embedded has none.
pub fn store_has_vectors(g: &Graph, sources: &Sources, store: &Store, sample: usize) -> bool {
    let eligible: Vec<u32> = (0..g.nodes.len() as u32)
        .filter(|&n| embeddable(g, n))
        .collect();
    let step = (eligible.len() / sample.max(1)).max(1);
    let keys: Vec<u128> = eligible
        .iter()
        .step_by(step)
        .map(|&n| vector_key(MODEL_ID, &embed_text(g, sources, n)))
        .collect();
    store
        .get_vectors(&keys, super::DIM)
        .is_ok_and(|found| found.iter().any(Option::is_some))
}

/// Of the nodes that get a vector, this share — the first in embedding order — is the
/// priority set whose coverage is reported on its own.
pub const PRIORITY_SHARE: f32 = 0.1;

/// Each node's vector key (0 for nodes that get no vector). A node's text is its file's
/// alone, so a node of a file an update kept keeps its key: only the changed files' texts are
/// built and hashed again (kafka: ~105 ms a save for all 50k).
fn text_keys(
    g: &Graph,
    sources: &Sources,
    eligible: &[bool],
    previous: Option<Previous>,
) -> Vec<u128> {
    (0..g.nodes.len())
        .map(|n| {
            let carried =
                previous.and_then(|p| p.index.keys.get((*p.kept.get(n)?)? as usize).copied());
            match carried {
                Some(k) => k,
                None if eligible[n] => vector_key(MODEL_ID, &embed_text(g, sources, n as u32)),
                None => 0,
            }
        })
        .collect()
}

/// The snapshot an update replaces: its vectors, and for each node of the new graph its
/// unchanged counterpart there ([`crate::index::kept_nodes`], shared with the lexical update).
#[derive(Clone, Copy)]
pub struct Previous<'a> {
    pub index: &'a SemanticIndex,
    pub kept: &'a [Option<u32>],
}

/// Vectors for the nodes of one graph, possibly incomplete. Filled through `&self` (each slot
/// is set once), so a snapshot shared with readers can gain vectors from a background thread
/// while queries rank with whatever is there. Held as 8-bit codes ([`QuantizedVector`]): on
/// apache/kafka's 46k embeddable nodes that is 18 MB instead of 71 MB.
pub struct SemanticIndex {
    vectors: Vec<OnceLock<QuantizedVector>>,
    keys: Vec<u128>,
    total: usize,
    filled: AtomicUsize,
    /// Eligible nodes in embedding order: the most likely to be asked about first.
    order: Vec<u32>,
    /// How many of `order`'s first nodes form the priority set.
    priority: usize,
    /// What the embedder takes next: the next [`PLAN_WINDOW`] missing nodes of `order`,
    /// shortest text first, handed out [`BATCH`] at a time. Batches of like length pad little:
    /// 1.3× the throughput of sorting each batch of 64 alone (`benches/embedding.rs`).
    /// Each node with its text, measured for the sort and embedded as it is.
    plan: std::sync::Mutex<std::collections::VecDeque<(u32, String)>>,
}

/// How many nodes of the embedding order are sorted by length together. Larger windows pad
/// less but blur the priority order more; the whole window is embedded before the next.
pub const PLAN_WINDOW: usize = 512;

/// Nodes per call to the embedder (it packs them into forward passes of up to 1,024 tokens).
const BATCH: usize = 64;

impl SemanticIndex {
    /// Looks every node's vector up in `previous` (the index of an earlier snapshot: vectors
    /// of unchanged nodes carry over even without a store), then in the store (if any).
    /// `priority` (one weight per node, higher first) orders what the background embedder
    /// fills.
    pub fn from_store(
        g: &Graph,
        sources: &Sources,
        store: Option<&Store>,
        previous: Option<Previous>,
        priority: &[f32],
    ) -> SemanticIndex {
        let eligible: Vec<bool> = (0..g.nodes.len() as u32)
            .map(|n| embeddable(g, n))
            .collect();
        let keys = text_keys(g, sources, &eligible, previous);
        let carried: std::collections::HashMap<u128, &QuantizedVector> = previous
            .map(|p| {
                p.index
                    .keys
                    .iter()
                    .zip(&p.index.vectors)
                    .filter_map(|(k, v)| Some((*k, v.get()?)))
                    .collect()
            })
            .unwrap_or_default();
        let mut found: Vec<Option<QuantizedVector>> = keys
            .iter()
            .map(|k| carried.get(k).map(|&v| v.clone()))
            .collect();
        // The store is asked only for nodes the previous snapshot did not have as they are
        // now: an unchanged node it had no vector for is not in the store either (the
        // embedder fills a snapshot's slots and the store together). On kafka with little
        // embedded yet, that is a handful of lookups a save instead of ~50,000 (16 ms). A
        // batch the embedder finishes while an update runs reaches the store and the old
        // snapshot only, and is embedded again later: at most one batch a save.
        let wanted: Vec<usize> = (0..keys.len())
            .filter(|&n| eligible[n] && found[n].is_none())
            .filter(|&n| previous.is_none_or(|p| p.kept.get(n).copied().flatten().is_none()))
            .collect();
        if let Some(store) = store.filter(|_| !wanted.is_empty()) {
            let wanted_keys: Vec<u128> = wanted.iter().map(|&n| keys[n]).collect();
            match store.get_vectors(&wanted_keys, super::DIM) {
                Ok(v) => {
                    for (&n, v) in wanted.iter().zip(v) {
                        found[n] = v.map(|v| QuantizedVector::new(&v));
                    }
                }
                Err(e) => tracing::warn!(error = %e, "vector store read failed; embedding afresh"),
            }
        }
        let mut filled = 0;
        let vectors = found
            .into_iter()
            .zip(&eligible)
            .map(|(v, &e)| {
                let slot = OnceLock::new();
                if let (true, Some(v)) = (e, v) {
                    let _ = slot.set(v);
                    filled += 1;
                }
                slot
            })
            .collect();
        let mut order: Vec<u32> = (0..g.nodes.len() as u32)
            .filter(|&n| eligible[n as usize])
            .collect();
        let weight = |n: u32| priority.get(n as usize).copied().unwrap_or(0.0);
        order.sort_by(|&a, &b| weight(b).total_cmp(&weight(a)).then(a.cmp(&b)));
        let total = order.len();
        SemanticIndex {
            vectors,
            keys,
            total,
            filled: AtomicUsize::new(filled),
            priority: ((total as f32 * PRIORITY_SHARE).ceil() as usize).min(total),
            order,
            plan: Default::default(),
        }
    }

    /// The share of the priority set (the first [`PRIORITY_SHARE`] of the embedding order)
    /// that has a vector.
    pub fn priority_coverage(&self) -> f32 {
        if self.priority == 0 {
            return 1.0;
        }
        let done = self.order[..self.priority]
            .iter()
            .filter(|&&n| self.vectors[n as usize].get().is_some())
            .count();
        done as f32 / self.priority as f32
    }

    /// Nodes still without a vector, in the order the embedder takes them.
    pub fn pending(&self) -> Vec<u32> {
        self.order
            .iter()
            .copied()
            .filter(|&n| self.vectors[n as usize].get().is_none())
            .collect()
    }

    /// The share of embeddable nodes that have a vector.
    pub fn coverage(&self) -> f32 {
        if self.total == 0 {
            return 1.0;
        }
        (self.total - self.missing()) as f32 / self.total as f32
    }

    /// Nodes that get a vector.
    pub fn total(&self) -> usize {
        self.total
    }

    pub fn missing(&self) -> usize {
        self.total
            .saturating_sub(self.filled.load(Ordering::Relaxed))
    }

    /// Embeds missing nodes in batches, writing each batch to the store, until done or past
    /// `deadline`. Returns how many nodes were embedded. Concurrent fills of one index are
    /// safe (a slot keeps its first vector) but waste work.
    pub fn fill(
        &self,
        g: &Graph,
        sources: &Sources,
        embedder: &Embedder,
        store: Option<&Store>,
        deadline: Option<Instant>,
        give_way: &dyn Fn() -> bool,
    ) -> Result<usize, super::EmbedError> {
        let mut done = 0;
        loop {
            if deadline.is_some_and(|d| Instant::now() >= d) || give_way() {
                break;
            }
            let (chunk, texts): (Vec<u32>, Vec<String>) =
                self.next_batch(g, sources).into_iter().unzip();
            if chunk.is_empty() {
                break;
            }
            let vectors = embedder.embed(&texts)?;
            let mut items = Vec::with_capacity(chunk.len());
            for (&n, v) in chunk.iter().zip(vectors) {
                // The store keeps f32, so a later build may quantize differently or not at all.
                let quantized = QuantizedVector::new(&v);
                items.push((self.keys[n as usize], v));
                if self.vectors[n as usize].set(quantized).is_ok() {
                    self.filled.fetch_add(1, Ordering::Relaxed);
                }
            }
            if let Some(store) = store
                && let Err(e) = store.put_vectors(&items)
            {
                tracing::warn!(error = %e, "vector store write failed; vectors kept in memory");
            }
            done += chunk.len();
        }
        Ok(done)
    }

    /// The next nodes to embed (empty when none is missing), from [`SemanticIndex::plan`],
    /// which is planned again from the queue when it runs out. Concurrent fills take
    /// different batches; a batch that fails to embed is planned again later.
    fn next_batch(&self, g: &Graph, sources: &Sources) -> Vec<(u32, String)> {
        let mut plan = self.plan.lock().unwrap_or_else(|e| e.into_inner());
        plan.retain(|(n, _)| self.vectors[*n as usize].get().is_none());
        if plan.is_empty() {
            let mut window: Vec<(u32, String)> = self
                .order
                .iter()
                .copied()
                .filter(|&n| self.vectors[n as usize].get().is_none())
                .take(PLAN_WINDOW)
                .map(|n| (n, embed_text(g, sources, n)))
                .collect();
            window.sort_by_key(|(n, text)| (text.len(), *n));
            plan.extend(window);
        }
        let take = plan.len().min(BATCH);
        plan.drain(..take).collect()
    }

    /// Cosine similarity of every node to the question (NaN where no vector yet).
    pub fn similarities(&self, query: &[f32]) -> Vec<f32> {
        self.vectors
            .iter()
            .map(|v| v.get().map_or(f32::NAN, |v| v.dot(query)))
            .collect()
    }

    /// Bytes the vectors hold.
    pub fn memory_bytes(&self) -> usize {
        self.filled.load(Ordering::Relaxed) * super::DIM
            + self.vectors.len() * std::mem::size_of::<OnceLock<QuantizedVector>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After an update, the kept files' keys are carried and equal what hashing every text
    /// again gives; only the edited file's texts are new.
    #[test]
    fn an_update_carries_the_keys_of_the_files_it_kept() {
        let dir = std::env::temp_dir().join(format!("fittok-keys-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..4 {
            std::fs::write(
                dir.join(format!("m{i}.py")),
                format!(
                    "def f{i}(x):\n    return x + {i}\n\n\ndef g{i}(y):\n    return f{i}(y) * 2\n"
                ),
            )
            .unwrap();
        }
        let before = crate::Engine::open_in(&dir, Default::default(), None, None).unwrap();
        let priority = vec![0.0; before.repo.graph.nodes.len()];
        let ix =
            SemanticIndex::from_store(&before.repo.graph, &before.sources, None, None, &priority);
        std::fs::write(
            dir.join("m0.py"),
            "def f0(x):\n    return x - 1\n\n\ndef h0():\n    return 3\n\n\ndef g0(y):\n    return f0(y)\n",
        )
        .unwrap();
        let after = before
            .update(["m0.py".to_string()].into_iter().collect(), None)
            .unwrap();
        let g = &after.repo.graph;
        let kept = g
            .files
            .iter()
            .filter(|f| {
                before
                    .repo
                    .graph
                    .files
                    .iter()
                    .any(|b| std::sync::Arc::ptr_eq(b, f))
            })
            .count();
        assert_eq!(kept, 3, "the three files not edited keep their parse");
        let eligible: Vec<bool> = (0..g.nodes.len() as u32)
            .map(|n| embeddable(g, n))
            .collect();
        let kept = crate::index::kept_nodes(&before.repo.graph, &before.sources, g, &after.sources);
        let previous = Previous {
            index: &ix,
            kept: &kept,
        };
        let carried = text_keys(g, &after.sources, &eligible, Some(previous));
        let fresh = text_keys(g, &after.sources, &eligible, None);
        assert_eq!(carried, fresh);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn one_line_accessors_get_no_vector_and_the_rest_do() {
        let g = crate::testing::graph_of(&[(
            "src/Shape.java",
            "class Shape {\n  int getSize() { return size; }\n  void set_name(String n) { name = n; }\n\
             boolean isEmpty() { return size == 0; }\n  int getaway() { return 1; }\n\
             int getArea() {\n    int w = width;\n    int h = height;\n    return w * h;\n  }\n}\n",
        )]);
        let by_name = |name: &str| crate::testing::node_named(&g, name);
        for trivial in ["getSize", "set_name", "isEmpty"] {
            assert!(!embeddable(&g, by_name(trivial)), "{trivial}");
        }
        // `getaway` is not an accessor's name; `getArea` is five lines of work.
        for kept in ["getaway", "getArea", "Shape"] {
            assert!(embeddable(&g, by_name(kept)), "{kept}");
        }
    }

    #[test]
    fn batches_come_from_windows_of_the_queue_shortest_text_first() {
        // 700 functions of growing length; priority favours the later ones, so the queue runs
        // from the longest text to the shortest.
        let src: String = (0..700)
            .map(|i| format!("def f{i}(x):\n    return x{}\n\n", " + x".repeat(i % 40)))
            .collect();
        let g = crate::testing::graph_of(&[("m.py", &src)]);
        let sources: Sources = vec![std::sync::Arc::from(src.as_bytes())];
        let priority: Vec<f32> = (0..g.nodes.len()).map(|n| n as f32).collect();
        let ix = SemanticIndex::from_store(&g, &sources, None, None, &priority);
        let order = ix.pending();
        let len = |n: u32| embed_text(&g, &sources, n).len();
        let mut taken = Vec::new();
        loop {
            let batch = ix.next_batch(&g, &sources);
            if batch.is_empty() {
                break;
            }
            assert!(batch.len() <= BATCH);
            for (n, text) in batch {
                assert_eq!(text, embed_text(&g, &sources, n));
                ix.vectors[n as usize]
                    .set(QuantizedVector::new(&[0.0; crate::embed::DIM]))
                    .unwrap();
                ix.filled.fetch_add(1, Ordering::Relaxed);
                taken.push(n);
            }
        }
        assert_eq!(ix.missing(), 0);
        assert_eq!(taken.len(), order.len());
        // The first window is the queue's first PLAN_WINDOW nodes, in order of length.
        let mut first: Vec<u32> = taken[..PLAN_WINDOW].to_vec();
        assert!(first.windows(2).all(|w| len(w[0]) <= len(w[1])));
        first.sort_unstable();
        let mut expected = order[..PLAN_WINDOW].to_vec();
        expected.sort_unstable();
        assert_eq!(first, expected);
    }

    #[test]
    fn the_embedder_takes_nodes_by_priority_and_reports_the_priority_set() {
        let src: String = (0..20)
            .map(|i| format!("def f{i}(x):\n    y = x + {i}\n    return y * 2\n\n"))
            .collect();
        let g = crate::testing::graph_of(&[("m.py", &src)]);
        let sources: Sources = vec![std::sync::Arc::from(src.as_bytes())];
        // Reversed priorities: the last function first.
        let priority: Vec<f32> = (0..g.nodes.len()).map(|n| n as f32).collect();
        let ix = SemanticIndex::from_store(&g, &sources, None, None, &priority);
        let pending = ix.pending();
        assert_eq!(pending.len(), ix.total());
        assert!(
            pending
                .windows(2)
                .all(|w| priority[w[0] as usize] > priority[w[1] as usize])
        );
        assert_eq!(ix.priority_coverage(), 0.0);
        // The priority set: the first tenth of the order (rounded up).
        let set = (ix.total() as f32 * PRIORITY_SHARE).ceil() as usize;
        for &n in &pending[..set] {
            ix.vectors[n as usize]
                .set(QuantizedVector::new(&[0.0; crate::embed::DIM]))
                .unwrap();
            ix.filled.fetch_add(1, Ordering::Relaxed);
        }
        assert_eq!(ix.priority_coverage(), 1.0);
        assert!(ix.coverage() < 1.0);
        assert_eq!(ix.pending(), pending[set..].to_vec());
    }
}
