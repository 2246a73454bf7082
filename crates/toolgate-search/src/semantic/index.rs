//! The dense index (one int8 vector per tool, read for a lexical ranker's candidates, and
//! clustered in a large catalog) and its fusion with a lexical ranking.
//!
//! A tool's vector is the weighted sum of its fields' embeddings, each L2-normalised first so
//! that a long description does not drown a short name: the name split into words, the server,
//! the description and the schema's property names. Token weights are the model's (SIF, from
//! vocabulary rank), times an IDF over the catalog when [`DenseConfig::catalog_idf`] is set, so
//! that words every tool shares (`get`, `the`, `data`) say little; then the catalog's mean tool
//! vector is subtracted from tool and query vectors ([`DenseConfig::center`]). Vectors are
//! stored as int8 with a scale per tool: 10,000 tools of 256 dimensions are 2.5 MB. A built
//! index can be saved and read back ([`cache`]).

// The dense index's cache file: kept only for `Strategy::Semantic`, which needs the feature.
#[cfg(feature = "semantic")]
mod cache;

use rustc_hash::FxHashMap;

use super::clusters::{ASSIGN_DIMS, Clusters, spread};
use super::kernel::Kernel;
use super::wordpiece::WordKind;
use super::{Coverage, StaticModel, best_first, normalize};
use crate::cores::{in_turn, on_cores, on_parts, share_len};
use toolgate_catalog::{Brand, Catalog, Tool, ToolId};

/// How tools are embedded.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseConfig {
    /// Weight of the tool name's embedding (split on `_ - .` and camelCase).
    pub name_weight: f32,
    /// Weight of the server id's embedding.
    pub server_weight: f32,
    /// Weight of the description's embedding.
    pub description_weight: f32,
    /// Weight of the embedding of the input schema's property names.
    pub schema_weight: f32,
    /// Multiply token weights by `ln(1 + N / (1 + df))` over the catalog's tools.
    pub catalog_idf: bool,
    /// Use the model's own token weights (SIF from vocabulary rank); when false, every known
    /// token weighs 1 (before the catalog IDF).
    pub model_weights: bool,
    /// Keep only the first `dims` dimensions (the model's are PCA components, most variance
    /// first): fewer dimensions scan faster. `None` or more than the model has keeps them all.
    pub dims: Option<usize>,
    /// Subtract the catalog's mean tool vector from tool and query vectors (the direction every
    /// tool shares says nothing about which tool; SIF's common-component removal). Only for
    /// catalogs of at least [`CENTER_MIN_TOOLS`] tools, whose mean means something.
    pub center: bool,
    /// The mean [`center`](DenseConfig::center) subtracts is taken over about this many tools
    /// spread over the catalog, when it has at least twice as many ([`MEAN_SAMPLE`]);
    /// `usize::MAX`: over every tool.
    pub mean_sample: usize,
}

impl Default for DenseConfig {
    fn default() -> DenseConfig {
        DenseConfig {
            name_weight: 1.0,
            server_weight: 0.3,
            description_weight: 1.0,
            schema_weight: 0.3,
            catalog_idf: true,
            model_weights: true,
            dims: None,
            center: true,
            mean_sample: MEAN_SAMPLE,
        }
    }
}

/// One vector per tool of a catalog, for cosine search. Immutable, `Send + Sync`.
#[derive(Debug, Clone)]
pub struct DenseIndex {
    model: StaticModel,
    /// Dimensions kept.
    dim: usize,
    /// Per token id: the weight of the token in a pooled embedding.
    token_weights: Vec<f32>,
    /// `len × dim` quantised tool vectors, row-major.
    rows: Vec<i8>,
    /// Per tool: the factor that turns a row's int8 dot product back into a cosine.
    scales: Vec<f32>,
    /// For a catalog of more than [`EXACT_MAX_TOOLS`] tools, the clusters the rows are stored
    /// in, so that a search reads the closest ones only.
    clusters: Option<Clusters>,
    /// With clusters, the catalog position of the tool at each row (empty: row `i` is tool `i`).
    tools: Vec<u32>,
    /// With clusters, the row of each catalog position (empty: tool `i` is row `i`).
    places: Vec<u32>,
    /// The build of the scan loops this CPU runs (chosen when the index is built).
    kernel: Kernel,
    /// The catalog's mean tool vector, subtracted from every vector when centring.
    mean: Vec<f32>,
    /// The brand of the catalog the rows are of, for the ids of the hits.
    brand: Brand,
}

impl DenseIndex {
    /// Embeds every tool of `catalog` with the default [`DenseConfig`].
    pub fn build(catalog: &Catalog, model: &StaticModel) -> DenseIndex {
        DenseIndex::build_with(catalog, model, &DenseConfig::default())
    }

