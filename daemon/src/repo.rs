//! A whole repository through walk → parse → link, with timings and a report.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::link::{Graph, link};
use crate::model::ParsedFile;
use crate::parse::parse_file;
use crate::walk::{SourceFile, WalkError, WalkOptions, WalkReport, walk};

#[derive(Debug, Default, Clone, Copy)]
pub struct Timings {
    pub walk: Duration,
    pub parse: Duration,
    pub link: Duration,
}

/// The graph of a repository plus what was skipped.
pub struct RepoGraph {
    pub root: PathBuf,
    pub graph: Graph,
    pub walk: WalkReport,
    pub timings: Timings,
}

/// Parses files on all cores. Order of the result follows the input.
pub fn parse_all(files: &[SourceFile]) -> Vec<Arc<ParsedFile>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(files.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<Option<Arc<ParsedFile>>> = vec![None; files.len()];
    let results = std::sync::Mutex::new(Vec::with_capacity(files.len()));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut local = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(f) = files.get(i) else { break };
                    local.push((i, Arc::new(parse_file(&f.path, f.lang, &f.bytes))));
                }
                if let Ok(mut r) = results.lock() {
                    r.extend(local);
                }
            });
        }
    });
    for (i, p) in results.into_inner().unwrap_or_default() {
        out[i] = Some(p);
    }
    out.into_iter().flatten().collect()
}

pub fn build(root: &Path, opts: &WalkOptions) -> Result<RepoGraph, WalkError> {
    build_with_sources(root, opts).map(|(repo, _)| repo)
}

/// Builds the graph and keeps every file's bytes, aligned with `graph.files`.
pub fn build_with_sources(
    root: &Path,
    opts: &WalkOptions,
) -> Result<(RepoGraph, crate::index::Sources), WalkError> {
    let t0 = Instant::now();
    let mut report = walk(root, opts)?;
    let t1 = Instant::now();
    let parsed = parse_all(&report.files);
    let t2 = Instant::now();
    let graph = link(parsed);
    let t3 = Instant::now();
    // Move the bytes out of the report, aligned with the graph's (path-sorted) files.
    let mut by_path: std::collections::HashMap<String, Arc<[u8]>> = report
        .files
        .iter_mut()
        .map(|f| (f.path.clone(), Arc::from(std::mem::take(&mut f.bytes))))
        .collect();
    let sources = graph
        .files
        .iter()
        .map(|f| {
            by_path
                .remove(&f.path)
                .unwrap_or_else(|| Arc::from(Vec::new()))
        })
        .collect();
    let repo = RepoGraph {
        root: root.to_path_buf(),
        graph,
        walk: report,
        timings: Timings {
            walk: t1 - t0,
            parse: t2 - t1,
            link: t3 - t2,
        },
    };
    Ok((repo, sources))
}
