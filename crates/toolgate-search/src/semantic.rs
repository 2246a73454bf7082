//! semantic: here is a query, give me the tools that mean the same thing, offline.
//!
//! A static embedding model distilled from all-MiniLM-L6-v2 (model2vec-style: one vector per
//! WordPiece token, refitted so that a text's mean approaches the full model's embedding;
//! `scripts/distill_static_model.py`) embeds a text as the weighted mean of its token vectors,
//! L2-normalised. A [`DenseIndex`] holds one such vector per tool and answers a
//! query with a flat cosine scan; [`fuse`] merges its list with a lexical (`bm25f`) one.
//!
//! The model is data, not code: [`StaticModel::from_bytes`] reads the `TGSTATIC` format (see
//! `models/minilm-static/README.md`), checking its SHA-256 trailer, and with the `semantic`
//! feature `StaticModel::embedded` is the committed model compiled into the binary. Nothing
//! is ever downloaded. MiniLM is English-only: Chinese text maps to single Han characters the
//! model knows poorly, so [`DenseIndex::hybrid`] weighs the dense side by how much of the query
//! the model covers ([`StaticModel::coverage`]).
//!
//! ```
//! use toolgate_search::semantic::{DenseIndex, Fusion, StaticModel};
//! use toolgate_catalog::{Catalog, ToolSpec};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # #[cfg(feature = "semantic")] {
//! let model = StaticModel::embedded();
//! let catalog = Catalog::builder()
//!     .tool(ToolSpec::mcp("weather", "forecast", "Get the weather forecast for a city"))
//!     .tool(ToolSpec::mcp("git", "git_log", "Show the commit history of a repository"))
//!     .build()?;
//! let index = DenseIndex::build(&catalog, model);
//! let hits = index.search("will it rain tomorrow in Paris", 1);
//! assert_eq!(catalog.tool(hits[0].0).name(), "forecast");
//! # }
//! # Ok(()) }
//! ```

#[cfg(feature = "bert")]
pub mod bert;
mod clusters;
mod index;
mod kernel;
#[cfg(feature = "bert")]
mod matmul;
#[cfg(feature = "bert")]
mod transformer;
mod wordpiece;

use std::borrow::Cow;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};

pub use index::{
    CENTER_MIN_TOOLS, DISCOVER, DenseConfig, DenseIndex, EXACT_MAX_TOOLS, Fused, Fusion, LEAST_READ,
    MEAN_SAMPLE, MOST_READ, RERANK_DEPTH, fuse,
};
use wordpiece::{WordKind, WordPiece};

/// The first bytes of a model file.
const MAGIC: &[u8; 8] = b"TGSTATIC";
/// The format version this module reads.
const VERSION: u32 = 1;

/// The committed model file.
#[cfg(feature = "semantic")]
const EMBEDDED: &[u8] = include_bytes!("../../../models/minilm-static/model.tgsm");

/// A static token-embedding model: a WordPiece vocabulary, one int8 vector (with a scale) and
/// one pooling weight per token. Cheap to clone, immutable, `Send + Sync`.
#[derive(Clone)]
pub struct StaticModel {
    inner: Arc<Inner>,
}

struct Inner {
    dim: usize,
    vocab: WordPiece,
    weights: Vec<f32>,
    scales: Vec<f32>,
    /// Borrowed from the binary for the compiled-in model: a copy would add its 8 MB to every
    /// process's memory, beside the pages of the binary that hold it.
    vectors: Cow<'static, [i8]>,
    sha256: [u8; 32],
}

impl fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticModel")
            .field("dim", &self.inner.dim)
            .field("vocab_len", &self.inner.weights.len())
            .field("sha256", &hex(&self.inner.sha256))
            .finish()
    }
}

/// A model file that could not be read; names the source and the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    /// The file (or other source label).
    pub source_label: String,
    /// What was wrong.
    pub kind: ModelErrorKind,
}

