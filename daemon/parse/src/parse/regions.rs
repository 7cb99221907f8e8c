//! Code outside every definition, as nodes of its own: import blocks, module-level statements
//! and assignments, field blocks inside types, top-level calls and macro invocations.
//!
//! A fix often edits exactly these lines — it adds an import, a registration, a field — and
//! without a node of their own they can only be shown as part of a file header. Regions are
//! found the same way in every language, from the definitions the language's visitor found:
//! the lines of a file (or of a type's body) that no member covers, cut into paragraphs at
//! blank lines, with neighbouring short paragraphs merged.
//!
//! Invariants: a region never overlaps a member of its container; its lines are exact (real
//! line numbers, bytes aligned to line starts); a region holds at least one line of code, never
//! only comments or attributes.

use crate::model::{DefKind, Definition, ParsedFile};

/// Neighbouring paragraphs merge while the region spans at most this many lines.
const MERGE_SPAN: u32 = 25;
/// A paragraph longer than this is cut into chunks of `CHUNK` lines.
const LONG_PARAGRAPH: u32 = 50;
const CHUNK: u32 = 40;
/// Regions per file at most (a generated file of statements would otherwise flood the graph).
const MAX_PER_FILE: usize = 200;

/// What kind of lines a region holds; its name in answers and ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RegionKind {
    Imports,
    Fields,
    TopLevel,
}

impl RegionKind {
    fn name(self) -> &'static str {
        match self {
            RegionKind::Imports => "imports",
            RegionKind::Fields => "fields",
            RegionKind::TopLevel => "toplevel",
        }
    }
}

/// Adds the regions of `file` (whose definitions the visitor filled) and moves references
/// made inside a region onto it, so that top-level calls become edges from the region.
/// Must run before the file node is pushed.
pub(super) fn push_regions(file: &mut ParsedFile, bytes: &[u8]) {
    if file.definitions.is_empty() && file.lines == 0 {
        return;
    }
    let starts = crate::lines::line_starts(bytes);
    let line_text = |l: u32| -> &[u8] {
        let i = l as usize - 1;
        let s = starts
            .get(i)
            .copied()
            .unwrap_or(bytes.len())
            .min(bytes.len());
        let e = starts
            .get(i + 1)
            .copied()
            .unwrap_or(bytes.len())
            .min(bytes.len());
        &bytes[s..e]
    };
    // Containers whose uncovered lines are regions: the file itself (None), and type bodies.
    let mut scopes: Vec<(Option<u32>, u32, u32)> = vec![(None, 1, file.lines)];
    for (i, d) in file.definitions.iter().enumerate() {
        if d.kind.is_container() && d.kind != DefKind::Module && d.end_line > d.start_line + 1 {
            // The header line and the closing line are the container's own.
            scopes.push((Some(i as u32), d.start_line + 1, d.end_line - 1));
        }
    }
    let mut regions: Vec<Definition> = Vec::new();
    for (container, first, last) in scopes {
        if first > last {
            continue;
        }
        let mut covered = vec![false; (last - first + 1) as usize];
        for d in file.definitions.iter().filter(|d| d.parent == container) {
            let a = d.start_line.max(first);
            let b = d.end_line.min(last);
            for l in a..=b {
                covered[(l - first) as usize] = true;
            }
        }
        // Lines between a doc comment and its definition belong to the definition: a
        // paragraph right above a member that is only comments and attributes is skipped below.
        let mut paragraphs: Vec<(u32, u32)> = Vec::new();
        let mut open: Option<u32> = None;
        for l in first..=last {
            let blank = covered[(l - first) as usize] || is_blank(line_text(l));
            match (open, blank) {
                (None, false) => open = Some(l),
                (Some(a), true) => {
                    paragraphs.push((a, l - 1));
                    open = None;
                }
                _ => {}
            }
            // A covered line ends a paragraph even where no blank line separates them.
        }
        if let Some(a) = open {
            paragraphs.push((a, last));
        }
        let text_of = |a: u32, b: u32| -> Vec<String> {
            (a..=b)
                .map(|l| String::from_utf8_lossy(line_text(l)).trim_end().to_string())
                .collect()
        };
        let kind_of = |lines: &[String]| {
            if container.is_some() {
                RegionKind::Fields
            } else if is_imports(lines) {
                RegionKind::Imports
            } else {
                RegionKind::TopLevel
            }
        };
        let code_paragraphs: Vec<(u32, u32, RegionKind)> = paragraphs
            .into_iter()
            .filter(|&(a, b)| (a..=b).any(|l| is_code(line_text(l))))
            .flat_map(|(a, b)| chunks(a, b))
            .map(|(a, b)| (a, b, kind_of(&text_of(a, b))))
            .collect();
        // Merge neighbours of one kind not separated by a member.
        let mut merged: Vec<(u32, u32, RegionKind)> = Vec::new();
        for (a, b, kind) in code_paragraphs {
            if let Some(last) = merged.last_mut() {
                let gap_free = (last.1 + 1..a).all(|l| !covered[(l - first) as usize]);
                if gap_free && last.2 == kind && b - last.0 < MERGE_SPAN {
                    last.1 = b;
                    continue;
                }
            }
            merged.push((a, b, kind));
        }
        let parent = container.map(|c| &file.definitions[c as usize]);
        for (a, b, kind) in merged {
            if regions.len() >= MAX_PER_FILE {
                break;
            }
            let lines = text_of(a, b);
            let name = kind.name().to_string();
            let qualified_name = match parent {
                Some(p) => format!("{}.{name}@{a}", p.qualified_name),
                None => format!("{name}@{a}"),
            };
            let signature = lines
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.is_empty())
                .unwrap_or("")
                .chars()
                .take(120)
                .collect();
            let start_byte = starts.get(a as usize - 1).copied().unwrap_or(bytes.len());
            let end_byte = starts.get(b as usize).copied().unwrap_or(bytes.len());
            regions.push(Definition {
                name,
                qualified_name,
                kind: DefKind::Region,
                start_line: a,
                end_line: b,
                start_byte: start_byte.min(bytes.len()) as u32,
                end_byte: end_byte.min(bytes.len()) as u32,
                signature,
                doc: None,
                parent: container,
                is_test: parent.is_some_and(|p| p.is_test),
                is_prose: is_prose(&lines),
            });
        }
    }
    let base = file.definitions.len() as u32;
    // References inside a region are the region's: top-level calls get a node to hang on.
    let moved: Vec<(usize, u32)> = file
        .references
        .iter()
        .enumerate()
        .filter_map(|(ri, r)| {
            let i = regions.iter().position(|d| {
                d.start_line <= r.line && r.line <= d.end_line && d.parent == r.scope
            })?;
            Some((ri, base + i as u32))
        })
        .collect();
    for (ri, scope) in moved {
        file.references.set_scope(ri, Some(scope));
    }
    file.definitions.extend(regions);
}