    /// Embeds every tool of `catalog` as `config` says.
    pub fn build_with(catalog: &Catalog, model: &StaticModel, config: &DenseConfig) -> DenseIndex {
        // Each field of each tool is tokenized once, for the IDF and for the embedding.
        let tokens = Tokens::of(catalog.tools(), model);
        let n = tokens.len();
        let mut token_weights: Vec<f32> = (0..model.vocab_len() as u32)
            .map(|t| match (config.model_weights, model.weight(t)) {
                (false, w) if w > 0.0 => 1.0,
                (_, w) => w,
            })
            .collect();
        if config.catalog_idf {
            // Each core counts its share of the tools, and the counts are added up.
            let share = share_len(n);
            let shares: Vec<std::ops::Range<usize>> =
                (0..n).step_by(share).map(|i| i..(i + share).min(n)).collect();
            let counts = on_parts(shares, |tools| {
                let mut df = vec![0u32; model.vocab_len()];
                let mut seen: Vec<u32> = Vec::new();
                for i in tools {
                    seen.clear();
                    for ids in tokens.fields(i) {
                        seen.extend(ids.iter());
                    }
                    seen.sort_unstable();
                    seen.dedup();
                    for &t in &seen {
                        df[t as usize] += 1;
                    }
                }
                df
            });
            let mut df = vec![0u32; model.vocab_len()];
            for part in counts {
                df.iter_mut().zip(part).for_each(|(d, c)| *d += c);
            }
            for (w, &d) in token_weights.iter_mut().zip(&df) {
                *w *= (1.0 + n as f32 / (1.0 + d as f32)).ln();
            }
        }
        let dim = config.dims.map_or(model.dim(), |d| d.clamp(1, model.dim()));
        let mut index = DenseIndex {
            model: model.clone(),
            dim,
            token_weights,
            rows: Vec::new(),
            scales: Vec::new(),
            clusters: None,
            tools: Vec::new(),
            places: Vec::new(),
            kernel: Kernel::detect(),
            mean: Vec::new(),
            brand: catalog.brand(),
        };
        let field_weights =
            [config.name_weight, config.server_weight, config.description_weight, config.schema_weight];
        // A tool's vector: its fields' embeddings, weighted, then normalised.
        let embed = |fields: [Field<'_>; 4]| {
            let mut v = vec![0.0f32; dim];
            for (ids, &w) in fields.into_iter().zip(&field_weights) {
                if w > 0.0 {
                    let e = index.embed_tokens(ids.iter());
                    v.iter_mut().zip(&e).for_each(|(a, b)| *a += w * b);
                }
            }
            normalize(&mut v);
            v
        };
        // The catalog's mean vector, from a first pass that keeps no vector: the floats of
        // 100,000 tools would be 100 MB, four times their rows. A catalog of at least twice
        // `mean_sample` tools is sampled (`spread`). Each share of the tools is summed on its own,
        // the shares then in order.
        let mut mean = Vec::new();
        if config.center && n >= CENTER_MIN_TOOLS {
            let sample: Vec<usize> = spread(n, config.mean_sample).collect();
            let shares: Vec<&[usize]> = sample.chunks((sample.len() / 4096).max(1)).collect();
            let sums = on_cores(&shares, |share| {
                let mut sum = vec![0.0f32; dim];
                for &i in *share {
                    sum.iter_mut().zip(embed(tokens.fields(i))).for_each(|(s, x)| *s += x);
                }
                sum
            });
            let count = sample.len() as f32;
            mean = (0..dim).map(|j| sums.iter().map(|s| s[j]).sum::<f32>() / count).collect();
        }
        // Then each tool's row, written where the index keeps it, a part of the tools at a time,
        // each part's ids let go of once its rows are written: the rows fill as the ids go, not
        // on top of them all (at 100,000 tools, 26 MB of rows and 15 MB of ids).
        let mut rows = vec![0i8; n * dim];
        let kernel = index.kernel;
        let width = tokens.part_len * dim;
        let parts: Vec<(Part, &mut [i8])> =
            tokens.parts.into_iter().zip(rows.chunks_mut(width.max(1))).collect();
        let mut scales: Vec<f32> = in_turn(parts, |(part, out)| {
            let row_of = |(j, row): (usize, &mut [i8])| {
                let mut v = embed(part.fields(j));
                if !mean.is_empty() {
                    v.iter_mut().zip(&mean).for_each(|(x, m)| *x -= m);
                    normalize(&mut v);
                }
                kernel.quantize_into(&v, row)
            };
            out.chunks_exact_mut(dim).enumerate().map(row_of).collect::<Vec<f32>>()
        })
        .concat();
        index.mean = mean;
        if n > EXACT_MAX_TOOLS {
            // Clustering compares the first dimensions of the rows as stored.
            let d = dim.min(ASSIGN_DIMS);
            let head =
                |i: usize| rows[i * dim..i * dim + d].iter().map(|&x| f32::from(x) * scales[i]).collect();
            let (clusters, order) = Clusters::group(n, dim, index.kernel, head);
            permute(&mut rows, &mut scales, dim, &order);
            index.places = vec![0; order.len()];
            for (p, &i) in order.iter().enumerate() {
                index.places[i as usize] = p as u32;
            }
            index.clusters = Some(clusters);
            index.tools = order;
        }
        index.rows = rows;
        index.scales = scales;
        if let Some(clusters) = &mut index.clusters {
            clusters.fit(&index.rows, &index.scales);
        }
        index
    }

    /// The catalog position of the tool stored at row `p`.
    fn tool_at(&self, p: u32) -> u32 {
        if self.tools.is_empty() { p } else { self.tools[p as usize] }
    }

    /// The row of the tool at catalog position `i`.
    fn row_of(&self, i: usize) -> u32 {
        if self.places.is_empty() { i as u32 } else { self.places[i] }
    }

    /// Adds the vector of `token`, times its weight in this index, to `acc`.
    fn add_token(&self, token: u32, acc: &mut [f32]) {
        let w = self.token_weights[token as usize];
        if let Some((row, scale)) = self.model.token_row(token).filter(|_| w > 0.0) {
            self.kernel.add_scaled(acc, row, w * scale);
        }
    }

    /// The model the index embeds with.
    pub fn model(&self) -> &StaticModel {
        &self.model
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// True when the catalog had no tools.
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// `text` embedded with this index's token weights and dimensions, L2-normalised (zeros if
    /// nothing known).
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.embed_tokens(self.model.tokenize(text))
    }

    /// The vector a query is compared with, int8 with its scale ([`finish`](DenseIndex::finish));
    /// `None` when the model knows no word of it.
    fn query_vector(&self, query: &str) -> Option<(Vec<i8>, f32)> {
        let mut acc = vec![0.0; self.model.dim()];
        self.pool(query, &mut acc, &mut Coverage::default());
        self.finish(acc)
    }

    /// Adds the token vectors of the words of a request's `text` to `acc`, but for the words
    /// that [say nothing](says_nothing) of a tool, and counts every word in `coverage`.
    fn pool(&self, text: &str, acc: &mut [f32], coverage: &mut Coverage) {
        let model = &self.model;
        model.inner.vocab.each_word(text, &mut |kind, word, ids| {
            coverage.count(model, kind, ids);
            if !says_nothing(kind, word) {
                for &t in ids {
                    self.add_token(t, acc);
                }
            }
        });
    }

    fn embed_tokens(&self, tokens: impl IntoIterator<Item = u32>) -> Vec<f32> {
        let mut acc = vec![0.0; self.model.dim()];
        for t in tokens {
            self.add_token(t, &mut acc);
        }
        acc.truncate(self.dim);
        normalize(&mut acc);
        acc
    }

    /// The `k` tools most similar to `query` by cosine, best first (ties by catalog order);
    /// empty when the model knows no word of the query.
    ///
    /// Up to [`EXACT_MAX_TOOLS`] tools every vector is compared. Beyond, the rows are stored in
    /// clusters and only the closest clusters are read (`Clusters::nearest`, at most
    /// [`MOST_READ`] rows), which is exact when the clusters left out are bounded below what
    /// was found, and the best of what was read otherwise.
    pub fn search(&self, query: &str, k: usize) -> Vec<(ToolId, f32)> {
        self.nearest(query, k).0
    }

    /// [`search`](DenseIndex::search) comparing every tool, however many there are: what a
    /// clustered search is measured against.
    pub fn scan(&self, query: &str, k: usize) -> Vec<(ToolId, f32)> {
        let Some((qi, q_scale)) = self.query_vector(query) else { return Vec::new() };
        self.scan_to(&qi, q_scale, k)
    }

