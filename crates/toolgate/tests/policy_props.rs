//! Property test of the policy boundary: for random catalogs, policies (global deny patterns,
//! server `denied` / `allowed` / `mode` / `read_only` / `enabled`, profiles and sub-agents) and
//! queries, no denied tool ever reaches search hits, announcements, the tool list, the active
//! set after `Toolbox::tool_search`, or the first turn, and the gate refuses it. `decide` is
//! checked against a naive restatement of the rules.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::json;
use toolgate::config::{Config, ProfileConfig, ServerConfig, ServerMode, SideEffects, glob_match};
use toolgate::defer::{DeferConfig, DeferMode};
use toolgate::policy::{Policy, Verdict};
use toolgate::toolbox::{Decision, Denial};
use toolgate::{Catalog, Strategy as Ranker, Tool, ToolSpec, Toolbox};

const SERVERS: [&str; 4] = ["github", "slack", "fs", "db"];
const VERBS: [&str; 8] = ["get", "list", "create", "delete", "send", "read", "search", "drop"];
const NOUNS: [&str; 6] = ["issue", "file", "message", "repo", "table", "user"];
const DENY: [&str; 9] = [
    "*__delete_*",
    "github",
    "slack__*",
    "*send*",
    "fs__read_?ile",
    "mcp__db",
    "*__drop_table",
    "nothing",
    "git*",
];
const SERVER_PATTERNS: [&str; 7] = ["*", "get_*", "list_*", "*_file", "delete_*", "search_issue", "?ead_*"];
const PROFILE_PATTERNS: [&str; 8] =
    ["*", "github", "github__*", "fs__read_*", "*__list_*", "slack__send_message", "mcp__db", "*__get_*"];
const QUERIES: [&str; 12] = [
    "delete file",
    "send a message",
    "select:github__delete_issue,slack__send_message,db__drop_table",
    "github__",
    "mcp__slack",
    "fs__read_file",
    "+delete repo",
    "删除 文件",
    "list issues",
    "drop table user",
    "search",
    "get user",
];

fn pick(pool: &[&str], mask: u16) -> Vec<String> {
    pool.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, p)| (*p).to_owned()).collect()
}

#[derive(Debug, Clone)]
struct ServerCase {
    mode: u8,
    allowed: u16,
    denied: u16,
    read_only_only: bool,
    read_only: u16,
    enabled: bool,
}

fn server_case() -> impl Strategy<Value = ServerCase> {
    (0..3u8, any::<u16>(), any::<u16>(), any::<bool>(), any::<u16>(), prop::bool::weighted(0.9)).prop_map(
        |(mode, allowed, denied, read_only_only, read_only, enabled)| ServerCase {
            mode,
            allowed,
            denied: denied & 0b0101_0000, // mostly nothing, sometimes delete_* or *_file
            read_only_only,
            read_only,
            enabled,
        },
    )
}

#[derive(Debug, Clone)]
struct Case {
    tools: Vec<(usize, usize, usize, bool)>,
    deny: u16,
    servers: Vec<ServerCase>,
    profiles: Vec<(u16, u16)>,
    queries: Vec<usize>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((0..4usize, 0..VERBS.len(), 0..NOUNS.len(), any::<bool>()), 1..40),
        any::<u16>().prop_map(|m| m & 0b1_1111_1111 & any_few(m)),
        prop::collection::vec(server_case(), 4),
        prop::collection::vec((any::<u16>(), any::<u16>().prop_map(|m| m & 0b0111_0110)), 2),
        prop::collection::vec(0..QUERIES.len(), 1..5),
    )
        .prop_map(|(tools, deny, servers, profiles, queries)| Case {
            tools,
            deny,
            servers,
            profiles,
            queries,
        })
}

/// Keeps about a third of the bits, so that most policies deny a few things, not everything.
fn any_few(m: u16) -> u16 {
    m.rotate_left(5) & m.rotate_left(11)
}

