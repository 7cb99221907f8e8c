//! Markdown: every heading (ATX or setext, never inside a code fence) becomes a section
//! spanning up to the next heading of the same or a higher level.

use crate::model::{DefKind, Definition, ParsedFile};

/// A heading found by [`headings`]: level 1–6, its text, the line it starts on (0-based) and
/// the byte offset of that line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    pub level: u8,
    pub text: String,
    pub line: usize,
    pub byte: usize,
    /// Lines the heading occupies (2 for setext).
    pub height: usize,
}

/// The headings of a Markdown document, in order, ignoring fenced code. Offsets count the
/// bytes as they are, even where they are not UTF-8 (lines are decoded lossily only to be
/// looked at).
pub fn headings_in_bytes(bytes: &[u8]) -> Vec<Heading> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut offset = 0;
    let mut prev_paragraph: Option<(usize, usize, String)> = None;
    for (i, raw) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        let decoded = String::from_utf8_lossy(raw);
        let line = decoded.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let start = offset;
        offset += raw.len();
        if let Some((ch, len)) = fence {
            let run = trimmed.chars().take_while(|&c| c == ch).count();
            if run >= len && trimmed[run * ch.len_utf8()..].trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if indent < 4 {
            let ch = trimmed.chars().next().unwrap_or(' ');
            if ch == '`' || ch == '~' {
                let run = trimmed.chars().take_while(|&c| c == ch).count();
                if run >= 3 {
                    fence = Some((ch, run));
                    prev_paragraph = None;
                    continue;
                }
            }
            let hashes = trimmed.chars().take_while(|&c| c == '#').count();
            if (1..=6).contains(&hashes)
                && trimmed[hashes..]
                    .chars()
                    .next()
                    .is_none_or(|c| c == ' ' || c == '\t')
            {
                let text = trimmed[hashes..]
                    .trim()
                    .trim_end_matches('#')
                    .trim()
                    .to_string();
                out.push(Heading {
                    level: hashes as u8,
                    text,
                    line: i,
                    byte: start,
                    height: 1,
                });
                prev_paragraph = None;
                continue;
            }
            let underline = trimmed.trim_end();
            if !underline.is_empty()
                && (underline.chars().all(|c| c == '=') || underline.chars().all(|c| c == '-'))
                && let Some((line, byte, text)) = prev_paragraph.take()
            {
                let level = if underline.starts_with('=') { 1 } else { 2 };
                out.push(Heading {
                    level,
                    text,
                    line,
                    byte,
                    height: 2,
                });
                continue;
            }
        }
        prev_paragraph = if trimmed.is_empty() || indent >= 4 {
            None
        } else if prev_paragraph.is_none() && !is_block_start(trimmed) {
            Some((i, start, trimmed.trim().to_string()))
        } else {
            // A setext heading's text is a single-line paragraph here; longer ones stay text.
            None
        };
    }
    out
}

fn is_block_start(line: &str) -> bool {
    line.starts_with(['>', '-', '*', '+', '|', '<'])
        || line.chars().next().is_some_and(|c| c.is_ascii_digit()) && line.contains(". ")
}

pub(super) fn extract(file: &mut ParsedFile, bytes: &[u8]) {
    let hs = headings_in_bytes(bytes);
    let total_lines = file.lines.max(1);
    let mut stack: Vec<(u8, u32)> = Vec::new();
    for (i, h) in hs.iter().enumerate() {
        let end = hs[i + 1..]
            .iter()
            .find(|n| n.level <= h.level)
            .map_or((total_lines, bytes.len()), |n| (n.line as u32, n.byte));
        while stack.last().is_some_and(|&(level, _)| level >= h.level) {
            stack.pop();
        }
        let parent = stack.last().map(|&(_, idx)| idx);
        let qualified_name = match parent {
            Some(p) => format!(
                "{} > {}",
                file.definitions[p as usize].qualified_name, h.text
            ),
            None => h.text.clone(),
        };
        file.definitions.push(Definition {
            name: h.text.clone(),
            qualified_name,
            kind: DefKind::Section,
            start_line: h.line as u32 + 1,
            end_line: end.0.max(h.line as u32 + 1),
            start_byte: h.byte as u32,
            end_byte: end.1 as u32,
            signature: format!("{} {}", "#".repeat(h.level as usize), h.text),
            doc: None,
            parent,
            is_test: false,
            is_prose: false,
        });
        stack.push((h.level, (file.definitions.len() - 1) as u32));
    }
}
