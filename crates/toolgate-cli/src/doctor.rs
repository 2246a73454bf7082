//! `toolgate doctor`: starts a configuration's servers once and reports what would trouble a
//! user before they point a client at it: tools, definition tokens (a warning past 25,000,
//! where Claude Code warns too) and start time per server (a warning past
//! `ready_timeout_secs`, which clients do not wait beyond), names that collide or pass the
//! clients' 64-character limit, servers that never announce `tools/list_changed` (a note), a
//! configuration with no server, and each client's snippet as it works when pasted: absolute
//! paths, the scope, and the variables the configuration reads. A configuration that starts
//! toolgate on itself is refused before anything starts, as `serve` refuses it.
//!
//! Pinned servers are started without touching the pin store: a first listing seen by the
//! doctor is not approved.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use serde_json::{Value, json};
use toolgate_mcp::config::{Config, Transport, Trust};
use toolgate_mcp::{Gateway, Settings, UpstreamReport};

use crate::Outcome;

/// Definition tokens of one server past which it is worth a warning (Claude Code warns when
/// one MCP server's tools pass 25k tokens).
pub(crate) const SERVER_TOKEN_WARNING: usize = 25_000;

/// MCP clients' caps on the number of tools.
const CLIENT_CAPS: [(&str, usize); 2] = [("Cursor", 40), ("VS Code", 128)];

/// Arguments of `toolgate doctor`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The configuration to check (`toolgate.toml` or an `mcpServers` JSON file).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// How long to wait for the servers to start.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    timeout: u64,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// One finding.
#[derive(Debug)]
struct Finding {
    /// `warning` or `note`.
    level: &'static str,
    /// The server it concerns, if one.
    server: Option<String>,
    message: String,
}

/// Runs `toolgate doctor`: exit 1 when it has a warning.
pub(crate) fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let mut config = Config::from_path(&args.config)?;
    let pinned: Vec<String> =
        config.servers.iter().filter(|(_, s)| s.host.trust == Trust::Pin).map(|(n, _)| n.clone()).collect();
    for server in config.servers.values_mut() {
        server.host.trust = Trust::Auto;
        server.host.quarantine = false;
    }
    let text = std::fs::read_to_string(&args.config).unwrap_or_default();
    let variables = toolgate_mcp::config::variables(&text);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (reports, first_list, overrides) = runtime.block_on(async {
        let settings = Settings::for_config(&config).with_context(|| args.config.display().to_string())?;
        let gateway =
            Gateway::builder(settings).start(&config).with_context(|| args.config.display().to_string())?;
        gateway.settled(Duration::from_secs(args.timeout)).await;
        let reports = gateway.report().upstream_reports();
        let first = gateway.report().first_tool_list();
        let overrides = gateway.report().overrides();
        gateway.shutdown().await;
        anyhow::Ok((reports, first, overrides))
    })?;
    runtime.shutdown_timeout(Duration::from_secs(1));
    let mut findings = Vec::new();
    if config.servers.is_empty() {
        findings.push(Finding {
            level: "warning",
            server: None,
            message: "the configuration has no server: the gateway would serve no tool".into(),
        });
    }
    for r in &reports {
        check_server(r, &config, &mut findings);
    }
    check_names(&reports, &mut findings);
    for o in overrides.iter().filter(|o| o.tokens.is_none()) {
        let ready = reports.iter().any(|r| r.name == o.server && r.state == "ready");
        findings.push(Finding {
            level: if ready { "warning" } else { "note" },
            server: Some(o.server.clone()),
            message: format!(
                "tools.{}: {} no tool `{}`; the override changes nothing",
                o.tool,
                if ready { "the server lists" } else { "the server is not ready, and its listing has" },
                o.tool
            ),
        });
    }
    check_http_self(&config, &mut findings);
    for name in &pinned {
        findings.push(Finding {
            level: "note",
            server: Some(name.clone()),
            message: "pinned (trust = \"pin\"): the doctor did not read or write the pin store; run \
                      `toolgate approve --list` for what is held"
                .into(),
        });
    }
    let clients = clients(&args.config, &config, first_list.len(), &variables)?;
    let warnings = findings.iter().filter(|f| f.level == "warning").count();
    if args.json {
        let servers: Vec<Value> = reports
            .iter()
            .map(|r| {
                json!({"name": r.name, "state": r.state, "error": r.error, "list_changed": r.list_changed,
                    "tools": r.tools.len(), "tokens": r.tools.iter().map(|t| t.tokens).sum::<usize>(),
                    "start_ms": r.started_in.map(|d| d.as_millis() as u64)})
            })
            .collect();
        let findings: Vec<Value> = findings
            .iter()
            .map(|f| json!({"level": f.level, "server": f.server, "message": f.message}))
            .collect();
        let overrides: Vec<Value> = overrides
            .iter()
            .map(|o| {
                json!({"server": o.server, "tool": o.tool, "changes": o.changes,
                    "tokens_before": o.tokens.map(|t| t.0), "tokens_after": o.tokens.map(|t| t.1)})
            })
            .collect();
        let v = json!({"servers": servers, "first_tool_list": first_list, "overrides": overrides,
            "findings": findings, "clients": clients, "warnings": warnings});
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        writeln!(
            out,
            "{:<24} {:<9} {:>6} {:>8} {:>8}  list_changed",
            "server", "state", "tools", "tokens", "start"
        )?;
        for r in &reports {
            let tokens: usize = r.tools.iter().map(|t| t.tokens).sum();
            let changes = match r.list_changed {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            };
            let start = r.started_in.map_or_else(|| "-".to_owned(), |d| format!("{:.1} s", d.as_secs_f64()));
            writeln!(
                out,
                "{:<24} {:<9} {:>6} {:>8} {:>8}  {changes}",
                r.name,
                r.state,
                r.tools.len(),
                tokens,
                start
            )?;
        }
        writeln!(out, "\nfirst tool list: {} tools ({})", first_list.len(), first_list.join(", "))?;
        if !overrides.is_empty() {
            writeln!(out, "\noverrides:")?;
        }
        for o in &overrides {
            let tokens =
                o.tokens.map_or_else(|| "not listed".to_owned(), |(a, b)| format!("{a} → {b} tokens"));
            writeln!(out, "  {}.{}: {}; {tokens}", o.server, o.tool, o.changes.join("; "))?;
        }
        for f in &findings {
            let server = f.server.as_deref().map(|s| format!("{s}: ")).unwrap_or_default();
            writeln!(out, "{}: {server}{}", f.level, f.message)?;
        }
        writeln!(out, "\nclients:")?;
        for c in clients.as_array().into_iter().flatten() {
            writeln!(
                out,
                "  {}: {}",
                c["client"].as_str().unwrap_or_default(),
                c["needs"].as_str().unwrap_or_default()
            )?;
            for line in c["snippet"].as_str().unwrap_or_default().lines() {
                writeln!(out, "      {line}")?;
            }
        }
        writeln!(out, "\n{warnings} warning(s)")?;
    }
    Ok(if warnings == 0 { Outcome::Found } else { Outcome::Nothing })
}

