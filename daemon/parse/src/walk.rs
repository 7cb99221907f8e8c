//! Stage 1: the files of a repository.
//!
//! Invariant: every file under the root is either returned as a [`SourceFile`] or reported once
//! in [`WalkReport::skipped`] with its reason (files of unknown languages are not reported: they
//! are simply not source). Nothing outside the root is ever read: symlinks are not followed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::model::Lang;

pub mod copies;
mod vendored;

/// Directories that hold vendored or generated code, never the project's own.
const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    "dist",
    "build",
    "vendor",
    "third_party",
    // Python's names for copied-in libraries (pip, setuptools; botocore). Copies kept under
    // other names are found by their own version ([`vendored`]).
    "_vendor",
    "vendored",
    ".venv",
    "venv",
    "__pycache__",
    ".git",
    ".hg",
    ".svn",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".next",
    ".nuxt",
    "coverage",
    "bower_components",
    ".gradle",
    ".idea",
    "site-packages",
    // Swift: CocoaPods and Carthage checkouts, SwiftPM and Xcode build output.
    "Pods",
    "Carthage",
    ".build",
    "DerivedData",
];

/// The language a file's `#!` line names, reading only its first bytes.
pub fn script_language(path: &Path) -> Option<Lang> {
    use std::io::Read;
    let mut head = [0u8; 128];
    let mut file = std::fs::File::open(path).ok()?;
    let n = file.read(&mut head).ok()?;
    Lang::from_shebang(&head[..n])
}

/// Whether a directory of this name is never walked (vendored, generated, VCS metadata).
pub fn is_skipped_dir(name: &str) -> bool {
    SKIPPED_DIRS.contains(&name)
}

#[derive(Debug, Clone, PartialEq)]
pub struct WalkOptions {
    /// Files above this many bytes are skipped (`FITTOK_MAX_FILE_BYTES`).
    pub max_file_bytes: u64,
    /// Whether secrets are redacted from what is read (`FITTOK_SCRUB`; on by default).
    pub scrub: bool,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            max_file_bytes: 1024 * 1024,
            scrub: true,
        }
    }
}

#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    TooLarge,
    Binary,
    Minified,
    Generated,
    Unreadable,
    SymlinkOutside,
    /// Environment files and keys are never read.
    Secret,
    /// A library copied into the project (see [`vendored`]).
    Vendored,
    /// One file concatenating the project's own sources (see [`copies`]).
    Amalgamation,
}

impl SkipReason {
    pub fn name(&self) -> &'static str {
        match self {
            SkipReason::TooLarge => "too large",
            SkipReason::Binary => "binary",
            SkipReason::Minified => "minified",
            SkipReason::Generated => "generated",
            SkipReason::Unreadable => "unreadable",
            SkipReason::SymlinkOutside => "symlink",
            SkipReason::Secret => "secret file",
            SkipReason::Vendored => "vendored",
            SkipReason::Amalgamation => "amalgamation",
        }
    }
}

#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Relative, `/`-separated.
    pub path: String,
    pub lang: Lang,
    /// The file's content, with secrets redacted (see [`crate::scrub`]).
    pub bytes: Vec<u8>,
    /// Size on disk (before redaction).
    pub size: u64,
    /// Modification time in nanoseconds since the Unix epoch (0 when unknown).
    pub mtime_ns: u64,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct WalkReport {
    /// Emptied once a build moves the bytes to its sources, so never persisted.
    #[serde(skip)]
    pub files: Vec<SourceFile>,
    /// (path, language if known, reason)
    pub skipped: Vec<(String, Option<Lang>, SkipReason)>,
    /// Walk errors (loops, permission denied on directories), as text.
    pub errors: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    #[error("repository path {0} does not exist")]
    Missing(PathBuf),
    #[error("repository path {0} is not a directory")]
    NotADirectory(PathBuf),
    /// The caller no longer wants the build (its repository left memory meanwhile).
    #[error("the build was cancelled")]
    Cancelled,
}