fn build(case: &Case) -> (Catalog, Config) {
    let mut seen = BTreeSet::new();
    let mut b = Catalog::builder();
    for &(s, v, n, ro) in &case.tools {
        let name = format!("{}_{}", VERBS[v], NOUNS[n]);
        if !seen.insert((s, name.clone())) {
            continue;
        }
        let mut spec = ToolSpec::mcp(SERVERS[s], &name, "Safe, read-only and harmless (says the server).");
        if ro {
            spec.annotations.insert("readOnlyHint".into(), true.into());
        }
        b = b.tool(spec);
    }
    let catalog = b.build().unwrap();
    let mut config = Config::default();
    config.policy.deny = pick(&DENY, case.deny);
    for (i, sc) in case.servers.iter().enumerate() {
        let mut s = ServerConfig::new(());
        s.mode = [ServerMode::Auto, ServerMode::Allowlist, ServerMode::All][sc.mode as usize];
        s.allowed = pick(&SERVER_PATTERNS, sc.allowed);
        s.denied = pick(&SERVER_PATTERNS, sc.denied);
        s.side_effects = if sc.read_only_only { SideEffects::ReadOnly } else { SideEffects::Allow };
        s.read_only = pick(&SERVER_PATTERNS, sc.read_only);
        s.enabled = sc.enabled;
        s.max_active = 96;
        config.servers.insert(SERVERS[i].to_owned(), s);
    }
    for (i, &(tools, disallowed)) in case.profiles.iter().enumerate() {
        let profile = ProfileConfig {
            tools: pick(&PROFILE_PATTERNS, tools),
            disallowed_tools: pick(&PROFILE_PATTERNS, disallowed),
        };
        config.profiles.insert(format!("p{i}"), profile);
    }
    (catalog, config)
}

/// The rules again, written plainly from docs/policy.md.
fn naive_allows(config: &Config, profiles: &[&str], tool: &Tool) -> bool {
    let qualified = tool.qualified_name();
    let over_qualified = |p: &String| {
        let p = p.strip_prefix("mcp__").unwrap_or(p);
        glob_match(p, qualified) || (!p.contains("__") && glob_match(p, tool.server()))
    };
    if config.policy.deny.iter().any(over_qualified) {
        return false;
    }
    for name in profiles {
        let p = &config.profiles[*name];
        if p.disallowed_tools.iter().any(over_qualified) || !p.tools.iter().any(over_qualified) {
            return false;
        }
    }
    let s = &config.servers[tool.server()];
    let own = |p: &String| glob_match(p, tool.name());
    s.enabled
        && !s.denied.iter().any(own)
        && (s.mode == ServerMode::All || s.allowed.iter().any(own))
        && (s.side_effects == SideEffects::Allow || tool.read_only_hint() || s.read_only.iter().any(own))
}