fn check_server(r: &UpstreamReport, config: &Config, findings: &mut Vec<Finding>) {
    let server = Some(r.name.clone());
    let tokens: usize = r.tools.iter().map(|t| t.tokens).sum();
    if r.state == "failed" {
        let why = r.error.as_deref().unwrap_or("no reason given");
        findings.push(Finding {
            level: "warning",
            server: server.clone(),
            message: format!("did not start: {why}"),
        });
    } else if r.state == "starting" {
        let message = "still starting when the doctor stopped waiting (--timeout)".to_owned();
        findings.push(Finding { level: "warning", server: server.clone(), message });
    }
    if tokens > SERVER_TOKEN_WARNING {
        let message = format!(
            "its {} tool definitions cost {tokens} tokens, over {SERVER_TOKEN_WARNING}: without deferral every request \
             carries them; keep [gateway] mode = \"on\" or narrow it with `allowed`",
            r.tools.len()
        );
        findings.push(Finding { level: "warning", server: server.clone(), message });
    }
    let ready = config.host.gateway.ready_timeout;
    if let Some(took) = r.started_in.filter(|t| *t > ready) {
        let message = format!(
            "took {:.1} s to start and list its tools, longer than ready_timeout_secs ({} s), the longest a client's \
             first requests wait: a client that asks at once gets instructions without its tools (it learns of \
             them from tool_search when they arrive); install the server rather than run it with `npx -y`, or \
             raise [gateway] ready_timeout_secs",
            took.as_secs_f64(),
            ready.as_secs()
        );
        findings.push(Finding { level: "warning", server: server.clone(), message });
    }
    let live =
        config.servers.get(&r.name).is_some_and(|s| !matches!(s.host.transport, Transport::Catalog { .. }));
    if live && r.list_changed == Some(false) {
        let message =
            "does not announce tools/list_changed: toolgate sees a new tool list from it only when \
                       it restarts (fine for a server whose tools never change)"
                .to_owned();
        findings.push(Finding { level: "note", server, message });
    }
}

