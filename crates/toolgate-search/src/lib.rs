//! toolgate's retrieval: here is a catalog, give me the tools a query asks for.
//!
//! This crate is the ranking behind `toolgate`'s facade, split off as a matcher is from a
//! searcher: the index and its query language ([`Index`], [`Strategy`]), the tuning a ranking
//! is made of (field weights, expansion vocabularies, relevance cuts), the baselines it is
//! measured against (Claude Code's keyword scorer, Codex's BM25), the embedding models
//! ([`semantic`]) and the evaluation over labelled request sets ([`eval`]). A host builds its
//! toolbox with `toolgate` and never needs this crate's internals; `toolgate::search` re-exports
//! the few names a host sets or reads (the index settings, an explanation).
//!
//! The query language (Claude Code's ToolSearch) is the same for every ranker:
//!
//! | form | meaning |
//! |---|---|
//! | `select:a,b,c` | exactly these tools, by name |
//! | `github__git_log` | a bare exact name: that tool alone |
//! | `github__`, `mcp__github` | every tool whose name starts so (a server prefix) |
//! | `+slack send` | `slack` must match, `send` only ranks |
//! | anything else | free keywords in any language, ranked |
//!
//! Free keywords are ranked by one of the [`Strategy`] rankers. Whatever the ranker, a term that
//! names a tool exactly puts that tool first (the exact-name guarantee), and ties are broken
//! by qualified name.

#![deny(missing_docs)]

mod bm25f;
#[cfg(feature = "bm25-crate")]
mod codex;
mod cores;
mod expand;
mod explain;
mod intent;
mod keyword;
mod label;
mod names;
mod relevance;
mod sealed;
mod strategy;
pub mod text;
mod turns;
mod vocab;

pub mod eval;
pub mod semantic;

use std::sync::Arc;

pub use crate::semantic::ModelError;
use bm25f::{Alternative, Bm25Index};
pub use bm25f::{Bm25Params, Field};
#[cfg(feature = "bm25-crate")]
use codex::CodexIndex;
use expand::Expanded;
pub use expand::{Expansion, Via};
pub use explain::{Explanation, TermExplanation, score_json};
use keyword::KeywordIndex;
pub use relevance::{FLOOR_RANK, LOAD_CUT, LoadCut, NOTHING_FITS, floor_of, rank_scored, relevant};
use sealed::Site;
pub use strategy::{AUTO_CACHE_MIN_TOOLS, IndexCache, SearchConfig, Strategy, UnknownStrategy};
pub use vocab::HandEntry;

use toolgate_catalog::naming;
use toolgate_catalog::naming::strip_mcp_prefix;
use toolgate_catalog::{Catalog, ToolId};

/// How many lexical and dense candidates the `bert` strategy fuses.
#[cfg(feature = "bert")]
const FUSION_DEPTH: usize = 100;

/// How many hits a search with `limit` reads: its limit or `floor` (the loading cut's floor
/// rank, or the candidates a fused strategy needs), whichever is more, and a place for each of
/// the `named` tools a name puts first.
fn reads(limit: usize, floor: usize, named: usize) -> usize {
    limit.saturating_sub(named).max(floor).saturating_add(named)
}

/// How many of a request's distinct terms the loading cut tells apart: the low bits of the
/// `u64` that says what a hit matches.
const TERM_BITS: usize = 56;

/// How many of a task's needs the loading cut tells apart: the high bits of that `u64`.
const NEED_BITS: usize = 64 - TERM_BITS;

/// One ranked tool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The tool.
    pub tool: ToolId,
    /// Its score under the strategy (exact-name and `select:` hits score `f32::INFINITY`).
    pub score: f32,
}

/// Which form of the query language a query took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryForm {
    /// `select:a,b`.
    Select,
    /// The whole query is a tool's name.
    Exact,
    /// `github__` or `mcp__github`.
    Prefix,
    /// Free keywords (with optional `+required` terms).
    Keywords,
}

/// What one search found, before any session state is applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The query form.
    pub form: QueryForm,
    /// The tools, best first.
    pub hits: Vec<Hit>,
    /// Query terms (or `select:` names) that matched no tool at all.
    pub unmatched_terms: Vec<String>,
    /// How many of the first hits a `tool_search` loads under the request's
    /// [`cut`](Request::cut) ([`relevant`]). 0 with hits is "nothing fits"
    /// ([`LoadCut::fit`]): the hits are the nearest, and none is near enough to load.
    pub loads: usize,
}

