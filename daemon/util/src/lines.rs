//! Line arithmetic over source bytes: where each line starts, and lines by number. Shared by
//! the parser (regions), packing (windows) and rendering (expand).

/// Line starts of every file of a snapshot, each computed on first use and kept: rendering
/// an answer looks them up for every candidate block, across several selection rounds.
pub struct LineIndex {
    slots: Vec<std::sync::OnceLock<Vec<usize>>>,
}

impl LineIndex {
    /// Heap bytes of the line starts computed so far (files are indexed on first use).
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<std::sync::OnceLock<Vec<usize>>>()
            + self
                .slots
                .iter()
                .filter_map(|s| s.get())
                .map(|v| v.capacity() * std::mem::size_of::<usize>())
                .sum::<usize>()
    }

    pub fn new(files: usize) -> LineIndex {
        LineIndex {
            slots: (0..files).map(|_| std::sync::OnceLock::new()).collect(),
        }
    }

    /// The line starts of file `file`, whose bytes are `src`.
    pub fn starts<'a>(&'a self, file: u32, src: &[u8]) -> std::borrow::Cow<'a, [usize]> {
        match self.slots.get(file as usize) {
            Some(slot) => std::borrow::Cow::Borrowed(slot.get_or_init(|| line_starts(src))),
            None => std::borrow::Cow::Owned(line_starts(src)),
        }
    }
}

/// Byte offsets of line starts in a source.
pub fn line_starts(src: &[u8]) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(
        src.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1),
    );
    v
}

/// The text of lines `first..=last` (1-based) of a source.
pub fn lines_of(src: &[u8], starts: &[usize], first: u32, last: u32) -> Vec<String> {
    let mut out = Vec::new();
    for l in first..=last {
        let i = l as usize - 1;
        let Some(&s) = starts.get(i) else { break };
        let e = starts.get(i + 1).copied().unwrap_or(src.len());
        if s >= src.len() && l > first {
            break;
        }
        let line = String::from_utf8_lossy(&src[s.min(src.len())..e.min(src.len())]);
        out.push(line.trim_end_matches(['\n', '\r']).to_string());
    }
    out
}

/// Lines trimmed, blank ones dropped, joined by single spaces: how a signature spanning
/// several lines reads as one (`parse` builds signatures so, and packing recognises a
/// definition's written header by the same rule).
pub fn joined<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for line in lines.into_iter().map(str::trim).filter(|l| !l.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}
