//! `toolgate serve`: the gateway, over streamable HTTP (default, with a status page) or stdio.
//!
//! Logs go to stderr only (stdout is the MCP channel with `--stdio`): toolgate's own at `info`
//! and other crates' warnings by default, more with `-v` / `-vv` or `--log-level`, and
//! `RUST_LOG` wins over both. Ctrl-C or SIGTERM stops the server and the upstream children.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use tokio_util::sync::CancellationToken;
use toolgate::Catalog;
use toolgate::catalog::EMBEDDED_LABEL;
use toolgate_mcp::access::{Access, Token};
use toolgate_mcp::config::{Config, ProfileConfig};
use toolgate_mcp::{Gateway, Settings};

use crate::Outcome;

/// Where `toolgate serve` listens unless told otherwise.
const DEFAULT_ADDR: &str = "127.0.0.1:8765";

/// Arguments of `toolgate serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A `toolgate.toml` or an `mcpServers` JSON file (Claude Desktop, Claude Code, Cursor);
    /// without it, the embedded catalog is served as static demo tools.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Serve one subject of the configuration (`[profiles.NAME]`): only the tools it allows.
    #[arg(long, value_name = "NAME")]
    profile: Option<String>,
    /// Serve one MCP session on stdin and stdout (with --http too: the status page, and
    /// streamable HTTP, beside it).
    #[arg(long)]
    stdio: bool,
    /// Serve streamable HTTP at http://ADDR/mcp and a status page at http://ADDR/ (ADDR is
    /// IP:PORT or localhost:PORT).
    #[arg(long, value_name = "ADDR", value_parser = parse_addr)]
    http: Option<SocketAddr>,
    /// How tools are shown: `native` (loaded tools join tools/list, with list_changed),
    /// `bridge` (tool_search and call_tool only), or `auto` (bridge for clients known to ignore
    /// list_changed, such as Codex; native for the others). Overrides `[gateway] exposure`.
    #[arg(long, value_name = "EXPOSURE", value_parser = ["auto", "native", "bridge"])]
    exposure: Option<String>,
    /// More log lines: `-v` toolgate's debug lines, `-vv` every crate's.
    #[arg(short, long, action = clap::ArgAction::Count, conflicts_with = "log_level")]
    verbose: u8,
    /// The log level of toolgate's own lines: error, warn, info (default), debug or trace.
    #[arg(long, value_name = "LEVEL", value_parser = ["error", "warn", "info", "debug", "trace"])]
    log_level: Option<String>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<Outcome> {
    crate::logging::init(log_filter(args.verbose, args.log_level.as_deref()));
    let (config, settings) = match &args.config {
        Some(path) => {
            let (config, settings) = load(path, args.profile.as_deref(), args.exposure.as_deref())?;
            let settings = settings.with_search(&config.search)?;
            (Some(config), settings)
        }
        None if args.profile.is_some() => {
            anyhow::bail!(
                "--profile needs --config: profiles are defined in the configuration ([profiles.NAME])"
            )
        }
        None => (None, with_exposure(Settings::default(), args.exposure.as_deref())),
    };
    if let Some(path) = config.as_ref().and_then(|c| c.host.gateway.audit_log.as_deref()) {
        crate::logging::open_audit(path)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_park(crate::return_freed_memory)
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(serve(args, config, settings));
    // A blocking read of stdin may still be pending; do not wait for it.
    runtime.shutdown_timeout(Duration::from_secs(1));
    result.map(|()| Outcome::Found)
}

/// The configuration at `path` and the settings it is served with: `--profile` and
/// `--exposure` applied, its tokens read and its secrets masked in the log from now on. At
/// start and at each reload alike; the ranking (`[search]`, perhaps a model to read) is made
/// after, at start by `run` and at a reload by the gateway, only when it changed.
fn load(
    path: &std::path::Path,
    profile: Option<&str>,
    exposure: Option<&str>,
) -> anyhow::Result<(Config, Settings)> {
    let config = Config::from_path(path)?;
    let settings = settings_for(&config, profile)?;
    Ok((config, with_exposure(settings, exposure)))
}

/// `settings` with `--exposure` applied (`auto`: each client's own).
fn with_exposure(mut settings: Settings, exposure: Option<&str>) -> Settings {
    match exposure {
        Some("native") => settings.exposure = Some(toolgate_mcp::config::Exposure::Native),
        Some("bridge") => settings.exposure = Some(toolgate_mcp::config::Exposure::Bridge),
        Some(_) => settings.exposure = None,
        None => {}
    }
    settings
}

/// `--http`'s address: `IP:PORT`, or `localhost:PORT` (the IPv4 loopback).
fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    match text.strip_prefix("localhost:").map(str::parse::<u16>) {
        Some(Ok(port)) => Ok(SocketAddr::from(([127, 0, 0, 1], port))),
        _ => Err(format!("`{text}` is not IP:PORT or localhost:PORT (for example 127.0.0.1:8765)")),
    }
}

