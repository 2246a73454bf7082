//! `toolgate login SERVER`: signs the gateway in to the authorization server of an upstream
//! with `[servers.NAME.oauth]` (authorization code with PKCE), and seals the tokens where
//! `toolgate serve` finds them.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use toolgate_mcp::config::{Config, OAuthGrant, Transport};
use toolgate_mcp::oauth::login::{Options, login};
use toolgate_mcp::oauth::vault::Vault;

use crate::Outcome;

/// Arguments of `toolgate login`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The server, as `[servers.NAME]` names it.
    #[arg(value_name = "SERVER")]
    server: String,
    /// The gateway's configuration.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Only print the URL to open; do not try to start a browser.
    #[arg(long)]
    no_browser: bool,
    /// How long to wait for the sign-in, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    timeout_secs: u64,
    /// Forget the server's tokens instead of signing in.
    #[arg(long)]
    forget: bool,
}

/// Runs `toolgate login`.
pub(crate) fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let config = Config::from_path(&args.config)?;
    let Some(server) = config.servers.get(&args.server) else {
        let known: Vec<&str> = config.servers.keys().map(String::as_str).collect();
        bail!(
            "{}: there is no server `{}`; servers: {}",
            args.config.display(),
            args.server,
            known.join(", ")
        );
    };
    let Transport::Http { url, .. } = &server.host.transport else {
        bail!("server `{}` is not an HTTP server (`url`); only those sign in with OAuth", args.server);
    };
    let Some(oauth) = &server.host.oauth else {
        bail!("server `{}` has no [servers.{}.oauth] table", args.server, args.server);
    };
    if oauth.grant != OAuthGrant::AuthorizationCode {
        bail!(
            "server `{}` uses grant \"{}\": the gateway gets its tokens itself, there is nobody to sign in",
            args.server,
            if oauth.grant == OAuthGrant::ClientCredentials {
                "client_credentials"
            } else {
                "token_exchange"
            }
        );
    }
    let vault = Vault::open_default().map_err(anyhow::Error::msg)?;
    if args.forget {
        vault
            .remove(&args.server)
            .with_context(|| format!("cannot remove {}", vault.path(&args.server).display()))?;
        writeln!(out, "forgot the tokens of `{}`", args.server)?;
        return Ok(Outcome::Found);
    }
    let open_browser = !args.no_browser;
    let show = |url: &str| {
        let mut err = std::io::stderr();
        let _ = writeln!(err, "Sign in to `{}` in a browser:\n\n    {url}\n", args.server);
        if open_browser && !open(url) {
            let _ = writeln!(err, "(no browser could be started here: open the address above yourself)");
        }
    };
    let options = Options { timeout: Duration::from_secs(args.timeout_secs) };
    let trust = toolgate_mcp::oauth::client::Trust {
        issuers: config.host.oauth.as_ref().map(|o| o.issuers.clone()).unwrap_or_default(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let stored = runtime
        .block_on(login(&args.server, url, oauth, &trust, &vault, &options, show))
        .map_err(anyhow::Error::msg)?;
    let lasts = stored
        .expires_at
        .map(|e| format!(", valid for {} s", e.saturating_sub(toolgate_mcp::oauth::client::now())))
        .unwrap_or_default();
    writeln!(
        out,
        "signed in to `{}` at {}{lasts}{}; tokens sealed in {}",
        args.server,
        stored.issuer,
        if stored.refresh_token.is_some() { ", refreshed by the gateway" } else { "" },
        vault.path(&args.server).display()
    )?;
    Ok(Outcome::Found)
}

/// Starts the desktop's browser on `url`; false when there is none.
fn open(url: &str) -> bool {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
