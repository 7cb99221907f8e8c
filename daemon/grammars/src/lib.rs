//! The tree-sitter grammars of C, C++, C#, Ruby, PHP, Kotlin, Scala and Swift.
//!
//! Invariant: [`language`] never panics; a grammar that cannot be loaded is an error the
//! parser reports as a diagnostic, and the file is kept without definitions.
//!
//! On Linux (unless the build fell back, see `build.rs`) the build script compiled each grammar
//! into a shared object and embedded it compressed: parse tables are most of a grammar, and
//! they compress about tenfold. The first use of a grammar inflates it into an anonymous
//! in-memory file (`memfd_create`, nothing on disk) and `dlopen`s it; it then stays loaded for
//! the life of the process. Elsewhere the grammar crates are linked statically.

use std::sync::OnceLock;

use tree_sitter::Language;

/// A grammar this crate provides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grammar {
    C,
    Cpp,
    CSharp,
    Ruby,
    Php,
    Kotlin,
    Scala,
    Swift,
}

impl Grammar {
    pub const ALL: [Grammar; 8] = [
        Grammar::C,
        Grammar::Cpp,
        Grammar::CSharp,
        Grammar::Ruby,
        Grammar::Php,
        Grammar::Kotlin,
        Grammar::Scala,
        Grammar::Swift,
    ];

    /// The C function the grammar exports.
    pub fn symbol(self) -> &'static str {
        table::GRAMMARS[self as usize].2
    }
}

/// Why a grammar is not available.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("grammar {symbol} could not be loaded: {reason}")]
pub struct GrammarError {
    pub symbol: &'static str,
    pub reason: String,
}

/// The grammar's language, loaded on first use (once per process).
pub fn language(g: Grammar) -> Result<Language, GrammarError> {
    static LOADED: [OnceLock<Result<Language, GrammarError>>; 8] = [const { OnceLock::new() }; 8];
    LOADED[g as usize].get_or_init(|| load(g)).clone()
}

mod table;

#[cfg(embedded_grammars)]
mod dynamic;

/// `EMBEDDED`, written by `build.rs`.
#[cfg(embedded_grammars)]
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

#[cfg(embedded_grammars)]
fn load(g: Grammar) -> Result<Language, GrammarError> {
    let fail = |reason: String| GrammarError {
        symbol: g.symbol(),
        reason,
    };
    let (packed, raw_len) = embedded::EMBEDDED[g as usize];
    let object = miniz_oxide::inflate::decompress_to_vec_with_limit(packed, raw_len)
        .map_err(|e| fail(format!("embedded object does not inflate: {e:?}")))?;
    if object.len() != raw_len {
        return Err(fail(format!(
            "embedded object inflates to {} bytes, not {raw_len}",
            object.len()
        )));
    }
    let f = dynamic::open(g.symbol(), &object).map_err(fail)?;
    // SAFETY: `f` is the grammar's exported `const TSLanguage *tree_sitter_x(void)`, from an
    // object this build compiled from the grammar crate's own sources; the library is never
    // unloaded, so the language it returns stays valid.
    Ok(Language::new(unsafe {
        tree_sitter_language::LanguageFn::from_raw(f)
    }))
}

#[cfg(not(embedded_grammars))]
fn load(g: Grammar) -> Result<Language, GrammarError> {
    Ok(match g {
        Grammar::C => tree_sitter_c::LANGUAGE.into(),
        Grammar::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Grammar::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
        Grammar::Ruby => tree_sitter_ruby::LANGUAGE.into(),
        Grammar::Php => tree_sitter_php::LANGUAGE_PHP.into(),
        Grammar::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
        Grammar::Scala => tree_sitter_scala::LANGUAGE.into(),
        Grammar::Swift => tree_sitter_swift::LANGUAGE.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small program in each language, with the node kind its root's first child has.
    fn sample(g: Grammar) -> (&'static str, &'static str) {
        match g {
            Grammar::C => (
                "int add(int a, int b) { return a + b; }\n",
                "function_definition",
            ),
            Grammar::Cpp => (
                "namespace n { int f() { return 1; } }\n",
                "namespace_definition",
            ),
            Grammar::CSharp => ("class A { void M() {} }\n", "class_declaration"),
            Grammar::Ruby => ("def hello\n  1\nend\n", "method"),
            Grammar::Php => ("<?php\nfunction f() { return 1; }\n", "php_tag"),
            Grammar::Kotlin => ("fun main() { println(1) }\n", "function_declaration"),
            Grammar::Scala => ("object A { def f = 1 }\n", "object_definition"),
            Grammar::Swift => ("func f() -> Int { return 1 }\n", "function_declaration"),
        }
    }

    #[test]
    fn every_grammar_loads_and_parses() {
        for g in Grammar::ALL {
            let lang = language(g).unwrap_or_else(|e| panic!("{e}"));
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&lang).expect("supported ABI");
            let (src, kind) = sample(g);
            let tree = parser.parse(src, None).expect("a tree");
            let root = tree.root_node();
            assert!(!root.has_error(), "{g:?}: {}", root.to_sexp());
            assert_eq!(root.child(0).map(|c| c.kind()), Some(kind), "{g:?}");
            // Loaded once: the second call gives the same language.
            assert_eq!(
                language(g).map(|l| l.node_kind_count()),
                Ok(lang.node_kind_count())
            );
        }
    }

    #[test]
    fn grammars_can_be_used_from_many_threads_at_once() {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                std::thread::spawn(move || {
                    let g = Grammar::ALL[i % Grammar::ALL.len()];
                    let mut parser = tree_sitter::Parser::new();
                    parser.set_language(&language(g).unwrap()).unwrap();
                    parser.parse(sample(g).0, None).is_some()
                })
            })
            .collect();
        assert!(handles.into_iter().all(|h| h.join().unwrap()));
    }

    #[cfg(embedded_grammars)]
    #[test]
    fn embedded_grammars_are_compressed() {
        let (packed, raw) = embedded::EMBEDDED
            .iter()
            .fold((0, 0), |(p, r), (bytes, raw)| (p + bytes.len(), r + raw));
        assert!(packed * 4 < raw, "{packed} of {raw}");
    }
}
