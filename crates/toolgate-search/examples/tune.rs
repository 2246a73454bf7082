//! Coordinate search over the BM25F field weights and length normalisations, on every bench
//! set at once (the mean nDCG@10 over sets, each set counted once whatever its size).
//!
//! `cargo run --release -p toolgate-search --example tune [BENCH_DIR]`. The result is a starting point
//! for `Bm25Params::bm25f()`; round it, and prefer flat optima to sharp ones (the held-out
//! queries are not these).

#![allow(clippy::print_stdout)]

use toolgate_catalog::Catalog;
use toolgate_search::Bm25Params;
use toolgate_search::eval::{Query, evaluate_with, load_queries};
use toolgate_search::{Index, Strategy};

fn mean_ndcg(sets: &[(Catalog, Vec<Query>)], params: &Bm25Params) -> f64 {
    let total: f64 = sets
        .iter()
        .map(|(c, q)| {
            let b = Index::builder().strategy(Strategy::Bm25f).params(params.clone());
            evaluate_with(c, q, b, &[5]).all.ndcg10
        })
        .sum();
    total / sets.len() as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "bench".to_owned());
    let mut sets = Vec::new();
    for set in ["acebench-en", "acebench-zh", "livemcp-zh", "livemcpbench", "metatool"] {
        let catalog = Catalog::from_path(format!("{dir}/{set}/catalog.jsonl").as_ref())?;
        let path = format!("{dir}/{set}/queries.jsonl");
        let queries = load_queries(&path, &std::fs::read_to_string(&path)?, &catalog)?;
        sets.push((catalog, queries));
    }
    let mut best = Bm25Params::bm25f();
    let mut best_score = mean_ndcg(&sets, &best);
    println!("start {best_score:.4} weights {:?} b {:?} k1 {}", best.weights, best.b, best.k1);
    let grid_w = [0.25f32, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let grid_b = [0.0f32, 0.25, 0.5, 0.75, 0.9];
    for round in 0..2 {
        for field in 0..5 {
            for &w in &grid_w {
                let mut p = best.clone();
                p.weights[field] = w;
                let s = mean_ndcg(&sets, &p);
                if s > best_score + 1e-4 {
                    (best, best_score) = (p, s);
                }
            }
            for &b in &grid_b {
                let mut p = best.clone();
                p.b[field] = b;
                let s = mean_ndcg(&sets, &p);
                if s > best_score + 1e-4 {
                    (best, best_score) = (p, s);
                }
            }
        }
        for k1 in [0.8f32, 1.0, 1.2, 1.5, 2.0] {
            let p = Bm25Params { k1, ..best.clone() };
            let s = mean_ndcg(&sets, &p);
            if s > best_score + 1e-4 {
                (best, best_score) = (p, s);
            }
        }
        println!("round {round}: {best_score:.4} weights {:?} b {:?} k1 {}", best.weights, best.b, best.k1);
    }
    Ok(())
}
