//! `toolgate approve`: read and approve the tool definitions a pinned server's gateway holds
//! in quarantine. Works on the pin store a configuration names (`[gateway] pins`); a running
//! gateway on that store serves what it approves within a second.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use serde_json::json;
use toolgate_mcp::config::Config;
use toolgate_mcp::pins::{Held, PinStore, Selection};

use crate::Outcome;

/// Arguments of `toolgate approve`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The gateway's configuration; its `[gateway] pins` names the store (default
    /// `$XDG_DATA_HOME/toolgate/pins.sqlite3`).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Tools to approve, each by qualified name (`server__tool`, as the status page shows it)
    /// or as `server/tool`.
    #[arg(value_name = "TOOL")]
    tools: Vec<String>,
    /// Approve every held tool of this server (repeatable).
    #[arg(long, value_name = "NAME")]
    server: Vec<String>,
    /// Approve every held tool.
    #[arg(long, conflicts_with_all = ["tools", "server"])]
    all: bool,
    /// Only list what is held, with each definition's diff against the approved one.
    #[arg(long, conflicts_with_all = ["tools", "server", "all"])]
    list: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `toolgate approve`: exit 1 when nothing was held (with `--list`) or nothing matched.
pub(crate) fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let config = Config::from_path(&args.config)?;
    if !config.servers.values().any(|s| s.host.trust == toolgate_mcp::config::Trust::Pin) {
        bail!(
            "{}: no server has `trust = \"pin\"`, so nothing is ever held; add it to a [servers.NAME] table",
            args.config.display()
        );
    }
    let path = config.host.gateway.pins.clone().unwrap_or_else(PinStore::default_path);
    let store = PinStore::open(&path)?;
    let (verb, found) = if args.list {
        ("held", store.held()?)
    } else {
        let selection = match (args.all, args.server.is_empty(), args.tools.is_empty()) {
            (true, _, _) => Selection::All,
            (false, false, true) => Selection::Servers(&args.server),
            (false, true, false) => Selection::Tools(&args.tools),
            (false, true, true) => bail!("name the tools to approve, or use --server NAME or --all"),
            (false, false, false) => bail!("give tools or --server, not both"),
        };
        ("approved", store.approve(selection).with_context(|| format!("approving in {}", path.display()))?)
    };
    if args.json {
        let tools: Vec<_> = found.iter().map(Held::to_json).collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&json!({"store": path, verb: tools}))?)?;
    } else {
        print_text(out, verb, &found, args.list)?;
    }
    Ok(if found.is_empty() { Outcome::Nothing } else { Outcome::Found })
}

fn print_text(out: &mut dyn Write, verb: &str, found: &[Held], diffs: bool) -> anyhow::Result<()> {
    if found.is_empty() {
        writeln!(out, "no tool {verb}")?;
        return Ok(());
    }
    for h in found {
        writeln!(out, "{verb} {} ({}, {})", h.qualified, h.reason(), &h.hash[..12])?;
        if diffs {
            for line in h.diff().iter().filter(|l| !l.starts_with("  ")) {
                writeln!(out, "    {line}")?;
            }
        }
    }
    Ok(())
}