/// What was wrong with a model file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The file could not be read.
    Io(String),
    /// The file does not start with `TGSTATIC`.
    NotAModel,
    /// A format version this build cannot read.
    UnsupportedVersion(u32),
    /// The file ends before the part named.
    Truncated(&'static str),
    /// Bytes are left over after the checksum.
    TrailingBytes(usize),
    /// The SHA-256 trailer does not match the content (a damaged or edited file).
    ChecksumMismatch {
        /// The trailer's digest, hex.
        stored: String,
        /// The digest of the content, hex.
        computed: String,
    },
    /// The vocabulary block is not valid: the problem.
    BadVocabulary(String),
    /// A sentence-transformers model directory that cannot be used: the problem.
    BadModel(String),
}

impl fmt::Display for ModelErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelErrorKind::Io(e) => write!(f, "cannot read: {e}"),
            ModelErrorKind::BadModel(problem) => f.write_str(problem),
            ModelErrorKind::NotAModel => f.write_str(
                "not a static model file (no TGSTATIC header); generate one with scripts/distill_static_model.py",
            ),
            ModelErrorKind::UnsupportedVersion(v) => {
                write!(f, "model format version {v} is not supported (this build reads version {VERSION})")
            }
            ModelErrorKind::Truncated(part) => {
                write!(f, "file ends inside the {part} (truncated download or copy?)")
            }
            ModelErrorKind::TrailingBytes(n) => write!(f, "{n} unexpected bytes after the checksum"),
            ModelErrorKind::ChecksumMismatch { stored, computed } => write!(
                f,
                "checksum mismatch (stored sha256 {stored}, content hashes to {computed}): the file is damaged; restore it or regenerate it"
            ),
            ModelErrorKind::BadVocabulary(why) => write!(f, "bad vocabulary: {why}"),
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source_label, self.kind)
    }
}

impl std::error::Error for ModelError {}