impl Found {
    /// A ranking made elsewhere (a model's, a fusion's), its loading decided by `cut` on its
    /// scores alone.
    pub fn ranked(hits: Vec<Hit>, cut: LoadCut) -> Found {
        let loads = relevant(&hits, floor_of(&hits), cut, &mut |_| 0);
        Found { form: QueryForm::Keywords, hits, unmatched_terms: Vec::new(), loads }
    }

    /// Whether the search found tools and none fits the request closely enough to load
    /// ([`LoadCut::fit`]): [`loads`](Found::loads) 0 with hits.
    pub fn nothing_fits(&self) -> bool {
        self.loads == 0 && !self.hits.is_empty()
    }
}

/// What to search for.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The query, in the query language above.
    pub query: &'a str,
    /// How many tools at most.
    pub limit: usize,
    /// Only tools of these servers, if given.
    pub servers: Option<&'a [String]>,
    /// Which of the hits a `tool_search` loads ([`Found::loads`]).
    pub cut: LoadCut,
}

impl<'a> Request<'a> {
    /// A request with no server filter and the default cut ([`LOAD_CUT`]).
    pub fn new(query: &'a str, limit: usize) -> Request<'a> {
        Request { query, limit, servers: None, cut: LOAD_CUT }
    }
}

#[derive(Debug)]
enum Engine {
    Keyword(KeywordIndex),
    Bm25(Bm25Index),
    Lexical(Bm25Index, Expansion),
    #[cfg(feature = "bm25-crate")]
    Codex(CodexIndex),
    #[cfg(feature = "semantic")]
    Semantic(Bm25Index, Expansion, Box<crate::semantic::DenseIndex>),
    #[cfg(feature = "bert")]
    Bert(Bm25Index, Expansion, Box<crate::semantic::bert::BertIndex>, Arc<crate::semantic::bert::BertModel>),
}

impl Engine {
    /// The BM25F index and expansion weights of the strategies that read a request for its
    /// needs (`lexical` and `semantic`, see [`intent`]).
    fn lexical(&self) -> Option<(&Bm25Index, Expansion)> {
        match self {
            Engine::Lexical(b, e) => Some((b, *e)),
            #[cfg(feature = "semantic")]
            Engine::Semantic(b, e, _) => Some((b, *e)),
            #[cfg(feature = "bert")]
            Engine::Bert(b, e, _, _) => Some((b, *e)),
            _ => None,
        }
    }
}

/// The search structure over a (policy-filtered) catalog. Immutable, `Send + Sync`.
#[derive(Debug)]
pub struct Index {
    catalog: Catalog,
    strategy: Strategy,
    engine: Engine,
    /// Position of each tool's qualified name in sorted order, for tie-breaking.
    name_rank: Vec<u32>,
    /// Lower-case qualified names, bare names and normalised bare names → the tools they name.
    names: names::ToolNames,
    /// Whether the index was read from the cache directory rather than built.
    from_cache: bool,
    /// The best tools for each of a request's needs met so far, ranked once
    /// (`intent.rs`, `Index::need_ranking`): the same words rank the same in every search.
    needs: intent::NeedRankings,
}

/// Builds an [`Index`].
#[derive(Debug, Clone)]
pub struct IndexBuilder {
    strategy: Strategy,
    params: Option<Bm25Params>,
    expansion: Expansion,
    /// Where the default strategy's index is saved and read back (`None`: nowhere).
    cache: Option<std::path::PathBuf>,
    /// The file of the key that authenticates cache files (`None`: the data directory's).
    cache_key: Option<std::path::PathBuf>,
    /// The fewest tools of a catalog whose index is kept in `cache`.
    cache_min_tools: usize,
    /// The vocabularies queries are expanded with (`None`: the compiled-in ones).
    vocab: Option<Arc<vocab::Vocabulary>>,
    #[cfg(feature = "bert")]
    model: Option<Arc<crate::semantic::bert::BertModel>>,
}

impl IndexBuilder {
    /// The ranker for free keywords.
    pub fn strategy(mut self, strategy: Strategy) -> IndexBuilder {
        self.strategy = strategy;
        self
    }

