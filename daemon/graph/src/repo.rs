//! A whole repository through walk → parse → link, with timings and a report. Parses come
//! from the store when the file's content and the parser build are unchanged.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::link::{Graph, link};
use crate::model::{ParsedFile, is_test_path};
use crate::parse::parse_file;
use crate::store::{FileStamp, Store, fnv};
use crate::walk::{SourceFile, WalkError, WalkOptions, WalkReport, list, read};

/// Every file's bytes (scrubbed), by file index of the graph.
pub type Sources = Vec<Arc<[u8]>>;

#[derive(Debug, Default, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Timings {
    pub walk: Duration,
    pub parse: Duration,
    pub link: Duration,
    /// Files whose parse came from the previous build or the store.
    pub reused: usize,
    /// Files read again (new, changed, or not in a previous build).
    pub rebuilt: usize,
}

/// A stage of building, reported to a progress callback with (done, total).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Walk,
    Parse,
    Link,
    Lexical,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Walk => "walk",
            Phase::Parse => "parse",
            Phase::Link => "link",
            Phase::Lexical => "lexical",
        }
    }
}

/// Progress callback: phase, done, total.
pub type Progress<'a> = &'a (dyn Fn(Phase, usize, usize) + Sync);

/// How to build: walk options, the store for cached parses, a progress callback.
#[derive(Clone, Copy, Default)]
pub struct BuildOptions<'a> {
    pub walk: Option<&'a WalkOptions>,
    pub store: Option<&'a Store>,
    pub progress: Option<Progress<'a>>,
    pub previous: Option<&'a Previous>,
    /// The previous build's graph: files that changed but kept their interface are the only
    /// ones resolved again (`link::relink`).
    pub linked: Option<&'a Graph>,
    /// Leave fresh parses out of the parse cache for now: the build hands them back in
    /// [`RepoGraph::unstored`], to be written once the first answer is out.
    pub defer_parse_store: bool,
    /// Leave test files out when together they hold at least this many bytes: the build is
    /// then a first one that answers sooner, and the next update adds them (see
    /// [`RepoGraph::deferred_tests`]).
    pub defer_tests_over: Option<u64>,
    /// Once set, the build stops at its next file or stage with [`WalkError::Cancelled`]:
    /// an update of a repository dropped from memory would otherwise hold a second copy of it
    /// until done (kafka's first update: 7.6 s, its whole graph again).
    pub cancel: Option<&'a AtomicBool>,
}

/// Parses a build made that the parse cache does not hold yet, with the paths the cache keeps
/// (entries of any other path are dropped). A cold build of apache/kafka spent ~0.5 s of one
/// core encoding and writing 5,767 parses between parsing and linking; the daemon writes them
/// beside its snapshot instead, off the path to the first answer.
pub struct UnstoredParses {
    root_key: String,
    parses: Vec<(FileStamp, Arc<ParsedFile>)>,
    present: Vec<String>,
}

impl UnstoredParses {
    /// Writes them (a failure is logged: it costs the next cold start its speed-up, nothing
    /// else).
    pub fn store(self, store: &Store) {
        let keep: HashSet<&str> = self.present.iter().map(String::as_str).collect();
        let parses: Vec<(FileStamp, &ParsedFile)> =
            self.parses.iter().map(|(s, p)| (*s, p.as_ref())).collect();
        if let Err(e) = store.put_parses(&self.root_key, &parses, &keep) {
            tracing::warn!(error = %e, "parse cache write failed");
        }
    }
}

/// The graph of a repository plus what was skipped.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct RepoGraph {
    pub root: PathBuf,
    pub graph: Graph,
    /// What was skipped and why; `files` is emptied once their bytes move to the sources.
    pub walk: WalkReport,
    /// Size, mtime and content hash of each file, aligned with `graph.files`.
    pub stamps: Vec<FileStamp>,
    pub timings: Timings,
    /// Fresh parses not written to the parse cache yet (see [`BuildOptions::defer_parse_store`]).
    #[serde(skip)]
    pub unstored: Option<UnstoredParses>,
    /// Test files this build left out (see [`BuildOptions::defer_tests_over`]): listed, not
    /// read. An update adds them, as it adds any file it finds new.
    #[serde(skip)]
    pub deferred_tests: usize,
}