/// Reads the model file's parts in order.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, part: &'static str) -> Result<&'a [u8], ModelErrorKind> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(ModelErrorKind::Truncated(part))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u32(&mut self, part: &'static str) -> Result<u32, ModelErrorKind> {
        let b = self.take(4, part)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn f32s(&mut self, n: usize, part: &'static str) -> Result<Vec<f32>, ModelErrorKind> {
        let len = n.checked_mul(4).ok_or(ModelErrorKind::Truncated(part))?;
        let b = self.take(len, part)?;
        Ok(b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
}

impl StaticModel {
    /// Reads a model in the `TGSTATIC` format; `source_label` names it in errors.
    pub fn from_bytes(source_label: &str, bytes: &[u8]) -> Result<StaticModel, ModelError> {
        Self::parse(bytes, |v| Cow::Owned(v.iter().map(|&b| b as i8).collect()))
            .map_err(|kind| ModelError { source_label: source_label.to_owned(), kind })
    }

    /// Reads a model file.
    pub fn from_path(path: &Path) -> Result<StaticModel, ModelError> {
        let label = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| ModelError {
            source_label: label.clone(),
            kind: ModelErrorKind::Io(e.to_string()),
        })?;
        Self::from_bytes(&label, &bytes)
    }

    /// The committed model (`models/minilm-static/model.tgsm`), compiled in and parsed once.
    #[cfg(feature = "semantic")]
    pub fn embedded() -> &'static StaticModel {
        static MODEL: std::sync::OnceLock<StaticModel> = std::sync::OnceLock::new();
        MODEL.get_or_init(|| {
            // The file is checked by its trailer and by a unit test; a failure here is a broken build.
            StaticModel::parse(EMBEDDED, |v| Cow::Borrowed(bytemuck::cast_slice(v))).unwrap_or_else(|e| {
                panic!("the embedded model (models/minilm-static/model.tgsm) is damaged: {e}")
            })
        })
    }

    /// Reads a model from `bytes`; `keep` keeps its vectors (a copy, or `bytes` themselves if
    /// they live as long as the program).
    fn parse<'a>(
        bytes: &'a [u8],
        keep: impl FnOnce(&'a [u8]) -> Cow<'static, [i8]>,
    ) -> Result<StaticModel, ModelErrorKind> {
        if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
            return Err(ModelErrorKind::NotAModel);
        }
        let mut r = Reader { bytes, pos: MAGIC.len() };
        let version = r.u32("header")?;
        if version != VERSION {
            return Err(ModelErrorKind::UnsupportedVersion(version));
        }
        let dim = r.u32("header")? as usize;
        let n = r.u32("header")? as usize;
        let vocab_bytes = r.u32("header")? as usize;
        let vocab_text = r.take(vocab_bytes, "vocabulary")?;
        let weights = r.f32s(n, "weights")?;
        let scales = r.f32s(n, "scales")?;
        let len = n.checked_mul(dim).ok_or(ModelErrorKind::Truncated("vectors"))?;
        let vectors = r.take(len, "vectors")?;
        let content = r.pos;
        let stored = r.take(32, "checksum")?;
        if r.pos != bytes.len() {
            return Err(ModelErrorKind::TrailingBytes(bytes.len() - r.pos));
        }
        let computed: [u8; 32] = Sha256::digest(&bytes[..content]).into();
        if stored != computed {
            return Err(ModelErrorKind::ChecksumMismatch { stored: hex(stored), computed: hex(&computed) });
        }
        if dim == 0 {
            return Err(ModelErrorKind::BadVocabulary("vector dimension is 0".into()));
        }
        let text = std::str::from_utf8(vocab_text)
            .map_err(|e| ModelErrorKind::BadVocabulary(format!("not UTF-8: {e}")))?;
        let tokens: Vec<&str> = text.strip_suffix('\n').unwrap_or(text).split('\n').collect();
        if tokens.len() != n {
            return Err(ModelErrorKind::BadVocabulary(format!("{} tokens for {n} vectors", tokens.len())));
        }
        let vocab = WordPiece::new(tokens.into_iter())
            .ok_or_else(|| ModelErrorKind::BadVocabulary("no [UNK] token".into()))?;
        let vectors = keep(vectors);
        Ok(StaticModel { inner: Arc::new(Inner { dim, vocab, weights, scales, vectors, sha256: computed }) })
    }

    /// The number of dimensions of a vector.
    pub fn dim(&self) -> usize {
        self.inner.dim
    }

    /// The number of tokens in the vocabulary.
    pub fn vocab_len(&self) -> usize {
        self.inner.weights.len()
    }

    /// The SHA-256 of the model's content (every byte before the trailer, which stores it), hex.
    pub fn checksum(&self) -> String {
        hex(&self.inner.sha256)
    }

    /// The WordPiece token ids of `text` (`[UNK]` for a word the vocabulary cannot spell).
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        self.tokenize_onto(text, &mut out);
        out
    }

    /// Appends the WordPiece token ids of `text` to `out`.
    pub(crate) fn tokenize_onto(&self, text: &str, out: &mut Vec<u32>) {
        self.inner.vocab.encode(text, out);
    }

    /// The pooling weight of a token (0 for special tokens and `[UNK]`).
    pub fn weight(&self, token: u32) -> f32 {
        self.inner.weights.get(token as usize).copied().unwrap_or(0.0)
    }

    /// The int8 vector of `token` and the factor that turns it back into floats.
    pub(crate) fn token_row(&self, token: u32) -> Option<(&[i8], f32)> {
        let (d, t) = (self.inner.dim, token as usize);
        Some((self.inner.vectors.get(t * d..(t + 1) * d)?, *self.inner.scales.get(t)?))
    }

    /// Adds `weight` times the vector of `token` to `acc` (of length [`dim`](Self::dim)).
    pub fn add_token(&self, token: u32, weight: f32, acc: &mut [f32]) {
        let (d, t) = (self.inner.dim, token as usize);
        let Some(row) = self.inner.vectors.get(t * d..(t + 1) * d) else { return };
        let s = weight * self.inner.scales[t];
        for (a, &q) in acc.iter_mut().zip(row) {
            *a += s * f32::from(q);
        }
    }

    /// The embedding of `text`: the mean of its token vectors weighted by the model's weights,
    /// L2-normalised. All zeros when no token of `text` is known.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut acc = vec![0.0; self.dim()];
        for t in self.tokenize(text) {
            self.add_token(t, self.weight(t), &mut acc);
        }
        normalize(&mut acc);
        acc
    }

    /// The share of the basic words of `text` (Han characters count one each) that the model
    /// knows: words that are not Han characters and that WordPiece spells without `[UNK]`.
    /// 1.0 for plain English, near 0 for Chinese; 0 for empty text.
    pub fn coverage(&self, text: &str) -> f32 {
        let mut coverage = Coverage::default();
        self.inner.vocab.each_word(text, &mut |kind, _, ids| coverage.count(self, kind, ids));
        coverage.share()
    }
}

