//! config: here is a `toolgate.toml` or an `mcpServers` JSON file, give me the gateway
//! configuration, or an error that names the file, the key and the problem.
//!
//! Two formats are read:
//!
//! - **`toolgate.toml`** with the tables `[gateway]`, `[budget]`, `[policy]`, `[servers.NAME]`
//!   and `[profiles.NAME]` (docs/config.md). Reading is strict: an unknown
//!   key anywhere is an error that lists the known keys of its table, so a typo never goes
//!   unnoticed.
//! - **`mcpServers` JSON**, the file Claude Desktop (`claude_desktop_config.json`), Claude Code
//!   (`.mcp.json`) and Cursor (`mcp.json`) already use, and VS Code's `{"servers": {...}}`, read
//!   as is: each entry becomes a server with default policy, and keys other clients put there
//!   (`autoApprove`, `timeout`, ...) are ignored. Comments and trailing commas (VS Code writes
//!   JSONC) are accepted.
//!
//! Both are parsed by hand from a `toml::Table` or a `serde_json::Value` rather than with serde
//! derive, so that every error can say where it is (`servers.github.max_active`) and what is
//! expected there.
//!
//! In `command`, `args`, `env` values, `url` and `headers` values, `${VAR}` and
//! `${VAR:-default}` are replaced from the process environment, as Claude Code does;
//! `${env:VAR}` (VS Code) works too. Relative `cwd` and `catalog` paths are resolved against the
//! folder of the configuration file.
//!
//! ```
//! use std::path::Path;
//! use toolgate::config::{Config, Transport};
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
//! assert!(matches!(&time.transport, Transport::Stdio { command, .. } if command == "uvx"));
//!
//! let text = "[servers.time]\ncommand = 3\n";
//! let err = Config::from_toml("toolgate.toml", text, Path::new(".")).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "toolgate.toml: servers.time.command: expected a string, found an integer (3)"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod expand;
mod glob;
mod mcp_json;
mod toml_file;

#[cfg(test)]
mod oauth_tests;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::defer::{DeferConfig, DeferMode};

pub use error::{ConfigError, ConfigErrorKind, PatternProblem};
pub use glob::glob_match;

/// Default of a server's `max_active`: how many of its tools may be active at once.
pub const DEFAULT_MAX_ACTIVE: usize = 24;

/// Highest `max_active` a server may have.
pub const MAX_ACTIVE_CAP: usize = 96;

/// The whole gateway configuration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// How tools are exposed, deferral and timeouts (`[gateway]`).
    pub gateway: GatewayConfig,
    /// Definitions per request (`[budget]`).
    pub budget: BudgetConfig,
    /// How `tool_search` ranks (`[search]`).
    pub search: SearchConfig,
    /// Which model takes which provider mode (`[models]`: a glob over model names → a mode of
    /// `toolgate render`), over the built-in table of `render::Models`.
    pub models: BTreeMap<String, String>,
    /// Rules for every subject (`[policy]`).
    pub policy: PolicyConfig,
    /// Upstream servers by name (`[servers.NAME]`, or the entries of `mcpServers`).
    pub servers: BTreeMap<String, ServerConfig>,
    /// Subjects by name: sub-agents, teams, endpoints (`[profiles.NAME]`).
    pub profiles: BTreeMap<String, ProfileConfig>,
    /// Bearer tokens of the HTTP endpoints by name (`[tokens.NAME]`).
    pub tokens: BTreeMap<String, TokenConfig>,
    /// OAuth 2.1 access tokens the HTTP endpoints accept beside the static ones (`[oauth]`).
    pub oauth: Option<OAuthConfig>,
    /// The file it was read from (made absolute), when it was read from one
    /// ([`Config::from_path`]): a gateway refuses to start a server that serves this same file.
    pub source: Option<PathBuf>,
    /// Every value a `${VAR}` of the file took from the environment: whatever it holds is
    /// treated as a secret, masked wherever the gateway shows or logs text (a token passed in
    /// `args`, say).
    pub expanded: Vec<Secret>,
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

