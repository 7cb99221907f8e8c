//! Where an import points: per language family, module names → files.

use std::collections::HashMap;

use crate::model::{Lang, ParsedFile};

/// Indexes of module names for every file of a repository.
#[derive(Default)]
pub struct ModuleIndex {
    /// Python dotted names (every suffix of the path, so `src/` layouts resolve) → files.
    python: HashMap<String, Vec<u32>>,
    /// JS/TS path without extension (and `dir` for `dir/index.*`) → files.
    js: HashMap<String, Vec<u32>>,
    /// JS/TS modules under a `src` directory by package-style name: `packages/zod/src/v4`
    /// (its `index.ts`) as `zod/v4`, `packages/zod/src` as `zod` — what a monorepo's bare
    /// imports of its own packages name. A name two directories claim maps to nothing.
    js_packages: HashMap<String, JsPackage>,
    /// Java packages and C# namespaces, per language family: name → files declaring it.
    packages: HashMap<(u8, String), Vec<u32>>,
    /// Go directory → files (excluding tests of other packages is not needed for linking).
    go_dirs: HashMap<String, Vec<u32>>,
    /// Rust (crate root dir, module path) → files.
    rust: HashMap<(String, String), Vec<u32>>,
    /// Rust crate root dirs by their crate-ish name (`grep_searcher`, `searcher`).
    rust_crates: HashMap<String, Vec<String>>,
    rust_roots: Vec<String>,
    /// Ruby feature names (every suffix of the path without `.rb`, so `lib/` on the load path
    /// resolves `require "a/b"`) → files.
    ruby: HashMap<String, Vec<u32>>,
    /// C files by every suffix of their path (`#include "a/b.h"` names one), and their
    /// paths (to prefer an `include/` directory).
    c: HashMap<String, Vec<u32>>,
    c_paths: HashMap<u32, String>,
    /// Ruby feature names relative to a `lib/` directory (the load path), preferred.
    ruby_lib: HashMap<String, Vec<u32>>,
    /// Package name of the Go files at the repository root, if any.
    go_root_package: Option<String>,
    /// Swift files whose module a package manifest names (its target's directory holds
    /// them), overriding the module their path suggests.
    swift_modules: HashMap<u32, String>,
}

pub use crate::model::dir_of;

fn strip_ext(path: &str) -> &str {
    match path.rsplit_once('.') {
        Some((stem, _)) if !stem.ends_with('/') => stem,
        _ => path,
    }
}

/// (crate root, module path) of a Rust file. The crate root is the nearest ancestor directory
/// holding a `lib.rs` or `main.rs` (`crates/x/src`, or `crates/core` without a `src/`):
/// `crates/x/src/a/b.rs` → (`crates/x/src`, `a::b`).
pub fn rust_module(path: &str, roots: &[String]) -> (String, String) {
    let root = roots
        .iter()
        .filter(|r| r.is_empty() || path.starts_with(&format!("{r}/")))
        .max_by_key(|r| r.len())
        .cloned()
        .unwrap_or_else(|| dir_of(path).to_string());
    let rel = if root.is_empty() {
        path
    } else {
        &path[root.len() + 1..]
    };
    let rel = strip_ext(rel);
    let mut segs: Vec<&str> = rel.split('/').collect();
    if segs.len() == 1 && matches!(segs[0], "lib" | "main") || segs.last() == Some(&"mod") {
        segs.pop();
    }
    (root, segs.join("::"))
}

/// Swift files inside a directory a `Package.swift` declares as a target's: that target is
/// their module (the deepest declared directory wins).
fn swift_manifest_modules(files: &[std::sync::Arc<ParsedFile>]) -> HashMap<u32, String> {
    let mut targets: Vec<(&str, &str)> = files
        .iter()
        .flat_map(|f| {
            f.targets
                .iter()
                .map(|(name, dir)| (name.as_str(), dir.as_str()))
        })
        .collect();
    // Deepest first; among equals, by name so the choice does not depend on file order.
    targets.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.cmp(b)));
    let mut out = HashMap::new();
    if targets.is_empty() {
        return out;
    }
    for (i, f) in files.iter().enumerate() {
        if f.lang != Lang::Swift {
            continue;
        }
        let found = targets.iter().find(|(_, dir)| {
            dir.is_empty()
                || f.path.len() > dir.len()
                    && f.path.starts_with(dir)
                    && f.path.as_bytes()[dir.len()] == b'/'
        });
        if let Some((name, _)) = found {
            out.insert(i as u32, name.to_string());
        }
    }
    out
}

