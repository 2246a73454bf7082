//! config: here is a `toolgate.toml`, give me what the library decides from it (exposure,
//! deferral, budgets, ranking, policy, servers' rules, profiles), or an error that names the
//! file, the key and the problem.
//!
//! Reading is strict: an unknown key anywhere is an error that lists the known keys of its
//! table, so a typo never goes unnoticed. The file is parsed by hand from a `toml::Table` rather
//! than with serde derive, so that every error can say where it is (`servers.github.max_active`)
//! and what is expected there.
//!
//! The same file also holds what a program built on the library needs of its own: the gateway's
//! transports, timeouts, session store, bearer tokens and OAuth. Such a program is a [`Host`]:
//! it names the keys it reads in the tables it shares with the library (`[gateway]`,
//! `[servers.NAME]`) and the tables it owns (`[tokens]`, `[oauth]`), and reads them with the
//! same [`Fields`] reader in the same pass, so that one read gives one [`Config`] and a key
//! neither knows is still an error. [`NoHost`], the default, reads nothing more. The gateway's
//! host (`toolgate_mcp::config`) also reads `mcpServers` JSON, the file Claude Desktop, Claude
//! Code and Cursor use, since everything in it is how to reach a server.
//!
//! `${VAR}` and `${VAR:-default}` are replaced from the process environment, as Claude Code
//! does, wherever a value is read with expansion ([`Source::expand`]). Relative paths are
//! resolved against the folder of the configuration file.
//!
//! ```
//! use std::path::Path;
//! use toolgate::config::{Config, ServerMode};
//!
//! let text = r#"
//! [budget]
//! first_turn = 64
//!
//! [servers.time]
//! mode = "allowlist"
//! allowed = ["get_*"]
//! "#;
//! let config: Config = Config::from_toml("toolgate.toml", text, Path::new("/etc/toolgate"))?;
//! assert_eq!(config.budget.first_turn, 64);
//! assert_eq!(config.servers["time"].mode, ServerMode::Allowlist);
//!
//! let text = "[servers.time]\nmax_active = \"many\"\n";
//! let err = Config::<toolgate::config::NoHost>::from_toml("toolgate.toml", text, Path::new(".")).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "toolgate.toml: servers.time.max_active: expected a number of tools from 1 to 96, found a string (\"many\")"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod expand;
mod fields;
mod glob;
mod host;
mod toml_file;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::defer::{DeferConfig, DeferMode};

pub use error::{ConfigError, ConfigErrorKind, PatternProblem};
pub use fields::Fields;
pub use glob::glob_match;
pub use host::{Host, NoHost};

/// Default of a server's `max_active`: how many of its tools may be active at once.
pub const DEFAULT_MAX_ACTIVE: usize = 24;

/// Highest `max_active` a server may have.
pub const MAX_ACTIVE_CAP: usize = 96;

/// A configuration as the library reads it: what it decides (exposure, deferral, budgets,
/// ranking, policy, servers' rules, profiles), and in [`Config::host`] and each
/// [`ServerConfig::host`] what the program reading the file reads of it besides ([`Host`]; the
/// gateway's transports, sessions, tokens and OAuth, read by `toolgate-mcp`).
#[derive(Debug, Clone, PartialEq)]
pub struct Config<H: Host = NoHost> {
    /// How tools are shown to the client (`[gateway] exposure`): `Some` for `native` or
    /// `bridge`, `None` for `auto` (the default: bridge for clients known to ignore
    /// `list_changed`, native for every other).
    pub exposure: Option<Exposure>,
    /// Deferral (`[gateway] mode`, `auto_threshold`, `context_window`). The mode is `on` unless
    /// the file says otherwise, as Claude Code's is: `auto` would send every definition of a
    /// small catalog, and a client then sees tools it never searched for.
    pub defer: DeferConfig,
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
    pub servers: BTreeMap<String, ServerConfig<H::Server>>,
    /// Subjects by name: sub-agents, teams, endpoints (`[profiles.NAME]`).
    pub profiles: BTreeMap<String, ProfileConfig>,
    /// What the program reading the file reads of it besides ([`Host`]).
    pub host: H,
    /// The file it was read from (made absolute), when it was read from one
    /// ([`Config::from_path`]): a gateway refuses to start a server that serves this same file.
    pub source: Option<PathBuf>,
    /// Every value a `${VAR}` of the file took from the environment: whatever it holds is
    /// treated as a secret, masked wherever the gateway shows or logs text (a token passed in
    /// `args`, say).
    pub expanded: Vec<Secret>,
}

