//! What one subject of a configuration sees: the catalog `toolgate search --config F
//! [--profile P]` searches. The configured servers are started as `toolgate serve` would start
//! them, given until their startup timeout to list their tools, and the subject's view is taken
//! from the gateway itself, so the command shows exactly what a session of that subject could
//! find: nothing a deny rule, a server policy or the profile hides.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use toolgate::Catalog;
use toolgate_mcp::config::Config;
use toolgate_mcp::{Gateway, Settings};

/// Where a command's tools come from: a catalog file, the embedded catalog, or what one subject
/// of a gateway configuration sees.
#[derive(Debug, clap::Args)]
pub(crate) struct Source {
    /// A JSONL catalog or a JSON map of server → tools/list result (default: the embedded
    /// catalog of 527 real MCP tools).
    #[arg(long, value_name = "FILE", conflicts_with = "config")]
    pub(crate) catalog: Option<PathBuf>,
    /// A gateway configuration (`toolgate.toml` or an `mcpServers` JSON file): its servers are
    /// started as `toolgate serve` would, and only what its policy lets the subject see counts.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// With `--config`: the subject `[profiles.NAME]` instead of the gateway's own.
    #[arg(long, value_name = "NAME", requires = "config")]
    pub(crate) profile: Option<String>,
}

impl Source {
    /// The catalog the arguments name (servers that are not searched are reported on stderr).
    pub(crate) fn catalog(&self) -> anyhow::Result<Catalog> {
        match &self.config {
            Some(path) => visible_catalog(path, self.profile.as_deref(), &mut std::io::stderr()),
            None => crate::load_catalog(self.catalog.as_ref()),
        }
    }
}

/// The catalog the subject of `profile` (the gateway's own subject with `None`) sees under the
/// configuration at `path`. Servers that failed or did not finish starting are reported on
/// `log` (their tools are not searched).
pub(crate) fn visible_catalog(
    path: &Path,
    profile: Option<&str>,
    log: &mut dyn Write,
) -> anyhow::Result<Catalog> {
    let config = Config::from_path(path)?;
    if let Some(name) = profile {
        crate::serve::profile_of(&config, name)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let wait = config.host.gateway.startup_timeout + Duration::from_secs(1);
    let result = runtime.block_on(async {
        // The ranking is the caller's to build: the model is not loaded to list tools, and the
        // gateway indexes what it lists with the cheapest ranker (with the default one, it
        // doubled the time of `toolgate search --config` at 100,000 tools).
        let index = toolgate::Index::builder().strategy(toolgate::Strategy::Keyword);
        let settings = Settings { restart_backoff: None, index, ..Settings::from_config(&config) };
        let gateway = Gateway::builder(settings).start(&config)?;
        gateway.settled(wait).await;
        let status = gateway.status();
        let catalog = gateway.report().visible_catalog(profile);
        gateway.shutdown().await;
        anyhow::Ok((catalog?, status))
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    let (catalog, status) = result?;
    for server in status["servers"].as_array().into_iter().flatten() {
        let state = server["state"].as_str().unwrap_or_default();
        if matches!(state, "failed" | "starting") {
            let why = server["error"].as_str().unwrap_or("still starting");
            writeln!(
                log,
                "toolgate: server `{}` is not searched: {state} ({why})",
                server["name"].as_str().unwrap_or("?")
            )?;
        }
    }
    Ok(catalog)
}
