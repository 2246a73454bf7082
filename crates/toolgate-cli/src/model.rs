//! `eval --model DIR`: a full sentence-transformers model beside the strategies, in the same
//! run: the model alone, its reciprocal-rank fusion with plain BM25 (the two peers people
//! build), and `bert`, the default `lexical` ranking fused with it.

use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use toolgate::eval::{Query, Ranker, Report, evaluate_ranker};
use toolgate::search::{Hit, Request};
use toolgate::semantic::bert::{BertEncoder, BertIndex, fuse, reciprocal_rank_fusion};
use toolgate::{Catalog, Index, Strategy};

/// The share of the model's cosine in `bert`'s mix (chosen on the `tune` parts,
/// `docs/semantic.md`).
pub(crate) const MIX: f32 = 0.5;

/// How many of each side's best are fused.
const DEPTH: usize = 100;

/// `bert`: the default `lexical` ranking fused with a full model, for `search --model` and the
/// `bert` row of `eval --model`.
pub(crate) struct Fused {
    encoder: BertEncoder,
    dense: BertIndex,
    lexical: Index,
    mix: f32,
    /// What loading the model and encoding the catalog took, in milliseconds.
    build_ms: f64,
}

impl Fused {
    /// The model of `dir` over `catalog` (tool vectors cached in `DIR/.toolgate-vectors.bin`).
    pub(crate) fn new(dir: &Path, catalog: &Catalog, mix: f32) -> anyhow::Result<Fused> {
        let encoder = BertEncoder::from_dir(dir).with_context(|| format!("--model {}", dir.display()))?;
        let start = Instant::now();
        let dense = BertIndex::build(catalog, &encoder, Some(&dir.join(".toolgate-vectors.bin")))?;
        let build_ms = start.elapsed().as_secs_f64() * 1e3;
        let lexical = Index::builder().strategy(Strategy::Lexical).build(catalog);
        Ok(Fused { encoder, dense, lexical, mix, build_ms })
    }

    /// The lexical index the fusion builds on (for `--explain`).
    pub(crate) fn lexical(&self) -> &Index {
        &self.lexical
    }

    /// The model's ranking alone: every tool with its cosine, best first.
    fn model(&self, q: &str) -> Vec<(toolgate::ToolId, f32)> {
        let v = self.encoder.embed(q).unwrap_or_else(|_| vec![0.0; self.encoder.dim()]);
        self.dense.rank(&v)
    }

    /// The fused ranking of `q`, best first; an exact name or a `select:` list is left to the
    /// lexical side, whose promise it is.
    pub(crate) fn rank(&self, q: &str) -> Vec<Hit> {
        let found = self.lexical.search(Request::new(q, DEPTH)).hits;
        if found.first().is_some_and(|h| !h.score.is_finite()) {
            return found;
        }
        let words: Vec<(toolgate::ToolId, f32)> = found.iter().map(|h| (h.tool, h.score)).collect();
        let model: Vec<(toolgate::ToolId, f32)> = self.model(q).into_iter().take(DEPTH).collect();
        // The model reads English only: it weighs as much as the query is not Chinese.
        rank_hits(fuse(&words, &model, self.mix * readable_share(q)))
    }
}

/// Rank scores that fall slowly, as `semantic`'s: no relevance cut on a fused order.
fn rank_hits(ranked: Vec<toolgate::ToolId>) -> Vec<Hit> {
    ranked
        .into_iter()
        .enumerate()
        .map(|(r, tool)| Hit { tool, score: 1.0 / (1.0 + r as f32 / 100.0) })
        .collect()
}

/// The reports of `bert-only`, `bm25+bert` and `bert` on `queries`.
pub(crate) fn reports(
    dir: &Path,
    catalog: &Catalog,
    queries: &[Query],
    ks: &[usize],
    cut: f32,
    mix: f32,
) -> anyhow::Result<Vec<Report>> {
    let bert = Fused::new(dir, catalog, mix)?;
    let build_ms = bert.build_ms;
    let bm25 = Index::builder().strategy(Strategy::Bm25).build(catalog);
    let only = |q: &str| bert.model(q);
    let mut out = Vec::new();

    let mut rank = |q: &str| only(q).into_iter().map(|(tool, score)| Hit { tool, score }).collect();
    let mut time = |q: &str| {
        std::hint::black_box(only(q));
    };
    let ranker = Ranker {
        label: "bert-only",
        strategy: Strategy::Lexical,
        build_ms,
        rank: &mut rank,
        time: &mut time,
    };
    out.push(evaluate_ranker(catalog, queries, ks, cut, ranker, &mut || {}));

    let rrf = |q: &str| {
        let words: Vec<toolgate::ToolId> =
            bm25.search(Request::new(q, DEPTH)).hits.into_iter().map(|h| h.tool).collect();
        let model: Vec<toolgate::ToolId> = only(q).into_iter().take(DEPTH).map(|(t, _)| t).collect();
        reciprocal_rank_fusion(&words, &model, 60.0)
    };
    let mut rank = |q: &str| rank_hits(rrf(q));
    let mut time = |q: &str| {
        std::hint::black_box(rrf(q));
    };
    let ranker =
        Ranker { label: "bm25+bert", strategy: Strategy::Bm25, build_ms, rank: &mut rank, time: &mut time };
    out.push(evaluate_ranker(catalog, queries, ks, cut, ranker, &mut || {}));

    let mut rank = |q: &str| bert.rank(q);
    let mut time = |q: &str| {
        std::hint::black_box(bert.rank(q));
    };
    let ranker =
        Ranker { label: "bert", strategy: Strategy::Lexical, build_ms, rank: &mut rank, time: &mut time };
    out.push(evaluate_ranker(catalog, queries, ks, cut, ranker, &mut || {}));
    Ok(out)
}

/// The share of a query's letters that are not Han characters (all-MiniLM-L6-v2 was trained on
/// English and reads Chinese poorly).
fn readable_share(q: &str) -> f32 {
    let letters: Vec<char> = q.chars().filter(|c| c.is_alphanumeric()).collect();
    if letters.is_empty() {
        return 1.0;
    }
    let han = letters.iter().filter(|c| matches!(**c as u32, 0x3400..=0x9fff | 0xf900..=0xfaff)).count();
    1.0 - han as f32 / letters.len() as f32
}
