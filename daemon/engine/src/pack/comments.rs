//! Comments in outlines. An outline is there to show a container's or file's shape — its
//! declarations, imports and member signatures — in few tokens; the prose around them is
//! what fills it. A run of comment lines shows its first line that says something (a
//! Javadoc's summary, not its `/**`), and a file's leading licence block shows nothing: it
//! says nothing about the code, and in a file's head it took the room the imports needed
//! (gson's 15-line Apache header used the whole head of `JsonWriter.java`).
//!
//! Comment lines are recognised by their first characters, per language, following block
//! comments across lines. Whole functions and excerpts are never folded: there, every line
//! is the code's.

use crate::model::Lang;

/// A comment run this long or shorter stays whole: folding it would save less than the gap
/// costs a reader.
const KEEP_WHOLE: usize = 2;

/// One line of an outline: its number, its text, and whether it is the file's own (a
/// member's signature line is not, and is never folded).
pub struct OutlineLine {
    pub line: u32,
    pub text: String,
    pub verbatim: bool,
}

/// How one language writes comments.
struct Syntax {
    line: &'static [&'static str],
    block: Option<(&'static str, &'static str)>,
}

fn syntax(lang: Lang) -> Syntax {
    const C_LIKE: Syntax = Syntax {
        line: &["//"],
        block: Some(("/*", "*/")),
    };
    match lang {
        Lang::Python => Syntax {
            line: &["#"],
            block: None,
        },
        Lang::Ruby => Syntax {
            line: &["#"],
            block: Some(("=begin", "=end")),
        },
        Lang::Php => Syntax {
            line: &["//", "#"],
            block: Some(("/*", "*/")),
        },
        Lang::Markdown => Syntax {
            line: &[],
            block: None,
        },
        // C and C++: `#` starts a preprocessor line, which is code.
        Lang::JavaScript
        | Lang::TypeScript
        | Lang::Tsx
        | Lang::Java
        | Lang::Go
        | Lang::Rust
        | Lang::CSharp
        | Lang::C
        | Lang::Cpp
        | Lang::Kotlin
        | Lang::Scala
        | Lang::Swift => C_LIKE,
    }
}

/// Which of `lines` are comment-only lines (member signatures never are).
fn comment_lines(lang: Lang, lines: &[OutlineLine]) -> Vec<bool> {
    let syn = syntax(lang);
    let mut in_block = false;
    lines
        .iter()
        .map(|l| {
            if !l.verbatim {
                in_block = false;
                return false;
            }
            let t = l.text.trim_start();
            if in_block {
                let Some((_, close)) = syn.block else {
                    return true;
                };
                return match t.find(close) {
                    Some(end) => {
                        in_block = false;
                        // `… */ int x;`: the line ends in code.
                        t[end + close.len()..].trim().is_empty()
                    }
                    None => true,
                };
            }
            if syn.line.iter().any(|p| t.starts_with(p)) {
                return true;
            }
            if let Some((open, close)) = syn.block
                && let Some(rest) = t.strip_prefix(open)
            {
                return match rest.find(close) {
                    Some(end) => rest[end + close.len()..].trim().is_empty(),
                    None => {
                        in_block = true;
                        true
                    }
                };
            }
            false
        })
        .collect()
}

/// Whether a line has anything to say beyond comment punctuation (`/**`, ` *`, `#`) and
/// markup tags (C#'s `/// <summary>`).
fn says_something(text: &str) -> bool {
    let mut in_tag = false;
    text.chars().any(|c| match c {
        '<' => {
            in_tag = true;
            false
        }
        '>' => {
            in_tag = false;
            false
        }
        c => !in_tag && c.is_alphanumeric(),
    })
}

fn is_licence(lines: &[OutlineLine]) -> bool {
    lines.iter().any(|l| {
        let t = l.text.to_ascii_lowercase();
        t.contains("copyright") || t.contains("license") || t.contains("licence")
    })
}

