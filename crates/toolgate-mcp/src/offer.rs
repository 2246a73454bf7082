//! offer: here are a server's tools and its configuration, tell me which of them the gateway
//! offers at all. Applied before anything reaches the catalog, the index or a model.
//!
//! Per server (`[servers.NAME]`, patterns over the server's own tool names): `denied` always
//! wins; `mode = "auto"` or `"allowlist"` keeps only tools matching `allowed` (default `*`);
//! `mode = "all"` keeps everything not denied; `side_effects = "read_only"` keeps only tools
//! listed in `read_only` or annotated `readOnlyHint: true` (fail-closed: a description that
//! says "safe" grants nothing). Globally, `[policy] deny` removes tools by qualified name, and
//! the profile the gateway serves (`--profile`) keeps only its `tools` minus `disallowed_tools`.
//!
//! `max_active` and `[budget] hard` bound what a session keeps loaded; see `budget`.
//! FIXME: `[budget] first_turn` and `dynamic` are not applied by the gateway (it has no
//! first-turn preselection).

use toolgate::ToolSpec;
use toolgate::config::{ProfileConfig, ServerConfig, ServerMode, SideEffects, glob_match};

/// What one server offers: its policy fields.
#[derive(Debug, Clone, Default)]
pub(crate) struct Offer {
    mode: ServerMode,
    allowed: Vec<String>,
    denied: Vec<String>,
    read_only_only: bool,
    read_only: Vec<String>,
    /// Tools always loaded that take budget first (`pinned`).
    pinned: Vec<String>,
    /// How many of its tools may be active in one session (`max_active`), if configured.
    pub(crate) max_active: Option<usize>,
}

impl Offer {
    /// Everything (a server without configuration, such as the embedded catalog).
    pub(crate) fn all() -> Offer {
        Offer { mode: ServerMode::Auto, allowed: vec!["*".to_owned()], ..Offer::default() }
    }

    /// The offer of a configured server.
    pub(crate) fn of(server: &ServerConfig) -> Offer {
        Offer {
            mode: server.mode,
            allowed: server.allowed.clone(),
            denied: server.denied.clone(),
            read_only_only: server.side_effects == SideEffects::ReadOnly,
            read_only: server.read_only.clone(),
            pinned: server.pinned.clone(),
            max_active: Some(server.max_active),
        }
    }

    /// Whether an offered tool is required: pinned, or any offered tool of a server in mode
    /// `allowlist` or `all` (EthanKit's modes: the listed tools are loaded, not searched for).
    /// Required tools are always loaded.
    pub(crate) fn requires(&self, tool: &ToolSpec) -> bool {
        self.mode != ServerMode::Auto || self.pinned.iter().any(|p| glob_match(p, &tool.name))
    }

    /// The configuration error of server `name` when its required tools among `tools` exceed
    /// its `max_active` (never a silent drop).
    pub(crate) fn required_error(&self, name: &str, tools: &[ToolSpec]) -> Option<String> {
        let limit = self.max_active?;
        let required = tools.iter().filter(|t| self.offers(t) && self.requires(t)).count();
        (required > limit).then(|| {
            toolgate::policy::PolicyError::RequiredOverBudget { server: name.to_owned(), required, limit }
                .to_string()
        })
    }

    /// Whether `tool` (one of this server's) is offered; a tool that is not is logged to the
    /// audit log with the rule that hid it.
    pub(crate) fn offers(&self, tool: &ToolSpec) -> bool {
        let rule = self.hides(tool);
        if let Some(rule) = rule {
            tracing::trace!(target: "toolgate::audit", server = tool.server.as_str(), tool = tool.name.as_str(),
                action = "hidden", rule);
        }
        rule.is_none()
    }

    /// The configuration key that hides `tool`, if one does.
    fn hides(&self, tool: &ToolSpec) -> Option<&'static str> {
        let name = tool.name.as_str();
        let matches = |patterns: &[String]| patterns.iter().any(|p| glob_match(p, name));
        if matches(&self.denied) {
            return Some("denied");
        }
        if self.mode != ServerMode::All && !matches(&self.allowed) {
            return Some("allowed");
        }
        if self.read_only_only {
            let hinted = tool.annotations.get("readOnlyHint") == Some(&serde_json::Value::Bool(true));
            return (!hinted && !matches(&self.read_only)).then_some("side_effects = \"read_only\"");
        }
        None
    }
}

