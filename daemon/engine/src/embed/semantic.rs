//! The semantic signal: a vector per node (from the cache or the model), cosine per question.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::{DIM, Embedder, MODEL_ID, dot};
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
/// them out saves a large share of the embedding work on big repositories.
pub fn embeddable(g: &Graph, node: u32) -> bool {
    let def = g.def(node);
    !def.is_test
        && !matches!(
            def.kind,
            crate::model::DefKind::Section | crate::model::DefKind::Region
        )
}

/// Vectors for the nodes of one graph, possibly incomplete. Filled through `&self` (each slot
/// is set once), so a snapshot shared with readers can gain vectors from a background thread
/// while queries rank with whatever is there.
pub struct SemanticIndex {
    vectors: Vec<OnceLock<Box<[f32]>>>,
    keys: Vec<u128>,
    eligible: Vec<bool>,
    total: usize,
    filled: AtomicUsize,
}

impl SemanticIndex {
    /// Looks every node's vector up in `previous` (the index of an earlier snapshot: vectors
    /// of unchanged nodes carry over even without a store), then in the store (if any).
    pub fn from_store(
        g: &Graph,
        sources: &Sources,
        store: Option<&Store>,
        previous: Option<&SemanticIndex>,
    ) -> SemanticIndex {
        let eligible: Vec<bool> = (0..g.nodes.len() as u32)
            .map(|n| embeddable(g, n))
            .collect();
        let keys: Vec<u128> = (0..g.nodes.len() as u32)
            .map(|n| {
                if eligible[n as usize] {
                    vector_key(MODEL_ID, &embed_text(g, sources, n))
                } else {
                    0
                }
            })
            .collect();
        let carried: std::collections::HashMap<u128, &[f32]> = previous
            .map(|p| {
                p.keys
                    .iter()
                    .zip(&p.vectors)
                    .filter_map(|(k, v)| Some((*k, v.get()?.as_ref())))
                    .collect()
            })
            .unwrap_or_default();
        let mut found: Vec<Option<Vec<f32>>> = keys
            .iter()
            .map(|k| carried.get(k).map(|v| v.to_vec()))
            .collect();
        let wanted: Vec<u128> = keys
            .iter()
            .zip(&found)
            .zip(&eligible)
            .map(|((k, f), &e)| if e && f.is_none() { *k } else { 0 })
            .collect();
        if let Some(store) = store.filter(|_| wanted.iter().any(|&k| k != 0)) {
            match store.get_vectors(&wanted, DIM) {
                Ok(v) => {
                    for (slot, v) in found.iter_mut().zip(v) {
                        if slot.is_none() {
                            *slot = v;
                        }
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
                    let _ = slot.set(v.into_boxed_slice());
                    filled += 1;
                }
                slot
            })
            .collect();
        SemanticIndex {
            vectors,
            keys,
            total: eligible.iter().filter(|&&e| e).count(),
            eligible,
            filled: AtomicUsize::new(filled),
        }
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
    ) -> Result<usize, super::EmbedError> {
        let missing: Vec<u32> = (0..self.vectors.len() as u32)
            .filter(|&n| self.eligible[n as usize] && self.vectors[n as usize].get().is_none())
            .collect();
        let mut done = 0;
        for chunk in missing.chunks(64) {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            let texts: Vec<String> = chunk.iter().map(|&n| embed_text(g, sources, n)).collect();
            let vectors = embedder.embed(&texts)?;
            let mut items = Vec::with_capacity(chunk.len());
            for (&n, v) in chunk.iter().zip(vectors) {
                items.push((self.keys[n as usize], v.clone()));
                if self.vectors[n as usize].set(v.into_boxed_slice()).is_ok() {
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

    /// Cosine similarity of every node to the question (NaN where no vector yet).
    pub fn similarities(&self, query: &[f32]) -> Vec<f32> {
        self.vectors
            .iter()
            .map(|v| v.get().map_or(f32::NAN, |v| dot(v, query)))
            .collect()
    }

    /// Bytes the vectors hold.
    pub fn memory_bytes(&self) -> usize {
        self.filled.load(Ordering::Relaxed) * DIM * 4 + self.vectors.len() * 40
    }
}
