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
//! The same cases also run with no session at all (MCP 2026-07-28 over HTTP, every request on
//! its own): what a search shows comes back as grants, every call presents the grant the
//! client holds for the tool its name means (or, to attack, another tool's), and a call reaches
//! an upstream exactly when the client holds a grant for the tool's current definition from its
//! current server and the policy allows it.
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
use toolgate::{Catalog, Policy, ToolSpec};
use toolgate_mcp::config::{Config, Exposure, PolicyConfig, ProfileConfig};
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
    /// Every request on its own, over HTTP at 2026-07-28 (bridge exposure, grants).
    stateless: bool,
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
        prop::bool::weighted(0.3),
        prop::collection::vec(op(), 1..24),
    )
        .prop_map(|(upstreams, deny, profile, bridge, stateless, ops)| Case {
            upstreams,
            deny,
            profile,
            bridge: bridge || stateless,
            stateless,
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
    /// With no session: the grants the client holds, by qualified name, with the server and
    /// definition each was given for.
    grants: HashMap<String, (String, DefinitionHash, String)>,
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

    /// With no session: the tool `name` means, if any is visible.
    fn meant(&self, name: &str) -> Option<toolgate::Tool> {
        let merged = self.merged();
        let id = merged.resolve(name)?;
        let visible = self.visible();
        let id = visible.get(merged.tool(id).qualified_name())?;
        Some(visible.tool(id).clone())
    }

    /// With no session: whether a call of `name` presenting `grant` may reach the upstream.
    fn may_run_granted(&self, name: &str, grant: Option<&str>) -> bool {
        let Some(t) = self.meant(name) else { return false };
        let held = self.grants.get(t.qualified_name());
        self.policy.decide(&t).is_allow()
            && held.is_some_and(|(server, hash, g)| {
                Some(g.as_str()) == grant && *server == t.server() && *hash == t.hash()
            })
            && t.name() != "odd"
    }
}

/// One request with no session (2026-07-28) to the gateway at `addr`: its JSON-RPC result.
async fn stateless(addr: std::net::SocketAddr, method: &str, params: Value) -> Value {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "differential", "version": "1"},
    });
    let name = params.get("name").and_then(Value::as_str).map(|n| format!("Mcp-Name: {n}\r\n"));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{}Content-Length: {}\r\n\r\n",
        name.unwrap_or_default(),
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(format!("{head}{body}").as_bytes()).await.unwrap();
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).await.unwrap();
    let reply = String::from_utf8_lossy(&reply);
    // The answer is the one JSON-RPC message of the body, in an event or alone.
    let start = reply.find("{\"jsonrpc\"").unwrap_or_else(|| panic!("no JSON-RPC message: {reply}"));
    let mut messages = serde_json::Deserializer::from_str(&reply[start..]).into_iter::<Value>();
    let message = messages.next().unwrap().unwrap_or_else(|e| panic!("{e}: {reply}"));
    assert!(message.get("error").is_none(), "{method}: {message}");
    message["result"].clone()
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
    let gateway = Gateway::builder(settings).policy(config.clone()).build().unwrap();
    let mut model = Model {
        listings: BTreeMap::new(),
        policy: Policy::new(&config, profile.as_deref()).unwrap(),
        shown: HashMap::new(),
        active: HashSet::new(),
        grants: HashMap::new(),
    };
    for &(k, mask) in &case.upstreams {
        let listing = specs(KEYS[k], mask, 0);
        gateway.add_catalog(KEYS[k], &catalog_of(&listing));
        model.listings.insert(KEYS[k].to_owned(), listing);
    }
    let client = Client::duplex(&gateway).await;
    let shutdown = tokio_util::sync::CancellationToken::new();
    let _stop = shutdown.clone().drop_guard();
    let addr = if case.stateless {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(toolgate_mcp::http::serve(gateway.clone(), listener, shutdown.clone()));
        Some(addr)
    } else {
        None
    };

    for op in &case.ops {
        let merged = model.merged();
        let visible = model.visible();
        let names: Vec<String> = visible.tools().iter().map(|t| t.qualified_name().to_owned()).collect();
        // The gateway's view is the policy's.
        let seen = gateway.report().visible_catalog(profile.as_deref()).unwrap();
        let seen: Vec<&str> = seen.tools().iter().map(|t| t.qualified_name()).collect();
        assert_eq!(seen, names, "{op:?}");
        match op {
            Op::Search(picks) if !merged.is_empty() => {
                let chosen: Vec<&str> =
                    picks.iter().map(|&i| merged.tools()[i % merged.len()].qualified_name()).collect();
                let query = format!("select:{}", chosen.join(","));
                let arguments = json!({"query": query, "limit": 20});
                let structured = match addr {
                    Some(addr) => {
                        let result = stateless(
                            addr,
                            "tools/call",
                            json!({"name": "tool_search", "arguments": arguments}),
                        )
                        .await;
                        result["structuredContent"].clone()
                    }
                    None => client.call("tool_search", arguments).await.structured_content.unwrap(),
                };
                let matches: Vec<String> = structured["matches"]
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
                    if case.stateless {
                        let grant =
                            structured["grants"][m].as_str().unwrap_or_else(|| panic!("no grant for {m}"));
                        model.grants.insert(m.clone(), (t.server().to_owned(), t.hash(), grant.to_owned()));
                    }
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
                if let Some(addr) = addr {
                    // The grant the client holds for the tool the name means; else, as an
                    // attack, one it holds for another tool; else none.
                    let meant = model.meant(&name).map(|t| t.qualified_name().to_owned());
                    let grant = meant
                        .and_then(|q| model.grants.get(&q))
                        .or_else(|| model.grants.values().next())
                        .map(|(_, _, g)| g.clone());
                    let mut outer = json!({"name": name, "arguments": {}});
                    if let Some(grant) = &grant {
                        outer["grant"] = json!(grant);
                    }
                    let result =
                        stateless(addr, "tools/call", json!({"name": "call_tool", "arguments": outer})).await;
                    let said = result["content"][0]["text"].as_str().unwrap_or_default().to_owned();
                    let reached = said.starts_with("demo tool `");
                    assert_eq!(reached, model.may_run_granted(&name, grant.as_deref()), "{name}: {said}");
                    continue;
                }
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
            Op::List if addr.is_some() => {
                let result = stateless(addr.unwrap(), "tools/list", json!({})).await;
                let listed: Vec<&str> =
                    result["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
                assert_eq!(listed, ["tool_search", "call_tool"]);
                assert_eq!(result["cacheScope"], "private", "{result}");
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
