//! config: the gateway's own keys of `toolgate.toml`, and `mcpServers` JSON: how to reach each
//! server (its transport, revision, call timeout, trust and OAuth client), the gateway's
//! timeouts, session store, listing caps, bearer tokens and OAuth resource server.
//!
//! The library reads what it decides (exposure, deferral, budgets, ranking, policy, servers'
//! rules, profiles); [`GatewayKeys`] is the [`Host`] that reads the rest in the same pass, with
//! the same strict reader ([`Fields`]), so one read of a file gives one [`Config`], and a key
//! neither knows is an error listing both sets.
//!
//! In `command`, `args`, `env` values, `url` and `headers` values, `${VAR}` and
//! `${VAR:-default}` are replaced from the process environment, as Claude Code does;
//! `${env:VAR}` (VS Code) works too. Relative `cwd` and `catalog` paths are resolved against the
//! folder of the configuration file.
//!
//! ```
//! use std::path::Path;
//! use toolgate_mcp::config::{Config, Transport};
//!
//! let text = r#"
//! [budget]
//! first_turn = 64
//!
//! [servers.time]
//! command = "uvx"
//! args = ["mcp-server-time"]
//! "#;
//! let config = Config::from_toml("toolgate.toml", text, Path::new("/etc/toolgate"))?;
//! assert_eq!(config.budget.first_turn, 64);
//! let time = &config.servers["time"];
//! assert!(matches!(&time.host.transport, Transport::Stdio { command, .. } if command == "uvx"));
//!
//! let text = "[servers.time]\ncommand = 3\n";
//! let err = Config::from_toml("toolgate.toml", text, Path::new(".")).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "toolgate.toml: servers.time.command: expected a string, found an integer (3)"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod mcp_json;
mod read;

#[cfg(test)]
mod oauth_tests;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use toolgate::config::*;

/// A configuration as the gateway reads it: the library's keys, and the gateway's in
/// [`Config::host`] and each server's [`ServerConfig::host`].
pub type Config = toolgate::config::Config<GatewayKeys>;

/// One `[servers.NAME]` as the gateway reads it: the library's rules, and how to reach it in
/// [`ServerConfig::host`](toolgate::config::ServerConfig::host).
pub type ServerConfig = toolgate::config::ServerConfig<UpstreamConfig>;

/// Every value of `config` that must never be shown or logged, longest first, each once: every
/// `${VAR}` value (a token passed in `args` is no less a secret than one in `env`), every
/// server's own secrets and the grant key. Bearer tokens' secrets are read later
/// ([`TokenConfig::secret`]) and are not among them.
pub fn secrets(config: &Config) -> Vec<String> {
    let mut secrets: Vec<String> = config.expanded.iter().map(|s| s.0.clone()).collect();
    secrets.extend(config.servers.values().flat_map(|s| s.host.transport.secrets()));
    secrets.extend(config.host.gateway.grant_key.iter().map(|k| k.0.clone()));
    secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    secrets.dedup();
    secrets
}

/// A server reached by `transport`, with every other setting at its default.
pub fn server(transport: Transport) -> ServerConfig {
    ServerConfig::new(UpstreamConfig::new(transport))
}

/// The gateway's keys of a configuration besides the library's: `[gateway]`'s timeouts, store
/// and caps, `[tokens.NAME]` and `[oauth]` (its [`Host`] reading them).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GatewayKeys {
    /// The gateway's keys of `[gateway]`.
    pub gateway: GatewayConfig,
    /// Bearer tokens of the HTTP endpoints by name (`[tokens.NAME]`).
    pub tokens: BTreeMap<String, TokenConfig>,
    /// OAuth 2.1 access tokens the HTTP endpoints accept beside the static ones (`[oauth]`).
    pub oauth: Option<OAuthConfig>,
    /// How many calls each subject may make (`[limits]`, `[profiles.NAME.limits]`).
    pub limits: crate::rate::Limiter,
    /// Where traces go (`[telemetry]`).
    pub telemetry: crate::telemetry::TelemetryConfig,
}

