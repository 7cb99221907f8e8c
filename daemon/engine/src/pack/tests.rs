use std::collections::HashMap;
use std::sync::Arc;

use super::block::Mode;
use super::{Packer, Tuning};
use crate::index::Sources;
use crate::lines::LineIndex;
use crate::link::Graph;
use crate::rank::{Ranked, SignalRanks};
use crate::testing::{graph_of, ledger_source, node_named};
use crate::tokens::Encoding;

/// A graph of one or more files and everything a [`Packer`] reads, at default tuning and no
/// question terms.
struct Fixture {
    g: Graph,
    sources: Sources,
    lines: LineIndex,
    terms: HashMap<String, f32>,
    cited: Vec<(u32, u32)>,
    tuning: Tuning,
}

impl Fixture {
    fn of(path: &str, src: &str) -> Fixture {
        Fixture::of_files(&[(path, src)])
    }

    /// Several files, given in path order (the graph keeps it: sources are by file index).
    fn of_files(files: &[(&str, &str)]) -> Fixture {
        let g = graph_of(files);
        let sources = files
            .iter()
            .map(|(_, src)| Arc::from(src.as_bytes()))
            .collect();
        for (i, (path, _)) in files.iter().enumerate() {
            assert_eq!(g.files[i].path, *path);
        }
        Fixture {
            g,
            sources,
            lines: LineIndex::new(files.len()),
            terms: HashMap::new(),
            cited: Vec::new(),
            tuning: Tuning::default(),
        }
    }

    /// The same, asked a question holding `term` at `weight` (excerpts are placed by it).
    fn with_term(mut self, term: &str, weight: f32) -> Fixture {
        self.terms.insert(term.to_string(), weight);
        self
    }

    /// The same, asked a question that cites `line` of file `file`.
    fn citing(mut self, file: u32, line: u32) -> Fixture {
        self.cited.push((file, line));
        self.cited.sort_unstable();
        self
    }

    fn packer(&self) -> Packer<'_> {
        Packer {
            g: &self.g,
            sources: &self.sources,
            lines: &self.lines,
            enc: Encoding::Cl100k,
            terms: &self.terms,
            cited: &self.cited,
            tuning: &self.tuning,
        }
    }
}

fn ranked(node: u32, score: f32) -> Ranked {
    Ranked {
        node,
        score,
        ranks: SignalRanks::default(),
        probability: None,
    }
}

#[test]
fn a_big_containers_head_is_shown_only_when_nothing_else_can_be() {
    let src = ledger_source();
    let fx = Fixture::of("books.py", &src);
    let (g, p) = (&fx.g, fx.packer());
    let by_name = |name: &str| node_named(g, name);
    let (ledger, parse) = (by_name("Ledger"), by_name("parse_amount"));
    // Ranked first, the class is still too big for its outline: the function is the answer and
    // the class a pointer.
    let both = p.select(&[ranked(ledger, 1.0), ranked(parse, 0.9)], 300);
    let shown: Vec<u32> = both.blocks.iter().map(|b| b.node).collect();
    assert_eq!(shown, vec![parse]);
    assert!(both.pointers.iter().any(|&(n, _)| n == ledger));
    // Alone, it is shown as its first lines: an answer always shows something.
    let alone = p.select(&[ranked(ledger, 1.0)], 300);
    assert_eq!(alone.blocks.len(), 1);
    assert_eq!(alone.blocks[0].node, ledger);
    assert!(matches!(alone.blocks[0].mode, Mode::Head(_)));
    assert!(alone.blocks[0].tokens <= 300);
}

