//! How well a search tells "nothing fits" (issue 44, item 5): each request of the bench sets
//! is searched over its catalog, and over the catalog without its gold tools, where the honest
//! answer is that nothing fits.
//!
//! First, the rule built in ([`LoadCut::fit`]): for each threshold, each part's recall lost
//! by its intact requests (of what they load with the rule off) and the share of its gold-less
//! searches that load nothing. Then the signals studied before it was built: for each, the
//! threshold below which a search would load nothing is chosen on the `tune` parts (the
//! highest that costs the intact `tune` requests, all sets together, at most 0.01 of the
//! recall of what they load; with `PER_PART=1`, each `tune` part), and each part, then all
//! `check` requests together, shows what that threshold costs the intact requests and how
//! often it loads nothing once the gold tools are gone. With `SHOW=1`, every intact request
//! the built rule (at 0) loads nothing for goes to stderr.
//!
//! `cargo run --release -p toolgate-search --example nothing_fits -- bench/acebench-en bench/acebench-zh bench/livemcp-zh bench/livemcpbench bench/metatool`

use std::io::Write;

use toolgate_catalog::{Catalog, ToolId};
use toolgate_search::eval::{BenchSet, Query};
use toolgate_search::semantic::{DenseIndex, StaticModel};
use toolgate_search::{Found, Index, LOAD_CUT, LoadCut, NOTHING_FITS, Request};

/// The recall a part may lose on its intact requests.
const MAX_LOSS: f64 = 0.01;

/// The thresholds of [`LoadCut::fit`] measured.
const FITS: [f32; 6] = [0.0, 0.01, 0.02, 0.03, NOTHING_FITS, 0.05];

/// What one search says of how well its best hits fit.
#[derive(Clone, Copy)]
struct Signals {
    /// The first hit's score over the tenth's (how far the best stands out).
    standout: f64,
    /// The first hit's cosine to the request under the compiled-in model.
    cosine: f64,
    /// Words of the request that no tool has, over its words.
    unmatched: f64,
    /// The share of the request's words the model reads.
    coverage: f64,
    /// The nearest tool's cosine less the tenth nearest's, over the whole catalog.
    dense_standout: f64,
    /// Whether the first hit is among the five nearest tools by meaning alone.
    agree: f64,
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
    /// With [`LoadCut::fit`] at each of [`FITS`]: the recall of what the intact search loads,
    /// and whether the gold-less one loads nothing.
    built: Vec<(f64, bool)>,
}

