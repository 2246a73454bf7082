//! transformer: a BERT encoder's forward pass on the CPU, written for sentence embedding: the
//! weights of a `model.safetensors` read as they are, every text of a batch packed row after row
//! with no padding (so attention costs each text its own length squared, never the longest
//! one's), the linear layers run as one matrix product over the whole batch ([`super::matmul`]),
//! and the output mean-pooled per text.
//!
//! It computes what Hugging Face's `BertModel` computes in evaluation mode (absolute positions,
//! token type 0, post-layer-norm blocks, GELU): the vectors agree with sentence-transformers'
//! to the sixth decimal (`scripts/encode_speed.py` prints the cosine).

use std::collections::HashMap;

use rayon::prelude::*;
use serde_json::Value;

use super::kernel::Kernel;
use super::matmul::{Mat, product};

/// A model that cannot be read, and why.
pub(crate) type Problem = String;

/// Texts of at least this many tokens have their attention heads computed on every core.
const PARALLEL_HEADS_FROM: usize = 48;

/// Batches of at least this many tokens have their norms and activations computed on every
/// core.
const PARALLEL_ROWS_FROM: usize = 48;

/// `config.json`'s numbers the forward pass needs.
#[derive(Debug, Clone, Copy)]
struct Shape {
    hidden: usize,
    heads: usize,
    layers: usize,
    intermediate: usize,
    positions: usize,
    eps: f32,
    act: Activation,
}

/// The feed-forward activation (`hidden_act`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Activation {
    /// `gelu`: `x · Φ(x)`, with the error function.
    Gelu,
    /// `gelu_new`, `gelu_pytorch_tanh`: the tanh approximation.
    GeluTanh,
    Relu,
}

impl Shape {
    fn read(config: &Value) -> Result<Shape, Problem> {
        let num = |key: &str| -> Result<usize, Problem> {
            config[key]
                .as_u64()
                .map(|n| n as usize)
                .ok_or_else(|| format!("config.json has no number `{key}`"))
        };
        let act = match config["hidden_act"].as_str().unwrap_or("gelu") {
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" => Activation::GeluTanh,
            "relu" => Activation::Relu,
            other => return Err(format!("config.json's hidden_act `{other}` is not gelu, gelu_new or relu")),
        };
        if let Some(kind) = config["position_embedding_type"].as_str().filter(|k| *k != "absolute") {
            return Err(format!("config.json's position_embedding_type `{kind}` is not absolute"));
        }
        let shape = Shape {
            hidden: num("hidden_size")?,
            heads: num("num_attention_heads")?,
            layers: num("num_hidden_layers")?,
            intermediate: num("intermediate_size")?,
            positions: num("max_position_embeddings")?,
            eps: config["layer_norm_eps"].as_f64().unwrap_or(1e-12) as f32,
            act,
        };
        if shape.heads == 0 || shape.hidden == 0 || !shape.hidden.is_multiple_of(shape.heads) {
            return Err(format!(
                "config.json: {} heads do not divide hidden_size {}",
                shape.heads, shape.hidden
            ));
        }
        Ok(shape)
    }
}

/// A linear layer `x · Wᵀ + b`, its weight kept transposed (`inputs × outputs`, where PyTorch
/// stores `outputs × inputs`), so that a few rows' product reads it row after row.
#[derive(Debug)]
struct Linear {
    weight_t: Vec<f32>,
    /// The same, in strips for [`Kernel::skinny`].
    strips: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
}

/// Batches of at most this many tokens run [`Kernel::skinny`] where the CPU has it.
const SKINNY_FROM: usize = 24;

impl Linear {
    /// The layer of a PyTorch `weight` (`outputs × inputs`, row-major) and `bias`.
    fn new(weight: &[f32], bias: Vec<f32>, inputs: usize) -> Linear {
        let outputs = bias.len();
        let mut weight_t = vec![0.0; weight.len()];
        for (o, row) in weight.chunks_exact(inputs).enumerate() {
            for (i, &w) in row.iter().enumerate() {
                weight_t[i * outputs + o] = w;
            }
        }
        Linear { strips: super::kernel::strips(&weight_t, outputs), weight_t, bias, inputs }
    }

    fn outputs(&self) -> usize {
        self.bias.len()
    }

