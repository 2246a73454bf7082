//! The queries of one bench set whose gold is not all in the top K, with where each gold item
//! ranked and what ranked above it: the loop for finding what a ranker misses.
//!
//! `cargo run --release -p toolgate-search --features semantic --example misses SET_DIR [STRATEGY] [K]`

use std::io::Write;

use toolgate_catalog::Catalog;
use toolgate_search::Request;
use toolgate_search::eval::load_queries;
use toolgate_search::{Index, Strategy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: misses SET_DIR [STRATEGY] [K]")?;
    let strategy: Strategy = args.next().map(|s| s.parse()).transpose()?.unwrap_or(Strategy::DEFAULT);
    let k: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5);
    let catalog = Catalog::from_path(format!("{dir}/catalog.jsonl").as_ref())?;
    let path = format!("{dir}/queries.jsonl");
    let queries = load_queries(&path, &std::fs::read_to_string(&path)?, &catalog)?;
    let index = Index::builder().strategy(strategy).build(&catalog);
    let mut out = std::io::stdout().lock();
    let mut missed = 0;
    for q in &queries {
        let found = index.search(Request::new(&q.query, usize::MAX));
        let mut labels: Vec<String> = Vec::new();
        for h in &found.hits {
            let l = q.gold_level.label(catalog.tool(h.tool));
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
        let ranks: Vec<(String, Option<usize>)> =
            q.gold.iter().map(|g| (g.clone(), labels.iter().position(|l| l == g))).collect();
        if ranks.iter().all(|(_, r)| r.is_some_and(|r| r < k)) {
            continue;
        }
        missed += 1;
        writeln!(out, "{} {}", q.id, q.query.replace('\n', " "))?;
        for (g, r) in &ranks {
            writeln!(out, "   gold {g} at {}", r.map_or("-".to_owned(), |r| (r + 1).to_string()))?;
        }
        writeln!(out, "   top: {}", labels.iter().take(k).cloned().collect::<Vec<_>>().join(", "))?;
    }
    writeln!(out, "{missed} of {} queries miss gold in the top {k}", queries.len())?;
    Ok(())
}