fn chunks(a: u32, b: u32) -> Vec<(u32, u32)> {
    if b - a < LONG_PARAGRAPH {
        return vec![(a, b)];
    }
    let mut out = Vec::new();
    let mut s = a;
    while s <= b {
        let e = (s + CHUNK - 1).min(b);
        out.push((s, e));
        s = e + 1;
    }
    out
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| b.is_ascii_whitespace())
}

/// A comment, an attribute or decorator, or a lone bracket: not code a region is made for.
fn is_code(line: &[u8]) -> bool {
    let text = String::from_utf8_lossy(line);
    let t = text.trim();
    if t.len() < 4 || !t.chars().any(char::is_alphanumeric) {
        return false;
    }
    let comment = ["//", "/*", "*", "#[", "#!", "@", "--", "'''", "\"\"\""];
    if comment.iter().any(|c| t.starts_with(c)) {
        return false;
    }
    // `#` starts a comment in Python and shell, a directive in C; `#include` is code.
    !(t.starts_with('#') && !t.starts_with("#include") && !t.starts_with("#define"))
}

/// Most lines are imports, in any of the languages' spellings.
fn is_imports(lines: &[String]) -> bool {
    let mut imports = 0;
    let mut code = 0;
    for l in lines {
        let t = l.trim_start();
        if !is_code(t.as_bytes()) {
            continue;
        }
        code += 1;
        let words = [
            "import ",
            "from ",
            "use ",
            "pub use ",
            "extern crate ",
            "package ",
            "#include",
            "using ",
            "require ",
            "require_relative ",
        ];
        if words.iter().any(|w| t.starts_with(w))
            || t.contains("require(")
            || t.starts_with('"') && t.ends_with('"')
        // a Go import block's lines
        {
            imports += 1;
        }
    }
    code > 0 && imports * 2 >= code
}

