//! Index build and query time on synthetic catalogs of 1,000, 10,000 and 100,000 tools.
//!
//! The catalogs are recombined from the embedded one by [`synth`], deterministically. For each
//! size and each strategy (`bm25f`, the default, and `keyword`, the Claude Code baseline) there
//! are two benchmarks:
//!
//! - `build/<strategy>/<N>` indexes the whole catalog;
//! - `query/<strategy>/<N>` runs one query per iteration from a fixed rotating list of realistic
//!   queries, English and Chinese, so the time reported is the mean time of one query.
//!
//! Both check their result inside the timed loop, so that a fast run doing nothing fails.
//! The Chinese queries carry an ASCII word, as real ones often do: the keyword baseline splits
//! on white space only and never matches a run of Chinese characters inside a sentence.

mod synth;

use std::cell::OnceCell;
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Duration;

use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};
use criterion::measurement::WallTime;
use toolgate::search::Request;
use toolgate::{Catalog, Index, Strategy};

use synth::Material;

/// The catalog sizes benchmarked.
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// The strategies benchmarked: the default and the baseline.
const STRATEGIES: [Strategy; 2] = [Strategy::Bm25f, Strategy::Keyword];

/// How many hits each query asks for.
const LIMIT: usize = 10;

/// The rotating queries; every one matches some tool of every catalog under every strategy.
const QUERIES: [&str; 20] = [
    "take a screenshot of a web page",
    "send a slack message",
    "list open pull requests",
    "read file contents",
    "查询火车余票 12306",
    "天气预报 weather forecast",
    "search npm package vulnerabilities",
    "git commit log",
    "current stock price",
    "convert time between timezones",
    "search arxiv papers about transformers",
    "fetch a url and convert it to markdown",
    "推荐菜谱 recipe",
    "create a mermaid flowchart",
    "crypto price of bitcoin",
    "youtube video transcript",
    "b站 bilibili 热门视频排行",
    "run a docker container",
    "write data to an excel spreadsheet",
    "wikipedia article summary",
];

/// The synthetic catalog of `n` tools (one of [`SIZES`]), generated on first use.
fn catalog(n: usize) -> &'static Catalog {
    static MATERIAL: OnceLock<Material> = OnceLock::new();
    static CATALOGS: [OnceLock<Catalog>; SIZES.len()] = [const { OnceLock::new() }; SIZES.len()];
    let slot = SIZES.iter().position(|&s| s == n).expect("a benchmarked size");
    CATALOGS[slot].get_or_init(|| MATERIAL.get_or_init(Material::embedded).catalog(n))
}

/// Applies the sampling settings of one catalog size to a group.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    group.warm_up_time(Duration::from_secs(1));
    if n >= 100_000 {
        // One iteration can take a good part of a second: time each sample separately.
        group.sample_size(10).measurement_time(Duration::from_secs(6)).sampling_mode(SamplingMode::Flat);
    } else {
        group.sample_size(20).measurement_time(Duration::from_secs(3)).sampling_mode(SamplingMode::Auto);
    }
}

/// Whether a strategy is benchmarked on catalogs of `n` tools.
fn benchmarked(strategy: Strategy, n: usize) -> bool {
    // The keyword baseline scans every tool for every query; see the measurement in the report.
    !(strategy == Strategy::Keyword && n > 100_000)
}

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    for n in SIZES {
        configure(&mut group, n);
        for strategy in STRATEGIES.into_iter().filter(|&s| benchmarked(s, n)) {
            group.bench_function(BenchmarkId::new(strategy.as_str(), n), |b| {
                let catalog = catalog(n);
                b.iter(|| {
                    let index = Index::builder().strategy(strategy).build(black_box(catalog));
                    assert_eq!(index.catalog().len(), n);
                    index
                });
            });
        }
    }
    group.finish();
}

fn query(c: &mut Criterion) {
    let mut group = c.benchmark_group("query");
    for n in SIZES {
        configure(&mut group, n);
        for strategy in STRATEGIES.into_iter().filter(|&s| benchmarked(s, n)) {
            // Built on first use and kept: criterion calls the routine once per sample.
            let index = OnceCell::new();
            let mut next = 0;
            group.bench_function(BenchmarkId::new(strategy.as_str(), n), |b| {
                let index = index.get_or_init(|| Index::builder().strategy(strategy).build(catalog(n)));
                b.iter(|| {
                    let query = QUERIES[next % QUERIES.len()];
                    next += 1;
                    let found = index.search(Request::new(black_box(query), LIMIT));
                    assert!(!found.hits.is_empty(), "{strategy} found nothing for {query:?} among {n} tools");
                    found
                });
            });
        }
    }
    group.finish();
}


#[allow(clippy::print_stderr)]
fn probe(_c: &mut Criterion) {
    if std::env::var_os("TOOLGATE_PROBE").is_none() { return; }
    use std::time::Instant;
    if std::env::var_os("TOOLGATE_PROBE").unwrap() == "bm25" {
        let cat = catalog(10_000);
        for _ in 0..3 { let t = Instant::now(); let i = Index::builder().build(cat); eprintln!("bm25f 10k build {:?} {}", t.elapsed(), i.catalog().len()); }
        return;
    }
    for n in SIZES {
        let m = Material::embedded();
        let t = Instant::now();
        let specs = m.specs(n);
        eprintln!("specs {n}: {:?}", t.elapsed());
        if std::env::var_os("TOOLGATE_PROBE").unwrap() == "specs" { let t = Instant::now(); drop(specs); eprintln!("drop {:?}", t.elapsed()); continue; }
        let t = Instant::now();
        let b = specs.into_iter().fold(Catalog::builder(), |b, s| b.tool(s));
        eprintln!("builder {n}: {:?}", t.elapsed());
        let c2 = b.build().unwrap();
        eprintln!("build {n}: {:?} {}", t.elapsed(), c2.len());
        if std::env::var_os("TOOLGATE_PROBE").unwrap() == "gen" { continue; }
        let t = Instant::now();
        let cat = catalog(n);
        eprintln!("gen {n}: {:?}, servers {}", t.elapsed(), cat.servers().len());
        for tool in cat.tools().iter().take(if n == 1000 { 12 } else { 0 }) {
            eprintln!("  {} | {}", tool.qualified_name(), tool.description());
        }
        for strategy in STRATEGIES {
            let t = Instant::now();
            let index = Index::builder().strategy(strategy).build(cat);
            eprintln!(" {strategy} build {:?}", t.elapsed());
            let mut all = Vec::new();
            for q in QUERIES {
                let mut ts = Vec::new();
                let mut hits = 0;
                for _ in 0..5 { let t = Instant::now(); let f = index.search(Request::new(q, LIMIT)); ts.push(t.elapsed()); hits = f.hits.len(); }
                ts.sort();
                all.push(ts[2]);
                let top: Vec<&str> = index.search(Request::new(q, 3)).hits.iter().map(|h| cat.tool(h.tool).qualified_name()).collect();
                eprintln!("   {:>10?} {hits:2} {q} -> {top:?}", ts[2]);
            }
            all.sort();
            eprintln!("  {strategy} {n} per-query p50 {:?} max {:?}", all[all.len()/2], all[all.len()-1]);
        }
    }
}

criterion_group!(benches, probe, build, query);
criterion_main!(benches);
