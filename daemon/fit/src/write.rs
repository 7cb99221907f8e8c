//! Writing a tree to disk without ever losing a file fittok did not write.
//!
//! Invariants:
//! - a file that exists is replaced only if fittok wrote it (it is in the folder's manifest
//!   with the very content recorded there) or already holds the new content; otherwise nothing
//!   is written and the error names the file;
//! - a tree is replaced as a whole: the new subdocuments are staged in a folder beside the
//!   old one (with the user's own files from the old folder carried over), the folders are
//!   swapped by one rename (an atomic exchange on Linux) and the root is renamed into place.
//!   A journal written first names the staged paths; a run that dies midway leaves it, and
//!   the next write on that tree ([`recover`]) completes the swap or undoes it: the tree read
//!   afterwards is the old one or the new one, never a mix, and nothing is lost;
//! - files of an earlier tree that the new one no longer has are dropped only when they are
//!   still exactly what fittok wrote; anything else in the folder is carried into the new one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{FitError, FitFile};

/// The manifest of what fittok wrote for a tree, kept in the tree's folder: path relative to
/// the root's directory → content hash.
pub const MANIFEST: &str = ".fittok-manifest.json";

/// FNV-1a, 64 bits: stable across builds and platforms (unlike std's hasher), enough to tell
/// "the bytes fittok wrote" from "a file someone edited".
fn content_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FitError + '_ {
    move |source| FitError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `bytes` to `path` through a temp file in the same folder and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FitError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.fittok-tmp-{}", std::process::id()));
    // Flushed before the rename, and the folder after it: a power loss leaves the old file
    // or the new one, never a renamed file whose bytes had not reached the disk.
    if let Err(e) = write_synced(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(&tmp)(e));
    }
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(path)(e));
    }
    sync_dir(dir);
    Ok(())
}

/// Writes `bytes` to a new file at `path` and flushes them to disk.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Flushes a folder's entries (a rename into it) to disk. Not every platform can open a
/// folder as a file; there the rename's durability is the file system's.
pub fn sync_dir(dir: &Path) {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

fn read_manifest(path: &Path) -> BTreeMap<String, String> {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Writes `files` (the root first, as planned) under `dir`. `owned` is the folder whose
/// manifest records what fittok wrote (the subdocuments' folder); `root` is written last, and
/// may be a user's document that is being fitted (`root_is_users`: replaced by design).
pub fn write_tree(
    dir: &Path,
    files: &[FitFile],
    owned: &Path,
    root_is_users: bool,
) -> Result<(), FitError> {
    ensure_writable(dir)?;
    write_tree_until(dir, files, owned, root_is_users, Injected::default())
}

/// Fails with [`FitError::NotWritable`] when files cannot be created in `dir`, before anything
/// is written: the error then names the folder, not a hidden temporary file in it.
pub fn ensure_writable(dir: &Path) -> Result<(), FitError> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if writable(dir) {
        Ok(())
    } else {
        Err(FitError::NotWritable(dir.to_path_buf()))
    }
}

#[cfg(unix)]
fn writable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a NUL-terminated path that outlives the call; access reads it only.
    unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) == 0 }
}

#[cfg(not(unix))]
fn writable(dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|m| !m.permissions().readonly())
}

/// Fails, naming the file, if writing `files` would replace a file fittok did not write.
pub fn check(
    dir: &Path,
    files: &[FitFile],
    owned: &Path,
    root_is_users: bool,
) -> Result<(), FitError> {
    ensure_writable(dir)?;
    if let Some(root) = files.first() {
        recover(dir, &root.rel, owned)?;
    }
    check_against(
        &read_manifest(&owned.join(MANIFEST)),
        dir,
        files,
        root_is_users,
    )
}

