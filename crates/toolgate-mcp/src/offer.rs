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
    /// How many of its tools may be active in one session (`max_active`), if configured.
    pub(crate) max_active: Option<usize>,
}

impl Offer {
    /// Everything (a server without configuration, such as the embedded catalog).
    pub(crate) fn all() -> Offer {
        Offer { mode: ServerMode::All, ..Offer::default() }
    }

    /// The offer of a configured server.
    pub(crate) fn of(server: &ServerConfig) -> Offer {
        Offer {
            mode: server.mode,
            allowed: server.allowed.clone(),
            denied: server.denied.clone(),
            read_only_only: server.side_effects == SideEffects::ReadOnly,
            read_only: server.read_only.clone(),
            max_active: Some(server.max_active),
        }
    }

    /// Whether `tool` (one of this server's) is offered.
    pub(crate) fn offers(&self, tool: &ToolSpec) -> bool {
        let name = tool.name.as_str();
        let matches = |patterns: &[String]| patterns.iter().any(|p| glob_match(p, name));
        if matches(&self.denied) {
            return false;
        }
        if self.mode != ServerMode::All && !matches(&self.allowed) {
            return false;
        }
        if self.read_only_only {
            let hinted = tool.annotations.get("readOnlyHint") == Some(&serde_json::Value::Bool(true));
            return hinted || matches(&self.read_only);
        }
        true
    }
}

/// Whether a qualified name is denied by the global `[policy] deny` patterns.
pub(crate) fn globally_denied(deny: &[String], qualified: &str) -> bool {
    deny.iter().any(|p| glob_match(p, qualified))
}

/// Whether a profile (`[profiles.NAME]`) lets its subject see a qualified name: it matches
/// `tools` and none of `disallowed_tools`.
pub(crate) fn profile_allows(profile: &ProfileConfig, qualified: &str) -> bool {
    profile.tools.iter().any(|p| glob_match(p, qualified))
        && !profile.disallowed_tools.iter().any(|p| glob_match(p, qualified))
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
    }
}