/// Parses files on all cores. Order of the result follows the input.
pub fn parse_all(files: &[SourceFile]) -> Vec<Arc<ParsedFile>> {
    parse_some(files, &(0..files.len()).collect::<Vec<_>>(), None, None)
        .into_iter()
        .map(|(_, p)| p)
        .collect()
}

/// Whether the caller of a build has withdrawn it.
pub fn is_cancelled(cancel: Option<&AtomicBool>) -> bool {
    cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
}

/// Parses `files[i]` for each `i` in `which`, on all cores; returns (i, parse) in `which` order.
fn parse_some(
    files: &[SourceFile],
    which: &[usize],
    progress: Option<Progress<'_>>,
    cancel: Option<&AtomicBool>,
) -> Vec<(usize, Arc<ParsedFile>)> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(which.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let finished = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<Option<(usize, Arc<ParsedFile>)>> = vec![None; which.len()];
    let results = std::sync::Mutex::new(Vec::with_capacity(which.len()));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut local = Vec::new();
                loop {
                    if is_cancelled(cancel) {
                        break;
                    }
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&i) = which.get(k) else { break };
                    let f = &files[i];
                    local.push((k, (i, Arc::new(parse_file(&f.path, f.lang, &f.bytes)))));
                    let n = finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                    if let Some(report) = progress
                        && (n.is_multiple_of(16) || n == which.len())
                    {
                        report(Phase::Parse, n, which.len());
                    }
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
    build_with_sources(
        root,
        BuildOptions {
            walk: Some(opts),
            ..BuildOptions::default()
        },
    )
    .map(|(repo, _)| repo)
}

/// A file's stamp for the parse cache.
pub fn stamp(f: &SourceFile) -> FileStamp {
    FileStamp {
        size: f.size,
        mtime_ns: f.mtime_ns,
        hash: fnv(&f.bytes, 0xcbf2_9ce4_8422_2325),
    }
}

/// Parses `files`, taking unchanged ones from the store; store entries of paths not in
/// `present` (the whole listing) are dropped.
fn parse_cached(
    root: &Path,
    files: &[SourceFile],
    present: &HashSet<&str>,
    store: Option<&Store>,
    progress: Option<Progress<'_>>,
    defer: bool,
    cancel: Option<&AtomicBool>,
) -> (Vec<Arc<ParsedFile>>, usize, Option<UnstoredParses>) {
    let Some(store) = store else {
        let all: Vec<usize> = (0..files.len()).collect();
        let parsed = parse_some(files, &all, progress, cancel);
        return (parsed.into_iter().map(|(_, p)| p).collect(), 0, None);
    };
    let root_key = root.to_string_lossy();
    let stamps: Vec<FileStamp> = files.iter().map(stamp).collect();
    let query: Vec<(&str, FileStamp)> = files
        .iter()
        .zip(&stamps)
        .map(|(f, s)| (f.path.as_str(), *s))
        .collect();
    let cached = store.get_parses(&root_key, &query).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "parse cache read failed; parsing afresh");
        vec![None; files.len()]
    });
    let mut out: Vec<Option<Arc<ParsedFile>>> = cached
        .into_iter()
        .zip(files)
        // A cached parse must be of this very path (the key says so; the check is cheap).
        .map(|(c, f)| c.filter(|p| p.path == f.path).map(Arc::new))
        .collect();
    let missing: Vec<usize> = (0..files.len()).filter(|&i| out[i].is_none()).collect();
    let reused = files.len() - missing.len();
    let fresh = parse_some(files, &missing, progress, cancel);
    let mut unstored = None;
    if !fresh.is_empty() || reused != files.len() {
        let pending = UnstoredParses {
            root_key: root_key.into_owned(),
            // A parse whose grammar the parser refused says nothing about the file: it is
            // parsed again next time rather than served from the cache.
            parses: fresh
                .iter()
                .filter(|(_, p)| !grammar_failed(p))
                .map(|(i, p)| (stamps[*i], p.clone()))
                .collect(),
            present: present.iter().map(|p| p.to_string()).collect(),
        };
        if defer {
            unstored = Some(pending);
        } else {
            pending.store(store);
        }
    }
    for (i, p) in fresh {
        out[i] = Some(p);
    }
    (out.into_iter().flatten().collect(), reused, unstored)
}

/// Whether `p` is empty because its grammar could not be used ([`crate::parse::GRAMMAR_FAILED`]).
fn grammar_failed(p: &ParsedFile) -> bool {
    p.diagnostics
        .iter()
        .any(|d| d.message.starts_with(crate::parse::GRAMMAR_FAILED))
}