    /// `out = x · Wᵀ + b` (`out` is `rows × outputs`).
    fn apply(&self, x: &[f32], rows: usize, out: &mut Vec<f32>, kernel: Kernel) {
        let n = self.outputs();
        out.clear();
        for _ in 0..rows {
            out.extend_from_slice(&self.bias);
        }
        if rows <= SKINNY_FROM && kernel.skinny(out, &x[..rows * self.inputs], &self.strips, n) {
            return;
        }
        let x = Mat::rows(x, rows, self.inputs, self.inputs);
        product(out, n, x, Mat::rows(&self.weight_t, self.inputs, n, n), true);
    }
}

/// A layer norm's scale and shift.
#[derive(Debug)]
struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

impl Norm {
    /// Adds `residual` to each row of `x` (rows of `gamma.len()`) and normalises the sum in
    /// place.
    fn apply(&self, x: &mut [f32], residual: Option<&[f32]>, eps: f32) {
        let width = self.gamma.len();
        let norm = |(row, residual): (&mut [f32], Option<&[f32]>)| {
            if let Some(residual) = residual {
                row.iter_mut().zip(residual).for_each(|(v, r)| *v += r);
            }
            let mean = row.iter().sum::<f32>() / width as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width as f32;
            let scale = 1.0 / (var + eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *v = (*v - mean) * scale * g + b;
            }
        };
        let rows = x.len() / width;
        let residuals = (0..rows).map(|r| residual.map(|all| &all[r * width..][..width]));
        if rows >= PARALLEL_ROWS_FROM {
            let residuals: Vec<_> = residuals.collect();
            x.par_chunks_exact_mut(width).zip(residuals).for_each(norm);
        } else {
            x.chunks_exact_mut(width).zip(residuals).for_each(norm);
        }
    }
}

/// One encoder block.
#[derive(Debug)]
struct Block {
    /// Query, key and value as one layer (`3·hidden` outputs, in that order).
    qkv: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    up: Linear,
    down: Linear,
    out_norm: Norm,
}

/// A BERT encoder's weights.
#[derive(Debug)]
pub(crate) struct Transformer {
    shape: Shape,
    words: Vec<f32>,
    positions: Vec<f32>,
    /// Token type 0's embedding (sentence embedding uses no other).
    type0: Vec<f32>,
    embedding_norm: Norm,
    blocks: Vec<Block>,
    /// The build of [`Kernel::skinny`] this CPU runs.
    kernel: Kernel,
}

/// The tensors of a safetensors file, by name, as `f32` with their shapes.
struct Tensors {
    map: HashMap<String, (Vec<usize>, Vec<f32>)>,
    /// The prefix the names carry (`bert.` in some exports, none in sentence-transformers').
    prefix: &'static str,
}

