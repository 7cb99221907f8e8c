//! One node's block: its lines (numbered at the first and every tenth, [`LINE_ANCHOR`]; an
//! outline's lines each: its own lines and each member's first lines, verbatim), whole, as a
//! skeleton (a container's header and member signatures), cut to its head or to one or two
//! windows. How blocks are headed, fenced and separated is [`crate::layout`]'s.

use crate::index::Sources;
use crate::layout::{LINE_ANCHOR, node_id};
use crate::lines::lines_of;
use crate::link::Graph;
use crate::model::{DefKind, Definition};

use super::comments::{self, OutlineLine};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Whole,
    /// Header and member signatures; members in `full` are shown whole.
    Skeleton,
    /// The first `n` lines.
    Head(u32),
    /// The first line, then lines `a..=b`: the part of a long function the question is about.
    Window(u32, u32),
    /// The first line, then lines `a..=b` and `c..=d`: the two parts of a long function the
    /// question's words are in.
    Windows(u32, u32, u32, u32),
}

fn push_numbered(out: &mut String, shown: &mut Vec<u32>, first: u32, lines: &[String]) {
    for (i, line) in lines.iter().enumerate() {
        let n = first + i as u32;
        shown.push(n);
        if i == 0 || n.is_multiple_of(LINE_ANCHOR) {
            out.push_str(&format!("{n}\t{line}\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
}

/// One node's block: its text, and the numbers of the file's lines it shows as they are written
/// (an outline's rebuilt signatures are not; folded comment lines are not shown).
pub struct Rendered {
    pub text: String,
    pub lines: Vec<u32>,
}

/// Renders one node's lines: what a block shows of it, without a heading or fences (an answer
/// groups the blocks of one file under one heading, [`file_opening`]; `fittok expand` heads
/// each node with [`heading`]). `starts` are the line starts of the node's file.
pub fn render(g: &Graph, sources: &Sources, node: u32, mode: Mode, starts: &[usize]) -> Rendered {
    let nr = g.nodes[node as usize];
    let def = g.def(node);
    let src = &sources[nr.file as usize];
    let mut out = String::new();
    let last = match mode {
        Mode::Head(n) => (def.start_line + n.max(1) - 1).min(def.end_line),
        _ => def.end_line,
    };
    let outline = def.kind.is_container() || def.kind == DefKind::File;
    let mut shown = Vec::new();
    match mode {
        Mode::Whole => {
            push_numbered(
                &mut out,
                &mut shown,
                def.start_line,
                &lines_of(src, starts, def.start_line, def.end_line),
            );
        }
        Mode::Head(_) if !outline => {
            push_numbered(
                &mut out,
                &mut shown,
                def.start_line,
                &lines_of(src, starts, def.start_line, last),
            );
            if last < def.end_line {
                out.push_str(&format!(
                    "… {} more lines: expand {}\n",
                    def.end_line - last,
                    node_id(g, node)
                ));
            }
        }
        Mode::Window(a, b) => push_excerpt(g, src, starts, node, &[(a, b)], &mut out, &mut shown),
        Mode::Windows(a, b, c, d) => push_excerpt(
            g,
            src,
            starts,
            node,
            &[(a, b), (c, d)],
            &mut out,
            &mut shown,
        ),
        Mode::Skeleton | Mode::Head(_) => {
            let lines = outline_lines(g, src, starts, node);
            let keep = match mode {
                Mode::Head(n) => (n as usize).min(lines.len()),
                _ => lines.len(),
            };
            for (line, text) in &lines[..keep] {
                out.push_str(text);
                shown.extend(*line);
            }
            if keep < lines.len() {
                out.push_str(&format!(
                    "… {} more outline lines: expand {}\n",
                    lines.len() - keep,
                    node_id(g, node)
                ));
            }
        }
    }
    Rendered {
        text: out,
        lines: shown,
    }
}

/// An excerpt of `node`: its signature's lines as written (one when it spans more than a few),
/// so that the excerpt says what it is an excerpt of, then each of `windows` (ascending, apart)
/// after a `⋮`, and how many lines are left after the last.
fn push_excerpt(
    g: &Graph,
    src: &[u8],
    starts: &[usize],
    node: u32,
    windows: &[(u32, u32)],
    out: &mut String,
    shown: &mut Vec<u32>,
) {
    let def = g.def(node);
    let header = match written_header(src, starts, def) {
        Some(h) if !h.cut => h.lines,
        _ => lines_of(src, starts, def.start_line, def.start_line),
    };
    let body = def.start_line + (header.len() as u32).max(1);
    push_numbered(out, shown, def.start_line, &header);
    // The line after the last one shown.
    let mut next = body;
    for &(a, b) in windows {
        let a = a.max(next);
        if a > next {
            out.push_str("⋮\n");
        }
        let b = b.min(def.end_line);
        push_numbered(out, shown, a, &lines_of(src, starts, a, b));
        next = b + 1;
    }
    if next <= def.end_line {
        out.push_str(&format!(
            "⋮ {} more lines: expand {}\n",
            def.end_line + 1 - next,
            node_id(g, node)
        ));
    }
}

/// A signature spans at most this many lines (`parse`'s signatures stop there).
const HEADER_LINES: u32 = 4;

/// How many of a member's first `lines` make up its `signature` (what `parse` took from the
/// definition's start to its body: the lines trimmed, joined by spaces, a trailing `{`, `:` or
/// `=` dropped), when they do. An outline shows those lines as they are in the file rather
/// than the signature rebuilt from them: the reader sees the real source (a line to anchor an
/// edit on), and a fix's hunks that touch a member's first line (a new parameter, a changed
/// return type) are there to see.
fn header_len(lines: &[String], signature: &str) -> Option<usize> {
    if signature.is_empty() {
        return None;
    }
    // The body may open on the signature's last line (`def f(): return 1`). Starting with the
    // signature covers it ending there too (`def f(x):`). A blank line adds nothing to the
    // join, so the shortest prefix that matches never ends on one.
    (1..=lines.len()).find(|&n| {
        !lines[n - 1].trim().is_empty()
            && crate::lines::joined(lines[..n].iter().map(String::as_str)).starts_with(signature)
    })
}

/// Decorator and attribute lines a definition may start with before its signature
/// (`@staticmethod`, `#[inline]`, `@Override`).
const DECORATOR_LINES: u32 = 6;

/// A definition's first lines as its source writes them: decorators, then the lines that make
/// up its signature (see [`header_len`]).
struct Header {
    lines: Vec<String>,
    /// How many of `lines` are decorators or attributes.
    decorators: usize,
    /// Whether `parse` cut the signature (more than [`HEADER_LINES`] lines: a long parameter
    /// list, a struct whose fields follow its name): `lines` end where it did.
    cut: bool,
}

/// The lines that make up `def`'s signature as its source writes them (see [`header_len`]),
/// when its first few lines do; a definition that starts with decorators or attributes keeps
/// them, then its signature: an excerpt that showed only `@staticmethod` would not say what it
/// is an excerpt of.
fn written_header(src: &[u8], starts: &[usize], def: &Definition) -> Option<Header> {
    let mut first = lines_of(
        src,
        starts,
        def.start_line,
        (def.start_line + HEADER_LINES + DECORATOR_LINES - 1).min(def.end_line),
    );
    // The signature starts on the first line, or right after the decorators (a Java
    // `@Override public T read(…)` holds both on one line).
    let decorators = first
        .iter()
        .take(DECORATOR_LINES as usize)
        .take_while(|l| is_decorator_line(l))
        .count();
    let cut = def.signature.strip_suffix('…').map(str::trim_end);
    let signature = cut.unwrap_or(&def.signature);
    let (k, n) = [0, decorators]
        .into_iter()
        .find_map(|k| Some((k, header_len(&first[k..], signature)?)))?;
    first.truncate(k + n);
    Some(Header {
        lines: first,
        decorators: k,
        cut: cut.is_some(),
    })
}

/// Whether `line` is a decorator or an attribute: `@name…` (Python, Java, Kotlin, TypeScript),
/// `#[…]` (Rust) or `[…]` alone on its line (C#).
fn is_decorator_line(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('@') || t.starts_with("#[") || (t.starts_with('[') && t.ends_with(']'))
}

/// A definition's signature as its source writes it, one string per line: the line that
/// makes it up (see [`header_len`]; decorators left out) when the definition starts its line;
/// a type's lines when it spans several (a struct whose fields follow its name: they are what
/// a reader of the type needs, and real lines to anchor an edit on, where a join of them is no
/// line of the file), then `…` if `parse` cut it; else the one-line signature `parse` rebuilt
/// (a function's parameters read as well joined).
pub fn written_signature(g: &Graph, src: &[u8], starts: &[usize], node: u32) -> Vec<String> {
    let def = g.def(node);
    let start = (def.start_byte as usize).min(src.len());
    let line_start = starts
        .get((def.start_line as usize).saturating_sub(1))
        .copied()
        .unwrap_or(0)
        .min(start);
    let starts_line = src[line_start..start].iter().all(u8::is_ascii_whitespace);
    let header = written_header(src, starts, def).filter(|_| starts_line);
    let Some(Header {
        lines,
        decorators,
        cut,
    }) = header
    else {
        return vec![def.signature.clone()];
    };
    let lines = &lines[decorators..];
    // A function's parameters read as well joined; a type's lines are its fields.
    if lines.len() > 1 && !def.kind.is_type() {
        return vec![def.signature.clone()];
    }
    let indent = &lines[0][..lines[0].len() - lines[0].trim_start().len()];
    let mut out: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| match i {
            0 => l.trim().to_string(),
            _ => l.strip_prefix(indent).unwrap_or(l).trim_end().to_string(),
        })
        .collect();
    if cut {
        out.push("…".to_string());
    }
    out
}

/// A container's or file's outline: its own lines verbatim (blank ones dropped, comment runs
/// folded: [`comments`]), each member as one signature line; each with its line number when it
/// is that line as written.
fn outline_lines(g: &Graph, src: &[u8], starts: &[usize], node: u32) -> Vec<(Option<u32>, String)> {
    let def = g.def(node);
    let members = g.members(node);
    let mut out = Vec::new();
    let mut line = def.start_line;
    let mut next = members.iter().peekable();
    // Members whose line is their signature rebuilt, not the file's line.
    let mut rebuilt = Vec::new();
    while line <= def.end_line {
        if let Some(&&m) = next.peek() {
            let md = g.def(m);
            if md.start_line <= line {
                match written_header(src, starts, md) {
                    // The member's own first lines, as in the file; one cut is rebuilt on one
                    // line, as an outline gives each member.
                    Some(header) if !header.cut => out.extend(
                        header
                            .lines
                            .into_iter()
                            .enumerate()
                            .filter_map(|(i, text)| {
                                (!text.trim().is_empty()).then(|| OutlineLine {
                                    line: md.start_line + i as u32,
                                    text,
                                    verbatim: false,
                                })
                            }),
                    ),
                    _ => {
                        rebuilt.push(md.start_line);
                        out.push(OutlineLine {
                            line: md.start_line,
                            text: match md.signature.ends_with('…') {
                                true => md.signature.clone(),
                                false => format!("{} …", md.signature),
                            },
                            verbatim: false,
                        })
                    }
                }
                line = line.max(md.end_line + 1);
                next.next();
                continue;
            }
        }
        match lines_of(src, starts, line, line).pop() {
            Some(text) if !text.trim().is_empty() => out.push(OutlineLine {
                line,
                text,
                verbatim: true,
            }),
            Some(_) => {}
            None => break,
        }
        line += 1;
    }
    comments::fold(g.file_of(node).lang, def.kind == DefKind::File, out)
        .into_iter()
        .map(|l| {
            let real = !rebuilt.contains(&l.line);
            (real.then_some(l.line), format!("{}\t{}\n", l.line, l.text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One file's graph, sources and line starts.
    fn fixture(path: &str, src: &str) -> (Graph, Sources, Vec<usize>) {
        let g = crate::testing::graph_of(&[(path, src)]);
        let sources: Sources = vec![std::sync::Arc::from(src.as_bytes())];
        (g, sources, crate::lines::line_starts(src.as_bytes()))
    }

    /// The outline of the first node named `name` in a one-file repository.
    fn outline_of(path: &str, src: &str, name: &str) -> (Graph, Sources, String) {
        let (g, sources, starts) = fixture(path, src);
        let node = named(&g, name);
        let text = render(&g, &sources, node, Mode::Skeleton, &starts).text;
        (g, sources, text)
    }

    use crate::testing::node_named as named;

    #[test]
    fn an_outline_shows_each_members_first_lines_as_they_are_in_the_file() {
        let src = "public final class Cache<T> extends Base<T> {\n  private final int size;\n\n  @Override public T read(Reader in) throws IOException {\n    return null;\n  }\n\n  public static Cache<?> of(\n      int size, Object owner) {\n    return null;\n  }\n\n  void go(int a,\n          int b,\n          int c,\n          int d,\n          int e) {\n  }\n}\n";
        let (g, sources, text) = outline_of("src/Cache.java", src, "Cache");
        assert_eq!(g.def(named(&g, "Cache")).kind, DefKind::Class);
        let lines: Vec<&str> = text.lines().collect();
        // The class's own lines, and a one-line and a two-line member header, verbatim.
        for want in [
            "1\tpublic final class Cache<T> extends Base<T> {",
            "2\t  private final int size;",
            "4\t  @Override public T read(Reader in) throws IOException {",
            "8\t  public static Cache<?> of(",
            "9\t      int size, Object owner) {",
        ] {
            assert!(lines.contains(&want), "{want:?} in\n{text}");
        }
        // A header longer than a signature keeps: the signature, marked as cut once.
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("13\t") && l.ends_with(" …") && !l.ends_with("… …")),
            "{text}"
        );
        assert!(!text.contains("return null"), "{text}");
        // A referenced definition's signature: its line as written when that line holds it all.
        let starts = crate::lines::line_starts(&sources[0]);
        let written = |node| written_signature(&g, &sources[0], &starts, node);
        assert_eq!(
            written(named(&g, "read")),
            ["@Override public T read(Reader in) throws IOException {"]
        );
        // A function's signature over several lines: rebuilt on one.
        for f in ["of", "go"] {
            let f = named(&g, f);
            assert_eq!(written(f), [g.def(f).signature.clone()]);
        }
    }

    #[test]
    fn a_struct_whose_fields_make_its_signature_is_referenced_by_its_first_lines() {
        let src = "package rest\n\ntype engine struct {\n\tconf   Conf\n\troutes []route\n\tunsigned func()\n\tshedder int\n}\n\ntype small struct{ a int }\n";
        let (g, sources, starts) = fixture("rest/engine.go", src);
        let written = |node| written_signature(&g, &sources[0], &starts, node);
        assert_eq!(
            written(named(&g, "engine")),
            [
                "type engine struct {",
                "\tconf   Conf",
                "\troutes []route",
                "\tunsigned func()",
                "…"
            ]
        );
        assert_eq!(written(named(&g, "small")), ["type small struct{ a int }"]);
    }

    #[test]
    fn an_excerpt_starts_with_its_whole_signature() {
        let body: String = (0..30).map(|i| format!("    x{i} = {i}\n")).collect();
        let src = format!("def build(\n    name, size,\n):\n{body}    return name\n");
        let (g, sources, starts) = fixture("pkg/build.py", &src);
        let f = named(&g, "build");
        let text = render(&g, &sources, f, Mode::Window(20, 24), &starts).text;
        let code: Vec<&str> = text.lines().take(6).collect();
        assert_eq!(
            code,
            [
                "1\tdef build(",
                "    name, size,",
                "):",
                "⋮",
                "20\t    x16 = 16",
                "    x17 = 17"
            ],
            "{text}"
        );
    }

    #[test]
    fn a_decorated_definition_keeps_its_def_line_and_indentation() {
        let body: String = (0..30).map(|i| format!("        x{i} = {i}\n")).collect();
        let src = format!(
            "class Encoder:\n    @staticmethod\n    def encode_files(files, data):\n{body}        return files\n"
        );
        let (g, sources, starts) = fixture("pkg/enc.py", &src);
        let f = named(&g, "encode_files");
        let text = render(&g, &sources, f, Mode::Window(20, 24), &starts).text;
        let code: Vec<&str> = text.lines().take(3).collect();
        assert_eq!(
            code,
            [
                "2\t    @staticmethod",
                "    def encode_files(files, data):",
                "⋮"
            ],
            "{text}"
        );
        // The class's outline shows the member as written, indented, not a rebuilt line.
        let outline = render(&g, &sources, named(&g, "Encoder"), Mode::Skeleton, &starts).text;
        assert!(
            outline.contains("    def encode_files(files, data):"),
            "{outline}"
        );
    }

    #[test]
    fn a_member_on_another_members_line_keeps_its_signature() {
        let src = "class Pair {\n  int a() { return 1; } int b() { return 2; }\n}\n";
        let (_, _, text) = outline_of("src/Pair.java", src, "Pair");
        // The line is shown once, as the first member's; the second is its signature.
        assert_eq!(text.matches("int a()").count(), 1, "{text}");
        assert!(text.contains("2\tint b() …"), "{text}");
    }

    #[test]
    fn a_header_is_the_lines_that_make_up_the_signature() {
        let lines = |ls: &[&str]| ls.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        assert_eq!(
            header_len(&lines(&["def f(x):", "    return x"]), "def f(x)"),
            Some(1)
        );
        assert_eq!(
            header_len(
                &lines(&["def f(", "", "    x,", "):", "  pass"]),
                "def f( x, )"
            ),
            Some(4)
        );
        // The body opens on the signature's line.
        assert_eq!(header_len(&lines(&["fn f() { 1 }"]), "fn f()"), Some(1));
        assert_eq!(
            header_len(&lines(&["@decorator", "def g():"]), "def g()"),
            None
        );
        assert_eq!(header_len(&lines(&["def f(x):"]), ""), None);
    }

    #[test]
    fn a_run_is_numbered_at_its_first_line_and_every_tenth() {
        let lines: Vec<String> = (8..=22).map(|n| format!("line {n}")).collect();
        let (mut out, mut shown) = (String::new(), Vec::new());
        push_numbered(&mut out, &mut shown, 8, &lines);
        assert_eq!(shown, (8..=22).collect::<Vec<u32>>());
        let numbered: Vec<&str> = out
            .lines()
            .filter_map(|l| l.split_once('\t').map(|(n, _)| n))
            .collect();
        assert_eq!(numbered, ["8", "10", "20"]);
        // Every line is there, verbatim, in order.
        let text: Vec<&str> = out
            .lines()
            .map(|l| l.split_once('\t').map_or(l, |(_, t)| t))
            .collect();
        assert_eq!(text, lines.iter().map(String::as_str).collect::<Vec<_>>());
    }
}