/// Whether a pattern over qualified names matches `qualified` (`server__tool`, or a bare server
/// name): as `toolgate::policy` reads patterns, a pattern without `__` also matches the server
/// (`github` is the whole server), and a leading `mcp__` (Claude Code's spelling) is ignored.
pub(crate) fn pattern_matches(pattern: &str, qualified: &str) -> bool {
    let pattern = pattern.strip_prefix("mcp__").unwrap_or(pattern);
    if glob_match(pattern, qualified) {
        return true;
    }
    let server = qualified.split_once("__").map_or(qualified, |(server, _)| server);
    !pattern.contains("__") && glob_match(pattern, server)
}

/// Whether a qualified name (or a server name) is denied by the global `[policy] deny` patterns.
pub(crate) fn globally_denied(deny: &[String], qualified: &str) -> bool {
    deny.iter().any(|p| pattern_matches(p, qualified))
}

/// Whether a profile (`[profiles.NAME]`) lets its subject see a qualified name: it matches
/// `tools` and none of `disallowed_tools`.
pub(crate) fn profile_allows(profile: &ProfileConfig, qualified: &str) -> bool {
    profile.tools.iter().any(|p| pattern_matches(p, qualified))
        && !profile.disallowed_tools.iter().any(|p| pattern_matches(p, qualified))
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate::config::Transport;

    fn server(edit: impl FnOnce(&mut ServerConfig)) -> Offer {
        let mut s = ServerConfig::new(Transport::Catalog { path: "x".into() });
        edit(&mut s);
        Offer::of(&s)
    }

    fn tool(name: &str, read_only_hint: bool) -> ToolSpec {
        let mut t = ToolSpec::mcp("s", name, "Safe and read-only, trust me.");
        if read_only_hint {
            t.annotations.insert("readOnlyHint".into(), true.into());
        }
        t
    }

    #[test]
    fn deny_wins_allowlists_keep_only_what_they_list_and_read_only_fails_closed() {
        let o = server(|s| s.denied = vec!["delete_*".into()]);
        assert!(o.offers(&tool("list_files", false)));
        assert!(!o.offers(&tool("delete_file", false)));

        let o = server(|s| {
            s.mode = ServerMode::Allowlist;
            s.allowed = vec!["read_*".into(), "delete_*".into()];
            s.denied = vec!["delete_*".into()];
        });
        assert!(o.offers(&tool("read_file", false)));
        assert!(!o.offers(&tool("write_file", false)));
        assert!(!o.offers(&tool("delete_file", false)));

        let o = server(|s| {
            s.side_effects = SideEffects::ReadOnly;
            s.read_only = vec!["list_*".into()];
        });
        assert!(o.offers(&tool("list_files", false)));
        assert!(o.offers(&tool("stat", true)));
        assert!(!o.offers(&tool("write_file", false)), "a description grants nothing");

        let reviewer =
            ProfileConfig { tools: vec!["github__*".into()], disallowed_tools: vec!["*__delete_*".into()] };
        assert!(profile_allows(&reviewer, "github__search_issues"));
        assert!(!profile_allows(&reviewer, "github__delete_repo"));
        assert!(!profile_allows(&reviewer, "slack__post"));

        assert!(globally_denied(&["*__drop_*".into()], "db__drop_table"));
        assert!(!globally_denied(&["*__drop_*".into()], "db__select"));
        // A bare server name is the whole server, in Claude Code's spelling too.
        assert!(globally_denied(&["github".into()], "github__delete_repo"));
        assert!(globally_denied(&["mcp__github".into()], "github__search_issues"));
        assert!(globally_denied(&["github".into()], "github"));
        assert!(!globally_denied(&["github".into()], "gitlab__search"));
        assert!(!globally_denied(&["delete_repo".into()], "github__delete_repo"), "a bare word is a server");
        let whole =
            ProfileConfig { tools: vec!["git".into()], disallowed_tools: vec!["mcp__git__git_push".into()] };
        assert!(profile_allows(&whole, "git__git_log"));
        assert!(!profile_allows(&whole, "git__git_push"));
    }
}
