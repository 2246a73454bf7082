//! Stateless 2026-07-28 over HTTP, with the real clients: two `toolgate serve --http` replicas
//! with no session store behind them (`sessions` is the default, each process's own memory)
//! share only `[gateway] grant_key`, and sit behind `e2e/round_robin.py`, a reverse proxy that
//! sends every request to the next replica in turn. The upstream is `e2e/changing_server.py`
//! (server `changing`: `greet {name}`, whose description carries a version read from a file both
//! replicas' copies read, and `secret_op {}`); each replica starts its own copy, and every call
//! an upstream receives is logged, so a refused call is proven never to have arrived.
//!
//! The clients, pinned to 2026-07-28 (no `initialize`, no session): `e2e/stateless.mjs`
//! (`@modelcontextprotocol/client` 2.x) and `e2e/stateless.py` (the Python `mcp` SDK's
//! `Client`). Each prints what it observed; this file asserts:
//!
//! - `tools/list` is exactly `tool_search` and `call_tool`, with a numeric `ttlMs` and
//!   `cacheScope: "private"`;
//! - `tool_search` answers `loaded`, `schemas` and `grants` (one grant per loaded tool, shown in
//!   the text too); the grant runs the tool on the other replica, through `call_tool {name,
//!   arguments, grant}` and as a plain `tools/call` with `_meta["toolgate/grant"]`;
//! - a tool never searched (no grant, or another tool's grant) is refused, naming `tool_search`;
//! - once the tool's definition changes upstream, the old grant is refused (the definition
//!   changed) and a new search's grant works;
//! - a token bound to a profile that denies `changing__secret_op` never sees it (in
//!   `tools/list`, any `tool_search`, `select:` of its exact name included, or the discover
//!   instructions) and cannot call it, not even with a grant an unrestricted token got;
//! - the proxy alternated between the replicas, and no refused call reached an upstream;
//! - a replica with another `grant_key` refuses the grants of the first.
//!
//! The servers and clients are installed by `e2e/setup.sh` (the README's test command runs it).

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use support::{Server, WAIT, e2e, request_whole, scratch, serve};

const ALICE: &str = "alice-secret-0123456789";
const READER: &str = "reader-secret-0123456789";
/// The grant key both replicas share (a secret of 32 characters or more).
const GRANT_KEY: &str = "stateless-test-grant-key-0123456789abcdef";
/// Another key, for a replica whose grants the first must refuse.
const OTHER_KEY: &str = "another-test-grant-key-fedcba9876543210";
const GREET: &str = "changing__greet";
const SECRET: &str = "changing__secret_op";

fn python() -> PathBuf {
    let python = e2e().join(".venv/bin/python");
    assert!(
        python.exists(),
        "the Python SDK is not installed: run e2e/setup.sh (the README's test command does)"
    );
    python
}

/// The last `max` bytes of `text` (at a character boundary).
fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// `e2e/round_robin.py` in front of `backends`, killed on drop.
struct Proxy {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Proxy {
    fn start(dir: &Path, backends: &[&str]) -> Proxy {
        let log = dir.join("round-robin.log");
        let child = Command::new(python())
            .arg(e2e().join("round_robin.py"))
            .arg("--log")
            .arg(&log)
            .args(backends)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("round_robin.py runs");
        let mut proxy = Proxy { child, url: String::new(), log };
        let stdout = proxy.child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(WAIT).expect("round_robin.py prints where it listens");
        let base =
            line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("round_robin.py: {line}"));
        proxy.url = format!("{base}/mcp");
        proxy
    }

