//! The BERT encoder of all-MiniLM-L6-v2, written for fittok's shapes: a few short sequences.
//!
//! Why not candle-transformers' `BertModel`: its linear layers multiply by the transposed view
//! of each weight, so every matmul repacks the whole weight matrix first. With a question of
//! a dozen tokens that packing costs as much as the arithmetic (a 14×384 by 384×1536 product:
//! 330 µs through the view, 165 µs against a contiguous transposed copy). Here each weight is
//! transposed once at load, query/key/value are one fused product, and the batch and sequence
//! dimensions are flattened into one matrix before every linear layer.

use candle_core::{D, DType, Device, Tensor};
use candle_nn::VarBuilder;

use super::half::HalfDense;

/// Above this many rows (tokens) a product is bound by arithmetic, where gemm's f32 kernels
/// beat the f16 kernel: f16 weights are widened for it, one layer at a time.
const HALF_MAX_ROWS: usize = 64;

/// The model's `config.json`, the fields this encoder reads.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Config {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "default_type_vocab")]
    pub type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default = "default_act")]
    pub hidden_act: String,
}

fn default_type_vocab() -> usize {
    2
}
fn default_eps() -> f64 {
    1e-12
}
fn default_act() -> String {
    "gelu".into()
}

/// A dense layer: its weight as `[in, out]` — f32 and contiguous, or f16 panels.
struct Dense {
    weight: Weight,
    bias: Tensor,
}

enum Weight {
    Full(Tensor),
    Half(HalfDense),
}

/// `[rows, cols]` → `[cols, rows]`, contiguous. candle's strided copy walks an index per
/// element (~0.2 s for the model's 21 M weights at every daemon start); tiles are ~10× faster.
fn transpose(w: &Tensor, rows: usize, cols: usize) -> candle_core::Result<Tensor> {
    const TILE: usize = 32;
    let src = w.flatten_all()?.to_vec1::<f32>()?;
    let mut dst = vec![0.0f32; src.len()];
    for r0 in (0..rows).step_by(TILE) {
        for c0 in (0..cols).step_by(TILE) {
            for r in r0..(r0 + TILE).min(rows) {
                for c in c0..(c0 + TILE).min(cols) {
                    dst[c * rows + r] = src[r * cols + c];
                }
            }
        }
    }
    Tensor::from_vec(dst, (cols, rows), w.device())
}

impl Dense {
    fn load(vb: &VarBuilder, inp: usize, out: usize) -> candle_core::Result<Dense> {
        let w = vb.get((out, inp), "weight")?;
        Ok(Dense {
            weight: Weight::Full(transpose(&w, out, inp)?),
            bias: vb.get(out, "bias")?,
        })
    }

    fn full(&self) -> candle_core::Result<&Tensor> {
        match &self.weight {
            Weight::Full(w) => Ok(w),
            Weight::Half(_) => candle_core::bail!("layer already stored as f16"),
        }
    }

    /// Stacks several layers reading the same input into one (query, key, value).
    fn fused(parts: &[Dense]) -> candle_core::Result<Dense> {
        let ws = parts
            .iter()
            .map(Dense::full)
            .collect::<candle_core::Result<Vec<_>>>()?;
        let bs: Vec<&Tensor> = parts.iter().map(|d| &d.bias).collect();
        Ok(Dense {
            weight: Weight::Full(Tensor::cat(&ws, 1)?.contiguous()?),
            bias: Tensor::cat(&bs, 0)?,
        })
    }

    /// Stores the weight as f16 panels instead, when the CPU has the kernel's instructions.
    fn into_half(self) -> candle_core::Result<Dense> {
        let w = self.full()?;
        let (k, n) = w.dims2()?;
        let values = w.flatten_all()?.to_vec1::<f32>()?;
        match HalfDense::new(&values, k, n, &self.bias.to_vec1::<f32>()?) {
            Some(half) => Ok(Dense {
                weight: Weight::Half(half),
                bias: self.bias,
            }),
            None => Ok(self),
        }
    }

