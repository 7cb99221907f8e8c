//! Sentence embeddings with all-MiniLM-L6-v2 through candle: BERT, mean pooling over the
//! attention mask, L2 normalisation — the same vectors sentence-transformers gives.
//!
//! The model is loaded from a local directory holding `config.json`, `tokenizer.json` and
//! `model.safetensors`. Without one, ranking goes on with the other signals; nothing fails.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// sentence-transformers' `max_seq_length` for this model.
pub const MAX_TOKENS: usize = 256;
/// Cap on tokens per forward pass (batch × longest). A pass's activations grow with it (the
/// attention scores of 16 texts of 256 tokens are 50 MB a layer) and stay in the allocator
/// after the pass, while larger passes do not embed faster on a CPU: four texts of 256
/// tokens per pass keep the background embedder's footprint small at the same throughput.
const MAX_BATCH_TOKENS: usize = 1024;
pub const DIM: usize = 384;
/// The model's identity in cache keys.
pub const MODEL_ID: &str = "sentence-transformers/all-MiniLM-L6-v2";

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("no embedding model: {0}")]
    Missing(String),
    #[error("cannot load the embedding model from {path}: {message}")]
    Load { path: PathBuf, message: String },
    #[error("embedding failed: {0}")]
    Compute(String),
}

impl From<candle_core::Error> for EmbedError {
    fn from(e: candle_core::Error) -> Self {
        EmbedError::Compute(e.to_string())
    }
}

pub struct Embedder {
    model: bert::Bert,
    tokenizer: Tokenizer,
    device: Device,
    /// Recent questions' vectors: an agent re-asks with another budget or after expanding,
    /// and a question costs a full forward pass (~5 ms on 2 cores).
    recent: std::sync::Mutex<std::collections::VecDeque<(String, Vec<f32>)>>,
    /// Separate rayon pools for questions and for batches: candle's ops hand work to the
    /// current pool, so a question never queues behind a background batch. Questions get two
    /// threads (each takes one run of the f16 kernel's panels); batches see [`EmbedOptions::batch_threads`].
    question_pool: Option<rayon::ThreadPool>,
    batch_pool: Option<rayon::ThreadPool>,
}

fn thread_pool(name: &'static str, threads: usize) -> Option<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |_| name.to_string())
        .build()
        .map_err(|e| tracing::warn!(error = %e, "no embedding thread pool; using the global one"))
        .ok()
}

fn in_pool<R: Send>(pool: &Option<rayon::ThreadPool>, f: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(p) => p.install(f),
        None => f(),
    }
}

/// Threads embedding one question. candle splits a matrix product into as many parts as
/// `RAYON_NUM_THREADS` or the machine's cores say (none on one core); the pool the product
/// runs in bounds how many threads work on them.
pub const QUESTION_THREADS: usize = 2;

/// How the embedder is found and run (see [`crate::Config`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbedOptions {
    /// The model's directory (`FITTOK_EMBED_MODEL`); `None`: `models/all-MiniLM-L6-v2` in
    /// the cache directory.
    pub model_dir: Option<PathBuf>,
    /// Keep the dense weights as f16 where the CPU can use them (`half.rs`: 21 MB instead of
    /// 42, and a question reads half the bytes). On by default in optimised builds only: the
    /// kernel is intrinsics, and unoptimised it is slower than the f32 path.
    pub half_weights: bool,
    /// Threads embedding batches; 0 = every core. The daemon uses 1 (its background embedder
    /// leaves a core to queries); in process (`fittokd index`, the engine bench) batches use
    /// the machine.
    pub batch_threads: usize,
}

impl Default for EmbedOptions {
    fn default() -> EmbedOptions {
        EmbedOptions {
            model_dir: None,
            half_weights: !cfg!(debug_assertions),
            batch_threads: 0,
        }
    }
}

impl EmbedOptions {
    /// [`EmbedOptions::batch_threads`] with 0 resolved to the machine's cores.
    pub fn effective_batch_threads(&self) -> usize {
        match self.batch_threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }
}

/// Questions whose vectors are kept.
const RECENT_QUESTIONS: usize = 64;

