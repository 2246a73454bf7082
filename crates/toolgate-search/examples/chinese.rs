//! Measures Chinese segmentation for the `bm25f` ranker: character bigrams against jieba-rs
//! words, on the bench sets with Chinese queries.
//!
//! `cargo run --release -p toolgate-search --features jieba --example chinese [BENCH_DIR]`

#![allow(clippy::print_stdout)]

use toolgate_catalog::Catalog;
use toolgate_search::Bm25Params;
use toolgate_search::eval::{evaluate_with, load_queries};
use toolgate_search::text::{Analyzer, Chinese};
use toolgate_search::{Index, Strategy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "bench".to_owned());
    println!("set           segmenter  R@1    R@5    R@10   nDCG@10  p50 µs");
    for set in ["acebench-zh", "livemcp-zh", "livemcpbench"] {
        let catalog = Catalog::from_path(format!("{dir}/{set}/catalog.jsonl").as_ref())?;
        let path = format!("{dir}/{set}/queries.jsonl");
        let queries = load_queries(&path, &std::fs::read_to_string(&path)?, &catalog)?;
        for (label, chinese) in [("bigrams", Chinese::Bigrams), ("jieba", Chinese::Jieba)] {
            let params = Bm25Params { analyzer: Analyzer::new(chinese), ..Bm25Params::bm25f() };
            let builder = Index::builder().strategy(Strategy::Bm25f).params(params);
            let r = evaluate_with(&catalog, &queries, builder, &[1, 5, 10]);
            println!(
                "{set:<13} {label:<9}  {:.3}  {:.3}  {:.3}  {:.3}    {:.1}",
                r.all.recall[&1], r.all.recall[&5], r.all.recall[&10], r.all.ndcg10, r.query_p50_us
            );
        }
    }
    Ok(())
}
