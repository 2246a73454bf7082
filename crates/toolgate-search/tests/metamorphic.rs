//! The default ranking reads what a request asks for, not how it is laid out. Every request of
//! every development set (`bench/`) is changed in ways that leave what it asks for as it was
//! (`tests/data/perturbations.json`: a closing paragraph of thanks or generic instructions, a
//! greeting, a deadline, a time frame, an answer format, a signature, quotes, bullets, lines
//! joined or split, capitals), and:
//!
//! - the default strategy's nDCG@10 on each set and part loses under each change at most 0.02,
//!   or at most what plain `bm25f` loses under the same change where that is more (issue 44's
//!   bar: a change that costs any reader of the words costs the default no more);
//! - a change that adds words never brings into the top 5 a tool the request as written does
//!   not match at all: a tool found by an incidental word alone does not displace the subject.
//! - under every change, as on the requests as written, the default stays at or above plain
//!   `bm25f` on each set and part.
//!
//! The changes that add words are, in English and Chinese, a closing paragraph of thanks or
//! generic instructions, a greeting, a deadline, a time frame, an answer format, a signature, a
//! heading, a background line and urgency.
//!
//! Not every change meets that yet. The data file's `open_STRATEGY` lists, for each change
//! that adds words, the set parts it still costs more than that bar and the figure measured
//! there, and `incidental_open_STRATEGY` how many (request, tool) pairs a change still lets in;
//! those may not get worse (0.005 of nDCG@10 is noise), and everything not listed must meet the
//! bar. A change of layout alone (quotes, bullets, lines joined or split, capitals) has no
//! entry: a rule keyed on lines or paragraphs fails here at once (the latest-paragraph rule
//! moved acebench-en's `tune` part by 0.024 when its lines were joined).
//!
//! The default is `semantic` since issue 44 (`lexical` in a build without that feature);
//! `lexical` is held to the same bars, and meets them everywhere. `semantic` has one gap:
//! livemcpbench's `tune` part under a background line (0.041 where it may lose 0.022).
//!
//! A sentence about the reply ("Answer in a short, structured list …", "keep the answer
//! short", `回答要简短`) and a request's closing thanks ("Thanks in advance, …", `先谢谢了，…`)
//! count as a label does (`src/label.rs`); with them read as the request's other words, the
//! answer format costs metatool's `check` part 0.047 and livemcpbench's up to 0.059, the Chinese
//! thanks livemcp-zh's 0.023, and this test fails.
//!
//! `bert` (a full model given) is held to issue 44's bar for it: at most 0.02 under any change,
//! with no allowance for what `bm25f` loses. It takes the full model over every request sixteen
//! times (about ten minutes in a release build on 2 cores), so it runs by hand:
//! `cargo test --release -p toolgate-search --features bert --test metamorphic -- --ignored
//! --nocapture bert` (`TOOLGATE_MODEL`, else `e2e/model`). Its gaps are `open_bert`: a
//! background line, a deadline and a Chinese greeting, on metatool, livemcpbench and
//! livemcp-zh, which it inherits from `lexical`'s side of its mix (the model alone loses at
//! most 0.018 under the closing paragraphs on metatool).
//!
//! A heading and a background line open with a label ("Task description:", `背景：`), whose
//! words count little (`src/label.rs`); with every label read as a word, the heading costs
//! livemcp-zh 0.09 and 0.115 and this test fails.
//!
//! "Nothing fits" (a search that loads nothing when the request is far in meaning from its
//! first hit, `LoadCut::fit`) is held too: under every change that adds words it costs each
//! set's part at most 0.005 more of the recall of what a search loads than on the requests as
//! written. With the framing words read by the dense side (`says_nothing` keeping only
//! punctuation out), a closing paragraph of generic instructions costs metatool's `check` part
//! 0.0102 against 0.0034 as written, and that test fails.
//!
//! The table of figures is printed (`cargo test -p toolgate-search --test metamorphic -- --nocapture`).

#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolgate_catalog::{Catalog, ToolId};
use toolgate_search::Request;
use toolgate_search::eval::{Part, Query, Ranker, evaluate_ranker, load_queries};
use toolgate_search::{Index, IndexBuilder, Strategy};

const SETS: [&str; 5] = ["acebench-en", "acebench-zh", "livemcp-zh", "livemcpbench", "metatool"];

/// The most nDCG@10 a change may cost a set's part, unless it costs plain `bm25f` more.
const TOLERANCE: f64 = 0.02;

fn bench() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench")
}

/// One change of the data file.
struct Perturbation {
    name: String,
    form: String,
    en: String,
    zh: String,
}