    /// `x`: `[rows, in]` → `[rows, out]`.
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let (rows, _) = x.dims2()?;
        match &self.weight {
            Weight::Full(w) => x.matmul(w)?.broadcast_add(&self.bias),
            Weight::Half(half) if rows <= HALF_MAX_ROWS => {
                let y = half.forward(&x.flatten_all()?.to_vec1::<f32>()?, rows);
                Tensor::from_vec(y, (rows, half.outputs()), x.device())
            }
            Weight::Half(half) => {
                let w =
                    Tensor::from_vec(half.widen(), (half.inputs(), half.outputs()), x.device())?;
                x.matmul(&w)?.broadcast_add(&self.bias)
            }
        }
    }
}

struct LayerNorm {
    weight: Tensor,
    bias: Tensor,
    eps: f32,
}

impl LayerNorm {
    fn load(vb: &VarBuilder, size: usize, eps: f64) -> candle_core::Result<LayerNorm> {
        Ok(LayerNorm {
            weight: vb.get(size, "weight")?,
            bias: vb.get(size, "bias")?,
            eps: eps as f32,
        })
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        candle_nn::ops::layer_norm(&x.contiguous()?, &self.weight, &self.bias, self.eps)
    }
}

struct Layer {
    qkv: Dense,
    attn_out: Dense,
    attn_norm: LayerNorm,
    up: Dense,
    down: Dense,
    out_norm: LayerNorm,
}

pub struct Bert {
    word: Tensor,
    position: Tensor,
    token_type: Tensor,
    embed_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
}

fn tensor_bytes(t: &Tensor) -> usize {
    t.elem_count() * t.dtype().size_in_bytes()
}

impl Dense {
    fn bytes(&self) -> usize {
        tensor_bytes(&self.bias)
            + match &self.weight {
                Weight::Full(w) => tensor_bytes(w),
                Weight::Half(h) => h.bytes(),
            }
    }
}

impl LayerNorm {
    fn bytes(&self) -> usize {
        tensor_bytes(&self.weight) + tensor_bytes(&self.bias)
    }
}

impl Bert {
    /// Bytes the weights take as loaded (f16 panels where the dense layers were halved).
    pub fn weight_bytes(&self) -> usize {
        tensor_bytes(&self.word)
            + tensor_bytes(&self.position)
            + tensor_bytes(&self.token_type)
            + self.embed_norm.bytes()
            + self
                .layers
                .iter()
                .map(|l| {
                    l.qkv.bytes()
                        + l.attn_out.bytes()
                        + l.attn_norm.bytes()
                        + l.up.bytes()
                        + l.down.bytes()
                        + l.out_norm.bytes()
                })
                .sum::<usize>()
    }