    /// [`scan`](DenseIndex::scan) for a query vector (int8, with its scale).
    fn scan_to(&self, qi: &[i8], q_scale: f32, k: usize) -> Vec<(ToolId, f32)> {
        let mut dots = Vec::with_capacity(self.len());
        self.kernel.dots_all(&self.rows, qi, &mut dots);
        let mut scored: Vec<(ToolId, f32)> = dots
            .iter()
            .enumerate()
            .map(|(p, &d)| (self.brand.id(self.tool_at(p as u32)), d as f32 * self.scales[p] * q_scale))
            .collect();
        best_first(&mut scored, k);
        scored
    }

    /// [`search`](DenseIndex::search), and whether its answer is provably what a comparison
    /// with every row gives.
    fn nearest(&self, query: &str, k: usize) -> (Vec<(ToolId, f32)>, bool) {
        let Some((qi, q_scale)) = self.query_vector(query) else { return (Vec::new(), true) };
        if k == 0 {
            return (Vec::new(), true);
        }
        self.nearest_to(&qi, q_scale, k)
    }

    /// [`nearest`](DenseIndex::nearest) for a query vector (int8, with its scale).
    fn nearest_to(&self, qi: &[i8], q_scale: f32, k: usize) -> (Vec<(ToolId, f32)>, bool) {
        let Some(clusters) = &self.clusters else { return (self.scan_to(qi, q_scale, k), true) };
        let reads = (LEAST_READ.max(k), MOST_READ.max(k));
        let found = clusters.nearest(self.kernel, &self.rows, &self.scales, qi, q_scale, k, reads);
        let mut scored: Vec<(ToolId, f32)> =
            found.hits.into_iter().map(|(p, s)| (self.brand.id(self.tool_at(p)), s)).collect();
        best_first(&mut scored, k);
        (scored, found.exact)
    }

    /// The cosines of `tools` to `query`, each lifted by the request's clauses
    /// (split at its clause ends), best first (ties by catalog order): the dense side of
    /// [`hybrid`](DenseIndex::hybrid). Empty when the model knows no word of the query.
    pub fn rerank(&self, query: &str, tools: &[ToolId]) -> Vec<(ToolId, f32)> {
        self.rerank_read(&self.read(query), tools)
    }

    /// [`rerank`](DenseIndex::rerank) for a request already [read](DenseIndex::read). Only the
    /// tools given are compared: a few dozen dot products for the whole and each clause.
    fn rerank_read(&self, read: &Read, tools: &[ToolId]) -> Vec<(ToolId, f32)> {
        let Some((qi, q_scale)) = &read.whole else { return Vec::new() };
        let rows: Vec<u32> = tools.iter().map(|t| self.row_of(t.index())).collect();
        let mut hits: Vec<(ToolId, f32)> =
            tools.iter().copied().zip(self.scores(qi, *q_scale, &rows)).collect();
        if read.clauses.len() > 1 {
            // Each tool's best cosine to one clause.
            let mut best = vec![f32::NEG_INFINITY; hits.len()];
            for (qi, q_scale) in &read.clauses {
                for (b, s) in best.iter_mut().zip(self.scores(qi, *q_scale, &rows)) {
                    *b = b.max(s);
                }
            }
            for (h, b) in hits.iter_mut().zip(best) {
                h.1 += CLAUSE_WEIGHT * (b - h.1).max(0.0);
            }
        }
        let k = hits.len();
        best_first(&mut hits, k);
        hits
    }

    /// The scores of `rows` for the query vector `qi` (int8, with its scale `q_scale`).
    fn scores(&self, qi: &[i8], q_scale: f32, rows: &[u32]) -> Vec<f32> {
        let mut dots = Vec::with_capacity(rows.len());
        self.kernel.dots_some(&self.rows, qi, rows, &mut dots);
        rows.iter().zip(dots).map(|(&p, d)| d as f32 * self.scales[p as usize] * q_scale).collect()
    }

    /// `query` as the dense side reads it, tokenized once: the share of its words the model
    /// knows, its vector (of the words that [say something](says_nothing) of a tool), and its
    /// clauses' vectors when it has two clauses or more (pieces between `.`, `?`, `!`, `;`,
    /// `,`, line ends and their full-width forms, of two words or more). A tool's cosine to the whole moves by [`CLAUSE_WEIGHT`] towards its best cosine to
    /// one clause, when that is higher: a pooled vector of a long task blurs its parts ("… the
    /// Fear & Greed Index and recent news …"), and a tool that fits one part well should not
    /// lose to one that fits the blur.
    fn read(&self, query: &str) -> Read {
        let dim = self.model.dim();
        let mut coverage = Coverage::default();
        let mut add = |text: &str, acc: &mut [f32]| self.pool(text, acc, &mut coverage);
        let mut whole = vec![0.0f32; dim];
        let (mut clauses, mut pieces) = (Vec::new(), 0);
        let (mut start, mut acc) = (0, vec![0.0f32; dim]);
        for (at, sep) in query.match_indices(CLAUSE_ENDS).chain([(query.len(), "")]) {
            let piece = &query[start..at];
            start = at + sep.len();
            acc.fill(0.0);
            add(piece, &mut acc);
            whole.iter_mut().zip(&acc).for_each(|(w, a)| *w += a);
            // A clause's end is punctuation, which counts towards the coverage only.
            add(sep, &mut whole);
            if piece.split_whitespace().nth(1).is_some() {
                pieces += 1;
                clauses.extend(self.finish(acc.clone()));
            }
        }
        if pieces < 2 {
            clauses.clear();
        }
        Read { coverage: coverage.share(), whole: self.finish(whole), clauses }
    }

    /// A pooled sum of token vectors as a query vector: cut to the index's dimensions,
    /// normalised, centred like the tools, quantised; `None` when it is zero.
    fn finish(&self, mut v: Vec<f32>) -> Option<(Vec<i8>, f32)> {
        v.truncate(self.dim);
        normalize(&mut v);
        if v.iter().all(|&x| x == 0.0) {
            return None;
        }
        if !self.mean.is_empty() {
            v.iter_mut().zip(&self.mean).for_each(|(x, m)| *x -= m);
            normalize(&mut v);
        }
        let mut qi = Vec::with_capacity(v.len());
        let q_scale = quantize(self.kernel, &v, &mut qi);
        Some((qi, q_scale))
    }

    /// The cosine between `query` and tool `tool` (0 when the model knows no word of the
    /// query), for `--explain`.
    pub fn similarity(&self, query: &str, tool: ToolId) -> f32 {
        let Some((qi, q_scale)) = self.query_vector(query) else { return 0.0 };
        self.scores(&qi, q_scale, &[self.row_of(tool.index())])[0]
    }