/// How the gateway reaches one server, and what it trusts of it (the gateway's keys of
/// `[servers.NAME]`).
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamConfig {
    /// How to reach it (`command`, `url` or `catalog`).
    pub transport: Transport,
    /// Overrides the gateway's call timeout for this server (`call_timeout_secs`).
    pub call_timeout: Option<Duration>,
    /// Whether its tool definitions are taken as they come (`trust = "auto"`, the default) or
    /// pinned (`trust = "pin"`): a new tool or a changed definition is quarantined until an
    /// operator approves it (`toolgate approve`).
    pub trust: Trust,
    /// With `trust = "pin"`, whether the first listing ever seen is quarantined too
    /// (`quarantine = true`) instead of approved as found.
    pub quarantine: bool,
    /// Which MCP revision the gateway speaks to it (`protocol`).
    pub protocol: UpstreamProtocol,
    /// How the gateway gets the access tokens an HTTP server asks for (`[servers.NAME.oauth]`).
    pub oauth: Option<ServerOAuth>,
    /// The operator's fixes to its tools' definitions (`[servers.NAME.tools.TOOL]`).
    pub tools: crate::overrides::ToolOverrides,
}

impl UpstreamConfig {
    /// A server reached by `transport`, with every other setting at its default.
    pub fn new(transport: Transport) -> UpstreamConfig {
        UpstreamConfig {
            transport,
            call_timeout: None,
            trust: Trust::Auto,
            quarantine: false,
            protocol: UpstreamProtocol::Auto,
            oauth: None,
            tools: crate::overrides::ToolOverrides::default(),
        }
    }
}

/// Where a bearer token's secret is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// An environment variable of the gateway (`env = "VAR"`).
    Env(String),
    /// A file, its content trimmed (`file = "PATH"`, relative to the configuration).
    File(PathBuf),
}

/// One bearer token (`[tokens.NAME]`): where its secret is and which subject it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenConfig {
    /// Where the secret is.
    pub source: TokenSource,
    /// The profile its sessions see (`profile`), or the gateway's own subject.
    pub profile: Option<String>,
}

impl TokenConfig {
    /// Reads the secret: the variable's value or the file's content, trimmed. An unset
    /// variable, an unreadable file or an empty secret is an error naming `name`.
    pub fn secret(&self, name: &str) -> Result<String, String> {
        let secret = match &self.source {
            TokenSource::Env(var) => std::env::var(var)
                .map_err(|_| format!("tokens.{name}: the environment variable {var} is not set"))?,
            TokenSource::File(path) => std::fs::read_to_string(path)
                .map_err(|e| format!("tokens.{name}: cannot read {}: {e}", path.display()))?,
        };
        let secret = secret.trim().to_owned();
        if secret.len() < 16 {
            return Err(format!(
                "tokens.{name}: the token is shorter than 16 characters; use a long random one"
            ));
        }
        Ok(secret)
    }
}

/// The gateway's keys of the `[gateway]` table (the library reads `exposure` and deferral).
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayConfig {
    /// How long a tool call may take (`call_timeout_secs`, default 60).
    pub call_timeout: Duration,
    /// How long a server may take to start and list its tools (`startup_timeout_secs`,
    /// default 30).
    pub startup_timeout: Duration,
    /// How long a client's first requests wait for servers still starting
    /// (`ready_timeout_secs`, default 5).
    pub ready_timeout: Duration,
    /// How long an HTTP session may go without a request before it ends
    /// (`session_idle_secs`, default 28800, eight hours).
    pub session_idle: Duration,
    /// How long an HTTP session with no request in flight and no event stream open keeps its
    /// transport's state in memory (`session_hibernate_secs`, default 60); after that only its
    /// record in the session store is kept, and its next request restores it from there.
    pub session_hibernate: Duration,
    /// Most HTTP sessions open at once (`max_sessions`, default 1000).
    pub max_sessions: usize,
    /// How long an HTTP client may take to send a request's headers (`header_timeout_secs`,
    /// default 10): a client dripping them, or one that says nothing, is cut off.
    pub header_timeout: Duration,
    /// How long an HTTP client may take to send a request's body (`body_timeout_secs`, default
    /// 10; 408 after it).
    pub body_timeout: Duration,
    /// Host names the HTTP endpoints answer besides the loopback ones (`allowed_hosts`).
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed besides the loopback ones (`allowed_origins`).
    pub allowed_origins: Vec<String>,
    /// The store of approved tool definitions (`pins`, a path; default
    /// `$XDG_DATA_HOME/toolgate/pins.sqlite3`). Opened only when a server has `trust = "pin"`.
    pub pins: Option<std::path::PathBuf>,
    /// Where every decision of the audit trail is also written as one JSON object a line
    /// (`audit_log`, a path relative to the file; appended to, made readable by its owner
    /// only). Off by default.
    pub audit_log: Option<std::path::PathBuf>,
    /// Where HTTP sessions' state is kept between requests (`sessions`): `"memory"` (the
    /// default: this process only) or a Redis URL, `"redis://HOST:PORT/DB"`, shared by every
    /// gateway that names it, so that a session outlives a restart and any replica serves it.
    pub sessions: SessionStoreConfig,
    /// The secret that signs the grants of callers the gateway keeps no session for (MCP
    /// 2026-07-28 over HTTP; `grant_key`, at least 32 characters, usually `"${VAR}"`). Every
    /// replica behind one endpoint needs the same; without it each process makes its own, and
    /// its grants hold on it alone.
    pub grant_key: Option<Secret>,
    /// The most one upstream's listing may hold: tools (`list_max_tools`, default 10,000),
    /// pages (`list_max_pages`, default 1,000) and bytes of all its pages together
    /// (`list_max_bytes`, default 64 MiB). A listing past one fails the server with a reason
    /// naming the cap.
    pub list_caps: ListCaps,
}