fn data() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perturbations.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn perturbations() -> Vec<Perturbation> {
    let doc = data();
    let text = |p: &Value, k: &str| p[k].as_str().unwrap_or_default().to_owned();
    doc["perturbations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| Perturbation {
            name: text(p, "name"),
            form: text(p, "form"),
            en: text(p, "en"),
            zh: text(p, "zh"),
        })
        .collect()
}

/// The sentences of `text`, their closing punctuation kept.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' {
            out.push(std::mem::take(&mut current));
            continue;
        }
        current.push(c);
        let ends = matches!(c, '。' | '？' | '！')
            || (matches!(c, '.' | '?' | '!') && chars.peek().is_none_or(|n| n.is_whitespace()));
        if ends {
            out.push(std::mem::take(&mut current));
        }
    }
    out.push(current);
    out.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
}

/// `query` changed by `p` (its words in the query's language).
fn perturb(p: &Perturbation, query: &str, lang: &str) -> String {
    let zh = lang != "en";
    let words = if zh { &p.zh } else { &p.en };
    match p.form.as_str() {
        "paragraph_after" => format!("{query}\n\n{words}"),
        "paragraph_before" => format!("{words}\n\n{query}"),
        "sentence_after" if zh => format!("{query}{words}"),
        "sentence_after" => format!("{query} {words}"),
        "quoted" if zh => format!("“{query}”"),
        "quoted" => format!("\"{query}\""),
        "bullets" => sentences(query).iter().map(|s| format!("- {s}")).collect::<Vec<_>>().join("\n"),
        "lines_joined" => query.lines().map(str::trim).collect::<Vec<_>>().join(" "),
        "sentence_per_line" => sentences(query).join("\n"),
        "upper_case" => query.to_uppercase(),
        other => panic!("perturbation `{}` has an unknown form `{other}`", p.name),
    }
}

/// Whether the form adds words to the request.
fn adds_words(p: &Perturbation) -> bool {
    matches!(p.form.as_str(), "paragraph_after" | "paragraph_before" | "sentence_after")
}

fn ndcg(index: &Index, catalog: &Catalog, queries: &[Query]) -> f64 {
    let mut rank = |q: &str| index.search(Request::new(q, usize::MAX));
    let mut time = |_: &str| {};
    let ranker = Ranker {
        label: "default",
        strategy: index.strategy(),
        build_ms: 0.0,
        rank: &mut rank,
        time: &mut time,
    };
    evaluate_ranker(catalog, queries, &[5], ranker, &mut || {}).all.ndcg10
}

/// What the data file's `open` records for change `name` on `set`: the figures of its tune
/// and check parts under the change.
fn recorded(doc: &Value, open: &str, name: &str, set: &str) -> Option<[f64; 2]> {
    let pair = doc[open][name][set].as_array()?;
    Some([pair[0].as_f64()?, pair[1].as_f64()?])
}

#[test]
fn the_ranking_does_not_move_with_the_layout_of_a_request() {
    holds_its_ranking(Index::builder().strategy(Strategy::DEFAULT), Bar::Peer);
}

/// `lexical`, the default before issue 44 and without the `semantic` feature, stays held to
/// the same bars with gaps of its own.
#[cfg(feature = "semantic")]
#[test]
fn lexical_does_not_move_with_the_layout_of_a_request() {
    holds_its_ranking(Index::builder().strategy(Strategy::Lexical), Bar::Peer);
}

/// `bert`, given a full model (`TOOLGATE_MODEL`, else `e2e/model` as `e2e/setup.sh` leaves
/// it), may lose at most 0.02 under any change (issue 44's bar for it: no allowance for what
/// `bm25f` loses), with the gaps `open_bert` records. It embeds every request of the five
/// sets sixteen times with the full model; `scripts/README.md` says how long that takes.
#[cfg(feature = "bert")]
#[test]
#[ignore = "the full model over every request sixteen times; run it by hand with --ignored"]
fn bert_does_not_move_with_the_layout_of_a_request() {
    use std::sync::Arc;
    use toolgate_search::semantic::bert::BertModel;
    let dir = std::env::var_os("TOOLGATE_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e/model"));
    let model = Arc::new(BertModel::open(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())));
    holds_its_ranking(Index::builder().model(model), Bar::Strict);
}

/// What a change may cost a strategy's set parts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bar {
    /// [`TOLERANCE`], or what it costs plain `bm25f` where that is more; the strategy stays at
    /// or above `bm25f` under every change; and no tool may be let into a top 5 by the added
    /// words alone more often than recorded.
    Peer,
    /// [`TOLERANCE`] only.
    Strict,
}