impl<H: Host> Default for Config<H> {
    fn default() -> Config<H> {
        Config {
            exposure: None,
            defer: DeferConfig { mode: DeferMode::On, ..DeferConfig::default() },
            budget: BudgetConfig::default(),
            search: SearchConfig::default(),
            models: BTreeMap::new(),
            policy: PolicyConfig::default(),
            servers: BTreeMap::new(),
            profiles: BTreeMap::new(),
            host: H::default(),
            source: None,
            expanded: Vec::new(),
        }
    }
}

impl<H: Host> Config<H> {
    /// Reads a configuration file: `.toml` is TOML, `.json` is `mcpServers` JSON (read by the
    /// host, [`Host::from_mcp_json`]), and any other file is JSON if its first non-blank
    /// character is `{`, TOML otherwise.
    pub fn from_path(path: &Path) -> Result<Config<H>, ConfigError> {
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
    pub fn from_toml(label: &str, text: &str, base_dir: &Path) -> Result<Config<H>, ConfigError> {
        Config::read_toml(&Source::new(label, base_dir), text)
    }

    /// Reads `toolgate.toml` text from `source` (its label, folder and environment).
    pub fn read_toml(source: &Source<'_>, text: &str) -> Result<Config<H>, ConfigError> {
        let mut config = toml_file::parse(source, text)?;
        config.expanded = source.expanded();
        Ok(config)
    }

    /// Reads `mcpServers` JSON text (Claude Desktop, Claude Code, Cursor, or VS Code's
    /// `servers`), as the host reads it ([`Host::from_mcp_json`]); `label` names the file in
    /// errors and relative paths are resolved against `base_dir`.
    pub fn from_mcp_json(label: &str, text: &str, base_dir: &Path) -> Result<Config<H>, ConfigError> {
        let source = Source::new(label, base_dir);
        let mut config = H::from_mcp_json(&source, text)?;
        config.expanded = source.expanded();
        Ok(config)
    }

    /// Every key `toolgate.toml` accepts, as dotted paths (`gateway.exposure`,
    /// `servers.NAME.mode`, with `NAME` standing for a server's or profile's name): the
    /// library's, then the host's ([`Host::known_keys`]).
    pub fn known_keys() -> Vec<String> {
        let mut keys = toml_file::known_keys();
        keys.extend(H::known_keys());
        keys
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

/// A secret of the configuration: its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
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

/// One upstream server (`[servers.NAME]`): the rules the library applies to its tools, and in
/// [`ServerConfig::host`] what the host reads of it besides (for the gateway, how to reach it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig<S = ()> {
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
    /// Whether the server's own `_meta["anthropic/alwaysLoad"]` makes its tools core
    /// (`trust_always_load`, default false): an upstream never raises its own privileges unless
    /// the configuration says it may.
    pub trust_always_load: bool,
    /// What the host reads of `[servers.NAME]` besides these rules.
    pub host: S,
}

impl<S> ServerConfig<S> {
    /// A server with every rule at its default, and `host` for what the host reads of it.
    pub fn new(host: S) -> ServerConfig<S> {
        ServerConfig {
            mode: ServerMode::Auto,
            allowed: vec!["*".to_owned()],
            denied: Vec::new(),
            pinned: Vec::new(),
            always_load: Vec::new(),
            max_active: DEFAULT_MAX_ACTIVE,
            side_effects: SideEffects::Allow,
            read_only: Vec::new(),
            enabled: true,
            trust_always_load: false,
            host,
        }
    }
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

/// The file being read, with what reading it needs: its label (named in every error), its
/// folder (relative paths are resolved against it) and an environment (for `${VAR}`). A
/// [`Host`]'s reader asks it for errors, expansions, paths and URLs, as the library's does.
pub struct Source<'a> {
    file: &'a str,
    base_dir: &'a Path,
    env: &'a dyn Fn(&str) -> Option<String>,
    /// The values variables took, in the order first read.
    expanded: std::cell::RefCell<Vec<String>>,
}

impl std::fmt::Debug for Source<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("file", &self.file)
            .field("base_dir", &self.base_dir)
            .finish_non_exhaustive()
    }
}

