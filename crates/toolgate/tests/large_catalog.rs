//! Seed 001's large-catalog case, end to end through the public API: 4 servers × 40 tools and
//! 3 built-ins. The first turn activates 12 tools per server, 48 MCP tools, so the first request
//! carries 52 definitions (3 built-ins, `tool_search`, 48); discovery grows the list to the
//! dynamic mark of 112 and no further; required tools over budget are a configuration error.

use std::path::Path;

use toolgate::budget::{ActiveBudget, Recency};
use toolgate::config::Config;
use toolgate::defer::{DeferConfig, DeferMode, Deferral};
use toolgate::policy::{Policy, PolicyError, Rule};
use toolgate::request::{deferred_names, tool_list, tool_search_tool};
use toolgate::search::Request;
use toolgate::{Catalog, Index, Session, ToolSpec};

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
        text.push_str(&format!("[servers.{s}]\ncatalog = \"tools.jsonl\"\n{server_lines}\n"));
    }
    Config::from_toml("toolgate.toml", &text, Path::new(".")).unwrap()
}

struct Run {
    visible: Catalog,
    deferral: Deferral,
    index: Index,
    session: Session,
    recency: Recency,
    budget: ActiveBudget,
}

fn first_turn(policy: &Policy, full: &Catalog) -> Run {
    let visible = policy.filter(full).catalog;
    let deferral = Deferral::decide(&visible, &DeferConfig { mode: DeferMode::On, ..DeferConfig::default() });
    let required = policy.required(&visible, &deferral, 1).unwrap();
    let pre = policy
        .first_turn(&visible, &deferral, 1, "help me with my work", "You are a helpful agent.")
        .unwrap();
    let mut session = Session::new();
    let mut recency = Recency::new();
    for &id in &pre.chosen {
        let name = visible.tool(id).qualified_name();
        session.activate([name]);
        recency.touch(name);
    }
    let budget = ActiveBudget::from_policy(policy, &visible, &required);
    let index = Index::builder().build(&visible);
    Run { visible, deferral, index, session, recency, budget }
}

impl Run {
    fn definitions(&self) -> usize {
        let search = tool_search_tool();
        tool_list(&self.visible, &self.deferral, &self.session, &search).len()
    }

    /// Loads `n` tools that are not active (by `select:`, taking the servers in turn), as the
    /// model would, and applies the budget. Returns the unloads' rules.
    fn discover(&mut self, n: usize) -> Vec<Rule> {
        let mut waiting: Vec<(usize, &str)> = Vec::new();
        for server in SERVERS {
            let prefix = format!("{server}__");
            let names = deferred_names(&self.visible, &self.deferral);
            let inactive =
                names.into_iter().filter(|name| name.starts_with(&prefix) && !self.session.is_active(name));
            waiting.extend(inactive.enumerate());
        }
        waiting.sort();
        let names: Vec<&str> = waiting.into_iter().take(n).map(|(_, name)| name).collect();
        let query = format!("select:{}", names.join(","));
        let result = self.session.tool_search(&self.index, &self.deferral, Request::new(&query, 20), &[]);
        let fresh: Vec<String> =
            result.loaded().map(|id| self.visible.tool(id).qualified_name().to_owned()).collect();
        assert_eq!(fresh.len(), names.len());
        let unloads =
            self.budget.enforce(&self.visible, &self.deferral, &mut self.session, &mut self.recency, &fresh);
        unloads.into_iter().map(|e| e.rule).collect()
    }
}

#[test]
fn first_turn_takes_12_per_server_and_sends_52_definitions() {
    let full = catalog();
    assert_eq!(full.len(), 163);
    let policy = Policy::new(&config(""), None).unwrap();
    let visible = policy.filter(&full).catalog;
    let deferral = Deferral::decide(&visible, &DeferConfig { mode: DeferMode::On, ..DeferConfig::default() });
    let pre = policy.first_turn(&visible, &deferral, 1, "help me with my work", "").unwrap();
    assert_eq!(pre.chosen.len(), 48);
    for s in SERVERS {
        assert_eq!(pre.per_server[s], 12, "{s}");
    }
    let run = first_turn(&policy, &full);
    assert_eq!(run.definitions(), 52, "3 built-ins + tool_search + 48");
    assert_eq!(run.budget.fixed(), 4);
    assert!(run.budget.check_hard(run.definitions()).is_ok());
    // The other 112 MCP tools stay on the host, waiting to be found.
    let waiting =
        deferred_names(&run.visible, &run.deferral).iter().filter(|n| !run.session.is_active(n)).count();
    assert_eq!(waiting, 112);
    assert!(toolgate::policy::keeps_tool_search(waiting));
}

#[test]
fn growth_stops_at_the_dynamic_budget_of_112() {
    let full = catalog();
    let policy = Policy::new(&config("max_active = 40"), None).unwrap();
    let mut run = first_turn(&policy, &full);
    let mut unloaded = Vec::new();
    for _ in 0..12 {
        unloaded.extend(run.discover(10));
        assert!(run.definitions() <= 112, "{}", run.definitions());
        assert!(run.budget.check_hard(run.definitions()).is_ok());
    }
    assert_eq!(run.definitions(), 112);
    assert!(!unloaded.is_empty());
    assert!(unloaded.iter().all(|r| *r == Rule::DynamicBudget { limit: 112 }), "{unloaded:?}");
}

#[test]
fn with_the_default_max_active_each_server_stops_at_24() {
    let full = catalog();
    let policy = Policy::new(&config(""), None).unwrap();
    let mut run = first_turn(&policy, &full);
    let mut unloaded = Vec::new();
    for _ in 0..12 {
        unloaded.extend(run.discover(10));
    }
    assert_eq!(run.definitions(), 4 + 4 * 24);
    assert!(unloaded.iter().all(|r| matches!(r, Rule::MaxActive { limit: 24, .. })), "{unloaded:?}");
}

#[test]
fn pins_over_budget_raise_the_documented_error() {
    let full = catalog();
    let deferral =
        |c: &Catalog| Deferral::decide(c, &DeferConfig { mode: DeferMode::On, ..DeferConfig::default() });
    // 30 pins on every server, max_active 24.
    let policy = Policy::new(&config("pinned = [\"op_0*\", \"op_1*\", \"op_2*\"]"), None).unwrap();
    let visible = policy.filter(&full).catalog;
    let err = policy.first_turn(&visible, &deferral(&visible), 1, "", "").unwrap_err();
    assert_eq!(err, PolicyError::RequiredOverBudget { server: "browser".into(), required: 30, limit: 24 });
    assert_eq!(
        err.to_string(),
        "server `browser`: 30 required tools (pinned or mode=all) exceed max_active 24; pin fewer tools, \
         narrow `allowed`, or use mode = \"auto\""
    );
    // mode = "all" with room per server, but 160 required tools do not fit in 96.
    let policy = Policy::new(&config("mode = \"all\"\nmax_active = 40"), None).unwrap();
    let visible = policy.filter(&full).catalog;
    let err = policy.first_turn(&visible, &deferral(&visible), 1, "", "").unwrap_err();
    assert_eq!(err, PolicyError::RequiredOverFirstTurn { required: 160, fixed: 4, limit: 96 });
}