    /// The backend each request went to, in order.
    fn backends(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines().map(|l| l.rsplit(" -> ").next().unwrap_or_default().to_owned()).collect()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two replicas (each with its own copy of the changing server) behind the proxy, the version
/// file both copies read and the log of the calls they received.
struct Cluster {
    dir: PathBuf,
    version: PathBuf,
    calls: PathBuf,
    replicas: [Server; 2],
    proxy: Proxy,
}

impl Cluster {
    /// The replicas' grant keys are `keys`.
    fn start(name: &str, keys: [&str; 2]) -> Cluster {
        let dir = scratch(name);
        let version = dir.join("version.txt");
        std::fs::write(&version, "v1\n").unwrap();
        let calls = dir.join("calls.jsonl");
        let config = dir.join("toolgate.toml");
        std::fs::write(
            &config,
            format!(
                "[gateway]\ngrant_key = \"${{TG_GRANT_KEY}}\"\n\n\
                 [tokens.alice]\nenv = \"TG_ALICE\"\n\
                 [tokens.reader]\nenv = \"TG_READER\"\nprofile = \"reader\"\n\n\
                 [profiles.reader]\ndisallowed_tools = [\"{SECRET}\"]\n\n\
                 [servers.changing]\ncommand = {:?}\nargs = [{:?}]\n\
                 env = {{ CHANGING_FILE = {:?}, CHANGING_LOG = {:?} }}\n",
                python().display().to_string(),
                e2e().join("changing_server.py").display().to_string(),
                version.display().to_string(),
                calls.display().to_string(),
            ),
        )
        .unwrap();
        let config = config.display().to_string();
        let replicas = keys.map(|key| {
            serve(
                &["--http", "127.0.0.1:0", "--config", &config],
                &[("TG_ALICE", ALICE), ("TG_READER", READER), ("TG_GRANT_KEY", key)],
            )
        });
        for replica in &replicas {
            ready(replica);
        }
        let proxy = Proxy::start(&dir, &[replicas[0].addr.as_str(), replicas[1].addr.as_str()]);
        Cluster { dir, version, calls, replicas, proxy }
    }

    /// Runs `client` (`ts` or `py`) as `token` through the proxy, with `extra` arguments; its
    /// one JSON line.
    fn run(&self, client: &str, token: &str, extra: &[&str]) -> Value {
        let mut cmd = Command::new("timeout");
        cmd.arg("180");
        if client == "ts" {
            cmd.arg("node").arg(e2e().join("stateless.mjs"));
        } else {
            cmd.arg(python()).arg(e2e().join("stateless.py"));
        }
        cmd.arg(&self.proxy.url).arg(token).arg(&self.version).args(extra).current_dir(e2e());
        let out = cmd.output().unwrap_or_else(|e| panic!("stateless {client} does not run: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "stateless {client} {extra:?} failed ({}):\nstdout:\n{stdout}\nstderr (last 4000 bytes):\n{}\n\
             replica logs:\n{}\n---\n{}",
            out.status,
            tail(&stderr, 4000),
            tail(&self.replicas[0].log(), 4000),
            tail(&self.replicas[1].log(), 4000),
        );
        let line = stdout.lines().last().unwrap_or_default();
        serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stateless {client} printed no JSON line ({e}):\n{stdout}"))
    }

    /// The calls the upstreams received: (tool, the `name` argument).
    fn calls(&self) -> Vec<(String, String)> {
        let text = std::fs::read_to_string(&self.calls).unwrap_or_default();
        text.lines()
            .map(|l| {
                let call: Value = serde_json::from_str(l).unwrap();
                let name = call["args"]["name"].as_str().unwrap_or_default().to_owned();
                (call["tool"].as_str().unwrap().to_owned(), name)
            })
            .collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Waits until the replica's upstream is ready (`/status.json`).
fn ready(server: &Server) {
    let auth = format!("Bearer {ALICE}");
    server.until_ready(&[("Authorization", auth.as_str())]);
}

fn text(step: &Value) -> &str {
    step["text"].as_str().unwrap_or_default()
}

/// A step that ran the tool: not an error, and its text has `expected`.
fn ran(facts: &Value, key: &str, expected: &str) {
    let step = &facts[key];
    assert_eq!(step["isError"], false, "{key} must run: {step}\n{facts}");
    assert!(text(step).contains(expected), "{key} must answer {expected:?}: {step}\n{facts}");
}

/// A step that was refused: a tool error whose text has `says`.
fn refused(facts: &Value, key: &str, says: &str) {
    let step = &facts[key];
    assert_eq!(step["isError"], true, "{key} must be refused: {step}\n{facts}");
    assert!(text(step).contains(says), "{key}'s refusal must say {says:?}: {step}\n{facts}");
}

/// The names a step listed under `field`.
fn names<'a>(step: &'a Value, field: &str) -> Vec<&'a str> {
    let list = step[field].as_array().unwrap_or_else(|| panic!("no `{field}` list: {step}"));
    list.iter().filter_map(Value::as_str).collect()
}

/// The grant a search gave for `tool`, after checking that the search loaded it, with its
/// schema, one grant per loaded tool, and the grant in the text.
fn granted(facts: &Value, key: &str, tool: &str) -> String {
    let search = &facts[key];
    assert_eq!(search["isError"], false, "{key}: {search}");
    let loaded = names(search, "loaded");
    assert!(loaded.contains(&tool), "{key} must load {tool}: {search}");
    let schemas = names(search, "schemas");
    assert!(schemas.contains(&tool), "{key} must give {tool}'s schema: {search}");
    let grants = search["grants"].as_object().unwrap_or_else(|| panic!("{key} has no `grants`: {search}"));
    let mut named: Vec<&str> = grants.keys().map(String::as_str).collect();
    named.sort_unstable();
    let mut expected = loaded.clone();
    expected.sort_unstable();
    assert_eq!(named, expected, "{key}: one grant per loaded tool: {search}");
    let grant =
        grants[tool].as_str().unwrap_or_else(|| panic!("{key}: {tool}'s grant is a string: {search}"));
    assert!(text(search).contains(grant), "{key}'s text must show {tool}'s grant: {search}");
    grant.to_owned()
}

/// The checks of alice's run (an unrestricted token); the grant it got for the secret tool.
fn check_alice(facts: &Value) -> String {
    assert_eq!(facts["protocol_version"], "2026-07-28", "{facts}");
    assert_eq!(facts["tools"], serde_json::json!(["tool_search", "call_tool"]), "{facts}");
    assert!(facts["ttlMs"].is_number(), "tools/list carries ttlMs: {facts}");
    assert_eq!(facts["cacheScope"], "private", "{facts}");

    let old = facts["old_version"].as_str().unwrap();
    let grant = granted(facts, "search", GREET);
    ran(facts, "call_bridge", &format!("Hello, Ada! (greet version {old})"));
    ran(facts, "call_direct", &format!("Hello, Bob! (greet version {old})"));
    for key in ["unloaded_bridge", "unloaded_direct", "wrong_grant_bridge", "wrong_grant_direct"] {
        refused(facts, key, "tool_search");
    }

    let new = facts["new_version"].as_str().unwrap();
    for key in ["old_grant_bridge", "old_grant_direct"] {
        refused(facts, key, "changed");
    }
    let new_grant = granted(facts, "search_again", GREET);
    assert_ne!(new_grant, grant, "a changed definition has a new grant: {facts}");
    ran(facts, "new_grant_bridge", &format!("Hello, Dee! (greet version {new})"));
    ran(facts, "new_grant_direct", &format!("Hello, Eve! (greet version {new})"));

    // The secret tool is there for an unrestricted token: the reader's checks are not vacuous.
    granted(facts, "secret_search", SECRET)
}

/// Whether a search result shows the secret tool: among what it loaded, matched or found, in
/// its schemas or grants, or in its text beyond the echo of the query and of the terms that
/// matched nothing.
fn shows_secret(search: &Value, query: &str) -> bool {
    let structured = &search["structured"];
    let listed = ["loaded", "matches", "also_found", "already_loaded", "schemas", "grants"]
        .iter()
        .any(|k| structured[k].to_string().contains(SECRET));
    let rest: String = text(search)
        .replace(query, "")
        .lines()
        .filter(|l| !l.starts_with("Terms that matched no tool"))
        .collect::<Vec<_>>()
        .join("\n");
    listed || rest.contains("secret_op") || rest.contains("Run the secret operation")
}

/// The checks of the reader's run (a token whose profile denies the secret tool).
fn check_reader(facts: &Value) {
    assert_eq!(facts["protocol_version"], "2026-07-28", "{facts}");
    assert_eq!(facts["tools"], serde_json::json!(["tool_search", "call_tool"]), "{facts}");
    let instructions = facts["instructions"].as_str().unwrap_or_default();
    assert!(!instructions.contains("secret_op"), "the discover instructions show the denied tool: {facts}");
    let searches = facts["searches"].as_object().expect("the reader's searches");
    for (query, search) in searches {
        assert!(!shows_secret(search, query), "tool_search {query:?} shows the denied tool: {search}");
    }
    // What the profile allows is still found and granted.
    granted(&facts["searches"], "greet someone by name", GREET);
    for key in ["unloaded_bridge", "unloaded_direct", "stolen_grant_bridge", "stolen_grant_direct"] {
        refused(facts, key, "");
    }
}

#[test]
fn pinned_clients_search_and_call_through_two_stateless_replicas_in_turn() {
    let cluster = Cluster::start("stateless", [GRANT_KEY, GRANT_KEY]);

    let ts = cluster.run("ts", ALICE, &[]);
    let ts_secret = check_alice(&ts);
    let py = cluster.run("py", ALICE, &[]);
    let py_secret = check_alice(&py);
    assert_eq!(py["old_version"], ts["new_version"], "both runs changed the same file: {ts}\n{py}");

    for (client, stolen) in [("ts", &ts_secret), ("py", &py_secret)] {
        // `=`: a grant may begin with `-`.
        let stolen = format!("--stolen-grant={stolen}");
        let reader = cluster.run(client, READER, &["--reader", stolen.as_str()]);
        check_reader(&reader);
    }

    // Every request went to the other replica than the one before.
    let backends = cluster.proxy.backends();
    assert!(backends.len() >= 40, "the clients went through the proxy: {backends:?}");
    assert!(backends.windows(2).all(|w| w[0] != w[1]), "the proxy alternated: {backends:?}");
    for replica in &cluster.replicas {
        assert!(backends.contains(&replica.addr), "{} got requests: {backends:?}", replica.addr);
    }

    // Only the calls that ran reached an upstream: no secret_op, no call with an old grant.
    let mut calls = cluster.calls();
    calls.sort();
    let expected: Vec<(String, String)> = ["Ada", "Ada", "Bob", "Bob", "Dee", "Dee", "Eve", "Eve"]
        .iter()
        .map(|name| ("greet".to_owned(), (*name).to_owned()))
        .collect();
    assert_eq!(calls, expected, "the upstreams received exactly the calls that ran");
}

#[test]
fn a_replica_with_another_grant_key_refuses_the_grants_of_the_first() {
    let cluster = Cluster::start("stateless-keys", [GRANT_KEY, OTHER_KEY]);
    let py = cluster.run("py", ALICE, &[]);
    granted(&py, "search", GREET);
    // The two calls with the search's grant are consecutive requests, so the proxy sent one to
    // the replica that gave the grant and the other to the replica with another key.
    let bridge = py["call_bridge"]["isError"] == true;
    let direct = py["call_direct"]["isError"] == true;
    assert!(bridge != direct, "exactly one of the two calls was refused: {py}");
    let arrived: Vec<(String, String)> =
        cluster.calls().into_iter().filter(|(_, n)| n == "Ada" || n == "Bob").collect();
    assert_eq!(arrived.len(), 1, "the refused call never reached an upstream: {arrived:?}\n{py}");
}

/// One raw request at 2026-07-28 (or `revision`) to `/mcp` as `token`: the status and body.
fn raw(
    server: &Server,
    token: &str,
    revision: &str,
    method: &str,
    name: Option<&str>,
    params: Value,
) -> (u16, String) {
    let mut params = params;
    params["_meta"] = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": revision,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string();
    let bearer = format!("Bearer {token}");
    let mut headers = vec![
        ("Authorization", bearer.as_str()),
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", revision),
        ("Mcp-Method", method),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    let (status, _, body) = support::request(&server.addr, "POST", "/mcp", &headers, &body);
    (status, body)
}

#[test]
fn the_current_revision_over_http_checks_its_headers_and_names_what_each_transport_serves() {
    let cluster = Cluster::start("stateless-raw", [GRANT_KEY, GRANT_KEY]);
    let replica = &cluster.replicas[0];
    // A revision toolgate does not know: the refusal says what stdio and HTTP serve.
    let (status, body) = raw(replica, ALICE, "2027-01-01", "server/discover", None, serde_json::json!({}));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("-32022") && body.contains("2026-07-28") && body.contains("stdio"), "{body}");
    // Mcp-Name must say what the body says: a proxy routing on the header cannot be fooled.
    let search = serde_json::json!({"name": "tool_search", "arguments": {"query": "greet"}});
    let (status, body) = raw(replica, ALICE, "2026-07-28", "tools/call", Some(GREET), search.clone());
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("-32020") && body.contains("Mcp-Name"), "a HeaderMismatch: {body}");
    let (status, body) = raw(replica, ALICE, "2026-07-28", "tools/call", Some("tool_search"), search);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"grants\""), "{body}");
    // The tool list is the same, byte for byte, on both replicas and for every request.
    let list = |server: &Server| {
        let body = raw(server, ALICE, "2026-07-28", "tools/list", None, serde_json::json!({})).1;
        let start = body.find("{\"jsonrpc\"").unwrap_or_else(|| panic!("no message: {body}"));
        body[start..].lines().next().unwrap_or_default().to_owned()
    };
    let first = list(&cluster.replicas[0]);
    assert!(first.contains("\"ttlMs\"") && first.contains("\"cacheScope\":\"private\""), "{first}");
    assert_eq!(first, list(&cluster.replicas[1]));
    assert_eq!(first, list(&cluster.replicas[0]));
    // A discover with no session, at either revision, sees the token's own subject only.
    for revision in ["2026-07-28", "2025-11-25"] {
        let (status, body) = raw(replica, READER, revision, "server/discover", None, serde_json::json!({}));
        assert_eq!(status, 200, "{revision}: {body}");
        assert!(body.contains("greet") && !body.contains("secret_op"), "{revision}: {body}");
    }
    // List changes come on a subscription, over HTTP too.
    let listen = serde_json::json!({"notifications": {"toolsListChanged": true}});
    let mut params = listen;
    params["_meta"] = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    let body =
        serde_json::json!({"jsonrpc": "2.0", "id": 8, "method": "subscriptions/listen", "params": params})
            .to_string();
    let bearer = format!("Bearer {ALICE}");
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "subscriptions/listen"),
    ];
    let (status, head, stream) =
        request_whole(&replica.addr, "POST", "/mcp", &headers, &body, Duration::from_secs(2));
    assert_eq!(status, 200, "{head}{stream}");
    assert!(head.to_ascii_lowercase().contains("text/event-stream"), "{head}");
    assert!(!stream.contains("\"error\""), "the subscription was refused: {stream}");
}