/// The most one upstream's `tools/list` may hold (`[gateway] list_max_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListCaps {
    /// Tools, over all pages.
    pub tools: usize,
    /// Pages (`nextCursor` followed).
    pub pages: usize,
    /// Bytes of all pages together, as the server sent them.
    pub bytes: usize,
}

impl Default for ListCaps {
    fn default() -> ListCaps {
        ListCaps { tools: 10_000, pages: 1_000, bytes: 64 << 20 }
    }
}

/// Where HTTP sessions' state is kept (`[gateway] sessions`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SessionStoreConfig {
    /// In this process: sessions end with it (`"memory"`, the default).
    #[default]
    Memory,
    /// In the Redis server at this URL (`redis://[:PASSWORD@]HOST[:PORT][/DB]`).
    Redis(String),
}

impl Default for GatewayConfig {
    fn default() -> GatewayConfig {
        GatewayConfig {
            call_timeout: Duration::from_secs(60),
            startup_timeout: Duration::from_secs(30),
            ready_timeout: Duration::from_secs(5),
            session_idle: Duration::from_secs(8 * 3600),
            session_hibernate: Duration::from_secs(60),
            max_sessions: 1000,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            pins: None,
            audit_log: None,
            sessions: SessionStoreConfig::Memory,
            grant_key: None,
            list_caps: ListCaps::default(),
        }
    }
}

/// How the gateway reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP over stdin and stdout (`command`).
    Stdio {
        /// The program to run.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables added to the gateway's own.
        env: BTreeMap<String, String>,
        /// The working directory, absolute or relative to the gateway's.
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint (`url`).
    Http {
        /// The endpoint, `http://` or `https://`.
        url: String,
        /// Headers sent with every request, such as `Authorization`.
        headers: BTreeMap<String, String>,
    },
    /// A static catalog file whose tools answer "not connected" (`catalog`): for demos and
    /// for measuring retrieval without starting servers.
    Catalog {
        /// The catalog file (JSONL or a `tools/list` map).
        path: PathBuf,
    },
}

/// The gateway as an OAuth 2.1 resource server (`[oauth]`): which authorization servers'
/// JWT access tokens its HTTP endpoints accept, for which audience, and which profile an
/// identity's claims give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    /// This gateway's resource URI (`resource`, like `"https://gateway.example/mcp"`): what a
    /// token's `aud` must hold (RFC 8707), and what its protected-resource metadata names.
    pub resource: String,
    /// The authorization servers' issuer URLs (`issuers`): only their tokens are read, with
    /// the keys their metadata publishes.
    pub issuers: Vec<String>,
    /// Scopes every token must carry (`scopes`; also the metadata's `scopes_supported`).
    pub scopes: Vec<String>,
    /// Profile by name → the claims that give it (`[oauth.profiles]`, like
    /// `reader = ["groups=readers"]`). A claim matches when its value equals the one given, or
    /// holds it (an array, or a space-separated `scope`); `a.b=v` looks into nested claims.
    pub profiles: BTreeMap<String, Vec<String>>,
    /// Claims that give the gateway's own subject, as a token without a profile has
    /// (`gateway_claims`): the operator's pages and every tool the policy allows.
    pub gateway_claims: Vec<String>,
    /// The profile of an identity no claim maps (`default_profile`); without one such an
    /// identity is refused.
    pub default_profile: Option<String>,
}

