//! `toolgate search`: one tool_search query over a catalog.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use serde_json::{Value, json};
use toolgate::Strategy;
use toolgate::search::{Explanation, Index, IndexBuilder, Request};

use crate::Outcome;
use crate::output::score_json;

/// Arguments of `toolgate search`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    source: crate::subject::Source,
    /// The ranker for free keywords: keyword, bm25, bm25-crate (with the `bm25-crate` feature),
    /// bm25f, lexical or semantic
    /// (default: the configuration's `[search] strategy` with `--config`, else `semantic`).
    #[arg(long, value_name = "NAME")]
    strategy: Option<Strategy>,
    /// How many tools at most.
    #[arg(long, value_name = "N", default_value_t = 5)]
    limit: usize,
    /// A sentence-transformers model directory (`config.json`, `tokenizer.json`,
    /// `model.safetensors`): rank with `bert`, the default ranking fused with the model, in
    /// place of `--strategy`.
    #[arg(long, value_name = "DIR", conflicts_with = "strategy")]
    model: Option<PathBuf>,
    /// Print the stable JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Show why each hit ranked: each term's contribution per field, and which terms came from
    /// the bilingual vocabulary or a synonym rather than from the query.
    #[arg(long)]
    explain: bool,
    /// The query: keywords in any language, `select:a,b`, a tool name, `server__`, `+required`.
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    query: Vec<String>,
}

pub(crate) fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let catalog = args.source.catalog()?;
    let query = args.query.join(" ");
    let builder = match (&args.model, args.strategy, &args.source.config) {
        (Some(dir), _, _) => {
            Index::builder().model(crate::model::open(dir, toolgate_search::semantic::bert::MIX)?)
        }
        (None, Some(Strategy::Bert), _) => {
            anyhow::bail!("--strategy bert needs a model: give --model DIR in its place")
        }
        (None, Some(s), _) => Index::builder().strategy(s),
        // As the gateway of this configuration ranks.
        (None, None, Some(path)) => {
            let search = toolgate_mcp::config::Config::from_path(path)?.search;
            IndexBuilder::from_config(&search).with_context(|| format!("{}: [search]", path.display()))?
        }
        (None, None, None) => Index::builder(),
    };
    let index = builder.build(&catalog);
    crate::model::warn_cache(index.model_cache_problem());
    let found = index.search(Request::new(&query, args.limit));
    let strategy = index.strategy().as_str();
    let explanations: Vec<Explanation> = if args.explain {
        found.hits.iter().map(|h| index.explain(&query, h.tool)).collect()
    } else {
        Vec::new()
    };
    let nothing_fits = found.nothing_fits();
    if args.json {
        let matches: Vec<Value> = found
            .hits
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let t = catalog.tool(h.tool);
                let mut m = json!({
                    "name": t.qualified_name(),
                    "server": t.server(),
                    "tool": t.name(),
                    "score": score_json(h.score),
                    "description": t.description(),
                });
                if let Some(e) = explanations.get(i) {
                    m["explain"] = e.to_json();
                }
                m
            })
            .collect();
        let v = json!({
            "query": query,
            "strategy": strategy,
            "matches": matches,
            "already_loaded": [],
            "loaded": found.hits[..found.loads].iter().map(|h| catalog.tool(h.tool).qualified_name()).collect::<Vec<_>>(),
            "nothing_fits": nothing_fits,
            "unmatched_terms": found.unmatched_terms,
            "pending_servers": [],
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else if found.hits.is_empty() {
        writeln!(out, "No tools matched \"{query}\".")?;
    } else {
        for (i, h) in found.hits.iter().enumerate() {
            let t = catalog.tool(h.tool);
            let score = if h.score.is_finite() { format!("{:.3}", h.score) } else { "exact".to_owned() };
            writeln!(out, "{:>2}. {}  [{score}]", i + 1, t.qualified_name())?;
            let desc = t.short_description(160);
            if !desc.is_empty() {
                writeln!(out, "    {desc}")?;
            }
            if let Some(e) = explanations.get(i) {
                write_explanation(out, e)?;
            }
        }
    }
    if !args.json && nothing_fits {
        writeln!(
            out,
            "Nothing fits: the request is far in meaning from every tool found, so a tool_search loads none of them."
        )?;
    }
    if !args.json && !found.unmatched_terms.is_empty() {
        writeln!(out, "Terms that matched no tool: {}", found.unmatched_terms.join(", "))?;
    }
    Ok(if found.hits.is_empty() { Outcome::Nothing } else { Outcome::Found })
}

fn write_explanation(out: &mut dyn Write, e: &Explanation) -> std::io::Result<()> {
    writeln!(out, "    via {}", e.via)?;
    for t in &e.terms {
        let parts: Vec<String> = t.fields.iter().map(|(f, s)| format!("{f} {s:.3}")).collect();
        let from = match &t.expansion {
            Some((text, via)) => format!("  (from {text}, {})", via.as_str()),
            None => String::new(),
        };
        writeln!(out, "    {:<16} {}{from}", t.term, parts.join(" + "))?;
    }
    Ok(())
}
