//! `toolgate eval`: retrieval metrics per strategy on a query set.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Map, Value, json};
use toolgate::{Catalog, Index, Strategy};
use toolgate_search::eval::{Part, Query, Report, evaluate_with_cut, load_queries};
use toolgate_search::{Explanation, LOAD_CUT, LoadCut, Request};

use crate::Outcome;

/// Arguments of `toolgate eval`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The catalog to search (JSONL or a tools/list map).
    #[arg(long, value_name = "FILE", required_unless_present = "set")]
    catalog: Option<PathBuf>,
    /// The queries with gold tools (JSONL).
    #[arg(long, value_name = "FILE", required_unless_present = "set")]
    queries: Option<PathBuf>,
    /// A bench set folder holding catalog.jsonl and queries.jsonl (instead of both files).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["catalog", "queries"])]
    set: Option<PathBuf>,
    /// The K of Recall@K, comma-separated.
    #[arg(long, value_name = "K,...", value_delimiter = ',', default_values_t = [1, 5, 10])]
    k: Vec<usize>,
    /// One strategy (keyword, bm25, bm25-crate, bm25f, lexical, semantic, or bert with
    /// `--model`) or `all`, side by side in one run (`bm25-crate` needs the `bm25-crate`
    /// feature).
    #[arg(long, value_name = "NAME|all", default_value = "all")]
    strategy: String,
    /// Print the stable JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Also draw the Recall@K curves (K = 1..10) of every strategy into an SVG file.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Write, per query, the gold tools with their ranks and the top 10 with their scores and
    /// the fields that matched, as JSON lines (for the default strategy, or the one given).
    #[arg(long, value_name = "FILE")]
    misses: Option<PathBuf>,
    /// The relevance cut of loading: a search with limit 5 loads its hits while they stand at
    /// least this share of the way from the tenth hit's score to the best one (`loaded@5` and
    /// `recall_loaded@5` measure it).
    #[arg(long, value_name = "SHARE", default_value_t = LOAD_CUT.share)]
    load_cut: f32,
    /// With `--load-cut`: a hit standing at least this share of the way also loads if it
    /// matches a term of the request that no hit loaded before it matches.
    #[arg(long, value_name = "SHARE", default_value_t = LOAD_CUT.novel_share)]
    load_cut_novel: f32,
    /// "Nothing fits": a `semantic` search whose request is less near than this centred cosine
    /// to its first hit loads nothing (`-inf` never).
    #[arg(long, value_name = "COSINE", default_value_t = LOAD_CUT.fit, allow_negative_numbers = true)]
    load_fit: f32,
    /// A sentence-transformers model directory (`config.json`, `tokenizer.json`,
    /// `model.safetensors`; default: `$TOOLGATE_MODEL`): adds `bert` (`lexical` fused with the
    /// model), `bert-only` (the model's cosine over name and description) and `bm25+bert`
    /// (reciprocal-rank fusion of plain BM25 and the model, k = 60) to the run.
    #[arg(long, value_name = "DIR", env = "TOOLGATE_MODEL")]
    model: Option<PathBuf>,
    /// With `--model`: the share of the model's cosine in `bert`'s score mix.
    #[arg(long, value_name = "SHARE", default_value_t = toolgate_search::semantic::bert::MIX)]
    model_mix: f32,
}