impl Tensors {
    fn read(bytes: &[u8]) -> Result<Tensors, Problem> {
        let too_short = || "model.safetensors is shorter than its header says".to_owned();
        let n =
            u64::from_le_bytes(bytes.get(..8).ok_or_else(too_short)?.try_into().map_err(|_| too_short())?);
        let n = usize::try_from(n).map_err(|_| too_short())?;
        let end = n.checked_add(8).filter(|&e| e <= bytes.len()).ok_or_else(too_short)?;
        let header: HashMap<String, Value> = serde_json::from_slice(&bytes[8..end])
            .map_err(|e| format!("model.safetensors' header is not JSON: {e}"))?;
        let data = &bytes[end..];
        let mut map = HashMap::new();
        for (name, info) in header {
            if name == "__metadata__" {
                continue;
            }
            let dtype = info["dtype"].as_str().unwrap_or("");
            let numbers = |key: &str| -> Vec<usize> {
                info[key]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|d| d.as_u64().map(|d| d as usize))
                    .collect()
            };
            let (shape, offsets) = (numbers("shape"), numbers("data_offsets"));
            let [start, stop] = offsets[..] else {
                return Err(format!("model.safetensors: `{name}` has no data_offsets"));
            };
            let raw = data
                .get(start..stop)
                .ok_or_else(|| format!("model.safetensors: `{name}` lies outside the file"))?;
            let values: Vec<f32> = match dtype {
                "F32" => raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
                "F16" => raw.chunks_exact(2).map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]]))).collect(),
                "BF16" => raw
                    .chunks_exact(2)
                    .map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
                    .collect(),
                // Integer tensors (`position_ids`) are buffers, not weights.
                _ => continue,
            };
            if values.len() != shape.iter().product::<usize>() {
                return Err(format!(
                    "model.safetensors: `{name}` holds {} numbers, not its shape {shape:?}",
                    values.len()
                ));
            }
            map.insert(name, (shape, values));
        }
        let prefix = if map.contains_key("embeddings.word_embeddings.weight") { "" } else { "bert." };
        Ok(Tensors { map, prefix })
    }

    /// The tensor `name` (under the file's prefix), which must have `shape`.
    fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, Problem> {
        let full = format!("{}{name}", self.prefix);
        let (got, values) =
            self.map.remove(&full).ok_or_else(|| format!("model.safetensors has no `{full}`"))?;
        if got != shape {
            return Err(format!("model.safetensors: `{full}` is {got:?}, not {shape:?}"));
        }
        Ok(values)
    }

    /// A layer norm under `name` (`LayerNorm.weight`/`bias`, or the older `gamma`/`beta`).
    fn norm(&mut self, name: &str, width: usize) -> Result<Norm, Problem> {
        let newer = format!("{}{name}.weight", self.prefix);
        let (w, b) = if self.map.contains_key(&newer) { ("weight", "bias") } else { ("gamma", "beta") };
        Ok(Norm {
            gamma: self.take(&format!("{name}.{w}"), &[width])?,
            beta: self.take(&format!("{name}.{b}"), &[width])?,
        })
    }

    /// A linear layer's PyTorch weight (`outputs × inputs`) and bias under `name`.
    fn linear(&mut self, name: &str, outputs: usize, inputs: usize) -> Result<(Vec<f32>, Vec<f32>), Problem> {
        Ok((
            self.take(&format!("{name}.weight"), &[outputs, inputs])?,
            self.take(&format!("{name}.bias"), &[outputs])?,
        ))
    }
}

/// IEEE half precision to single.
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: scale it up into a normal single.
            let mut e = 127 - 15 + 1;
            let mut f = frac;
            while f & 0x400 == 0 {
                f <<= 1;
                e -= 1;
            }
            sign | (e << 23) | ((f & 0x3ff) << 13)
        }
        (31, _) => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

impl Transformer {
    /// The encoder of `config` (`config.json`, parsed) with the weights of `safetensors` (the
    /// file's bytes); `vocab` is the tokenizer's vocabulary size.
    pub(crate) fn load(config: &Value, safetensors: &[u8], vocab: usize) -> Result<Transformer, Problem> {
        let shape = Shape::read(config)?;
        let mut t = Tensors::read(safetensors)?;
        let h = shape.hidden;
        let rows = config["vocab_size"].as_u64().map_or(vocab, |n| n as usize);
        if vocab > rows {
            return Err(format!("the tokenizer has {vocab} tokens, the model's vocab_size only {rows}"));
        }
        let words = t.take("embeddings.word_embeddings.weight", &[rows, h])?;
        let positions = t.take("embeddings.position_embeddings.weight", &[shape.positions, h])?;
        let types = config["type_vocab_size"].as_u64().unwrap_or(2) as usize;
        let mut type0 = t.take("embeddings.token_type_embeddings.weight", &[types, h])?;
        type0.truncate(h);
        let embedding_norm = t.norm("embeddings.LayerNorm", h)?;
        let mut blocks = Vec::with_capacity(shape.layers);
        for i in 0..shape.layers {
            let at = |part: &str| format!("encoder.layer.{i}.{part}");
            let (q, k, v) = (
                t.linear(&at("attention.self.query"), h, h)?,
                t.linear(&at("attention.self.key"), h, h)?,
                t.linear(&at("attention.self.value"), h, h)?,
            );
            let qkv = Linear::new(&[q.0, k.0, v.0].concat(), [q.1, k.1, v.1].concat(), h);
            let (w, b) = t.linear(&at("attention.output.dense"), h, h)?;
            let attention_out = Linear::new(&w, b, h);
            let (w, b) = t.linear(&at("intermediate.dense"), shape.intermediate, h)?;
            let up = Linear::new(&w, b, h);
            let (w, b) = t.linear(&at("output.dense"), h, shape.intermediate)?;
            let down = Linear::new(&w, b, shape.intermediate);
            blocks.push(Block {
                qkv,
                attention_out,
                attention_norm: t.norm(&at("attention.output.LayerNorm"), h)?,
                up,
                down,
                out_norm: t.norm(&at("output.LayerNorm"), h)?,
            });
        }
        Ok(Transformer { shape, words, positions, type0, embedding_norm, blocks, kernel: Kernel::detect() })
    }