#[test]
fn a_definition_shown_whole_takes_the_place_of_the_blocks_it_holds() {
    let src = "def outer(values):\n    total = 0\n\n    def inner(v):\n        return v * 2\n\n    for v in values:\n        total += inner(v)\n    return total\n\n\ndef other(x):\n    return x + 1\n";
    let fx = Fixture::of("calc.py", src);
    let (g, p) = (&fx.g, fx.packer());
    let (outer, inner, other) = (
        node_named(g, "outer"),
        node_named(g, "inner"),
        node_named(g, "other"),
    );
    let sel = p.select(
        &[ranked(inner, 1.0), ranked(other, 0.9), ranked(outer, 0.8)],
        2000,
    );
    let shown: Vec<(u32, Mode)> = sel.blocks.iter().map(|b| (b.node, b.mode)).collect();
    // The nested function's lines are shown once, inside its parent, where it ranked.
    assert_eq!(shown, vec![(outer, Mode::Whole), (other, Mode::Whole)]);
    assert_eq!(sel.blocks[0].text.matches("return v * 2").count(), 1);
    assert!(
        sel.blocks[0].text.starts_with("1\tdef outer"),
        "{}",
        sel.blocks[0].text
    );
    assert!(sel.pointers.iter().all(|&(n, _)| n != inner));
    // With no budget too (its remaining tokens are unbounded).
    let uncapped = p.select(
        &[ranked(inner, 1.0), ranked(other, 0.9), ranked(outer, 0.8)],
        0,
    );
    let shown: Vec<u32> = uncapped.blocks.iter().map(|b| b.node).collect();
    assert_eq!(shown, vec![outer, other]);
}

#[test]
fn a_node_whose_lines_earlier_blocks_show_is_neither_shown_again_nor_a_pointer() {
    let src = "import os\nimport sys\nfrom pathlib import Path\n\n\ndef home():\n    return Path(os.environ.get('HOME', sys.prefix))\n";
    let fx = Fixture::of("paths.py", src);
    let (g, p) = (&fx.g, fx.packer());
    let home = node_named(g, "home");
    let imports = (0..g.nodes.len() as u32)
        .find(|&n| g.def(n).kind == crate::model::DefKind::Region)
        .expect("an imports region");
    assert_eq!(g.def(imports).start_line, 1);
    // At 4000 tokens the best node's file shows its head: the imports.
    let sel = p.select(&[ranked(home, 1.0), ranked(imports, 0.9)], 4000);
    let kinds: Vec<crate::model::DefKind> = sel.blocks.iter().map(|b| g.def(b.node).kind).collect();
    assert_eq!(
        kinds,
        vec![crate::model::DefKind::Function, crate::model::DefKind::File]
    );
    assert_eq!(
        sel.blocks
            .iter()
            .map(|b| b.text.matches("import sys").count())
            .sum::<usize>(),
        1
    );
    assert!(sel.pointers.iter().all(|&(n, _)| n != imports));
    // Without the head (a small budget), the region is shown.
    let small = p.select(&[ranked(home, 1.0), ranked(imports, 0.9)], 1500);
    assert!(small.blocks.iter().any(|b| b.node == imports));
}

#[test]
fn the_next_files_header_is_shown_when_it_is_short() {
    let module = |name: &str, imports: usize| {
        let imports: String = (0..imports)
            .map(|i| format!("from pkg.{name}_{i} import helper_{i}\n"))
            .collect();
        format!("{imports}\n\ndef f{name}(x):\n    return helper_0(x) + 1\n")
    };
    // b's imports are long; c's and d's are a line each.
    let files = [
        module("a", 2),
        module("b", 60),
        module("c", 1),
        module("d", 1),
    ];
    let fx = Fixture::of_files(&[
        ("a.py", &files[0]),
        ("b.py", &files[1]),
        ("c.py", &files[2]),
        ("d.py", &files[3]),
    ]);
    let (g, p) = (&fx.g, fx.packer());
    let order = |names: &[&str]| -> Vec<Ranked> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| ranked(node_named(g, n), 1.0 - i as f32 / 10.0))
            .collect()
    };
    let headed = |sel: &super::Selection| -> Vec<String> {
        sel.blocks
            .iter()
            .filter(|b| g.def(b.node).kind == crate::model::DefKind::File)
            .map(|b| g.file_of(b.node).path.clone())
            .collect()
    };
    // At 4000 tokens two files get their header whatever it costs (b's is cut to fit), and
    // the third (c) too, being short; the fourth does not.
    let sel = p.select(&order(&["fa", "fb", "fc", "fd"]), 4000);
    assert_eq!(headed(&sel), vec!["a.py", "b.py", "c.py"]);
    // A long header is not the third one: b's, third here, is left out.
    let sel = p.select(&order(&["fa", "fc", "fb", "fd"]), 4000);
    assert_eq!(headed(&sel), vec!["a.py", "c.py"]);
    // Under 2000 tokens no header at all.
    let sel = p.select(&order(&["fa", "fb", "fc", "fd"]), 1500);
    assert!(headed(&sel).is_empty());
}