fn check_against(
    old: &BTreeMap<String, String>,
    dir: &Path,
    files: &[FitFile],
    root_is_users: bool,
) -> Result<(), FitError> {
    for (i, f) in files.iter().enumerate() {
        if i == 0 && root_is_users {
            continue;
        }
        let p = dir.join(&f.rel);
        let Ok(current) = std::fs::read(&p) else {
            if p.exists() || p.is_symlink() {
                return Err(FitError::NotOurs(p));
            }
            continue;
        };
        let ours = old
            .get(&f.rel)
            .is_some_and(|h| *h == content_hash(&current));
        if !ours && current != f.text.as_bytes() {
            return Err(FitError::NotOurs(p));
        }
    }
    Ok(())
}

/// The steps of a tree write, in order. A test stops a write after any of them, as a crash
/// would, and checks what [`recover`] makes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Journaled,
    Staged,
    RootStaged,
    Swapped,
    RootReplaced,
}

/// Every step, for failure-injection tests.
pub const STEPS: &[Step] = &[
    Step::Journaled,
    Step::Staged,
    Step::RootStaged,
    Step::Swapped,
    Step::RootReplaced,
];

/// Marks a staged folder with its write's generation: after a crash, the folder holding the
/// journal's generation is the new one (the swap happened).
const GENERATION: &str = ".fittok-generation";

/// What a write in progress has put where (names relative to the tree's directory).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Journal {
    generation: String,
    root: String,
    root_tmp: String,
    folder: String,
    stage: String,
    /// Where the old folder went when the platform cannot exchange two folders.
    old: String,
}

fn journal_path(dir: &Path, root: &str) -> PathBuf {
    dir.join(format!(".{root}.fittok-journal"))
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Completes or undoes a tree write that stopped midway, from its journal (nothing to do
/// without one). `root` is the root's name in `dir`; `owned` its folder.
pub fn recover(dir: &Path, root: &str, owned: &Path) -> Result<(), FitError> {
    let path = journal_path(dir, root);
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(());
    };
    let Ok(j) = serde_json::from_slice::<Journal>(&bytes) else {
        // Written atomically, so never torn: not ours to interpret.
        return Err(FitError::NotOurs(path));
    };
    if j.folder != name_of(owned) || j.root != root {
        return Err(FitError::NotOurs(path));
    }
    let folder = dir.join(&j.folder);
    let stage = dir.join(&j.stage);
    let old = dir.join(&j.old);
    let root_tmp = dir.join(&j.root_tmp);
    let committed =
        std::fs::read_to_string(folder.join(GENERATION)).is_ok_and(|g| g == j.generation);
    if committed {
        tracing::info!(tree = %dir.join(root).display(), "completing an interrupted fit write");
        if root_tmp.exists() {
            std::fs::rename(&root_tmp, dir.join(root)).map_err(io(&root_tmp))?;
        }
        // The old folder, wherever the swap left it.
        for leftover in [&stage, &old] {
            if leftover.is_dir() {
                std::fs::remove_dir_all(leftover).map_err(io(leftover))?;
            }
        }
    } else {
        tracing::info!(tree = %dir.join(root).display(), "undoing an interrupted fit write");
        if !folder.exists() && old.is_dir() {
            std::fs::rename(&old, &folder).map_err(io(&old))?;
        }
        if root_tmp.exists() {
            std::fs::remove_file(&root_tmp).map_err(io(&root_tmp))?;
        }
        // Only the staged copy: every file in it was written or carried (linked) by fittok.
        if stage.is_dir() {
            std::fs::remove_dir_all(&stage).map_err(io(&stage))?;
        }
    }
    std::fs::remove_file(&path).map_err(io(&path))
}

/// Swaps two folders in one step where the platform can (Linux `renameat2` with
/// `RENAME_EXCHANGE`); `Ok(false)` where it cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<bool> {
    use std::os::unix::ffi::OsStrExt;
    let c =
        |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
    let (ca, cb) = (c(a)?, c(b)?);
    // SAFETY: both are valid NUL-terminated paths; the call only renames.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    // Filesystems without exchange (EINVAL) and old kernels (ENOSYS) take the fallback.
    match e.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ENOSYS) => Ok(false),
        _ => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<bool> {
    Ok(false)
}

