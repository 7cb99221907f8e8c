//! Writing a tree to disk without ever losing a file fittok did not write.
//!
//! Invariants:
//! - a file that exists is replaced only if fittok wrote it (it is in the folder's manifest
//!   with the very content recorded there) or already holds the new content; otherwise nothing
//!   is written and the error names the file;
//! - every file is written atomically (temp file in the same folder, then rename), the
//!   subdocuments first and the root last, so an interrupted run leaves the old root in place;
//! - files of an earlier tree that the new one no longer has are removed only when they are
//!   still exactly what fittok wrote; anything else in the folder is left alone.

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
    std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(path)(e));
    }
    Ok(())
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
    let manifest_path = owned.join(MANIFEST);
    let old = read_manifest(&manifest_path);
    check_against(&old, dir, files, root_is_users)?;
    write_files(dir, files, &manifest_path, old, root_is_users)
}

/// Fails, naming the file, if writing `files` would replace a file fittok did not write.
pub fn check(
    dir: &Path,
    files: &[FitFile],
    owned: &Path,
    root_is_users: bool,
) -> Result<(), FitError> {
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

fn write_files(
    dir: &Path,
    files: &[FitFile],
    manifest_path: &Path,
    old: BTreeMap<String, String>,
    root_is_users: bool,
) -> Result<(), FitError> {
    let mut new: BTreeMap<String, String> = BTreeMap::new();
    let root = files.first().map(|f| f.rel.clone());
    let ordered = files.iter().skip(1).chain(files.first());
    for f in ordered {
        let p = dir.join(&f.rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        // Record before writing: a crash after the write still knows the file is ours (an
        // entry whose content does not match protects the file, which is the safe side).
        if !(root_is_users && Some(&f.rel) == root.as_ref()) {
            new.insert(f.rel.clone(), content_hash(f.text.as_bytes()));
            let mut so_far = old.clone();
            so_far.extend(new.clone());
            write_manifest(manifest_path, &so_far)?;
        }
        write_atomic(&p, f.text.as_bytes())?;
    }
    // Files of the previous tree the new one does not have, still as fittok wrote them.
    for (rel, hash) in &old {
        if new.contains_key(rel) {
            continue;
        }
        let p: PathBuf = dir.join(rel);
        if std::fs::read(&p).is_ok_and(|b| content_hash(&b) == *hash) {
            std::fs::remove_file(&p).map_err(io(&p))?;
        }
    }
    if new.is_empty() {
        if manifest_path.exists() {
            std::fs::remove_file(manifest_path).map_err(io(manifest_path))?;
        }
        return Ok(());
    }
    write_manifest(manifest_path, &new)
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
