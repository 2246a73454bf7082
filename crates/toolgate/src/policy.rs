//! policy: here is the configuration and a subject, tell me which tools that subject may see and
//! run, and why each other tool is denied.
//!
//! A [`Policy`] is built once from a [`Config`] (and optionally a profile) and applied **before**
//! anything else sees the catalog: [`Policy::filter`] gives the visible catalog that deferral,
//! the index, announcements, tool lists and the gate are built over, so a denied tool is never
//! announced, searchable, listed or callable; the gate asks [`Policy::decide`] again at call
//! time ([`crate::gate::check_policy`]). Every denial names its [`Rule`], the exact
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
//! One subject's first turns, end to end:
//!
//! ```
//! use std::path::Path;
//! use toolgate::budget::{ActiveBudget, Recency};
//! use toolgate::config::Config;
//! use toolgate::defer::{DeferConfig, DeferMode, Deferral};
//! use toolgate::gate::{self, Decision, Denial};
//! use toolgate::policy::{Action, Policy};
//! use toolgate::request::{tool_list, tool_search_tool};
//! use toolgate::search::Request;
//! use toolgate::{Catalog, Index, Session};
//!
//! let config = Config::from_toml("toolgate.toml", r#"
//!     [policy]
//!     deny = ["*__delete_*"]
//!     [profiles.researcher]
//!     tools = ["git", "filesystem__read_*", "filesystem__list_*"]
//! "#, Path::new("."))?;
//! let catalog = Catalog::embedded();
//! let policy = Policy::new(&config, Some("researcher"))?;
//!
//! // 1. The policy first: everything below only ever sees the visible catalog.
//! let filtered = policy.filter(&catalog);
//! let visible = filtered.catalog;
//! assert!(filtered.audit.iter().all(|e| e.action == Action::Hidden));
//! let deferral = Deferral::decide(&visible, &DeferConfig { mode: DeferMode::On, ..DeferConfig::default() });
//!
//! // 2. The first turn: required tools, then the best-ranked ones, within the budget.
//! let first = policy.first_turn(&visible, &deferral, 1, "show me the git log", "")?;
//! let mut session = Session::new();
//! let mut recency = Recency::new();
//! for &id in &first.chosen {
//!     session.activate([visible.tool(id).qualified_name()]);
//!     recency.touch(visible.tool(id).qualified_name());
//! }
//! assert!(session.is_active("git__git_log"));
//! let search = tool_search_tool();
//! let required = policy.required(&visible, &deferral, 1)?;
//! let budget = ActiveBudget::from_policy(&policy, &visible, &required);
//! budget.check_hard(tool_list(&visible, &deferral, &session, &search).len())?;
//!
//! // 3. Search runs over the visible surface only; the budget unloads what no longer fits.
//! let index = Index::builder().build(&visible);
//! let result = session.tool_search(&index, &deferral, Request::new("read a file", 3), &[]);
//! let fresh: Vec<String> = result.loaded().map(|id| visible.tool(id).qualified_name().to_owned()).collect();
//! let evicted = budget.enforce(&visible, &deferral, &mut session, &mut recency, &fresh);
//! assert!(evicted.is_empty());
//! assert!(result.matches.iter().all(|h| policy.decide(visible.tool(h.tool)).is_allow()));
//! assert!(visible.get("filesystem__write_file").is_none(), "hidden: not even searchable");
//!
//! // 4. The gate asks the policy again, whatever the session says.
//! session.activate(["filesystem__write_file"]);
//! let d = gate::check_policy(&policy, &catalog, &deferral, &session, "filesystem__write_file");
//! assert!(matches!(d, Decision::Deny(Denial::Forbidden { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod required;
mod rule;
mod scope;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;