    /// The length of a vector.
    pub(crate) fn dim(&self) -> usize {
        self.shape.hidden
    }

    /// Most tokens of one text the position table allows.
    pub(crate) fn max_tokens(&self) -> usize {
        self.shape.positions
    }

    /// The mean of the last hidden states of each text's tokens (ids of the vocabulary, at most
    /// [`Transformer::max_tokens`] each): one vector per text, not yet normalised.
    pub(crate) fn mean_pooled(&self, texts: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let h = self.shape.hidden;
        let spans: Vec<(usize, usize)> = texts
            .iter()
            .scan(0, |at, t| {
                let span = (*at, t.len());
                *at += t.len();
                Some(span)
            })
            .collect();
        let rows: usize = texts.iter().map(Vec::len).sum();
        let mut x = Vec::with_capacity(rows * h);
        for text in texts {
            for (p, &id) in text.iter().enumerate() {
                let word = &self.words[id as usize * h..][..h];
                let position = &self.positions[p * h..][..h];
                x.extend(word.iter().zip(position).zip(&self.type0).map(|((w, p), t)| w + p + t));
            }
        }
        self.embedding_norm.apply(&mut x, None, self.shape.eps);
        let mut scratch = Scratch::default();
        for block in &self.blocks {
            self.block(block, &mut x, rows, &spans, &mut scratch);
        }
        spans
            .iter()
            .map(|&(start, len)| {
                let mut mean = vec![0.0f32; h];
                for row in x[start * h..(start + len) * h].chunks_exact(h) {
                    for (m, v) in mean.iter_mut().zip(row) {
                        *m += v;
                    }
                }
                let n = len.max(1) as f32;
                mean.iter_mut().for_each(|m| *m /= n);
                mean
            })
            .collect()
    }

    /// One encoder block over the packed rows of `x`, in place.
    fn block(&self, block: &Block, x: &mut Vec<f32>, rows: usize, spans: &[(usize, usize)], s: &mut Scratch) {
        let Shape { hidden: h, heads, eps, act, .. } = self.shape;
        let dh = h / heads;
        let scale = 1.0 / (dh as f32).sqrt();
        block.qkv.apply(x, rows, &mut s.qkv, self.kernel);
        s.context.clear();
        s.context.resize(rows * h, 0.0);
        for &(start, len) in spans {
            let qkv = &s.qkv[start * 3 * h..(start + len) * 3 * h];
            // Each head's context, head after head (`len × dh` each), then put in place.
            s.heads.clear();
            s.heads.resize(heads * len * dh, 0.0);
            let head = |(head, out): (usize, &mut [f32])| {
                let part = |which: usize| Mat::rows(&qkv[which * h + head * dh..], len, dh, 3 * h);
                let mut scores = vec![0.0; len * len];
                product(&mut scores, len, part(0), part(1).t(), false);
                for row in scores.chunks_exact_mut(len) {
                    softmax(row, scale);
                }
                product(out, dh, Mat::rows(&scores, len, len, len), part(2), false);
            };
            if len >= PARALLEL_HEADS_FROM {
                s.heads.par_chunks_mut(len * dh).enumerate().for_each(head);
            } else {
                s.heads.chunks_mut(len * dh).enumerate().for_each(head);
            }
            let context = &mut s.context[start * h..(start + len) * h];
            for (head, part) in s.heads.chunks_exact(len * dh).enumerate() {
                for (row, values) in part.chunks_exact(dh).enumerate() {
                    context[row * h + head * dh..][..dh].copy_from_slice(values);
                }
            }
        }
        // Attention's output, the residual and its norm.
        block.attention_out.apply(&s.context, rows, &mut s.out, self.kernel);
        block.attention_norm.apply(&mut s.out, Some(x), eps);
        std::mem::swap(x, &mut s.out);
        // The feed-forward part, the residual and its norm.
        block.up.apply(x, rows, &mut s.up, self.kernel);
        if rows >= PARALLEL_ROWS_FROM {
            s.up.par_chunks_mut(block.up.outputs()).for_each(|row| activate(row, act));
        } else {
            activate(&mut s.up, act);
        }
        block.down.apply(&s.up, rows, &mut s.out, self.kernel);
        block.out_norm.apply(&mut s.out, Some(x), eps);
        std::mem::swap(x, &mut s.out);
    }
}

