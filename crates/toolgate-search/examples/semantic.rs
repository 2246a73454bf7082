//! The static embedding model on every bench set: dense only, `bm25f`, and their fusion, then
//! the latency of each at 10,000 tools.
//!
//! `cargo run --release -p toolgate-search --features semantic --example semantic [-- --model FILE]
//! [--bench DIR] [--sweep]`. Metrics are `toolgate_search::eval::score_query`, the same as
//! `toolgate eval`; the lexical side is whatever `toolgate_search` ranks with by default, so
//! the table follows improvements of `bm25f`. `--sweep` also prints a grid of fusion settings
//! (a means to choose one, with the held-out queries in mind: prefer flat optima).

#![allow(clippy::print_stdout)]

#[path = "../benches/synth/mod.rs"]
#[allow(dead_code)]
mod synth;

use std::time::Instant;

use toolgate_catalog::Catalog;
use toolgate_catalog::ToolId;
use toolgate_search::Index;
use toolgate_search::Request;
use toolgate_search::eval::{Metrics, Query, load_queries, score_query};
use toolgate_search::semantic::{DenseConfig, DenseIndex, Fusion, StaticModel};

const SETS: [&str; 5] = ["livemcpbench", "livemcp-zh", "metatool", "acebench-zh", "acebench-en"];

/// How many lexical hits go into fusion (the dense side reads the first
/// [`RERANK_DEPTH`](toolgate_search::semantic::RERANK_DEPTH) of them), and how many tools the
/// dense search alone returns in the latency table.
const DEPTH: usize = 100;

/// The fusion measured in the main table: the library's default (chosen with `--sweep`; see
/// `docs/semantic.md`).
const CHOSEN: Fusion = Fusion::DEFAULT;

struct Set {
    name: &'static str,
    catalog: Catalog,
    queries: Vec<Query>,
    index: Index,
    dense: DenseIndex,
}

/// Mean R@5 and nDCG@10 of `rank` over a set's queries.
fn measure(set: &Set, rank: &dyn Fn(&Query) -> Vec<ToolId>) -> (f64, f64) {
    let mut sum = Metrics::default();
    let (mut r5, mut nd) = (0.0, 0.0);
    for q in &set.queries {
        let labels: Vec<String> =
            rank(q).iter().map(|&id| q.gold_level.label(set.catalog.tool(id))).collect();
        let m = score_query(&labels, &q.gold, &[5]);
        r5 += m.recall[&5];
        nd += m.ndcg10;
        sum.n += 1;
    }
    let n = sum.n.max(1) as f64;
    (r5 / n, nd / n)
}

fn lexical(set: &Set, q: &str) -> Vec<(ToolId, f32)> {
    set.index.search(Request::new(q, usize::MAX)).hits.iter().map(|h| (h.tool, h.score)).collect()
}

fn fused(set: &Set, q: &str, fusion: Fusion) -> Vec<ToolId> {
    set.dense.hybrid(q, &lexical(set, q), fusion).into_iter().map(|h| h.0).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let model = match opt("--model") {
        Some(path) => StaticModel::from_path(path.as_ref())?,
        None => StaticModel::embedded().clone(),
    };
    let bench = opt("--bench").unwrap_or_else(|| "bench".to_owned());
    let config = dense_config(opt("--dense").as_deref());
    println!("model: {} dims, {} tokens, checksum {}", model.dim(), model.vocab_len(), model.checksum());
    let mut sets = Vec::new();
    for name in SETS {
        let catalog = Catalog::from_path(format!("{bench}/{name}/catalog.jsonl").as_ref())?;
        let path = format!("{bench}/{name}/queries.jsonl");
        let queries = load_queries(&path, &std::fs::read_to_string(&path)?, &catalog)?;
        let index = Index::builder().build(&catalog);
        let dense = DenseIndex::build_with(&catalog, &model, &config);
        sets.push(Set { name, catalog, queries, index, dense });
    }

    println!(
        "\n| set | dense R@5 | dense nDCG@10 | bm25f R@5 | bm25f nDCG@10 | fused R@5 | fused nDCG@10 | coverage |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for set in &sets {
        let all = set.catalog.len();
        let d = measure(set, &|q| set.dense.search(&q.query, all).iter().map(|h| h.0).collect());
        let l = measure(set, &|q| lexical(set, &q.query).iter().map(|h| h.0).collect());
        let f = measure(set, &|q| fused(set, &q.query, CHOSEN));
        let cov: f32 = set.queries.iter().map(|q| set.dense.model().coverage(&q.query)).sum::<f32>()
            / set.queries.len() as f32;
        println!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} | **{:.3}** | **{:.3}** | {cov:.2} |",
            set.name, d.0, d.1, l.0, l.1, f.0, f.1
        );
    }

    println!("\nper query, fused against bm25f (nDCG@10): better / worse / same; the biggest changes");
    for set in &sets {
        let (mut up, mut down, mut same) = (0, 0, 0);
        let mut changes: Vec<(f64, &str)> = Vec::new();
        for q in &set.queries {
            let nd = |ids: Vec<ToolId>| {
                let labels: Vec<String> =
                    ids.iter().map(|&id| q.gold_level.label(set.catalog.tool(id))).collect();
                score_query(&labels, &q.gold, &[5]).ndcg10
            };
            let l = nd(lexical(set, &q.query).iter().map(|h| h.0).collect());
            let f = nd(fused(set, &q.query, CHOSEN));
            match f.partial_cmp(&l) {
                Some(std::cmp::Ordering::Greater) => up += 1,
                Some(std::cmp::Ordering::Less) => down += 1,
                _ => same += 1,
            }
            if f != l {
                changes.push((f - l, &q.query));
            }
        }
        changes.sort_by(|a, b| b.0.abs().total_cmp(&a.0.abs()));
        println!("- {}: {up} / {down} / {same}", set.name);
        for (d, q) in changes.iter().take(2) {
            let short: String = q.chars().take(90).collect();
            println!("    {d:+.2} {short}");
        }
    }

    if args.iter().any(|a| a == "--sweep") {
        sweep(&sets);
    }
    if args.iter().any(|a| a == "--no-latency") {
        return Ok(());
    }
    latency(&model, &config);
    Ok(())
}

