//! policy: here is the configuration and a subject, tell me which tools that subject may see and
//! run, and why each other tool is denied.
//!
//! A [`Policy`] is built once from a [`Config`] (and optionally a profile) and applied **before**
//! anything else sees the catalog: [`Policy::filter`] gives the visible catalog that deferral,
//! the index, announcements, tool lists and the gate are built over, so a denied tool is never
//! announced, searchable, listed or callable; the gate asks [`Policy::decide`] again at call
//! time ([`Toolbox::check`](crate::Toolbox::check)). Every denial names its [`Rule`], the exact
//! configuration key and pattern, and becomes an [`AuditEvent`] for the host's log.
//!
//! The rules, first match wins (deny always beats allow):
//!
//! 1. `[policy] deny`: glob patterns over qualified names; a pattern without `__` (a bare
//!    server name such as `github`) also matches the server, so it denies the whole server,
//!    and a built-in tool's own name (`Bash`).
//! 2. `[profiles.P] disallowed_tools` of the subject and of every agent above it.
//! 3. `[servers.S] enabled = false`.
//! 4. `[servers.S] denied`: patterns over the server's own tool names.
//! 5. `[servers.S] allowed` with `mode = "auto"` or `"allowlist"`: only what it lists
//!    (`mode = "all"` skips it).
//! 6. `[servers.S] side_effects = "read_only"`: only tools with `readOnlyHint: true` or listed
//!    in the trusted `read_only`; fail-closed, a description never grants anything.
//! 7. `[profiles.P] tools` of the subject and of every agent above it.
//!
//! Required tools (pins, and every visible tool of a server whose mode is not `auto`) take
//! budget first; when they do not fit, [`Policy::required`] fails with a [`PolicyError`] that
//! names the server, the count and the limit. The policy language with worked examples is in
//! `docs/policy.md`.
//!
//! One subject's first turns, end to end (the [`Toolbox`](crate::Toolbox) does each step):
//!
//! ```
//! use std::path::Path;
//! use serde_json::json;
//! use toolgate::config::Config;
//! use toolgate::toolbox::{Decision, Denial};
//! use toolgate::policy::{Action, Policy};
//! use toolgate::{Catalog, Toolbox};
//!
//! let config: Config = Config::from_toml("toolgate.toml", r#"
//!     [policy]
//!     deny = ["*__delete_*"]
//!     [profiles.researcher]
//!     tools = ["git", "filesystem__read_*", "filesystem__list_*"]
//! "#, Path::new("."))?;
//! let catalog = Catalog::embedded();
//! let policy = Policy::new(&config, Some("researcher"))?;
//!
//! // 1. The policy first: everything below only ever sees the visible catalog.
//! let toolbox = Toolbox::builder(&catalog, policy.clone()).build()?;
//! assert!(toolbox.about().hidden().iter().all(|e| e.action == Action::Hidden));
//! assert!(toolbox.visible().get("filesystem__write_file").is_none(), "hidden: not even searchable");
//!
//! // 2. The first turn: required tools, then the best-ranked ones, within the budget.
//! let mut chat = toolbox.conversation();
//! toolbox.preselect(&mut chat, "show me the git log", "")?;
//! assert!(chat.active().iter().any(|n| n == "git__git_log"));
//! toolbox.tools(&mut chat)?;
//!
//! // 3. Search runs over the visible surface only; the budget unloads what no longer fits.
//! let found = toolbox.tool_search(&mut chat, &json!({"query": "read a file", "limit": 3}))?;
//! assert!(found.unloaded.is_empty());
//! assert!(found.matches().all(|t| policy.decide(t).is_allow()));
//!
//! // 4. The gate asks the policy again, whatever the conversation says.
//! let d = toolbox.check(&mut chat, "filesystem__write_file", &json!({}));
//! assert!(matches!(d, Decision::Deny(Denial::Forbidden { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod builder;
mod required;
mod rule;
mod scope;
mod served_by;

#[cfg(test)]
mod tests;

pub use served_by::ServedBy;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use crate::catalog::{Catalog, Origin, Tool};
use crate::config::{
    BudgetConfig, Config, DEFAULT_MAX_ACTIVE, Host, NoHost, ProfileConfig, ServerMode, SideEffects,
    glob_match,
};
use crate::session::ActiveSet;

