//! Index build and query time on synthetic catalogs of 1,000, 10,000 and 100,000 tools.
//!
//! The catalogs are recombined from the embedded one by [`synth`], deterministically. For each
//! size and each strategy (`lexical`, the default, `bm25f` without query expansion, and
//! `keyword`, the Claude Code baseline) there
//! are two benchmarks:
//!
//! - `build/<strategy>/<N>` indexes the whole catalog;
//! - `query/<strategy>/<N>` runs one query per iteration from a fixed rotating list of realistic
//!   queries, English and Chinese, so the time reported is the mean time of one query.
//!
//! A third, `tasks/lexical/<N>`, runs LiveMCPBench's task requests (whole sentences) instead
//! of the short queries.
//!
//! Both check their result inside the timed loop, so that a fast run doing nothing fails.
//! `query/keyword/100000` is left out: the keyword scorer scans every tool, and one query on
//! 100,000 tools takes about 0.2 s. In criterion's test mode (`cargo test --benches`, each
//! benchmark run once in a debug build) the 100,000-tool benchmarks are left out too.
//!
//! The Chinese queries carry an ASCII word, as real ones often do: the keyword baseline splits
//! on white space only and never matches a run of Chinese characters inside a sentence.

mod synth;

use std::cell::OnceCell;
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};
use toolgate::search::Request;
use toolgate::{Catalog, Index, Strategy};

use synth::{Material, QUERIES};

/// The catalog sizes benchmarked.
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// The strategies benchmarked: the default, plain BM25F under it, the baseline, and with the
/// `semantic` feature (`cargo bench -p toolgate --features semantic --bench search`) the
/// default fused with the static embedding model.
const STRATEGIES: &[Strategy] = &[
    Strategy::Lexical,
    Strategy::Bm25f,
    Strategy::Keyword,
    #[cfg(feature = "semantic")]
    Strategy::Semantic,
];

/// How many hits each query asks for.
const LIMIT: usize = 10;

/// The synthetic catalog of `n` tools (one of [`SIZES`]), generated on first use.
fn catalog(n: usize) -> &'static Catalog {
    static MATERIAL: OnceLock<Material> = OnceLock::new();
    static CATALOGS: [OnceLock<Catalog>; SIZES.len()] = [const { OnceLock::new() }; SIZES.len()];
    let slot = SIZES.iter().position(|&s| s == n).expect("a benchmarked size");
    CATALOGS[slot].get_or_init(|| MATERIAL.get_or_init(Material::embedded).catalog(n))
}

/// What a benchmark times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Build,
    Query,
}

/// About how long one iteration takes on a 2-core machine: the measured time per tool, times
/// the number of tools. Only used to choose the sampling, so it need not be exact.
fn expected(kind: Kind, strategy: Strategy, n: usize) -> Duration {
    let nanos_per_tool = match (kind, strategy) {
        (Kind::Build, Strategy::Keyword) => 10_000,
        (Kind::Build, _) => 55_000,
        (Kind::Query, Strategy::Keyword) => 2_000,
        (Kind::Query, _) => 4,
    };
    Duration::from_nanos(nanos_per_tool * n as u64)
}

/// Sets the sampling of a group for the next benchmark.
///
/// Fast benchmarks take 20 samples in 3 s. Slow ones take the 10 samples criterion requires,
/// each timed on its own (flat sampling), with time for at least one iteration per sample.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>, expected: Duration) {
    group.warm_up_time(Duration::from_secs(1));
    if expected >= Duration::from_millis(10) {
        let time = (expected * 12).max(Duration::from_secs(3));
        group.sample_size(10).measurement_time(time).sampling_mode(SamplingMode::Flat);
    } else {
        group.sample_size(20).measurement_time(Duration::from_secs(3)).sampling_mode(SamplingMode::Auto);
    }
}

/// Whether criterion runs each benchmark once as a test instead of measuring it: it does
/// unless `--bench` is given without `--test` (`cargo test --benches` gives neither).
fn test_mode() -> bool {
    let args: Vec<String> = std::env::args().collect();
    !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--test")
}

/// The catalog sizes to run: in test mode the largest is left out, because a debug build
/// takes about half a minute to index 100,000 tools.
fn sizes() -> Vec<usize> {
    let test = test_mode();
    SIZES.into_iter().filter(|&n| !(test && n >= 100_000)).collect()
}

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    for n in sizes() {
        for &strategy in STRATEGIES {
            configure(&mut group, expected(Kind::Build, strategy, n));
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
    for n in sizes() {
        for &strategy in STRATEGIES {
            if strategy == Strategy::Keyword && n >= 100_000 {
                // One query takes 0.14 to 0.47 s here: too slow to sample, and not in question.
                continue;
            }
            configure(&mut group, expected(Kind::Query, strategy, n));
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

/// The task requests of LiveMCPBench (English and Chinese sentences, as users write them),
/// one per line of its query set.
fn task_queries() -> Vec<String> {
    include_str!("../../../bench/livemcpbench/queries.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a query line is JSON");
            v["query"].as_str().expect("a query line has a query").to_owned()
        })
        .collect()
}

/// `tasks/lexical/<N>`: the default strategy answering whole task requests (longer than
/// [`QUERIES`], and expanded into more terms), rotating over those that find something.
fn tasks(c: &mut Criterion) {
    let mut group = c.benchmark_group("tasks");
    let all = task_queries();
    for n in sizes() {
        configure(&mut group, expected(Kind::Query, Strategy::Lexical, n) * 4);
        let index = OnceCell::new();
        let answered = OnceCell::new();
        let mut next = 0;
        group.bench_function(BenchmarkId::new(Strategy::Lexical.as_str(), n), |b| {
            let index = index.get_or_init(|| Index::builder().build(catalog(n)));
            let answered: &Vec<&str> = answered.get_or_init(|| {
                let found = |q: &&str| !index.search(Request::new(q, LIMIT)).hits.is_empty();
                all.iter().map(String::as_str).filter(found).collect()
            });
            assert!(answered.len() * 2 > all.len(), "most task requests find something among {n} tools");
            b.iter(|| {
                let query = answered[next % answered.len()];
                next += 1;
                let found = index.search(Request::new(black_box(query), LIMIT));
                assert!(!found.hits.is_empty(), "nothing for {query:?} among {n} tools");
                found
            });
        });
    }
    group.finish();
}

criterion_group!(benches, build, query, tasks);
criterion_main!(benches);
