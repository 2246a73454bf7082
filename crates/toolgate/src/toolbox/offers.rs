//! offers: what a subject may see of a server besides its tools (prompts, completions,
//! resources, log messages), decided by the same policy as its tools, so that a host asks the
//! toolbox rather than reaching into the policy itself.

use super::Toolbox;
use crate::catalog::Tool;

/// What a server offers besides tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerData {
    /// Prompts (each then decided by its own name, [`Policy::decide_prompt`](crate::Policy::decide_prompt)).
    Prompts,
    /// Completions of a prompt's or a resource template's arguments.
    Completions,
    /// Resources and resource templates.
    Resources,
    /// Log messages.
    Logs,
}

impl Toolbox {
    /// Whether this subject may see `data` of `server` at all: the server is not denied as a
    /// whole ([`Policy::decide_server`](crate::Policy::decide_server)) and, for a subject
    /// under a profile, it sees at least one of the server's tools (`owns` says which tools
    /// are the server's: a host may serve one server's tools under another's name). Prompts
    /// and completions are not held to the tools: each prompt is decided by its own name.
    pub fn offers(&self, server: &str, data: ServerData, owns: impl Fn(&Tool) -> bool) -> bool {
        if !self.policy.decide_server(server).is_allow() {
            return false;
        }
        matches!(data, ServerData::Prompts | ServerData::Completions)
            || !self.policy.is_profiled()
            || self.visible.tools().iter().any(owns)
    }

    /// Whether this subject may see prompt `name` of `server`, offered as `qualified`
    /// (`server__prompt`): [`Policy::decide_prompt`](crate::Policy::decide_prompt), the same
    /// patterns as for tools.
    pub fn offers_prompt(&self, server: &str, name: &str, qualified: &str) -> bool {
        self.policy.decide_prompt(server, name, qualified).is_allow()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::Config;
    use crate::{Catalog, Policy, ToolSpec};

    fn toolbox(text: &str, profile: Option<&str>) -> Toolbox {
        let config: Config = Config::from_toml("toolgate.toml", text, Path::new(".")).unwrap();
        let catalog = Catalog::builder()
            .tool(ToolSpec::mcp("fs", "read", "reads a file"))
            .tool(ToolSpec::mcp("git", "log", "shows commits"))
            .build()
            .unwrap();
        Toolbox::builder(&catalog, Policy::new(&config, profile).unwrap()).build().unwrap()
    }

    const CONFIG: &str = "[policy]\ndeny = [\"secrets\"]\n\n[profiles.reader]\ntools = [\"fs__*\"]\n";

    #[test]
    fn a_server_denied_as_a_whole_offers_nothing_and_a_profile_sees_only_its_tools_servers() {
        let main = toolbox(CONFIG, None);
        let of = |server: &'static str| move |t: &Tool| t.server() == server;
        for data in [ServerData::Prompts, ServerData::Completions, ServerData::Resources, ServerData::Logs] {
            assert!(!main.offers("secrets", data, of("secrets")), "{data:?}");
            assert!(main.offers("git", data, of("git")), "{data:?}");
        }
        let reader = toolbox(CONFIG, Some("reader"));
        assert!(reader.offers("fs", ServerData::Resources, of("fs")));
        assert!(!reader.offers("git", ServerData::Resources, of("git")), "no tool of git is visible");
        assert!(!reader.offers("git", ServerData::Logs, of("git")));
        assert!(reader.offers("git", ServerData::Prompts, of("git")), "prompts are decided one by one");
        assert!(reader.offers_prompt("fs", "summarise", "fs__summarise"));
        assert!(!reader.offers_prompt("git", "review", "git__review"), "outside the profile's tools");
        assert!(!main.offers_prompt("secrets", "dump", "secrets__dump"), "a denied server's prompt");
    }
}