impl Config {
    /// Reads a configuration file: `.toml` is TOML, `.json` is `mcpServers` JSON, and any other
    /// file is JSON if its first non-blank character is `{`, TOML otherwise.
    pub fn from_path(path: &Path) -> Result<Config, ConfigError> {
        let label = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: label.clone(),
            key: String::new(),
            kind: ConfigErrorKind::Io(e.to_string()),
        })?;
        // Editors on Windows may start a file with a byte order mark; neither parser wants it.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let base_dir = path.parent().unwrap_or(Path::new(""));
        let json = match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => false,
            Some("json") => true,
            _ => text.trim_start().starts_with('{'),
        };
        let mut config = if json {
            Config::from_mcp_json(&label, text, base_dir)
        } else {
            Config::from_toml(&label, text, base_dir)
        }?;
        config.source = Some(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()));
        Ok(config)
    }

    /// Reads `toolgate.toml` text; `label` names the file in errors and relative paths are
    /// resolved against `base_dir`.
    pub fn from_toml(label: &str, text: &str, base_dir: &Path) -> Result<Config, ConfigError> {
        let source = Source::new(label, base_dir, &process_env);
        let mut config = toml_file::parse(&source, text)?;
        config.expanded = source.expanded();
        Ok(config)
    }

    /// Every key `toolgate.toml` accepts, as dotted paths (`gateway.exposure`,
    /// `servers.NAME.command`, with `NAME` standing for a server's or profile's name); the keys
    /// `docs/config.md` documents.
    pub fn known_keys() -> Vec<String> {
        toml_file::known_keys()
    }

    /// Reads `mcpServers` JSON text (Claude Desktop, Claude Code, Cursor, or VS Code's
    /// `servers`); `label` names the file in errors and relative paths are resolved against
    /// `base_dir`. Every entry becomes a server with the default policy.
    pub fn from_mcp_json(label: &str, text: &str, base_dir: &Path) -> Result<Config, ConfigError> {
        let source = Source::new(label, base_dir, &process_env);
        let mut config = mcp_json::parse(&source, text)?;
        config.expanded = source.expanded();
        Ok(config)
    }
}

/// How the gateway shows tools to its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Exposure {
    /// Active tools appear in `tools/list`, with `notifications/tools/list_changed` when the
    /// active set grows (`"native"`).
    #[default]
    Native,
    /// The tool list is `tool_search` and `call_tool` only and never changes (`"bridge"`).
    Bridge,
}

impl Exposure {
    /// The exposure whose budget is the tightest among those a host configured with
    /// `configured` may serve (`None`: chosen per client): bridge, which sends one more
    /// meta-tool (`call_tool`), unless native is configured. A subject's required tools are
    /// checked against it, so that no session meets a budget its configuration cannot fit.
    pub fn tightest(configured: Option<Exposure>) -> Exposure {
        configured.unwrap_or(Exposure::Bridge)
    }
}

/// The `[gateway]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayConfig {
    /// How tools are shown to the client (`exposure`): `Some` for `native` or `bridge`, `None`
    /// for `auto` (the default: bridge for clients known to ignore `list_changed`, native for
    /// every other).
    pub exposure: Option<Exposure>,
    /// Deferral: keys `mode` (on, off, auto; the gateway's default is on), `auto_threshold`
    /// (0 < x ≤ 1) and `context_window`.
    pub defer: DeferConfig,
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

/// A secret of the configuration: its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
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
            exposure: None,
            // The gateway defers by default, as Claude Code does: `auto` would send every
            // definition of a small catalog, and a client then sees tools it never searched for.
            defer: DeferConfig { mode: DeferMode::On, ..DeferConfig::default() },
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

pub use crate::search::SearchConfig;

/// The `[budget]` table: tool definitions per request, every tool counted (EthanKit's
/// 96 / 112 / 128). Always `1 <= first_turn <= dynamic <= hard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetConfig {
    /// Definitions in the first request, before the model has searched.
    pub first_turn: usize,
    /// Definitions once the active set grows.
    pub dynamic: usize,
    /// A limit never exceeded.
    pub hard: usize,
}

