//! The data model shared by every stage: languages, definitions, references, parsed files.
//!
//! A [`ParsedFile`] is everything the parser learned from one file, *before* linking: its
//! definitions, the imports it declares, and the references it makes by name. Linking is a pure
//! function of the set of parsed files, which is what keeps incremental updates exact.

use serde::{Deserialize, Serialize};

mod references;
pub use references::{Reference, References, ReferencesBuilder};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Java,
    Go,
    Rust,
    CSharp,
    Ruby,
    C,
    Cpp,
    Kotlin,
    Scala,
    Php,
    Swift,
    Markdown,
}

impl Lang {
    pub const ALL: [Lang; 16] = [
        Lang::Python,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Java,
        Lang::Go,
        Lang::Rust,
        Lang::CSharp,
        Lang::Ruby,
        Lang::C,
        Lang::Cpp,
        Lang::Kotlin,
        Lang::Scala,
        Lang::Php,
        Lang::Swift,
        Lang::Markdown,
    ];

    /// The language of a path, by extension (or, for Ruby's build files, by name). A `.d.ts`
    /// declaration file is TypeScript; the walk leaves out the ones a compiler wrote
    /// ([`crate::walk::list`]).
    pub fn from_path(path: &str) -> Option<Lang> {
        let name = path.rsplit('/').next().unwrap_or(path);
        if matches!(
            name,
            "Rakefile" | "Gemfile" | "Guardfile" | "Vagrantfile" | "Podfile" | "Fastfile"
        ) {
            return Some(Lang::Ruby);
        }
        let lower = path.to_ascii_lowercase();
        let ext = lower.rsplit_once('.')?.1;
        Some(match ext {
            "py" | "pyi" => Lang::Python,
            "js" | "jsx" | "mjs" | "cjs" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "java" => Lang::Java,
            "go" => Lang::Go,
            "rs" => Lang::Rust,
            "cs" => Lang::CSharp,
            "rb" | "rake" | "gemspec" => Lang::Ruby,
            "c" | "h" => Lang::C,
            "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "tpp" | "inl" => {
                Lang::Cpp
            }
            "kt" | "kts" => Lang::Kotlin,
            "scala" | "sc" => Lang::Scala,
            "php" => Lang::Php,
            "swift" => Lang::Swift,
            "md" | "markdown" => Lang::Markdown,
            _ => return None,
        })
    }

    /// The language a script's `#!` line names (`#!/usr/bin/env python3`, `#!/usr/bin/ruby -w`),
    /// for files without an extension.
    pub fn from_shebang(head: &[u8]) -> Option<Lang> {
        let line = head.strip_prefix(b"#!")?;
        let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
        let line = std::str::from_utf8(line).ok()?;
        let mut words = line.split_whitespace();
        let mut program = words.next()?.rsplit('/').next()?;
        if program == "env" {
            program = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
        }
        let program = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        Some(match program {
            "python" | "pypy" => Lang::Python,
            "node" | "nodejs" | "deno" | "bun" => Lang::JavaScript,
            "ts-node" | "tsx" => Lang::TypeScript,
            "ruby" | "jruby" => Lang::Ruby,
            "php" => Lang::Php,
            "swift" => Lang::Swift,
            "scala" | "scala-cli" | "amm" => Lang::Scala,
            "kotlin" | "kotlinc" | "kscript" => Lang::Kotlin,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Java => "java",
            Lang::Go => "go",
            Lang::Rust => "rust",
            Lang::CSharp => "csharp",
            Lang::Ruby => "ruby",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::Kotlin => "kotlin",
            Lang::Scala => "scala",
            Lang::Php => "php",
            Lang::Swift => "swift",
            Lang::Markdown => "markdown",
        }
    }

    /// Languages whose imports name one type (or function) of a package (Java, C#, PHP) or a
    /// whole module (Swift): an import is not a re-export, and a file depends on the imported
    /// type's file only.
    pub fn has_classes_only(self) -> bool {
        matches!(
            self,
            Lang::Java | Lang::CSharp | Lang::Kotlin | Lang::Scala | Lang::Php | Lang::Swift
        )
    }

    /// Languages where an unqualified call inside a class is one of its methods (implicit
    /// `this` / `self`).
    pub fn implicit_self_calls(self) -> bool {
        matches!(
            self,
            Lang::Java
                | Lang::CSharp
                | Lang::Ruby
                | Lang::Kotlin
                | Lang::Scala
                | Lang::Swift
                | Lang::Cpp
        )
    }

    /// Languages whose modules resolve into each other (TS imports JS and back).
    pub fn family(self) -> u8 {
        match self {
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => 1,
            Lang::Python => 2,
            // Kotlin, Scala and Java call each other, through the same packages.
            Lang::Java | Lang::Kotlin | Lang::Scala => 3,
            Lang::Go => 4,
            Lang::Rust => 5,
            Lang::Markdown => 6,
            Lang::CSharp => 7,
            Lang::Ruby => 8,
            // C++ includes C headers and calls C functions.
            Lang::C | Lang::Cpp => 9,
            Lang::Php => 10,
            Lang::Swift => 11,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefKind {
    Function,
    Method,
    Constructor,
    Class,
    Struct,
    Enum,
    Trait,
    Interface,
    Impl,
    Record,
    TypeAlias,
    Constant,
    Module,
    Macro,
    Section,
    /// A whole source file: its outline (module-level code and top-level signatures).
    File,
    /// Code outside every definition: an import block, module-level statements, a type's
    /// fields (see `parse::regions`). Not a member in outlines; a node of its own in ranking.
    Region,
}

impl DefKind {
    pub fn name(self) -> &'static str {
        match self {
            DefKind::Function => "function",
            DefKind::Method => "method",
            DefKind::Constructor => "constructor",
            DefKind::Class => "class",
            DefKind::Struct => "struct",
            DefKind::Enum => "enum",
            DefKind::Trait => "trait",
            DefKind::Interface => "interface",
            DefKind::Impl => "impl",
            DefKind::Record => "record",
            DefKind::TypeAlias => "type_alias",
            DefKind::Constant => "constant",
            DefKind::Module => "module",
            DefKind::Macro => "macro",
            DefKind::Section => "section",
            DefKind::File => "file",
            DefKind::Region => "region",
        }
    }

    /// Kinds that hold methods: a call `X.m()` / `X::m()` looks for `m` among their children.
    pub fn is_type(self) -> bool {
        matches!(
            self,
            DefKind::Class
                | DefKind::Struct
                | DefKind::Enum
                | DefKind::Trait
                | DefKind::Interface
                | DefKind::Record
                | DefKind::TypeAlias
        )
    }

    pub fn is_container(self) -> bool {
        matches!(
            self,
            DefKind::Class
                | DefKind::Struct
                | DefKind::Enum
                | DefKind::Trait
                | DefKind::Interface
                | DefKind::Impl
                | DefKind::Record
                | DefKind::Module
        )
    }

    pub fn is_callable(self) -> bool {
        matches!(
            self,
            DefKind::Function | DefKind::Method | DefKind::Constructor | DefKind::Macro
        )
    }
}

/// One definition in one file. Lines are 1-based and inclusive; bytes are a half-open range
/// into the file's bytes as read from disk (so offsets stay honest for non-UTF-8 files).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    pub name: String,
    pub qualified_name: String,
    pub kind: DefKind,
    pub start_line: u32,
    pub end_line: u32,
    pub start_byte: u32,
    pub end_byte: u32,
    pub signature: String,
    pub doc: Option<String>,
    /// Index of the enclosing definition in the same file.
    pub parent: Option<u32>,
    /// Inside test-only code (`#[cfg(test)]` module, a test file).
    pub is_test: bool,
    /// A constant that is mostly string literal over several lines: help text, a template,
    /// a message table — prose held in code, ranked like documentation.
    #[serde(default)]
    pub is_prose: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    Call,
    /// A macro invocation (`name!(…)`): resolves to macros only.
    MacroCall,
    Type,
    Inherits,
    Implements,
}

/// An import as written: a module (dotted, slashed or `::` path, or a string literal) and the
/// names it binds in the importing file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// The module as written; empty for this file's own exports (see [`Import::own`]).
    pub module: String,
    /// (name in the module, local alias). Empty with `whole_module` set: `import x as y`.
    pub names: Vec<(String, String)>,
    /// The local name bound to the whole module, if any (`import numpy as np` → `np`).
    pub module_alias: Option<String>,
    /// `from x import *`, `use a::*`, Java `import a.b.*`.
    pub wildcard: bool,
    pub line: u32,
}