/// The package-style name of a JS/TS module stem under a `src` directory, and the package
/// directory: `packages/zod/src/v4/index` → (`zod/v4/index`, `packages/zod`), `packages/zod/src`
/// → (`zod`, `packages/zod`). `None` outside a `src` directory or for `src` at the root.
fn js_package_name(stem: &str) -> Option<(String, &str)> {
    let (package_dir, rest) = match stem.split_once("/src/") {
        Some((dir, rest)) => (dir, Some(rest)),
        None => (stem.strip_suffix("/src")?, None),
    };
    let package = package_dir.rsplit('/').next().filter(|p| !p.is_empty())?;
    let name = match rest {
        Some(rest) => format!("{package}/{rest}"),
        None => package.to_string(),
    };
    Some((name, package_dir))
}

/// Files under a package-style name; a name that two package directories claim (two
/// `core/src` trees) is left to neither.
fn add_js_package(
    table: &mut HashMap<String, JsPackage>,
    name: String,
    package_dir: &str,
    file: u32,
) {
    let entry = table.entry(name).or_insert_with(|| JsPackage {
        dir: package_dir.to_string(),
        files: Some(Vec::new()),
    });
    if entry.dir != package_dir {
        entry.files = None;
    }
    if let Some(files) = &mut entry.files {
        files.push(file);
    }
}

/// The files one package directory holds under a package-style name (`None`: claimed by two).
#[derive(Debug, Clone, Default)]
struct JsPackage {
    dir: String,
    files: Option<Vec<u32>>,
}

/// Directories that are Rust crate roots: they hold `lib.rs` or `main.rs`.
fn rust_roots(files: &[std::sync::Arc<ParsedFile>]) -> Vec<String> {
    let mut roots: Vec<String> = files
        .iter()
        .filter(|f| f.lang == Lang::Rust)
        .filter(|f| {
            let name = f.path.rsplit('/').next().unwrap_or(&f.path);
            name == "lib.rs" || name == "main.rs"
        })
        .map(|f| dir_of(&f.path).to_string())
        .collect();
    roots.sort();
    roots.dedup();
    roots
}