pub use builder::PolicyBuilder;
pub use required::{PolicyError, Required};
pub use rule::{Action, AuditEvent, Rule, Verdict};
pub use scope::{Scope, ScopedCache};

/// Who is asking: the main agent, a team, an endpoint, or a sub-agent below one of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Subject {
    path: Vec<String>,
}

impl Subject {
    /// The name of the subject a policy without a profile serves.
    pub const MAIN: &'static str = "main";

    /// A top-level subject.
    pub fn new(name: &str) -> Subject {
        Subject { path: vec![name.to_owned()] }
    }

    /// A sub-agent of this subject.
    pub fn child(&self, name: &str) -> Subject {
        let mut path = self.path.clone();
        path.push(name.to_owned());
        Subject { path }
    }

    /// The subject's own name (the last part of its path).
    pub fn name(&self) -> &str {
        self.path.last().map(String::as_str).unwrap_or(Subject::MAIN)
    }

    /// The subject this one is a sub-agent of.
    pub fn parent(&self) -> Option<Subject> {
        (self.path.len() > 1).then(|| Subject { path: self.path[..self.path.len() - 1].to_vec() })
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path.join("/"))
    }
}

/// The policy fields of one `[servers.NAME]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ServerRules {
    enabled: bool,
    mode: ServerMode,
    allowed: Vec<String>,
    denied: Vec<String>,
    pinned: Vec<String>,
    max_active: usize,
    read_only_only: bool,
    read_only: Vec<String>,
    always_load: Vec<String>,
    trust_always_load: bool,
}

impl Default for ServerRules {
    /// A server without configuration (built-ins, a bare catalog): everything, auto mode.
    fn default() -> ServerRules {
        ServerRules {
            enabled: true,
            mode: ServerMode::Auto,
            allowed: vec!["*".to_owned()],
            denied: Vec::new(),
            pinned: Vec::new(),
            max_active: DEFAULT_MAX_ACTIVE,
            read_only_only: false,
            read_only: Vec::new(),
            always_load: Vec::new(),
            trust_always_load: false,
        }
    }
}

/// What one subject may see and run. Immutable, `Send + Sync`, cheap enough to clone.
#[derive(Debug, Clone)]
pub struct Policy {
    subject: Subject,
    deny: Vec<String>,
    servers: BTreeMap<String, ServerRules>,
    default_server: ServerRules,
    /// The profile of the subject and of every agent above it, outermost first.
    layers: Vec<(String, ProfileConfig)>,
    /// Every configured profile, for sub-agents.
    profiles: BTreeMap<String, ProfileConfig>,
    budget: BudgetConfig,
    /// The upstream serving each tool of another server (a host's catalog file that holds
    /// several servers' tools), by qualified name: its `[servers.NAME]` rules apply too.
    served_by: Arc<ServedBy>,
    /// The upstream's own name of each renamed tool, by qualified name ([`Policy::formerly`]).
    formerly: Arc<HashMap<String, String>>,
}

/// The surface a subject may see: the visible catalog and one audit event per hidden tool.
#[derive(Debug, Clone)]
pub struct Filtered {
    /// Only the allowed tools, in catalog order (new [`ToolId`](crate::ToolId)s). Build
    /// deferral, the index, announcements, tool lists and the gate over this.
    pub catalog: Catalog,
    /// One [`Action::Hidden`] event per denied tool, in catalog order.
    pub audit: Vec<AuditEvent>,
}

impl Policy {
    /// The policy of `config` for the subject served with `profile` (`--profile`), or for
    /// [`Subject::MAIN`] with no profile.
    pub fn new<H: Host>(config: &Config<H>, profile: Option<&str>) -> Result<Policy, PolicyError> {
        let servers = config
            .servers
            .iter()
            .map(|(name, s)| {
                let rules = ServerRules {
                    enabled: s.enabled,
                    mode: s.mode,
                    allowed: s.allowed.clone(),
                    denied: s.denied.clone(),
                    pinned: s.pinned.clone(),
                    max_active: s.max_active,
                    read_only_only: s.side_effects == SideEffects::ReadOnly,
                    read_only: s.read_only.clone(),
                    always_load: s.always_load.clone(),
                    trust_always_load: s.trust_always_load,
                };
                (name.clone(), rules)
            })
            .collect();
        let root = Policy::root(config.policy.deny.clone(), servers, config.profiles.clone(), config.budget);
        match profile {
            None => Ok(root),
            Some(name) => {
                let layer = root.profile(name)?;
                Ok(Policy { subject: Subject::new(name), layers: vec![layer], ..root })
            }
        }
    }