/// A file the walk would read: its path, language and metadata (bytes not read yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Relative, `/`-separated.
    pub path: String,
    pub lang: Lang,
    pub size: u64,
    /// Modification time in nanoseconds since the Unix epoch (0 when unknown).
    pub mtime_ns: u64,
}

/// The walk without reading: what would be read, what is skipped by name or size.
#[derive(Debug, Default)]
pub struct Listing {
    pub files: Vec<Listed>,
    pub skipped: Vec<(String, Option<Lang>, SkipReason)>,
    pub errors: Vec<String>,
    /// MSBuild project files (`*.csproj`, `Directory.Build.props`, `Directory.Build.targets`),
    /// relative and sorted: not code, but their `<Using>` items are imports of the C# files
    /// under them ([`crate::msbuild`]).
    pub project_files: Vec<String>,
}

/// Whether a file of no language is an MSBuild project file whose usings C# files inherit.
fn is_project_file(name: &str) -> bool {
    name.ends_with(".csproj")
        || name == "Directory.Build.props"
        || name == "Directory.Build.targets"
}

/// Lists `root`, honouring .gitignore, .ignore and .fittokignore; reads no file contents but
/// the first bytes of files without an extension (a `#!` line names a script's language).
/// Files come sorted by path.
pub fn list(root: &Path, opts: &WalkOptions) -> Result<Listing, WalkError> {
    if !root.exists() {
        return Err(WalkError::Missing(root.to_path_buf()));
    }
    if !root.is_dir() {
        return Err(WalkError::NotADirectory(root.to_path_buf()));
    }
    // Directories are read and files stat'ed on two threads at most: a save's update lists
    // the whole tree again (kafka: 5,800 files).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .follow_links(false)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(true)
        .require_git(false)
        .add_custom_ignore_filename(".fittokignore")
        .threads(threads)
        .filter_entry(|entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            !(is_dir
                && entry.depth() > 0
                && SKIPPED_DIRS.contains(&entry.file_name().to_string_lossy().as_ref()))
        })
        .build_parallel();
    let shared = std::sync::Mutex::new(Listing::default());
    walker.run(|| {
        let shared = &shared;
        Box::new(move |entry| {
            let found = match entry {
                Ok(entry) => classify(root, &entry, opts),
                Err(err) => Some(Found::Error(err.to_string())),
            };
            if let Some(found) = found {
                let mut listing = shared.lock().unwrap_or_else(|p| p.into_inner());
                match found {
                    Found::File(f) => listing.files.push(f),
                    Found::Skipped(path, lang, why) => listing.skipped.push((path, lang, why)),
                    Found::Error(e) => listing.errors.push(e),
                    Found::Project(path) => listing.project_files.push(path),
                }
            }
            ignore::WalkState::Continue
        })
    });
    let mut listing = shared.into_inner().unwrap_or_else(|p| p.into_inner());
    listing.skipped.sort();
    listing.errors.sort();
    listing.files.sort_by(|a, b| a.path.cmp(&b.path));
    listing.project_files.sort();
    drop_emitted_declarations(&mut listing);
    vendored::drop_vendored_packages(root, &mut listing);
    Ok(listing)
}

/// What the walk makes of one entry.
enum Found {
    File(Listed),
    Skipped(String, Option<Lang>, SkipReason),
    Error(String),
    Project(String),
}

