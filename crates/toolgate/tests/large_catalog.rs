//! Seed 001's large-catalog case, end to end through the public API: 4 servers × 40 tools and
//! 3 built-ins. The first turn activates 12 tools per server, 48 MCP tools, so the first request
//! carries 52 definitions (3 built-ins, `tool_search`, 48); discovery grows the list to the
//! dynamic mark of 112 and no further; required tools over budget are a configuration error.

use std::path::Path;

use serde_json::json;
use toolgate::config::Config;
use toolgate::defer::{DeferConfig, DeferMode};
use toolgate::policy::{Policy, PolicyError, Rule};
use toolgate::{Catalog, Conversation, ToolSpec, Toolbox};

const SERVERS: [&str; 4] = ["github", "linear", "browser", "warehouse"];

fn catalog() -> Catalog {
    let mut b = Catalog::builder();
    for server in SERVERS {
        for i in 0..40 {
            let name = format!("op_{i:02}");
            b = b.tool(ToolSpec::mcp(server, &name, &format!("Operation {i} of {server}.")));
        }
    }
    for name in ["Read", "Edit", "Bash"] {
        b = b.tool(ToolSpec::builtin(name, "A built-in tool."));
    }
    b.build().unwrap()
}

fn config(server_lines: &str) -> Config {
    let mut text = String::new();
    for s in SERVERS {
        text.push_str(&format!("[servers.{s}]\n{server_lines}\n"));
    }
    Config::from_toml("toolgate.toml", &text, Path::new(".")).unwrap()
}

fn toolbox(policy: Policy) -> Result<Toolbox, PolicyError> {
    Toolbox::builder(&catalog(), policy)
        .defer(DeferConfig { mode: DeferMode::On, ..DeferConfig::default() })
        .build()
}

struct Run {
    toolbox: Toolbox,
    chat: Conversation,
}

fn first_turn(policy: Policy) -> Run {
    let toolbox = toolbox(policy).unwrap();
    let mut chat = toolbox.conversation();
    toolbox.preselect(&mut chat, "help me with my work", "You are a helpful agent.").unwrap();
    Run { toolbox, chat }
}

impl Run {
    /// This turn's definitions (checked against `[budget] hard`).
    fn definitions(&mut self) -> usize {
        self.toolbox.tools(&mut self.chat).expect("within the hard limit").len()
    }

    /// Deferred tools not active yet.
    fn waiting(&self) -> Vec<String> {
        let visible = self.toolbox.visible().tools().iter().filter(|t| self.toolbox.is_deferred(t));
        visible.map(|t| t.qualified_name().to_owned()).filter(|n| !self.chat.active().contains(n)).collect()
    }

    /// Loads `n` tools that are not active (by `select:`, taking the servers in turn), as the
    /// model would, and applies the budget. Returns the unloads' rules.
    fn discover(&mut self, n: usize) -> Vec<Rule> {
        let mut waiting: Vec<(usize, String)> = Vec::new();
        for server in SERVERS {
            let prefix = format!("{server}__");
            let mut names: Vec<String> =
                self.waiting().into_iter().filter(|n| n.starts_with(&prefix)).collect();
            names.sort();
            waiting.extend(names.into_iter().enumerate());
        }
        waiting.sort();
        let names: Vec<String> = waiting.into_iter().take(n).map(|(_, name)| name).collect();
        let query = format!("select:{}", names.join(","));
        let found = self.toolbox.tool_search(&mut self.chat, &json!({"query": query, "limit": 20})).unwrap();
        assert_eq!(found.loaded().count(), names.len());
        found.unloaded.iter().map(|e| e.rule.clone()).collect()
    }
}

#[test]
fn first_turn_takes_12_per_server_and_sends_52_definitions() {
    let full = catalog();
    assert_eq!(full.len(), 163);
    let mut run = first_turn(Policy::new(&config(""), None).unwrap());
    assert_eq!(run.chat.active().len(), 48);
    for s in SERVERS {
        let n = run.chat.active().iter().filter(|n| n.starts_with(&format!("{s}__"))).count();
        assert_eq!(n, 12, "{s}");
    }
    assert_eq!(run.definitions(), 52, "3 built-ins + tool_search + 48");
    // The other 112 MCP tools stay on the host, waiting to be found.
    let waiting = run.waiting().len();
    assert_eq!(waiting, 112);
    assert!(toolgate::policy::keeps_tool_search(waiting));
}

#[test]
fn growth_stops_at_the_dynamic_budget_of_112() {
    let mut run = first_turn(Policy::new(&config("max_active = 40"), None).unwrap());
    let mut unloaded = Vec::new();
    for _ in 0..12 {
        unloaded.extend(run.discover(10));
        let definitions = run.definitions();
        assert!(definitions <= 112, "{definitions}");
    }
    assert_eq!(run.definitions(), 112);
    assert!(!unloaded.is_empty());
    assert!(unloaded.iter().all(|r| *r == Rule::DynamicBudget { limit: 112 }), "{unloaded:?}");
}

#[test]
fn with_the_default_max_active_each_server_stops_at_24() {
    let mut run = first_turn(Policy::new(&config(""), None).unwrap());
    let mut unloaded = Vec::new();
    for _ in 0..12 {
        unloaded.extend(run.discover(10));
    }
    assert_eq!(run.definitions(), 4 + 4 * 24);
    assert!(unloaded.iter().all(|r| matches!(r, Rule::MaxActive { limit: 24, .. })), "{unloaded:?}");
}

#[test]
fn pins_over_budget_raise_the_documented_error() {
    // 30 pins on every server, max_active 24.
    let policy = Policy::new(&config("pinned = [\"op_0*\", \"op_1*\", \"op_2*\"]"), None).unwrap();
    let err = toolbox(policy).unwrap_err();
    assert_eq!(err, PolicyError::RequiredOverBudget { server: "browser".into(), required: 30, limit: 24 });
    assert_eq!(
        err.to_string(),
        "server `browser`: 30 required tools (pinned or mode=all) exceed max_active 24; pin fewer tools, \
         narrow `allowed`, or use mode = \"auto\""
    );
    // mode = "all" with room per server, but 160 required tools do not fit in 96.
    let policy = Policy::new(&config("mode = \"all\"\nmax_active = 40"), None).unwrap();
    let err = toolbox(policy).unwrap_err();
    assert_eq!(err, PolicyError::RequiredOverFirstTurn { required: 160, fixed: 4, limit: 96 });
}
