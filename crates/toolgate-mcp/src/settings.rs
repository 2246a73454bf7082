//! settings: how the gateway behaves, from `[gateway]` and `[search]` of the configuration and
//! the command line, and the error of a configuration it cannot start from.

use std::time::Duration;

use toolgate::Index;
use toolgate::config::{Config, Exposure, GatewayConfig, SearchConfig, ServerMode};
use toolgate::search::{IndexBuilder, ModelError};
use toolgate::toolbox::{DeferConfig, PolicyError};

/// How the gateway behaves, from `[gateway]` of the configuration and the command line. A
/// value the configuration file holds keeps its `GatewayConfig` name here (`call_timeout`,
/// `ready_timeout`, `session_idle` …); the rest are what the gateway makes of the file at run
/// time (`access`, `sessions`, `grants`, `index`) or sets only from the command line.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `native` (active tools in `tools/list`) or `bridge` (`tool_search` and `call_tool`
    /// only) for every session, or `None` to choose per client ([`Settings::exposure_for`]).
    pub exposure: Option<Exposure>,
    /// When tools are deferred (`on` by default; `bridge` always defers).
    pub defer: DeferConfig,
    /// How long a forwarded call may take unless the server sets its own limit.
    pub call_timeout: Duration,
    /// How long an upstream may take to start and list its tools.
    pub startup_timeout: Duration,
    /// The first wait before restarting an upstream that died (doubling up to a minute);
    /// `None` leaves a dead upstream failed.
    pub restart_backoff: Option<Duration>,
    /// How long after the gateway starts `initialize`, `tools/list`, `tool_search` and calls
    /// wait for upstreams still starting before they answer with what is ready (default 5 s):
    /// real clients ask at once.
    pub ready_timeout: Duration,
    /// In native exposure, how long a `tool_search` that changed the tool list waits for the
    /// client to list the tools again before it answers (default 1 s), so that the client's
    /// next model request already carries the loaded tools. A client that let one wait run out
    /// is not waited for again.
    pub relist_wait: Duration,
    /// How long an HTTP session may go without a request before it ends (default 8 hours).
    pub session_idle: Duration,
    /// How long an HTTP session with no request in flight and no event stream open keeps
    /// rmcp's state for it (its channels, about 100 KB) before only its record in the session
    /// store is left (default 60 s); its next request restores it from the record.
    pub session_hibernate: Duration,
    /// Most HTTP sessions open at once (default 1,000); a new one past it is refused.
    pub max_sessions: usize,
    /// Which hosts, origins and bearer tokens the HTTP endpoints accept (loopback only, and no
    /// token, by default).
    pub access: crate::access::Access,
    /// How every toolbox indexes its tools (`[search]`: a strategy, and for `bert` the
    /// model, loaded once and shared).
    pub index: IndexBuilder,
    /// The subject served (`--profile NAME`, a `[profiles.NAME]` of the configuration): every
    /// session sees only what it allows. A session's own profile (`/mcp/NAME` or the header
    /// `X-Toolgate-Profile`) narrows it further; it never widens it.
    pub profile: Option<String>,
    /// How long a client may take to send a request's headers (`[gateway]
    /// header_timeout_secs`).
    pub header_timeout: Duration,
    /// How long a client may take to send a request's body (`[gateway] body_timeout_secs`).
    pub body_timeout: Duration,
    /// Where HTTP sessions' state is kept between requests (`[gateway] sessions`; in memory
    /// unless [`crate::store::open`] gave a shared one).
    pub sessions: std::sync::Arc<dyn crate::store::SessionStore>,
    /// Signs and checks the grants of callers the gateway keeps no session for (MCP 2026-07-28
    /// over HTTP; [`toolgate::toolbox::GrantProblem`]): from `[gateway] grant_key`, or made at random for this
    /// process. Grants live as long as an idle session would ([`Settings::session_idle`]).
    pub grants: toolgate::GrantKey,
    /// The most one upstream's listing may hold (`[gateway] list_max_tools`, `list_max_pages`,
    /// `list_max_bytes`).
    pub list_caps: toolgate::config::ListCaps,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings::from_config(&GatewayConfig::default())
    }
}