/// Where the model is: [`EmbedOptions::model_dir`] when set, else the cache's
/// `models/all-MiniLM-L6-v2` (where the daemon downloads it).
pub fn model_dir(opts: &EmbedOptions, cache_dir: Option<&Path>) -> Result<PathBuf, EmbedError> {
    if let Some(dir) = &opts.model_dir {
        if dir.is_dir() {
            return Ok(dir.clone());
        }
        return Err(EmbedError::Missing(format!(
            "FITTOK_EMBED_MODEL={} is not a directory",
            dir.display()
        )));
    }
    let Some(cache) = cache_dir else {
        return Err(EmbedError::Missing(
            "set FITTOK_EMBED_MODEL to a directory with all-MiniLM-L6-v2".into(),
        ));
    };
    let cached = cache.join("models").join("all-MiniLM-L6-v2");
    if cached.join("model.safetensors").is_file() {
        return Ok(cached);
    }
    Err(EmbedError::Missing(format!(
        "set FITTOK_EMBED_MODEL to a directory with all-MiniLM-L6-v2, or put it in {}",
        cached.display()
    )))
}

impl Embedder {
    pub fn load(dir: &Path, opts: &EmbedOptions) -> Result<Embedder, EmbedError> {
        Self::load_with(dir, opts.half_weights, opts.effective_batch_threads())
    }

