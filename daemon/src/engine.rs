//! The engine in process: open a repository, answer questions, expand ids.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::embed::semantic::SemanticIndex;
use crate::embed::{Embedder, model_dir};
use crate::index::{Index, Sources};
use crate::rank::{rank, select::select};
use crate::render::block::{Mode, line_starts, node_id, render};
use crate::render::{Answer, Provenance, RenderInput, answer};
use crate::repo::{self, RepoGraph};
use crate::store::VectorStore;
use crate::tokens::Encoding;
use crate::walk::{WalkError, WalkOptions};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Walk(#[from] WalkError),
    #[error("unknown id {0:?}: expected `path#Qualified.name` from an answer, or `path:start-end`")]
    UnknownId(String),
}

/// Whether a question is long enough that the semantic signal is not used for it (see
/// [`crate::rank::rank`]); callers may skip loading the model for it.
pub fn is_long_question(question: &str) -> bool {
    crate::rank::is_long_question(&crate::index::bm25::query_terms(question))
}

/// One question. `budget` 0 means no cap: the relevance cliff alone decides.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub question: String,
    pub budget: usize,
    pub encoding: Encoding,
    pub show_savings: bool,
    /// Include the top-n ranking with per-signal ranks in the answer (0 = none).
    pub explain: usize,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct IndexTimings {
    pub walk: Duration,
    pub parse: Duration,
    pub link: Duration,
    pub lexical: Duration,
    /// Loading the model and looking vectors up in the cache.
    pub semantic_load: Duration,
    /// Embedding nodes the cache did not have.
    pub embed: Duration,
    pub embedded: usize,
}

/// How much embedding work `enable_semantic` may do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SemanticMode {
    Off,
    /// Use cached vectors; embed what is missing for at most this long.
    Cached(Duration),
    /// Embed every node that has no vector.
    Full,
}

struct Semantic {
    index: SemanticIndex,
    embedder: Embedder,
}

pub struct Engine {
    pub repo: RepoGraph,
    pub sources: Sources,
    pub index: Index,
    pub timings: IndexTimings,
    semantic: Option<Semantic>,
    /// Why semantic ranking is off or partial, in one line.
    semantic_note: Option<String>,
    /// The repository's issue-template lines, dropped from questions.
    boilerplate: crate::question::Boilerplate,
}

impl Engine {
    pub fn open(path: &Path) -> Result<Engine, EngineError> {
        Self::open_with(path, &WalkOptions::default())
    }

    pub fn open_with(path: &Path, opts: &WalkOptions) -> Result<Engine, EngineError> {
        let root = path.canonicalize().unwrap_or_else(|_| PathBuf::from(path));
        let (repo, sources) = repo::build_with_sources(&root, opts)?;
        let t = Instant::now();
        let index = Index::build(&repo.graph, &sources);
        let timings = IndexTimings {
            walk: repo.timings.walk,
            parse: repo.timings.parse,
            link: repo.timings.link,
            lexical: t.elapsed(),
            ..IndexTimings::default()
        };
        Ok(Engine {
            repo,
            sources,
            index,
            timings,
            semantic: None,
            semantic_note: Some("semantic ranking off".into()),
            boilerplate: crate::question::Boilerplate::load(&root),
        })
    }

