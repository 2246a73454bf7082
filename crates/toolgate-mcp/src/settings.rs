//! settings: how the gateway behaves, from `[gateway]` and `[search]` of the configuration and
//! the command line, and the error of a configuration it cannot start from.

use std::time::Duration;

use crate::config::{Config, Exposure, GatewayConfig, SearchConfig, ServerMode};
use toolgate::Index;
use toolgate::search::{IndexBuilder, ModelError};
use toolgate::toolbox::DeferConfig;
use toolgate::toolbox::PolicyError;

/// How the gateway behaves: the `[gateway]` table as the configuration file gave it
/// ([`Settings::gateway`], read once and not copied), and what the gateway makes of the
/// configuration at run time or takes from the command line.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The gateway's keys of `[gateway]`: timeouts, session limits, listing caps and the rest,
    /// as read.
    pub gateway: GatewayConfig,
    /// How tools are shown (`[gateway] exposure`, as the library read it; `--exposure` on the
    /// command line sets it).
    pub exposure: Option<Exposure>,
    /// Deferral (`[gateway] mode`, `auto_threshold`, `context_window`, as the library read
    /// them).
    pub defer: DeferConfig,
    /// The first wait before restarting an upstream that died (doubling up to a minute);
    /// `None` leaves a dead upstream failed.
    pub restart_backoff: Option<Duration>,
    /// In native exposure, how long a `tool_search` that changed the tool list waits for the
    /// client to list the tools again before it answers (default 1 s), so that the client's
    /// next model request already carries the loaded tools. A client that let one wait run out
    /// is not waited for again.
    pub relist_wait: Duration,
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
    /// Where HTTP sessions' state is kept between requests (`[gateway] sessions`; in memory
    /// unless [`crate::store::open`] gave a shared one).
    pub sessions: std::sync::Arc<dyn crate::store::SessionStore>,
    /// Signs and checks the grants of callers the gateway keeps no session for (MCP 2026-07-28
    /// over HTTP; [`toolgate::toolbox::GrantProblem`]): from `[gateway] grant_key`, or made at random for this
    /// process. Grants live as long as an idle session would (`[gateway] session_idle_secs`).
    pub grants: toolgate::GrantKey,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings::from_config(&Config::default())
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
        Settings::from_config(config)
            .with_search(&config.search)
            .map_err(|e| GatewayError::ranking(&e, &config.search))
    }

    /// The settings of a configuration's `[gateway]` table (the library's keys and the
    /// gateway's), ranking as the default does until [`Settings::with_search`].
    pub fn from_config(config: &Config) -> Settings {
        let gateway = &config.host.gateway;
        Settings {
            grants: match &gateway.grant_key {
                Some(secret) => toolgate::GrantKey::new(secret.0.as_bytes(), gateway.session_idle),
                None => toolgate::GrantKey::new(&toolgate::secret::random_secret(), gateway.session_idle),
            },
            gateway: gateway.clone(),
            exposure: config.exposure,
            defer: config.defer,
            restart_backoff: Some(Duration::from_secs(1)),
            relist_wait: Duration::from_secs(1),
            access: crate::access::Access::default(),
            index: Index::builder(),
            profile: None,
            sessions: std::sync::Arc::new(crate::store::MemoryStore::default()),
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
    /// The error of a ranking that cannot be built from `search`, with the key to fix.
    pub(crate) fn ranking(e: &ModelError, search: &SearchConfig) -> GatewayError {
        let key = if search.model.is_some() { "search.model" } else { "search.strategy" };
        GatewayError { key: key.to_owned(), message: e.to_string() }
    }

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