/// `--dense name=1,server=0.3,description=1,schema=0.3,idf=1,model_weights=1,dims=256`: a
/// [`DenseConfig`] other than the default, for trying settings.
fn dense_config(spec: Option<&str>) -> DenseConfig {
    let mut c = DenseConfig::default();
    for kv in spec.unwrap_or_default().split(',').filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').expect("--dense takes key=value pairs");
        let x: f32 = v.parse().expect("--dense values are numbers");
        match k {
            "name" => c.name_weight = x,
            "server" => c.server_weight = x,
            "description" => c.description_weight = x,
            "schema" => c.schema_weight = x,
            "idf" => c.catalog_idf = x != 0.0,
            "model_weights" => c.model_weights = x != 0.0,
            "dims" => c.dims = Some(x as usize),
            "center" => c.center = x != 0.0,
            "mean_sample" => c.mean_sample = x as usize,
            _ => panic!("unknown --dense key {k}"),
        }
    }
    println!("dense config: {c:?}");
    c
}

/// A grid of fusion settings: per set R@5/nDCG@10 and the mean nDCG@10 over sets.
fn sweep(sets: &[Set]) {
    let mut grid = Vec::new();
    for k in [10.0, 30.0, 60.0] {
        for w in [0.5, 0.75, 1.0, 1.5, 2.0] {
            grid.push(Fusion::Rrf { k, dense_weight: w });
        }
    }
    for w in [0.1, 0.2, 0.3, 0.5, 0.75, 1.0] {
        grid.push(Fusion::Mix { dense_weight: w });
    }
    println!("\n| fusion | {} | mean nDCG@10 |", SETS.join(" | "));
    println!("|---|{}---|", "---|".repeat(SETS.len()));
    for fusion in grid {
        let mut row = format!("| {fusion:?} |");
        let mut mean = 0.0;
        for set in sets {
            let (r5, nd) = measure(set, &|q| fused(set, &q.query, fusion));
            mean += nd / sets.len() as f64;
            row.push_str(&format!(" {r5:.3} / {nd:.3} |"));
        }
        println!("{row} {mean:.4} |");
    }
}

/// Per-query latency at 10,000 synthetic tools: bm25f, the dense scan and the fusion.
fn latency(model: &StaticModel, config: &DenseConfig) {
    let catalog = synth::Material::embedded().catalog(10_000);
    let t = Instant::now();
    let index = Index::builder().build(&catalog);
    let lex_build = t.elapsed();
    let t = Instant::now();
    let dense = DenseIndex::build_with(&catalog, model, config);
    let dense_build = t.elapsed();
    let text = std::fs::read_to_string("bench/livemcpbench/queries.jsonl").unwrap_or_default();
    let queries: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["query"].as_str().map(str::to_owned))
        .chain(["search the web for news", "take a screenshot", "read a file"].map(String::from))
        .collect();
    // Each query's best of 9 runs, so that other processes on a shared machine do not count;
    // then the median and the 99th percentile over the queries.
    let time = |f: &dyn Fn(&str) -> usize| {
        let mut us: Vec<f64> = queries
            .iter()
            .map(|q| {
                (0..9)
                    .map(|_| {
                        let t = Instant::now();
                        let n = f(q);
                        assert!(n > 0, "no result for {q}");
                        t.elapsed().as_secs_f64() * 1e6
                    })
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        us.sort_by(f64::total_cmp);
        (us[us.len() / 2], us[us.len() * 99 / 100])
    };
    let lex = time(&|q| index.search(Request::new(q, 10)).hits.len());
    let embed = time(&|q| dense.embed(q).len());
    let scan = time(&|q| dense.search(q, DEPTH).len());
    let both = time(&|q| {
        let l: Vec<(ToolId, f32)> =
            index.search(Request::new(q, DEPTH)).hits.iter().map(|h| (h.tool, h.score)).collect();
        dense.hybrid(q, &l, CHOSEN).len()
    });
    println!(
        "\nlatency at {} tools, {} queries, best of 9 runs each (µs, p50 / p99):",
        catalog.len(),
        queries.len()
    );
    println!("| bm25f | {:.1} / {:.1} | build {:.0} ms |", lex.0, lex.1, lex_build.as_secs_f64() * 1e3);
    println!("| embed the query (part of dense) | {:.1} / {:.1} | |", embed.0, embed.1);
    println!(
        "| dense top-{DEPTH} | {:.1} / {:.1} | build {:.0} ms |",
        scan.0,
        scan.1,
        dense_build.as_secs_f64() * 1e3
    );
    println!(
        "| fused (bm25f top-{DEPTH}, the first {} with their cosines, fusion) | {:.1} / {:.1} | |",
        toolgate_search::semantic::RERANK_DEPTH,
        both.0,
        both.1
    );
}
