//! `toolgate render`: the next request's tools and announcement as a provider's JSON, and with
//! `--stability` which bytes of the request prefix a scripted 20-turn session changes, per
//! provider mode.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use toolgate::config::Config;
use toolgate::defer::{DeferConfig, DeferMode};
use toolgate::render::{self, Provider, Turn, stability};
use toolgate::{Policy, Toolbox};

use crate::Outcome;

/// Turns of the `--stability` session.
const TURNS: usize = 20;

/// Arguments of `toolgate render`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The provider mode: anthropic, anthropic-server, anthropic-server-regex,
    /// openai-responses, chat, gemini or bridge (with `--stability`, also `all`).
    #[arg(long, value_name = "MODE")]
    provider: String,
    #[command(flatten)]
    source: crate::subject::Source,
    /// A transcript (a JSON array of messages or items, or one per line) whose discovered tools
    /// are loaded first: `tool_reference` blocks, `tool_search_output` items, toolgate's
    /// search results, compaction boundaries.
    #[arg(long, value_name = "FILE")]
    transcript: Option<PathBuf>,
    /// Print toolgate's stable JSON object (mode, counts, prefix size and the request parts)
    /// instead of the request fragment alone.
    #[arg(long)]
    json: bool,
    /// Play a scripted 20-turn session and report, per turn, whether the request prefix
    /// changed and whether the change only appended.
    #[arg(long)]
    stability: bool,
}

fn mode(name: &str) -> anyhow::Result<Provider> {
    Provider::from_name(name).with_context(|| {
        let names: Vec<&str> = Provider::NAMES.iter().map(|(n, _)| *n).collect();
        format!("--provider {name}: unknown mode (expected one of: {})", names.join(", "))
    })
}

/// The toolbox of `provider`'s exposure over the catalog and policy the arguments name.
fn toolbox(args: &Args, provider: Provider) -> anyhow::Result<Toolbox> {
    let catalog = args.source.catalog()?;
    let policy = match &args.source.config {
        Some(path) => Policy::new(&Config::from_path(path)?, args.source.profile.as_deref())?,
        None => Policy::permissive(),
    };
    // As the gateway: every MCP tool deferred.
    let defer = DeferConfig { mode: DeferMode::On, ..DeferConfig::default() };
    Ok(Toolbox::builder(&catalog, policy).defer(defer).exposure(provider.exposure()).build()?)
}

/// The messages of a transcript file: a JSON array, or one JSON value per line.
fn transcript(path: &PathBuf) -> anyhow::Result<Vec<Value>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    if let Ok(Value::Array(items)) = serde_json::from_str(&text) {
        return Ok(items);
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .with_context(|| format!("{}:{}: not a JSON message", path.display(), i + 1))
        })
        .collect()
}

/// The request fragment as the provider takes it: the tools, and the announcement where the
/// provider puts a system prompt.
fn fragment(provider: Provider, turn: &Turn) -> Value {
    let mut v = json!({"tools": turn.tools});
    if turn.system.is_empty() {
        return v;
    }
    match provider {
        Provider::Anthropic | Provider::AnthropicServer(_) => v["system"] = json!(turn.system),
        Provider::OpenAiResponses => v["instructions"] = json!(turn.system),
        Provider::Chat(d) if d.gemini => v["systemInstruction"] = json!({"parts": [{"text": turn.system}]}),
        Provider::Chat(_) | Provider::Bridge => {
            v["messages"] = json!([{"role": "system", "content": turn.system}])
        }
    }
    v
}

pub(crate) fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    if args.stability {
        return report(&args, out);
    }
    let provider = mode(&args.provider)?;
    let toolbox = toolbox(&args, provider)?;
    let mut conversation = match &args.transcript {
        Some(path) => toolbox.conversation_from_transcript(&transcript(path)?),
        None => toolbox.conversation(),
    };
    let turn = render::render(&toolbox, &mut conversation, provider)?;
    let v = if args.json {
        json!({
            "provider": provider.name(),
            "tools": turn.tools.len(),
            "deferred": turn.tools.iter().filter(|t| t["defer_loading"] == true).count(),
            "loaded": conversation.active(),
            "prefix_bytes": turn.prefix().len(),
            "request": fragment(provider, &turn),
        })
    } else {
        fragment(provider, &turn)
    };
    writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    Ok(Outcome::Found)
}

/// `--stability`: the scripted session in one mode or all of them.
fn report(args: &Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    if args.transcript.is_some() {
        bail!("--stability plays its own session; it takes no --transcript");
    }
    let modes: Vec<Provider> = if args.provider == "all" {
        Provider::NAMES.iter().map(|(_, p)| *p).collect()
    } else {
        vec![mode(&args.provider)?]
    };
    let mut all = Vec::new();
    for provider in modes {
        let toolbox = toolbox(args, provider)?;
        let steps = stability::script(&toolbox, TURNS);
        let reports = stability::run(&toolbox, provider, &steps)?;
        all.push((provider, reports));
    }
    if args.json {
        let v: serde_json::Map<String, Value> = all
            .iter()
            .map(|(p, reports)| {
                let turns: Vec<Value> = reports.iter().map(stability::TurnReport::to_json).collect();
                (p.name().to_owned(), json!({"summary": summary(reports), "turns": turns}))
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&Value::Object(v))?)?;
        return Ok(Outcome::Found);
    }
    writeln!(
        out,
        "{:<24} {:>13} {:>13} {:>15} {:>15} {:>13}",
        "mode", "loading turns", "other turns", "changed:loading", "changed:other", "append-only"
    )?;
    for (provider, reports) in &all {
        let s = summary(reports);
        let n = |key: &str| s[key].as_u64().unwrap_or_default();
        writeln!(
            out,
            "{:<24} {:>13} {:>13} {:>15} {:>15} {:>13}",
            provider.name(),
            n("loading_turns"),
            n("other_turns"),
            n("changed_on_loading_turns"),
            n("changed_on_other_turns"),
            n("append_only_changes")
        )?;
    }
    Ok(Outcome::Found)
}

/// Counts of a session: turns that loaded tools and turns that did not, how many of each
/// changed the prefix, and how many changes only appended.
fn summary(reports: &[stability::TurnReport]) -> Value {
    let loading = reports.iter().filter(|r| r.loaded > 0);
    let other = reports.iter().filter(|r| r.loaded == 0);
    json!({
        "turns": reports.len(),
        "loading_turns": loading.clone().count(),
        "other_turns": other.clone().count(),
        "changed_on_loading_turns": loading.filter(|r| r.changed).count(),
        "changed_on_other_turns": other.filter(|r| r.changed).count(),
        "append_only_changes": reports.iter().filter(|r| r.changed && r.append_only).count(),
    })
}