impl Import {
    /// An import of everything `module` defines (`import './x'`, `require "x"`, `#include`,
    /// a C# namespace), at `line`.
    pub fn everything(module: String, line: u32) -> Import {
        Import {
            module,
            names: Vec::new(),
            module_alias: None,
            wildcard: true,
            line,
        }
    }

    /// This file's own definitions exported under other names, as (definition, exported
    /// name): CommonJS `module.exports = f` and ES `export default f` export `f` as
    /// `default`; `exports.g = f` and `export { f as g }` as `g`. Importers look names up
    /// through it as through a re-export from another module.
    pub fn own(names: Vec<(String, String)>, line: u32) -> Import {
        Import {
            module: String::new(),
            names,
            module_alias: None,
            wildcard: false,
            line,
        }
    }

    /// Whether this is an [`Import::own`]: names exported, nothing imported.
    pub fn is_own(&self) -> bool {
        self.module.is_empty()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub line: u32,
    pub message: String,
}

/// The parser's result for one file. It always exists, whatever the input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedFile {
    /// Relative to the repository root, `/`-separated.
    pub path: String,
    pub lang: Lang,
    pub bytes: u32,
    pub lines: u32,
    /// Go package / Java package declared in the file.
    pub package: Option<String>,
    pub definitions: Vec<Definition>,
    pub references: References,
    pub imports: Vec<Import>,
    pub diagnostics: Vec<Diagnostic>,
    /// The file was not valid UTF-8 and was decoded lossily.
    pub lossy: bool,
    /// A test file by its path (Go `_test.go`, Python `test_*.py`, JS `*.test.*`, `src/test`…).
    pub is_test_file: bool,
    /// The modules a package manifest declares (Swift `Package.swift`): (module name, its
    /// directory relative to the repository root).
    pub targets: Vec<(String, String)>,
    /// Imports this file makes for every file of its project: C# `global using …`.
    #[serde(default)]
    pub project_imports: Vec<Import>,
    /// Imports this file has from its project rather than from its own lines: C# `global
    /// using`s of the project's files and its project files' `<Using Include="…"/>` items.
    /// Set when the repository is built (`fittok_graph::repo`), never by parsing: they depend
    /// on other files.
    #[serde(default)]
    pub inherited_imports: Vec<Import>,
}