    /// The policy of [`Subject::MAIN`] under these rules, before any profile: what a
    /// configuration and a [`PolicyBuilder`] both come to.
    fn root(
        deny: Vec<String>,
        servers: BTreeMap<String, ServerRules>,
        profiles: BTreeMap<String, ProfileConfig>,
        budget: BudgetConfig,
    ) -> Policy {
        Policy {
            subject: Subject::new(Subject::MAIN),
            deny,
            servers,
            default_server: ServerRules::default(),
            layers: Vec::new(),
            profiles,
            budget,
            served_by: Arc::default(),
            formerly: Arc::default(),
        }
    }

    /// This policy where a host's upstream serves tools of other servers: `served_by` names
    /// that upstream for each such tool (by qualified name), and its `[servers.NAME]` rules
    /// apply to the tool besides those of the tool's own server.
    pub(crate) fn served_by(mut self, served_by: Arc<ServedBy>) -> Policy {
        self.served_by = served_by;
        self
    }

    /// This policy where a host shows tools under names their upstreams do not list them by (an
    /// operator's rename): `formerly` gives each such tool's own name as listed, by qualified
    /// name, and every deny pattern (`[policy] deny`, `disallowed_tools`, a server's `denied`)
    /// that matches that name denies the tool as if it still had it. Allow lists match the name
    /// shown only.
    pub(crate) fn formerly(mut self, formerly: Arc<HashMap<String, String>>) -> Policy {
        self.formerly = formerly;
        self
    }

    /// A policy written in code rather than read from a configuration: the budgets, what
    /// every subject is denied, and each server's rules ([`PolicyBuilder`]).
    ///
    /// ```
    /// let policy = toolgate::Policy::builder().budget(96, 112, 128).max_active("git", 1).build()?;
    /// assert_eq!(policy.max_active("git"), 1);
    /// # Ok::<(), toolgate::policy::PolicyError>(())
    /// ```
    pub fn builder() -> PolicyBuilder {
        PolicyBuilder::default()
    }

    /// The policy of a configuration without rules: every tool allowed, default budgets.
    pub fn permissive() -> Policy {
        Policy::new(&Config::<NoHost>::default(), None).expect("no profile asked for")
    }

    /// The policy of a sub-agent with profile `profile`: it sees what this subject sees,
    /// filtered further by the profile's `tools` and `disallowed_tools`.
    pub fn child(&self, profile: &str) -> Result<Policy, PolicyError> {
        let layer = self.profile(profile)?;
        let mut child = self.clone();
        child.subject = self.subject.child(profile);
        child.layers.push(layer);
        Ok(child)
    }

    /// Whether `[profiles.NAME]` is configured.
    pub(crate) fn has_profile(&self, name: &str) -> bool {
        self.profiles.contains_key(name)
    }

    /// The configured profiles' names, sorted.
    pub(crate) fn profile_names(&self) -> Vec<String> {
        self.profiles.keys().cloned().collect()
    }

    fn profile(&self, name: &str) -> Result<(String, ProfileConfig), PolicyError> {
        match self.profiles.get(name) {
            Some(p) => Ok((name.to_owned(), p.clone())),
            None => Err(PolicyError::UnknownProfile {
                name: name.to_owned(),
                known: self.profiles.keys().cloned().collect(),
            }),
        }
    }

    /// Whether this policy's subject is served under a profile (its own, a parent's, or the
    /// one the host serves).
    pub(crate) fn is_profiled(&self) -> bool {
        !self.layers.is_empty()
    }

    /// The subject this policy serves.
    pub fn subject(&self) -> &Subject {
        &self.subject
    }

