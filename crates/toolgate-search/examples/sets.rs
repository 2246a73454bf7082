//! Every strategy on every bench set, one line each: R@1, R@5, R@10, nDCG@10 and p50 latency.
//!
//! `cargo run --release -p toolgate-search --example sets [BENCH_DIR] [STRATEGY...]` (add
//! `--features bm25-crate` for the `bm25-crate` strategy). The quick loop for ranking work;
//! `toolgate eval` gives the same figures per set with more detail.

#![allow(clippy::print_stdout)]

use toolgate_catalog::Catalog;
use toolgate_search::Strategy;
use toolgate_search::eval::{evaluate, load_queries};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "bench".to_owned());
    let named: Vec<Strategy> = args.map(|a| a.parse()).collect::<Result<_, _>>()?;
    let strategies = if named.is_empty() { Strategy::ALL.to_vec() } else { named };
    println!(
        "{:<13} {:<11} {:>6} {:>6} {:>6} {:>8} {:>8}",
        "set", "strategy", "R@1", "R@5", "R@10", "nDCG@10", "p50 µs"
    );
    for set in ["acebench-en", "acebench-zh", "livemcp-zh", "livemcpbench", "metatool"] {
        let catalog = Catalog::from_path(format!("{dir}/{set}/catalog.jsonl").as_ref())?;
        let path = format!("{dir}/{set}/queries.jsonl");
        let queries = load_queries(&path, &std::fs::read_to_string(&path)?, &catalog)?;
        for &s in &strategies {
            let r = evaluate(&catalog, &queries, s, &[1, 5, 10]);
            println!(
                "{set:<13} {:<11} {:>6.3} {:>6.3} {:>6.3} {:>8.3} {:>8.1}",
                s.as_str(),
                r.all.recall[&1],
                r.all.recall[&5],
                r.all.recall[&10],
                r.all.ndcg10,
                r.query_p50_us
            );
        }
    }
    Ok(())
}