/// `lines` with their comment runs folded: a file's leading licence block dropped (when
/// `file` is set), every other run longer than [`KEEP_WHOLE`] cut to its first line that
/// says something.
pub fn fold(lang: Lang, file: bool, lines: Vec<OutlineLine>) -> Vec<OutlineLine> {
    let comment = comment_lines(lang, &lines);
    let mut keep = vec![true; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        if !comment[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && comment[i] {
            i += 1;
        }
        let run = &lines[start..i];
        if file && start == 0 && is_licence(run) {
            keep[start..i].fill(false);
        } else if run.len() > KEEP_WHOLE {
            let first = run
                .iter()
                .position(|l| says_something(&l.text))
                .unwrap_or(0);
            for (k, slot) in keep[start..i].iter_mut().enumerate() {
                *slot = k == first;
            }
        }
    }
    lines
        .into_iter()
        .zip(keep)
        .filter_map(|(l, k)| k.then_some(l))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outline(lines: &[(u32, &str, bool)]) -> Vec<OutlineLine> {
        lines
            .iter()
            .map(|&(line, text, verbatim)| OutlineLine {
                line,
                text: text.to_string(),
                verbatim,
            })
            .collect()
    }

    fn numbers(lines: &[OutlineLine]) -> Vec<u32> {
        lines.iter().map(|l| l.line).collect()
    }

    #[test]
    fn a_files_licence_goes_and_a_javadoc_keeps_its_summary() {
        let lines = outline(&[
            (1, "/*", true),
            (2, " * Copyright (C) 2010 Google Inc.", true),
            (3, " * Licensed under the Apache License", true),
            (4, " */", true),
            (5, "package com.example;", true),
            (6, "import java.io.Writer;", true),
            (7, "  /**", true),
            (8, "   * Writes JSON.", true),
            (9, "   * More prose.", true),
            (10, "   */", true),
            (11, "public void write() …", false),
            (12, "  // one line", true),
            (13, "  private int x;", true),
        ]);
        let folded = fold(Lang::Java, true, lines);
        assert_eq!(numbers(&folded), vec![5, 6, 8, 11, 12, 13]);
    }

    #[test]
    fn a_containers_leading_comment_is_folded_not_dropped() {
        let lines = outline(&[
            (20, "class A {", true),
            (21, "/* Copyright notice quoted", true),
            (22, "   in a class,", true),
            (23, "   still prose */", true),
        ]);
        // Not a file: nothing is dropped whole, the run keeps its first line.
        let folded = fold(Lang::Java, false, lines);
        assert_eq!(numbers(&folded), vec![20, 21]);
    }

    #[test]
    fn code_is_never_taken_for_a_comment() {
        // C's `#include` and Rust's `#[derive]` are code; Python's `#` is a comment.
        let c = outline(&[
            (1, "#include <a.h>", true),
            (2, "#include <b.h>", true),
            (3, "#define X 1", true),
        ]);
        assert_eq!(numbers(&fold(Lang::C, true, c)), vec![1, 2, 3]);
        let rust = outline(&[
            (1, "#[derive(Debug)]", true),
            (2, "#[serde(rename_all = \"snake_case\")]", true),
            (3, "#[allow(dead_code)]", true),
        ]);
        assert_eq!(numbers(&fold(Lang::Rust, false, rust)), vec![1, 2, 3]);
        let py = outline(&[
            (1, "# a", true),
            (2, "# b", true),
            (3, "# c", true),
            (4, "import os", true),
        ]);
        assert_eq!(numbers(&fold(Lang::Python, false, py)), vec![1, 4]);
    }

    #[test]
    fn a_block_comment_ends_where_it_closes() {
        let lines = outline(&[
            (1, "/* a", true),
            (2, "   b */ int x;", true),
            (3, "int y;", true),
            (4, "int z;", true),
        ]);
        // Line 2 ends in code: line 1 is a run of one, kept.
        assert_eq!(numbers(&fold(Lang::C, false, lines)), vec![1, 2, 3, 4]);
        let lines = outline(&[
            (1, "/* a", true),
            (2, "   b", true),
            (3, "   c */", true),
            (4, "int z; /* d", true),
            (5, "   e */", true),
        ]);
        // 1–3 fold to 1; line 4 is code and its comment's continuation is one line.
        assert_eq!(numbers(&fold(Lang::C, false, lines)), vec![1, 4, 5]);
    }

    #[test]
    fn a_csharp_xml_doc_keeps_its_summary_not_its_tag() {
        let lines = outline(&[
            (5, "        /// <summary>", true),
            (6, "        /// Push an enricher onto the context.", true),
            (7, "        /// </summary>", true),
            (
                8,
                "        /// <param name=\"e\">The enricher</param>",
                true,
            ),
            (9, "        public static IDisposable Push(E e)", true),
        ]);
        assert_eq!(numbers(&fold(Lang::CSharp, false, lines)), vec![6, 9]);
    }
}