/// A text's words counted as they are read, and those a model knows: the share
/// [`StaticModel::coverage`] gives.
#[derive(Debug, Default)]
pub(crate) struct Coverage {
    known: usize,
    all: usize,
}

impl Coverage {
    /// Counts one word of `kind` that `model` spells `ids`: known when it is not a Han
    /// character and has no `[UNK]`.
    pub(crate) fn count(&mut self, model: &StaticModel, kind: WordKind, ids: &[u32]) {
        self.all += 1;
        if kind != WordKind::Cjk && !ids.contains(&model.inner.vocab.unk()) {
            self.known += 1;
        }
    }

    /// The share of the words counted that the model knows (0 for none).
    pub(crate) fn share(&self) -> f32 {
        if self.all == 0 { 0.0 } else { self.known as f32 / self.all as f32 }
    }
}

/// Keeps the best `k` of `hits` (score descending, ties to the lower id), sorted; none when
/// `k` is 0.
pub(crate) fn best_first<T: Ord>(hits: &mut Vec<(T, f32)>, k: usize) {
    if k < hits.len() {
        hits.select_nth_unstable_by(k.saturating_sub(1), better);
        hits.truncate(k);
    }
    hits.sort_unstable_by(better);
}

/// The order of [`best_first`]: the higher score first, then the lower id.
pub(crate) fn better<T: Ord>(a: &(T, f32), b: &(T, f32)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Scales `v` to unit length (leaves a zero vector alone).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = kernel::dot_f32(v, v).sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A model file of the given tokens and vectors (weights 1, scale 1/127, except 0 for
    /// bracketed special tokens).
    pub(crate) fn model_bytes(tokens: &[&str], vectors: &[Vec<i8>]) -> Vec<u8> {
        let dim = vectors[0].len();
        let vocab: String = tokens.iter().map(|t| format!("{t}\n")).collect();
        let mut b = MAGIC.to_vec();
        for x in [VERSION, dim as u32, tokens.len() as u32, vocab.len() as u32] {
            b.extend(x.to_le_bytes());
        }
        b.extend(vocab.as_bytes());
        for t in tokens {
            let w: f32 = if t.starts_with('[') { 0.0 } else { 1.0 };
            b.extend(w.to_le_bytes());
        }
        for _ in tokens {
            b.extend((1.0f32 / 127.0).to_le_bytes());
        }
        for v in vectors {
            b.extend(v.iter().map(|&x| x as u8));
        }
        let digest: [u8; 32] = Sha256::digest(&b).into();
        b.extend(digest);
        b
    }

    /// A toy model: weather words point one way, git words another, file words a third.
    pub(crate) fn toy() -> StaticModel {
        let rows: Vec<(&str, [i8; 3])> = vec![
            ("[PAD]", [0, 0, 0]),
            ("[UNK]", [0, 0, 0]),
            ("weather", [127, 0, 0]),
            ("forecast", [120, 10, 0]),
            ("rain", [110, 0, 20]),
            ("tomorrow", [90, 0, 30]),
            ("git", [0, 127, 0]),
            ("commit", [0, 120, 10]),
            ("history", [10, 100, 20]),
            ("log", [0, 110, 30]),
            ("read", [0, 20, 120]),
            ("file", [0, 10, 127]),
            ("##s", [0, 0, 0]),
            ("the", [40, 40, 40]),
        ];
        let tokens: Vec<&str> = rows.iter().map(|r| r.0).collect();
        let vectors: Vec<Vec<i8>> = rows.iter().map(|r| r.1.to_vec()).collect();
        StaticModel::from_bytes("toy", &model_bytes(&tokens, &vectors)).unwrap()
    }

    #[test]
    fn an_embedding_has_unit_length_and_unknown_text_embeds_to_zero() {
        let m = toy();
        let v = m.embed("Weather forecast: rain tomorrow?");
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
        assert!(m.embed("zzz 天气").iter().all(|&x| x == 0.0));
        assert_eq!(m.tokenize("commits xyz"), vec![7, 12, 1]);
    }

    #[test]
    fn coverage_counts_known_words_and_not_han_characters() {
        let m = toy();
        assert_eq!(m.coverage("git log"), 1.0);
        assert_eq!(m.coverage("git xyz"), 0.5);
        assert_eq!(m.coverage("明天 rain"), 1.0 / 3.0);
        assert_eq!(m.coverage(""), 0.0);
    }

    #[test]
    fn damaged_files_are_clear_errors() {
        let good = model_bytes(&["[UNK]", "a"], &[vec![0, 0], vec![1, 2]]);
        let err = |b: &[u8]| StaticModel::from_bytes("m.tgsm", b).unwrap_err().to_string();
        assert!(StaticModel::from_bytes("m.tgsm", &good).is_ok());
        assert_eq!(
            err(b"PK\x03\x04 a zip"),
            "m.tgsm: not a static model file (no TGSTATIC header); generate one with scripts/distill_static_model.py"
        );
        let mut flipped = good.clone();
        flipped[30] ^= 1;
        assert!(err(&flipped).starts_with("m.tgsm: checksum mismatch (stored sha256 "), "{}", err(&flipped));
        assert_eq!(
            err(&good[..good.len() - 34]),
            "m.tgsm: file ends inside the vectors (truncated download or copy?)"
        );
        let mut v2 = good.clone();
        v2[8] = 2;
        assert_eq!(err(&v2), "m.tgsm: model format version 2 is not supported (this build reads version 1)");
        let mut longer = good.clone();
        longer.push(0);
        assert_eq!(err(&longer), "m.tgsm: 1 unexpected bytes after the checksum");
        let no_unk = model_bytes(&["a", "b"], &[vec![0, 0], vec![1, 2]]);
        assert_eq!(err(&no_unk), "m.tgsm: bad vocabulary: no [UNK] token");
        let e = StaticModel::from_path(Path::new("/nonexistent/model.tgsm")).unwrap_err();
        assert!(matches!(e.kind, ModelErrorKind::Io(_)), "{e}");
    }

    /// Expected ids from the Python WordPiece of `scripts/distill_static_model.py`, which
    /// follows BERT's `BasicTokenizer` + `WordpieceTokenizer` over the same `vocab.txt`.
    #[cfg(feature = "semantic")]
    #[test]
    fn the_tokenizer_agrees_with_bert_on_the_real_vocabulary() {
        let m = StaticModel::embedded();
        assert_eq!(m.tokenize("unaffable"), vec![14477, 20961, 3468]); // una ##ffa ##ble
        assert_eq!(
            m.tokenize("Take a screenshot of the web-page!"),
            vec![2202, 1037, 12117, 12326, 1997, 1996, 4773, 1011, 3931, 999]
        );
        assert_eq!(m.tokenize("npmVulnerabilities café"), vec![27937, 2213, 19722, 19666, 6906, 14680, 7668]);
        assert_eq!(m.tokenize("查询天气 weather"), vec![100, 100, 1811, 100, 4633]);
        assert_eq!(m.coverage("查询天气 weather"), 0.2);
    }

    #[cfg(feature = "semantic")]
    #[test]
    fn the_embedded_model_is_the_one_the_readme_records() {
        let m = StaticModel::embedded();
        assert_eq!(m.vocab_len(), 30522);
        let file = hex(&Sha256::digest(EMBEDDED));
        let readme = include_str!("../../../models/minilm-static/README.md");
        assert!(readme.contains(&file), "README.md does not record the file's sha256 {file}");
    }
}
