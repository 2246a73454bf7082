//! `toolgate tokens`: what deferral saves.
//!
//! Counts, with the real `o200k_base` tokenizer, the tokens of sending every definition in full
//! against the first request with everything deferred: the core tools' definitions, the
//! `tool_search` meta-tool and the frozen announcement of the deferred names, exactly as the
//! library's facade renders that request.
//!
//! With `--count FILE`, it counts each line of FILE instead (one text a line, such as the
//! parts of each model request a proxy or a scripted model logged), with the same tokenizer.

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::{Map, Value, json};
use toolgate::Policy;
use toolgate::tokens::TokenCounter;
use toolgate_mcp::config::Exposure;
use toolgate_mcp::config::{BudgetConfig, Config};

use crate::Outcome;

/// Arguments of `toolgate tokens`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    source: crate::subject::Source,
    /// Count the tokens of each line of FILE (`-` for standard input) instead: one text a line,
    /// such as the JSON of what a model read on each request.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["catalog", "config"])]
    count: Option<std::path::PathBuf>,
    /// Print the stable JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// `--count FILE`: the tokens of each line, one number a line, or `{"tokenizer", "tokens":
/// [...]}` with `--json`.
fn count_lines(file: &std::path::Path, json: bool, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    use anyhow::Context;
    let text = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?
    } else {
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?
    };
    let counter = TokenCounter::get();
    let counts: Vec<usize> = text.lines().map(|line| counter.count(line)).collect();
    if json {
        writeln!(out, "{}", json!({"tokenizer": TokenCounter::NAME, "tokens": counts}))?;
    } else {
        for n in &counts {
            writeln!(out, "{n}")?;
        }
    }
    Ok(if counts.is_empty() { Outcome::Nothing } else { Outcome::Found })
}

/// The tools and definition tokens of one server.
#[derive(Debug, Default, Clone, Copy)]
struct ServerTokens {
    tools: usize,
    tokens: usize,
}

/// Everything `toolgate tokens` reports.
#[derive(Debug)]
struct Figures {
    tools: usize,
    deferred_tools: usize,
    core_tools: usize,
    full_load_tokens: usize,
    core_tokens: usize,
    tool_search_tokens: usize,
    announcement_tokens: usize,
    by_server: BTreeMap<String, ServerTokens>,
}

impl Figures {
    fn first_request_tokens(&self) -> usize {
        self.core_tokens + self.tool_search_tokens + self.announcement_tokens
    }

    /// Tokens the first request saves against a full load (negative when deferral costs more).
    fn saved_tokens(&self) -> i64 {
        self.full_load_tokens as i64 - self.first_request_tokens() as i64
    }

    /// The saving as a share of the full load, 0 for an empty load.
    fn saved_share(&self) -> f64 {
        if self.full_load_tokens == 0 {
            0.0
        } else {
            self.saved_tokens() as f64 / self.full_load_tokens as f64
        }
    }
}

fn count(catalog: &toolgate::Catalog) -> anyhow::Result<Figures> {
    let counter = TokenCounter::get();
    // A measurement, not a gateway: no budget limits what is counted.
    let unbounded = BudgetConfig { first_turn: usize::MAX, dynamic: usize::MAX, hard: usize::MAX };
    let policy = Policy::new(&Config { budget: unbounded, ..Config::default() }, None)?;
    let toolbox = crate::deferring_toolbox(catalog, policy, Exposure::Native)?;
    let mut chat = toolbox.conversation();
    let first = toolbox.tools(&mut chat)?;
    let meta = toolbox.about().meta_tools();
    let is_meta = |t: &toolgate::Tool| meta.iter().any(|m| std::ptr::eq(m, t));
    let mut f = Figures {
        tools: catalog.len(),
        deferred_tools: 0,
        core_tools: first.iter().filter(|t| !is_meta(t)).count(),
        full_load_tokens: 0,
        core_tokens: first.iter().filter(|t| !is_meta(t)).map(|t| counter.definition(t)).sum(),
        tool_search_tokens: meta.iter().map(|t| counter.definition(t)).sum(),
        announcement_tokens: counter.count(&toolbox.briefing().announcement(&mut chat)),
        by_server: BTreeMap::new(),
    };
    for tool in catalog.tools() {
        let tokens = counter.definition(tool);
        f.full_load_tokens += tokens;
        let server = f.by_server.entry(tool.server().to_owned()).or_default();
        server.tools += 1;
        server.tokens += tokens;
        if toolbox.is_deferred(tool) {
            f.deferred_tools += 1;
        }
    }
    Ok(f)
}

pub(crate) fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    if let Some(file) = &args.count {
        return count_lines(file, args.json, out);
    }
    let catalog = args.source.catalog()?;
    let f = count(&catalog)?;
    if args.json {
        let by_server: Map<String, Value> = f
            .by_server
            .iter()
            .map(|(name, s)| (name.clone(), json!({"tools": s.tools, "tokens": s.tokens})))
            .collect();
        let v = json!({
            "tokenizer": TokenCounter::NAME,
            "tools": f.tools,
            "full_load_tokens": f.full_load_tokens,
            "first_request_tokens": f.first_request_tokens(),
            "by_server": by_server,
            "deferred_tools": f.deferred_tools,
            "core_tools": f.core_tools,
            "tool_search_tokens": f.tool_search_tokens,
            "announcement_tokens": f.announcement_tokens,
            "saved_tokens": f.saved_tokens(),
            "saved_share": (f.saved_share() * 10_000.0).round() / 10_000.0,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(Outcome::Found);
    }
    writeln!(out, "tokenizer              {}", TokenCounter::NAME)?;
    writeln!(
        out,
        "tools                  {} ({} deferred, {} core)",
        f.tools, f.deferred_tools, f.core_tools
    )?;
    writeln!(out, "full load              {} tokens", f.full_load_tokens)?;
    writeln!(
        out,
        "first request          {} tokens (core {} + tool_search {} + announcement {})",
        f.first_request_tokens(),
        f.core_tokens,
        f.tool_search_tokens,
        f.announcement_tokens
    )?;
    writeln!(out, "saved                  {} tokens ({:.1}%)", f.saved_tokens(), f.saved_share() * 100.0)?;
    let mut servers: Vec<(&String, &ServerTokens)> = f.by_server.iter().collect();
    servers.sort_by(|a, b| b.1.tokens.cmp(&a.1.tokens).then_with(|| a.0.cmp(b.0)));
    let width = servers.iter().map(|(n, _)| n.chars().count()).max().unwrap_or(0).max("server".len());
    writeln!(out)?;
    writeln!(out, "{:<width$}  {:>5}  {:>7}", "server", "tools", "tokens")?;
    for (name, s) in servers {
        writeln!(out, "{name:<width$}  {:>5}  {:>7}", s.tools, s.tokens)?;
    }
    Ok(Outcome::Found)
}