    /// Loads the encoder; `half` stores the dense layers' weights as f16 (where the CPU can
    /// run `half.rs`'s kernel): half the memory, and a short text's pass reads half the bytes.
    pub fn load(vb: VarBuilder, cfg: &Config, half: bool) -> candle_core::Result<Bert> {
        if cfg.hidden_act != "gelu" {
            candle_core::bail!("unsupported activation {:?}", cfg.hidden_act);
        }
        if cfg.num_attention_heads == 0 || !cfg.hidden_size.is_multiple_of(cfg.num_attention_heads)
        {
            candle_core::bail!("hidden size not divisible by the number of heads");
        }
        // Checkpoints saved from BertForX prefix every name with "bert.".
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let h = cfg.hidden_size;
        let e = vb.pp("embeddings");
        let maybe_half = |d: Dense| if half { d.into_half() } else { Ok(d) };
        let layers = (0..cfg.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                let s = a.pp("self");
                Ok(Layer {
                    qkv: maybe_half(Dense::fused(&[
                        Dense::load(&s.pp("query"), h, h)?,
                        Dense::load(&s.pp("key"), h, h)?,
                        Dense::load(&s.pp("value"), h, h)?,
                    ])?)?,
                    attn_out: maybe_half(Dense::load(&a.pp("output.dense"), h, h)?)?,
                    attn_norm: LayerNorm::load(&a.pp("output.LayerNorm"), h, cfg.layer_norm_eps)?,
                    up: maybe_half(Dense::load(
                        &l.pp("intermediate.dense"),
                        h,
                        cfg.intermediate_size,
                    )?)?,
                    down: maybe_half(Dense::load(
                        &l.pp("output.dense"),
                        cfg.intermediate_size,
                        h,
                    )?)?,
                    out_norm: LayerNorm::load(&l.pp("output.LayerNorm"), h, cfg.layer_norm_eps)?,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Bert {
            word: e.get((cfg.vocab_size, h), "word_embeddings.weight")?,
            position: e.get(
                (cfg.max_position_embeddings, h),
                "position_embeddings.weight",
            )?,
            token_type: e.get((cfg.type_vocab_size, h), "token_type_embeddings.weight")?,
            embed_norm: LayerNorm::load(&e.pp("LayerNorm"), h, cfg.layer_norm_eps)?,
            layers,
            heads: cfg.num_attention_heads,
            hidden: h,
        })
    }

    /// `ids` and `mask`: `[batch, len]` (u32); returns the last hidden states `[batch, len,
    /// hidden]`. Token types are all 0 (single sentences).
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let (b, len) = ids.dims2()?;
        let (h, heads) = (self.hidden, self.heads);
        let d = h / heads;
        let words = self.word.index_select(&ids.flatten_all()?, 0)?;
        let positions = self.position.narrow(0, 0, len)?.repeat((b, 1))?;
        let types = self.token_type.narrow(0, 0, 1)?;
        let mut x = self
            .embed_norm
            .forward(&(words + positions)?.broadcast_add(&types)?)?;
        // Padding gets a large negative score before the softmax: [b, 1, 1, len].
        let bias = ((mask.to_dtype(DType::F32)? - 1.0)? * 1e9)?.reshape((b, 1, 1, len))?;
        let scale = 1.0 / (d as f64).sqrt();
        let split = |t: Tensor| -> candle_core::Result<Tensor> {
            t.reshape((b, len, heads, d))?.transpose(1, 2)?.contiguous()
        };
        for layer in &self.layers {
            let qkv = layer.qkv.forward(&x)?;
            let q = split(qkv.narrow(1, 0, h)?)?;
            let k = split(qkv.narrow(1, h, h)?)?;
            let v = split(qkv.narrow(1, 2 * h, h)?)?;
            let scores = (q.matmul(&k.t()?)? * scale)?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let ctx = probs
                .matmul(&v)?
                .transpose(1, 2)?
                .contiguous()?
                .reshape((b * len, h))?;
            let attended = layer
                .attn_norm
                .forward(&(layer.attn_out.forward(&ctx)? + &x)?)?;
            let up = layer.up.forward(&attended)?.gelu_erf()?;
            x = layer
                .out_norm
                .forward(&(layer.down.forward(&up)? + &attended)?)?;
        }
        x.reshape((b, len, h))
    }
}

/// Token ids and attention mask tensors for `n` sequences padded to `len`.
pub fn inputs(
    ids: Vec<u32>,
    mask: Vec<u32>,
    n: usize,
    len: usize,
    device: &Device,
) -> candle_core::Result<(Tensor, Tensor)> {
    Ok((
        Tensor::from_vec(ids, (n, len), device)?,
        Tensor::from_vec(mask, (n, len), device)?,
    ))
}

/// Mean over real tokens, then L2 normalisation: `[batch, len, hidden]` → `[batch, hidden]`.
pub fn pool(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
    let mask_f = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
    let summed = hidden.broadcast_mul(&mask_f)?.sum(1)?;
    let counts = mask_f.sum(1)?.clamp(1e-9, f64::MAX)?;
    let mean = summed.broadcast_div(&counts)?;
    let norm = mean
        .sqr()?
        .sum_keepdim(D::Minus1)?
        .sqrt()?
        .clamp(1e-12, f64::MAX)?;
    mean.broadcast_div(&norm)
}
