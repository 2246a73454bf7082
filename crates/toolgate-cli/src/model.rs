//! `eval --model DIR`: a full sentence-transformers model beside the strategies, in the same
//! run: the model alone, its reciprocal-rank fusion with plain BM25 (the two peers people
//! build), and `bert`, the `lexical` ranking fused with it.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use toolgate::{Catalog, Index, Strategy};
use toolgate_search::eval::{Query, Ranker, Report, evaluate_ranker};
use toolgate_search::semantic::bert::{BertIndex, BertModel, reciprocal_rank_fusion};
use toolgate_search::{Found, Hit, LoadCut, Request, rank_scored};

/// How many of each side's best are fused.
const DEPTH: usize = 100;

/// Loads the model of `dir` (for `--model`), saying which flag named it when it cannot.
pub(crate) fn open(dir: &Path, mix: f32) -> anyhow::Result<Arc<BertModel>> {
    let model = BertModel::open(dir).with_context(|| format!("--model {}", dir.display()))?;
    Ok(Arc::new(model.with_mix(mix)))
}

/// Warns if the model's vectors could not be cached on disk (`problem`, from
/// `BertModel::cache_problem` or `Index::model_cache_problem`).
pub(crate) fn warn_cache(problem: Option<String>) {
    if let Some(problem) = problem {
        let _ = writeln!(std::io::stderr(), "warning: the model's vectors are not cached on disk: {problem}");
    }
}

/// The reports of `bert-only`, `bm25+bert` and `bert` on `queries`.
pub(crate) fn reports(
    dir: &Path,
    catalog: &Catalog,
    queries: &[Query],
    ks: &[usize],
    cut: LoadCut,
    mix: f32,
) -> anyhow::Result<Vec<Report>> {
    let model = open(dir, mix)?;
    let start = Instant::now();
    let dense: BertIndex = model.index(catalog).with_context(|| format!("--model {}", dir.display()))?;
    let build_ms = start.elapsed().as_secs_f64() * 1e3;
    warn_cache(model.cache_problem());
    let bm25 = Index::builder().strategy(Strategy::Bm25).build(catalog);
    let only = |q: &str| {
        let v = model.encoder().embed(q).unwrap_or_else(|_| vec![0.0; model.encoder().dim()]);
        dense.rank(&v)
    };
    let mut out = Vec::new();

    let mut rank =
        |q: &str| Found::ranked(only(q).into_iter().map(|(tool, score)| Hit { tool, score }).collect(), cut);
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
    out.push(evaluate_ranker(catalog, queries, ks, ranker, &mut || {}));

    let rrf = |q: &str| {
        let words: Vec<toolgate::ToolId> =
            bm25.search(Request::new(q, DEPTH)).hits.into_iter().map(|h| h.tool).collect();
        let model: Vec<toolgate::ToolId> = only(q).into_iter().take(DEPTH).map(|(t, _)| t).collect();
        reciprocal_rank_fusion(&words, &model, 60.0)
    };
    let mut rank = |q: &str| Found::ranked(rank_scored(rrf(q)), cut);
    let mut time = |q: &str| {
        std::hint::black_box(rrf(q));
    };
    let ranker =
        Ranker { label: "bm25+bert", strategy: Strategy::Bm25, build_ms, rank: &mut rank, time: &mut time };
    out.push(evaluate_ranker(catalog, queries, ks, ranker, &mut || {}));

    // `bert` itself, as `serve` and `search` run it: the vectors are the model's already.
    let start = Instant::now();
    let fused = Index::builder().model(model.clone()).build(catalog);
    let build_ms = build_ms + start.elapsed().as_secs_f64() * 1e3;
    let mut rank = |q: &str| fused.search(Request { cut, ..Request::new(q, DEPTH) });
    let mut time = |q: &str| {
        std::hint::black_box(fused.search(Request::new(q, 10)));
    };
    let ranker =
        Ranker { label: "bert", strategy: Strategy::Bert, build_ms, rank: &mut rank, time: &mut time };
    out.push(evaluate_ranker(catalog, queries, ks, ranker, &mut || {}));
    Ok(out)
}
