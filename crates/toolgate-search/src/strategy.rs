//! strategy: which ranker orders free keywords, by the name the command line and configuration use.

use std::fmt;
use std::str::FromStr;

/// A ranker for free keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Strategy {
    /// Claude Code's keyword scorer (weights 12/10, 6/5, 3, 4, 2), the baseline.
    Keyword,
    /// Plain Okapi BM25 over all fields as one text: what most people would write.
    Bm25,
    /// The `bm25` crate configured as Codex configures it (needs the `bm25-crate` feature).
    #[cfg(feature = "bm25-crate")]
    Bm25Crate,
    /// Field-weighted BM25 with identifier splitting, Chinese bigrams, stop words and plural
    /// folding.
    Bm25f,
    /// BM25F with query understanding: light stemming, Chinese stop words, the bilingual
    /// vocabulary and English synonyms as weighted expansions. The default.
    Lexical,
    /// `lexical` fused with the static embedding model of `models/minilm-static/` (needs the
    /// `semantic` feature): a score mix weighted by how much of the query the model can read.
    #[cfg(feature = "semantic")]
    Semantic,
    /// `lexical` fused with a full sentence-transformers model read from a directory (needs the
    /// `bert` feature and `IndexBuilder::model`; without a model an index ranks as `lexical`).
    #[cfg(feature = "bert")]
    Bert,
}

/// How many of [`Strategy::NAMED`], at its end, need a model.
const NEED_A_MODEL: usize = if cfg!(feature = "bert") { 1 } else { 0 };

impl Strategy {
    /// Every strategy that needs nothing but the catalog, in the order `eval --strategy all`
    /// reports them (`bert` needs a model, so it is not among them).
    pub const ALL: &[Strategy] = Strategy::NAMED.split_at(Strategy::NAMED.len() - NEED_A_MODEL).0;

    /// Every strategy a name can give: [`Strategy::ALL`], then `bert` with its feature.
    pub const NAMED: &[Strategy] = &[
        Strategy::Keyword,
        Strategy::Bm25,
        #[cfg(feature = "bm25-crate")]
        Strategy::Bm25Crate,
        Strategy::Bm25f,
        Strategy::Lexical,
        #[cfg(feature = "semantic")]
        Strategy::Semantic,
        #[cfg(feature = "bert")]
        Strategy::Bert,
    ];

    /// The strategy used when none is named: `semantic`, `lexical` fused with the compiled-in
    /// static model, the best on the development sets and on held-out requests
    /// (`docs/ranking.md`); `lexical` in a build without the `semantic` feature.
    #[cfg(feature = "semantic")]
    pub const DEFAULT: Strategy = Strategy::Semantic;
    /// The strategy used when none is named: `lexical`, since this build has no `semantic`
    /// (`docs/ranking.md`).
    #[cfg(not(feature = "semantic"))]
    pub const DEFAULT: Strategy = Strategy::Lexical;

    /// The name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Keyword => "keyword",
            Strategy::Bm25 => "bm25",
            #[cfg(feature = "bm25-crate")]
            Strategy::Bm25Crate => "bm25-crate",
            Strategy::Bm25f => "bm25f",
            Strategy::Lexical => "lexical",
            #[cfg(feature = "semantic")]
            Strategy::Semantic => "semantic",
            #[cfg(feature = "bert")]
            Strategy::Bert => "bert",
        }
    }
}

impl Default for Strategy {
    fn default() -> Strategy {
        Strategy::DEFAULT
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A strategy name that is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStrategy(pub String);

impl fmt::Display for UnknownStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Strategy::NAMED.iter().map(|s| s.as_str()).collect();
        write!(f, "unknown strategy `{}` (expected one of: {})", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownStrategy {}

impl FromStr for Strategy {
    type Err = UnknownStrategy;
    fn from_str(s: &str) -> Result<Strategy, UnknownStrategy> {
        Strategy::NAMED.iter().copied().find(|x| x.as_str() == s).ok_or_else(|| UnknownStrategy(s.to_owned()))
    }
}

/// The `[search]` table: how `tool_search` ranks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchConfig {
    /// The ranker (`strategy`, default [`Strategy::DEFAULT`]; `bert` when a model is given).
    pub strategy: Strategy,
    /// A sentence-transformers model directory for `bert` (`model`, relative to the file).
    pub model: Option<std::path::PathBuf>,
    /// Where the `lexical` or `semantic` strategy's index is saved and read back at the next start
    /// (`index_cache`).
    pub index_cache: IndexCache,
}

/// Where an index is kept between starts (`[search] index_cache`), so that a start over the
/// same catalog reads it back instead of analysing every tool.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum IndexCache {
    /// Unset: in `index` under toolgate's cache directory (`$XDG_CACHE_HOME/toolgate`, else
    /// `~/.cache/toolgate`), for catalogs of at least [`AUTO_CACHE_MIN_TOOLS`] tools; smaller
    /// ones are built every time, which takes well under a second.
    #[default]
    Auto,
    /// `false`: built every time.
    Off,
    /// A directory (relative to the file): every catalog's index is kept there.
    Dir(std::path::PathBuf),
}

impl IndexCache {
    /// The directory given, if one was (not the one [`IndexCache::Auto`] picks).
    pub fn dir(&self) -> Option<&std::path::Path> {
        match self {
            IndexCache::Dir(dir) => Some(dir),
            IndexCache::Auto | IndexCache::Off => None,
        }
    }
}

/// The fewest tools a catalog has for [`IndexCache::Auto`] to keep its index: a gateway
/// starting on 10,000 tools builds its index in about 0.2 s, on 100,000 in over a second (two
/// cores, `semantic`), where reading it back saves most of that.
pub const AUTO_CACHE_MIN_TOOLS: usize = 10_000;
