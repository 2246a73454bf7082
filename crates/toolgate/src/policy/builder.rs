//! builder: a policy written in code, for an agent loop with no configuration file. Each
//! method means what its key in `toolgate.toml` means (`[budget]`, `[policy] deny`,
//! `[servers.NAME]`; `docs/policy.md`), and the policy it builds decides exactly as one read
//! from a file with the same keys.

use std::collections::BTreeMap;

use super::{Policy, PolicyError, ServerRules};
use crate::config::BudgetConfig;

/// A [`Policy`] under construction: [`Policy::builder`], then [`PolicyBuilder::build`].
#[derive(Debug, Clone, Default)]
pub struct PolicyBuilder {
    budget: BudgetConfig,
    deny: Vec<String>,
    servers: BTreeMap<String, ServerRules>,
}

impl PolicyBuilder {
    /// Definitions in the first request, once tools load, and never more (`[budget]`; default
    /// 96 / 112 / 128). [`build`](PolicyBuilder::build) refuses them unless
    /// `1 <= first_turn <= dynamic <= hard`.
    pub fn budget(mut self, first_turn: usize, dynamic: usize, hard: usize) -> PolicyBuilder {
        self.budget = BudgetConfig { first_turn, dynamic, hard };
        self
    }

    /// Hides every tool `pattern` matches from every subject (`[policy] deny`: a qualified
    /// name or `server__name`, `*` for any run of characters, in any letter case).
    pub fn deny(mut self, pattern: &str) -> PolicyBuilder {
        self.deny.push(pattern.to_owned());
        self
    }

    /// Keeps at most `n` tools of `server` loaded at once; a search past it unloads the least
    /// recently used one (`max_active`).
    pub fn max_active(mut self, server: &str, n: usize) -> PolicyBuilder {
        self.server(server).max_active = n;
        self
    }

    /// Loads `tool` (the server's own name for it) from the first turn and never unloads it
    /// (`pinned`).
    pub fn pin(mut self, server: &str, tool: &str) -> PolicyBuilder {
        self.server(server).pinned.push(tool.to_owned());
        self
    }

    /// Shows only the tools of `server` that it marks read-only, or that `read_only` names
    /// (`side_effects = "read-only"`).
    pub fn read_only(mut self, server: &str) -> PolicyBuilder {
        self.server(server).read_only_only = true;
        self
    }

    /// The policy, for [`Subject::MAIN`](crate::policy::Subject::MAIN).
    pub fn build(self) -> Result<Policy, PolicyError> {
        let BudgetConfig { first_turn, dynamic, hard } = self.budget;
        if !self.budget.is_ordered() {
            return Err(PolicyError::BudgetOrder { first_turn, dynamic, hard });
        }
        Ok(Policy::root(self.deny, self.servers, BTreeMap::new(), self.budget))
    }

    fn server(&mut self, name: &str) -> &mut ServerRules {
        self.servers.entry(name.to_owned()).or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, ServerConfig, SideEffects};
    use crate::{Catalog, ToolSpec};

    fn catalog() -> Catalog {
        let spec = |server: &str, name: &str, read_only: bool| {
            let mut spec = ToolSpec::mcp(server, name, &format!("{name} things"));
            spec.annotations.insert("readOnlyHint".to_owned(), read_only.into());
            spec
        };
        Catalog::builder()
            .tool(spec("git", "git_log", true))
            .tool(spec("git", "git_push", false))
            .tool(spec("weather", "forecast", true))
            .build()
            .unwrap()
    }

    /// The same keys in a configuration: what the builder must decide like.
    fn from_config() -> Policy {
        let mut config: Config =
            Config { budget: BudgetConfig { first_turn: 10, dynamic: 20, hard: 30 }, ..Config::default() };
        config.policy.deny = vec!["weather__*".to_owned()];
        let mut git = ServerConfig::new(());
        git.max_active = 1;
        git.pinned = vec!["git_log".to_owned()];
        git.side_effects = SideEffects::ReadOnly;
        config.servers.insert("git".to_owned(), git);
        Policy::new(&config, None).unwrap()
    }

    #[test]
    fn a_built_policy_decides_as_the_same_configuration() {
        let built = Policy::builder()
            .budget(10, 20, 30)
            .deny("weather__*")
            .max_active("git", 1)
            .pin("git", "git_log")
            .read_only("git")
            .build()
            .unwrap();
        let read = from_config();
        let catalog = catalog();
        for tool in catalog.tools() {
            assert_eq!(built.decide(tool), read.decide(tool), "{}", tool.qualified_name());
            assert_eq!(built.is_pinned(tool), read.is_pinned(tool), "{}", tool.qualified_name());
        }
        assert_eq!(built.budget(), read.budget());
        assert_eq!(built.max_active("git"), 1);
        assert_eq!(built.max_active("weather"), read.max_active("weather"));
        let names = |p: &Policy| -> Vec<String> {
            p.filter(&catalog).catalog.tools().iter().map(|t| t.qualified_name().to_owned()).collect()
        };
        assert_eq!(names(&built), ["git__git_log"]);
        assert_eq!(names(&built), names(&read));
    }

    #[test]
    fn budgets_out_of_order_are_refused_with_their_figures() {
        for (first, dynamic, hard) in [(0, 1, 1), (20, 10, 30), (10, 30, 20)] {
            let err = Policy::builder().budget(first, dynamic, hard).build().unwrap_err();
            assert_eq!(err, PolicyError::BudgetOrder { first_turn: first, dynamic, hard });
            assert!(err.to_string().contains("1 <= first_turn <= dynamic <= hard"), "{err}");
        }
        assert!(Policy::builder().budget(8, 8, 8).build().is_ok());
    }
}