    /// Fuses `lexical` (a lexical ranker's hits, best first, with scores) with the cosines to
    /// `query` of its first [`RERANK_DEPTH`], the candidates ([`rerank`](DenseIndex::rerank)),
    /// the dense side weighted by the model's [coverage](StaticModel::coverage) of the query: a
    /// query the model cannot read (Chinese) keeps its lexical ranking and scores. When the
    /// lexical side has fewer than [`DISCOVER`] hits, but some, those of the index's
    /// [`DISCOVER`] nearest tools nearer to the request than every candidate join them; a
    /// request no word of which any tool matches finds nothing. The scores are [`fuse`]'s; the
    /// hits past the candidates keep their lexical part only, so they follow the candidates in
    /// their order, and the candidates rank alike whatever the number of hits given.
    ///
    /// The dense side reads only the candidates, not the catalog: a dozen rows instead of
    /// thousands. On the development sets that ranks as well as fusing the index's own best
    /// hundred did (docs/ranking.md), and it keeps a search as fast as the lexical one.
    pub fn hybrid(&self, query: &str, lexical: &[(ToolId, f32)], fusion: Fusion) -> Vec<(ToolId, f32)> {
        self.hybrid_fit(query, lexical, fusion).hits
    }

    /// [`hybrid`](DenseIndex::hybrid), with the cosines it fused ([`Fused::cosines`]).
    pub fn hybrid_fit(&self, query: &str, lexical: &[(ToolId, f32)], fusion: Fusion) -> Fused {
        let read = self.read(query);
        let fusion = fusion.scaled(if read.coverage < MIN_COVERAGE { 0.0 } else { read.coverage });
        let Some((qi, q_scale)) = read.whole.as_ref().filter(|_| fusion.dense_weight() > 0.0) else {
            return Fused { hits: lexical.to_vec(), cosines: Vec::new() };
        };
        let mut tools: Vec<ToolId> = lexical.iter().take(RERANK_DEPTH).map(|h| h.0).collect();
        let found = lexical.iter().filter(|h| h.1.is_finite()).count();
        if (1..DISCOVER).contains(&found) {
            // A tool the words missed joins when it is nearer in meaning than all they found.
            let rows: Vec<u32> = tools.iter().map(|t| self.row_of(t.index())).collect();
            let bar = self.scores(qi, *q_scale, &rows).into_iter().fold(f32::NEG_INFINITY, f32::max);
            for (tool, cos) in self.nearest_to(qi, *q_scale, DISCOVER).0 {
                if cos >= bar && !tools.contains(&tool) {
                    tools.push(tool);
                }
            }
        }
        let cosines = self.rerank_read(&read, &tools);
        Fused { hits: fuse(lexical, &cosines, fusion), cosines }
    }
}

/// What [`DenseIndex::hybrid_fit`] gives.
#[derive(Debug, Clone)]
pub struct Fused {
    /// The fused hits, as [`DenseIndex::hybrid`] gives them.
    pub hits: Vec<(ToolId, f32)>,
    /// How near in meaning the request is to each tool the dense side read (the candidates and
    /// the tools it discovered): their cosines as the fusion read them (lifted by the request's
    /// clauses), best first, on the catalog's centred scale, where 0 is no nearer than the
    /// catalog's average tool. Empty when the dense side had no say (the model reads too little
    /// of the request): then nothing is known of the fit, and [`LoadCut::fit`] does not apply.
    ///
    /// [`LoadCut::fit`]: crate::LoadCut::fit
    pub cosines: Vec<(ToolId, f32)>,
}

/// How many of the lexical hits [`DenseIndex::hybrid`] reads the cosines of: on the
/// development sets 13 to 100 rank alike (mean nDCG@10 within 0.0015), 10 loses 0.0025 and
/// falls below `lexical` on two parts, and each candidate more costs a long request's lexical
/// side time (docs/semantic.md).
pub const RERANK_DEPTH: usize = 13;

/// Below this many lexical hits, but at least one, [`DenseIndex::hybrid`] adds to the
/// candidates those of the index's this many nearest tools that are nearer to the request than
/// every lexical candidate. Without that bar a small catalog's searches listed every tool, the
/// nearest first, behind the one the words found; and a request no word of which any tool
/// matches (`zzqqxx`, or "create an issue" where only a code search is visible) found the
/// nearest tools and loaded one, where "nothing fits" is the answer. On the development sets
/// both cost metatool 0.001 of nDCG@10 and nothing elsewhere (docs/semantic.md).
pub const DISCOVER: usize = 10;

/// A request the model can read less of than this share of its words keeps its lexical ranking
/// in [`DenseIndex::hybrid`]: the vector of a few English words in a Chinese request stands for
/// a fragment of it, and on the Chinese development sets fusing it moved parts both ways
/// (docs/ranking.md). Above it, the dense side's weight is scaled by the share.
pub const MIN_COVERAGE: f32 = 0.5;

/// Whether a word of a request says nothing of the tool it wants, so that the dense side does
/// not read it: punctuation, and the words the lexical side drops from requests (stop words,
/// `thanks`, `help`, `need` …). A catalog says such words rarely, so its IDF would weigh them
/// most of all, and a request's framing ("thanks in advance, tell me if anything is unclear",
/// quotes around it) would move its vector.
fn says_nothing(kind: WordKind, word: &str) -> bool {
    kind == WordKind::Punctuation || crate::text::is_stop_word(word) || crate::expand::is_request_word(word)
}

/// A request as [`DenseIndex::read`] reads it.
#[derive(Debug, Clone)]
struct Read {
    /// The share of its words the model knows ([`StaticModel::coverage`]).
    coverage: f32,
    /// Its vector, int8 with its scale; `None` when the model knows no word of it.
    whole: Option<(Vec<i8>, f32)>,
    /// Its clauses' vectors, when it has two clauses or more.
    clauses: Vec<(Vec<i8>, f32)>,
}

/// What ends a clause of a request ([`DenseIndex::read`]).
const CLAUSE_ENDS: [char; 11] = ['.', '?', '!', ';', ',', '\n', '。', '？', '！', '；', '，'];

/// How far a tool's cosine to a whole request moves towards its best cosine to one clause
/// ([`DenseIndex::rerank`]). On the development sets 0.3 to 0.7 rank alike.
pub const CLAUSE_WEIGHT: f32 = 0.5;

/// Catalogs up to this many tools are searched by comparing every vector; larger ones are
/// clustered.
pub const EXACT_MAX_TOOLS: usize = 4096;

/// The fewest tools whose mean vector [`DenseConfig::center`] subtracts.
pub const CENTER_MIN_TOOLS: usize = 32;