    /// The budgets (`[budget]`).
    pub fn budget(&self) -> BudgetConfig {
        self.budget
    }

    fn server(&self, name: &str) -> &ServerRules {
        self.servers.get(name).unwrap_or(&self.default_server)
    }

    /// A server's `max_active` (the default for a server without configuration).
    pub fn max_active(&self, server: &str) -> usize {
        self.server(server).max_active
    }

    /// A server's `mode` (`auto` for a server without configuration).
    pub fn mode(&self, server: &str) -> ServerMode {
        self.server(server).mode
    }

    /// Whether `tool` matches its server's `pinned` patterns.
    pub fn is_pinned(&self, tool: &Tool) -> bool {
        self.server(tool.server()).pinned.iter().any(|p| glob_match(p, tool.name()))
    }

    /// Whether `tool` counts as read-only: a `readOnlyHint: true` annotation, or a match in its
    /// server's trusted `read_only` list. Never its description or name.
    pub fn is_read_only(&self, tool: &Tool) -> bool {
        tool.read_only_hint()
            || self.server(tool.server()).read_only.iter().any(|p| glob_match(p, tool.name()))
    }

    /// Decides one tool for this subject. The first rule that denies wins; see the module doc
    /// for the order.
    pub fn decide(&self, tool: &Tool) -> Verdict {
        let formerly = self.formerly.get(tool.qualified_name()).map(String::as_str);
        let builtin = tool.origin() == Origin::Builtin;
        let denies = |p: &String| {
            matches_qualified(p, tool)
                || formerly.is_some_and(|f| matches_name(p, tool.server(), f, None, builtin))
        };
        if let Some(p) = self.deny.iter().find(|p| denies(p)) {
            return Verdict::Deny(Rule::GlobalDeny { pattern: p.clone() });
        }
        for (profile, config) in &self.layers {
            if let Some(p) = config.disallowed_tools.iter().find(|p| denies(p)) {
                return Verdict::Deny(Rule::ProfileDisallowed {
                    profile: profile.clone(),
                    pattern: p.clone(),
                });
            }
        }
        if let Verdict::Deny(rule) = self.decide_under(tool.server(), tool) {
            return Verdict::Deny(rule);
        }
        if let Some(upstream) = self.served_by.get(tool.qualified_name())
            && let Verdict::Deny(rule) = self.decide_under(upstream, tool)
        {
            return Verdict::Deny(rule);
        }
        for (profile, config) in &self.layers {
            if !config.tools.iter().any(|p| matches_qualified(p, tool)) {
                return Verdict::Deny(Rule::ProfileTools { profile: profile.clone() });
            }
        }
        Verdict::Allow
    }

    /// The rules of `[servers.SERVER]` alone (`enabled`, `denied`, `allowed` with `mode`,
    /// `side_effects`) applied to `tool`. [`Policy::decide`] applies them under the tool's own
    /// server; a host applies them under another key when one configured upstream serves tools
    /// of several servers (a static catalog file).
    pub fn decide_under(&self, server: &str, tool: &Tool) -> Verdict {
        let rules = self.server(server);
        if !rules.enabled {
            return Verdict::Deny(Rule::ServerDisabled { server: server.to_owned() });
        }
        let formerly = self.formerly.get(tool.qualified_name());
        let denied = |p: &&String| {
            matches_own_name(p, tool.name()) || formerly.is_some_and(|f| matches_own_name(p, f))
        };
        if let Some(p) = rules.denied.iter().find(denied) {
            return Verdict::Deny(Rule::ServerDenied { server: server.to_owned(), pattern: p.clone() });
        }
        if rules.mode != ServerMode::All && !rules.allowed.iter().any(|p| glob_match(p, tool.name())) {
            return Verdict::Deny(Rule::NotAllowlisted { server: server.to_owned() });
        }
        let trusted = rules.read_only.iter().any(|p| glob_match(p, tool.name()));
        if rules.read_only_only && !tool.read_only_hint() && !trusted {
            return Verdict::Deny(Rule::NotReadOnly { server: server.to_owned() });
        }
        Verdict::Allow
    }

