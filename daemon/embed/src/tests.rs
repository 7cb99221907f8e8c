//! The embedder against sentence-transformers' own vectors (tests/fixtures, written by
//! scripts/reference-vectors.py): every text must reach cosine ≥ 0.9999.

use std::path::PathBuf;

use super::{DIM, EmbedOptions, Embedder, dot};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn model_dir() -> PathBuf {
    std::env::var_os("FITTOK_EMBED_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".model/all-MiniLM-L6-v2"))
}

fn model() -> Embedder {
    Embedder::load(&model_dir(), &EmbedOptions::default())
        .unwrap_or_else(|e| panic!("{e}: run scripts/fetch-model.sh"))
}

/// The fixture's texts and sentence-transformers' vectors for them.
fn reference() -> (Vec<String>, Vec<Vec<f32>>) {
    let fixture = std::fs::read_to_string(workspace().join("tests/fixtures/minilm_reference.json"))
        .expect("reference fixture");
    let v: serde_json::Value = serde_json::from_str(&fixture).expect("json");
    let texts = v["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    let vectors = v["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect()
        })
        .collect();
    (texts, vectors)
}

#[test]
fn matches_sentence_transformers() {
    let (texts, reference) = reference();
    let ours = model().embed(&texts).expect("embed");
    assert_eq!(ours.len(), texts.len());
    for (i, (a, b)) in ours.iter().zip(&reference).enumerate() {
        assert_eq!(a.len(), DIM);
        let cos = dot(a, b);
        assert!(
            cos >= 0.9999,
            "text {i} ({:?}): cosine {cos}",
            &texts[i][..texts[i].len().min(40)]
        );
    }
}

#[test]
fn batching_does_not_change_vectors() {
    let m = model();
    let texts: Vec<String> = vec![
        "short".into(),
        "a much longer text about parsing configuration files".into(),
    ];
    let together = m.embed(&texts).unwrap();
    let alone = m.embed(&texts[1..]).unwrap();
    assert!(dot(&together[1], &alone[0]) > 0.99999);
}

#[test]
fn half_precision_weights_keep_the_vectors() {
    // Loaded with f16 weights whatever the build (where the CPU has AVX2/FMA/F16C; elsewhere
    // this repeats the f32 test): short texts go through `half.rs`'s kernel, long ones
    // through gemm on widened weights; both must still match sentence-transformers.
    let m = Embedder::load_with(&model_dir(), true, 2).expect("model");
    let (texts, reference) = reference();
    let batch = m.embed(&texts).expect("embed");
    for (i, text) in texts.iter().enumerate() {
        let q = m.embed_question(text).expect("question");
        let (alone, in_batch) = (dot(&q, &reference[i]), dot(&batch[i], &reference[i]));
        assert!(
            alone >= 0.9999 && in_batch >= 0.9999,
            "text {i}: cosine to sentence-transformers {alone} alone, {in_batch} in a batch"
        );
    }
}
