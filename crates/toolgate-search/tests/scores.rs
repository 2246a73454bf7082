//! Scores stay the same to the last bit: every request of every set in `bench/`, searched with
//! the default strategy and with plain BM25F at limits 1, 5 and 10, gives the tools, the exact
//! scores (their bits) and the number loaded that `tests/data/scores.tsv` holds.
//!
//! A change that only makes the ranking faster must leave the file as it is. A change meant
//! to rank differently rewrites it, with `TOOLGATE_BLESS=1 cargo test -p toolgate-search --test
//! scores`, and says so: the diff shows which requests moved.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolgate_search::eval::BenchSet;
use toolgate_search::{Index, Request, Strategy};

/// The sets of `bench/`.
const SETS: [&str; 5] = ["acebench-en", "acebench-zh", "livemcp-zh", "livemcpbench", "metatool"];

/// The strategies checked: the default, and BM25F without expansion (the same scorer, other
/// query shapes).
const STRATEGIES: [Strategy; 2] = [Strategy::Lexical, Strategy::Bm25f];

/// The limits each request is searched with.
const LIMITS: [usize; 3] = [1, 5, 10];

fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/scores.tsv")
}

/// FNV-1a, 64 bits: a short, stable digest of one answer.
fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// One line per set, strategy and request: the digest of its answer at each limit (the tools'
/// names, their scores' bits, and how many are loaded).
fn answers() -> String {
    let mut out = String::new();
    for set in SETS {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench").join(set);
        let BenchSet { catalog, mut tune, check } = BenchSet::load(&dir).unwrap();
        tune.extend(check);
        tune.sort_by(|a, b| a.id.cmp(&b.id));
        for strategy in STRATEGIES {
            let index = Index::builder().strategy(strategy).build(&catalog);
            for query in &tune {
                write!(out, "{set}\t{}\t{}", strategy.as_str(), query.id).unwrap();
                for limit in LIMITS {
                    let found = index.search(Request::new(&query.query, limit));
                    let mut h = fnv(&(found.loads as u64).to_le_bytes(), 0xcbf2_9ce4_8422_2325);
                    for hit in &found.hits {
                        h = fnv(catalog.tool(hit.tool).qualified_name().as_bytes(), h);
                        h = fnv(&hit.score.to_bits().to_le_bytes(), h);
                    }
                    write!(out, "\t{h:016x}").unwrap();
                }
                out.push('\n');
            }
        }
    }
    out
}

#[test]
fn every_bench_request_scores_as_before_to_the_last_bit() {
    let got = answers();
    if std::env::var_os("TOOLGATE_BLESS").is_some() {
        std::fs::write(golden(), &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(golden()).expect("tests/data/scores.tsv");
    let moved: Vec<&str> =
        got.lines().zip(want.lines()).filter(|(g, w)| g != w).map(|(g, _)| g).take(10).collect();
    assert!(
        moved.is_empty() && got.lines().count() == want.lines().count(),
        "{} of {} answers differ from tests/data/scores.tsv (set, strategy, request; the first 10):\n{}",
        got.lines().zip(want.lines()).filter(|(g, w)| g != w).count(),
        want.lines().count(),
        moved.join("\n")
    );
}