/// One file of an earlier build of the same root.
#[derive(Clone)]
pub struct PreviousFile {
    pub stamp: FileStamp,
    pub parsed: Arc<ParsedFile>,
    pub source: Arc<[u8]>,
}

/// An earlier build of the same root: its files are reused when their size and mtime are
/// unchanged and they are not named in `changed` (paths a watcher saw change), so an update
/// reads and parses only what changed — and goes through exactly the code a fresh build does.
#[derive(Default)]
pub struct Previous {
    pub files: HashMap<String, PreviousFile>,
    pub changed: HashSet<String>,
}

/// Builds the graph and keeps every file's bytes, aligned with `graph.files`.
pub fn build_with_sources(
    root: &Path,
    opts: BuildOptions<'_>,
) -> Result<(RepoGraph, Sources), WalkError> {
    let default_walk = WalkOptions::default();
    let walk_opts = opts.walk.unwrap_or(&default_walk);
    let t0 = Instant::now();
    let listing = list(root, walk_opts)?;
    let mut report = WalkReport {
        files: Vec::new(),
        skipped: listing.skipped,
        errors: listing.errors,
    };
    let mut kept: Vec<KeptFile> = Vec::new();
    let mut to_read = Vec::new();
    let defer_tests = opts.defer_tests_over.is_some_and(|min| {
        let test_bytes: u64 = listing
            .files
            .iter()
            .filter(|l| is_test_path(&l.path))
            .map(|l| l.size)
            .sum();
        test_bytes >= min
    });
    let mut deferred_tests = 0;
    for listed in &listing.files {
        if defer_tests && is_test_path(&listed.path) {
            deferred_tests += 1;
            continue;
        }
        let previous = opts.previous.and_then(|p| {
            if p.changed.contains(&listed.path) {
                return None;
            }
            p.files
                .get(&listed.path)
                .filter(|f| f.stamp.size == listed.size && f.stamp.mtime_ns == listed.mtime_ns)
        });
        match previous {
            Some(f) => kept.push((f.parsed.clone(), f.source.clone(), f.stamp)),
            None => to_read.push(listed),
        }
    }
    // Reading, classifying and scrubbing are per file: on every core.
    let read_all = crate::par::map(&to_read, |listed| read(root, listed, walk_opts));
    for (listed, file) in to_read.into_iter().zip(read_all) {
        match file {
            Ok(file) => report.files.push(file),
            Err(reason) => report
                .skipped
                .push((listed.path.clone(), Some(listed.lang), reason)),
        }
    }
    if is_cancelled(opts.cancel) {
        return Err(WalkError::Cancelled);
    }
    drop_amalgamations(&mut report, &mut kept);
    report.skipped.sort();
    let t1 = Instant::now();
    if let Some(p) = opts.progress {
        p(Phase::Walk, listing.files.len(), listing.files.len());
    }
    let present: HashSet<&str> = listing.files.iter().map(|f| f.path.as_str()).collect();
    let (parsed, from_cache, unstored) = parse_cached(
        root,
        &report.files,
        &present,
        opts.store,
        opts.progress,
        opts.defer_parse_store,
        opts.cancel,
    );
    if is_cancelled(opts.cancel) {
        return Err(WalkError::Cancelled);
    }
    let t2 = Instant::now();
    if let Some(p) = opts.progress {
        p(Phase::Link, 0, 1);
    }
    let mut by_path: HashMap<String, (Arc<[u8]>, FileStamp)> = report
        .files
        .iter_mut()
        .map(|f| {
            let st = stamp(f);
            (
                f.path.clone(),
                (Arc::from(std::mem::take(&mut f.bytes)), st),
            )
        })
        .collect();
    let reused = kept.len();
    let mut all = parsed;
    for (p, source, st) in kept {
        by_path.insert(p.path.clone(), (source, st));
        all.push(p);
    }
    let all = fittok_parse::msbuild::inherit_usings(
        &read_project_files(root, &listing.project_files),
        all,
    );
    let graph = match opts.linked {
        Some(prev) => crate::link::relink(prev, all),
        None => link(all),
    };
    let t3 = Instant::now();
    // Bytes and stamps aligned with the graph's (path-sorted) files.
    let (sources, stamps) = graph
        .files
        .iter()
        .map(|f| {
            by_path
                .remove(&f.path)
                .unwrap_or_else(|| (Arc::from(Vec::new()), FileStamp::default()))
        })
        .unzip();
    let repo = RepoGraph {
        root: root.to_path_buf(),
        graph,
        walk: report,
        stamps,
        timings: Timings {
            walk: t1 - t0,
            parse: t2 - t1,
            link: t3 - t2,
            reused: reused + from_cache,
            rebuilt: listing.files.len() - reused - deferred_tests,
        },
        unstored,
        deferred_tests,
    };
    Ok((repo, sources))
}