/// Mostly a string literal or docstring: prose held in code (ranked like documentation).
fn is_prose(lines: &[String]) -> bool {
    let mut in_triple = false;
    let mut prose = 0;
    let mut total = 0;
    for l in lines {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        total += 1;
        let quotes = t.matches("\"\"\"").count() + t.matches("'''").count();
        if in_triple || quotes > 0 {
            prose += 1;
        }
        if quotes % 2 == 1 {
            in_triple = !in_triple;
        }
    }
    total >= 3 && prose * 10 >= total * 6
}

#[cfg(test)]
mod tests {
    use crate::model::{DefKind, Lang};
    use crate::parse::parse_file_with;

    fn parse_file(path: &str, lang: Lang, bytes: &[u8]) -> crate::model::ParsedFile {
        parse_file_with(path, lang, bytes, true)
    }

    fn regions(path: &str, lang: Lang, src: &str) -> Vec<(String, u32, u32)> {
        parse_file(path, lang, src.as_bytes())
            .definitions
            .iter()
            .filter(|d| d.kind == DefKind::Region)
            .map(|d| (d.qualified_name.clone(), d.start_line, d.end_line))
            .collect()
    }

    #[test]
    fn python_imports_statements_and_fields() {
        let src = "\"\"\"Module doc.\"\"\"\nimport os\nfrom a.b import c\n\nTIMEOUT = compute_timeout(30)\nregistry.register(handler)\n\n\ndef f():\n    return 1\n\n\nclass Config:\n    # the defaults\n    retries: int = 3\n    verbose: bool = False\n\n    def method(self):\n        pass\n\nif __name__ == \"__main__\":\n    main_entry()\n";
        let r = regions("pkg/mod.py", Lang::Python, src);
        assert!(r.contains(&("imports@1".into(), 1, 3)), "{r:?}");
        assert!(r.contains(&("toplevel@6".into(), 6, 6)), "{r:?}");
        assert!(r.iter().any(|x| x.0 == "Config.fields@14"), "{r:?}");
        assert!(
            r.iter().any(|x| x.0.starts_with("toplevel@") && x.2 == 22),
            "{r:?}"
        );
        let f = parse_file("pkg/mod.py", Lang::Python, src.as_bytes());
        // The call at module level hangs on its region now.
        let call = f
            .references
            .iter()
            .find(|r| r.name == "register")
            .expect("a reference to register");
        let scope = call.scope.expect("scoped") as usize;
        assert_eq!(f.definitions[scope].kind, DefKind::Region);
    }

    #[test]
    fn rust_use_groups_and_macro_calls_but_not_lone_attributes() {
        let src = "use std::io;\nuse crate::a::{b, c};\n\nmod inner;\n\nlazy_static! {\n    static ref X: u32 = 1;\n}\n\n/// Adds.\n#[inline]\npub fn add(a: u32) -> u32 {\n    a\n}\n\npub struct P {\n    pub x: u32,\n    pub y: u32,\n}\n";
        let r = regions("src/lib.rs", Lang::Rust, src);
        assert!(r.contains(&("imports@1".into(), 1, 2)), "{r:?}");
        assert!(
            r.iter()
                .any(|x| x.0.starts_with("toplevel@") && x.1 <= 6 && x.2 >= 8),
            "{r:?}"
        );
        // Doc comments and attributes above `add` are not a region of their own.
        assert!(!r.iter().any(|x| x.1 == 10 || x.1 == 11), "{r:?}");
    }

    #[test]
    fn go_var_blocks_and_long_paragraphs_are_chunked() {
        let table: String = (0..120)
            .map(|i| format!("\t\"key{i}\": handlerNumber{i},\n"))
            .collect();
        let src = format!(
            "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nvar handlers = map[string]int{{\n{table}}}\n\nfunc main() {{\n\tfmt.Println(os.Args)\n}}\n"
        );
        let r = regions("main.go", Lang::Go, &src);
        let covered: u32 = r.iter().map(|x| x.2 - x.1 + 1).sum();
        assert!(r.contains(&("imports@1".into(), 1, 6)), "{r:?}");
        assert!(r.iter().all(|x| x.2 - x.1 < 50), "{r:?}");
        assert!(covered >= 120, "{r:?}");
    }
}
