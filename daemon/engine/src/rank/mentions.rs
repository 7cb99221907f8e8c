//! The mention signal: code the question names outright — identifiers in backticks or with
//! code shape (`snake_case`, `camelCase`, `Type::method`, `a.b.c`, `--flag`), and file paths
//! and places (`src/lib.rs:105`, traceback frames; see [`super::locations`]). A name the user
//! typed is the strongest evidence there is, and a line the user points at names its
//! definition as well as a name does.

use std::collections::{HashMap, HashSet};

use super::locations::{self, Location};
use crate::index::bm25::Bm25;
use crate::link::{EdgeKind, Graph};
use crate::model::DefKind;

/// The mention score of a definition the question names outright.
pub const NAMED: f32 = 3.0;
/// The mention score of code that uses a definition the question names (below a mentioned
/// file's 1).
const REFERRER: f32 = 0.5;
/// A name matching more definitions than this is too common for its users to be evidence.
const SPECIFIC_NAME: usize = 3;
/// A mentioned identifier written in more nodes than this is too common for them to be its
/// users (see [`Mentions::scores`]): past a few dozen writers an identifier is plumbing, and
/// its users crowd out the definitions that hold the behaviour asked about.
const SPECIFIC_USES: u32 = 20;

/// Identifiers and paths the question mentions, lower-cased.
pub struct Mentions {
    /// Last segments of code-shaped identifiers (`get_auth_from_url`, `resolve_redirects`),
    /// with the owners they were qualified by (`Session.send`: `send` owned by `session`).
    names: HashMap<String, Qualified>,
    /// File paths, with a line when the question gives one.
    locations: Vec<Location>,
}

/// How the question wrote one name.
#[derive(Debug, Default)]
struct Qualified {
    /// Alone somewhere (`send`, or a backticked `Session` before its `.send`).
    bare: bool,
    /// The segment before it wherever it was qualified (`session` of `Session.send`).
    owners: Vec<String>,
    /// Written somewhere as an identifier of several parts (`only_matching`, `onlyMatching`,
    /// `--only-matching`): the index holds it whole, see [`Mentions::joined`].
    several_parts: bool,
}

/// Notes `name` as mentioned, qualified by `owner` if given.
fn note(names: &mut HashMap<String, Qualified>, name: &str, owner: Option<&str>) {
    let q = names.entry(name.to_lowercase()).or_default();
    // The key is lower-cased, so the parts are read from this spelling.
    q.several_parts |= name.len() >= 6
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && crate::index::tokenize::split_identifier(name).len() >= 2;
    match owner {
        Some(o) => {
            let o = o.to_lowercase();
            if !q.owners.contains(&o) {
                q.owners.push(o);
            }
        }
        None => q.bare = true,
    }
}

/// The segments of a qualified name (`a.b.C::d()` → `a`, `b`, `C`, `d`), `()` dropped.
fn segments(word: &str) -> Vec<&str> {
    word.split(['.', ':', '#'])
        .map(|s| s.trim_end_matches("()"))
        .filter(|s| !s.is_empty())
        .collect()
}

fn code_shaped(word: &str) -> bool {
    let has_lower = word.chars().any(|c| c.is_lowercase());
    let has_upper = word.chars().any(|c| c.is_uppercase());
    word.contains('_')
        || (has_lower && has_upper && !word.chars().skip(1).all(|c| c.is_lowercase()))
        || word.ends_with("()")
}