fn signals(found: &Found, dense: &DenseIndex, query: &str) -> Signals {
    let scores: Vec<f64> = found.hits.iter().map(|h| f64::from(h.score)).filter(|s| s.is_finite()).collect();
    let standout = match (scores.first(), scores.last()) {
        (Some(&a), Some(&b)) if b > 0.0 => a / b,
        _ => 1.0,
    };
    let cosine = found.hits.first().map_or(0.0, |h| f64::from(dense.similarity(query, h.tool)));
    let words = query.split_whitespace().count().max(1) as f64;
    let near = dense.search(query, 10);
    let dense_standout = match (near.first(), near.last()) {
        (Some(a), Some(b)) => f64::from(a.1 - b.1),
        _ => 0.0,
    };
    let agree = found.hits.first().is_some_and(|h| near.iter().take(5).any(|n| n.0 == h.tool));
    Signals {
        standout,
        cosine,
        unmatched: found.unmatched_terms.len() as f64 / words,
        coverage: f64::from(dense.model().coverage(query)),
        dense_standout,
        agree: if agree { 1.0 } else { 0.0 },
    }
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
                let off = LoadCut { fit: f32::NEG_INFINITY, ..LOAD_CUT };
                let cut = |fit| Request { cut: LoadCut { fit, ..LOAD_CUT }, ..Request::new(&q.query, 10) };
                let recall = |found: &Found| {
                    let loaded =
                        found.hits[..found.loads].iter().filter(|h| is_gold(q, &set.catalog, h.tool)).count();
                    loaded as f64 / q.gold.len().max(1) as f64
                };
                let found = whole.search(Request { cut: off, ..Request::new(&q.query, 10) });
                let without_gold = set.catalog.filter(|t| !q.gold.contains(&q.gold_level.label(t)));
                let other_index = Index::builder().build(&without_gold);
                let other = other_index.search(Request { cut: off, ..Request::new(&q.query, 10) });
                let built = FITS
                    .iter()
                    .map(|&fit| {
                        let gone = other_index.search(cut(fit));
                        if std::env::var_os("SHOW").is_some()
                            && fit == 0.0
                            && whole.search(cut(fit)).loads == 0
                        {
                            let _ = writeln!(
                                std::io::stderr(),
                                "{name} {part} intact nothing-fits: {:?} recall {}",
                                q.query,
                                recall(&found)
                            );
                        }
                        (recall(&whole.search(cut(fit))), gone.loads == 0)
                    })
                    .collect();
                let other_dense = DenseIndex::build(&without_gold, model);
                rows.push(Row {
                    set: name.clone(),
                    part,
                    loaded_recall: recall(&found),
                    built,
                    intact: signals(&found, &whole_dense, &q.query),
                    without: signals(&other, &other_dense, &q.query),
                });
            }
        }
    }
    let mut out = std::io::stdout().lock();
    let mut parts: Vec<(String, &str)> = rows.iter().map(|r| (r.set.clone(), r.part)).collect();
    parts.dedup();
    writeln!(
        out,
        "built in, LoadCut::fit at each threshold: recall lost on intact requests / share loading nothing without gold"
    )?;
    for (i, fit) in FITS.iter().enumerate() {
        writeln!(out, "fit {fit}")?;
        let measure = |of: &dyn Fn(&Row) -> bool| {
            let of: Vec<&Row> = rows.iter().filter(|r| of(r)).collect();
            let n = of.len().max(1) as f64;
            let lost: f64 = of.iter().map(|r| r.loaded_recall - r.built[i].0).sum();
            let nothing = of.iter().filter(|r| r.built[i].1).count() as f64;
            (lost / n, nothing / n)
        };
        for (set, part) in &parts {
            let (lost, nothing) = measure(&|r: &Row| r.set == *set && r.part == *part);
            writeln!(out, "  {set:<13} {part:<5} {lost:.4} / {nothing:.3}")?;
        }
        for part in ["tune", "check"] {
            let (lost, nothing) = measure(&|r: &Row| r.part == part);
            writeln!(out, "  {:<13} {part:<5} {lost:.4} / {nothing:.3}", "all")?;
        }
    }
    let candidates: [(&str, Signal); 9] = [
        ("cosine where read", |s| if s.coverage < 0.5 { 1.0 } else { s.cosine }),
        ("standout + cosine where read", |s| s.standout.ln() + if s.coverage < 0.5 { 1.0 } else { s.cosine }),
        ("dense standout", |s| if s.coverage < 0.5 { 1.0 } else { s.dense_standout }),
        ("standout + agree", |s| s.standout.ln() + s.agree),
        ("standout + cosine + agree", |s| s.standout.ln() + s.cosine + 0.2 * s.agree),
        ("standout", |s| s.standout.ln()),
        ("cosine", |s| s.cosine),
        ("standout + cosine", |s| s.standout.ln() + s.cosine),
        ("standout + cosine - unmatched", |s| s.standout.ln() + s.cosine - s.unmatched),
    ];
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
            .find(|&t| {
                if std::env::var_os("PER_PART").is_some() {
                    parts.iter().filter(|p| p.1 == "tune").all(|(set, part)| {
                        measure(t, &|r: &Row| r.set == *set && r.part == *part).0 <= MAX_LOSS
                    })
                } else {
                    measure(t, &tune).0 <= MAX_LOSS
                }
            })
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