    /// Loads the embedding model and the cached vectors, then embeds what is missing as far
    /// as `mode` allows. Never fails: without a model, ranking goes on without semantics and
    /// the answer says why.
    pub fn enable_semantic(&mut self, mode: SemanticMode) {
        if mode == SemanticMode::Off {
            self.semantic = None;
            self.semantic_note = Some("semantic ranking off".into());
            return;
        }
        let t = Instant::now();
        let embedder = match model_dir().and_then(|dir| Embedder::load(&dir)) {
            Ok(e) => e,
            Err(e) => {
                tracing::info!(error = %e, "semantic ranking unavailable");
                self.semantic_note = Some(format!("{e}; ranking without semantics"));
                return;
            }
        };
        let store_path = crate::cache_dir().join("vectors.redb");
        let store = match VectorStore::open(&store_path) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(error = %e, "vector cache unavailable; vectors live in memory only");
                None
            }
        };
        let g = &self.repo.graph;
        let mut index = SemanticIndex::from_store(g, &self.sources, store.as_ref());
        self.timings.semantic_load = t.elapsed();
        let t = Instant::now();
        let deadline = match mode {
            SemanticMode::Cached(d) => Some(Instant::now() + d),
            _ => None,
        };
        match index.fill(g, &self.sources, &embedder, store.as_ref(), deadline) {
            Ok(n) => self.timings.embedded = n,
            Err(e) => tracing::warn!(error = %e, "embedding failed; partial semantic coverage"),
        }
        self.timings.embed = t.elapsed();
        let coverage = index.coverage();
        self.semantic_note = (coverage < 1.0).then(|| {
            format!(
                "{} nodes not embedded yet; `fittokd index` completes them",
                index.missing()
            )
        });
        self.semantic = Some(Semantic { index, embedder });
    }

    /// Whether the semantic signal would be used for this question (short once the
    /// repository's issue-template lines are dropped): callers skip loading the model if not.
    pub fn uses_semantic(&self, question: &str) -> bool {
        !is_long_question(&self.boilerplate.strip(question))
    }

    pub fn semantic_coverage(&self) -> f32 {
        self.semantic.as_ref().map_or(0.0, |s| s.index.coverage())
    }

    fn similarities(&self, question: &str) -> Option<Vec<f32>> {
        let s = self.semantic.as_ref()?;
        match s.embedder.embed(&[question.to_string()]) {
            Ok(mut v) => v.pop().map(|q| s.index.similarities(&q)),
            Err(e) => {
                tracing::warn!(error = %e, "question embedding failed");
                None
            }
        }
    }

    fn repo_name(&self) -> String {
        self.repo
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.repo.root.display().to_string())
    }

    pub fn query(&self, q: &Query) -> Answer {
        let g = &self.repo.graph;
        let question = self.boilerplate.strip(&q.question);
        let query_terms = crate::index::bm25::query_terms(&question);
        let long = crate::rank::is_long_question(&query_terms);
        let sims = if long {
            None
        } else {
            self.similarities(&question)
        };
        let ranked = rank(g, &self.index, &question, &query_terms, sims.as_deref());
        // Query terms weighted by rarity: they pick the excerpt of a function too long to show.
        let terms: std::collections::HashMap<String, f32> = query_terms
            .iter()
            .filter_map(|(t, w)| self.index.content.idf(t).map(|idf| (t.clone(), w * idf)))
            .collect();
        let provenance = Provenance {
            repo: self.repo_name(),
            freshness: "index current".into(),
            semantic_coverage: self.semantic_coverage(),
            semantic_note: if long {
                Some("semantic signal not used for long questions: their words decide".into())
            } else {
                self.semantic_note.clone()
            },
        };
        // Reserve room for everything around the code; re-select tighter if the text overshoots.
        let mut code_budget = if q.budget == 0 {
            0
        } else {
            let b = q.budget;
            b.saturating_sub(
                70 + (b * 12 / 100).min(300) + (b * 8 / 100).min(250) + (b * 6 / 100).min(150),
            )
            .max(b / 2)
        };
        // Select, render, measure: shrink the code's share when the text overshoots, grow it
        // when reserves went unused; keep the fullest answer that fits.
        let mut best: Option<Answer> = None;
        let mut over: Option<Answer> = None;
        for _ in 0..5 {
            let selection = select(g, &self.sources, &ranked, code_budget, q.encoding, &terms);
            let a = answer(RenderInput {
                g,
                sources: &self.sources,
                ranked: &ranked,
                selection,
                provenance: provenance.clone(),
                budget: q.budget,
                enc: q.encoding,
                show_savings: q.show_savings,
            });
            if q.budget == 0 {
                best = Some(a);
                break;
            }
            if a.tokens <= q.budget {
                let slack = q.budget - a.tokens;
                if best.as_ref().is_none_or(|b| a.tokens > b.tokens) {
                    best = Some(a);
                }
                if slack < 60 {
                    break;
                }
                code_budget += slack - 30;
            } else {
                code_budget = code_budget.saturating_sub(a.tokens - q.budget + 20);
                over = Some(a);
            }
        }
        let mut a = best.or(over).expect("the loop runs at least once");
        a.ranking = crate::render::explain(g, &ranked, q.explain);
        a
    }

    /// The whole source of nodes named by id (`path#Qualified.name[@line]`) or by range
    /// (`path:start-end`).
    pub fn expand(&self, ids: &[String]) -> Result<String, EngineError> {
        let g = &self.repo.graph;
        let mut out = String::new();
        for id in ids {
            if let Some(node) = (0..g.nodes.len() as u32).find(|&n| node_id(g, n) == *id) {
                let file = g.nodes[node as usize].file;
                let starts = line_starts(&self.sources[file as usize]);
                out.push_str(&render(g, &self.sources, node, Mode::Whole, &starts));
                continue;
            }
            let (path, range) = id
                .rsplit_once(':')
                .ok_or_else(|| EngineError::UnknownId(id.clone()))?;
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            let (Ok(a), Ok(b), Some(file)) =
                (a.parse::<u32>(), b.parse::<u32>(), g.file_index(path))
            else {
                return Err(EngineError::UnknownId(id.clone()));
            };
            let src = &self.sources[file as usize];
            let starts = line_starts(src);
            let lang = g.files[file as usize].lang;
            out.push_str(&format!(
                "### {path}:{a}-{b}\n```{}\n",
                crate::render::block::fence_lang(lang)
            ));
            for (i, line) in crate::render::block::lines_of(src, &starts, a.max(1), b.max(a))
                .iter()
                .enumerate()
            {
                out.push_str(&format!("{}\t{}\n", a.max(1) + i as u32, line));
            }
            out.push_str("```\n");
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_question_at_any_budget_answers_within_it() {
        let dir = std::env::temp_dir().join(format!("fittok-engine-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("src/lib.rs"),
            "/// Adds.\npub fn add(a: i32, b: i32) -> i32 { a + b }\npub struct Calc;\nimpl Calc {\n    pub fn total(&self, xs: &[i32]) -> i32 { xs.iter().fold(0, |a, &b| add(a, b)) }\n}\n",
        )
        .unwrap();
        std::fs::write(dir.join("README.md"), "# Calc\n\nAdds numbers.\n").unwrap();
        let engine = Engine::open(&dir).unwrap();
        let questions = [
            "",
            "   ",
            "how does Calc total numbers?",
            "Étrange_nom ÉcoleNormale 東京 `add` --flag src/lib.rs:3",
            &"word ".repeat(2000),
        ];
        for q in questions {
            for budget in [0, 1, 30, 120, 1000] {
                let a = engine.query(&Query {
                    question: q.to_string(),
                    budget,
                    ..Query::default()
                });
                assert!(
                    budget == 0 || a.tokens <= budget,
                    "{q:?} {budget}: {}",
                    a.tokens
                );
                assert_eq!(a.tokens, crate::tokens::count(Encoding::Cl100k, &a.text));
            }
        }
        let a = engine.query(&Query {
            question: "total of numbers in Calc".into(),
            budget: 1000,
            ..Query::default()
        });
        assert!(
            a.nodes.iter().any(|n| n.name == "Calc::total"),
            "{}",
            a.text
        );
        assert!(
            engine
                .expand(&["src/lib.rs#Calc::total".into()])
                .unwrap()
                .contains("fold")
        );
        assert!(engine.expand(&["nope#x".into()]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