    /// Ranks with `bert`: the default ranking fused with `model`. Catalogs built over one
    /// model share its vectors, so a definition is encoded once.
    #[cfg(feature = "bert")]
    pub fn model(mut self, model: Arc<crate::semantic::bert::BertModel>) -> IndexBuilder {
        self.strategy = Strategy::Bert;
        self.model = Some(model);
        self
    }

    /// The builder a `[search]` table describes; with a model directory (strategy `bert`),
    /// the model is loaded now.
    pub fn from_config(search: &SearchConfig) -> Result<IndexBuilder, ModelError> {
        let mut builder = Index::builder().strategy(search.strategy);
        match &search.index_cache {
            IndexCache::Dir(dir) => builder = builder.cache_dir(dir),
            IndexCache::Auto => {
                if let Some(dir) = toolgate_catalog::files::cache_dir() {
                    builder = builder.cache_dir(dir.join("index")).cache_min_tools(AUTO_CACHE_MIN_TOOLS);
                }
            }
            IndexCache::Off => {}
        }
        #[cfg(feature = "bert")]
        if let Some(dir) = &search.model {
            let model = crate::semantic::bert::BertModel::open(dir)?;
            return Ok(builder.model(Arc::new(model)));
        }
        Ok(builder)
    }

    /// Keeps the `lexical` strategy's index in `dir` (and `semantic`'s, both sides, the dense
    /// one keyed by the model too), keyed by the catalog (every tool's qualified name, server,
    /// definition hash and search hint, in order) and the parameters: a later build over the
    /// same catalog reads it back instead of analysing every tool. A file that is missing,
    /// stale, damaged or unwritable only means a build as without it.
    ///
    /// Every file is authenticated with a key kept outside the cache directory (by default
    /// `$XDG_DATA_HOME/toolgate/index-cache.key`, made on first use, readable by its owner
    /// only): a file someone else wrote, or edited, is never read.
    pub fn cache_dir(mut self, dir: impl Into<std::path::PathBuf>) -> IndexBuilder {
        self.cache = Some(dir.into());
        self
    }

    /// Uses the [cache directory](IndexBuilder::cache_dir) only for catalogs of at least
    /// `tools` tools (0 by default: every catalog).
    pub fn cache_min_tools(mut self, tools: usize) -> IndexBuilder {
        self.cache_min_tools = tools;
        self
    }

    /// Keeps the key that authenticates cache files ([`IndexBuilder::cache_dir`]) in `file`
    /// rather than in the data directory.
    pub fn cache_key_file(mut self, file: impl Into<std::path::PathBuf>) -> IndexBuilder {
        self.cache_key = Some(file.into());
        self
    }

    /// The strategy an index built now ranks with.
    pub fn strategy_of(&self) -> Strategy {
        self.strategy
    }

    /// Overrides the BM25 parameters of the `bm25` and `bm25f` strategies (for tuning).
    pub fn params(mut self, params: Bm25Params) -> IndexBuilder {
        self.params = Some(params);
        self
    }

    /// Overrides the weights of query expansions of the `lexical` strategy (for tuning).
    pub fn expansion(mut self, expansion: Expansion) -> IndexBuilder {
        self.expansion = expansion;
        self
    }

    /// Expands queries without some hand-written vocabulary entries, the general resources
    /// still giving what they have for their words: what the entries add is the difference
    /// (for leaving one set out, `examples/vocabulary.rs`).
    pub fn without_hand_written(mut self, entries: &[HandEntry]) -> IndexBuilder {
        self.vocab = Some(HandEntry::vocabulary_without(entries));
        self
    }

    /// Indexes every tool of `catalog` (a cheap clone of it is kept).
    pub fn build(mut self, catalog: &Catalog) -> Index {
        if catalog.len() < self.cache_min_tools {
            self.cache = None;
        }
        // The name tables need only the catalog: for a large one with a cache, while its engine
        // is read back (one core's work), they are made on a thread of their own. When the
        // engine must be built instead, which keeps every core busy, they are waited for
        // first: beside a build they would only add their memory to the build's peak.
        let (made, (name_rank, names)) = if self.cache.is_none() || catalog.len() < SIDE_BY_SIDE_TOOLS {
            (self.engine(catalog, &|| ()), name_tables(catalog))
        } else {
            std::thread::scope(|scope| {
                let running = std::cell::Cell::new(Some(scope.spawn(|| name_tables(catalog))));
                let made_names = std::cell::Cell::new(None);
                let finish = || {
                    if let Some(thread) = running.take() {
                        made_names.set(Some(thread.join().expect("the name tables panicked")));
                    }
                };
                let made = self.engine(catalog, &finish);
                finish();
                (made, made_names.into_inner().expect("the name tables were made"))
            })
        };
        let Made { strategy, engine, from_cache } = made;
        Index {
            catalog: catalog.clone(),
            strategy,
            engine,
            name_rank,
            names,
            from_cache,
            needs: intent::NeedRankings::default(),
        }
    }

