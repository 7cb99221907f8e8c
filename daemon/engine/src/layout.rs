//! How every answer is laid out, in one place: a file's blocks under `### path` and one code
//! fence ([`file_opening`], [`FENCE_CLOSE`]), a `⋮` line between two blocks
//! ([`BETWEEN_BLOCKS`]), a single node under `### path:start-end kind name` ([`heading`]), a
//! line range under `### path:a-b` ([`range_heading`]), line numbers on a run's first line and
//! every tenth ([`LINE_ANCHOR`]), and the stable id that names a node ([`node_id`]). Packing
//! counts these pieces' tokens; rendering, expansion and navigation write them.

use crate::link::Graph;
use crate::model::{DefKind, Lang};

/// The info string of a code fence: the language's own name is what Markdown renderers know.
pub fn fence_lang(lang: Lang) -> &'static str {
    lang.name()
}

/// The stable id of a node: `path#qualified_name`, with `@line` when the name repeats in the
/// file.
pub fn node_id(g: &Graph, node: u32) -> String {
    let def = g.def(node);
    let file = g.file_of(node);
    if def.kind == DefKind::File {
        return file.path.clone();
    }
    let dup = file
        .definitions
        .iter()
        .filter(|d| d.qualified_name == def.qualified_name)
        .count()
        > 1;
    if dup {
        format!("{}#{}@{}", file.path, def.qualified_name, def.start_line)
    } else {
        format!("{}#{}", file.path, def.qualified_name)
    }
}

/// Within a run of consecutive lines, a line number is shown on the run's first line and on
/// every line whose number is a multiple of this; the others follow from them (and the block's
/// header gives its range). A number on every line was a tenth of an answer's tokens; every
/// tenth line keeps any line findable by counting from a nearby anchor, and the tokens saved
/// buy code.
pub const LINE_ANCHOR: u32 = 10;

/// A single node's heading and opening fence, as `fittok expand` shows it:
/// `### path:start-end kind name`.
pub fn heading(g: &Graph, node: u32) -> String {
    let def = g.def(node);
    let file = g.file_of(node);
    format!(
        "### {}:{}-{} {}\n```{}\n",
        file.path,
        def.start_line,
        def.end_line,
        // An impl block's name already says `impl …`; a file's name is its path.
        match def.kind {
            DefKind::Impl => def.qualified_name.clone(),
            DefKind::File => "file".to_string(),
            kind => format!("{} {}", kind.name(), def.qualified_name),
        },
        fence_lang(file.lang)
    )
}

/// A line range's heading and opening fence: `### path:a-b`, as `fittok expand path:a-b`
/// shows it, or `### path:a-b title` (a navigation site and what it does).
pub fn range_heading(path: &str, first: u32, last: u32, title: Option<&str>, lang: Lang) -> String {
    match title {
        Some(t) => format!("### {path}:{first}-{last} {t}\n```{}\n", fence_lang(lang)),
        None => format!("### {path}:{first}-{last}\n```{}\n", fence_lang(lang)),
    }
}

/// What opens a file's blocks in an answer: its path as a heading, then the fence.
pub fn file_opening(path: &str, lang: Lang) -> String {
    format!("### {path}\n```{}\n", fence_lang(lang))
}

/// What closes a file's blocks (and a single node's, [`heading`]).
pub const FENCE_CLOSE: &str = "```\n";

/// The line between two blocks of one file.
pub const BETWEEN_BLOCKS: &str = "⋮\n";