fn check_subject(catalog: &Catalog, config: &Config, policy: &Policy, layers: &[&str], queries: &[usize]) {
    let on = DeferConfig { mode: DeferMode::On, ..DeferConfig::default() };
    let allowed = |name: &str| {
        let id = catalog.get(name).unwrap_or_else(|| panic!("{name} is not in the catalog"));
        policy.decide(catalog.tool(id)).is_allow()
    };
    for t in catalog.tools() {
        assert_eq!(policy.decide(t).is_allow(), naive_allows(config, layers, t), "{}", t.qualified_name());
    }

    let filtered = policy.filter(catalog);
    let visible = filtered.catalog;
    let hidden: BTreeSet<&str> = filtered.audit.iter().map(|e| e.tool.as_str()).collect();
    assert_eq!(visible.len() + hidden.len(), catalog.len());
    assert!(visible.tools().iter().all(|t| allowed(t.qualified_name())));
    assert!(hidden.iter().all(|n| !allowed(n)));

    for strategy in [Ranker::Bm25f, Ranker::Keyword] {
        let Ok(toolbox) = Toolbox::builder(catalog, policy.clone()).defer(on).strategy(strategy).build()
        else {
            continue;
        };
        let mut chat = toolbox.conversation();
        // The announcement lists `SERVER: TOOL, TOOL` lines; every name in it is allowed.
        let block = toolbox.briefing().announcement(&mut chat);
        let announced: Vec<String> = block
            .lines()
            .filter_map(|l| l.split_once(": "))
            .flat_map(|(server, tools)| tools.split(", ").map(move |t| format!("{server}__{t}")))
            .collect();
        assert!(announced.iter().all(|n| allowed(n)), "{block}");
        assert!(hidden.iter().all(|n| !announced.iter().any(|a| a == n)), "{block}");
        for &q in queries {
            let found = toolbox.tool_search(&mut chat, &json!({"query": QUERIES[q], "limit": 20})).unwrap();
            for t in found.matches() {
                assert!(allowed(t.qualified_name()), "{strategy}: {}", QUERIES[q]);
            }
        }
        assert!(chat.active().iter().all(|n| allowed(n)));
        let list = toolbox.tools(&mut chat).unwrap();
        assert!(
            list.iter().filter(|t| t.qualified_name() != "tool_search").all(|t| allowed(t.qualified_name()))
        );
        let mut first = toolbox.conversation();
        if let Ok(pre) = toolbox.preselect(&mut first, "delete the file and send a message", "") {
            assert!(pre.iter().all(|t| allowed(t.qualified_name())));
        }
    }

    // The gate, asked through the facade by a conversation that searched for every tool by
    // name, refuses each hidden tool under its own name and Claude Code's spelling.
    let toolbox = Toolbox::builder(catalog, policy.clone()).defer(on).build();
    if let Ok(toolbox) = toolbox {
        let mut chat = toolbox.conversation();
        let all: Vec<&str> = catalog.tools().iter().map(|t| t.qualified_name()).collect();
        let _ = toolbox
            .tool_search(&mut chat, &json!({"query": format!("select:{}", all.join(",")), "limit": 20}));
        for name in &hidden {
            for spelling in [name.to_string(), format!("mcp__{name}"), name.to_uppercase()] {
                let d = toolbox.check(&mut chat, &spelling, &json!({}));
                assert!(matches!(d, Decision::Deny(Denial::Forbidden { .. })), "{spelling}: {d:?}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn no_denied_tool_reaches_the_model_or_the_upstream(case in case()) {
        let (catalog, config) = build(&case);
        let main = Policy::new(&config, None).unwrap();
        check_subject(&catalog, &config, &main, &[], &case.queries);

        let p0 = Policy::new(&config, Some("p0")).unwrap();
        check_subject(&catalog, &config, &p0, &["p0"], &case.queries);

        // A sub-agent sees no more than its parent, and inherits only what it may use.
        let child = p0.child("p1").unwrap();
        check_subject(&catalog, &config, &child, &["p0", "p1"], &case.queries);
        let parent_visible: BTreeMap<String, bool> = catalog
            .tools()
            .iter()
            .map(|t| (t.qualified_name().to_owned(), p0.decide(t).is_allow()))
            .collect();
        for t in catalog.tools() {
            if child.decide(t) == Verdict::Allow {
                assert!(parent_visible[t.qualified_name()]);
            }
        }
        let on = DeferConfig { mode: DeferMode::On, ..DeferConfig::default() };
        if let Ok(parent) = Toolbox::builder(&catalog, p0.clone()).defer(on).build() {
            let mut chat = parent.conversation();
            let all: Vec<&str> = catalog.tools().iter().map(|t| t.qualified_name()).collect();
            let _ = parent.tool_search(&mut chat, &json!({"query": format!("select:{}", all.join(",")), "limit": 20}));
            if let Ok((_, inherited, _)) = parent.sub_agent(child.clone(), &chat) {
                for name in inherited.active() {
                    assert!(child.decide(catalog.tool(catalog.get(name).unwrap())).is_allow());
                }
            }
        }
    }
}
