//! Differential property test of the gateway against the library's policy and a plain model
//! of the execution invariant. For random configurations (server keys with dots, slashes,
//! capitals, over 32 characters, colliding after normalisation; deny patterns and profiles over
//! every spelling), random listings and re-lists (tools renamed, redefined, colliding) and
//! random client operations (search, list, calls under several spellings, in native and bridge
//! exposure), the gateway's view equals what `Policy` decides over the merged catalog, and a
//! call reaches an upstream exactly when the model says it may: the conversation was shown the
//! tool's current definition from its current server, the policy allows it, it is loaded, and
//! its schema compiled.
//!
//! The upstreams are static catalogs (`Gateway::add_catalog`, which is also how a re-list is
//! made here): a call that reaches one answers "demo tool …, not connected".

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use common::{Client, text};
use proptest::prelude::*;
use serde_json::{Value, json};
use toolgate::catalog::DefinitionHash;
use toolgate::config::{Config, Exposure, PolicyConfig, ProfileConfig};
use toolgate::{Catalog, Policy, ToolSpec};
use toolgate_mcp::{Gateway, Settings};

const KEYS: [&str; 6] = [
    "acme.files",
    "acme/files",
    "Acme_Files",
    "io.github.acme/a-server-name-well-over-thirty-two-chars",
    "docs",
    "fs2_",
];
const NAMES: [&str; 7] = ["delete_repo", "delete.repo", "read_file", "Read_File", "write", "list", "odd"];
const PATTERNS: [&str; 12] = [
    "acme.files",
    "acme_files",
    "ACME*",
    "io.github.*",
    "*__delete_repo",
    "docs__*",
    "fs2_",
    "*read*",
    "acme/files__write",
    "*__list",
    "Docs",
    "mcp__acme.files__delete.repo",
];

#[derive(Debug, Clone)]
enum Op {
    /// `select:` these tools (indexes into the merged catalog, hidden ones included).
    Search(Vec<usize>),
    /// A call of one tool under one spelling (0 qualified, 1 `mcp__`, 2 upper case, 3 raw
    /// `key__name`).
    Call(usize, u8),
    /// Upstream `KEYS[k]` lists a new set of names, with descriptions of version `v`.
    Relist(usize, u8, u8),
    /// `tools/list`.
    List,
}

#[derive(Debug, Clone)]
struct Case {
    upstreams: Vec<(usize, u8)>,
    deny: u16,
    profile: Option<(u16, u16)>,
    bridge: bool,
    ops: Vec<Op>,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => prop::collection::vec(0..40usize, 1..6).prop_map(Op::Search),
        4 => (0..40usize, 0..4u8).prop_map(|(t, s)| Op::Call(t, s)),
        1 => (0..KEYS.len(), any::<u8>(), 0..3u8).prop_map(|(k, m, v)| Op::Relist(k, m, v)),
        1 => Just(Op::List),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((0..KEYS.len(), any::<u8>()), 1..4),
        any::<u16>().prop_map(|m| m & any_few(m)),
        prop::option::of((any::<u16>(), any::<u16>().prop_map(|m| m & any_few(m)))),
        any::<bool>(),
        prop::collection::vec(op(), 1..24),
    )
        .prop_map(|(upstreams, deny, profile, bridge, ops)| Case {
            upstreams,
            deny,
            profile,
            bridge,
            ops,
        })
}

/// Keeps a pattern mask sparse: most configurations deny a few things, not everything.
fn any_few(m: u16) -> u16 {
    if m.is_multiple_of(3) { 0 } else { (m >> 4) | (m >> 9) }
}

fn pick(mask: u16) -> Vec<String> {
    PATTERNS.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, p)| (*p).to_owned()).collect()
}

fn specs(key: &str, mask: u8, version: u8) -> Vec<ToolSpec> {
    NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, name)| {
            let spec = ToolSpec::mcp(key, name, &format!("{name} v{version}"));
            if *name == "odd" { spec.with_schema(json!({"type": 12})) } else { spec }
        })
        .collect()
}

fn catalog_of(specs: &[ToolSpec]) -> Catalog {
    specs.iter().cloned().fold(Catalog::builder(), |b, s| b.tool(s)).build().unwrap()
}

/// The model: the listings, what the conversation was shown and what it loaded.
struct Model {
    listings: BTreeMap<String, Vec<ToolSpec>>,
    policy: Policy,
    shown: HashMap<String, (String, DefinitionHash)>,
    active: HashSet<String>,
}

impl Model {
    /// The merged catalog, named once over every upstream in name order.
    fn merged(&self) -> Catalog {
        let all: Vec<ToolSpec> = self.listings.values().flatten().cloned().collect();
        catalog_of(&all)
    }

    fn visible(&self) -> Catalog {
        self.policy.filter(&self.merged()).catalog
    }

    /// After a re-list: loaded tools whose definition (or server) changed are unloaded.
    fn resume(&mut self) {
        let visible = self.visible();
        let shown = &self.shown;
        self.active.retain(|name| match (visible.get(name), shown.get(name)) {
            (Some(id), Some((server, hash))) => {
                let t = visible.tool(id);
                t.server() == server && t.hash() == *hash
            }
            _ => true,
        });
    }