    /// Loads the model; `half_weights` keeps the dense weights as f16 where the CPU can use
    /// them (`half.rs`: 21 MB instead of 42, and a question reads half the bytes).
    pub fn load_with(
        dir: &Path,
        half_weights: bool,
        batch_threads: usize,
    ) -> Result<Embedder, EmbedError> {
        let err = |message: String| EmbedError::Load {
            path: dir.to_path_buf(),
            message,
        };
        let config = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| err(format!("config.json: {e}")))?;
        let config: bert::Config =
            serde_json::from_str(&config).map_err(|e| err(format!("config.json: {e}")))?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| err(format!("tokenizer.json: {e}")))?;
        // The shipped tokenizer truncates at 128 and pads to a fixed 128: override both.
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| err(format!("tokenizer truncation: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        let device = Device::Cpu;
        let weights = dir.join("model.safetensors");
        // SAFETY: the weights file is memory-mapped read-only; fittok never writes it, and a
        // concurrent external truncation is outside what any mmap user can defend against.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[weights], DType::F32, &device) }
            .map_err(|e| err(format!("model.safetensors: {e}")))?;
        let model = bert::Bert::load(vb, &config, half_weights).map_err(|e| err(e.to_string()))?;
        Ok(Embedder {
            model,
            tokenizer,
            device,
            recent: Default::default(),
            question_pool: thread_pool("fittok-embed-question", QUESTION_THREADS),
            batch_pool: thread_pool("fittok-embed-batch", batch_threads),
        })
    }

    /// The same model reading at most `max_tokens` tokens of a text (default [`MAX_TOKENS`]),
    /// for measuring what a shorter window buys (`benches/embedding.rs`). Vectors of another
    /// window are not the cache's: only the default is used to fill it.
    pub fn with_max_tokens(mut self, max_tokens: usize) -> Result<Embedder, EmbedError> {
        self.tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens.max(2),
                ..Default::default()
            }))
            .map_err(|e| EmbedError::Compute(format!("tokenizer truncation: {e}")))?;
        if let Ok(mut recent) = self.recent.lock() {
            recent.clear();
        }
        Ok(self)
    }

    /// Bytes the model's weights take in memory.
    pub fn weight_bytes(&self) -> usize {
        self.model.weight_bytes()
    }

    /// Embeds one question, reusing the vector of a recent identical one.
    pub fn embed_question(&self, question: &str) -> Result<Vec<f32>, EmbedError> {
        if let Ok(recent) = self.recent.lock()
            && let Some((_, v)) = recent.iter().find(|(q, _)| q == question)
        {
            return Ok(v.clone());
        }
        let v = in_pool(&self.question_pool, || {
            self.embed_in_place(&[question.to_string()])
        })?
        .pop()
        .ok_or_else(|| EmbedError::Compute("no vector for the question".into()))?;
        if let Ok(mut recent) = self.recent.lock() {
            if recent.len() >= RECENT_QUESTIONS {
                recent.pop_front();
            }
            recent.push_back((question.to_string(), v.clone()));
        }
        Ok(v)
    }

    /// Runs `f` once on each thread of the pool that embeds batches ([`Embedder::embed`]),
    /// e.g. to lower their priority: the computation runs on these threads, not on the
    /// caller's. Without a pool of its own (it could not be built) nothing runs.
    pub fn on_batch_threads(&self, f: impl Fn() + Sync + Send) {
        if let Some(p) = &self.batch_pool {
            p.broadcast(|_| f());
        }
    }

    /// Embeds texts; returns one unit vector of [`DIM`] floats per text, in order.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        in_pool(&self.batch_pool, || self.embed_in_place(texts))
    }

    /// [`Embedder::embed`] on the calling thread's rayon pool.
    fn embed_in_place(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        let encodings = self
            .tokenizer
            .encode_batch(texts.iter().map(|t| t.as_str()).collect::<Vec<_>>(), true)
            .map_err(|e| EmbedError::Compute(e.to_string()))?;
        // Sort by length so batches pad little; restore the order at the end.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].get_ids().iter().filter(|&&id| id != 0).count());
        let mut results: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        let mut start = 0;
        while start < order.len() {
            let mut end = start;
            let mut longest = 0;
            while end < order.len() {
                let len = real_len(&encodings[order[end]]);
                let next_longest = longest.max(len).max(1);
                if end > start && next_longest * (end - start + 1) > MAX_BATCH_TOKENS {
                    break;
                }
                longest = next_longest;
                end += 1;
            }
            let batch: Vec<usize> = order[start..end].to_vec();
            let vectors = self.forward(
                &batch.iter().map(|&i| &encodings[i]).collect::<Vec<_>>(),
                longest,
            )?;
            for (i, v) in batch.into_iter().zip(vectors) {
                results[i] = Some(v);
            }
            start = end;
        }
        for r in results {
            out.push(r.unwrap_or_else(|| vec![0.0; DIM]));
        }
        Ok(out)
    }

    fn forward(
        &self,
        encs: &[&tokenizers::Encoding],
        len: usize,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let n = encs.len();
        let mut ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for e in encs {
            let e_ids = e.get_ids();
            let e_mask = e.get_attention_mask();
            for i in 0..len {
                ids.push(e_ids.get(i).copied().unwrap_or(0));
                mask.push(e_mask.get(i).copied().unwrap_or(0));
            }
        }
        let (ids, mask) = bert::inputs(ids, mask, n, len, &self.device)?;
        let hidden = self.model.forward(&ids, &mask)?;
        let unit = bert::pool(&hidden, &mask)?;
        Ok(unit.to_vec2::<f32>()?)
    }
}

fn real_len(e: &tokenizers::Encoding) -> usize {
    e.get_attention_mask().iter().filter(|&&m| m != 0).count()
}

/// The dot product, summed in 16 independent lanes: a plain left-to-right sum is one chain of
/// dependent additions the compiler may not reorder (2 ms for a question against 4,270
/// vectors on ripgrep; a few microseconds this way).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    dot_widened(a, b)
}

/// [`dot`] of a vector stored narrower (`i8` codes, `f32` itself) with an f32 one, each
/// element widened to f32 before it is multiplied.
pub(crate) fn dot_widened<T: Copy + Into<f32>>(a: &[T], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let n = a.len().min(b.len());
    let split = n / LANES * LANES;
    let mut acc = [0.0f32; LANES];
    for (ca, cb) in a[..split]
        .chunks_exact(LANES)
        .zip(b[..split].chunks_exact(LANES))
    {
        for i in 0..LANES {
            acc[i] += ca[i].into() * cb[i];
        }
    }
    let tail: f32 = a[split..n]
        .iter()
        .zip(&b[split..n])
        .map(|(&x, y)| x.into() * y)
        .sum();
    acc.iter().sum::<f32>() + tail
}
mod bert;

mod half;
pub mod quantized;

#[cfg(test)]
mod tests;