/// Ranks every request of every set with the indexes `builder` makes as written and under
/// every change, and checks `bar` against the gaps the data file records for its strategy
/// (`open_STRATEGY`, `incidental_open_STRATEGY`).
fn holds_its_ranking(builder: IndexBuilder, bar: Bar) {
    let strategy = builder.strategy_of();
    let doc = data();
    let open = &format!("open_{}", strategy.as_str());
    let incidental_open = &format!("incidental_open_{}", strategy.as_str());
    let perturbations = perturbations();
    assert!(perturbations.len() >= 10, "the data file holds the changes");
    let mut moved = Vec::new();
    let mut behind = Vec::new();
    let mut incidental = Vec::new();
    println!("nDCG@10 of `{}`, tune / check, as written and under each change:", strategy.as_str());
    for set in SETS {
        let catalog = Catalog::from_path(&bench().join(set).join("catalog.jsonl")).unwrap();
        let path = bench().join(set).join("queries.jsonl");
        let queries = load_queries(set, &std::fs::read_to_string(&path).unwrap(), &catalog).unwrap();
        let index = builder.clone().build(&catalog);
        // The peer the default must stay ahead of, under every change as on the requests as
        // written: the same BM25F without the reading of the request.
        let plain = Index::builder().strategy(Strategy::Bm25f).build(&catalog);
        let (tune, check): (Vec<Query>, Vec<Query>) =
            queries.iter().cloned().partition(|q| Part::of(&q.id) == Part::Tune);
        let base = [ndcg(&index, &catalog, &tune), ndcg(&index, &catalog, &check)];
        let plain_base = [ndcg(&plain, &catalog, &tune), ndcg(&plain, &catalog, &check)];
        println!(
            "{set:<13} {:>22} {:.3} / {:.3}  (bm25f {:.3} / {:.3})",
            "as written", base[0], base[1], plain_base[0], plain_base[1]
        );
        for p in &perturbations {
            let changed = |part: &[Query]| -> Vec<Query> {
                part.iter().map(|q| Query { query: perturb(p, &q.query, &q.lang), ..q.clone() }).collect()
            };
            let (tune, check) = (changed(&tune), changed(&check));
            let figures = [ndcg(&index, &catalog, &tune), ndcg(&index, &catalog, &check)];
            let peer = [ndcg(&plain, &catalog, &tune), ndcg(&plain, &catalog, &check)];
            for ((part, f), p_) in ["tune", "check"].iter().zip(&figures).zip(&peer) {
                if bar == Bar::Peer && f < p_ {
                    behind.push(format!("{set} {part} under `{}`: {f:.3}, bm25f {p_:.3}", p.name));
                }
            }
            // What the change may cost each part: the tolerance, or what it costs `bm25f`.
            let allowed: Vec<f64> = (0..2)
                .map(|i| if bar == Bar::Peer { TOLERANCE.max(plain_base[i] - peer[i]) } else { TOLERANCE })
                .collect();
            let over = |i: usize| base[i] - figures[i] > allowed[i] + 1e-9;
            let mark = if over(0) || over(1) { "  <-" } else { "" };
            println!(
                "{set:<13} {:>22} {:.3} / {:.3}{mark}  (bm25f {:.3} / {:.3})",
                p.name, figures[0], figures[1], peer[0], peer[1]
            );
            let open = recorded(&doc, open, &p.name, set);
            for (i, (part, (f, b))) in ["tune", "check"].iter().zip(figures.iter().zip(&base)).enumerate() {
                match open {
                    // A known gap may not widen.
                    Some(was) if *f < was[i] - 0.005 => {
                        moved.push(format!(
                            "{set} {part} under `{}`: {f:.3}, below the {:.3} recorded",
                            p.name, was[i]
                        ));
                    }
                    Some(_) => {}
                    None if over(i) => {
                        moved.push(format!(
                            "{set} {part} under `{}`: {b:.3} -> {f:.3} (may lose {:.3})",
                            p.name, allowed[i]
                        ));
                    }
                    None => {}
                }
            }
            if !adds_words(p) {
                assert!(open.is_none(), "`{}` changes layout only; it has no known gap", p.name);
                continue;
            }
            if bar == Bar::Strict {
                continue;
            }
            for q in &queries {
                let matched: Vec<ToolId> =
                    index.search(Request::new(&q.query, usize::MAX)).hits.iter().map(|h| h.tool).collect();
                let changed = perturb(p, &q.query, &q.lang);
                for hit in index.search(Request::new(&changed, 5)).hits {
                    if !matched.contains(&hit.tool) {
                        let name = catalog.tool(hit.tool).qualified_name().to_owned();
                        incidental.push(format!("{set} {} under `{}`: {name}", q.id, p.name));
                    }
                }
            }
        }
    }
    assert!(moved.is_empty(), "a change cost the ranking more than it may:\n{}", moved.join("\n"));
    assert!(behind.is_empty(), "the default fell behind plain bm25f:\n{}", behind.join("\n"));
    if bar == Bar::Strict {
        return;
    }
    println!("(request, tool) pairs let into a top 5 by the added words alone:");
    let mut over = Vec::new();
    for p in perturbations.iter().filter(|p| adds_words(p)) {
        let tag = format!(" under `{}`: ", p.name);
        let found: Vec<&String> = incidental.iter().filter(|i| i.contains(&tag)).collect();
        let allowed = doc[incidental_open][&p.name].as_u64().unwrap_or(0) as usize;
        println!("  {:<22} {} (recorded {allowed})", p.name, found.len());
        if found.len() > allowed {
            over.push(format!("`{}`: {} (recorded {allowed}), e.g. {}", p.name, found.len(), found[0]));
        }
    }
    assert!(
        over.is_empty(),
        "tools found only by the added words entered a top 5 more often:\n{}",
        over.join("\n")
    );
}

