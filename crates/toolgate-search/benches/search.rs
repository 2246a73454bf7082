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
//! With the `compare` feature (`cargo bench -p toolgate-search --features compare --bench search`)
//! every group also runs the `bm25` crate as Codex configures it (`bm25-crate`) and tantivy
//! 0.27 over the same text (`tantivy`, see [`compare`]), and the run ends with a table of
//! their mean times as ratios to the default strategy's, read back from criterion's estimates.
//!
//! The Chinese queries carry an ASCII word, as real ones often do: the keyword baseline splits
//! on white space only and never matches a run of Chinese characters inside a sentence.

#[cfg(feature = "compare")]
mod compare;
mod synth;

use std::cell::OnceCell;
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, criterion_group};
use toolgate_catalog::Catalog;
use toolgate_search::Request;
use toolgate_search::{Index, Strategy};

use synth::{Material, QUERIES};

/// The catalog sizes benchmarked.
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// The strategies benchmarked: the default, plain BM25F under it, the baseline, and with the
/// `semantic` feature (`cargo bench -p toolgate-search --features semantic --bench search`) the
/// default fused with the static embedding model.
const STRATEGIES: &[Strategy] = &[
    Strategy::Lexical,
    Strategy::Bm25f,
    Strategy::Keyword,
    #[cfg(feature = "bm25-crate")]
    Strategy::Bm25Crate,
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
        #[cfg(feature = "compare")]
        {
            configure(&mut group, expected(Kind::Build, Strategy::Lexical, n));
            group.bench_function(BenchmarkId::new(TANTIVY, n), |b| {
                let catalog = catalog(n);
                b.iter(|| {
                    let index = compare::TantivyIndex::build(black_box(catalog));
                    assert_eq!(index.len(), n as u64);
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
        #[cfg(feature = "compare")]
        {
            configure(&mut group, expected(Kind::Query, Strategy::Lexical, n));
            let index = OnceCell::new();
            let mut next = 0;
            group.bench_function(BenchmarkId::new(TANTIVY, n), |b| {
                let index = index.get_or_init(|| compare::TantivyIndex::build(catalog(n)));
                b.iter(|| {
                    let query = QUERIES[next % QUERIES.len()];
                    next += 1;
                    let found = index.search(black_box(query), LIMIT);
                    assert!(!found.is_empty(), "tantivy found nothing for {query:?} among {n} tools");
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
///
/// With `compare`, the `bm25` crate and tantivy answer the same requests: those the default
/// strategy answers (each engine's own empty answers are allowed, not counted as work skipped,
/// since all of them read every posting of the request's terms).
fn tasks(c: &mut Criterion) {
    let mut group = c.benchmark_group("tasks");
    let all = task_queries();
    let strategies = [
        Strategy::Lexical,
        #[cfg(feature = "bm25-crate")]
        Strategy::Bm25Crate,
        #[cfg(feature = "semantic")]
        Strategy::Semantic,
    ];
    for n in sizes() {
        // The requests the default strategy answers at this size, found once.
        let answered: OnceCell<Vec<&str>> = OnceCell::new();
        let answered = || {
            answered.get_or_init(|| {
                let index = Index::builder().build(catalog(n));
                let found = |q: &&str| !index.search(Request::new(q, LIMIT)).hits.is_empty();
                let answered: Vec<&str> = all.iter().map(String::as_str).filter(found).collect();
                assert!(answered.len() * 2 > all.len(), "most task requests find something among {n} tools");
                answered
            })
        };
        for strategy in strategies {
            configure(&mut group, expected(Kind::Query, strategy, n) * 4);
            let index = OnceCell::new();
            let mut next = 0;
            group.bench_function(BenchmarkId::new(strategy.as_str(), n), |b| {
                let index = index.get_or_init(|| Index::builder().strategy(strategy).build(catalog(n)));
                let answered = answered();
                b.iter(|| {
                    let query = answered[next % answered.len()];
                    next += 1;
                    let found = index.search(Request::new(black_box(query), LIMIT));
                    if strategy == Strategy::Lexical {
                        assert!(!found.hits.is_empty(), "nothing for {query:?} among {n} tools");
                    }
                    found
                });
            });
        }
        #[cfg(feature = "compare")]
        {
            configure(&mut group, expected(Kind::Query, Strategy::Lexical, n) * 4);
            let index = OnceCell::new();
            let mut next = 0;
            group.bench_function(BenchmarkId::new(TANTIVY, n), |b| {
                let index = index.get_or_init(|| compare::TantivyIndex::build(catalog(n)));
                let answered = answered();
                b.iter(|| {
                    let query = answered[next % answered.len()];
                    next += 1;
                    index.search(black_box(query), LIMIT)
                });
            });
        }
    }
    group.finish();
}

/// The name of tantivy's benchmarks, beside the strategies'.
#[cfg(feature = "compare")]
const TANTIVY: &str = "tantivy";

/// With `compare`: each size's mean time of the `bm25` crate and of tantivy as a multiple of
/// the default strategy's, for every group this run measured (criterion's `estimates.json`).
#[cfg(feature = "compare")]
#[allow(clippy::print_stdout, reason = "the table is the benchmark's report, beside criterion's")]
fn ratios() {
    let Some(root) = criterion_dir() else { return };
    let mean = |group: &str, engine: &str, n: usize| -> Option<f64> {
        let path = root.join(group).join(engine).join(n.to_string()).join("new/estimates.json");
        let text = std::fs::read_to_string(path).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v["mean"]["point_estimate"].as_f64()
    };
    println!("\nmean time as a multiple of lexical's (this run):");
    println!("{:<8} {:>7} {:>12} {:>11} {:>11}", "group", "tools", "lexical", "bm25-crate", "tantivy");
    for group in ["build", "query", "tasks"] {
        for n in sizes() {
            let Some(base) = mean(group, Strategy::Lexical.as_str(), n) else { continue };
            let ratio = |engine: &str| {
                mean(group, engine, n).map_or_else(|| "-".to_owned(), |m| format!("{:.1}x", m / base))
            };
            println!(
                "{group:<8} {n:>7} {:>12} {:>11} {:>11}",
                format_nanos(base),
                ratio(Strategy::Bm25Crate.as_str()),
                ratio(TANTIVY)
            );
        }
    }
}

/// Where criterion writes its estimates: `$CARGO_TARGET_DIR/criterion`, else `criterion`
/// beside the directory of this executable's `deps`.
#[cfg(feature = "compare")]
fn criterion_dir() -> Option<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return Some(std::path::PathBuf::from(dir).join("criterion"));
    }
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.parent()?.join("criterion"))
}

#[cfg(feature = "compare")]
fn format_nanos(nanos: f64) -> String {
    match nanos {
        n if n >= 1e6 => format!("{:.1} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.1} µs", n / 1e3),
        n => format!("{n:.0} ns"),
    }
}

criterion_group!(benches, build, query, tasks);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    #[cfg(feature = "compare")]
    if !test_mode() {
        ratios();
    }
}