    /// The engine of the strategy asked for, built or read back, and the strategy it ranks
    /// with (`bert` without a usable model ranks as `lexical`).
    fn engine(self, catalog: &Catalog, before_build: &dyn Fn()) -> Made {
        #[cfg_attr(not(feature = "bert"), allow(unused_mut))]
        let mut strategy = self.strategy;
        let mut from_cache = false;
        let engine = match self.strategy {
            Strategy::Keyword => Engine::Keyword(KeywordIndex::build(catalog)),
            Strategy::Bm25 => {
                Engine::Bm25(Bm25Index::build(catalog, self.params.unwrap_or_else(Bm25Params::plain)))
            }
            Strategy::Bm25f => {
                Engine::Bm25(Bm25Index::build(catalog, self.params.unwrap_or_else(Bm25Params::bm25f)))
            }
            Strategy::Lexical => {
                let params = self.params.unwrap_or_else(Bm25Params::lexical);
                let key_file = self.cache_key.clone().or_else(bm25f::cache::default_key_file);
                let cache = Site::at(self.cache.as_deref(), key_file.as_deref(), before_build);
                let (index, cached) = Bm25Index::build_cached(catalog, params, cache);
                from_cache = cached;
                Engine::Lexical(index, self.expansion)
            }
            #[cfg(feature = "semantic")]
            Strategy::Semantic => {
                // Both sides are cached: the lexical one in the same file as `lexical`'s.
                let params = self.params.unwrap_or_else(Bm25Params::lexical);
                let key_file = self.cache_key.clone().or_else(bm25f::cache::default_key_file);
                let cache = Site::at(self.cache.as_deref(), key_file.as_deref(), before_build);
                let (index, lexical_cached) = Bm25Index::build_cached(catalog, params, cache);
                let model = crate::semantic::StaticModel::embedded();
                let (dense, dense_cached) = crate::semantic::DenseIndex::build_cached(catalog, model, cache);
                from_cache = lexical_cached && dense_cached;
                Engine::Semantic(index, self.expansion, Box::new(dense))
            }
            #[cfg(feature = "bm25-crate")]
            Strategy::Bm25Crate => Engine::Codex(CodexIndex::build(catalog)),
            #[cfg(feature = "bert")]
            Strategy::Bert => {
                let lexical = Bm25Index::build(catalog, self.params.unwrap_or_else(Bm25Params::lexical));
                // Without a model, or if the model fails on this catalog, the words alone rank.
                match self.model.as_ref().map(|m| (m.index(catalog), m)) {
                    Some((Ok(dense), model)) => {
                        Engine::Bert(lexical, self.expansion, Box::new(dense), model.clone())
                    }
                    _ => {
                        strategy = Strategy::Lexical;
                        Engine::Lexical(lexical, self.expansion)
                    }
                }
            }
        };
        let mut engine = engine;
        if let Some(vocab) = self.vocab {
            match &mut engine {
                Engine::Lexical(b, _) => b.set_vocabulary(vocab),
                #[cfg(feature = "semantic")]
                Engine::Semantic(b, _, _) => b.set_vocabulary(vocab),
                #[cfg(feature = "bert")]
                Engine::Bert(b, _, _, _) => b.set_vocabulary(vocab),
                _ => {}
            }
        }
        Made { strategy, engine, from_cache }
    }
}

/// What [`IndexBuilder::engine`] made.
struct Made {
    strategy: Strategy,
    engine: Engine,
    from_cache: bool,
}

/// From this many tools on, [`IndexBuilder::build`] with a cache makes the name tables beside
/// the engine.
const SIDE_BY_SIDE_TOOLS: usize = 4096;

/// Each tool's rank by qualified name, and the table of every name a query may spell.
fn name_tables(catalog: &Catalog) -> (Vec<u32>, names::ToolNames) {
    let tools = catalog.tools();
    let mut order: Vec<u32> = (0..catalog.len() as u32).collect();
    order.sort_by(|&a, &b| tools[a as usize].qualified_name().cmp(tools[b as usize].qualified_name()));
    let mut name_rank = vec![0; catalog.len()];
    for (rank, &i) in order.iter().enumerate() {
        name_rank[i as usize] = rank as u32;
    }
    (name_rank, names::ToolNames::new(catalog, &order))
}

impl Index {
    /// A builder with the default strategy.
    pub fn builder() -> IndexBuilder {
        IndexBuilder {
            strategy: Strategy::DEFAULT,
            params: None,
            expansion: Expansion::default(),
            cache: None,
            cache_key: None,
            cache_min_tools: 0,
            vocab: None,
            #[cfg(feature = "bert")]
            model: None,
        }
    }