impl Default for BudgetConfig {
    fn default() -> BudgetConfig {
        BudgetConfig { first_turn: 96, dynamic: 112, hard: 128 }
    }
}

impl BudgetConfig {
    /// Whether `1 <= first_turn <= dynamic <= hard`, as every budget must be (a configuration
    /// file and [`Policy::builder`](crate::Policy::builder) both refuse others).
    pub fn is_ordered(&self) -> bool {
        1 <= self.first_turn && self.first_turn <= self.dynamic && self.dynamic <= self.hard
    }
}

/// The `[policy]` table: rules for every subject.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyConfig {
    /// Glob patterns over qualified names (`server__tool`); a match is never shown or run.
    pub deny: Vec<String>,
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

/// Which of a server's tools are offered (`mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServerMode {
    /// Every allowed tool is offered, deferred by the usual rule (`"auto"`).
    #[default]
    Auto,
    /// Only tools matching `allowed` are offered (`"allowlist"`).
    Allowlist,
    /// Every tool is offered (`"all"`).
    All,
}

/// Whether a server's tools may change things (`side_effects`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SideEffects {
    /// Any tool may run (`"allow"`).
    #[default]
    Allow,
    /// Only tools known to be read-only may run, from `read_only` or a `readOnlyHint: true`
    /// annotation; anything else is denied (`"read_only"`).
    ReadOnly,
}

/// One upstream server (`[servers.NAME]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// How to reach it.
    pub transport: Transport,
    /// Which tools are offered.
    pub mode: ServerMode,
    /// Glob patterns over the server's own tool names (default `["*"]`).
    pub allowed: Vec<String>,
    /// Glob patterns over the server's own tool names that are never offered; deny wins.
    pub denied: Vec<String>,
    /// Tools always loaded; they take budget first.
    pub pinned: Vec<String>,
    /// Tools sent in full every turn, never deferred.
    pub always_load: Vec<String>,
    /// How many of its tools may be active at once (default 24, at most 96).
    pub max_active: usize,
    /// Whether its tools may change things.
    pub side_effects: SideEffects,
    /// Tools trusted to be read-only whatever the server says.
    pub read_only: Vec<String>,
    /// Whether the server is used at all (`enabled`; `"disabled": true` in JSON).
    pub enabled: bool,
    /// Overrides the gateway's call timeout for this server (`call_timeout_secs`).
    pub call_timeout: Option<Duration>,
    /// Whether the server's own `_meta["anthropic/alwaysLoad"]` makes its tools core
    /// (`trust_always_load`, default false): an upstream never raises its own privileges unless
    /// the configuration says it may.
    pub trust_always_load: bool,
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

/// The names of the environment variables a configuration's text reads (`${VAR}` and
/// `${VAR:-default}`, as [`Config::from_path`] expands them), in order, each once: what a client
/// that starts the gateway must pass on to it.
pub fn variables(text: &str) -> Vec<String> {
    let seen = std::cell::RefCell::new(Vec::<String>::new());
    let _ = expand::expand(text, &|name| {
        let mut seen = seen.borrow_mut();
        if !seen.iter().any(|s| s == name) {
            seen.push(name.to_owned());
        }
        Some(String::new())
    });
    seen.into_inner()
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

impl ServerConfig {
    /// A server reached by `transport`, with every other setting at its default.
    pub fn new(transport: Transport) -> ServerConfig {
        ServerConfig {
            transport,
            mode: ServerMode::Auto,
            allowed: vec!["*".to_owned()],
            denied: Vec::new(),
            pinned: Vec::new(),
            always_load: Vec::new(),
            max_active: DEFAULT_MAX_ACTIVE,
            side_effects: SideEffects::Allow,
            read_only: Vec::new(),
            enabled: true,
            call_timeout: None,
            trust_always_load: false,
            trust: Trust::Auto,
            quarantine: false,
            protocol: UpstreamProtocol::Auto,
            oauth: None,
        }
    }
}

/// One subject: a sub-agent, a team or an endpoint (`[profiles.NAME]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileConfig {
    /// Glob patterns over qualified names the subject may use (default `["*"]`, as a Claude
    /// Code sub-agent without `tools` inherits every tool).
    pub tools: Vec<String>,
    /// Glob patterns over qualified names the subject may never use; these win over `tools`.
    pub disallowed_tools: Vec<String>,
}