/// The path and text of each MSBuild project file the walk found (their usings are the C#
/// files' imports too, [`fittok_parse::msbuild`]); one unreadable, or larger than a project
/// file could sensibly be, is left out.
fn read_project_files(root: &Path, paths: &[String]) -> Vec<(String, String)> {
    const MAX_BYTES: u64 = 1 << 20;
    paths
        .iter()
        .filter_map(|p| {
            let full = root.join(p);
            let size = std::fs::metadata(&full).ok()?.len();
            if size > MAX_BYTES {
                tracing::debug!(path = %p, size, "project file too large to read its usings");
                return None;
            }
            let bytes = std::fs::read(&full)
                .map_err(|e| tracing::debug!(path = %p, error = %e, "project file unreadable"))
                .ok()?;
            Some((p.clone(), String::from_utf8_lossy(&bytes).into_owned()))
        })
        .collect()
}

/// A file of the previous build reused as it was: its parse, bytes and stamp.
type KeptFile = (Arc<ParsedFile>, Arc<[u8]>, FileStamp);

/// Moves the amalgamations among the files just read and those kept from the previous build
/// to `report.skipped` ([`crate::walk::copies`]): whether a file is one depends on the others,
/// so both are judged together, on every build and update alike.
fn drop_amalgamations(report: &mut WalkReport, kept: &mut Vec<KeptFile>) {
    use crate::walk::copies::{File, copies};
    // Verdicts change only with the C and C++ files read now: kept files were judged with
    // the others last time, and an amalgamation skipped then is read again each time.
    if !report
        .files
        .iter()
        .any(|f| matches!(f.lang, crate::model::Lang::C | crate::model::Lang::Cpp))
    {
        return;
    }
    let found: HashSet<usize> = {
        let read = report.files.iter().map(|f| File {
            lang: f.lang,
            bytes: &f.bytes,
        });
        let reused = kept.iter().map(|(p, source, _)| File {
            lang: p.lang,
            bytes: source,
        });
        copies(&read.chain(reused).collect::<Vec<_>>())
            .into_iter()
            .collect()
    };
    if found.is_empty() {
        return;
    }
    let read_count = report.files.len();
    let dropped: Vec<(String, crate::model::Lang)> = take_found(&mut report.files, 0, &found)
        .into_iter()
        .map(|f| (f.path, f.lang))
        .chain(
            take_found(kept, read_count, &found)
                .into_iter()
                .map(|(p, _, _)| (p.path.clone(), p.lang)),
        )
        .collect();
    tracing::debug!(files = ?dropped, "amalgamations of the project's sources skipped");
    report.skipped.extend(
        dropped
            .into_iter()
            .map(|(path, lang)| (path, Some(lang), crate::walk::SkipReason::Amalgamation)),
    );
}

/// Removes from `items` those whose index plus `offset` is in `found`, and returns them.
fn take_found<T>(items: &mut Vec<T>, offset: usize, found: &HashSet<usize>) -> Vec<T> {
    let (taken, kept): (Vec<_>, Vec<_>) = std::mem::take(items)
        .into_iter()
        .enumerate()
        .partition(|(i, _)| found.contains(&(offset + i)));
    *items = kept.into_iter().map(|(_, x)| x).collect();
    taken.into_iter().map(|(_, x)| x).collect()
}

impl RepoGraph {
    /// This build as the previous one of the next update.
    pub fn previous(&self, sources: &Sources, changed: HashSet<String>) -> Previous {
        Previous {
            files: self
                .graph
                .files
                .iter()
                .zip(sources)
                .zip(&self.stamps)
                .map(|((p, s), st)| {
                    (
                        p.path.clone(),
                        PreviousFile {
                            stamp: *st,
                            parsed: p.clone(),
                            source: s.clone(),
                        },
                    )
                })
                .collect(),
            changed,
        }
    }
}

#[cfg(test)]
#[path = "repo_tests.rs"]
mod tests;