    /// The catalog this index covers.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The ranker of free keywords.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// With `bert`: why the model's vectors could not be written to its cache file, if they
    /// could not (they are then kept in memory only).
    pub fn model_cache_problem(&self) -> Option<String> {
        match &self.engine {
            #[cfg(feature = "bert")]
            Engine::Bert(_, _, _, model) => model.cache_problem(),
            _ => None,
        }
    }

    /// Whether this index was read back from [`IndexBuilder::cache_dir`] rather than built.
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }

    /// Runs one query in the query language.
    pub fn search(&self, req: Request<'_>) -> Found {
        let query = req.query.trim();
        let allowed = |id: ToolId| match req.servers {
            Some(servers) => servers.iter().any(|s| s == self.catalog.tool(id).server()),
            None => true,
        };
        // Named tools, all loaded: what the request names is what it wants.
        let sure = |form: QueryForm, ids: Vec<ToolId>, unmatched_terms: Vec<String>| -> Found {
            let hits: Vec<Hit> = ids
                .into_iter()
                .filter(|&id| allowed(id))
                .take(req.limit)
                .map(|tool| Hit { tool, score: f32::INFINITY })
                .collect();
            Found { form, loads: hits.len(), hits, unmatched_terms }
        };
        if let Some(names) = select_list(query) {
            let mut ids = Vec::new();
            let mut unmatched = Vec::new();
            for name in names {
                let found = self.named(name);
                if found.is_empty() {
                    unmatched.push(name.to_owned());
                }
                for id in found {
                    if !ids.contains(&id) {
                        ids.push(id);
                    }
                }
            }
            return sure(QueryForm::Select, ids, unmatched);
        }
        let exact = self.named(query);
        if !exact.is_empty() {
            return sure(QueryForm::Exact, exact, Vec::new());
        }
        if let Some(prefix) = server_prefix(query) {
            let ids: Vec<ToolId> =
                self.sorted_by_name(self.catalog.ids().filter(|&id| {
                    self.catalog.tool(id).qualified_name().to_lowercase().starts_with(&prefix)
                }));
            if !ids.is_empty() {
                return sure(QueryForm::Prefix, ids, Vec::new());
            }
        }
        self.keywords(query, req.limit, req.cut, req.servers.is_some().then_some(&allowed))
    }

    /// Tools a name refers to: a qualified name (with or without `mcp__`, any case), or a bare
    /// tool name (every server's tool of that name, sorted by qualified name).
    pub fn named(&self, name: &str) -> Vec<ToolId> {
        if name.is_empty() || name.chars().any(char::is_whitespace) {
            return Vec::new();
        }
        // A name spelt exactly wins over tools whose names differ from it only by case.
        for exact in [name, strip_mcp_prefix(name)] {
            if let Some(id) = self.catalog.get(exact) {
                return vec![id];
            }
        }
        let lower = name.to_lowercase();
        if let Some(ids) = self.names.get(&self.catalog, &self.name_rank, &lower) {
            return ids;
        }
        let bare = strip_mcp_prefix(&lower);
        self.names.get(&self.catalog, &self.name_rank, bare).unwrap_or_default()
    }

    fn sorted_by_name(&self, ids: impl Iterator<Item = ToolId>) -> Vec<ToolId> {
        let mut v: Vec<ToolId> = ids.collect();
        v.sort_by_key(|id| self.name_rank[id.index()]);
        v
    }