/// The gateway settings of `config` (ranking as the default, until `Settings::with_search`),
/// serving `profile` if one is named.
fn settings_for(config: &Config, profile: Option<&str>) -> anyhow::Result<Settings> {
    let mut settings = Settings::from_config(config);
    let (access, token_secrets) = access_for(config)?;
    settings.access = access;
    // Every value of the configuration that must not reach a log line, masked from now on.
    let mut secrets = toolgate_mcp::config::secrets(config);
    secrets.extend(token_secrets);
    crate::logging::mask(secrets);
    if let Some(name) = profile {
        profile_of(config, name)?;
        settings.profile = Some(name.to_owned());
    }
    Ok(settings)
}

/// The hosts, origins and tokens of `config`, with each token's secret read now (and
/// returned, to be masked in the log).
fn access_for(config: &Config) -> anyhow::Result<(Access, Vec<String>)> {
    let mut tokens = Vec::new();
    let mut secrets = Vec::new();
    for (name, token) in &config.host.tokens {
        let secret = token.secret(name).map_err(anyhow::Error::msg)?;
        tokens.push(Token::new(name, &secret, token.profile.clone()));
        secrets.push(secret);
    }
    let access = Access {
        hosts: config.host.gateway.allowed_hosts.clone(),
        origins: config.host.gateway.allowed_origins.clone(),
        tokens,
        oauth: config
            .host
            .oauth
            .clone()
            .map(|o| std::sync::Arc::new(toolgate_mcp::oauth::resource::Resource::new(o))),
    };
    Ok((access, secrets))
}

/// `[profiles.NAME]` of `config`, or an error for `--profile NAME` naming the known ones.
pub(crate) fn profile_of<'a>(config: &'a Config, name: &str) -> anyhow::Result<&'a ProfileConfig> {
    config.profiles.get(name).ok_or_else(|| {
        let known: Vec<&str> = config.profiles.keys().map(String::as_str).collect();
        anyhow::anyhow!(
            "--profile {name}: the configuration has no [profiles.{name}]; known profiles: {}",
            if known.is_empty() { "none".to_owned() } else { known.join(", ") }
        )
    })
}

