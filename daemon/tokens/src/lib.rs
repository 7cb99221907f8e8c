//! Token counting with the real tokenizer (cl100k by default, o200k as an option).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, OnceLock};

use tiktoken_rs::CoreBPE;

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    #[default]
    Cl100k,
    O200k,
}

fn bpe(enc: Encoding) -> Option<&'static CoreBPE> {
    static CL100K: OnceLock<Option<CoreBPE>> = OnceLock::new();
    static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();
    match enc {
        Encoding::Cl100k => CL100K
            .get_or_init(|| tiktoken_rs::cl100k_base().ok())
            .as_ref(),
        Encoding::O200k => O200K
            .get_or_init(|| tiktoken_rs::o200k_base().ok())
            .as_ref(),
    }
}

/// The number of tokens `text` encodes to. Falls back to a conservative chars/3 estimate if
/// the tokenizer cannot load (it is bundled, so that means a broken build).
///
/// Counts are memoised by a hash of the text: answering a question renders and measures the
/// same blocks several times, and neighbouring questions meet the same blocks again; BPE is
/// most of a query's time otherwise.
pub fn count(enc: Encoding, text: &str) -> usize {
    if text.len() < 64 {
        return count_uncached(enc, text);
    }
    // A long text (a whole answer) is counted per section: answers differ between render
    // passes in their header and share most sections, whose counts are then memoised.
    if text.len() > 4096 {
        return sections(text).map(|s| count_memo(enc, s)).sum();
    }
    count_memo(enc, text)
}

/// Splits before every line that starts with `#`. Exact for cl100k and o200k: their
/// pre-tokenizer never forms a piece that runs from a newline into a following
/// non-whitespace character, so token counts add up across such a boundary.
fn sections(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = rest
            .match_indices("\n#")
            .map(|(i, _)| i + 1)
            .find(|&i| i > 0)
            .unwrap_or(rest.len());
        let (head, tail) = rest.split_at(cut);
        rest = tail;
        Some(head)
    })
}

fn count_memo(enc: Encoding, text: &str) -> usize {
    const MEMO_MAX: usize = 200_000;
    static MEMO: OnceLock<Mutex<HashMap<(Encoding, u64), u32>>> = OnceLock::new();
    let key = (enc, {
        let mut h = std::hash::DefaultHasher::new();
        text.hash(&mut h);
        h.finish()
    });
    let memo = MEMO.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(&n) = memo.lock().ok().as_ref().and_then(|m| m.get(&key)) {
        return n as usize;
    }
    let n = count_uncached(enc, text);
    if let Ok(mut m) = memo.lock() {
        if m.len() >= MEMO_MAX {
            m.clear();
        }
        m.insert(key, n as u32);
    }
    n
}

fn count_uncached(enc: Encoding, text: &str) -> usize {
    match bpe(enc) {
        Some(b) => b.encode_ordinary(text).len(),
        None => text.chars().count().div_ceil(3),
    }
}

/// The longest prefix of `text` that encodes to at most `max` tokens.
pub fn truncate(enc: Encoding, text: &str, max: usize) -> String {
    let Some(b) = bpe(enc) else {
        return text.chars().take(max * 3).collect();
    };
    let ids = b.encode_ordinary(text);
    if ids.len() <= max {
        return text.to_string();
    }
    // A cut inside a multi-byte character does not decode: step back until it does.
    let mut n = max;
    while n > 0 {
        if let Ok(s) = b.decode(&ids[..n])
            && count(enc, &s) <= max
        {
            return s;
        }
        n -= 1;
    }
    String::new()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counting_by_sections_is_exact() {
        use super::*;
        let mut text = String::from(
            "fittok · repo · 1234 tokens\nAnswer from the code.\n\n## Map\n- a.py — f:1\n\n## Code\n",
        );
        for i in 0..60 {
            text.push_str(&format!(
                "### src/mod{i}.py:{i}-{} function f{i}\n```python\n{i}\tdef f{i}(x):  \n{}\t    return x  # 東京 ##\n\n\n```\n#not a heading but a line\n   # indented\n",
                i + 3,
                i + 1
            ));
        }
        assert!(text.len() > 4096);
        for enc in [Encoding::Cl100k, Encoding::O200k] {
            assert_eq!(count(enc, &text), count_uncached(enc, &text));
            assert_eq!(sections(&text).collect::<String>(), text);
        }
    }

    use super::*;

    #[test]
    fn counts_like_tiktoken() {
        assert_eq!(count(Encoding::Cl100k, "hello world"), 2);
        assert_eq!(count(Encoding::O200k, "hello world"), 2);
        assert_eq!(count(Encoding::Cl100k, ""), 0);
    }

    #[test]
    fn truncation_fits() {
        let text = "fittok · repo · café 東京 tokens and more words here";
        for max in 0..12 {
            let t = truncate(Encoding::Cl100k, text, max);
            assert!(count(Encoding::Cl100k, &t) <= max);
            assert!(text.starts_with(&t));
        }
    }
}
