//! Places in the code a question points at: file paths, with the line when it gives one.
//!
//! Issues carry locations in many shapes: traceback frames (`File "…/marshmallow/schema.py",
//! line 628, in _do_load`), compiler, panic and log positions (`grep-regex/src/literal.rs:105:`,
//! `src/main.rs:9:5`), JavaScript and Java frames (`(…/axios/lib/utils.js:195:12)`,
//! `(Gson.java:932)`) and links to a line (`…/blob/<rev>/src/x.ts#L61`). The path is the
//! user's — an installed package, another checkout — so it meets a repository file by its
//! trailing components, not as written. The line names the definition that holds it.

use crate::link::Graph;
use crate::model::DefKind;

/// At most this many locations are taken from one question (a pasted log can hold hundreds).
const MAX_LOCATIONS: usize = 64;

/// A file path the question mentions, and the line it names there, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// ASCII-lower-cased path components, without empty, `.` and drive (`c:`) components.
    components: Vec<String>,
    pub line: Option<u32>,
}

impl Location {
    #[cfg(test)]
    pub fn path(&self) -> String {
        self.components.join("/")
    }
}

/// The locations of `question`, in order of appearance, repeated ones once.
pub fn locations(question: &str) -> Vec<Location> {
    let words: Vec<&str> = question
        .split(|c: char| c.is_whitespace() || "\"'(),;<>[]{}=|`".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out: Vec<Location> = Vec::new();
    for (i, raw) in words.iter().enumerate() {
        // .NET writes `in C:\src\Foo.cs:line 42`.
        let (raw, dotnet) = match raw.len().checked_sub(5) {
            Some(cut) if raw.is_char_boundary(cut) && raw[cut..].eq_ignore_ascii_case(":line") => {
                (&raw[..cut], true)
            }
            _ => (*raw, false),
        };
        let Some(mut loc) = location(raw) else {
            continue;
        };
        let number = |k: usize| words.get(k).and_then(|w| w.parse::<u32>().ok());
        if loc.line.is_none() {
            if dotnet || follows(question, raw, '(') {
                // .NET's `:line N`; PHP's `Foo.php(123)`, TypeScript's `foo.ts(12,5)`.
                loc.line = number(i + 1);
            } else {
                // A Python frame (`File "path", line N, in name`) and prose (`x.h - line 40`,
                // `x.h at line 40.`, `line 40 of x.h`).
                loc.line = prose_line(&words, i);
            }
        }
        if !out.contains(&loc) {
            out.push(loc);
            if out.len() == MAX_LOCATIONS {
                break;
            }
        }
    }
    out
}

/// Words between a path and the line that prose gives for it (`x.h - line 4`, `x.h at line 4`).
const PROSE_FILLERS: [&str; 6] = ["-", "–", "at", "on", "in", "near"];

/// The line prose gives for the path at `words[i]`: `line N` after it, across at most one
/// filler word, or `line N of`/`in` before it. The number may end a sentence (`line 40.`).
fn prose_line(words: &[&str], i: usize) -> Option<u32> {
    let is_line = |k: usize| {
        words
            .get(k)
            .is_some_and(|w| w.eq_ignore_ascii_case("line") || w.eq_ignore_ascii_case("lines"))
    };
    let number = |k: usize| {
        let w = words.get(k)?.trim_end_matches(|c: char| ".:".contains(c));
        w.parse::<u32>().ok()
    };
    let filler = |k: usize| {
        words
            .get(k)
            .is_some_and(|w| PROSE_FILLERS.contains(&w.to_ascii_lowercase().as_str()))
    };
    if is_line(i + 1) {
        return number(i + 2);
    }
    if filler(i + 1) && is_line(i + 2) {
        return number(i + 3);
    }
    let before = |k: usize| i.checked_sub(k);
    let of =
        before(1).is_some_and(|k| matches!(words[k].to_ascii_lowercase().as_str(), "of" | "in"));
    match (of, before(2), before(3)) {
        (true, Some(n), Some(l)) if is_line(l) => number(n),
        _ => None,
    }
}

/// Whether `word`, a slice of `text`, is followed there by `c`.
fn follows(text: &str, word: &str, c: char) -> bool {
    let end = (word.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize) + word.len();
    text.get(end..).is_some_and(|rest| rest.starts_with(c))
}

/// One word as a location: a path with a file name (`dir/name.ext`), or a bare file name that
/// gives a line (`Gson.java:932`) — a bare name without one is too often prose (`Node.js`).
fn location(raw: &str) -> Option<Location> {
    let mut s = raw.replace('\\', "/");
    let mut line = None;
    // A link to a line: `…/x.ts#L61` or `#L61-L70`.
    if let Some(i) = s.find("#L") {
        line = leading_number(&s[i + 2..]);
        s.truncate(i);
    }
    let mut s = s
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_string();
    // `path:line` or `path:line:column`; the number next to the path is the line.
    for _ in 0..2 {
        let Some((head, tail)) = s.rsplit_once(':') else {
            break;
        };
        if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        line = tail.parse().ok();
        s = head.to_string();
    }
    let components: Vec<String> = s
        .split('/')
        .filter(|c| !c.is_empty() && *c != "." && !(c.len() == 2 && c.ends_with(':')))
        .map(str::to_ascii_lowercase)
        .collect();
    let name = components.last()?;
    let (stem, ext) = name.rsplit_once('.')?;
    let file_like = !stem.is_empty()
        && (1..=6).contains(&ext.len())
        && ext.bytes().all(|b| b.is_ascii_alphanumeric())
        && ext.bytes().any(|b| b.is_ascii_alphabetic())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-+@".contains(&b));
    if !file_like || (components.len() == 1 && line.is_none()) {
        return None;
    }
    Some(Location { components, line })
}

fn leading_number(s: &str) -> Option<u32> {
    let end = s.bytes().take_while(u8::is_ascii_digit).count();
    s[..end].parse().ok()
}

/// How many trailing components `path` (a repository path) shares with `loc` (lower-cased).
fn shared_tail(loc: &[String], path: &str) -> usize {
    loc.iter()
        .rev()
        .zip(path.rsplit('/'))
        .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
        .count()
}

/// The files each location names, and the definitions its line falls in.
#[derive(Debug, Default)]
pub struct Located {
    /// Files a location names.
    pub files: Vec<u32>,
    /// The innermost definition (not the file) holding each named line.
    pub nodes: Vec<u32>,
    /// Each named line that falls in a definition: (file, line).
    pub lines: Vec<(u32, u32)>,
}

/// Resolves `locations` against `g`. A location names the files sharing the most trailing
/// components with it: two or more (`marshmallow/schema.py` in a `src/` layout), or a file's
/// whole path (`setup.py`), or — for a bare file name — the one file of that name.
pub fn resolve(locations: &[Location], g: &Graph) -> Located {
    let mut located = Located::default();
    if locations.is_empty() {
        return located;
    }
    // One pass over the files looks up each file's name (hashed ASCII-lower-cased, no
    // allocation): a location can only name files of its own name.
    let mut by_name: std::collections::HashMap<u64, Vec<usize>, fittok_util::hash::FnvBuild> =
        Default::default();
    for (li, loc) in locations.iter().enumerate() {
        if let Some(name) = loc.components.last() {
            by_name.entry(name_hash(name)).or_default().push(li);
        }
    }
    let mut named_files: Vec<Vec<u32>> = vec![Vec::new(); locations.len()];
    for (fi, f) in g.files.iter().enumerate() {
        let name = f.path.rsplit('/').next().unwrap_or(&f.path);
        let Some(locs) = by_name.get(&name_hash(name)) else {
            continue;
        };
        for &li in locs {
            if locations[li]
                .components
                .last()
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
            {
                named_files[li].push(fi as u32);
            }
        }
    }
    for (loc, candidates) in locations.iter().zip(&named_files) {
        let mut best = 0;
        let mut files = Vec::new();
        for &fi in candidates {
            let path = &g.files[fi as usize].path;
            let shared = shared_tail(&loc.components, path);
            let whole = shared == path.split('/').count();
            if !(shared >= 2 || whole || loc.components.len() == 1) {
                continue;
            }
            if shared > best {
                best = shared;
                files.clear();
            }
            if shared == best {
                files.push(fi);
            }
        }
        if loc.components.len() == 1 && files.len() > 1 {
            continue;
        }
        for &fi in &files {
            if let Some(line) = loc.line
                && let Some(node) = innermost_holding(g, fi, line)
            {
                located.nodes.push(node);
                located.nodes.extend(enclosing_neighbourhood(g, node));
                located.lines.push((fi, line));
            }
        }
        located.files.extend(files);
    }
    for v in [&mut located.files, &mut located.nodes] {
        v.sort_unstable();
        v.dedup();
    }
    located.lines.sort_unstable();
    located.lines.dedup();
    located
}

/// How many definitions lines cited beyond the question's text may name.
pub const MAX_CITED_HOLDERS: usize = 12;

/// The innermost definitions holding `lines` ((file, line) pairs), at most `max`: those
/// holding the most of them, ties to the earlier node.
pub fn holders(g: &Graph, lines: &[(u32, u32)], max: usize) -> Vec<u32> {
    let mut count: std::collections::HashMap<u32, usize> = Default::default();
    for &(file, line) in lines {
        if let Some(node) = innermost_holding(g, file, line) {
            *count.entry(node).or_default() += 1;
        }
    }
    let mut nodes: Vec<(u32, usize)> = count.into_iter().collect();
    nodes.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    nodes.into_iter().take(max).map(|(n, _)| n).collect()
}

/// FNV-1a of `name`, ASCII-lower-cased.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A one-line definition (a field, an alias, a constant) is a neighbour of the line a question
/// names as much as its subject: reporters cite lines of their own version, which drift from
/// the repository's by a few.
const TINY_LINES: u32 = 2;
/// The largest enclosing definition that stands for a tiny one's neighbourhood.
const NEIGHBOURHOOD_LINES: u32 = 100;

/// The definition enclosing a one-line `node` that holds the lines around it, when one is
/// small enough to be that neighbourhood.
fn enclosing_neighbourhood(g: &Graph, node: u32) -> Option<u32> {
    let span = |n: u32| g.def(n).end_line - g.def(n).start_line + 1;
    if span(node) >= TINY_LINES {
        return None;
    }
    let mut up = g.parent(node);
    while let Some(p) = up {
        if g.def(p).kind == DefKind::File || span(p) > NEIGHBOURHOOD_LINES {
            return None;
        }
        if span(p) >= TINY_LINES {
            return Some(p);
        }
        up = g.parent(p);
    }
    None
}

/// The smallest definition of file `fi` (not the file itself) whose lines hold `line`.
fn innermost_holding(g: &Graph, fi: u32, line: u32) -> Option<u32> {
    let (start, end) = (
        *g.file_start.get(fi as usize)?,
        *g.file_start.get(fi as usize + 1)?,
    );
    (start..end)
        .filter(|&n| {
            let d = g.def(n);
            d.kind != DefKind::File && d.start_line <= line && line <= d.end_line
        })
        .min_by_key(|&n| {
            let d = g.def(n);
            (d.end_line - d.start_line, std::cmp::Reverse(n))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(question: &str) -> Vec<(String, Option<u32>)> {
        locations(question)
            .iter()
            .map(|l| (l.path(), l.line))
            .collect()
    }

    #[test]
    fn reads_the_shapes_issues_write_locations_in() {
        let q = "Traceback:\n  File \"/env/lib/site-packages/marshmallow/schema.py\", line 628, in _do_load\n\
                 DEBUG|grep_regex::literal|grep-regex/src/literal.rs:105: found\n\
                 panicked at 'boom', src/main.rs:9:5\n\
                 at com.google.gson.Gson.fromJson(Gson.java:932)\n\
                 at Object.<anonymous> (/app/node_modules/axios/lib/utils.js:195:12)\n\
                 see https://github.com/o/r/blob/abc123/src/generators/theme.ts#L61-L70\n\
                 and C:\\proj\\src\\pkg\\__init__.py:1 and requests/models.py\n\
                 at Foo.Bar() in C:\\src\\Lib\\Reader.cs:line 42\n\
                 #0 /app/vendor/pkg/src/Thing.php(123): Pkg\\Thing->run()\n\
                 src/app.ts(12,5): error TS2345 and notes.txt (2 times)";
        assert_eq!(
            found(q),
            [
                (
                    "env/lib/site-packages/marshmallow/schema.py".into(),
                    Some(628)
                ),
                ("grep-regex/src/literal.rs".into(), Some(105)),
                ("src/main.rs".into(), Some(9)),
                ("gson.java".into(), Some(932)),
                ("app/node_modules/axios/lib/utils.js".into(), Some(195)),
                (
                    "https:/github.com/o/r/blob/abc123/src/generators/theme.ts".into(),
                    Some(61)
                ),
                ("proj/src/pkg/__init__.py".into(), Some(1)),
                ("requests/models.py".into(), None),
                ("src/lib/reader.cs".into(), Some(42)),
                ("app/vendor/pkg/src/thing.php".into(), Some(123)),
                ("src/app.ts".into(), Some(12)),
            ]
        );
    }

    #[test]
    fn reads_the_lines_prose_gives_for_a_path() {
        let q = "private (fmt/format.h - line 4055. Adding one to include/fmt/core.h at line \
                 12: fixes it; so does line 7 of src/jv.c, and src/a.c line 9";
        assert_eq!(
            found(q),
            [
                ("fmt/format.h".into(), Some(4055)),
                ("include/fmt/core.h".into(), Some(12)),
                ("src/jv.c".into(), Some(7)),
                ("src/a.c".into(), Some(9)),
            ]
        );
        // A number that is no line stays unread.
        assert_eq!(found("src/a.c - 9 lines"), [("src/a.c".into(), None)]);
    }

    #[test]
    fn prose_with_dots_is_no_location() {
        assert!(found("Node.js and Vue.js, e.g. v1.2.3, see docs/ and 3.14 or a/b.").is_empty());
        assert!(found("").is_empty());
        assert!(found("é/ü.ß:: :12 /:3 #L #L99 x.py#L").is_empty());
    }

    fn graph() -> Graph {
        crate::testing::graph_of(&[
            (
                "src/marshmallow/schema.py",
                "import os\n\nclass Schema:\n    def load(self):\n        return 1\n\n    def dump(self):\n        return 2\n\nclass Parser:\n    limit = 3\n\n    def parse(self):\n        return self.limit\n",
            ),
            ("tests/schema.py", "def load():\n    return 3\n"),
            ("setup.py", "x = 1\n"),
        ])
    }

    fn names(g: &Graph, nodes: &[u32]) -> Vec<String> {
        nodes.iter().map(|&n| g.def(n).name.clone()).collect()
    }

    #[test]
    fn a_line_names_the_innermost_definition_of_the_best_matching_file() {
        let g = graph();
        let l = resolve(
            &locations("File \"/venv/site-packages/marshmallow/schema.py\", line 7, in dump"),
            &g,
        );
        assert_eq!(l.files.len(), 1);
        assert_eq!(
            g.files[l.files[0] as usize].path,
            "src/marshmallow/schema.py"
        );
        assert_eq!(names(&g, &l.nodes), ["dump"]);
        // A one-line definition names its enclosing definition too.
        let l = resolve(&locations("src/marshmallow/schema.py - line 11."), &g);
        assert_eq!(names(&g, &l.nodes), ["Parser", "fields"]);
        // Out of range or on no definition's lines: the file alone.
        let l = resolve(&locations("src/marshmallow/schema.py:400"), &g);
        assert_eq!((l.files.len(), l.nodes.len()), (1, 0));
    }

    #[test]
    fn a_bare_name_or_a_single_shared_component_must_be_unambiguous() {
        let g = graph();
        // Two files are called schema.py: a bare name names neither.
        assert!(resolve(&locations("(schema.py:4)"), &g).files.is_empty());
        // One shared component that is not a file's whole path: another project's file.
        assert!(
            resolve(&locations("/usr/lib/python3/other/schema.py:4"), &g)
                .files
                .is_empty()
        );
        // A root file's whole path is enough.
        assert_eq!(
            resolve(&locations("/home/u/proj/setup.py:1"), &g)
                .files
                .len(),
            1
        );
    }
}