    /// Whether a call of `name` may reach the upstream.
    fn may_run(&self, name: &str) -> bool {
        // A name means the tool of the whole catalog it names (exactly, or as the only one in
        // another letter case); that tool must be visible.
        let merged = self.merged();
        let Some(id) = merged.resolve(name) else { return false };
        let visible = self.visible();
        let Some(id) = visible.get(merged.tool(id).qualified_name()) else { return false };
        let t = visible.tool(id);
        let q = t.qualified_name();
        self.policy.decide(t).is_allow()
            && self.active.contains(q)
            && self.shown.get(q) == Some(&(t.server().to_owned(), t.hash()))
            && t.name() != "odd"
    }
}

async fn run(case: Case) {
    let mut config = Config { policy: PolicyConfig { deny: pick(case.deny) }, ..Config::default() };
    if let Some((tools, disallowed)) = case.profile {
        let tools = if tools.is_multiple_of(4) { vec!["*".to_owned()] } else { pick(tools) };
        config.profiles.insert("p".into(), ProfileConfig { tools, disallowed_tools: pick(disallowed) });
    }
    let profile = case.profile.map(|_| "p".to_owned());
    let exposure = if case.bridge { Exposure::Bridge } else { Exposure::Native };
    // The in-process client never lists again on its own; nothing to wait for.
    let settings = Settings {
        exposure: Some(exposure),
        profile: profile.clone(),
        relist_wait: Duration::ZERO,
        ..Settings::default()
    };
    let gateway = Gateway::configured(settings, config.clone()).unwrap();
    let mut model = Model {
        listings: BTreeMap::new(),
        policy: Policy::new(&config, profile.as_deref()).unwrap(),
        shown: HashMap::new(),
        active: HashSet::new(),
    };
    for &(k, mask) in &case.upstreams {
        let listing = specs(KEYS[k], mask, 0);
        gateway.add_catalog(KEYS[k], &catalog_of(&listing));
        model.listings.insert(KEYS[k].to_owned(), listing);
    }
    let client = Client::duplex(&gateway).await;

    for op in &case.ops {
        let merged = model.merged();
        let visible = model.visible();
        let names: Vec<String> = visible.tools().iter().map(|t| t.qualified_name().to_owned()).collect();
        // The gateway's view is the policy's.
        let seen = gateway.visible_catalog(profile.as_deref()).unwrap();
        let seen: Vec<&str> = seen.tools().iter().map(|t| t.qualified_name()).collect();
        assert_eq!(seen, names, "{op:?}");
        match op {
            Op::Search(picks) if !merged.is_empty() => {
                let chosen: Vec<&str> =
                    picks.iter().map(|&i| merged.tools()[i % merged.len()].qualified_name()).collect();
                let query = format!("select:{}", chosen.join(","));
                let found = client.call("tool_search", json!({"query": query, "limit": 20})).await;
                let matches: Vec<String> = found.structured_content.unwrap()["matches"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_owned())
                    .collect();
                let mut want: Vec<&str> =
                    chosen.iter().copied().filter(|n| visible.get(n).is_some()).collect();
                want.dedup();
                let got: HashSet<&str> = matches.iter().map(String::as_str).collect();
                assert_eq!(got, want.iter().copied().collect::<HashSet<_>>(), "{query}");
                for m in &matches {
                    let t = visible.tool(visible.get(m).unwrap());
                    model.shown.insert(m.clone(), (t.server().to_owned(), t.hash()));
                    model.active.insert(m.clone());
                }
            }
            Op::Call(i, spelling) if !merged.is_empty() => {
                let t = &merged.tools()[i % merged.len()];
                let name = match spelling {
                    0 => t.qualified_name().to_owned(),
                    1 => format!("mcp__{}", t.qualified_name()),
                    2 => t.qualified_name().to_uppercase(),
                    _ => format!("{}__{}", t.server(), t.name()),
                };
                let result = if case.bridge {
                    client.call("call_tool", json!({"name": name, "arguments": {}})).await
                } else {
                    client.call(&name, json!({})).await
                };
                let reached = text(&result).starts_with("demo tool `");
                assert_eq!(reached, model.may_run(&name), "{name}: {}", text(&result));
            }
            Op::Relist(k, mask, version) => {
                let listing = specs(KEYS[*k], *mask, *version);
                gateway.add_catalog(KEYS[*k], &catalog_of(&listing));
                model.listings.insert(KEYS[*k].to_owned(), listing);
                model.resume();
            }
            Op::List => {
                let listed = client.names().await;
                if case.bridge {
                    assert_eq!(listed, ["tool_search", "call_tool"]);
                } else {
                    assert_eq!(listed[0], "tool_search");
                    for n in &listed[1..] {
                        assert!(names.contains(n), "{n} is listed but not visible");
                        assert!(model.active.contains(n), "{n} is listed but not loaded");
                    }
                }
            }
            _ => {}
        }
    }
    let _: Value = gateway.status();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn the_gateway_shows_and_runs_exactly_what_the_policy_and_the_invariant_allow(case in case()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(run(case));
    }
}