pub(crate) fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let (catalog_path, queries_path) = match (&args.set, &args.catalog, &args.queries) {
        (Some(dir), _, _) => (dir.join("catalog.jsonl"), dir.join("queries.jsonl")),
        (None, Some(c), Some(q)) => (c.clone(), q.clone()),
        _ => bail!("give --catalog FILE and --queries FILE, or --set DIR"),
    };
    if args.k.is_empty() || args.k.contains(&0) {
        bail!("--k takes positive whole numbers, such as 1,5,10");
    }
    let mut strategies: Vec<Strategy> = if args.strategy == "all" {
        Strategy::ALL.to_vec()
    } else {
        vec![args.strategy.parse::<Strategy>()?]
    };
    // `bert` is one of the model's rows.
    if strategies == [Strategy::Bert] {
        if args.model.is_none() {
            bail!("--strategy bert needs a model: give --model DIR (or set TOOLGATE_MODEL)");
        }
        strategies.clear();
    }
    let catalog = crate::load_catalog(Some(&catalog_path))?;
    let text = std::fs::read_to_string(&queries_path)
        .with_context(|| format!("{}: cannot read", queries_path.display()))?;
    let queries = load_queries(&queries_path.display().to_string(), &text, &catalog)?;
    // The plot needs every K of its curves; the table and JSON show only those asked for.
    let mut ks = args.k.clone();
    if args.plot.is_some() {
        ks.extend(crate::plot::KS);
        ks.sort_unstable();
        ks.dedup();
    }
    let cut = LoadCut { share: args.load_cut, novel_share: args.load_cut_novel, fit: args.load_fit };
    let bar = progress_bar((strategies.len() * queries.len()) as u64);
    let mut reports: Vec<Report> = Vec::new();
    for &s in &strategies {
        bar.set_message(s.as_str());
        let builder = Index::builder().strategy(s);
        reports.push(evaluate_with_cut(&catalog, &queries, builder, &ks, cut, &mut || bar.inc(1)));
    }
    bar.finish_and_clear();
    if let Some(dir) = &args.model {
        reports.extend(crate::model::reports(dir, &catalog, &queries, &ks, cut, args.model_mix)?);
    }
    if let Some(path) = &args.plot {
        let set = args.set.as_ref().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned());
        let title = format!("Recall@K on {}", set.unwrap_or_else(|| queries_path.display().to_string()));
        crate::plot::recall_curves(path, &title, &reports)?;
        for r in &mut reports {
            let metrics = std::iter::once(&mut r.all)
                .chain(r.by_lang.values_mut())
                .chain(r.by_level.values_mut())
                .chain(r.by_gold_size.values_mut());
            for m in metrics {
                m.recall.retain(|k, _| args.k.contains(k));
            }
        }
    }
    if let Some(path) = &args.misses {
        let strategy = if strategies.len() == 1 { strategies[0] } else { Strategy::DEFAULT };
        write_misses(path, &catalog, &queries, strategy)?;
    }
    if args.json {
        let mut strategies = Map::new();
        for r in &reports {
            strategies.insert(r.label.to_owned(), report_json(r));
        }
        let v = json!({
            "catalog": catalog_path.display().to_string(),
            "queries": queries_path.display().to_string(),
            "tools": catalog.len(),
            "query_count": queries.len(),
            "strategies": strategies,
            "default": Strategy::DEFAULT.as_str(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        writeln!(out, "{} tools, {} queries ({})", catalog.len(), queries.len(), queries_path.display())?;
        let mut head = String::from("strategy     ");
        for k in &args.k {
            head.push_str(&format!("  R@{k:<4}"));
        }
        writeln!(out, "{head}  nDCG@10  MRR     done@5  load@5  p50 µs   nDCG@10 tune / check")?;
        for r in &reports {
            let mut line = format!("{:<13}", r.label);
            for k in &args.k {
                line.push_str(&format!("  {:.3} ", r.all.recall[k]));
            }
            let part = |p: Part| r.by_part.get(&p).map_or("  -  ".to_owned(), |m| format!("{:.3}", m.ndcg10));
            let mark = if r.label == Strategy::DEFAULT.as_str() { "  (default)" } else { "" };
            writeln!(
                out,
                "{line}  {:.3}    {:.3}   {:.3}   {:.2}    {:<7.1}  {} / {}{mark}",
                r.all.ndcg10,
                r.all.mrr,
                r.all.complete5,
                r.all.loaded5,
                r.query_p50_us,
                part(Part::Tune),
                part(Part::Check)
            )?;
        }
    }
    Ok(Outcome::Found)
}

/// A progress bar on stderr when it is a terminal, hidden otherwise (pipes, CI, tests).
fn progress_bar(len: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} queries {elapsed}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

fn report_json(r: &Report) -> Value {
    let mut m = r.all.to_json();
    let group = |g: Vec<(String, &toolgate_search::eval::Metrics)>| -> Value {
        Value::Object(g.into_iter().map(|(k, v)| (k, Value::Object(v.to_json()))).collect())
    };
    m.insert("by_lang".into(), group(r.by_lang.iter().map(|(k, v)| (k.clone(), v)).collect()));
    m.insert(
        "by_gold_level".into(),
        group(r.by_level.iter().map(|(k, v)| (k.as_str().to_owned(), v)).collect()),
    );
    m.insert("by_gold_size".into(), group(r.by_gold_size.iter().map(|(k, v)| (k.clone(), v)).collect()));
    m.insert("by_part".into(), group(r.by_part.iter().map(|(k, v)| (k.as_str().to_owned(), v)).collect()));
    let round = |x: f64| (x * 10.0).round() / 10.0;
    m.insert("query_p50_us".into(), json!(round(r.query_p50_us)));
    m.insert("query_p99_us".into(), json!(round(r.query_p99_us)));
    m.insert("build_ms".into(), json!(round(r.build_ms)));
    Value::Object(m)
}

/// Writes one JSON line per query: its part, the gold items with their ranks (1-based, `null`
/// when not in the top 100), and the top 10 with their scores and the fields each term matched.
fn write_misses(
    path: &std::path::Path,
    catalog: &Catalog,
    queries: &[Query],
    strategy: Strategy,
) -> anyhow::Result<()> {
    let index = Index::builder().strategy(strategy).build(catalog);
    let mut lines = String::new();
    for q in queries {
        let found = index.search(Request::new(&q.query, 100));
        let labels: Vec<String> =
            found.hits.iter().map(|h| q.gold_level.label(catalog.tool(h.tool))).collect();
        let gold: Vec<Value> = q
            .gold
            .iter()
            .map(|g| json!({"gold": g, "rank": labels.iter().position(|l| l == g).map(|r| r + 1)}))
            .collect();
        let top: Vec<Value> = found
            .hits
            .iter()
            .take(10)
            .map(|h| {
                let e: Explanation = index.explain(&q.query, h.tool);
                let fields: Vec<Value> = e
                    .terms
                    .iter()
                    .map(|t| json!({"term": t.term, "fields": t.fields.iter().map(|(f, _)| *f).collect::<Vec<_>>()}))
                    .collect();
                json!({
                    "name": catalog.tool(h.tool).qualified_name(),
                    "score": crate::output::score_json(h.score),
                    "via": e.via,
                    "matched": fields,
                })
            })
            .collect();
        let line = json!({
            "id": q.id,
            "part": Part::of(&q.id).as_str(),
            "query": q.query,
            "strategy": strategy.as_str(),
            "gold": gold,
            "top": top,
        });
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    std::fs::write(path, lines).with_context(|| format!("{}: cannot write", path.display()))
}