/// One entry of the walk: a file to read, one skipped and why, or nothing (a directory, a
/// file of no language).
fn classify(root: &Path, entry: &ignore::DirEntry, opts: &WalkOptions) -> Option<Found> {
    let file_type = entry.file_type()?;
    let rel = entry
        .path()
        .strip_prefix(root)
        .ok()?
        .to_string_lossy()
        .replace('\\', "/");
    let by_name = Lang::from_path(&rel).or_else(|| {
        // A script without an extension: its `#!` line names the language.
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        (file_type.is_file() && !name.contains('.'))
            .then(|| script_language(entry.path()))
            .flatten()
    });
    let Some(lang) = by_name else {
        if file_type.is_file() && is_project_file(rel.rsplit('/').next().unwrap_or(&rel)) {
            return Some(Found::Project(rel));
        }
        // A link to a directory is not followed either; say so (`inspect` lists it).
        return file_type.is_symlink().then_some(Found::Skipped(
            rel,
            None,
            SkipReason::SymlinkOutside,
        ));
    };
    if file_type.is_symlink() {
        // Never follow: a link may point outside the root or into a loop.
        return Some(Found::Skipped(rel, Some(lang), SkipReason::SymlinkOutside));
    }
    if !file_type.is_file() {
        return None;
    }
    if crate::scrub::is_secret_file(rel.rsplit('/').next().unwrap_or(&rel)) {
        return Some(Found::Skipped(rel, Some(lang), SkipReason::Secret));
    }
    if is_generated_name(&rel) {
        return Some(Found::Skipped(rel, Some(lang), SkipReason::Generated));
    }
    let meta = entry.metadata().ok();
    let size = meta.as_ref().map_or(0, |m| m.len());
    let mtime_ns = meta
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    if size > opts.max_file_bytes {
        return Some(Found::Skipped(rel, Some(lang), SkipReason::TooLarge));
    }
    Some(Found::File(Listed {
        path: rel,
        lang,
        size,
        mtime_ns,
    }))
}

/// The stem of a TypeScript declaration file (`src/a.d.ts` → `src/a`), if `path` is one.
fn declaration_stem(path: &str) -> Option<&str> {
    [".d.ts", ".d.mts", ".d.cts"].into_iter().find_map(|ext| {
        let cut = path.len().checked_sub(ext.len())?;
        (path.is_char_boundary(cut) && path[cut..].eq_ignore_ascii_case(ext)).then(|| &path[..cut])
    })
}

/// Moves to `skipped` the declaration files a compiler emitted: a `.d.ts` beside a TypeScript
/// source of the same stem (`a.ts` → `a.d.ts`) repeats that source's signatures. A `.d.ts`
/// with no such source is written by hand — the typings of a JavaScript package (axios's
/// `index.d.ts` beside `index.js`), a project's shared type definitions — and is source:
/// fixes change it.
fn drop_emitted_declarations(listing: &mut Listing) {
    let sources: HashSet<String> = listing
        .files
        .iter()
        .filter(|f| {
            matches!(f.lang, Lang::TypeScript | Lang::Tsx) && declaration_stem(&f.path).is_none()
        })
        .filter_map(|f| f.path.rsplit_once('.').map(|(stem, _)| stem.to_string()))
        .collect();
    let (emitted, kept): (Vec<Listed>, Vec<Listed>) = std::mem::take(&mut listing.files)
        .into_iter()
        .partition(|f| declaration_stem(&f.path).is_some_and(|stem| sources.contains(stem)));
    listing.files = kept;
    listing.skipped.extend(
        emitted
            .into_iter()
            .map(|f| (f.path, Some(f.lang), SkipReason::Generated)),
    );
}

/// Reads one listed file, or says why it is skipped (unreadable, binary, minified, generated).
pub fn read(root: &Path, listed: &Listed, opts: &WalkOptions) -> Result<SourceFile, SkipReason> {
    let bytes = std::fs::read(root.join(&listed.path)).map_err(|err| {
        tracing::debug!(path = %listed.path, %err, "unreadable file");
        SkipReason::Unreadable
    })?;
    if let Some(reason) = classify_content(&bytes, listed.lang) {
        return Err(reason);
    }
    Ok(SourceFile {
        path: listed.path.clone(),
        lang: listed.lang,
        // The size read, not the size listed: the file may have changed in between.
        size: bytes.len() as u64,
        mtime_ns: listed.mtime_ns,
        bytes: if opts.scrub {
            crate::scrub::scrub_bytes(&listed.path, bytes)
        } else {
            bytes
        },
    })
}