/// Carries what is not fittok's from the old folder into the staged one (a hard link, else a
/// copy): the user's files, and subdocuments the user edited since fittok wrote them.
fn carry_over(
    from: &Path,
    to: &Path,
    rel_prefix: &str,
    old: &BTreeMap<String, String>,
    planned: &std::collections::HashSet<&str>,
) -> Result<(), FitError> {
    let entries = std::fs::read_dir(from).map_err(io(from))?;
    for entry in entries {
        let entry = entry.map_err(io(from))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("{rel_prefix}/{name}");
        let src = entry.path();
        let dst = to.join(&name);
        let kind = entry.file_type().map_err(io(&src))?;
        if kind.is_dir() {
            std::fs::create_dir_all(&dst).map_err(io(&dst))?;
            carry_over(&src, &dst, &rel, old, planned)?;
            continue;
        }
        if name == MANIFEST || name == GENERATION || planned.contains(rel.as_str()) {
            continue;
        }
        if kind.is_symlink() {
            #[cfg(unix)]
            {
                let target = std::fs::read_link(&src).map_err(io(&src))?;
                std::os::unix::fs::symlink(target, &dst).map_err(io(&dst))?;
            }
            #[cfg(not(unix))]
            std::fs::copy(&src, &dst).map_err(io(&dst))?;
            continue;
        }
        let stale_ours = old
            .get(&rel)
            .is_some_and(|h| std::fs::read(&src).is_ok_and(|b| content_hash(&b) == *h));
        if stale_ours {
            continue;
        }
        if std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst).map_err(io(&dst))?;
        }
    }
    Ok(())
}

/// Removes a directory if it is empty (a tree with no subdocuments leaves no folder).
fn remove_if_empty(dir: &Path) {
    if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none()) {
        let _ = std::fs::remove_dir(dir);
    }
}

/// Failure injection for tests: stop after a step, or swap folders by two renames even where
/// they can be exchanged in one (the path other platforms take).
#[derive(Debug, Clone, Copy, Default)]
struct Injected {
    stop_after: Option<Step>,
    no_exchange: bool,
}

fn write_tree_until(
    dir: &Path,
    files: &[FitFile],
    owned: &Path,
    root_is_users: bool,
    injected: Injected,
) -> Result<(), FitError> {
    let stop_after = injected.stop_after;
    let Some(root) = files.first() else {
        return Ok(());
    };
    recover(dir, &root.rel, owned)?;
    let manifest_path = owned.join(MANIFEST);
    let old = read_manifest(&manifest_path);
    check_against(&old, dir, files, root_is_users)?;
    let folder = name_of(owned);
    if let Some(f) = files[1..]
        .iter()
        .find(|f| !f.rel.starts_with(&format!("{folder}/")))
    {
        return Err(FitError::NotOurs(dir.join(&f.rel)));
    }
    let stop = |step: Step| stop_after == Some(step);
    let pid = std::process::id();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let journal = Journal {
        generation: format!("{pid}-{nanos}"),
        root: root.rel.clone(),
        root_tmp: format!(".{}.fittok-tmp-{pid}", root.rel),
        folder: folder.clone(),
        stage: format!(".{folder}.fittok-stage-{pid}"),
        old: format!(".{folder}.fittok-old-{pid}"),
    };
    let journal_file = journal_path(dir, &root.rel);
    let stage = dir.join(&journal.stage);
    let root_tmp = dir.join(&journal.root_tmp);
    let text = serde_json::to_string(&journal).unwrap_or_default();
    write_atomic(&journal_file, text.as_bytes())?;
    if stop(Step::Journaled) {
        return Ok(());
    }

    // The new folder, complete and on disk, beside the old one.
    std::fs::create_dir_all(&stage).map_err(io(&stage))?;
    let mut manifest: BTreeMap<String, String> = BTreeMap::new();
    let mut folders = std::collections::BTreeSet::new();
    for f in &files[1..] {
        let p = stage.join(&f.rel[folder.len() + 1..]);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
            folders.insert(parent.to_path_buf());
        }
        write_synced(&p, f.text.as_bytes()).map_err(io(&p))?;
        manifest.insert(f.rel.clone(), content_hash(f.text.as_bytes()));
    }
    for f in &folders {
        sync_dir(f);
    }
    if !root_is_users {
        manifest.insert(root.rel.clone(), content_hash(root.text.as_bytes()));
    }
    if owned.is_dir() {
        let planned = files.iter().map(|f| f.rel.as_str()).collect();
        carry_over(owned, &stage, &folder, &old, &planned)?;
    }
    write_manifest(&stage.join(MANIFEST), &manifest)?;
    write_atomic(&stage.join(GENERATION), journal.generation.as_bytes())?;
    if stop(Step::Staged) {
        return Ok(());
    }
    write_synced(&root_tmp, root.text.as_bytes()).map_err(io(&root_tmp))?;
    sync_dir(dir);
    if stop(Step::RootStaged) {
        return Ok(());
    }

    // The commit: the staged folder takes the old one's place.
    if owned.exists() {
        let exchanged = !injected.no_exchange && exchange(&stage, owned).map_err(io(owned))?;
        if !exchanged {
            let old_path = dir.join(&journal.old);
            std::fs::rename(owned, &old_path).map_err(io(owned))?;
            std::fs::rename(&stage, owned).map_err(io(&stage))?;
        }
    } else {
        std::fs::rename(&stage, owned).map_err(io(&stage))?;
    }
    sync_dir(dir);
    if stop(Step::Swapped) {
        return Ok(());
    }
    std::fs::rename(&root_tmp, dir.join(&root.rel)).map_err(io(&root_tmp))?;
    sync_dir(dir);
    if stop(Step::RootReplaced) {
        return Ok(());
    }
    // Cleanup: the old folder (its user files live on, carried) and the journal.
    recover(dir, &root.rel, owned)?;
    let _ = std::fs::remove_file(owned.join(GENERATION));
    if manifest.is_empty() {
        let _ = std::fs::remove_file(owned.join(MANIFEST));
    }
    remove_if_empty(owned);
    Ok(())
}