    /// Decides a server as a whole, for what it offers besides tools (resources, log
    /// messages): denied when it is disabled, or when a `[policy] deny` or `disallowed_tools`
    /// pattern covers every tool of it (a bare server name, or `SERVER__*`), under any
    /// spelling of the server's name.
    pub fn decide_server(&self, server: &str) -> Verdict {
        if let Some(p) = self.deny.iter().find(|p| matches_whole_server(p, server)) {
            return Verdict::Deny(Rule::GlobalDeny { pattern: p.clone() });
        }
        for (profile, config) in &self.layers {
            if let Some(p) = config.disallowed_tools.iter().find(|p| matches_whole_server(p, server)) {
                return Verdict::Deny(Rule::ProfileDisallowed {
                    profile: profile.clone(),
                    pattern: p.clone(),
                });
            }
        }
        if !self.server(server).enabled {
            return Verdict::Deny(Rule::ServerDisabled { server: server.to_owned() });
        }
        Verdict::Allow
    }

    /// Decides a prompt `name` of `server`, offered to the model as `qualified`
    /// (`server__prompt`): the server as a whole ([`Policy::decide_server`]), then the
    /// patterns over qualified names (`[policy] deny`, the profiles' `disallowed_tools` and
    /// `tools`) as for a tool of that name.
    pub fn decide_prompt(&self, server: &str, name: &str, qualified: &str) -> Verdict {
        if let Verdict::Deny(rule) = self.decide_server(server) {
            return Verdict::Deny(rule);
        }
        let matches = |p: &String| matches_name(p, server, name, Some(qualified), false);
        if let Some(p) = self.deny.iter().find(|p| matches(p)) {
            return Verdict::Deny(Rule::GlobalDeny { pattern: p.clone() });
        }
        for (profile, config) in &self.layers {
            if let Some(p) = config.disallowed_tools.iter().find(|p| matches(p)) {
                return Verdict::Deny(Rule::ProfileDisallowed {
                    profile: profile.clone(),
                    pattern: p.clone(),
                });
            }
            if !config.tools.iter().any(matches) {
                return Verdict::Deny(Rule::ProfileTools { profile: profile.clone() });
            }
        }
        Verdict::Allow
    }

    /// Whether a tool `name` of `server` is core: it matches the server's `always_load`
    /// patterns, or it is `marked` always-load by its server (`_meta["anthropic/alwaysLoad"]`)
    /// and the configuration trusts the server's marks (`trust_always_load`).
    pub fn is_always_loaded(&self, server: &str, name: &str, marked: bool) -> bool {
        let rules = self.server(server);
        rules.always_load.iter().any(|p| glob_match(&p.to_lowercase(), &name.to_lowercase()))
            || (marked && rules.trust_always_load)
    }

    /// The visible surface of `catalog` for this subject, and an audit event per hidden tool.
    pub fn filter(&self, catalog: &Catalog) -> Filtered {
        let mut audit = Vec::new();
        let visible = catalog.filter(|tool| match self.decide(tool) {
            Verdict::Allow => true,
            Verdict::Deny(rule) => {
                audit.push(self.event(tool.qualified_name(), rule, Action::Hidden));
                false
            }
        });
        Filtered { catalog: visible, audit }
    }

    /// Why a name the model or a user asked for is not on this subject's surface: the rule
    /// that hides it, if `catalog` (the full catalog) has such a tool and the policy denies it.
    /// For audit events of `select:` queries and for `--explain`.
    pub fn why_hidden(&self, catalog: &Catalog, name: &str) -> Option<Rule> {
        let id = catalog.resolve(name)?;
        match self.decide(catalog.tool(id)) {
            Verdict::Allow => None,
            Verdict::Deny(rule) => Some(rule),
        }
    }

    /// An audit event for this subject.
    pub fn event(&self, tool: &str, rule: Rule, action: Action) -> AuditEvent {
        AuditEvent { subject: self.subject.to_string(), tool: tool.to_owned(), rule, action }
    }

