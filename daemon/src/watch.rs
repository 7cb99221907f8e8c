//! File watching for resident repositories: one debounced notify watcher (one inotify
//! instance) for all roots, events turned into per-root batches of changed relative paths.
//!
//! The watcher only says *what may have changed*; the update lists the repository with the
//! same rules as a fresh walk and re-reads what the batch names or what changed size or mtime,
//! so a dropped or coalesced event cannot make the graph differ from a fresh one for long.
//! No engine types here.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::event::EventKind;
use notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer_opt};

use fittok_engine::model::Lang;

/// What changed under one root.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Relative, `/`-separated paths of source files that changed, appeared or went away.
    pub paths: Vec<String>,
    /// Something only a full listing can settle: a directory moved or vanished, ignore rules
    /// changed, or the OS dropped events.
    pub rescan: bool,
}

/// Receives batches: (root, batch).
pub type Sink = Arc<dyn Fn(&Path, Batch) + Send + Sync>;

/// How long events settle before a batch is delivered. An editor's save (write a temporary,
/// rename it over the file) settles within a few milliseconds; the debounce is the floor of
/// save → visible (issue 15's goal for a 5k-node repository is 150 ms), and a burst longer
/// than it (a branch switch) costs only another incremental update.
pub const DEBOUNCE: Duration = Duration::from_millis(50);

pub struct Watch {
    debouncer: Mutex<Debouncer<RecommendedWatcher, RecommendedCache>>,
    roots: Arc<Mutex<Vec<PathBuf>>>,
}

/// Whether a walk could reach a file at `rel`: no hidden or skipped directory on the way,
/// and not hidden itself (the listing applies .gitignore and the rest).
fn in_walked_dirs(rel: &str) -> bool {
    let mut parts = rel.split('/').peekable();
    while let Some(part) = parts.next() {
        let last = parts.peek().is_none();
        if !last && (part.starts_with('.') || fittok_engine::walk::is_skipped_dir(part)) {
            return false;
        }
        if last && part.starts_with('.') {
            return false;
        }
    }
    true
}

/// Whether a relative path is one a walk could return, by its directories and extension.
fn may_be_source(rel: &str) -> bool {
    in_walked_dirs(rel) && Lang::from_path(rel).is_some()
}

/// A file without an extension whose `#!` line names a language (`bin/tool`).
fn is_script(path: &std::path::Path, rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    !name.contains('.')
        && in_walked_dirs(rel)
        && fittok_engine::walk::script_language(path).is_some()
}

/// Whether a change to this path changes which files a walk returns.
fn changes_rules(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    matches!(name, ".gitignore" | ".ignore" | ".fittokignore")
        && !rel
            .split('/')
            .any(|p| p == ".git" || fittok_engine::walk::is_skipped_dir(p))
}

fn dispatch(roots: &Mutex<Vec<PathBuf>>, sink: &Sink, result: DebounceEventResult) {
    let roots = match roots.lock() {
        Ok(r) => r.clone(),
        Err(p) => p.into_inner().clone(),
    };
    let mut batches: Vec<(PathBuf, Batch)> = Vec::new();
    fn batch_for(batches: &mut Vec<(PathBuf, Batch)>, root: &Path) -> usize {
        match batches.iter().position(|(r, _)| r == root) {
            Some(i) => i,
            None => {
                batches.push((root.to_path_buf(), Batch::default()));
                batches.len() - 1
            }
        }
    }
    match result {
        Ok(events) => {
            for ev in events {
                if matches!(ev.kind, EventKind::Access(_)) {
                    continue;
                }
                for path in &ev.paths {
                    // The innermost root holding the path (roots may nest).
                    let Some(root) = roots
                        .iter()
                        .filter(|r| path.starts_with(r))
                        .max_by_key(|r| r.as_os_str().len())
                    else {
                        continue;
                    };
                    let i = batch_for(&mut batches, root);
                    let Ok(rel) = path.strip_prefix(root) else {
                        continue;
                    };
                    let rel = rel.to_string_lossy().replace('\\', "/");
                    if rel.is_empty() {
                        // The root itself moved or went away.
                        batches[i].1.rescan = true;
                    } else if may_be_source(&rel) || is_script(path, &rel) {
                        batches[i].1.paths.push(rel);
                    } else if changes_rules(&rel)
                        || ev.need_rescan()
                        || (Lang::from_path(&rel).is_none()
                            && matches!(
                                ev.kind,
                                EventKind::Remove(_)
                                    | EventKind::Modify(notify::event::ModifyKind::Name(_))
                            )
                            && !rel.split('/').any(|p| {
                                p.starts_with('.') || fittok_engine::walk::is_skipped_dir(p)
                            }))
                    {
                        // A directory renamed or removed takes its files with it.
                        batches[i].1.rescan = true;
                    }
                }
            }
        }
        Err(errors) => {
            for e in &errors {
                tracing::warn!(error = %e, "file watcher error; rescanning");
            }
            for root in &roots {
                let i = batch_for(&mut batches, root);
                batches[i].1.rescan = true;
            }
        }
    }
    for (root, mut batch) in batches {
        batch.paths.sort();
        batch.paths.dedup();
        if batch.rescan || !batch.paths.is_empty() {
            sink(&root, batch);
        }
    }
}