/// Names that collide once clients' rules apply, and names past 64 characters.
fn check_names(reports: &[UpstreamReport], findings: &mut Vec<Finding>) {
    let mut by_plain: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for t in reports.iter().flat_map(|r| &r.tools) {
        let plain = format!("{}__{}", t.server, t.name);
        if plain.chars().count() > 64 {
            findings.push(Finding {
                level: "warning",
                server: Some(t.server.clone()),
                message: format!(
                    "`{plain}` is {} characters, over the 64 clients accept; it is served as `{}`",
                    plain.chars().count(),
                    t.qualified
                ),
            });
        }
        let key: String = plain
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c.to_ascii_lowercase() } else { '_' })
            .collect();
        by_plain.entry(key).or_default().push((plain, t.qualified.clone()));
    }
    for group in by_plain.values().filter(|g| g.len() > 1) {
        let names: Vec<String> = group.iter().map(|(p, q)| format!("`{p}` as `{q}`")).collect();
        findings.push(Finding {
            level: "warning",
            server: None,
            message: format!(
                "names that collide in clients' name rules, told apart by a suffix: {}",
                names.join(", ")
            ),
        });
    }
}

/// An HTTP server at toolgate's own default address is most likely this gateway: it would
/// list its own `tool_search` back to itself. (A stdio server that runs toolgate on this same
/// configuration is refused before anything starts.)
fn check_http_self(config: &Config, findings: &mut Vec<Finding>) {
    for (name, server) in &config.servers {
        if let Transport::Http { url, .. } = &server.host.transport
            && url.contains(":8765/mcp")
        {
            findings.push(Finding {
                level: "warning",
                server: Some(name.clone()),
                message:
                    "this looks like toolgate itself (its default address): the gateway would serve its own \
                          tool_search back to itself; remove it from the configuration"
                        .into(),
            });
        }
    }
}

/// Each client's snippet for this configuration, as it works when pasted (absolute paths, the
/// user scope, the variables the configuration reads), and what the client needs.
fn clients(
    path: &std::path::Path,
    config: &Config,
    first_list: usize,
    variables: &[String],
) -> anyhow::Result<Value> {
    // The absolute path the configuration was read from.
    let file = config.source.as_deref().unwrap_or(path).display().to_string();
    let program = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_or_else(|_| "toolgate".to_owned(), |p| p.display().to_string());
    let token = if config.host.tokens.is_empty() {
        String::new()
    } else {
        " and, over HTTP, an `Authorization: Bearer TOKEN` header (tokens are configured)".to_owned()
    };
    let caps: Vec<String> = CLIENT_CAPS
        .iter()
        .map(|(client, cap)| {
            let fits = if first_list <= *cap { "within" } else { "OVER" };
            format!("{fits} {client}'s {cap}")
        })
        .collect();
    let vars = if variables.is_empty() {
        String::new()
    } else {
        format!(" The configuration reads {}: they must be set where the client runs.", variables.join(", "))
    };
    let args = json!(["serve", "--stdio", "--config", file]);
    let claude = json!({"type": "stdio", "command": program, "args": args, "alwaysLoad": true});
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let codex_env = if variables.is_empty() {
        String::new()
    } else {
        // Codex passes a server only a few variables of its own environment unless told.
        format!("\nenv_vars = {}", serde_json::to_string(variables)?)
    };
    let gemini_args: Vec<String> = ["serve", "--stdio", "--config", &file].iter().map(|a| quote(a)).collect();
    Ok(json!([
        {"client": "Claude Code",
         "needs": format!("alwaysLoad, so that it waits for toolgate before its first request; nothing else: \
                           toolgate's tools are never deferred by its own tool search{token}. `claude mcp list` checks \
                           servers only in a folder you have trusted: run `claude` there once.{vars}"),
         "snippet": format!("claude mcp add-json -s user toolgate {}", quote(&claude.to_string()))},
        {"client": "Codex CLI",
         "needs": format!("required = true, so that it waits for toolgate before its first request; omit_tools_from \
                           = [\"deferred\"], so that its own tool search does not hide toolgate's behind it; it \
                           ignores list_changed, so toolgate gives it bridge exposure (tool_search and call_tool).{vars}"),
         "snippet": format!("# ~/.codex/config.toml\n[mcp_servers.toolgate]\ncommand = {program:?}\nargs = {args}\n\
                             default_tools_approval_mode = \"approve\"\nrequired = true\nstartup_timeout_sec = 60\n\
                             omit_tools_from = [\"deferred\"]{codex_env}")},
        {"client": "Gemini CLI",
         "needs": format!("--trust, so that a non-interactive run may call toolgate's tools.{vars}"),
         "snippet": format!("gemini mcp add -s user --trust toolgate {} {}", quote(&program), gemini_args.join(" "))},
        {"client": "Cursor", "needs": format!("a first tool list of {first_list} tools, {}{token}.{vars}", caps[0]),
         "snippet": format!("{{\"mcpServers\": {{\"toolgate\": {{\"command\": {program:?}, \"args\": {args}}}}}}}")},
        {"client": "VS Code", "needs": format!("a first tool list of {first_list} tools, {}{token}.{vars}", caps[1]),
         "snippet": format!("{{\"servers\": {{\"toolgate\": {{\"type\": \"stdio\", \"command\": {program:?}, \"args\": {args}}}}}}}")},
    ]))
}