/// Walks `root`, honouring .gitignore, .ignore and .fittokignore, and reads every source file.
pub fn walk(root: &Path, opts: &WalkOptions) -> Result<WalkReport, WalkError> {
    let listing = list(root, opts)?;
    let mut report = WalkReport {
        files: Vec::with_capacity(listing.files.len()),
        skipped: listing.skipped,
        errors: listing.errors,
    };
    let read_all = crate::par::map(&listing.files, |listed| read(root, listed, opts));
    for (listed, file) in listing.files.iter().zip(read_all) {
        match file {
            Ok(file) => report.files.push(file),
            Err(reason) => report
                .skipped
                .push((listed.path.clone(), Some(listed.lang), reason)),
        }
    }
    report.skipped.sort();
    Ok(report)
}

fn is_generated_name(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.contains(".min.")
        || file.ends_with(".bundle.js")
        || file.ends_with("_pb2.py")
        || file.ends_with(".pb.go")
        || file.ends_with(".pb.cc")
        || file.ends_with(".pb.h")
        || file.ends_with("_generated.go")
        || file.ends_with(".generated.ts")
        || file.ends_with(".g.cs")
        || file.ends_with(".g.i.cs")
        || file.ends_with(".designer.cs")
        || file.ends_with(".Designer.cs")
}