/// Why files are not watched: the answer to "is this current?" names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WatchError {
    #[error("FITTOK_AUTOWATCH is off")]
    Off,
    #[error("inotify watch limit reached (raise fs.inotify.max_user_watches)")]
    WatchLimit,
    #[error("inotify instance limit reached (raise fs.inotify.max_user_instances)")]
    InstanceLimit,
    #[error("cannot watch: {0}")]
    Other(String),
}

impl Watch {
    /// Starts the watcher; it watches nothing until [`Watch::add`].
    pub fn new(sink: Sink) -> Result<Watch, WatchError> {
        let roots: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
        let seen = roots.clone();
        // Symlinks are not followed, as the walk does not follow them: a `sysroot -> /usr`
        // would otherwise add thousands of watches outside the repository.
        let config = notify::Config::default().with_follow_symlinks(false);
        let debouncer = new_debouncer_opt::<_, RecommendedWatcher, RecommendedCache>(
            DEBOUNCE,
            None,
            move |result: DebounceEventResult| dispatch(&seen, &sink, result),
            RecommendedCache::new(),
            config,
        )
        .map_err(|e| describe(&e))?;
        Ok(Watch {
            debouncer: Mutex::new(debouncer),
            roots,
        })
    }

    /// Watches `root` recursively. The error says why not (inotify limits, permissions).
    pub fn add(&self, root: &Path) -> Result<(), WatchError> {
        let mut d = self
            .debouncer
            .lock()
            .map_err(|_| WatchError::Other("the watcher's lock is poisoned".into()))?;
        d.watch(root, RecursiveMode::Recursive)
            .map_err(|e| describe(&e))?;
        if let Ok(mut roots) = self.roots.lock() {
            roots.push(root.to_path_buf());
        }
        Ok(())
    }

    pub fn remove(&self, root: &Path) {
        if let Ok(mut d) = self.debouncer.lock() {
            let _ = d.unwatch(root);
        }
        if let Ok(mut roots) = self.roots.lock() {
            roots.retain(|r| r != root);
        }
    }
}

/// A notify error, naming the limit to raise when it is one.
fn describe(e: &notify::Error) -> WatchError {
    match &e.kind {
        notify::ErrorKind::MaxFilesWatch => WatchError::WatchLimit,
        notify::ErrorKind::Io(io) if io.raw_os_error() == Some(libc::EMFILE) => {
            WatchError::InstanceLimit
        }
        _ => WatchError::Other(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_paths_and_rule_files() {
        assert!(may_be_source("src/lib.rs"));
        assert!(may_be_source("a/b/c.py"));
        assert!(!may_be_source("node_modules/x/index.js"));
        assert!(!may_be_source("target/debug/build.rs"));
        assert!(!may_be_source(".git/HEAD"));
        assert!(!may_be_source("src/.hidden.py"));
        assert!(!may_be_source("README"));
        assert!(changes_rules(".gitignore"));
        assert!(changes_rules("sub/.fittokignore"));
        assert!(!changes_rules("node_modules/.gitignore"));
    }

    #[test]
    fn edits_arrive_as_one_batch_per_root() {
        let dir = std::env::temp_dir().join(format!("fittok-watch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let dir = dir.canonicalize().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let tx = Mutex::new(tx);
        let watch = Watch::new(Arc::new(move |root: &Path, b: Batch| {
            let _ = tx.lock().unwrap().send((root.to_path_buf(), b));
        }))
        .unwrap();
        watch.add(&dir).unwrap();
        std::fs::write(dir.join("src/a.py"), "def a(): pass\n").unwrap();
        std::fs::write(dir.join("src/b.txt"), "not source\n").unwrap();
        std::fs::create_dir_all(dir.join("node_modules")).unwrap();
        std::fs::write(dir.join("node_modules/x.js"), "x\n").unwrap();
        let mut paths = Vec::new();
        while let Ok((root, b)) = rx.recv_timeout(Duration::from_secs(3)) {
            assert_eq!(root, dir);
            paths.extend(b.paths);
            if paths.iter().any(|p| p == "src/a.py") {
                break;
            }
        }
        assert!(paths.contains(&"src/a.py".to_string()), "{paths:?}");
        assert!(
            !paths
                .iter()
                .any(|p| p.contains("node_modules") || p.ends_with(".txt"))
        );
        watch.remove(&dir);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
