//! A gateway listens before it has read a large static catalog: its server shows as starting
//! meanwhile, and a client that asks at once is answered once the catalog is in (within
//! `ready_timeout_secs`), with its tools. With `[search] index_cache`, the next start reads the
//! index saved by the first and answers the same; left unset, a large catalog's index is kept
//! in the user's cache directory, and `false` keeps none.

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::{request_whole, scratch, serve};

/// How long a request may wait for the catalog (a debug build reads it slowly).
const LONG: Duration = Duration::from_secs(120);

const MCP: [(&str, &str); 2] =
    [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];

/// The JSON-RPC message in a response body (one SSE `data:` line).
fn message(body: &str) -> Value {
    let text =
        body.lines().filter_map(|l| l.strip_prefix("data: ")).find(|d| d.starts_with('{')).unwrap_or(body);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[test]
fn the_gateway_listens_before_a_large_catalog_is_read_and_answers_with_its_tools() {
    let dir = scratch("startup-large");
    let tools = big_catalog(&dir);
    let config = dir.join("toolgate.toml");
    std::fs::write(
        &config,
        "[gateway]\nready_timeout_secs = 120\n[search]\nindex_cache = \"cache\"\n[servers.big]\ncatalog = \"big.jsonl\"\n",
    )
    .unwrap();
    let first = start_and_search(&config, tools, &[]);
    // The index was saved (beside an empty catalog's, from before the catalog was in).
    let saved = cache_files(&dir.join("cache"));
    assert!(saved.iter().any(|(_, len)| *len > 1_000_000), "{saved:?}");
    // The next start reads it: the same answer, and no file written.
    let second = start_and_search(&config, tools, &[]);
    assert_eq!(second, first);
    assert_eq!(cache_files(&dir.join("cache")), saved);
}

#[test]
fn left_unset_the_index_cache_of_a_large_catalog_is_the_users_cache_directory_and_false_is_none() {
    let dir = scratch("startup-auto");
    let tools = big_catalog(&dir);
    assert!(tools >= toolgate::search::AUTO_CACHE_MIN_TOOLS);
    let (xdg, data) = (dir.join("xdg-cache"), dir.join("data"));
    let env = [("XDG_CACHE_HOME", xdg.to_str().unwrap()), ("XDG_DATA_HOME", data.to_str().unwrap())];
    let config = dir.join("toolgate.toml");
    let plain = "[gateway]\nready_timeout_secs = 120\n[servers.big]\ncatalog = \"big.jsonl\"\n";
    std::fs::write(&config, plain).unwrap();
    let first = start_and_search(&config, tools, &env);
    // Only the large catalog's index was kept (not the empty one's, from before it was read).
    let cache = xdg.join("toolgate/index");
    let saved = cache_files(&cache);
    assert!(!saved.is_empty() && saved.iter().all(|(_, len)| *len > 1_000_000), "{saved:?}");
    let second = start_and_search(&config, tools, &env);
    assert_eq!(second, first);
    assert_eq!(cache_files(&cache), saved);
    // `index_cache = false`: built every time, nothing written.
    std::fs::remove_dir_all(&xdg).unwrap();
    std::fs::write(&config, plain.replace("[servers.big]", "[search]\nindex_cache = false\n[servers.big]"))
        .unwrap();
    assert_eq!(start_and_search(&config, tools, &env), first);
    assert!(!xdg.exists());
}

/// Writes `big.jsonl` into `dir`, about 20,000 tools: LiveMCPBench's real catalog under 38
/// sets of server names; returns how many tools.
fn big_catalog(dir: &Path) -> usize {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/livemcpbench/catalog.jsonl");
    let lines: Vec<Value> = std::fs::read_to_string(real)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut out = String::new();
    for copy in 0..38 {
        for tool in &lines {
            let mut tool = tool.clone();
            let server = format!("{}{copy}", tool["server"].as_str().unwrap());
            tool["server"] = json!(server);
            out.push_str(&tool.to_string());
            out.push('\n');
        }
    }
    std::fs::write(dir.join("big.jsonl"), out).unwrap();
    38 * lines.len()
}

/// The cache files of `dir`: each one's name, length and time of change.
fn cache_files(dir: &Path) -> Vec<(String, u64)> {
    let mut files: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            let meta = e.metadata().unwrap();
            let at = meta.modified().unwrap().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
            (format!("{} {at}", e.file_name().to_string_lossy()), meta.len())
        })
        .collect();
    files.sort();
    files
}

/// Starts a gateway on `config` with the environment `env`, checks that it listens before its
/// catalog of `tools` tools is read and answers once it is, and returns what a search found.
fn start_and_search(config: &Path, tools: usize, env: &[(&str, &str)]) -> Vec<Value> {
    let server = serve(&["--http", "127.0.0.1:0", "--config", config.to_str().unwrap()], env);
    let a = &server.addr;
    // At once, before the catalog is in: the status says so.
    let (_, _, status) = request_whole(a, "GET", "/status.json", &[], "", LONG);
    let status: Value = serde_json::from_str(&status).unwrap();
    let big = status["servers"].as_array().unwrap().iter().find(|s| s["name"] == "big").cloned();
    assert_eq!(big.as_ref().map(|s| s["state"].clone()), Some(json!("starting")), "{status}");
    // A client asking at once waits for it and gets its tools.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "eager", "version": "1"}}});
    let (code, head, body) = request_whole(a, "POST", "/mcp", &MCP, &init.to_string(), LONG);
    assert_eq!(code, 200, "{body}");
    let instructions = message(&body)["result"]["instructions"].as_str().unwrap().to_owned();
    assert!(instructions.contains(&format!("{tools} tools")), "{instructions}");
    let session = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase().strip_prefix("mcp-session-id: ").map(|_| l[16..].trim().to_owned())
        })
        .expect("a session id");
    let mut headers = MCP.to_vec();
    headers.push(("Mcp-Session-Id", &session));
    headers.push(("Mcp-Protocol-Version", "2025-06-18"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let _ = request_whole(a, "POST", "/mcp", &headers, &initialized.to_string(), LONG);
    let search = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "tool_search", "arguments": {"query": "send a slack message"}}});
    let (_, _, body) = request_whole(a, "POST", "/mcp", &headers, &search.to_string(), LONG);
    let found = message(&body);
    let matches = found["result"]["structuredContent"]["matches"].as_array().cloned().unwrap_or_default();
    assert!(!matches.is_empty(), "{found}");
    // The catalog was read after the gateway said where it listens (and indexed, on a thread
    // of its own, before the search answered).
    let log = server.log();
    let listening = log.find("toolgate: listening on").expect("serve read it");
    assert!(log[listening..].contains("static catalogs read"), "{log}");
    matches
}