async fn serve(args: Args, config: Option<Config>, mut settings: Settings) -> anyhow::Result<()> {
    // HTTP sessions only: on stdio the connection is the session.
    if let Some(config) = &config
        && !args.stdio
    {
        settings.sessions = toolgate_mcp::store::open(&config.host.gateway.sessions).await?;
        tracing::info!(store = %settings.sessions.describe(), "HTTP sessions are kept in the session store");
    }
    let path = args.config.as_deref().unwrap_or(std::path::Path::new("")).display().to_string();
    let (gateway, loading) = match &config {
        Some(config) => {
            let (gateway, loading) =
                Gateway::builder(settings).remember_listings().begin(config).with_context(|| path.clone())?;
            (gateway, Some(loading))
        }
        None => {
            tracing::info!(
                "no --config: serving the embedded catalog ({EMBEDDED_LABEL}) as static demo tools"
            );
            (Gateway::builder(settings).catalog("embedded", &Catalog::embedded()).build()?, None)
        }
    };
    let shutdown = CancellationToken::new();
    tokio::spawn(stop_on_signal(shutdown.clone()));
    // SIGHUP, or a change of the file, reloads it; a file that fails keeps the running one.
    if let Some(path) = args.config.clone() {
        let (profile, exposure) = (args.profile.clone(), args.exposure.clone());
        let load = move |path: &std::path::Path| {
            load(path, profile.as_deref(), exposure.as_deref())
                .map_err(|e| format!("{}: {e:#}", path.display()))
        };
        tokio::spawn(toolgate_mcp::reload::watch(gateway.clone(), path, load));
    }
    // The static catalogs are read while the gateway already listens (their server shows as
    // starting meanwhile); a bad one stops the gateway with the error, as at start.
    let failed = std::sync::Arc::new(std::sync::Mutex::new(None::<anyhow::Error>));
    if let Some(loading) = loading {
        let (failed, shutdown) = (failed.clone(), shutdown.clone());
        tokio::spawn(async move {
            let outcome = tokio::task::spawn_blocking(move || loading.finish()).await;
            let error = match outcome {
                Ok(Ok(())) => return,
                Ok(Err(e)) => anyhow::Error::new(e).context(path),
                Err(e) => anyhow::anyhow!("reading the static catalogs failed: {e}"),
            };
            *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
            shutdown.cancel();
        });
    }
    let served = if args.stdio && args.http.is_none() {
        toolgate_mcp::serve_stdio(gateway.clone(), shutdown.clone()).await.context("serving MCP on stdio")
    } else {
        let addr = match args.http {
            Some(a) => a,
            None => DEFAULT_ADDR.parse().expect("the default address is valid"),
        };
        if !addr.ip().is_loopback() && !gateway.settings().access.asks_for_tokens() {
            anyhow::bail!(
                "--http {addr} listens beyond this machine, so every request must carry a bearer token: \
                 add one to the configuration ([tokens.NAME] with env = \"VAR\" or file = \"PATH\"), or \
                 listen on 127.0.0.1"
            );
        }
        let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
            format!("cannot listen on {addr}; is another server using it? Choose another with --http ADDR")
        })?;
        let bound = listener.local_addr()?;
        if !bound.ip().is_loopback() && gateway.settings().access.hosts.is_empty() {
            tracing::warn!(
                "listening on {bound}, but only requests whose Host is localhost, 127.0.0.1 or ::1 are \
                 served (DNS rebinding protection); name this machine in [gateway] allowed_hosts"
            );
        }
        #[allow(clippy::print_stderr)]
        {
            eprintln!("toolgate: listening on http://{bound}/mcp");
        }
        let http = toolgate_mcp::http::serve(gateway.clone(), listener, shutdown.clone());
        if args.stdio {
            // The stdio session is the one that matters: when its client goes, so does HTTP.
            let http = tokio::spawn(http);
            let stdio = toolgate_mcp::serve_stdio(gateway.clone(), shutdown.clone())
                .await
                .context("serving MCP on stdio");
            shutdown.cancel();
            let _ = http.await;
            stdio
        } else {
            http.await.context("serving HTTP")
        }
    };
    shutdown.cancel();
    gateway.shutdown().await;
    if let Some(error) = failed.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(error);
    }
    tracing::info!("stopped");
    served
}

/// Cancels `shutdown` on Ctrl-C (SIGINT) or SIGTERM.
async fn stop_on_signal(shutdown: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                let _ = tokio::signal::ctrl_c().await;
                shutdown.cancel();
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    tracing::info!("shutting down");
    shutdown.cancel();
}

/// The log filter of `-v` (counted) or `--log-level`: toolgate's own lines at that level,
/// other crates' (rmcp's protocol traces among them) at `warn` unless `-vv`.
fn log_filter(verbose: u8, level: Option<&str>) -> String {
    match (verbose, level) {
        (0, None) => "warn,toolgate=info,toolgate_mcp=info,toolgate::audit=info".to_owned(),
        (0, Some(level)) => format!("warn,toolgate={level},toolgate_mcp={level}"),
        (1, _) => "warn,toolgate=debug,toolgate_mcp=debug".to_owned(),
        _ => "debug".to_owned(),
    }
}