impl Default for ProfileConfig {
    fn default() -> ProfileConfig {
        ProfileConfig { tools: vec!["*".to_owned()], disallowed_tools: Vec::new() }
    }
}

/// Looks a variable up in the process environment (a value that is not UTF-8 counts as unset).
fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The file being read, with what reading it needs: its folder and an environment.
struct Source<'a> {
    file: &'a str,
    base_dir: &'a Path,
    env: &'a dyn Fn(&str) -> Option<String>,
    /// The values variables took, in the order first read.
    expanded: std::cell::RefCell<Vec<String>>,
}

impl<'a> Source<'a> {
    fn new(file: &'a str, base_dir: &'a Path, env: &'a dyn Fn(&str) -> Option<String>) -> Source<'a> {
        Source { file, base_dir, env, expanded: Default::default() }
    }

    /// The values variables took while the file was read.
    fn expanded(&self) -> Vec<Secret> {
        self.expanded.borrow().iter().map(|v| Secret(v.clone())).collect()
    }

    fn error(&self, key: &str, kind: ConfigErrorKind) -> ConfigError {
        ConfigError { file: self.file.to_owned(), key: key.to_owned(), kind }
    }

    /// `text` with `${VAR}` and `${VAR:-default}` replaced.
    fn expand(&self, key: &str, text: &str) -> Result<String, ConfigError> {
        let recording = |name: &str| {
            let value = (self.env)(name)?;
            let mut seen = self.expanded.borrow_mut();
            if !value.is_empty() && !seen.contains(&value) {
                seen.push(value.clone());
            }
            Some(value)
        };
        expand::expand(text, &recording)
            .map_err(|var| self.error(key, ConfigErrorKind::UnsetVariable { var }))
    }

    /// Checks a glob pattern.
    fn pattern(&self, key: &str, pattern: &str) -> Result<String, ConfigError> {
        glob::check(pattern).map_err(|problem| {
            self.error(key, ConfigErrorKind::InvalidPattern { pattern: pattern.to_owned(), problem })
        })?;
        Ok(pattern.to_owned())
    }

    /// Checks a server name: not empty, and without `__`, which separates server from tool in
    /// qualified names.
    fn server_name(&self, key: &str, name: &str) -> Result<(), ConfigError> {
        if name.trim().is_empty() {
            return Err(self.error(key, ConfigErrorKind::EmptyName { what: "server" }));
        }
        if name.contains("__") {
            return Err(self.error(key, ConfigErrorKind::DoubleUnderscore { name: name.to_owned() }));
        }
        Ok(())
    }

    /// A path from the file, resolved against the file's folder when relative.
    fn path(&self, path: &str) -> PathBuf {
        self.base_dir.join(path)
    }

    /// Checks that a `url` is HTTP.
    fn url(&self, key: &str, url: String) -> Result<String, ConfigError> {
        let lower = url.to_ascii_lowercase();
        let rest = lower.strip_prefix("http://").or_else(|| lower.strip_prefix("https://"));
        if rest.is_none_or(str::is_empty) {
            return Err(self.error(key, ConfigErrorKind::InvalidUrl { url }));
        }
        Ok(url)
    }
}

/// `path.name` as a dotted key, quoting a name that is not a bare TOML key.
fn child_key(path: &str, name: &str) -> String {
    let bare = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let name = if bare { name.to_owned() } else { format!("{name:?}") };
    if path.is_empty() { name } else { format!("{path}.{name}") }
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
