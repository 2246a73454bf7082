//! What a stranger, a hostile upstream or a misplaced configuration can make the real
//! `toolgate serve` do, each beside its control:
//!
//! - a link to `/dev/zero` or a FIFO planted at the index cache's file name is not read (the
//!   gateway neither grows nor blocks) and a search still answers;
//! - a server that runs this gateway on its own configuration is refused however it is
//!   reached (a link behind `env -i`, a copy inside `sh -c`, a wrapper script that clears the
//!   environment): no gateways without end, and the reason on the status page;
//! - `max_sessions` holds exactly under a burst of `initialize` requests released together
//!   and under restores of hibernated sessions;
//! - CR, LF, ANSI escapes and a lookalike log line, sent through every field a client, an
//!   upstream or a token controls, never begin a line of the log, and the JSON audit log keeps
//!   them whole inside their fields.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Upstream, request, request_whole, scratch, serve, tool};

const MCP: [(&str, &str); 2] =
    [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];

fn initialize(client: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": client, "version": "1"}}})
    .to_string()
}

fn session_of(head: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let lower = l.to_ascii_lowercase();
        lower.strip_prefix("mcp-session-id:").map(|_| l["mcp-session-id:".len()..].trim().to_owned())
    })
}

/// The JSON-RPC message of a reply body (plain JSON, or the first SSE `data:` line).
fn message(body: &str) -> Value {
    let text =
        body.lines().filter_map(|l| l.strip_prefix("data: ")).find(|d| d.starts_with('{')).unwrap_or(body);
    serde_json::from_str(text.trim()).unwrap_or(Value::Null)
}

/// Opens a session; its id (or the refusal's status).
fn open(addr: &str, client: &str) -> Result<String, u16> {
    let (status, head, _) = request(addr, "POST", "/mcp", &MCP, &initialize(client));
    match (status, session_of(&head)) {
        (200, Some(id)) => {
            let mut headers = MCP.to_vec();
            headers.push(("Mcp-Session-Id", &id));
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
            let _ = request(addr, "POST", "/mcp", &headers, &note);
            Ok(id)
        }
        (status, _) => Err(status),
    }
}

/// One request of session `id`: its status and message.
fn ask(addr: &str, id: &str, method: &str, params: Value) -> (u16, Value) {
    let mut headers = MCP.to_vec();
    headers.push(("Mcp-Session-Id", id));
    headers.push(("Mcp-Protocol-Version", "2025-11-25"));
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}).to_string();
    let (status, _, reply) = request(addr, "POST", "/mcp", &headers, &body);
    (status, message(&reply))
}

fn status_json(addr: &str) -> Value {
    let (_, _, body) = request_whole(addr, "GET", "/status.json", &[], "", Duration::from_secs(5));
    serde_json::from_str(&body).unwrap_or(Value::Null)
}