impl ModuleIndex {
    pub fn build(files: &[std::sync::Arc<ParsedFile>]) -> Self {
        let mut ix = ModuleIndex {
            rust_roots: rust_roots(files),
            ..ModuleIndex::default()
        };
        ix.swift_modules = swift_manifest_modules(files);
        for (i, f) in files.iter().enumerate() {
            let i = i as u32;
            match f.lang {
                Lang::Python => {
                    let stem = strip_ext(&f.path);
                    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
                    let parts: Vec<&str> = stem.split('/').collect();
                    for start in 0..parts.len() {
                        ix.python
                            .entry(parts[start..].join("."))
                            .or_default()
                            .push(i);
                    }
                }
                Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
                    let stem = strip_ext(&f.path);
                    ix.js.entry(stem.to_string()).or_default().push(i);
                    // `dir/index.js` is also the module `dir`; the root's is `require('../')`.
                    let dir = match stem {
                        "index" => Some(""),
                        _ => stem.strip_suffix("/index"),
                    };
                    if let Some(dir) = dir {
                        ix.js.entry(dir.to_string()).or_default().push(i);
                    }
                    for stem in [Some(stem), dir].into_iter().flatten() {
                        if let Some((name, package_dir)) = js_package_name(stem) {
                            add_js_package(&mut ix.js_packages, name, package_dir, i);
                        }
                    }
                }
                Lang::Java
                | Lang::CSharp
                | Lang::Kotlin
                | Lang::Scala
                | Lang::Php
                | Lang::Swift => {
                    if let Some(pkg) = ix.package_of(i, f) {
                        ix.packages
                            .entry((f.lang.family(), pkg.to_string()))
                            .or_default()
                            .push(i);
                    }
                }
                Lang::Go => {
                    if dir_of(&f.path).is_empty() && !f.path.ends_with("_test.go") {
                        ix.go_root_package = f.package.clone();
                    }
                    ix.go_dirs
                        .entry(dir_of(&f.path).to_string())
                        .or_default()
                        .push(i);
                }
                Lang::Rust => {
                    let (root, module) = rust_module(&f.path, &ix.rust_roots);
                    if module.is_empty() {
                        let crate_dir = root.strip_suffix("/src").unwrap_or(&root);
                        let name = crate_dir.rsplit('/').next().unwrap_or(crate_dir);
                        if !name.is_empty() {
                            let norm = name.replace('-', "_");
                            ix.rust_crates.entry(norm).or_default().push(root.clone());
                        }
                    }
                    ix.rust.entry((root, module)).or_default().push(i);
                }
                Lang::Ruby => {
                    let stem = strip_ext(&f.path);
                    let parts: Vec<&str> = stem.split('/').collect();
                    for start in 0..parts.len() {
                        let feature = parts[start..].join("/");
                        if start > 0 && parts[start - 1] == "lib" {
                            ix.ruby_lib.entry(feature.clone()).or_default().push(i);
                        }
                        ix.ruby.entry(feature).or_default().push(i);
                    }
                }
                Lang::C | Lang::Cpp => {
                    ix.c_paths.insert(i, f.path.clone());
                    let parts: Vec<&str> = f.path.split('/').collect();
                    for start in 0..parts.len() {
                        ix.c.entry(parts[start..].join("/")).or_default().push(i);
                    }
                }
                Lang::Markdown => {}
            }
        }
        ix
    }

    /// Files a module string names, seen from file `from`.
    pub fn resolve(&self, from: &ParsedFile, module: &str) -> Vec<u32> {
        match from.lang {
            Lang::Python => self.python_module(&from.path, module),
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => self.js_module(&from.path, module),
            Lang::Java | Lang::CSharp | Lang::Kotlin | Lang::Scala | Lang::Php | Lang::Swift => {
                self.package(from.lang, module)
            }
            Lang::Go => self.go_package(module),
            Lang::Rust => self.rust_path(&from.path, module),
            Lang::Ruby => self.ruby_feature(&from.path, module),
            Lang::C | Lang::Cpp => self.c_include(&from.path, module),
            Lang::Markdown => Vec::new(),
        }
    }

    /// `#include "a/b.h"`: beside the including file first; then, as for `<a/b.h>`, a file
    /// whose path ends in `a/b.h` — one under an `include/` directory if several do.
    fn c_include(&self, from: &str, module: &str) -> Vec<u32> {
        let (quoted, name) = match module.strip_prefix('<').and_then(|m| m.strip_suffix('>')) {
            Some(m) => (false, m),
            None => (true, module),
        };
        if quoted {
            let mut parts: Vec<&str> = dir_of(from).split('/').filter(|s| !s.is_empty()).collect();
            for seg in name.split('/') {
                match seg {
                    "." | "" => {}
                    ".." => {
                        parts.pop();
                    }
                    s => parts.push(s),
                }
            }
            if let Some(files) = self.c.get(&parts.join("/")) {
                return files.clone();
            }
        }
        let Some(files) = self.c.get(name.trim_start_matches("./")) else {
            return Vec::new();
        };
        if files.len() > 1 {
            let in_include: Vec<u32> = files
                .iter()
                .copied()
                .filter(|&f| self.c_paths.get(&f).is_some_and(|p| p.contains("include/")))
                .collect();
            if !in_include.is_empty() {
                return in_include;
            }
        }
        files.clone()
    }

    /// `require "a/b"` (a feature on the load path: any directory's `a/b.rb`, `lib/` first)
    /// or `require_relative "x"` (given as `./x`: beside the requiring file).
    fn ruby_feature(&self, from: &str, module: &str) -> Vec<u32> {
        let module = module.strip_suffix(".rb").unwrap_or(module);
        if let Some(rel) = module.strip_prefix("./") {
            let mut parts: Vec<&str> = dir_of(from).split('/').filter(|s| !s.is_empty()).collect();
            for seg in rel.split('/') {
                match seg {
                    "." | "" => {}
                    ".." => {
                        parts.pop();
                    }
                    s => parts.push(s),
                }
            }
            return self.ruby.get(&parts.join("/")).cloned().unwrap_or_default();
        }
        // Several files may end in `a/b.rb`: the ones under a `lib/` win, as the load path
        // says.
        self.ruby_lib
            .get(module)
            .or_else(|| self.ruby.get(module))
            .cloned()
            .unwrap_or_default()
    }

    fn python_module(&self, from: &str, module: &str) -> Vec<u32> {
        let dots = module.chars().take_while(|&c| c == '.').count();
        if dots == 0 {
            return self.python.get(module).cloned().unwrap_or_default();
        }
        // Relative: one dot is the importing file's package, each more dot one level up.
        let mut dir: Vec<&str> = dir_of(from).split('/').filter(|s| !s.is_empty()).collect();
        for _ in 1..dots {
            dir.pop();
        }
        let rest = &module[dots..];
        let mut path = dir.join("/");
        if !rest.is_empty() {
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(&rest.replace('.', "/"));
        }
        self.python
            .get(&path.replace('/', "."))
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .collect()
    }

    /// A Python module's submodule: `from pkg import mod`.
    pub fn python_submodule(&self, from: &str, module: &str, name: &str) -> Vec<u32> {
        let joined = if module.ends_with('.') {
            format!("{module}{name}")
        } else {
            format!("{module}.{name}")
        };
        self.python_module(from, &joined)
    }

    fn js_module(&self, from: &str, module: &str) -> Vec<u32> {
        if !module.starts_with('.') {
            // A bare specifier: a package of this repository, or one from outside it.
            let name = match module.strip_prefix('@') {
                // `@scope/name/sub`: the package directory is named like `name`.
                Some(scoped) => scoped.split_once('/').map_or(scoped, |(_, rest)| rest),
                None => module,
            };
            let name = [".js", ".mjs", ".cjs", ".ts", ".jsx", ".tsx"]
                .iter()
                .find_map(|ext| name.strip_suffix(ext))
                .unwrap_or(name);
            return self
                .js_packages
                .get(name)
                .and_then(|p| p.files.clone())
                .unwrap_or_default();
        }
        let mut parts: Vec<&str> = dir_of(from).split('/').filter(|s| !s.is_empty()).collect();
        for seg in module.split('/') {
            match seg {
                "." | "" => {}
                ".." => {
                    parts.pop();
                }
                s => parts.push(s),
            }
        }
        let joined = parts.join("/");
        if let Some(files) = self.js.get(&joined) {
            return files.clone();
        }
        // `./x.js` written with its extension (or `.js` pointing at a `.ts` source).
        self.js.get(strip_ext(&joined)).cloned().unwrap_or_default()
    }

    /// The package (Java, C#, PHP namespace; Swift module) file `i` belongs to.
    pub fn package_of<'f>(&'f self, i: u32, f: &'f ParsedFile) -> Option<&'f str> {
        self.swift_modules
            .get(&i)
            .map(String::as_str)
            .or(f.package.as_deref())
    }

    fn packages_named(&self, lang: Lang, name: &str) -> Option<&Vec<u32>> {
        self.packages.get(&(lang.family(), name.to_string()))
    }

    /// The files of a Java package or C# namespace a module string names: exactly, or — for
    /// `a.b.C` (a class) or `a.b.C.m` (a static member) — its longest package prefix.
    fn package(&self, lang: Lang, module: &str) -> Vec<u32> {
        if let Some(files) = self.packages_named(lang, module) {
            return files.clone();
        }
        let mut m = module;
        while let Some((prefix, _)) = m.rsplit_once('.') {
            if let Some(files) = self.packages_named(lang, prefix) {
                return files.clone();
            }
            m = prefix;
        }
        Vec::new()
    }

    /// The files whose top-level names a file of `package` sees without importing: its own
    /// package (Java); its namespace and every enclosing one (C#: code in `A.B` sees `A`).
    pub fn same_package(&self, lang: Lang, package: Option<&str>) -> Vec<u32> {
        let Some(package) = package else {
            return Vec::new();
        };
        let mut out: Vec<u32> = self
            .packages_named(lang, package)
            .cloned()
            .unwrap_or_default();
        if lang == Lang::CSharp {
            let mut p = package;
            while let Some((parent, _)) = p.rsplit_once('.') {
                out.extend(self.packages_named(lang, parent).into_iter().flatten());
                p = parent;
            }
        }
        out
    }

    fn go_package(&self, import_path: &str) -> Vec<u32> {
        // The longest directory that is a suffix of the import path.
        let segs: Vec<&str> = import_path.split('/').collect();
        for start in 0..segs.len() {
            let suffix = segs[start..].join("/");
            if let Some(files) = self.go_dirs.get(&suffix) {
                return files.clone();
            }
        }
        // The module root itself (`github.com/spf13/cobra` is the repository's top directory):
        // it matches when the root package carries the import path's last element as its name.
        match (self.go_dirs.get(""), segs.last()) {
            (Some(files), Some(last)) if self.go_root_package.as_deref() == Some(*last) => {
                files.clone()
            }
            _ => Vec::new(),
        }
    }

    pub fn go_same_package(&self, path: &str) -> Vec<u32> {
        self.go_dirs.get(dir_of(path)).cloned().unwrap_or_default()
    }

    fn rust_path(&self, from: &str, path: &str) -> Vec<u32> {
        let (root, module) = rust_module(from, &self.rust_roots);
        let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let mut base: Vec<String> = Vec::new();
        let mut roots = vec![root.clone()];
        // Only for the child-module guess: the module itself is no answer.
        let mut strict = false;
        match segs.first().copied() {
            Some("crate") => {
                segs.remove(0);
            }
            Some("self") => {
                segs.remove(0);
                base = split_module(&module);
            }
            Some("super") => {
                base = split_module(&module);
                while segs.first() == Some(&"super") {
                    segs.remove(0);
                    base.pop();
                }
            }
            Some(first) => {
                if let Some(crate_roots) = self.rust_crates.get(first).or_else(|| {
                    first
                        .split_once('_')
                        .and_then(|(_, rest)| self.rust_crates.get(rest))
                }) {
                    segs.remove(0);
                    roots = crate_roots.clone();
                } else {
                    // A child module of the current one (`mod foo; use foo::X;`).
                    base = split_module(&module);
                    strict = true;
                }
            }
            None => return Vec::new(),
        }
        let min_len = base.len() + usize::from(strict);
        for root in &roots {
            let mut full = base.clone();
            full.extend(segs.iter().map(|s| s.to_string()));
            // The longest prefix that names a module file: `a::b::Type` lives in `a/b.rs`.
            while full.len() >= min_len {
                if let Some(files) = self.rust.get(&(root.clone(), full.join("::"))) {
                    return files.clone();
                }
                if full.pop().is_none() {
                    break;
                }
            }
        }
        Vec::new()
    }
}

fn split_module(module: &str) -> Vec<String> {
    module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_module_paths() {
        let roots = vec!["src".to_string(), "crates/core".to_string()];
        assert_eq!(rust_module("src/lib.rs", &roots), ("src".into(), "".into()));
        assert_eq!(
            rust_module("crates/core/flags/mod.rs", &roots),
            ("crates/core".into(), "flags".into())
        );
        assert_eq!(
            rust_module("src/a/b.rs", &roots),
            ("src".into(), "a::b".into())
        );
        assert_eq!(
            rust_module("tests/it.rs", &roots),
            ("tests".into(), "it".into())
        );
    }
}