    /// A sub-agent's starting session: the parent's activations this policy allows, in the
    /// parent's order. Names missing from `catalog` (the parent's catalog) are skipped; each
    /// activation the policy denies is reported as [`Action::NotInherited`].
    pub(crate) fn inherit(&self, parent: &ActiveSet, catalog: &Catalog) -> (ActiveSet, Vec<AuditEvent>) {
        let mut session = ActiveSet::new();
        let mut audit = Vec::new();
        for name in parent.active() {
            let Some(id) = catalog.get(name) else { continue };
            match self.decide(catalog.tool(id)) {
                Verdict::Allow => {
                    session.activate([name.as_str()]);
                }
                Verdict::Deny(rule) => audit.push(self.event(name, rule, Action::NotInherited)),
            }
        }
        (session, audit)
    }

    /// A canonical text of everything that decides what this subject sees (not its name), for
    /// [`Policy::scope`].
    fn canonical(&self) -> String {
        let mut s = format!("deny={:?}\nbudget={:?}\n", self.deny, self.budget);
        for (name, rules) in &self.servers {
            s.push_str(&format!("server {name:?}={rules:?}\n"));
        }
        for (name, profile) in &self.layers {
            s.push_str(&format!("profile {name:?}={:?} {:?}\n", profile.tools, profile.disallowed_tools));
        }
        s
    }
}

/// Whether a subject keeps `tool_search`: as long as at least one tool it may see is deferred
/// and not active (the sub-agent complaint is losing search with the parent's
/// tools). `deferred_not_active` counts the visible deferred tools outside the active set.
pub fn keeps_tool_search(deferred_not_active: usize) -> bool {
    deferred_not_active > 0
}

/// Whether a pattern over qualified names matches `tool` under any spelling of its name.
fn matches_qualified(pattern: &str, tool: &Tool) -> bool {
    let builtin = tool.origin() == Origin::Builtin;
    matches_name(pattern, tool.server(), tool.name(), Some(tool.qualified_name()), builtin)
}

/// Whether a pattern over qualified names matches the tool (or prompt) `name` of server
/// `server` (its configured key), case-insensitively, under every spelling a user may write:
///
/// - the qualified name the model sees (`qualified`, after collision handling);
/// - `server__name` with the server as configured or normalised, and the name as published or
///   normalised (`io.github.acme/files__write.file`, `io_github_acme_files__write_file`), so a
///   deny written before normalisation or collision renaming still holds;
/// - for a pattern without `__`, also: the server, as configured or normalised (a bare server
///   name is the whole server), or a built-in tool's own name (`Read`, as Claude Code's agent
///   definitions write it).
///
/// A leading `mcp__` (Claude Code's spelling) is ignored.
fn matches_name(pattern: &str, server: &str, name: &str, qualified: Option<&str>, builtin: bool) -> bool {
    let pattern = crate::naming::strip_mcp_prefix(pattern).to_lowercase();
    let glob = |text: &str| glob_match(&pattern, &text.to_lowercase());
    let servers = [server.to_owned(), crate::naming::normalize_server(server)];
    if !pattern.contains("__") && (servers.iter().any(|s| glob(s)) || (builtin && glob(name))) {
        return true;
    }
    if qualified.is_some_and(glob) {
        return true;
    }
    let names = [name.to_owned(), crate::naming::normalize_tool(name)];
    servers.iter().any(|s| names.iter().any(|n| glob(&format!("{s}__{n}"))))
}

/// Whether a `denied` pattern over a server's own tool names matches `name`, as published or
/// normalised, in any letter case (a deny holds under every spelling).
fn matches_own_name(pattern: &str, name: &str) -> bool {
    let pattern = pattern.to_lowercase();
    glob_match(&pattern, &name.to_lowercase())
        || glob_match(&pattern, &crate::naming::normalize_tool(name).to_lowercase())
}

/// Whether a pattern over qualified names covers every tool of `server`: a bare server name, or
/// `SERVER__*`.
fn matches_whole_server(pattern: &str, server: &str) -> bool {
    let pattern = crate::naming::strip_mcp_prefix(pattern).to_lowercase();
    let server_part = match pattern.split_once("__") {
        None => pattern.as_str(),
        Some((s, "*")) => s,
        Some(_) => return false,
    };
    [server.to_owned(), crate::naming::normalize_server(server)]
        .iter()
        .any(|s| glob_match(server_part, &s.to_lowercase()))
}