/// How an upstream's access tokens are got (`[servers.NAME.oauth]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OAuthGrant {
    /// The gateway's own client credentials (`"client_credentials"`).
    ClientCredentials,
    /// A person signs in once with `toolgate login SERVER` (authorization code with PKCE);
    /// the gateway refreshes the token it got (`"authorization_code"`, the default).
    #[default]
    AuthorizationCode,
    /// Each caller's own identity: its inbound access token exchanged (RFC 8693) for one for
    /// this server (`"token_exchange"`); a caller without one is refused.
    TokenExchange,
}

/// An upstream's OAuth client settings (`[servers.NAME.oauth]`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServerOAuth {
    /// How tokens are got (`grant`).
    pub grant: OAuthGrant,
    /// The client id at the authorization server (`client_id`); without one, `toolgate login`
    /// registers a client dynamically (RFC 7591).
    pub client_id: Option<String>,
    /// The client secret (`client_secret`, usually `"${VAR}"`).
    pub client_secret: Option<Secret>,
    /// Scopes asked for (`scopes`).
    pub scopes: Vec<String>,
    /// The authorization server's issuer (`issuer`); by default the one the server's own
    /// protected-resource metadata names.
    pub issuer: Option<String>,
    /// The resource the tokens are for (`resource`); by default the server's URL.
    pub resource: Option<String>,
    /// The loopback port `toolgate login` listens on for the redirect (`redirect_port`; 0, the
    /// default, picks a free one, as RFC 8252 allows).
    pub redirect_port: u16,
}

/// Which MCP revision the gateway opens a server's connection with (`[servers.NAME] protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UpstreamProtocol {
    /// `"auto"`: `server/discover` at 2026-07-28 first, `initialize` for a server that does not
    /// know it (one round trip more at start).
    #[default]
    Auto,
    /// `"2025-11-25"`: `initialize` alone, for a server that mishandles the probe.
    Legacy,
}

/// How far a server's tool definitions are trusted (`[servers.NAME] trust`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trust {
    /// Every definition is served as listed.
    #[default]
    Auto,
    /// Only approved definitions are served; new and changed ones wait in quarantine.
    Pin,
}

impl Transport {
    /// The values of this transport that must never be shown or logged: a child's `env`
    /// values, an HTTP server's `headers` values (and a `Bearer` or `Basic` header's credential
    /// alone), and the password of a URL's userinfo with the Basic credential made of it (which
    /// a server may echo back).
    pub fn secrets(&self) -> Vec<String> {
        match self {
            Transport::Stdio { env, .. } => env.values().cloned().collect(),
            Transport::Http { url, headers } => {
                let mut out: Vec<String> = headers
                    .values()
                    .flat_map(|v| {
                        let credential = v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("Basic "));
                        [v.clone(), credential.unwrap_or_default().to_owned()]
                    })
                    .filter(|v| !v.is_empty())
                    .collect();
                if let Some((user, password)) = userinfo(url) {
                    let basic = base64(format!("{user}:{password}").as_bytes());
                    out.extend([format!("{user}:{password}"), password, basic]);
                }
                out
            }
            Transport::Catalog { .. } => Vec::new(),
        }
    }
}

/// The user and password of a URL's userinfo (`scheme://USER:PASSWORD@host/…`), if it has a
/// password.
fn userinfo(url: &str) -> Option<(String, String)> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let (info, _) = authority.rsplit_once('@')?;
    let (user, password) = info.split_once(':')?;
    (!password.is_empty()).then(|| (user.to_owned(), password.to_owned()))
}

/// Standard base64 with padding (what HTTP Basic authentication sends).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