impl Mentions {
    pub fn of(question: &str) -> Mentions {
        let mut names = HashMap::new();
        // Backticked spans are code whatever their shape: every segment of a chain is
        // mentioned, its last qualified by the one before (`Session.send`).
        for part in question.split('`').skip(1).step_by(2) {
            if part.len() >= 80 {
                continue;
            }
            for chain in part.split(|c: char| !(c.is_alphanumeric() || "_.:#".contains(c))) {
                let segs = segments(chain);
                for (i, seg) in segs.iter().enumerate() {
                    if seg.len() >= 3 && !seg.chars().all(|c| c.is_ascii_digit()) {
                        let owner = (i > 0 && i + 1 == segs.len()).then(|| segs[i - 1]);
                        note(&mut names, seg, owner);
                    }
                }
            }
        }
        for raw in question.split(|c: char| c.is_whitespace() || "\"'(),;<>[]{}=".contains(c)) {
            let w = raw.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '/'));
            if w.is_empty() {
                continue;
            }
            // Paths are locations (below), not names.
            if w.contains('/') && w.rsplit('/').next().is_some_and(|f| f.contains('.')) {
                continue;
            }
            // A flag may be backticked (`` `--only-matching` ``) or in bold; quotes split words.
            let flag = raw
                .trim_start_matches(|c: char| c.is_whitespace() || c == '`' || c == '*')
                .starts_with("--");
            if flag && w.len() >= 3 {
                note(
                    &mut names,
                    &w.trim_start_matches('-').replace('-', "_"),
                    None,
                );
                continue;
            }
            // Dotted or path-qualified names: the last segment, qualified by the one before.
            let segs = segments(w);
            let Some(&last) = segs.last() else {
                continue;
            };
            if (code_shaped(last) || w.contains("::") || (w.contains('.') && code_shaped(w)))
                && last.len() >= 3
            {
                let owner = (segs.len() > 1).then(|| segs[segs.len() - 2]);
                note(&mut names, last, owner);
            }
        }
        Mentions {
            names,
            locations: locations::locations(question),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.locations.is_empty()
    }

    /// The definitions the question names, in order. A name the question only wrote qualified
    /// (`Session.send`, `Gson.fromJson`, `literal::extract`) names the definitions of that name
    /// whose owner — enclosing definition, file stem or directory — is the qualifier, when
    /// there are any; otherwise every definition of the name (`self.send`).
    fn named(&self, g: &Graph) -> Vec<u32> {
        // Every node's name is compared, on every question: lower-case it into one buffer, and
        // only when its length is one a mentioned name has (a String per node was 6 % of a
        // warm query on kafka's 115k nodes).
        let lengths = self
            .names
            .keys()
            .fold(0u64, |m, n| m | 1u64 << n.len().min(63));
        let mut lower = String::new();
        let mut named = Vec::new();
        // Qualified-only names: (name, node, whether its owner is a qualifier).
        let mut qualified: Vec<(&str, u32, bool)> = Vec::new();
        for node in 0..g.nodes.len() as u32 {
            let def = g.def(node);
            if matches!(def.kind, DefKind::File | DefKind::Region)
                || (def.name.is_ascii() && lengths & 1u64 << def.name.len().min(63) == 0)
            {
                continue;
            }
            lower.clear();
            lower.extend(def.name.chars().flat_map(char::to_lowercase));
            let Some((name, q)) = self.names.get_key_value(lower.as_str()) else {
                continue;
            };
            if q.bare {
                named.push(node);
            } else {
                qualified.push((name, node, owned_by(g, node, &q.owners)));
            }
        }
        let owned: HashSet<&str> = qualified.iter().filter(|q| q.2).map(|q| q.0).collect();
        named.extend(
            qualified
                .iter()
                .filter(|(name, _, own)| *own || !owned.contains(name))
                .map(|q| q.1),
        );
        named.sort_unstable();
        named
    }

    /// A score per node: [`NAMED`] (3) for a node named as mentioned or holding a line the
    /// question points at, 1 for being in a mentioned file (2 for the file node itself), and
    /// [`REFERRER`] for code that uses a specific named definition. With `content` (the
    /// content index), code that writes a mentioned identifier few nodes write counts as its
    /// user too: a field, option or key is read where its behaviour lives (`--only-matching`
    /// is `self.only_matching` in the printer), and such reads are no call edges.
    pub fn scores(&self, g: &Graph, content: Option<&Bm25>) -> Vec<f32> {
        let mut scores = vec![0.0f32; g.nodes.len()];
        if self.is_empty() {
            return scores;
        }
        let located = locations::resolve(&self.locations, g);
        // Every node's name is compared, on every question: lower-case it into one buffer, and
        // only when its length is one a mentioned name has (a String per node was 6 % of a
        // warm query on kafka's 115k nodes).
        let named = self.named(g);
        for &node in named.iter().chain(&located.nodes) {
            scores[node as usize] = NAMED;
        }
        for &file in &located.files {
            let (Some(&start), Some(&end)) = (
                g.file_start.get(file as usize),
                g.file_start.get(file as usize + 1),
            ) else {
                continue;
            };
            for node in start..end {
                scores[node as usize] += if g.def(node).kind == DefKind::File {
                    2.0
                } else {
                    1.0
                };
            }
        }
        let users = content.map_or_else(Vec::new, |c| self.users(c));
        add_referrers(g, &named, users, &mut scores);
        scores
    }

    /// The mentioned identifiers of several parts, as the tokenizer joins them
    /// (`only_matching`, `onlyMatching` → `onlymatching`, see [`crate::index::tokenize`]).
    fn joined(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .names
            .iter()
            .filter(|(_, q)| q.several_parts)
            .map(|(name, _)| name.replace('_', ""))
            .filter(|joined| joined.len() >= 6)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The nodes whose own text holds a mentioned identifier of several parts that at most
    /// [`SPECIFIC_USES`] nodes hold.
    fn users(&self, content: &Bm25) -> Vec<u32> {
        let mut out = Vec::new();
        for term in &self.joined() {
            let df = content.doc_frequency(term);
            if df == 0 || df > SPECIFIC_USES {
                continue;
            }
            out.extend(content.documents_with(term));
        }
        out
    }
}