impl<'a> Source<'a> {
    /// The file labelled `file` in folder `base_dir`, expanding from the process environment.
    pub fn new(file: &'a str, base_dir: &'a Path) -> Source<'a> {
        Source::with_env(file, base_dir, &process_env)
    }

    /// The file labelled `file` in folder `base_dir`, expanding from `env` (tests give a fixed
    /// one, so that they do not depend on the machine).
    pub fn with_env(
        file: &'a str,
        base_dir: &'a Path,
        env: &'a dyn Fn(&str) -> Option<String>,
    ) -> Source<'a> {
        Source { file, base_dir, env, expanded: Default::default() }
    }

    /// The values variables took while the file was read.
    pub fn expanded(&self) -> Vec<Secret> {
        self.expanded.borrow().iter().map(|v| Secret(v.clone())).collect()
    }

    /// The error `kind` at the dotted `key` of this file.
    pub fn error(&self, key: &str, kind: ConfigErrorKind) -> ConfigError {
        ConfigError { file: self.file.to_owned(), key: key.to_owned(), kind }
    }

    /// `text` with `${VAR}` and `${VAR:-default}` replaced; an unset variable without a
    /// default is an error at `key`.
    pub fn expand(&self, key: &str, text: &str) -> Result<String, ConfigError> {
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
    pub fn pattern(&self, key: &str, pattern: &str) -> Result<String, ConfigError> {
        glob::check(pattern).map_err(|problem| {
            self.error(key, ConfigErrorKind::InvalidPattern { pattern: pattern.to_owned(), problem })
        })?;
        Ok(pattern.to_owned())
    }

    /// Checks a server name: not empty, and without `__`, which separates server from tool in
    /// qualified names.
    pub fn server_name(&self, key: &str, name: &str) -> Result<(), ConfigError> {
        if name.trim().is_empty() {
            return Err(self.error(key, ConfigErrorKind::EmptyName { what: "server" }));
        }
        if name.contains("__") {
            return Err(self.error(key, ConfigErrorKind::DoubleUnderscore { name: name.to_owned() }));
        }
        Ok(())
    }

    /// A path from the file, resolved against the file's folder when relative.
    pub fn path(&self, path: &str) -> PathBuf {
        self.base_dir.join(path)
    }

    /// Checks that a URL at `key` is HTTP.
    pub fn url(&self, key: &str, url: String) -> Result<String, ConfigError> {
        let lower = url.to_ascii_lowercase();
        let rest = lower.strip_prefix("http://").or_else(|| lower.strip_prefix("https://"));
        if rest.is_none_or(str::is_empty) {
            return Err(self.error(key, ConfigErrorKind::InvalidUrl { url }));
        }
        Ok(url)
    }
}

/// `path.name` as a dotted key, quoting a name that is not a bare TOML key.
pub fn child_key(path: &str, name: &str) -> String {
    let bare = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let name = if bare { name.to_owned() } else { format!("{name:?}") };
    if path.is_empty() { name } else { format!("{path}.{name}") }
}
