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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_tiktoken() {
        assert_eq!(count(Encoding::Cl100k, "hello world"), 2);
        assert_eq!(count(Encoding::O200k, "hello world"), 2);
        assert_eq!(count(Encoding::Cl100k, ""), 0);
    }
}
