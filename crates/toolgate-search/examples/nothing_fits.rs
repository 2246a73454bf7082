//! How well a search could tell "nothing fits" (issue 44, item 5): each request of the bench
//! sets is searched over its catalog, and over the catalog without its gold tools, where the
//! honest answer is that nothing fits. For a few signals a search has at hand, the threshold
//! below which it would load nothing is chosen on the `tune` parts (the highest that costs the
//! intact `tune` requests, all sets together, at most 0.01 of the recall of what they load),
//! and each part, then all `check` requests together, shows what that threshold costs the
//! intact requests and how often it loads nothing once the gold tools are gone.
//!
//! `cargo run --release -p toolgate-search --example nothing_fits -- bench/acebench-en bench/acebench-zh bench/livemcp-zh bench/livemcpbench bench/metatool`

use std::io::Write;

use toolgate_catalog::{Catalog, ToolId};
use toolgate_search::eval::{BenchSet, Query};
use toolgate_search::semantic::{DenseIndex, StaticModel};
use toolgate_search::{Found, Index, Request};

/// The recall a part may lose on its intact requests.
const MAX_LOSS: f64 = 0.01;

/// What one search says of how well its best hits fit.
#[derive(Clone, Copy)]
struct Signals {
    /// The first hit's score over the tenth's (how far the best stands out).
    standout: f64,
    /// The first hit's cosine to the request under the compiled-in model.
    cosine: f64,
    /// Words of the request that no tool has, over its words.
    unmatched: f64,
}

/// One way to read [`Signals`] as a number: below a threshold, nothing fits.
type Signal = fn(&Signals) -> f64;

struct Row {
    set: String,
    part: &'static str,
    /// The recall of what the intact search loads.
    loaded_recall: f64,
    intact: Signals,
    without: Signals,
}

fn signals(found: &Found, dense: &DenseIndex, query: &str) -> Signals {
    let scores: Vec<f64> = found.hits.iter().map(|h| f64::from(h.score)).filter(|s| s.is_finite()).collect();
    let standout = match (scores.first(), scores.last()) {
        (Some(&a), Some(&b)) if b > 0.0 => a / b,
        _ => 1.0,
    };
    let cosine = found.hits.first().map_or(0.0, |h| f64::from(dense.similarity(query, h.tool)));
    let words = query.split_whitespace().count().max(1) as f64;
    Signals { standout, cosine, unmatched: found.unmatched_terms.len() as f64 / words }
}

fn is_gold(q: &Query, catalog: &Catalog, tool: ToolId) -> bool {
    q.gold.contains(&q.gold_level.label(catalog.tool(tool)))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = StaticModel::embedded();
    let mut rows = Vec::new();
    for dir in std::env::args().skip(1) {
        let set = BenchSet::load(dir.as_ref())?;
        let name = std::path::Path::new(&dir).file_name().map_or(dir.clone(), |n| n.to_string_lossy().into());
        let whole = Index::builder().build(&set.catalog);
        let whole_dense = DenseIndex::build(&set.catalog, model);
        for (part, queries) in [("tune", &set.tune), ("check", &set.check)] {
            for q in queries {
                let found = whole.search(Request::new(&q.query, 10));
                let loaded =
                    found.hits[..found.loads].iter().filter(|h| is_gold(q, &set.catalog, h.tool)).count();
                let without_gold = set.catalog.filter(|t| !q.gold.contains(&q.gold_level.label(t)));
                let other = Index::builder().build(&without_gold).search(Request::new(&q.query, 10));
                let other_dense = DenseIndex::build(&without_gold, model);
                rows.push(Row {
                    set: name.clone(),
                    part,
                    loaded_recall: loaded as f64 / q.gold.len().max(1) as f64,
                    intact: signals(&found, &whole_dense, &q.query),
                    without: signals(&other, &other_dense, &q.query),
                });
            }
        }
    }
    let candidates: [(&str, Signal); 4] = [
        ("standout", |s| s.standout.ln()),
        ("cosine", |s| s.cosine),
        ("standout + cosine", |s| s.standout.ln() + s.cosine),
        ("standout + cosine - unmatched", |s| s.standout.ln() + s.cosine - s.unmatched),
    ];
    let mut out = std::io::stdout().lock();
    let mut parts: Vec<(String, &str)> = rows.iter().map(|r| (r.set.clone(), r.part)).collect();
    parts.dedup();
    for (label, signal) in candidates {
        // Each part's (recall lost on intact requests, share loading nothing without gold).
        // (recall lost on the intact requests, share loading nothing without gold) of the
        // requests `of` selects.
        let measure = |threshold: f64, of: &dyn Fn(&Row) -> bool| {
            let of: Vec<&Row> = rows.iter().filter(|r| of(r)).collect();
            let n = of.len().max(1) as f64;
            let lost: f64 =
                of.iter().filter(|r| signal(&r.intact) < threshold).map(|r| r.loaded_recall).sum::<f64>()
                    + 0.0;
            let nothing = of.iter().filter(|r| signal(&r.without) < threshold).count() as f64;
            (lost / n, nothing / n)
        };
        let mut values: Vec<f64> = rows.iter().map(|r| signal(&r.intact)).collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        let tune = |r: &Row| r.part == "tune";
        let threshold = values
            .iter()
            .copied()
            .rev()
            .find(|&t| measure(t, &tune).0 <= MAX_LOSS)
            .unwrap_or(f64::NEG_INFINITY);
        writeln!(
            out,
            "{label} below {threshold:.3}: recall lost on intact requests / share loading nothing without gold"
        )?;
        for (set, part) in &parts {
            let (lost, nothing) = measure(threshold, &|r: &Row| r.set == *set && r.part == *part);
            writeln!(out, "  {set:<13} {part:<5} {lost:.3} / {nothing:.3}")?;
        }
        for part in ["tune", "check"] {
            let (lost, nothing) = measure(threshold, &|r: &Row| r.part == part);
            writeln!(out, "  {:<13} {part:<5} {lost:.3} / {nothing:.3}", "all")?;
        }
    }
    Ok(())
}