/// A catalog of at least twice this many tools has its mean vector taken over about this many
/// of them, spread over the catalog, instead of over every tool: embedding 100,000 tools once
/// more for their mean took 0.13 s of the build. Each dimension of the mean of 16,384 unit
/// vectors stands within about `1 / √16,384 = 0.008` of the catalog's (its standard error); on
/// 40,000 tools of real words the two means stand 0.5% of their length apart and rank alike
/// (the test `a_large_catalogs_mean_from_a_sample_ranks_as_the_mean_of_every_tool`).
pub const MEAN_SAMPLE: usize = 16_384;

/// A search of a clustered index reads the closest clusters until it has read this many rows...
pub const LEAST_READ: usize = 512;

/// ...then any cluster that may still hold one of the best, until this many.
pub const MOST_READ: usize = 2048;

/// How a lexical and a dense ranking are merged ([`Fusion::DEFAULT`] unless measured otherwise).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Fusion {
    /// Reciprocal-rank fusion: `1 / (k + rank_lexical) + dense_weight / (k + rank_dense)`
    /// (ranks from 1; a list a tool is missing from adds nothing).
    Rrf {
        /// The rank offset, 60 in the original paper.
        k: f32,
        /// The dense list's weight; the lexical list's is 1.
        dense_weight: f32,
    },
    /// A mix of scores: `lexical / max lexical + dense_weight · (cos − min) / (max − min)`
    /// over the tools each list returned.
    Mix {
        /// The dense side's weight; the lexical side's is 1.
        dense_weight: f32,
    },
}

impl Fusion {
    /// The fusion chosen on the development sets (`examples/semantic.rs --sweep`): a score mix
    /// with dense weight 0.3, in a flat optimum (0.2 to 0.5 score alike); every reciprocal-rank
    /// fusion tried did worse, because the static model alone is much weaker than `bm25f` and
    /// rank fusion lets its errors in at full strength.
    pub const DEFAULT: Fusion = Fusion::Mix { dense_weight: 0.3 };

    /// The dense side's weight.
    pub fn dense_weight(self) -> f32 {
        match self {
            Fusion::Rrf { dense_weight, .. } | Fusion::Mix { dense_weight } => dense_weight,
        }
    }

    /// The same fusion with the dense weight multiplied by `factor`.
    pub fn scaled(self, factor: f32) -> Fusion {
        match self {
            Fusion::Rrf { k, dense_weight } => Fusion::Rrf { k, dense_weight: dense_weight * factor },
            Fusion::Mix { dense_weight } => Fusion::Mix { dense_weight: dense_weight * factor },
        }
    }
}

/// Merges a lexical ranking (with scores, best first) and a dense one (cosines, best first)
/// into one list of tools with their fused scores, best first. Lexical hits with an infinite
/// score (exact names, `select:`) stay first in their order, so the exact-name guarantee
/// survives fusion; ties go to the better lexical rank, then the better dense rank. A mix's
/// score is the lexical score over the best one plus the dense weight times the cosine's place
/// between the worst and the best of `dense`: a scale the loading cut reads as it reads a
/// lexical one.
pub fn fuse(lexical: &[(ToolId, f32)], dense: &[(ToolId, f32)], fusion: Fusion) -> Vec<(ToolId, f32)> {
    let sure: Vec<ToolId> = lexical.iter().filter(|h| h.1 == f32::INFINITY).map(|h| h.0).collect();
    let lex_max = lexical.iter().map(|h| h.1).filter(|s| s.is_finite()).fold(0.0f32, f32::max);
    let (d_min, d_max) =
        dense.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), h| (lo.min(h.1), hi.max(h.1)));
    // (tool, score, lexical rank, dense rank); ranks are usize::MAX when absent.
    let mut merged: Vec<(ToolId, f32, usize, usize)> = Vec::with_capacity(lexical.len() + dense.len());
    for (r, &(id, s)) in lexical.iter().filter(|h| h.1.is_finite()).enumerate() {
        let part = match fusion {
            Fusion::Rrf { k, .. } => 1.0 / (k + r as f32 + 1.0),
            Fusion::Mix { .. } => {
                if lex_max > 0.0 {
                    s / lex_max
                } else {
                    0.0
                }
            }
        };
        merged.push((id, part, r, usize::MAX));
    }
    let at: FxHashMap<ToolId, usize> = merged.iter().enumerate().map(|(i, m)| (m.0, i)).collect();
    for (r, &(id, s)) in dense.iter().enumerate() {
        if sure.contains(&id) {
            continue;
        }
        let part = match fusion {
            Fusion::Rrf { k, dense_weight } => dense_weight / (k + r as f32 + 1.0),
            Fusion::Mix { dense_weight } => {
                let span = d_max - d_min;
                dense_weight * if span > 0.0 { (s - d_min) / span } else { 1.0 }
            }
        };
        match at.get(&id) {
            Some(&i) => {
                merged[i].1 += part;
                merged[i].3 = r;
            }
            None => merged.push((id, part, usize::MAX, r)),
        }
    }
    merged.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then(a.3.cmp(&b.3)));
    sure.into_iter().map(|id| (id, f32::INFINITY)).chain(merged.into_iter().map(|m| (m.0, m.1))).collect()
}

/// The token ids of every field of every tool, in one buffer per part of the catalog, two
/// bytes an id when the vocabulary allows (a vector per field would cost 24 bytes a field and
/// the slack each grew with: at 100,000 tools the ids were 37 MB that way, 14 MB so).
struct Tokens {
    /// The parts, in catalog order.
    parts: Vec<Part>,
    /// How many tools a part holds (the last may hold fewer).
    part_len: usize,
    /// How many tools in all.
    len: usize,
}

/// The most tools of a part of [`Tokens`]: the cores take parts in turn, and a part's ids are
/// let go of once its rows are written.
const PART_TOOLS: usize = 2048;

/// The ids of some tools: field after field, and where each field ends (four a tool).
struct Part {
    ids: Ids,
    ends: Vec<u32>,
}

impl Part {
    /// The ids of the four fields of the part's `j`-th tool.
    fn fields(&self, j: usize) -> [Field<'_>; 4] {
        let j = j * 4;
        let start = |k: usize| if k == 0 { 0 } else { self.ends[k - 1] as usize };
        std::array::from_fn(|f| {
            let range = start(j + f)..self.ends[j + f] as usize;
            match &self.ids {
                Ids::Narrow(ids) => Field::Narrow(&ids[range]),
                Ids::Wide(ids) => Field::Wide(&ids[range]),
            }
        })
    }
}

/// Token ids, in two bytes each when every id of the vocabulary fits.
enum Ids {
    /// A vocabulary of at most 65,536 tokens (the compiled-in model's has 30,522).
    Narrow(Vec<u16>),
    /// A larger vocabulary.
    Wide(Vec<u32>),
}