fn write_manifest(path: &Path, entries: &BTreeMap<String, String>) -> Result<(), FitError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let text = serde_json::to_string_pretty(entries).unwrap_or_else(|_| "{}".into());
    write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fittok-write-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn file(rel: &str, text: &str) -> FitFile {
        FitFile {
            rel: rel.into(),
            tokens: 1,
            text: text.into(),
        }
    }

    #[test]
    fn a_users_file_with_a_planned_name_is_never_overwritten() {
        let d = tmp("clash");
        std::fs::create_dir_all(d.join("doc")).unwrap();
        std::fs::write(d.join("doc/a.md"), "the user's own words").unwrap();
        std::fs::write(d.join("doc.md"), "original").unwrap();
        let plan = [file("doc.md", "root"), file("doc/a.md", "sub")];
        let err = write_tree(&d, &plan, &d.join("doc"), true).unwrap_err();
        assert!(
            matches!(&err, FitError::NotOurs(p) if p.ends_with("doc/a.md")),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("doc/a.md")).unwrap(),
            "the user's own words"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("doc.md")).unwrap(),
            "original"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    /// Everything under `d`, path → content, leaving out nothing (hidden files included).
    fn snapshot(d: &Path) -> BTreeMap<String, String> {
        fn walk(base: &Path, p: &Path, out: &mut BTreeMap<String, String>) {
            for e in std::fs::read_dir(p).unwrap() {
                let e = e.unwrap();
                let path = e.path();
                if path.is_dir() {
                    walk(base, &path, out);
                } else {
                    let rel = path
                        .strip_prefix(base)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    out.insert(rel, std::fs::read_to_string(&path).unwrap_or_default());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(d, d, &mut out);
        out
    }

    /// A write stopped after each of its steps, as a crash would leave it, then recovered:
    /// the tree is the old one or the new one, never a mix, and the user's file is there at
    /// every step, before recovery too.
    #[test]
    fn a_write_interrupted_at_any_step_recovers_to_the_old_tree_or_the_new() {
        let old_tree = [
            file("map.md", "root 1 → map/a.md map/b.md"),
            file("map/a.md", "a1"),
            file("map/b.md", "b1"),
            file("map/deep/c.md", "c1"),
        ];
        let new_tree = [
            file("map.md", "root 2 → map/a.md map/d.md"),
            file("map/a.md", "a2"),
            file("map/d.md", "d2"),
        ];
        let fresh = |name: &str, tree: &[FitFile]| {
            let d = tmp(name);
            write_tree(&d, tree, &d.join("map"), false).unwrap();
            std::fs::write(d.join("map/notes.md"), "the user's notes").unwrap();
            d
        };
        let expected_old = {
            let d = fresh("expect-old", &old_tree);
            let s = snapshot(&d);
            let _ = std::fs::remove_dir_all(&d);
            s
        };
        let expected_new = {
            let d = fresh("expect-new", &old_tree);
            write_tree(&d, &new_tree, &d.join("map"), false).unwrap();
            let s = snapshot(&d);
            let _ = std::fs::remove_dir_all(&d);
            s
        };
        assert_ne!(expected_old, expected_new);
        assert_eq!(expected_new["map/notes.md"], "the user's notes");
        assert!(
            !expected_new.contains_key("map/b.md"),
            "stale subdocument dropped"
        );
        let transient = [
            "fittok-stage",
            "fittok-old",
            "fittok-tmp",
            "fittok-journal",
            GENERATION,
        ];
        assert!(
            expected_new
                .keys()
                .all(|k| transient.iter().all(|t| !k.contains(t))),
            "{expected_new:?}"
        );
        for (&step, no_exchange) in STEPS.iter().flat_map(|s| [(s, false), (s, true)]) {
            let d = fresh(&format!("step-{step:?}-{no_exchange}"), &old_tree);
            let injected = Injected {
                stop_after: Some(step),
                no_exchange,
            };
            write_tree_until(&d, &new_tree, &d.join("map"), false, injected).unwrap();
            assert_eq!(
                std::fs::read_to_string(d.join("map/notes.md")).unwrap(),
                "the user's notes",
                "after {step:?}"
            );
            recover(&d, "map.md", &d.join("map")).unwrap();
            let got = snapshot(&d);
            let want = if step >= Step::Swapped {
                &expected_new
            } else {
                &expected_old
            };
            // The generation marker of a completed swap is the only difference allowed.
            let got: BTreeMap<String, String> = got
                .into_iter()
                .filter(|(k, _)| !k.ends_with(GENERATION))
                .collect();
            assert_eq!(&got, want, "after {step:?}");
            // And the next write goes through.
            write_tree(&d, &new_tree, &d.join("map"), false).unwrap();
            assert_eq!(&snapshot(&d), &expected_new, "rewrite after {step:?}");
            let _ = std::fs::remove_dir_all(&d);
        }
    }

    #[test]
    fn rewriting_replaces_and_removes_only_what_fittok_wrote() {
        let d = tmp("rewrite");
        let owned = d.join("map");
        let first = [
            file("map.md", "root 1"),
            file("map/a.md", "a1"),
            file("map/b.md", "b1"),
        ];
        write_tree(&d, &first, &owned, false).unwrap();
        std::fs::write(owned.join("notes.md"), "mine").unwrap();
        let second = [file("map.md", "root 2"), file("map/a.md", "a2")];
        write_tree(&d, &second, &owned, false).unwrap();
        assert_eq!(std::fs::read_to_string(owned.join("a.md")).unwrap(), "a2");
        assert!(
            !owned.join("b.md").exists(),
            "a stale subdocument fittok wrote is removed"
        );
        assert_eq!(
            std::fs::read_to_string(owned.join("notes.md")).unwrap(),
            "mine"
        );
        // A subdocument the user edited since is theirs now: refused, not replaced.
        std::fs::write(owned.join("a.md"), "a2 with the user's edit").unwrap();
        let third = [file("map.md", "root 3"), file("map/a.md", "a3")];
        assert!(write_tree(&d, &third, &owned, false).is_err());
        assert_eq!(
            std::fs::read_to_string(owned.join("a.md")).unwrap(),
            "a2 with the user's edit"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
