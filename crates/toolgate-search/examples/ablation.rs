//! Leave one set out: what each family of rules of the default `lexical` ranking does on each
//! bench set, and whether a decision taken without a set holds on it.
//!
//! `cargo run --release -p toolgate-search --example ablation [BENCH_DIR]`. For each family (the
//! Chinese vocabulary, synonyms, kinds, fields, the down-weighting of numbers, the expansions
//! of words no tool has, the latest request of a conversation, the needs of a task), the
//! ranking is run with that family turned off, and the change of nDCG@10 it causes is printed
//! per set and part (negative: the family helps). Leave one set out: for each set, the family
//! is kept if turning it off costs the *other* sets' `tune` parts nDCG@10 (their mean, each
//! weighted by its number of queries), dropped if it gains them some, and undecided (no
//! evidence) if it moves them by less than 0.0005; the table says whether that decision helps
//! this set's `check` part.

#![allow(clippy::print_stdout)]

use toolgate_catalog::Catalog;
use toolgate_search::Expansion;
use toolgate_search::eval::{BenchSet, Query, evaluate_with};
use toolgate_search::{Index, Strategy};

const SETS: [&str; 5] = ["livemcpbench", "metatool", "acebench-en", "acebench-zh", "livemcp-zh"];

/// A family of rules, and the ranking with it turned off.
fn families() -> Vec<(&'static str, Expansion)> {
    let on = Expansion::default();
    vec![
        ("Chinese vocabulary", Expansion { vocabulary: 0.0, ..on }),
        ("synonyms", Expansion { synonym: 0.0, ..on }),
        ("kinds", Expansion { kind: 0.0, ..on }),
        ("fields (topics)", Expansion { topic: 0.0, ..on }),
        ("numbers down-weighted", Expansion { number: 1.0, ..on }),
        ("words no tool has", Expansion { unsaid: 0.0, ..on }),
        ("latest request", Expansion { latest: 0.0, ..on }),
        ("needs of a task", Expansion { needs: false, ..on }),
    ]
}

fn ndcg(catalog: &Catalog, queries: &[Query], expansion: Expansion) -> f64 {
    let builder = Index::builder().strategy(Strategy::Lexical).expansion(expansion);
    evaluate_with(catalog, queries, builder, &[5]).all.ndcg10
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "bench".to_owned());
    // Per set: (catalog, tune queries, check queries).
    let mut sets = Vec::new();
    for set in SETS {
        let BenchSet { catalog, tune, check } = BenchSet::load(format!("{dir}/{set}").as_ref())?;
        sets.push((catalog, tune, check));
    }
    let base: Vec<(f64, f64)> = sets
        .iter()
        .map(|(c, t, k)| (ndcg(c, t, Expansion::default()), ndcg(c, k, Expansion::default())))
        .collect();
    println!("nDCG@10 of `lexical`, tune / check (queries):");
    for ((set, (t, k)), (_, tq, kq)) in SETS.iter().zip(&base).zip(&sets) {
        println!("  {set:<13} {t:.3} / {k:.3} ({} / {})", tq.len(), kq.len());
    }
    println!();
    println!("Change of nDCG@10 with the family turned off (tune / check), and the leave-one-set-out");
    println!("decision for each set (keep or drop, from the other sets' tune parts) with its effect");
    println!("on that set's check part:");
    println!();
    print!("| family |");
    for set in SETS {
        print!(" {set} |");
    }
    println!(" decisions that help / hurt / do nothing |");
    print!("|---|");
    for _ in SETS {
        print!("---|");
    }
    println!("---|");
    for (name, off) in families() {
        let deltas: Vec<(f64, f64)> = sets
            .iter()
            .zip(&base)
            .map(|((c, t, k), (bt, bk))| (ndcg(c, t, off) - bt, ndcg(c, k, off) - bk))
            .collect();
        print!("| {name} |");
        let (mut help, mut hurt, mut none) = (0, 0, 0);
        for (i, (dt, dk)) in deltas.iter().enumerate() {
            let (mut sum, mut n) = (0.0, 0.0);
            for (j, d) in deltas.iter().enumerate().filter(|(j, _)| *j != i) {
                let weight = sets[j].1.len() as f64;
                sum += d.0 * weight;
                n += weight;
            }
            let others = sum / n;
            let (verdict, effect) = match others {
                o if o < -0.0005 => ("keep", -dk),
                o if o > 0.0005 => ("drop", *dk),
                _ => ("no evidence", 0.0),
            };
            match effect {
                e if e > 0.0005 => help += 1,
                e if e < -0.0005 => hurt += 1,
                _ => none += 1,
            }
            print!(" {dt:+.3} / {dk:+.3} ({verdict}, {effect:+.3}) |");
        }
        println!(" {help} / {hurt} / {none} |");
    }
    Ok(())
}