#[test]
fn a_long_function_whose_words_sit_in_two_places_is_shown_as_two_windows() {
    let filler: String = (0..70)
        .map(|i| format!("    step_{i} = ledger.rows[{i}]\n"))
        .collect();
    let src = format!(
        "def settle(ledger):\n    refund = ledger.pending_refund()\n{filler}    ledger.apply(refund)\n    return refund\n"
    );
    let fx = Fixture::of("settle.py", &src).with_term("refund", 3.0);
    let (g, p) = (&fx.g, fx.packer());
    let settle = node_named(g, "settle");
    let answer = p.select(&[ranked(settle, 1.0)], 600);
    assert_eq!(answer.blocks.len(), 1);
    let block = &answer.blocks[0];
    let Mode::Windows(a, b, c, d) = block.mode else {
        panic!("two windows expected, got {:?}", block.mode);
    };
    // Both places are shown, each with its real line number, and a `⋮` before each window
    // that does not follow the signature.
    assert!(
        a <= 2 && 2 <= b && b + 1 < c && c <= 74 && d >= 74,
        "{a}-{b}, {c}-{d}"
    );
    assert!(
        block
            .text
            .contains("2\t    refund = ledger.pending_refund()")
    );
    assert!(block.text.contains("    return refund\n"));
    assert_eq!(block.text.matches("⋮\n").count(), 1 + usize::from(a > 2));
    assert!(block.tokens <= 300, "{} tokens", block.tokens);
    // With the words in one place only, one window.
    let fx = Fixture::of(
        "settle.py",
        &src.replace("    refund = ledger.pending_refund()", "    x = 0"),
    )
    .with_term("refund", 3.0);
    let (g, p) = (&fx.g, fx.packer());
    let answer = p.select(&[ranked(node_named(g, "settle"), 1.0)], 600);
    assert!(
        matches!(answer.blocks[0].mode, Mode::Window(..)),
        "{:?}",
        answer.blocks[0].mode
    );
}

#[test]
fn a_cited_line_places_a_long_functions_window_whatever_the_words_say() {
    let filler: String = (0..120)
        .map(|i| format!("    step_{i} = ledger.rows[{i}]\n"))
        .collect();
    let src = format!(
        "def settle(ledger):\n    refund = ledger.pending_refund()\n    refund.check()\n{filler}    return ledger\n"
    );
    // Line 100 holds `step_96`: a traceback's frame, far from where the question's word is.
    let show = |fx: &Fixture| {
        let p = fx.packer();
        let answer = p.select(&[ranked(node_named(&fx.g, "settle"), 1.0)], 400);
        answer.blocks[0].text.clone()
    };
    let fx = Fixture::of("settle.py", &src).with_term("refund", 3.0);
    let plain = show(&fx);
    assert!(
        plain.contains("refund.check()") && !plain.contains("step_96 "),
        "{plain}"
    );
    let cited = show(&fx.citing(0, 100));
    assert!(
        cited.contains("100\t    step_96 = ledger.rows[96]"),
        "{cited}"
    );
    // A line cited in another file leaves the window where the words are.
    let fx = Fixture::of("settle.py", &src)
        .with_term("refund", 3.0)
        .citing(1, 100);
    assert_eq!(show(&fx), plain);
}