use crate::catalog::{Catalog, Origin, Tool};
use crate::config::{
    BudgetConfig, Config, DEFAULT_MAX_ACTIVE, ProfileConfig, ServerMode, SideEffects, glob_match,
};
use crate::session::Session;

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
    pub fn new(config: &Config, profile: Option<&str>) -> Result<Policy, PolicyError> {
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
                };
                (name.clone(), rules)
            })
            .collect();
        let root = Policy {
            subject: Subject::new(Subject::MAIN),
            deny: config.policy.deny.clone(),
            servers,
            default_server: ServerRules::default(),
            layers: Vec::new(),
            profiles: config.profiles.clone(),
            budget: config.budget,
        };
        match profile {
            None => Ok(root),
            Some(name) => {
                let layer = root.profile(name)?;
                Ok(Policy { subject: Subject::new(name), layers: vec![layer], ..root })
            }
        }
    }

    /// The policy of a configuration without rules: every tool allowed, default budgets.
    pub fn permissive() -> Policy {
        Policy::new(&Config::default(), None).expect("no profile asked for")
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

    fn profile(&self, name: &str) -> Result<(String, ProfileConfig), PolicyError> {
        match self.profiles.get(name) {
            Some(p) => Ok((name.to_owned(), p.clone())),
            None => Err(PolicyError::UnknownProfile {
                name: name.to_owned(),
                known: self.profiles.keys().cloned().collect(),
            }),
        }
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
        if let Some(p) = self.deny.iter().find(|p| matches_qualified(p, tool)) {
            return Verdict::Deny(Rule::GlobalDeny { pattern: p.clone() });
        }
        for (profile, config) in &self.layers {
            if let Some(p) = config.disallowed_tools.iter().find(|p| matches_qualified(p, tool)) {
                return Verdict::Deny(Rule::ProfileDisallowed {
                    profile: profile.clone(),
                    pattern: p.clone(),
                });
            }
        }
        let server = tool.server();
        let rules = self.server(server);
        if !rules.enabled {
            return Verdict::Deny(Rule::ServerDisabled { server: server.to_owned() });
        }
        if let Some(p) = rules.denied.iter().find(|p| glob_match(p, tool.name())) {
            return Verdict::Deny(Rule::ServerDenied { server: server.to_owned(), pattern: p.clone() });
        }
        if rules.mode != ServerMode::All && !rules.allowed.iter().any(|p| glob_match(p, tool.name())) {
            return Verdict::Deny(Rule::NotAllowlisted { server: server.to_owned() });
        }
        if rules.read_only_only && !self.is_read_only(tool) {
            return Verdict::Deny(Rule::NotReadOnly { server: server.to_owned() });
        }
        for (profile, config) in &self.layers {
            if !config.tools.iter().any(|p| matches_qualified(p, tool)) {
                return Verdict::Deny(Rule::ProfileTools { profile: profile.clone() });
            }
        }
        Verdict::Allow
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
    pub fn inherit(&self, parent: &Session, catalog: &Catalog) -> (Session, Vec<AuditEvent>) {
        let mut session = Session::new();
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
/// and not active (seed 000 §9: the sub-agent complaint is losing search with the parent's
/// tools). `deferred_not_active` counts the visible deferred tools outside the active set.
pub fn keeps_tool_search(deferred_not_active: usize) -> bool {
    deferred_not_active > 0
}

/// Whether a pattern over qualified names matches `tool`: its qualified name, `server__name`
/// as configured, and for a pattern without `__` the server (a bare server name) or, for a
/// built-in tool, its own name (`Read`, as Claude Code's agent definitions write it). A leading
/// `mcp__` (Claude Code's spelling) is ignored.
fn matches_qualified(pattern: &str, tool: &Tool) -> bool {
    let pattern = crate::catalog::strip_mcp_prefix(pattern);
    if glob_match(pattern, tool.qualified_name()) {
        return true;
    }
    if !pattern.contains("__") {
        return glob_match(pattern, tool.server())
            || (tool.origin() == Origin::Builtin && glob_match(pattern, tool.name()));
    }
    let raw = format!("{}__{}", tool.server(), tool.name());
    raw != tool.qualified_name() && glob_match(pattern, &raw)
}