/// The directory part of a relative, `/`-separated path (`""` at the root).
pub fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// Whether a path names a test file or lives in a test tree, by the conventions of each language.
pub fn is_test_path(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    if file.ends_with("_test.go")
        || (file.ends_with(".cs") && (stem.ends_with("Tests") || stem.ends_with("Test")))
        || (file.ends_with(".rb") && (stem.ends_with("_spec") || stem.ends_with("_test")))
        || (file.ends_with(".kt") && (stem.ends_with("Test") || stem.ends_with("Tests")))
        || (file.ends_with(".scala")
            && (stem.ends_with("Test") || stem.ends_with("Spec") || stem.ends_with("Suite")))
        || (file.ends_with(".php") && (stem.ends_with("Test") || stem.ends_with("TestCase")))
        || (file.ends_with(".swift") && (stem.ends_with("Tests") || stem.ends_with("Test")))
        // gtest / Catch2: `parser_test.cc`, `test_parser.cpp`, `parser-test.cpp`.
        || (Lang::from_path(file) == Some(Lang::Cpp)
            && (stem.ends_with("_test")
                || stem.ends_with("-test")
                || stem.ends_with("_unittest")
                || stem.starts_with("test_")
                || stem.starts_with("test-")))
        || (file.ends_with(".py") && (stem.starts_with("test_") || stem.ends_with("_test")))
        || file == "conftest.py"
        || file.contains(".test.")
        || file.contains(".spec.")
    {
        return true;
    }
    path.split('/').rev().skip(1).any(|dir| {
        matches!(
            dir,
            "tests" | "test" | "__tests__" | "testing" | "testdata" | "spec" | "specs"
        ) || dir.ends_with(".Tests")
            || dir.ends_with(".Test")
            || matches!(dir, "Tests" | "Test")
    })
}