    /// Ranks the words of `query` among the tools `only` accepts (`None`: every tool, so that
    /// no hit need be asked).
    fn keywords(
        &self,
        query: &str,
        limit: usize,
        cut: LoadCut,
        only: Option<&dyn Fn(ToolId) -> bool>,
    ) -> Found {
        let allowed = |id: ToolId| only.is_none_or(|only| only(id));
        let mut required: Vec<&str> = Vec::new();
        let mut words: Vec<&str> = Vec::new();
        let labelled = self.labelled(query);
        for &w in &labelled.words {
            match required_word(w) {
                Some(r) => {
                    required.push(r);
                    words.push(r);
                }
                None => words.push(w),
            }
        }
        // The exact-name guarantee: a term that names a tool puts it first.
        let mut named: Vec<ToolId> = Vec::new();
        for w in &words {
            if is_identifier_like(w) {
                for id in self.named(w) {
                    if !named.contains(&id) {
                        named.push(id);
                    }
                }
            }
        }
        // The lexical strategies read the request for what it needs besides its words.
        let reading = match self.engine.lexical() {
            Some(_) => intent::read(&words),
            None => intent::Reading { words, ..Default::default() },
        };
        let words: &[&str] = &reading.words;
        // Expanded once: the ranking and the loading cut both read it.
        let expanded = match self.engine.lexical() {
            Some((b, e)) => expand::expand(b, words, &labelled.labels, e),
            None => Expanded::default(),
        };
        // The request's cosines to the tools the dense side read, where the model read it.
        #[allow(unused_mut)]
        let mut fit: Vec<(ToolId, f32)> = Vec::new();
        let (mut scored, unmatched) = match &self.engine {
            Engine::Keyword(k) => self.rank_keyword(k, words, &required),
            Engine::Bm25(b) => self.rank_bm25(b, words, &required),
            Engine::Lexical(b, e) => {
                // A server filter may hide any number.
                let depth = only.is_none().then_some(reads(limit, FLOOR_RANK, named.len()));
                self.rank_lexical_latest(b, *e, query, &expanded, &required, depth)
            }
            #[cfg(feature = "bm25-crate")]
            Engine::Codex(c) => {
                // The crate has no required terms: its query is the words, `+` dropped.
                let hits = c.search(&words.join(" "), limit.saturating_add(named.len()));
                let hits = hits
                    .into_iter()
                    .map(|(d, score)| Hit { tool: self.catalog.brand().id(d), score })
                    .collect();
                (hits, Vec::new())
            }
            #[cfg(feature = "semantic")]
            Engine::Semantic(b, e, dense) => {
                // What `lexical` reads for this limit, at least the dense side's candidates
                // (`RERANK_DEPTH`), among the tools a server filter lets through.
                let depth = reads(limit, crate::semantic::RERANK_DEPTH, named.len());
                let read = (required.is_empty() && only.is_none()).then_some(depth);
                let (mut lexical, unmatched) =
                    self.rank_lexical_latest(b, *e, query, &expanded, &required, read);
                if required.is_empty() {
                    if only.is_some() {
                        lexical.retain(|h| allowed(h.tool));
                    }
                    // Required terms are a lexical promise the dense side cannot keep.
                    self.top(&mut lexical, depth);
                    let pairs: Vec<(ToolId, f32)> = lexical.iter().map(|h| (h.tool, h.score)).collect();
                    // The dense side reads labels as it reads any word: by what they mean.
                    let text = label::rejoin(&labelled.labels, words);
                    let fused;
                    crate::semantic::Fused { hits: fused, cosines: fit } =
                        dense.hybrid_fit(&text, &pairs, crate::semantic::Fusion::DEFAULT);
                    // The fused scores, which the loading cut reads as it reads lexical ones.
                    lexical = fused.into_iter().map(|(tool, score)| Hit { tool, score }).collect();
                }
                (lexical, unmatched)
            }
            #[cfg(feature = "bert")]
            Engine::Bert(b, e, dense, model) => {
                let mix = model.mix_for(query);
                let fuses = required.is_empty() && mix > 0.0;
                let (mut lexical, unmatched) = self.rank_lexical_latest(
                    b,
                    *e,
                    query,
                    &expanded,
                    &required,
                    fuses.then_some(FUSION_DEPTH),
                );
                if fuses {
                    self.top(&mut lexical, FUSION_DEPTH);
                    // A model that fails on this request leaves the words to rank it.
                    if let Ok(v) = model.encoder().embed(query) {
                        let pairs: Vec<(ToolId, f32)> = lexical.iter().map(|h| (h.tool, h.score)).collect();
                        let near = dense.top(&v, FUSION_DEPTH);
                        lexical = rank_scored(crate::semantic::bert::fuse(&pairs, &near, mix));
                    }
                }
                (lexical, unmatched)
            }
        };
        // Asked of every hit only when some tool may not be shown (thousands of hits, each
        // call through `dyn`: a fifth of a large catalog's search).
        if only.is_some() || !named.is_empty() {
            scored.retain(|h| allowed(h.tool) && !named.contains(&h.tool));
        }
        let mut hits: Vec<Hit> = named
            .into_iter()
            .filter(|&id| allowed(id))
            .map(|tool| Hit { tool, score: f32::INFINITY })
            .collect();
        let room = limit.saturating_sub(hits.len());
        // The loading cut measures from the score of a hit further down than most searches show.
        self.top(&mut scored, room.max(FLOOR_RANK));
        let floor = floor_of(&scored);
        scored.truncate(room);
        hits.extend(scored);
        let mut needed = Vec::new();
        if required.is_empty() && self.engine.lexical().is_some_and(|(_, e)| e.needs) {
            needed = self.make_room_for_needs(&reading, &mut hits, &allowed);
        }
        hits.truncate(limit);
        let mut loads = self.loads(&hits, floor, cut, &expanded, &needed);
        // Nothing fits: the model read the request, it is far in meaning from the first hit,
        // and no tool serves a need the request states (a path to write, a page to fetch).
        if needed.is_empty()
            && let Some(first) = hits.first().filter(|h| h.score.is_finite())
            && fit.iter().any(|&(tool, cosine)| tool == first.tool && cosine < cut.fit)
        {
            loads = 0;
        }
        Found { form: QueryForm::Keywords, hits, unmatched_terms: unmatched, loads }
    }

