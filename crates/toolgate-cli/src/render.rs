//! `toolgate render`: the next request's tools and announcement as a provider's JSON, and with
//! `--stability` which bytes of the request prefix a scripted 20-turn session changes, per
//! provider mode.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use toolgate::render::{self, Api, Models, Provider, Shape, Turn, stability};
use toolgate::{Catalog, Policy, Toolbox};
use toolgate_mcp::config::Config;

use crate::Outcome;

/// Turns of the `--stability` session.
const TURNS: usize = 20;

/// Arguments of `toolgate render`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The provider mode: anthropic, anthropic-server, anthropic-server-regex,
    /// openai-responses, chat, gemini, vertex, anthropic-inject, openai-responses-inject or
    /// bridge (with `--stability`, also `all`).
    #[arg(long, value_name = "MODE", required_unless_present = "api", conflicts_with = "api")]
    provider: Option<String>,
    /// Instead of `--provider`: the API (anthropic, openai-responses, chat, gemini) and, with
    /// `--target-model`, the model, whose mode the model table gives (built in, and the
    /// `[models]` of `--config`): native search where the model has it, injection otherwise.
    #[arg(long, value_name = "API")]
    api: Option<String>,
    /// With `--api`: the model the request is for, like `claude-sonnet-4-5` or `gpt-5.4`.
    #[arg(long, value_name = "NAME", requires = "api")]
    target_model: Option<String>,
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
    /// Write the output to this file instead of standard output (a full catalog's request is
    /// hundreds of KB, which is not printed to a terminal).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Most bytes printed to a terminal; more must go to `--out` or a pipe.
const TERMINAL_LIMIT: usize = 64 * 1024;

/// Writes `text` to `--out`, or to `out` unless that is a terminal and `text` is too long to
/// read there.
fn emit(args: &Args, text: &str, out: &mut dyn Write) -> anyhow::Result<()> {
    if let Some(path) = &args.out {
        std::fs::write(path, text).with_context(|| format!("--out {}: cannot write", path.display()))?;
        return Ok(());
    }
    use std::io::IsTerminal;
    if text.len() > TERMINAL_LIMIT && std::io::stdout().is_terminal() {
        bail!(
            "the output is {} KB, too much for a terminal: write it with --out FILE, or pipe it (| less, | jq)",
            text.len().div_ceil(1024)
        );
    }
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// How many definitions of a request's `tools` are deferred (`defer_loading`), those inside an
/// OpenAI Responses namespace included.
fn deferred(tools: &[Value]) -> usize {
    tools
        .iter()
        .map(|t| match t["tools"].as_array() {
            Some(inner) => deferred(inner),
            None => usize::from(t["defer_loading"] == true),
        })
        .sum()
}

/// The mode the arguments name: `--provider`, or the model table's for `--api` and
/// `--target-model`.
fn chosen(args: &Args) -> anyhow::Result<Provider> {
    if let Some(name) = &args.provider {
        return mode(name);
    }
    let name = args.api.as_deref().unwrap_or_default();
    let api = Api::from_name(name).with_context(|| {
        let names: Vec<&str> = Api::NAMES.iter().map(|(n, _)| *n).collect();
        format!("--api {name}: unknown API (expected one of: {})", names.join(", "))
    })?;
    let models = match &args.source.config {
        Some(path) => {
            Models::from_config(&Config::from_path(path)?).with_context(|| path.display().to_string())?
        }
        None => Models::builtin(),
    };
    Ok(models.provider(api, args.target_model.as_deref().unwrap_or_default(), true))
}

fn mode(name: &str) -> anyhow::Result<Provider> {
    Provider::from_name(name).with_context(|| {
        let names: Vec<&str> = Provider::NAMES.iter().map(|(n, _)| *n).collect();
        format!("--provider {name}: unknown mode (expected one of: {})", names.join(", "))
    })
}

/// The catalog and policy the arguments name (with `--config`, its servers are started once).
fn subject(args: &Args) -> anyhow::Result<(Catalog, Policy)> {
    let catalog = args.source.catalog()?;
    let policy = match &args.source.config {
        Some(path) => Policy::new(&Config::from_path(path)?, args.source.profile.as_deref())?,
        None => Policy::permissive(),
    };
    Ok((catalog, policy))
}

/// The toolbox of `provider`'s exposure over `catalog` and `policy`.
fn toolbox(catalog: &Catalog, policy: &Policy, provider: Provider) -> anyhow::Result<Arc<Toolbox>> {
    crate::deferring_toolbox(catalog, policy.clone(), provider.exposure())
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
    match provider.shape() {
        Shape::Anthropic => v["system"] = json!(turn.system),
        Shape::Responses => v["instructions"] = json!(turn.system),
        Shape::Gemini => v["systemInstruction"] = json!({"parts": [{"text": turn.system}]}),
        Shape::Chat => v["messages"] = json!([{"role": "system", "content": turn.system}]),
    }
    v
}

pub(crate) fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    if args.stability {
        return report(&args, out);
    }
    let provider = chosen(&args)?;
    let (catalog, policy) = subject(&args)?;
    let toolbox = toolbox(&catalog, &policy, provider)?;
    let mut conversation = match &args.transcript {
        Some(path) => toolbox.conversation_from_transcript(&transcript(path)?),
        None => toolbox.conversation(),
    };
    let turn = render::render(&toolbox, &mut conversation, provider)?;
    let v = if args.json {
        json!({
            "provider": provider.name(),
            "tools": turn.tools.len(),
            "deferred": deferred(&turn.tools),
            "loaded": conversation.active(),
            "prefix_bytes": turn.prefix().len(),
            "request": fragment(provider, &turn),
        })
    } else {
        fragment(provider, &turn)
    };
    emit(&args, &format!("{}\n", serde_json::to_string_pretty(&v)?), out)?;
    Ok(Outcome::Found)
}

/// `--stability`: the scripted session in one mode or all of them.
fn report(args: &Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    if args.transcript.is_some() {
        bail!("--stability plays its own session; it takes no --transcript");
    }
    let modes: Vec<Provider> = if args.provider.as_deref() == Some("all") {
        Provider::NAMES.iter().map(|(_, p)| *p).collect()
    } else {
        vec![chosen(args)?]
    };
    let (catalog, policy) = subject(args)?;
    let mut all = Vec::new();
    for provider in modes {
        let toolbox = toolbox(&catalog, &policy, provider)?;
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