/// The most "nothing fits" may cost a set's part under a change that adds words, over what it
/// costs the requests as written (of the recall of what a search loads; 0.005 is one request
/// in two hundred).
const UNFIT_TOLERANCE: f64 = 0.005;

/// "Nothing fits" (`LoadCut::fit`) reads what a request asks, not its framing: under every
/// change that adds words, it costs each set's part at most [`UNFIT_TOLERANCE`] more of the
/// recall of what a search loads than on the requests as written. A framing sentence that
/// moved the request's meaning away from every tool would make a search that fits load
/// nothing.
#[cfg(feature = "semantic")]
#[test]
fn nothing_fits_does_not_fire_for_the_framing_of_a_request() {
    use toolgate_search::eval::evaluate_with_cut;
    use toolgate_search::{LOAD_CUT, LoadCut};
    let off = LoadCut { fit: f32::NEG_INFINITY, ..LOAD_CUT };
    let mut over = Vec::new();
    println!("recall of what a search loads that \"nothing fits\" costs, tune / check:");
    for set in SETS {
        let catalog = Catalog::from_path(&bench().join(set).join("catalog.jsonl")).unwrap();
        let path = bench().join(set).join("queries.jsonl");
        let queries = load_queries(set, &std::fs::read_to_string(&path).unwrap(), &catalog).unwrap();
        let builder = Index::builder().strategy(Strategy::Semantic);
        let unfit = |queries: &[Query]| -> [f64; 2] {
            let loaded = |cut| {
                let report = evaluate_with_cut(&catalog, queries, builder.clone(), &[5], cut, &mut || {});
                [Part::Tune, Part::Check].map(|p| report.by_part.get(&p).map_or(0.0, |m| m.recall_loaded5))
            };
            let (without, with) = (loaded(off), loaded(LOAD_CUT));
            [without[0] - with[0], without[1] - with[1]]
        };
        let base = unfit(&queries);
        println!("{set:<13} {:>22} {:.4} / {:.4}", "as written", base[0], base[1]);
        for p in perturbations().iter().filter(|p| adds_words(p)) {
            let changed: Vec<Query> =
                queries.iter().map(|q| Query { query: perturb(p, &q.query, &q.lang), ..q.clone() }).collect();
            let got = unfit(&changed);
            println!("{set:<13} {:>22} {:.4} / {:.4}", p.name, got[0], got[1]);
            for (part, (g, b)) in ["tune", "check"].iter().zip(got.iter().zip(base)) {
                if *g > b + UNFIT_TOLERANCE {
                    over.push(format!("{set} {part} under {}: {g:.4} (as written {b:.4})", p.name));
                }
            }
        }
    }
    assert!(over.is_empty(), "framing makes \"nothing fits\" cost more:\n{}", over.join("\n"));
}

#[test]
fn the_changes_keep_every_word_of_the_request() {
    let p = perturbations();
    let request = "Find my notes. Then email them to Bob?\nThanks";
    for change in &p {
        let changed = perturb(change, request, "en");
        for word in ["Find", "notes", "email", "Bob", "Thanks"] {
            assert!(changed.to_lowercase().contains(&word.to_lowercase()), "{}: {changed}", change.name);
        }
    }
    assert_eq!(sentences(request), ["Find my notes.", "Then email them to Bob?", "Thanks"]);
    assert_eq!(sentences("请帮我查天气。然后发邮件"), ["请帮我查天气。", "然后发邮件"]);
}