/// The ids of one field of one tool.
#[derive(Clone, Copy)]
enum Field<'a> {
    /// See [`Ids::Narrow`].
    Narrow(&'a [u16]),
    /// See [`Ids::Wide`].
    Wide(&'a [u32]),
}

impl Field<'_> {
    /// The ids, in order.
    fn iter(self) -> impl Iterator<Item = u32> {
        let (narrow, wide): (&[u16], &[u32]) = match self {
            Field::Narrow(ids) => (ids, &[]),
            Field::Wide(ids) => (&[], ids),
        };
        narrow.iter().map(|&t| u32::from(t)).chain(wide.iter().copied())
    }
}

impl Tokens {
    /// Tokenizes the fields of `tools`, the cores taking parts in turn.
    fn of(tools: &[Tool], model: &StaticModel) -> Tokens {
        let part_len = share_len(tools.len()).min(PART_TOOLS);
        let narrow = model.vocab_len() <= usize::from(u16::MAX) + 1;
        let parts = in_turn(tools.chunks(part_len).collect(), |part| {
            let (mut wide, mut ends) = (Vec::new(), Vec::with_capacity(part.len() * 4));
            let mut narrowed: Vec<u16> = Vec::new();
            for tool in part {
                for text in fields_of(tool) {
                    model.tokenize_onto(&text, &mut wide);
                    if narrow {
                        narrowed.extend(wide.drain(..).map(|t| t as u16));
                        ends.push(narrowed.len() as u32);
                    } else {
                        ends.push(wide.len() as u32);
                    }
                }
            }
            let ids = if narrow {
                narrowed.shrink_to_fit();
                Ids::Narrow(narrowed)
            } else {
                wide.shrink_to_fit();
                Ids::Wide(wide)
            };
            Part { ids, ends }
        });
        Tokens { parts, part_len, len: tools.len() }
    }

    /// How many tools.
    fn len(&self) -> usize {
        self.len
    }

    /// The ids of tool `i`'s four fields.
    fn fields(&self, i: usize) -> [Field<'_>; 4] {
        self.parts[i / self.part_len].fields(i % self.part_len)
    }
}

/// Reorders `rows` (`dim` wide) and `scales` in place so that position `p` holds what position
/// `order[p]` held (`order` a permutation): one row's copy aside, not a second set of rows.
fn permute(rows: &mut [i8], scales: &mut [f32], dim: usize, order: &[u32]) {
    let mut done = vec![false; order.len()];
    let mut held = vec![0i8; dim];
    for first in 0..order.len() {
        if done[first] {
            continue;
        }
        held.copy_from_slice(&rows[first * dim..(first + 1) * dim]);
        let held_scale = scales[first];
        let mut p = first;
        loop {
            done[p] = true;
            let from = order[p] as usize;
            if from == first {
                rows[p * dim..(p + 1) * dim].copy_from_slice(&held);
                scales[p] = held_scale;
                break;
            }
            rows.copy_within(from * dim..(from + 1) * dim, p * dim);
            scales[p] = scales[from];
            p = from;
        }
    }
}

/// The texts of a tool's fields: name words, server words, description, property names.
fn fields_of(tool: &Tool) -> [String; 4] {
    // The schema's outline, split into words: read from the words the catalog keeps, since
    // parsing every schema was a fifth of this index's build.
    let mut props = String::new();
    for name in tool.schema().property_names() {
        props.push_str(&split_identifier(name));
        props.push_str(". ");
    }
    [split_identifier(tool.name()), split_identifier(tool.server()), tool.description().to_owned(), props]
}

/// `getWeatherForecast`, `get_weather-forecast` → `get Weather Forecast`, `get weather forecast`
/// (acronyms kept whole, `/` a separator too).
pub(crate) fn split_identifier(s: &str) -> String {
    toolgate_catalog::naming::split_words(s, &['_', '-', '.', '/'], false)
}

