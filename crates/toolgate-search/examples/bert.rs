//! The `bert` strategy at 10,000 tools: what encoding the catalog costs (first and cached),
//! and the latency of one-line requests, the model's part and the whole search.
//!
//! `cargo run --release -p toolgate-search --features bert --example bert -- MODEL_DIR [TOOLS]`
//! (MODEL_DIR: a sentence-transformers directory such as `e2e/model`; TOOLS default 10000).
//! The vectors are cached in a file of the system's temporary directory, so the first run
//! encodes the catalog and later ones read it back.

#![allow(clippy::print_stdout)]

#[path = "../benches/synth/mod.rs"]
#[allow(dead_code)]
mod synth;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use toolgate_search::Index;
use toolgate_search::Request;
use toolgate_search::semantic::bert::{BertEncoder, BertModel};

/// Runs per query; each query's median counts.
const RUNS: usize = 9;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn report(label: &str, mut micros: Vec<f64>) {
    micros.sort_by(f64::total_cmp);
    println!(
        "{label:<34} p50 {:>9.1} µs   p90 {:>9.1} µs   max {:>9.1} µs",
        percentile(&micros, 0.5),
        percentile(&micros, 0.9),
        micros[micros.len() - 1]
    );
}

/// Each query's median over [`RUNS`] runs of `f`, in microseconds.
fn time(mut f: impl FnMut(&str)) -> Vec<f64> {
    // The search bench's one-line requests that the model reads (a request all in Chinese skips
    // the model, so it would flatter the figures).
    synth::QUERIES
        .iter()
        .filter(|q| q.chars().any(|c| c.is_ascii_alphabetic()))
        .map(|q| {
            let mut runs: Vec<f64> = (0..RUNS)
                .map(|_| {
                    let start = Instant::now();
                    f(q);
                    start.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            runs.sort_by(f64::total_cmp);
            runs[RUNS / 2]
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or("usage: bert MODEL_DIR [TOOLS]")?);
    let n: usize = args.next().map_or(Ok(10_000), |a| a.parse())?;
    let catalog = synth::Material::embedded().catalog(n);
    let cache = std::env::temp_dir().join(format!("toolgate-bert-example-{n}.bin"));

    let start = Instant::now();
    let encoder = BertEncoder::from_dir(&dir)?;
    println!("load the model                     {:>9.1} ms", start.elapsed().as_secs_f64() * 1e3);
    let cached = cache.exists();
    let model = Arc::new(BertModel::new(encoder, Some(cache.clone())));
    let start = Instant::now();
    let index = Index::builder().model(model.clone()).build(&catalog);
    let label = if cached { "index, vectors read from the cache" } else { "index, every tool encoded" };
    println!("{label:<34} {:>9.1} ms ({n} tools)", start.elapsed().as_secs_f64() * 1e3);
    let start = Instant::now();
    let again = Index::builder().model(model.clone()).build(&catalog);
    println!("index again, vectors in memory     {:>9.1} ms", start.elapsed().as_secs_f64() * 1e3);
    drop(again);
    let start = Instant::now();
    let fresh = Arc::new(BertModel::new(BertEncoder::from_dir(&dir)?, Some(cache)));
    let restarted = Index::builder().model(fresh).build(&catalog);
    println!("index after a restart (cache file) {:>9.1} ms", start.elapsed().as_secs_f64() * 1e3);
    drop(restarted);

    let lexical = Index::builder().build(&catalog);
    let encoder = model.encoder();
    for _ in 0..3 {
        let _ = encoder.embed(synth::QUERIES[0]);
    }
    report("embed the request", time(|q| drop(encoder.embed(q))));
    report("`lexical` search, limit 10", time(|q| drop(lexical.search(Request::new(q, 10)))));
    report("`bert` search, limit 10", time(|q| drop(index.search(Request::new(q, 10)))));
    Ok(())
}
