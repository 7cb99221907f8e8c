//! One repository's semantic side, apart from its graph and lexical indexes: the model when
//! one is attached, the vectors it has so far, and what answers say while vectors are missing
//! or the model is absent. [`crate::Engine`] owns one and hands it the graph whenever vectors
//! are made or looked up.

use std::sync::Arc;
use std::time::Instant;

use super::Embedder;
use super::semantic::SemanticIndex;

/// The model and the vectors made with it.
pub(crate) struct Attached {
    pub(crate) index: SemanticIndex,
    pub(crate) embedder: Arc<Embedder>,
}

pub struct SemanticState {
    pub(crate) attached: Option<Attached>,
    /// Why semantic ranking is off, in one line (partial coverage is reported from the index).
    off_because: Option<String>,
    /// What to tell the user about nodes not embedded yet.
    pending_hint: &'static str,
    /// The model is left for the next snapshot to attach ([`SemanticState::defer`]).
    deferred: bool,
}

impl Default for SemanticState {
    fn default() -> SemanticState {
        SemanticState {
            attached: None,
            off_because: Some("semantic ranking off".into()),
            pending_hint: "`fittok index` completes them",
            deferred: false,
        }
    }
}

impl SemanticState {
    /// The same notes, with `attached` in place of this state's model and vectors: what an
    /// update carries to the next snapshot.
    pub(crate) fn carried(&self, attached: Option<Attached>) -> SemanticState {
        SemanticState {
            attached,
            off_because: self.off_because.clone(),
            pending_hint: self.pending_hint,
            deferred: false,
        }
    }

    pub(crate) fn attach(&mut self, attached: Attached) {
        self.attached = Some(attached);
        self.off_because = None;
        self.deferred = false;
    }

    /// Whether a model is attached.
    pub fn has_model(&self) -> bool {
        self.attached.is_some()
    }

    /// Drops the model and vectors, if any; answers say why in one line.
    pub fn turn_off(&mut self, why: String) {
        self.attached = None;
        self.off_because = Some(why);
    }

    /// Ranks without semantics and says why in every answer.
    pub fn unavailable(&mut self, why: &str) {
        self.turn_off(format!("{why}; ranking without semantics"));
    }

    /// Ranks without semantics until the next snapshot, which attaches the model: a
    /// snapshot followed at once by another (a first build that leaves its tests for the
    /// update right after) and with no vectors stored has no use for it yet.
    pub fn defer(&mut self, why: &str) {
        self.turn_off(why.to_string());
        self.deferred = true;
    }

    /// Whether the model was left for the next snapshot ([`SemanticState::defer`]).
    pub fn is_deferred(&self) -> bool {
        self.deferred
    }

    /// What answers say about nodes not embedded yet ("embedding in the background").
    pub fn set_pending_hint(&mut self, hint: &'static str) {
        self.pending_hint = hint;
    }

    /// Why semantic ranking is off or partial, if it is.
    pub fn note(&self) -> Option<String> {
        match &self.attached {
            None => self.off_because.clone(),
            Some(s) if s.index.missing() > 0 => Some(format!(
                "{} nodes not embedded yet; {}",
                s.index.missing(),
                self.pending_hint
            )),
            Some(_) => None,
        }
    }

    /// (nodes with a vector, nodes that get one): (0, 0) without a model.
    pub fn counts(&self) -> (usize, usize) {
        self.attached.as_ref().map_or((0, 0), |s| {
            (s.index.total() - s.index.missing(), s.index.total())
        })
    }

    /// Nodes still waiting for a vector (0 without a model).
    pub fn missing(&self) -> usize {
        self.attached.as_ref().map_or(0, |s| s.index.missing())
    }

    /// The share of nodes with a vector.
    pub fn coverage(&self) -> f32 {
        self.attached.as_ref().map_or(0.0, |s| s.index.coverage())
    }

    /// The share of the embedding priority set (the nodes embedded first) with a vector.
    pub fn priority_coverage(&self) -> f32 {
        self.attached
            .as_ref()
            .map_or(0.0, |s| s.index.priority_coverage())
    }

    /// Bytes the vectors hold.
    pub fn memory_bytes(&self) -> usize {
        self.attached.as_ref().map_or(0, |s| s.index.memory_bytes())
    }

    /// Each node's similarity to `question`, when a model is attached and can embed it.
    pub(crate) fn similarities(&self, question: &str) -> Option<Vec<f32>> {
        let s = self.attached.as_ref()?;
        let t = Instant::now();
        let embedded = s.embedder.embed_question(question);
        tracing::debug!(us = t.elapsed().as_micros() as u64, "question embedded");
        match embedded {
            Ok(q) => Some(s.index.similarities(&q)),
            Err(e) => {
                tracing::warn!(error = %e, "question embedding failed");
                None
            }
        }
    }
}
