//! Token counting with the real tokenizer (cl100k by default, o200k as an option).

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
pub fn count(enc: Encoding, text: &str) -> usize {
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
        if let Ok(s) = b.decode(&ids[..n]) {
            if count(enc, &s) <= max {
                return s;
            }
        }
        n -= 1;
    }
    String::new()
}

#[cfg(test)]
mod tests {
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
