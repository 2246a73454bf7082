//! Leave one set out, entry by entry: what each hand-written vocabulary entry adds to the
//! default ranking beyond the general resources (WordNet, CC-CEDICT), on each bench set.
//!
//! `cargo run --release -p toolgate-search --example vocabulary [BENCH_DIR] > entries.tsv`. For each
//! line of `zh_en.tsv`, `synonyms.tsv`, `kinds.tsv` and `topics.tsv`, the `lexical` ranking is
//! run without that line (the general resources still give what they have for its words) on
//! the requests the line can touch (those holding its Chinese word, or a word beginning like
//! one of its English words), and the change of nDCG@10 over the whole part is the entry's
//! figure (positive: the entry helps). The set where the entry helps its `tune` part most is
//! taken as the set it was written for. Each entry gets one of three decisions:
//!
//! - `keep`: it helps the other sets' `tune` parts together (their figures summed);
//! - `own`: it helps the set it was written for and moves no other set: no evidence either way
//!   from other sets (the `check` parts, held-out requests of the same set, are its only test);
//! - `drop`: it moves nothing, or it costs the other sets.
//!
//! Output: a header line (`#`), then one tab-separated line per entry: file, line, decision,
//! the summed figure on the other sets, the per-set `tune` figures, the per-set `check`
//! figures, the entry. `docs/vocabulary-entries.tsv` is this output as shipped. At the end
//! (standard error), every set's figures with every entry and without those dropped;
//! `VOCAB_ONLY_TOTALS=1` skips the entries and prints them with none at all.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use toolgate_catalog::Catalog;
use toolgate_search::HandEntry;
use toolgate_search::IndexBuilder;
use toolgate_search::eval::{BenchSet, Query, evaluate_with};
use toolgate_search::{Index, Strategy};

/// A change of nDCG@10 below this is no effect.
const EPSILON: f64 = 1e-6;

const SETS: [&str; 5] = ["livemcpbench", "metatool", "acebench-en", "acebench-zh", "livemcp-zh"];

/// A bench set: its catalog and its two parts' queries, lower-cased for matching.
struct Set {
    catalog: Catalog,
    parts: [Vec<(Query, String)>; 2],
}

/// What an entry can be triggered by: its Chinese words, and the beginnings of its English
/// words (an analyzer's stem such as `studi` begins like `study` once its last letter goes).
fn cues(entry: &HandEntry) -> Vec<String> {
    let text = entry.text.as_str();
    let (chinese, english) = match entry.file {
        "zh_en.tsv" => text.split_once('\t').unwrap_or((text, "")),
        "kinds.tsv" | "topics.tsv" => ("", text.split_once(':').map_or(text, |(_, s)| s)),
        _ => ("", text),
    };
    let mut out: Vec<String> = Vec::new();
    if !chinese.is_empty() {
        out.push(chinese.to_owned());
    }
    for alt in english.split(',').map(str::trim) {
        // A phrase of several words is only looked for from the Chinese side.
        if alt.contains(' ') || alt.is_empty() {
            continue;
        }
        let keep = if alt.len() <= 4 { alt.len() } else { 4 };
        out.push(alt[..keep].to_owned());
    }
    out
}

/// nDCG@10 of `builder` on `queries`, times their share of `total` queries.
fn share(catalog: &Catalog, queries: &[Query], builder: IndexBuilder, total: usize) -> f64 {
    if queries.is_empty() {
        return 0.0;
    }
    evaluate_with(catalog, queries, builder, &[5]).all.ndcg10 * queries.len() as f64 / total as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "bench".to_owned());
    let mut sets = Vec::new();
    for set in SETS {
        let BenchSet { catalog, tune, check } = BenchSet::load(format!("{dir}/{set}").as_ref())?;
        let lower = |q: Query| {
            let l = q.query.to_lowercase();
            (q, l)
        };
        let parts = [tune.into_iter().map(lower).collect(), check.into_iter().map(lower).collect()];
        sets.push(Set { catalog, parts });
    }
    let base = || Index::builder().strategy(Strategy::Lexical);
    let entries = HandEntry::all();
    let (mut kept, mut dropped) = (Vec::new(), Vec::new());
    let only = std::env::var("VOCAB_ONLY_TOTALS").is_ok();
    if !only {
        let columns = |part: &str| SETS.map(|s| format!("{part} {s}")).join("\t");
        println!(
            "# file\tline\tdecision\tother sets' tune\t{}\t{}\tentry",
            columns("tune"),
            columns("check")
        );
    }
    for (n, entry) in entries.iter().enumerate().filter(|_| !only) {
        let cues = cues(entry);
        // figures[part][set]
        let mut figures = [[0.0f64; SETS.len()]; 2];
        let mut without: Option<IndexBuilder> = None;
        for (si, set) in sets.iter().enumerate() {
            for (pi, part) in set.parts.iter().enumerate() {
                let touched: Vec<Query> = part
                    .iter()
                    .filter(|(_, l)| cues.iter().any(|c| l.contains(c.as_str())))
                    .map(|(q, _)| q.clone())
                    .collect();
                if touched.is_empty() {
                    continue;
                }
                let without = without
                    .get_or_insert_with(|| base().without_hand_written(std::slice::from_ref(entry)))
                    .clone();
                let total = part.len();
                figures[pi][si] = share(&set.catalog, &touched, base(), total)
                    - share(&set.catalog, &touched, without, total);
            }
        }
        let tune = figures[0];
        let best = (0..SETS.len()).max_by(|&a, &b| tune[a].total_cmp(&tune[b])).unwrap_or(0);
        let others: f64 = (0..SETS.len()).filter(|&i| i != best).map(|i| tune[i]).sum();
        // A figure this small is one query's rounding, not an effect.
        let decision = if others > EPSILON {
            "keep"
        } else if tune[best] > EPSILON && others > -EPSILON {
            "own"
        } else {
            "drop"
        };
        if decision == "drop" {
            dropped.push(entry.clone());
        } else {
            kept.push(entry.clone());
        }
        let fmt = |v: &[f64; SETS.len()]| v.iter().map(|x| format!("{x:+.4}")).collect::<Vec<_>>().join("\t");
        println!(
            "{}\t{}\t{}\t{others:+.4}\t{}\t{}\t{}",
            entry.file,
            entry.line,
            decision,
            fmt(&figures[0]),
            fmt(&figures[1]),
            entry.text.replace('\t', " → ")
        );
        if n % 100 == 99 {
            eprintln!("{} of {} entries", n + 1, entries.len());
        }
    }
    eprintln!("kept {}, dropped {} (sets: {})", kept.len(), dropped.len(), SETS.join(", "));
    // Every entry, the ones dropped, and none: nDCG@10 per set, tune / check.
    let all_dropped = if only { entries.clone() } else { dropped };
    let variants =
        [("with every entry", base()), ("without those dropped", base().without_hand_written(&all_dropped))];
    for (name, builder) in variants {
        let figures: Vec<String> = sets
            .iter()
            .zip(SETS)
            .map(|(set, label)| {
                let [t, c] = set.parts.each_ref().map(|p| {
                    let queries: Vec<Query> = p.iter().map(|(q, _)| q.clone()).collect();
                    share(&set.catalog, &queries, builder.clone(), queries.len())
                });
                format!("{label} {t:.3} / {c:.3}")
            })
            .collect();
        eprintln!("{name}: {}", figures.join(", "));
    }
    Ok(())
}