/// Whether one of `owners` is `node`'s enclosing definition or a type that one extends or
/// implements (`MockitoPlugins.getInlineMockMaker` names the implementation's method too), or
/// its file stem or directory.
fn owned_by(g: &Graph, node: u32, owners: &[String]) -> bool {
    let is = |s: &str| owners.iter().any(|o| o.eq_ignore_ascii_case(s));
    if let Some(p) = g.parent(node)
        && (is(&g.def(p).name)
            || g.targets(p, &[EdgeKind::Inherits, EdgeKind::Implements])
                .any(|base| is(&g.def(base).name)))
    {
        return true;
    }
    let path = g.file_of(node).path.as_str();
    let mut parts = path.rsplit('/');
    let stem = parts
        .next()
        .map(|f| f.split_once('.').map_or(f, |(s, _)| s));
    stem.is_some_and(is) || parts.next().is_some_and(is)
}

/// Code that uses a definition the question names (`named`): where a named function is called
/// or a named type is used is often where the fix goes (a handler registered, an option passed
/// on). Only specific names count: one matching at most [`SPECIFIC_NAME`] definitions. `users`
/// (code writing a specific mentioned identifier) count the same, once per node.
fn add_referrers(g: &Graph, named: &[u32], users: Vec<u32>, scores: &mut [f32]) {
    let mut by_name: HashMap<&str, Vec<u32>> = HashMap::new();
    for &node in named {
        by_name
            .entry(g.def(node).name.as_str())
            .or_default()
            .push(node);
    }
    let kinds = [
        EdgeKind::Calls,
        EdgeKind::References,
        EdgeKind::Inherits,
        EdgeKind::Implements,
    ];
    let mut add = users;
    for nodes in by_name.values().filter(|n| n.len() <= SPECIFIC_NAME) {
        for &named in nodes {
            add.extend(g.sources(named, &kinds).filter(|&from| from != named));
        }
    }
    add.sort_unstable();
    add.dedup();
    for from in add {
        if !matches!(g.def(from).kind, DefKind::File | DefKind::Region) {
            scores[from as usize] += REFERRER;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_code_names_flags_and_paths() {
        let m = Mentions::of(
            "Calling `Session.send` fails in requests/models.py, line 12, in prepare_body; \
             also rg --no-ignore-vcs and HTTPAdapter. The word Because is not code.",
        );
        for n in [
            "send",
            "session",
            "prepare_body",
            "no_ignore_vcs",
            "httpadapter",
        ] {
            assert!(m.names.contains_key(n), "{n} in {:?}", m.names);
        }
        assert!(!m.names.contains_key("because"));
        assert_eq!(m.locations, locations::locations("requests/models.py:12"));
    }

    fn scores_by_name(question: &str, sources: &[(&str, &str)]) -> Vec<(String, f32)> {
        let g = crate::testing::graph_of(sources);
        let scores = Mentions::of(question).scores(&g, None);
        (0..g.nodes.len() as u32)
            .filter(|&n| !matches!(g.def(n).kind, DefKind::File | DefKind::Region))
            .map(|n| (g.def(n).name.clone(), scores[n as usize]))
            .collect()
    }

    #[test]
    fn code_writing_a_specific_mentioned_identifier_is_its_user() {
        use std::sync::Arc;
        let printer = "class Printer:\n    def only_matching(self, yes):\n        self.only_matching = yes\n\n\
                       def write_match(self, m):\n        if self.only_matching:\n            return m\n        return None\n\n\
                       def write_line(self, line):\n        return line\n";
        let files = [("src/printer.py", printer)];
        let g = crate::testing::graph_of(&files);
        let sources: crate::index::Sources =
            files.iter().map(|(_, s)| Arc::from(s.as_bytes())).collect();
        let ix = crate::index::Index::build(&g, &sources);
        let question = "`--only-matching` prints the first match of a line N times";
        let m = Mentions::of(question);
        assert_eq!(m.joined(), vec!["onlymatching".to_string()]);
        let score_of = |scores: &[f32], name: &str| {
            (0..g.nodes.len() as u32)
                .find(|&n| g.def(n).name == name)
                .map(|n| scores[n as usize])
        };
        let without = m.scores(&g, None);
        let with = m.scores(&g, Some(&ix.content.get()));
        // The setter is named by the flag; the method reading the field is found only through
        // the identifier it writes.
        assert_eq!(score_of(&without, "only_matching"), Some(NAMED));
        assert_eq!(score_of(&without, "write_match"), Some(0.0));
        assert_eq!(score_of(&with, "write_match"), Some(REFERRER));
        assert_eq!(score_of(&with, "write_line"), Some(0.0));
        // A one-part word is no identifier of its own: `--fixtures` joins nothing.
        assert!(
            Mentions::of("pytest `--fixtures` lists them")
                .joined()
                .is_empty()
        );
    }

    #[test]
    fn code_using_a_specific_named_definition_is_mentioned_too() {
        let handler = "def recover_handler(next):\n    return next\n\n\
                       def log_handler(next):\n    return next\n";
        let engine = "from handler import recover_handler\n\n\
                      def bind_route(route):\n    return recover_handler(route)\n\n\
                      def start():\n    return 1\n";
        let scores = scores_by_name(
            "Can `recover_handler` be customised?",
            &[("handler.py", handler), ("engine.py", engine)],
        );
        let of = |name: &str| scores.iter().find(|(n, _)| n == name).unwrap().1;
        assert_eq!(of("recover_handler"), NAMED);
        assert_eq!(of("bind_route"), REFERRER, "{scores:?}");
        assert_eq!(of("start"), 0.0);
        assert_eq!(of("log_handler"), 0.0);
    }

    #[test]
    fn a_line_the_question_points_at_names_its_definition() {
        let schema = "class Schema:\n    def load(self):\n        return 1\n\n    def dump(self):\n        return 2\n";
        let scores = scores_by_name(
            "Traceback:\n  File \"/venv/site-packages/pkg/schema.py\", line 5, in dump",
            &[
                ("src/pkg/schema.py", schema),
                ("src/other.py", "def dump():\n    return 3\n"),
            ],
        );
        let of = |name: &str| -> Vec<f32> {
            scores
                .iter()
                .filter(|(n, _)| n == name)
                .map(|s| s.1)
                .collect()
        };
        // `dump` is no code-shaped name: the line names it, and only the one in that file.
        let mut dumps = of("dump");
        dumps.sort_by(f32::total_cmp);
        assert_eq!(dumps, [0.0, NAMED + 1.0], "{scores:?}");
        assert_eq!(of("load"), [1.0]);
    }

    #[test]
    fn a_qualified_name_names_the_definitions_its_qualifier_owns() {
        let sessions = "class Session:\n    def send(self):\n        return 1\n";
        let adapters = "class HTTPAdapter:\n    def send(self):\n        return 2\n";
        let files = [("sessions.py", sessions), ("adapters.py", adapters)];
        let sends = |question: &str| -> Vec<f32> {
            let scores = scores_by_name(question, &files);
            // adapters.py's `send` first, sessions.py's second (files in path order).
            let s: Vec<f32> = scores
                .iter()
                .filter(|(n, _)| n == "send")
                .map(|s| s.1)
                .collect();
            assert_eq!(s.len(), 2, "{scores:?}");
            s
        };
        assert_eq!(sends("Why does `Session.send` hang?"), [0.0, NAMED]);
        assert_eq!(
            sends("at requests.sessions.Session.send_it and Session.send"),
            [0.0, NAMED]
        );
        // The module (file stem) qualifies too.
        assert_eq!(sends("`adapters.send` hangs"), [NAMED, 0.0]);
        // A base qualifies its subclasses' methods.
        let base = "class Adapter:\n    def send(self):\n        return 0\n";
        let derived = "from base import Adapter\n\nclass HTTPAdapter(Adapter):\n    def send(self):\n        return 2\n";
        let other = "class Other:\n    def send(self):\n        return 3\n";
        let scores = scores_by_name(
            "`Adapter.send` hangs",
            &[("base.py", base), ("http.py", derived), ("other.py", other)],
        );
        let s: Vec<f32> = scores
            .iter()
            .filter(|(n, _)| n == "send")
            .map(|s| s.1)
            .collect();
        assert_eq!(s, [NAMED, NAMED, 0.0], "{scores:?}");
        // A qualifier that owns no `send` (a variable) leaves every `send` named.
        assert_eq!(sends("`self.send()` hangs"), [NAMED, NAMED]);
        // Written bare anywhere: every `send`.
        assert_eq!(sends("`Session.send` and `send`"), [NAMED, NAMED]);
    }

    #[test]
    fn users_of_a_common_name_are_not_evidence() {
        let many: Vec<(String, String)> = (0..=SPECIFIC_NAME)
            .map(|i| (format!("m{i}.py"), "def run():\n    return 1\n".to_string()))
            .collect();
        let mut sources: Vec<(&str, &str)> =
            many.iter().map(|(p, s)| (p.as_str(), s.as_str())).collect();
        sources.push((
            "caller.py",
            "from m0 import run\n\ndef go():\n    return run()\n",
        ));
        let scores = scores_by_name("Why does `run` hang?", &sources);
        let go = scores.iter().find(|(n, _)| n == "go").unwrap().1;
        assert_eq!(go, 0.0, "{scores:?}");
    }

    #[test]
    fn any_text_is_safe() {
        Mentions::of("Étrange_nom ÉcoleNormale 東京_x `` ` --  -- ./ / é.ß::ü");
        Mentions::of("");
    }
}