    /// How many of `hits` a `tool_search` loads ([`relevant`]). What a hit matches is the
    /// terms of the request's expanded words it has (for the lexical strategies: a word, or one
    /// of its translations or synonyms); a tool `needed` for a need of the task stands for that
    /// need.
    fn loads(&self, hits: &[Hit], floor: f32, cut: LoadCut, expanded: &Expanded, needed: &[ToolId]) -> usize {
        let mut terms: Option<Vec<u32>> = None;
        let mut matched = |i: usize| -> u64 {
            if let Some(n) = needed.iter().position(|&t| t == hits[i].tool) {
                return 1 << (63 - n.min(NEED_BITS - 1));
            }
            let Some((b, _)) = self.engine.lexical() else { return 0 };
            // The request's first distinct terms; past them a request is a document, and its
            // terms are not told apart.
            let terms = terms.get_or_insert_with(|| {
                let mut first: Vec<u32> = Vec::with_capacity(TERM_BITS);
                for &t in expanded.groups.iter().flatten().flat_map(|a| &a.terms) {
                    if first.len() == TERM_BITS {
                        break;
                    }
                    if !first.contains(&t) {
                        first.push(t);
                    }
                }
                first
            });
            let doc = hits[i].tool.index() as u32;
            terms.iter().enumerate().filter(|&(_, &t)| b.contains(t, doc)).fold(0, |m, (i, _)| m | 1 << i)
        };
        relevant(hits, floor, cut, &mut matched)
    }