/// Why a file's content disqualifies it, if it does: NUL bytes mean binary; very long lines in
/// scripts mean a minified bundle; a generated-code banner means generated.
pub fn classify_content(bytes: &[u8], lang: Lang) -> Option<SkipReason> {
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return Some(SkipReason::Binary);
    }
    if matches!(lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx) && bytes.len() > 4096 {
        let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
        if bytes.len() / lines > 300 {
            return Some(SkipReason::Minified);
        }
    }
    let banner = String::from_utf8_lossy(&head[..head.len().min(1024)]).to_ascii_lowercase();
    if banner.contains("code generated") && banner.contains("do not edit")
        || banner.contains("@generated")
        || banner.contains("autogenerated file. do not edit")
    {
        return Some(SkipReason::Generated);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `files` (path, text) under a fresh temporary directory named after `tag` and
    /// lists it; the directory is returned for removal.
    fn listing_of(tag: &str, files: &[(&str, &str)]) -> (PathBuf, Listing) {
        let dir = crate::testing::temp_repo(&format!("walk-{tag}"), files);
        let listing = list(&dir, &WalkOptions::default()).unwrap();
        (dir, listing)
    }

    #[test]
    fn generated_names() {
        for generated in [
            "api/user.pb.cc",
            "api/user.pb.h",
            "gen/x.pb.go",
            "Form.Designer.cs",
        ] {
            assert!(is_generated_name(generated), "{generated}");
        }
        for own in ["src/parser.cc", "include/pb.h", "src/user.cpp"] {
            assert!(!is_generated_name(own), "{own}");
        }
    }

    #[test]
    fn declarations_without_their_source_are_listed() {
        let (dir, listing) = listing_of(
            "dts",
            &[
                ("index.js", "module.exports = {};\n"),
                (
                    "index.d.ts",
                    "export declare function get(url: string): void;\n",
                ),
                (
                    "src/theme.D.TS",
                    "export interface Theme { mode: number }\n",
                ),
                ("src/emit.ts", "export function emit(): void {}\n"),
                ("src/emit.d.ts", "export declare function emit(): void;\n"),
                ("src/view.tsx", "export const View = () => null;\n"),
                ("src/view.d.ts", "export declare const View: () => null;\n"),
            ],
        );
        let listed: Vec<&str> = listing.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            listed,
            [
                "index.d.ts",
                "index.js",
                "src/emit.ts",
                "src/theme.D.TS",
                "src/view.tsx"
            ]
        );
        let skipped: Vec<(&str, SkipReason)> = listing
            .skipped
            .iter()
            .map(|(p, _, r)| (p.as_str(), r.clone()))
            .collect();
        assert_eq!(
            skipped,
            [
                ("src/emit.d.ts", SkipReason::Generated),
                ("src/view.d.ts", SkipReason::Generated)
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_versioned_package_inside_the_project_is_skipped_as_vendored() {
        let (dir, listing) = listing_of(
            "vendored",
            &[
                ("shop/__init__.py", "__version__ = '2.1'\n"),
                ("shop/cart.py", "def add(item): pass\n"),
                ("shop/util/__init__.py", "from .. import __version__\n"),
                ("shop/util/money.py", "def cents(x): pass\n"),
                ("shop/packages/__init__.py", "from . import retry\n"),
                ("shop/packages/retry/__init__.py", "__version__ = '1.3'\n"),
                ("shop/packages/retry/backoff.py", "def wait(n): pass\n"),
                ("shop/packages/retry/inner/x.py", "def y(): pass\n"),
                ("shop/_vendor/six.py", "def b(s): pass\n"),
                // A namespace package's children are released on their own: not vendored.
                (
                    "ns/__init__.py",
                    "__path__ = __import__('pkgutil').extend_path(__path__, __name__)\n",
                ),
                ("ns/blob/__init__.py", "__version__ = '12.0'\n"),
                ("ns/blob/client.py", "def upload(): pass\n"),
            ],
        );
        let listed: Vec<&str> = listing.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            listed,
            [
                "ns/__init__.py",
                "ns/blob/__init__.py",
                "ns/blob/client.py",
                "shop/__init__.py",
                "shop/cart.py",
                "shop/packages/__init__.py",
                "shop/util/__init__.py",
                "shop/util/money.py",
            ]
        );
        let vendored: Vec<&str> = listing
            .skipped
            .iter()
            .filter(|(_, _, r)| *r == SkipReason::Vendored)
            .map(|(p, _, _)| p.as_str())
            .collect();
        assert_eq!(
            vendored,
            [
                "shop/packages/retry/__init__.py",
                "shop/packages/retry/backoff.py",
                "shop/packages/retry/inner/x.py",
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn binary_minified_generated_by_content() {
        assert_eq!(
            classify_content(b"abc\0def", Lang::Python),
            Some(SkipReason::Binary)
        );
        let minified = "var a=1;".repeat(2000);
        assert_eq!(
            classify_content(minified.as_bytes(), Lang::JavaScript),
            Some(SkipReason::Minified)
        );
        assert_eq!(
            classify_content(
                b"// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n",
                Lang::Go
            ),
            Some(SkipReason::Generated)
        );
        assert_eq!(
            classify_content(b"def f():\n    pass\n", Lang::Python),
            None
        );
    }
}

#[cfg(test)]
mod script_tests {
    use super::*;

    #[test]
    fn scripts_without_an_extension_are_listed_by_their_shebang() {
        let dir = std::env::temp_dir().join(format!("fittok-walk-scripts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("bin/deploy"), "#!/usr/bin/env ruby\nputs 1\n").unwrap();
        std::fs::write(dir.join("bin/run"), "#!/bin/sh\necho 1\n").unwrap();
        std::fs::write(dir.join("LICENSE"), "MIT License\n").unwrap();
        std::fs::write(dir.join("Rakefile"), "task :default\n").unwrap();
        let listing = list(&dir, &WalkOptions::default()).unwrap();
        let files: Vec<(&str, Lang)> = listing
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.lang))
            .collect();
        assert_eq!(
            files,
            vec![("Rakefile", Lang::Ruby), ("bin/deploy", Lang::Ruby)]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