/// Waits until no server of the gateway at `addr` is starting (asked with `headers`).
fn settled(addr: &str, headers: &[(&str, &str)]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, _, body) = request_whole(addr, "GET", "/status.json", headers, "", Duration::from_secs(5));
        let status: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let servers = status["servers"].as_array().cloned().unwrap_or_default();
        if !servers.is_empty() && servers.iter().all(|s| s["state"] != "starting") {
            return;
        }
        assert!(Instant::now() < deadline, "servers still starting: {status}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The resident memory of process `pid`, in KiB.
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The real catalog of LiveMCPBench, as a static catalog server of a configuration in `dir`.
fn catalog(dir: &Path) -> String {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/livemcpbench/catalog.jsonl");
    std::fs::copy(real, dir.join("demo.jsonl")).unwrap();
    "[servers.demo]\ncatalog = \"demo.jsonl\"\n".to_owned()
}

/// The matches of a `tool_search` in a new session.
fn search(addr: &str, query: &str) -> Vec<String> {
    let id = open(addr, "searcher").expect("a session");
    let (_, found) =
        ask(addr, &id, "tools/call", json!({"name": "tool_search", "arguments": {"query": query}}));
    let matches = found["result"]["structuredContent"]["matches"].as_array().cloned();
    let names = matches.unwrap_or_default().iter().map(|t| t.to_string()).collect::<Vec<_>>();
    assert!(!names.is_empty(), "{found}");
    names
}

#[test]
fn a_link_or_a_fifo_at_the_index_caches_name_is_not_read() {
    let dir = scratch("planted-cache");
    let config = dir.join("toolgate.toml");
    std::fs::write(&config, format!("[search]\nindex_cache = \"cache\"\n{}", catalog(&dir))).unwrap();
    let config = config.to_str().unwrap().to_owned();
    let args = ["--http", "127.0.0.1:0", "--config", config.as_str()];
    // The control: a first start writes the cache, and a search finds the screenshot tools.
    let first = serve(&args, &[]);
    settled(&first.addr, &[]);
    let control = search(&first.addr, "take a screenshot of a web page");
    assert!(control.iter().any(|t| t.contains("screenshot")), "{control:?}");
    drop(first);
    let cache: PathBuf = std::fs::read_dir(dir.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tgix"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .expect("the index was cached");

    // A link to /dev/zero at its name: not followed; the gateway stays small and answers.
    std::fs::remove_file(&cache).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &cache).unwrap();
    let planted = serve(&args, &[]);
    let started = Instant::now();
    settled(&planted.addr, &[]);
    assert_eq!(search(&planted.addr, "take a screenshot of a web page"), control);
    let rss = rss_kb(planted.child.id());
    assert!(rss < 400 * 1024, "the gateway grew to {rss} KiB");
    assert!(started.elapsed() < Duration::from_secs(60));
    drop(planted);
    let meta = std::fs::symlink_metadata(&cache).unwrap();
    assert!(meta.is_file(), "the link was replaced by the rebuilt index, not written through");

    // A FIFO at its name: not waited on.
    std::fs::remove_file(&cache).unwrap();
    assert!(Command::new("mkfifo").arg(&cache).status().unwrap().success());
    let fifo = serve(&args, &[]);
    settled(&fifo.addr, &[]);
    assert_eq!(search(&fifo.addr, "take a screenshot of a web page"), control);
}

/// The processes whose command line names `needle`.
fn processes_naming(needle: &str) -> usize {
    support::processes_where("cmdline", |cmdline| cmdline.contains(needle)).len()
}

#[test]
fn a_server_running_this_gateway_on_its_own_configuration_is_refused_however_it_is_reached() {
    let dir = scratch("itself");
    let me = PathBuf::from(env!("CARGO_BIN_EXE_toolgate"));
    let link = dir.join("a-link-to-it");
    std::os::unix::fs::symlink(&me, &link).unwrap();
    std::fs::copy(&me, dir.join("copied")).unwrap();
    let config = dir.join("loop.toml");
    let path = config.display().to_string();
    let write = |command: &str, args: &[&str]| {
        let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
        let text = format!(
            "[gateway]\nready_timeout_secs = 2\n{}[servers.loop]\ncommand = {command:?}\nargs = [{}]\ncwd = {:?}\n",
            catalog(&dir),
            args.join(", "),
            dir.display().to_string()
        );
        std::fs::write(&config, text).unwrap();
    };
    // A gateway that did start would serve until stopped: 20 s is its verdict.
    let start = || {
        Command::new("timeout")
            .arg("20")
            .arg(&me)
            .args(["serve", "--http", "127.0.0.1:0", "--config", &path])
            .output()
            .expect("toolgate runs")
    };
    // Seen in the configuration: a link behind `env -i`, a copy under a relative path inside
    // `sh -c`. The gateway does not start, and says which server.
    let link_text = link.display().to_string();
    let refused = [
        ("env".to_owned(), vec!["-i", link_text.as_str(), "serve", "--stdio", "--config", path.as_str()]),
        ("sh".to_owned(), vec!["-c", "exec env -i ./copied serve --stdio --config=loop.toml"]),
    ];
    for (command, args) in &refused {
        write(command, args);
        let out = start();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command} {args:?} started: {stderr}");
        assert!(stderr.contains("servers.loop") && stderr.contains("without end"), "{stderr}");
    }

    // Hidden in a script that clears the environment: the nested gateway sees the lock its
    // parent holds on the file and stops at once; never more than one nested at a time.
    let script = dir.join("wrap.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nexec env -i {}/copied serve --stdio --config {path}\n", dir.display()),
    )
    .unwrap();
    write("sh", &[script.to_str().unwrap()]);
    let gateway = serve(&["--http", "127.0.0.1:0", "--config", &path], &[]);
    let mut most = 0;
    for _ in 0..30 {
        most = most.max(processes_naming(&path));
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(most <= 3, "{most} processes ran on {path}:\n{}", gateway.log());
    let status = status_json(&gateway.addr);
    let servers = status["servers"].as_array().unwrap();
    let looped = servers.iter().find(|s| s["name"] == "loop").unwrap();
    let why = looped.to_string();
    assert!(why.contains("is already served by toolgate process"), "{status:#}");
    let demo = servers.iter().find(|s| s["name"] == "demo").unwrap();
    assert_eq!(demo["state"], "static", "the rest of the gateway serves: {status:#}");
    drop(gateway);

    // The control: a gateway in front of a gateway on another file starts and serves.
    let inner = dir.join("inner.toml");
    std::fs::write(&inner, catalog(&dir)).unwrap();
    write(
        "sh",
        &["-c", &format!("exec env -i {}/copied serve --stdio --config {}", dir.display(), inner.display())],
    );
    let nested = serve(&["--http", "127.0.0.1:0", "--config", &path], &[]);
    settled(&nested.addr, &[]);
    let status = status_json(&nested.addr);
    let inner = status["servers"].as_array().unwrap().iter().find(|s| s["name"] == "loop").cloned();
    assert_eq!(inner.map(|s| s["state"].clone()), Some(json!("ready")), "{status:#}");
}