/// Appends `v` quantised to int8 (symmetric, by its largest magnitude) to `out` and returns the
/// scale that turns the int8 values back into `v` ([`Kernel::quantize_into`]).
pub(super) fn quantize(kernel: Kernel, v: &[f32], out: &mut Vec<i8>) -> f32 {
    let start = out.len();
    out.resize(start + v.len(), 0);
    kernel.quantize_into(v, &mut out[start..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::kernel::dot;
    use crate::semantic::tests::toy;
    use toolgate_catalog::ToolSpec;

    /// Numbers below 2³¹ from a linear congruential generator started at `seed`: the same
    /// every run.
    fn pseudo_random(seed: u64) -> impl FnMut() -> usize {
        let mut x = seed;
        move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize
        }
    }

    fn catalog() -> Catalog {
        Catalog::builder()
            .tool(ToolSpec::mcp("weather", "get_forecast", "The weather forecast"))
            .tool(ToolSpec::mcp("git", "git_log", "Show the commit history"))
            .tool(ToolSpec::mcp("fs", "read_file", "Read a file"))
            .build()
            .unwrap()
    }

    #[test]
    fn a_query_of_similar_meaning_ranks_the_obvious_tool_first() {
        let cat = catalog();
        let index = DenseIndex::build(&cat, &toy());
        // No query word appears in the forecast tool's text: only the vectors relate them.
        let hits = index.search("rain tomorrow", 3);
        assert_eq!(cat.tool(hits[0].0).name(), "get_forecast");
        assert!(hits[0].1 > hits[1].1 && hits[1].1 >= hits[2].1, "{hits:?}");
        assert!(hits[0].1 <= 1.0 + 1e-2);
        assert_eq!(cat.tool(index.search("commits", 1)[0].0).name(), "git_log");
        assert!(index.search("天气 zzz", 3).is_empty());
        assert!(index.search("rain tomorrow", 0).is_empty() && index.scan("rain tomorrow", 0).is_empty());
        assert_eq!(index.scan("rain tomorrow", 3), index.search("rain tomorrow", 3));
    }

    #[test]
    fn words_that_say_nothing_of_a_tool_do_not_move_a_request() {
        let cat = catalog();
        let index = DenseIndex::build(&cat, &toy());
        let plain = index.scan("rain tomorrow", 5);
        assert!(!plain.is_empty());
        for framed in
            ["\"rain tomorrow\"", "Thanks! Please, I need the rain for tomorrow?", "RAIN... tomorrow"]
        {
            assert_eq!(index.scan(framed, 5), plain, "{framed}");
            let tools: Vec<ToolId> = plain.iter().map(|h| h.0).collect();
            assert_eq!(index.rerank(framed, &tools), index.rerank("rain tomorrow", &tools), "{framed}");
        }
        // A word that says something does move it, and a request of framing alone reads nothing.
        assert_ne!(index.scan("rain tomorrow commits", 5), plain);
        assert!(index.scan("thanks, please help me!", 5).is_empty());
    }

    #[test]
    fn a_tool_that_fits_one_clause_well_moves_halfway_to_that_fit() {
        let cat = catalog();
        let index = DenseIndex::build(&cat, &toy());
        let query = "rain tomorrow, then the git commit log and history of the read file";
        let whole = index.search(query, 3);
        let tools: Vec<ToolId> = whole.iter().map(|h| h.0).collect();
        let lifted = index.rerank(query, &tools);
        let clause_best = |id: ToolId| {
            ["rain tomorrow", "then the git commit log and history of the read file"]
                .iter()
                .flat_map(|c| index.search(c, 3))
                .filter(|h| h.0 == id)
                .map(|h| h.1)
                .fold(f32::NEG_INFINITY, f32::max)
        };
        for (id, before) in &whole {
            let after = lifted.iter().find(|h| h.0 == *id).unwrap().1;
            let want = before + CLAUSE_WEIGHT * (clause_best(*id) - before).max(0.0);
            // The request is pooled clause by clause: its int8 vector may round apart by one.
            assert!((after - want).abs() < 1e-3, "{}: {after} against {want}", cat.tool(*id).name());
        }
        // The forecast fits the first clause far better than the blur of the whole.
        let forecast =
            |hits: &[(ToolId, f32)]| hits.iter().find(|h| cat.tool(h.0).name() == "get_forecast").unwrap().1;
        assert!(forecast(&lifted) > forecast(&whole) + 0.1, "{whole:?} {lifted:?}");
        assert!(lifted.windows(2).all(|w| w[0].1 >= w[1].1), "{lifted:?}");
        // One clause (a second piece of one word does not count): nothing moves.
        let one = index.search("rain tomorrow, please", 3);
        let tools: Vec<ToolId> = one.iter().map(|h| h.0).collect();
        let reranked = index.rerank("rain tomorrow, please", &tools);
        for ((a, x), (b, y)) in one.iter().zip(&reranked) {
            assert!(a == b && (x - y).abs() < 1e-3, "{one:?} {reranked:?}");
        }
    }

    #[test]
    fn the_int8_scan_agrees_with_float_cosines() {
        let cat = catalog();
        let index = DenseIndex::build(&cat, &toy());
        let q = index.embed("file history");
        for (id, cos) in index.search("file history", 3) {
            let i = id.index();
            let row: Vec<f32> =
                index.rows[i * 3..i * 3 + 3].iter().map(|&x| f32::from(x) * index.scales[i]).collect();
            let exact: f32 = row.iter().zip(&q).map(|(a, b)| a * b).sum();
            assert!((exact - cos).abs() < 0.02, "{exact} vs {cos}");
        }
        assert_eq!(dot(&[1; 35], &[-2; 35]), -70);
    }

    #[test]
    fn a_large_catalogs_mean_from_a_sample_ranks_as_the_mean_of_every_tool() {
        // 40,000 tools of eight words each, drawn from the words of LiveMCPBench's descriptions
        // in a pseudo-random order, fifty to a server.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/livemcpbench/catalog.jsonl");
        let specs = Catalog::builder().path(path.as_ref()).unwrap().into_specs().unwrap();
        let words: Vec<String> = specs
            .iter()
            .flat_map(|s| s.description.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>())
            .filter(|w| w.chars().all(char::is_alphabetic))
            .collect();
        let mut next = pseudo_random(11);
        let mut builder = Catalog::builder();
        for i in 0..40_000 {
            let text: Vec<&str> = (0..8).map(|_| words[next() % words.len()].as_str()).collect();
            builder = builder.tool(ToolSpec::mcp(&format!("s{}", i / 50), &format!("t{i}"), &text.join(" ")));
        }
        let cat = builder.build().unwrap();
        let model = StaticModel::embedded();
        let sampled = DenseIndex::build(&cat, model);
        let every = DenseIndex::build_with(
            &cat,
            model,
            &DenseConfig { mean_sample: usize::MAX, ..Default::default() },
        );
        // The two means are 0.0034 apart, 0.5% of their length (0.63); the same ten tools come
        // first for every request, two neighbours swapped in three, each cosine within 0.0021.
        let (a, b) = (&sampled.mean, &every.mean);
        let length = b.iter().map(|x| x * x).sum::<f32>().sqrt();
        let apart = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f32>().sqrt();
        assert!(length > 0.1 && apart < 0.02 * length, "{apart} apart, of {length}");
        let queries = [
            "search the web for recent news",
            "convert a pdf to text",
            "book a flight to paris",
            "weather forecast for tomorrow",
            "send an email to my team",
            "list the files in a folder",
        ];
        for q in queries {
            let (x, y) = (sampled.scan(q, 10), every.scan(q, 10));
            let same = x.iter().filter(|h| y.iter().any(|g| g.0 == h.0)).count();
            assert!(same >= 9 && x.len() == 10 && y.len() == 10, "{q}: {x:?} against {y:?}");
            for (id, cos) in x {
                assert!((every.similarity(q, id) - cos).abs() < 0.005, "{q}: {id:?}");
            }
        }
    }

    #[test]
    fn a_clustered_catalog_answers_as_a_full_scan_wherever_it_says_so() {
        // A 96-dimension model of 200 words with pseudo-random vectors, 5,000 tools of 3 words.
        let mut next = pseudo_random(7);
        let words: Vec<String> = (0..200).map(|i| format!("w{i}")).collect();
        let mut tokens = vec!["[UNK]"];
        tokens.extend(words.iter().map(String::as_str));
        let vectors: Vec<Vec<i8>> = (0..tokens.len())
            .map(|_| (0..96).map(|_| ((next() % 255) as i64 - 127) as i8).collect())
            .collect();
        let model =
            StaticModel::from_bytes("random", &crate::semantic::tests::model_bytes(&tokens, &vectors))
                .unwrap();
        let mut builder = Catalog::builder();
        for i in 0..5000 {
            let text: Vec<&str> = (0..3).map(|_| words[next() % 200].as_str()).collect();
            builder = builder.tool(ToolSpec::mcp("s", &format!("t{i}"), &text.join(" ")));
        }
        let cat = builder.build().unwrap();
        assert!(cat.len() > EXACT_MAX_TOOLS);
        let index = DenseIndex::build(&cat, &model);
        assert!(!index.mean.is_empty() && index.clusters.is_some());
        let (mut exact_claims, mut agree) = (0, 0);
        let queries = ["w1 w2", "w17", "w50 w51 w52", "w199 w3", "w8 w9 w10 w11"];
        for q in queries {
            let (fast, exact) = index.nearest(q, 10);
            let all = index.scan(q, 10);
            if exact {
                exact_claims += 1;
                assert_eq!(fast, all, "{q}");
            }
            agree += fast.iter().filter(|h| all.iter().any(|a| a.0 == h.0)).count();
            // The cosine the search reports is the tool's own.
            for &(id, cos) in &fast {
                assert!((index.similarity(q, id) - cos).abs() < 1e-6, "{q}");
            }
        }
        assert!(agree >= 40, "{agree} of 50");
        let _ = exact_claims;
    }

    #[test]
    fn fusion_keeps_exact_names_first_and_rewards_agreement() {
        let id = |pos| toolgate_catalog::Brand::default().id(pos);
        let (a, b, c, d) = (id(0), id(1), id(2), id(3));
        let lexical = [(d, f32::INFINITY), (a, 9.0), (b, 5.0)];
        let dense = [(c, 0.9), (b, 0.8), (d, 0.7)];
        let ids = |hits: Vec<(ToolId, f32)>| hits.into_iter().map(|h| h.0).collect::<Vec<_>>();
        let rrf = ids(fuse(&lexical, &dense, Fusion::Rrf { k: 60.0, dense_weight: 1.0 }));
        // b is in both lists and overtakes a; d stays first and is not repeated.
        assert_eq!(rrf, vec![d, b, a, c]);
        let mix = fuse(&lexical, &dense, Fusion::Mix { dense_weight: 0.5 });
        // a: 1.0; b: 5/9 + 0.5·0.5 ≈ 0.81; c: 0.5.
        assert_eq!(ids(mix.clone()), vec![d, a, b, c]);
        assert_eq!(mix[0].1, f32::INFINITY);
        assert!((mix[2].1 - (5.0 / 9.0 + 0.25)).abs() < 1e-6, "{mix:?}");
        assert_eq!(ids(fuse(&lexical, &[], Fusion::Mix { dense_weight: 1.0 })), vec![d, a, b]);
    }

    #[test]
    fn a_query_the_model_cannot_read_keeps_the_lexical_ranking() {
        let cat = catalog();
        let index = DenseIndex::build(&cat, &toy());
        let lexical = [(cat.id(2), 3.0)];
        let fusion = Fusion::Rrf { k: 60.0, dense_weight: 2.0 };
        assert_eq!(index.hybrid("读取 文件", &lexical, fusion), vec![(cat.id(2), 3.0)]);
        // One lexical candidate is fewer than `DISCOVER`: of the nearest tools, those nearer to
        // the request than it join it (the commit log), the others do not (the forecast), and
        // the candidate keeps its lexical part.
        let fused = index.hybrid("commit history", &lexical, fusion);
        let ids: Vec<ToolId> = fused.iter().map(|h| h.0).collect();
        assert_eq!(ids.len(), 2, "{fused:?}");
        assert!(ids.contains(&cat.id(1)) && !ids.contains(&cat.id(0)), "{fused:?}");
        let candidate = fused.iter().find(|h| h.0 == cat.id(2)).unwrap().1;
        assert!(candidate > 1.0 / 61.0, "{fused:?}");
        // No lexical candidate: nothing fits, and the meaning does not make something up.
        assert!(index.hybrid("commit history", &[], fusion).is_empty());
    }

    #[test]
    fn the_dense_side_reads_the_candidates_it_is_given() {
        let cat = catalog();
        let index = DenseIndex::build(&cat, &toy());
        let tools = [cat.id(2), cat.id(0)];
        let hits = index.rerank("rain tomorrow", &tools);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![cat.id(0), cat.id(2)]);
        for (id, cos) in hits {
            assert!((index.similarity("rain tomorrow", id) - cos).abs() < 1e-6);
        }
        assert!(index.rerank("天气", &tools).is_empty());
        // Ten candidates or more: none joins them.
        let many: Vec<(ToolId, f32)> = (0..DISCOVER).map(|_| (cat.id(2), 1.0)).collect();
        let fused = index.hybrid("commit history", &many, Fusion::DEFAULT);
        assert!(fused.iter().all(|h| h.0 == cat.id(2)), "{fused:?}");
    }

    #[test]
    fn token_ids_are_kept_whole_in_two_bytes_or_four() {
        // Words spelt w0 … w69999: past 65,536 tokens the ids need four bytes.
        for vocab in [300usize, 70_000] {
            let words: Vec<String> = (0..vocab).map(|i| format!("w{i}")).collect();
            let mut tokens = vec!["[UNK]"];
            tokens.extend(words.iter().map(String::as_str));
            let vectors = vec![vec![1i8, 2]; tokens.len()];
            let model =
                StaticModel::from_bytes("wide", &crate::semantic::tests::model_bytes(&tokens, &vectors))
                    .unwrap();
            let tools: Vec<ToolSpec> = (0..3000)
                .map(|i| {
                    let text = format!("w{} w{} zz", i * 7 % vocab, (i * 31 + vocab - 1) % vocab);
                    ToolSpec::mcp("s", &format!("t{i}_w{}", vocab - 1 - i % vocab), &text)
                })
                .collect();
            let cat = tools.into_iter().fold(Catalog::builder(), |b, t| b.tool(t)).build().unwrap();
            let kept = Tokens::of(cat.tools(), &model);
            assert_eq!(kept.len(), cat.len());
            for (i, tool) in cat.tools().iter().enumerate() {
                let read: Vec<Vec<u32>> = kept.fields(i).iter().map(|f| f.iter().collect()).collect();
                let made: Vec<Vec<u32>> = fields_of(tool).iter().map(|t| model.tokenize(t)).collect();
                assert_eq!(read, made, "tool {i} of a vocabulary of {vocab}");
            }
            assert!(
                kept.fields(2999)[0].iter().any(|t| t as usize > usize::from(u16::MAX)) == (vocab > 65_536)
            );
        }
    }

    #[test]
    fn rows_permuted_in_place_are_the_rows_gathered_in_that_order() {
        let (n, dim) = (37usize, 3usize);
        let mut next = pseudo_random(7);
        let mut order: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            order.swap(i, next() % (i + 1));
        }
        let rows: Vec<i8> = (0..n * dim).map(|k| (k % 251) as i8).collect();
        let scales: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let (mut permuted, mut permuted_scales) = (rows.clone(), scales.clone());
        permute(&mut permuted, &mut permuted_scales, dim, &order);
        let gathered: Vec<i8> =
            order.iter().flat_map(|&i| rows[i as usize * dim..(i as usize + 1) * dim].to_vec()).collect();
        assert_eq!(permuted, gathered);
        assert_eq!(permuted_scales, order.iter().map(|&i| scales[i as usize]).collect::<Vec<_>>());
    }

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(split_identifier("getWeatherForecast"), "get Weather Forecast");
        assert_eq!(split_identifier("git_log-v2.x"), "git log v2 x");
        assert_eq!(split_identifier("PDF"), "PDF");
    }
}
