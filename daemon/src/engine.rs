//! The engine in process: open a repository, answer questions, expand ids.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::index::{Index, Sources};
use crate::rank::{rank, select::select};
use crate::render::block::{Mode, line_starts, node_id, render};
use crate::render::{Answer, Provenance, RenderInput, answer};
use crate::repo::{self, RepoGraph};
use crate::tokens::Encoding;
use crate::walk::{WalkError, WalkOptions};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Walk(#[from] WalkError),
    #[error("unknown id {0:?}: expected `path#Qualified.name` from an answer, or `path:start-end`")]
    UnknownId(String),
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
}

pub struct Engine {
    pub repo: RepoGraph,
    pub sources: Sources,
    pub index: Index,
    pub timings: IndexTimings,
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
        };
        Ok(Engine {
            repo,
            sources,
            index,
            timings,
        })
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
        let ranked = rank(g, &self.index, &q.question, None);
        let provenance = Provenance {
            repo: self.repo_name(),
            freshness: "index current".into(),
            semantic_coverage: 0.0,
            semantic_note: Some("semantic ranking off: no embedding model in this build".into()),
        };
        // Reserve room for everything around the code; re-select tighter if the text overshoots.
        let mut code_budget = if q.budget == 0 {
            0
        } else {
            let b = q.budget;
            b.saturating_sub(70 + (b * 12 / 100).min(300) + (b * 8 / 100).min(250) + (b * 6 / 100).min(150))
                .max(b / 2)
        };
        let mut last = None;
        for _ in 0..4 {
            let selection = select(g, &self.sources, &ranked, code_budget, q.encoding);
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
            if q.budget == 0 || a.tokens <= q.budget {
                let mut a = a;
                a.ranking = crate::render::explain(g, &ranked, q.explain);
                return a;
            }
            code_budget = code_budget.saturating_sub(a.tokens - q.budget + 20);
            last = Some(a);
        }
        last.expect("the loop runs at least once")
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
            let (path, range) = id.rsplit_once(':').ok_or_else(|| EngineError::UnknownId(id.clone()))?;
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            let (Ok(a), Ok(b), Some(file)) = (a.parse::<u32>(), b.parse::<u32>(), g.file_index(path)) else {
                return Err(EngineError::UnknownId(id.clone()));
            };
            let src = &self.sources[file as usize];
            let starts = line_starts(src);
            let lang = g.files[file as usize].lang;
            out.push_str(&format!("### {path}:{a}-{b}\n```{}\n", crate::render::block::fence_lang(lang)));
            for (i, line) in crate::render::block::lines_of(src, &starts, a.max(1), b.max(a)).iter().enumerate() {
                out.push_str(&format!("{}\t{}\n", a.max(1) + i as u32, line));
            }
            out.push_str("```\n");
        }
        Ok(out)
    }
}