#[test]
fn max_sessions_holds_under_a_burst_and_under_restores() {
    let dir = scratch("max-sessions");
    let config = dir.join("toolgate.toml");
    std::fs::write(
        &config,
        format!("[gateway]\nmax_sessions = 5\nsession_hibernate_secs = 2\n{}", catalog(&dir)),
    )
    .unwrap();
    let gateway = serve(&["--http", "127.0.0.1:0", "--config", config.to_str().unwrap()], &[]);
    settled(&gateway.addr, &[]);
    let addr = gateway.addr.clone();

    // Thirty initialize requests released together: five sessions, the rest 503.
    let burst = |n: usize| -> Vec<Result<String, u16>> {
        let gate = Arc::new(Barrier::new(n));
        let threads: Vec<_> = (0..n)
            .map(|i| {
                let (gate, addr) = (gate.clone(), addr.clone());
                std::thread::spawn(move || {
                    gate.wait();
                    open(&addr, &format!("burst-{i}"))
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    };
    let first = burst(30);
    let old: Vec<String> = first.iter().filter_map(|r| r.clone().ok()).collect();
    let refused = first.iter().filter(|r| *r == &Err(503)).count();
    assert_eq!((old.len(), refused), (5, 25), "{first:?}");
    for id in &old {
        assert_eq!(ask(&addr, id, "tools/list", json!({})).0, 200);
    }

    // They hibernate (their places go back); five new sessions take the places, and at once,
    // within the reaper's next pass, the hibernated ones cannot be restored past the cap.
    let deadline = Instant::now() + Duration::from_secs(30);
    while status_json(&addr)["sessions"].as_array().is_some_and(|s| !s.is_empty()) {
        assert!(Instant::now() < deadline, "the sessions never hibernated");
        std::thread::sleep(Duration::from_millis(20));
    }
    let new: Vec<String> = (0..5).map(|i| open(&addr, &format!("new-{i}")).expect("a free place")).collect();
    let gate = Arc::new(Barrier::new(old.len() + 5));
    let mut threads = Vec::new();
    for id in old.clone() {
        let (gate, addr) = (gate.clone(), addr.clone());
        threads.push(std::thread::spawn(move || {
            gate.wait();
            ask(&addr, &id, "tools/list", json!({})).0
        }));
    }
    for i in 0..5 {
        let (gate, addr) = (gate.clone(), addr.clone());
        threads.push(std::thread::spawn(move || {
            gate.wait();
            open(&addr, &format!("late-{i}")).err().unwrap_or(200)
        }));
    }
    let statuses: Vec<u16> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(statuses.iter().all(|s| *s == 503), "restores and opens past the cap: {statuses:?}");

    // The control: once the new sessions end, the hibernated ones come back.
    for id in &new {
        let mut headers = MCP.to_vec();
        headers.push(("Mcp-Session-Id", id));
        assert_eq!(request(&addr, "DELETE", "/mcp", &headers, "").0, 204);
    }
    for id in &old {
        assert_eq!(ask(&addr, id, "tools/list", json!({})).0, 200, "a hibernated session is restored");
    }
}

/// What an attacker writes into a value: a line end, then a line that looks like the audit
/// trail's, and terminal escapes that would erase or recolour what comes before.
const FORGED: &str = "x\r\n2026-01-01T00:00:00.000000Z  INFO toolgate::audit: FORGED approved tool=everything\r\n\u{1b}[2K\u{1b}[1A\u{7}\u{85}\u{2028}";

#[test]
fn no_value_a_client_an_upstream_or_a_token_controls_can_forge_a_log_line() {
    let dir = scratch("forged-logs");
    let hostile = Upstream::new(
        &dir,
        "hostile",
        &[tool("fine", "A fine tool."), tool(&format!("bad{FORGED}"), FORGED)],
    );
    let config = dir.join("toolgate.toml");
    std::fs::write(
        &config,
        format!(
            "[gateway]\naudit_log = \"audit.jsonl\"\n[oauth]\nresource = \"http://127.0.0.1:9/mcp\"\nissuers = [\"http://127.0.0.1:9\"]\n\
             [tokens.ops]\nenv = \"TG_OPS\"\n{}",
            hostile.table("hostile", "")
        ),
    )
    .unwrap();
    let ops = "ops-static-token-0123456789";
    let gateway = serve(&["--http", "127.0.0.1:0", "--config", config.to_str().unwrap()], &[("TG_OPS", ops)]);
    let bearer = format!("Bearer {ops}");
    let auth = [("Authorization", bearer.as_str())];
    settled(&gateway.addr, &auth);
    let addr = &gateway.addr;

    // A token (unsigned) whose issuer is the forgery.
    let b64 = |v: &Value| {
        use std::fmt::Write;
        let bytes = v.to_string().into_bytes();
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
            for i in 0..=chunk.len() {
                let _ = out.write_char(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        out
    };
    let token = format!(
        "{}.{}.c2ln",
        b64(&json!({"alg": "RS256", "kid": FORGED})),
        b64(&json!({"iss": FORGED, "sub": FORGED, "aud": "http://127.0.0.1:9/mcp"}))
    );
    let forged_bearer = format!("Bearer {token}");
    let mut headers = MCP.to_vec();
    headers.push(("Authorization", &forged_bearer));
    let (status, _, _) = request(addr, "POST", "/mcp", &headers, &initialize("x"));
    assert_eq!(status, 401);

    // A client: its name, a search query and a call of a tool it was never shown.
    let mut headers = MCP.to_vec();
    headers.push(("Authorization", &bearer));
    let (status, head, _) = request(addr, "POST", "/mcp", &headers, &initialize(FORGED));
    assert_eq!(status, 200);
    let id = session_of(&head).unwrap();
    headers.push(("Mcp-Session-Id", &id));
    headers.push(("Mcp-Protocol-Version", "2025-11-25"));
    for (method, params) in [
        ("tools/call", json!({"name": "tool_search", "arguments": {"query": FORGED}})),
        ("tools/call", json!({"name": FORGED, "arguments": {}})),
        ("tools/call", json!({"name": "hostile__fine", "arguments": {"note": FORGED}})),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params}).to_string();
        assert_eq!(request(addr, "POST", "/mcp", &headers, &body).0, 200);
    }
    std::thread::sleep(Duration::from_millis(300));
    let log = gateway.log();

    // The forgery reached the log (so this test can fail), and never as a line of its own.
    assert!(log.contains("FORGED"), "{log}");
    for line in log.lines() {
        assert!(
            !line.contains('\r') && !line.contains('\u{1b}') && !line.contains('\u{7}'),
            "raw control: {line:?}"
        );
        assert!(!line.contains('\u{85}') && !line.contains('\u{2028}'), "raw separator: {line:?}");
        let after_time = line.split_once(' ').map_or(line, |(_, rest)| rest).trim_start();
        assert!(!after_time.starts_with("INFO toolgate::audit: FORGED"), "a forged line: {line:?}");
        assert!(!line.starts_with("2026-01-01T00:00:00"), "a forged line: {line:?}");
    }

    // The JSON audit log: one object a line, each value whole inside its field.
    let audit = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    let objects: Vec<Value> =
        audit.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}"))).collect();
    assert!(objects.iter().all(|o| o["time"].is_string() && o["level"].is_string()), "{audit}");
    let refused_call = objects
        .iter()
        .find(|o| o["tool"] == FORGED)
        .unwrap_or_else(|| panic!("the refused call of the forged name is in the audit log: {audit}"));
    assert_eq!(refused_call["tool"].as_str(), Some(FORGED), "kept whole: {refused_call}");
    assert!(
        objects.iter().any(|o| o["message"]
            .as_str()
            .is_some_and(|m| m.contains("FORGED") && m.contains("not accepted"))),
        "the refused token is in the audit log: {audit}"
    );
    assert!(
        objects.iter().any(|o| o["action"] == "allowed" && o["tool"] == "hostile__fine")
            || objects.iter().any(|o| o["tool"] == "hostile__fine"),
        "the allowed or refused call of a real tool is a decision too: {audit}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("audit.jsonl")).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the audit log is its owner's: {mode:o}");
    }
}