/// Clients known to ignore `notifications/tools/list_changed`, by a word of their
/// `clientInfo.name` (lower case): they get bridge exposure unless one is configured, since in
/// native exposure the tools they load would never appear. Codex lists once and never again.
pub const BRIDGE_CLIENTS: &[&str] = &["codex"];

impl Settings {
    /// The exposure for a session whose client introduced itself as `client` (its
    /// `clientInfo.name`): the configured one, else bridge for a client of `BRIDGE_CLIENTS`
    /// and native for every other.
    pub fn exposure_for(&self, client: &str) -> Exposure {
        if let Some(e) = self.exposure {
            return e;
        }
        let name = client.to_lowercase();
        if BRIDGE_CLIENTS.iter().any(|c| name.contains(c)) { Exposure::Bridge } else { Exposure::Native }
    }

    /// The settings of a configuration: its `[gateway]` table and its ranking (`[search]`).
    /// Fails when the ranking cannot be built (an unknown strategy, a model that cannot be
    /// read), naming the key.
    pub fn for_config(config: &Config) -> Result<Settings, GatewayError> {
        Settings::from_config(&config.gateway).with_search(&config.search).map_err(|e| {
            let key = if config.search.model.is_some() { "search.model" } else { "search.strategy" };
            GatewayError { key: key.to_owned(), message: e.to_string() }
        })
    }

    /// The settings of a `[gateway]` table.
    pub fn from_config(config: &GatewayConfig) -> Settings {
        Settings {
            exposure: config.exposure,
            defer: config.defer,
            call_timeout: config.call_timeout,
            startup_timeout: config.startup_timeout,
            restart_backoff: Some(Duration::from_secs(1)),
            ready_timeout: config.ready_timeout,
            relist_wait: Duration::from_secs(1),
            session_idle: config.session_idle,
            session_hibernate: config.session_hibernate,
            max_sessions: config.max_sessions,
            access: crate::access::Access::default(),
            index: Index::builder(),
            profile: None,
            header_timeout: config.header_timeout,
            body_timeout: config.body_timeout,
            sessions: std::sync::Arc::new(crate::store::MemoryStore::default()),
            list_caps: config.list_caps,
            grants: match &config.grant_key {
                Some(secret) => toolgate::GrantKey::new(secret.0.as_bytes(), config.session_idle),
                None => toolgate::GrantKey::new(&toolgate::secret::random_secret(), config.session_idle),
            },
        }
    }

    /// These settings ranking as `search` says (loading its model, if it names one; a
    /// folder that holds no model is an error naming it).
    pub fn with_search(mut self, search: &SearchConfig) -> Result<Settings, ModelError> {
        self.index = IndexBuilder::from_config(search)?;
        Ok(self)
    }
}

/// A configuration the gateway cannot start from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayError {
    /// The configuration key at fault, such as `servers.demo.catalog`.
    pub key: String,
    /// What is wrong and what to do.
    pub message: String,
}

impl std::fmt::Display for GatewayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for GatewayError {}

impl GatewayError {
    /// The error of a policy that cannot be applied, with the key to fix.
    pub(crate) fn policy(e: &PolicyError, config: &Config) -> GatewayError {
        let key = match e {
            PolicyError::RequiredOverBudget { server, .. } => {
                let mode = config.servers.get(server).map_or(ServerMode::Auto, |s| s.mode);
                let key = if mode == ServerMode::Auto { "pinned" } else { "mode" };
                format!("servers.{server}.{key}")
            }
            PolicyError::UnknownProfile { name, .. } => format!("profiles.{name}"),
            _ => "budget.first_turn".to_owned(),
        };
        GatewayError { key, message: e.to_string() }
    }
}