/// Whether a path lives in a tree of usage code — examples, benchmarks (`benches`,
/// `benchmarks`, ripgrep's `benchsuite`), demos, a sandbox or playground to try the code by
/// hand: code that calls the implementation rather than being it, like tests.
pub fn is_usage_path(path: &str) -> bool {
    path.split('/').rev().skip(1).any(|dir| {
        // `bench`, `benches`, `benchmarks`, `benchsuite`; not `bench_utils`.
        (dir.starts_with("bench") && dir.bytes().all(|b| b.is_ascii_alphabetic()))
            || matches!(
                dir,
                "examples" | "example" | "demo" | "demos" | "sandbox" | "playground"
            )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_paths() {
        assert!(is_usage_path("examples/multi.rs"));
        assert!(is_usage_path("crates/x/benches/parse.rs"));
        assert!(is_usage_path("docs/demo/app.js"));
        assert!(!is_usage_path("src/example.rs"));
        assert!(!is_usage_path("src/bench_utils/mod.rs"));
        assert!(is_usage_path("benchsuite/benchsuite"));
        assert!(is_usage_path("sandbox/server.js"));
        assert!(is_usage_path("playground/src/app.ts"));
        assert!(!is_usage_path("lib/router.js"));
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Lang::from_path("a/b.tsx"), Some(Lang::Tsx));
        assert_eq!(Lang::from_path("types/index.d.ts"), Some(Lang::TypeScript));
        assert_eq!(Lang::from_path("x.JSX"), Some(Lang::JavaScript));
        assert_eq!(Lang::from_path("Makefile"), None);
        assert_eq!(Lang::from_path("a/Rakefile"), Some(Lang::Ruby));
        for (line, lang) in [
            ("#!/usr/bin/env python3\n", Some(Lang::Python)),
            ("#!/usr/bin/python3.11 -u\nimport x", Some(Lang::Python)),
            ("#!/usr/bin/env -S node --harmony\n", Some(Lang::JavaScript)),
            ("#!/usr/bin/ruby -w\n", Some(Lang::Ruby)),
            ("#!/usr/bin/env php\n<?php", Some(Lang::Php)),
            ("#!/usr/bin/env swift\n", Some(Lang::Swift)),
            ("#!/bin/sh\n", None),
            ("no shebang", None),
        ] {
            assert_eq!(Lang::from_shebang(line.as_bytes()), lang, "{line}");
        }
    }

    #[test]
    fn test_paths() {
        assert!(is_test_path("pkg/router_test.go"));
        assert!(is_test_path("tests/test_api.py"));
        assert!(is_test_path("src/test/java/FooTest.java"));
        assert!(is_test_path("lib/a.spec.ts"));
        assert!(is_test_path("crates/x/tests/it.rs"));
        assert!(!is_test_path("src/testing_utils_not_dir.rs"));
        assert!(!is_test_path("src/router.go"));
        assert!(is_test_path("src/Newtonsoft.Json.Tests/JsonConvertTest.cs"));
        assert!(is_test_path("test/Parser/ParserTests.cs"));
        assert!(!is_test_path("src/Newtonsoft.Json/JsonConvert.cs"));
    }
}