/// Buffers one forward pass reuses from block to block.
#[derive(Default)]
struct Scratch {
    qkv: Vec<f32>,
    context: Vec<f32>,
    heads: Vec<f32>,
    out: Vec<f32>,
    up: Vec<f32>,
}

/// `row := softmax(row · scale)`.
fn softmax(row: &mut [f32], scale: f32) {
    let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) * scale;
    row.iter_mut().for_each(|v| *v = exp(*v * scale - max));
    let inv = 1.0 / row.iter().sum::<f32>();
    row.iter_mut().for_each(|v| *v *= inv);
}

/// `eˣ` to within two units in the last place over the range the encoder needs (below
/// `-87.3` it gives the smallest normal number instead of a subnormal or zero), written
/// without branches or calls so that a loop over it vectorises: `x = n·ln 2 + r` with `|r| ≤
/// ln 2 / 2`, Cephes' polynomial for `eʳ`, and `2ⁿ` put into the exponent's bits.
#[allow(clippy::excessive_precision, reason = "the coefficients as published")]
fn exp(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5 · 2²³: adding it rounds to an integer.
    let x = x.clamp(-87.3, 88.7);
    let n = (x * std::f32::consts::LOG2_E + ROUND) - ROUND;
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let mut p = 1.987_569_1e-4;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 5.000_000_1e-1;
    let e = p * r * r + r + 1.0;
    e * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

fn activate(x: &mut [f32], act: Activation) {
    match act {
        Activation::Gelu => {
            x.iter_mut().for_each(|v| *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2)))
        }
        Activation::GeluTanh => x.iter_mut().for_each(|v| {
            let inner = 0.797_884_6 * (*v + 0.044_715 * *v * *v * *v);
            *v = 0.5 * *v * (1.0 + inner.tanh());
        }),
        Activation::Relu => x.iter_mut().for_each(|v| *v = v.max(0.0)),
    }
}

/// The error function, to within 1.5e-7 (Abramowitz and Stegun, formula 7.1.26).
#[allow(clippy::excessive_precision, reason = "the coefficients as published")]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let y = 1.0 - poly * exp(-a * a);
    if x < 0.0 { -y } else { y }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::excessive_precision, reason = "the values as tabulated")]
    fn erf_matches_known_values() {
        for (x, want) in [
            (0.0, 0.0),
            (0.1, 0.112_462_916),
            (0.5, 0.520_499_878),
            (1.0, 0.842_700_793),
            (2.0, 0.995_322_265),
            (3.5, 0.999_999_257),
            (-1.0, -0.842_700_793),
            (6.0, 1.0),
        ] {
            assert!((erf(x) - want).abs() < 2e-7, "erf({x}) = {} not {want}", erf(x));
        }
    }

    #[test]
    fn half_precision_reads_as_single() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert!(f16_to_f32(0x7c00).is_infinite());
    }

    #[test]
    fn exp_is_the_standard_librarys_to_two_units_in_the_last_place() {
        let mut x = -87.0f32;
        while x < 88.0 {
            let (got, want) = (exp(x), x.exp());
            assert!((got - want).abs() <= 2.5e-7 * want, "exp({x}) = {got}, not {want}");
            x += 0.013;
        }
        assert!(exp(-1000.0) >= 0.0 && exp(-1000.0) < 1e-37);
    }

    #[test]
    fn softmax_sums_to_one_and_keeps_order() {
        let mut row = [1.0, 3.0, 2.0, -50.0];
        softmax(&mut row, 0.5);
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(row[1] > row[2] && row[2] > row[0] && row[0] > row[3]);
    }

    #[test]
    fn a_damaged_file_is_refused_with_what_is_wrong() {
        assert!(Tensors::read(&[1, 0]).err().unwrap().contains("shorter"));
        let mut bytes = 200u64.to_le_bytes().to_vec();
        bytes.extend(b"{}");
        assert!(Tensors::read(&bytes).err().unwrap().contains("shorter"));
        let header = br#"{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}}"#;
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend(header);
        bytes.extend([0u8; 8]);
        assert!(Tensors::read(&bytes).err().unwrap().contains("outside the file"));
    }
}