    /// The words of `query`: the lexical strategies tell the words of lines' labels apart
    /// (counted little, see `label`); the others read every word alike.
    fn labelled<'q>(&self, query: &'q str) -> label::Labelled<'q> {
        match self.engine.lexical() {
            Some(_) => label::split(query),
            None => label::Labelled { words: query.split_whitespace().collect(), labels: Vec::new() },
        }
    }

    fn rank_keyword(&self, k: &KeywordIndex, words: &[&str], required: &[&str]) -> (Vec<Hit>, Vec<String>) {
        let terms: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
        let required: Vec<String> = required.iter().map(|w| w.to_lowercase()).collect();
        let mut hits = Vec::new();
        let mut matched = vec![false; terms.len()];
        for doc in 0..k.len() {
            if !required.iter().all(|r| k.meets(doc, r)) {
                continue;
            }
            for (i, t) in terms.iter().enumerate() {
                if !matched[i] {
                    let h = k.term_hit(doc, t);
                    matched[i] = h.part > 0 || h.full || h.hint || h.description;
                }
            }
            let s = k.score(doc, &terms);
            if s > 0 {
                hits.push(Hit { tool: self.catalog.brand().id(doc as u32), score: s as f32 });
            }
        }
        let unmatched = terms.iter().zip(&matched).filter(|(_, m)| !**m).map(|(t, _)| t.clone()).collect();
        (hits, unmatched)
    }

    fn rank_lexical(
        &self,
        b: &Bm25Index,
        weights: Expansion,
        words: &[&str],
        required: &[&str],
    ) -> (Vec<Hit>, Vec<String>) {
        let expanded = expand::expand(b, words, &[], weights);
        let hits = self.rank_expanded(b, &expanded, required, None);
        (hits, expanded.unmatched)
    }

    /// Scores the groups of an expanded request over the tools that have every `required` word;
    /// with `best`, only the hits that may be among the best `best`.
    fn rank_expanded(
        &self,
        b: &Bm25Index,
        expanded: &Expanded,
        required: &[&str],
        best: Option<usize>,
    ) -> Vec<Hit> {
        let Some(required_ids) = b.required_terms(required) else { return Vec::new() };
        let mut hits = Vec::new();
        b.score_groups(
            &expanded.groups,
            self.catalog.brand(),
            |doc| b.has_required(&required_ids, doc),
            best,
            &mut hits,
        );
        hits
    }

    fn rank_bm25(&self, b: &Bm25Index, words: &[&str], required: &[&str]) -> (Vec<Hit>, Vec<String>) {
        let mut ids: Vec<u32> = Vec::new();
        let mut unmatched = Vec::new();
        let mut buf = Vec::new();
        for w in words {
            buf.clear();
            b.analyzer().tokens(w, &mut buf);
            let mut any = false;
            for t in &buf {
                if let Some(id) = b.term(t) {
                    any = true;
                    if !ids.contains(&id) {
                        ids.push(id);
                    }
                }
            }
            if !any && !buf.is_empty() {
                unmatched.push(w.to_lowercase());
            }
        }
        let Some(required_ids) = b.required_terms(required) else {
            return (Vec::new(), unmatched);
        };
        // Plain BM25 is one group of one alternative: every term added straight in.
        let group = [vec![Alternative { terms: ids, weight: 1.0 }]];
        let mut hits = Vec::new();
        b.score_groups(
            &group,
            self.catalog.brand(),
            |doc| b.has_required(&required_ids, doc),
            None,
            &mut hits,
        );
        (hits, unmatched)
    }
}

/// The term a `+term` word requires. It must start with a letter: `+1234567890` in a request
/// is a phone number, not a term every tool must have.
fn required_word(w: &str) -> Option<&str> {
    w.strip_prefix('+').filter(|r| r.chars().next().is_some_and(char::is_alphabetic))
}

/// The names of a `select:NAME,NAME` query (`select:` in any letter case), or `None` for a
/// query of another form. The one parser of the form: the search and the toolbox's screening
/// of hidden names read it alike.
pub fn select_list(query: &str) -> Option<impl Iterator<Item = &str>> {
    let rest = strip_prefix_ci(query, "select:")?;
    Some(rest.split(',').map(str::trim).filter(|n| !n.is_empty()))
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &s[prefix.len()..])
}

/// `github__` or `mcp__github` (one word) → the lower-case name prefix to match.
fn server_prefix(query: &str) -> Option<String> {
    if query.chars().any(char::is_whitespace) {
        return None;
    }
    let lower = query.to_lowercase();
    if lower.starts_with("mcp__") {
        let rest = strip_mcp_prefix(&lower);
        return (rest.len() < lower.len()).then(|| rest.to_owned());
    }
    (lower.ends_with(naming::SEPARATOR) && lower.len() > 2).then_some(lower)
}

/// Whether a query word could be a tool name rather than an ordinary word: it has a
/// separator (`_`, `-`, `.`) or a camelCase hump. `search` names a tool only as the whole
/// query; `git_log` names it anywhere.
fn is_identifier_like(w: &str) -> bool {
    w.contains(['_', '-', '.'])
        || w.chars().zip(w.chars().skip(1)).any(|(a, b)| a.is_lowercase() && b.is_uppercase())
}

mod top;

#[cfg(test)]
mod tests;
