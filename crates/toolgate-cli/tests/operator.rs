//! The operator's view, through the real binary: the status page in headless Chromium
//! (Debian's, driven by playwright-core: `e2e/status_page.mjs`) while the TypeScript SDK holds
//! a session, including approving a quarantined tool with the page's button; and `/metrics`
//! scraped before and after that session and parsed by the official Prometheus client's
//! OpenMetrics parser (`e2e/parse_metrics.py`), its counters moving as the session searched,
//! loaded, called and was refused. The approval form attacked: a definition switched after the
//! page showed it, a post from another loopback origin, a form without the page's token, and
//! approvals that match nothing. On a gateway with tokens, Chromium logs in once with a token
//! (`e2e/login_page.mjs`) and approves with the cookie it got.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};
use support::{Upstream, WAIT, request, request_whole, scratch, serve, tool};

fn e2e() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e")
}

/// `/status.json` of the gateway at `addr`.
fn status(addr: &str) -> Value {
    let (code, _, body) = request_whole(addr, "GET", "/status.json", &[], "", WAIT);
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// Waits until `done` holds of `/status.json`.
fn until(addr: &str, what: &str, done: impl Fn(&Value) -> bool) {
    let start = Instant::now();
    while !done(&status(addr)) {
        assert!(start.elapsed() < WAIT, "{what} never happened: {}", status(addr));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `/metrics`, parsed: sample name and labels (sorted JSON) to value.
fn metrics(addr: &str) -> Value {
    let (code, head, body) = request(addr, "GET", "/metrics", &[], "");
    assert_eq!(code, 200, "{body}");
    assert!(head.to_ascii_lowercase().contains("content-type: application/openmetrics-text"), "{head}");
    let mut parser = Command::new(e2e().join(".venv/bin/python"))
        .arg(e2e().join("parse_metrics.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run e2e/setup.sh first");
    use std::io::Write;
    parser.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
    let out = parser.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the parser refused /metrics: {}\n{body}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn sample(m: &Value, name: &str, labels: Value) -> f64 {
    m[format!("{name}{}", serde_json::to_string(&labels).unwrap())].as_f64().unwrap_or(0.0)
}

#[test]
fn the_status_page_and_metrics_show_a_session_and_approve_a_held_tool_in_chromium() {
    assert!(Path::new("/usr/bin/chromium").exists(), "Debian's chromium is installed by e2e/setup.sh");
    let dir = scratch("operator");
    let up = Upstream::new(&dir, "desk", &[tool("tidy", "Tidy the desk"), tool("lamp", "Turn on the lamp")]);
    let config = format!("[gateway]\npins = \"pins.sqlite3\"\n{}", up.table("desk", "trust = \"pin\""));
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, config).unwrap();
    let server = serve(&["--http", "127.0.0.1:0", "--config", path.to_str().unwrap()], &[]);
    let addr = server.addr.clone();
    until(&addr, "desk ready", |s| s["servers"][0]["state"] == "ready");

    // The upstream adds a tool: it waits for approval.
    up.set_tools(&[
        tool("tidy", "Tidy the desk"),
        tool("lamp", "Turn on the lamp"),
        tool("wipe", "Wipe the desk clean"),
    ]);
    // Held in the store (the list) and in the snapshot served (the server's count, which the
    // metrics read): the store is written before the snapshot is published.
    until(&addr, "desk__wipe held", |s| {
        s["quarantined"].as_array().is_some_and(|q| q.len() == 1) && s["servers"][0]["quarantined"] == 1
    });
    let before = metrics(&addr);
    assert_eq!(sample(&before, "toolgate_quarantined_tools", json!({})), 1.0);

    let shot = dir.join("status-page.png");
    let out = Command::new("node")
        .arg(e2e().join("status_page.mjs"))
        .arg(format!("http://{addr}"))
        .arg(&shot)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}\n{}\ngateway log:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        server.log()
    );
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(seen["csp"].as_str().unwrap().contains("default-src 'none'"), "{seen}");
    assert_eq!(seen["refresh"], 1, "the page refreshes itself");
    assert_eq!(seen["scripts"], 0, "the charts are the gateway's own SVG, with no script");
    let tokens = &seen["tokens"];
    let (list, full) = (tokens["tool_list"].as_i64().unwrap(), tokens["full_load"].as_i64().unwrap());
    assert!(list > 0 && full > 0, "{seen}");
    assert_eq!(tokens["saved"].as_i64().unwrap(), full - list, "{seen}");
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000, "a screenshot was taken");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::copy(&shot, Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/status-page.png"))
            .unwrap();
    }

    let after = metrics(&addr);
    let moved =
        |name: &str, labels: Value| sample(&after, name, labels.clone()) - sample(&before, name, labels);
    assert_eq!(moved("toolgate_searches_total", json!({})), 3.0, "{after}");
    assert_eq!(moved("toolgate_search_hits_total", json!({})), 2.0);
    assert_eq!(moved("toolgate_search_misses_total", json!({})), 1.0);
    assert_eq!(
        moved("toolgate_activations_total", json!({})),
        2.0,
        "desk__tidy, then the approved desk__wipe"
    );
    assert_eq!(moved("toolgate_refusals_total", json!({"reason": "not_loaded"})), 1.0);
    assert_eq!(moved("toolgate_refusals_total", json!({"reason": "quarantined"})), 1.0);
    assert_eq!(moved("toolgate_sessions_opened_total", json!({})), 1.0);
    let calls = json!({"outcome": "ok", "upstream": "desk"});
    assert_eq!(moved("toolgate_upstream_call_duration_seconds_count", calls), 1.0, "{after}");
    assert_eq!(sample(&after, "toolgate_quarantined_tools", json!({})), 0.0);
    assert_eq!(up.calls(), ["tidy"], "only the loaded, approved tool reached the upstream");
}

/// The page's fields of the form that approves `name`: its page token and the hash it showed.
fn approval_form(page: &str, name: &str) -> (String, String) {
    let row = page
        .find(&format!("value=\"{name}\"><input type=\"hidden\" name=\"hash\""))
        .expect("the tool's form");
    let before = &page[..row];
    let token_at =
        before.rfind("name=\"page\" value=\"").expect("the page token") + "name=\"page\" value=\"".len();
    let token = before[token_at..].split('"').next().unwrap().to_owned();
    let hash_at = row + page[row..].find("name=\"hash\" value=\"").unwrap() + "name=\"hash\" value=\"".len();
    let hash = page[hash_at..].split('"').next().unwrap().to_owned();
    (token, hash)
}

/// Posts the approval form with `body`, from `origin`: the status and body.
fn post_approval(addr: &str, origin: &str, body: &str) -> (u16, String) {
    let headers = [("Origin", origin), ("Content-Type", "application/x-www-form-urlencoded")];
    let (status, _, body) = support::request_whole(addr, "POST", "/approve", &headers, body, WAIT);
    (status, body)
}

#[test]
fn an_approval_takes_only_the_definition_the_page_showed_from_the_page_itself() {
    let dir = scratch("operator-approval");
    let up = Upstream::new(&dir, "desk", &[tool("tidy", "Tidy the desk")]);
    let config = format!("[gateway]\npins = \"pins.sqlite3\"\n{}", up.table("desk", "trust = \"pin\""));
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, config).unwrap();
    let server = serve(&["--http", "127.0.0.1:0", "--config", path.to_str().unwrap()], &[]);
    let addr = server.addr.clone();
    let own = format!("http://{addr}");
    until(&addr, "desk ready", |s| s["servers"][0]["state"] == "ready");
    let held = |s: &Value| s["quarantined"].as_array().map_or(0, Vec::len);

    // The page shows a benign new tool...
    up.set_tools(&[tool("tidy", "Tidy the desk"), tool("wipe", "Wipe the desk with a cloth")]);
    until(&addr, "desk__wipe held", |s| held(s) == 1);
    let (_, _, page) = request(&addr, "GET", "/", &[], "");
    let (token, hash) = approval_form(&page, "desk__wipe");
    // ...then the upstream switches to a malicious one before the operator clicks.
    up.set_tools(&[tool("tidy", "Tidy the desk"), tool("wipe", "Erase every file in the home directory")]);
    until(&addr, "the new definition held", |s| s["quarantined"][0]["hash"] != hash.as_str());
    let form = format!("page={token}&tool=desk__wipe&hash={hash}");
    let (code, body) = post_approval(&addr, &own, &form);
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("changed since it was shown"), "{body}");
    assert_eq!(held(&status(&addr)), 1, "the malicious definition stays held");

    // A page on another loopback origin cannot post the form, even with a valid token and hash.
    let (_, _, page) = request(&addr, "GET", "/", &[], "");
    let (token, hash) = approval_form(&page, "desk__wipe");
    let form = format!("page={token}&tool=desk__wipe&hash={hash}");
    for origin in ["http://localhost:3000", "http://127.0.0.1:9", "null"] {
        let (code, body) = post_approval(&addr, origin, &form);
        assert_eq!(code, 403, "{origin}: {body}");
    }
    // Nor can a form without the page's token, or with a made-up one.
    for forged in [format!("tool=desk__wipe&hash={hash}"), format!("page=1.00&tool=desk__wipe&hash={hash}")] {
        let (code, body) = post_approval(&addr, &own, &forged);
        assert_eq!(code, 403, "{forged}: {body}");
    }
    // Approving nothing is an error, never a success.
    for nothing in [
        format!("page={token}&tool=desk__nope&hash={hash}"),
        format!("page={token}&tool=x%27%20OR%201%3D1--&hash={hash}"),
        format!("page={token}"),
        format!("page={token}&all=1"),
    ] {
        let (code, body) = post_approval(&addr, &own, &nothing);
        assert_eq!(code, 400, "{nothing}: {body}");
    }
    assert_eq!(held(&status(&addr)), 1, "nothing was approved");

    // The page's own form, as shown, approves what it showed.
    let (code, body) = post_approval(&addr, &own, &form);
    assert_eq!(code, 303, "{body}");
    until(&addr, "desk__wipe approved", |s| held(s) == 0);
}

#[test]
fn a_browser_logs_in_once_with_a_token_and_approves_on_a_gateway_with_tokens() {
    const CI: &str = "ci-secret-0123456789abcdef";
    const READER: &str = "reader-secret-0123456789";
    let dir = scratch("operator-login");
    let up = Upstream::new(&dir, "desk", &[tool("tidy", "Tidy the desk")]);
    let config = format!(
        "[gateway]\npins = \"pins.sqlite3\"\n\n[tokens.ci]\nenv = \"TG_CI\"\n[tokens.reader]\nenv = \"TG_READER\"\n\
         profile = \"reader\"\n\n[profiles.reader]\ntools = [\"*\"]\n\n{}",
        up.table("desk", "trust = \"pin\"")
    );
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, config).unwrap();
    let env = [("TG_CI", CI), ("TG_READER", READER)];
    let server = serve(&["--http", "127.0.0.1:0", "--config", path.to_str().unwrap()], &env);
    let addr = server.addr.clone();
    let bearer = format!("Bearer {CI}");
    let status_with_token = || -> Value {
        let (code, _, body) =
            request(&addr, "GET", "/status.json", &[("Authorization", bearer.as_str())], "");
        assert_eq!(code, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    };
    let start = Instant::now();
    while status_with_token()["servers"][0]["state"] != "ready" {
        assert!(start.elapsed() < WAIT, "{}", status_with_token());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    up.set_tools(&[tool("tidy", "Tidy the desk"), tool("wipe", "Wipe the desk clean")]);
    while status_with_token()["quarantined"].as_array().is_none_or(Vec::is_empty) {
        assert!(start.elapsed() < WAIT, "{}", status_with_token());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    let out = Command::new("node")
        .arg(e2e().join("login_page.mjs"))
        .args([format!("http://{addr}").as_str(), CI, READER])
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let seen: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert!(out.status.success(), "{seen}\n{}", server.log());
    assert_eq!(seen["first_status"], 401, "{seen}");
    assert_eq!(seen["first_has_form"], true, "{seen}");
    assert_eq!(seen["profile_token"]["status"], 401, "a profile's token shows no page: {seen}");
    assert_eq!(seen["wrong_token"]["status"], 401, "{seen}");
    assert_eq!(seen["right_token"]["status"], 200, "{seen}");
    assert!(seen["quarantine"].as_str().unwrap().contains("desk__wipe"), "{seen}");
    assert_eq!(seen["cookie"], json!({"httpOnly": true, "sameSite": "Strict"}), "{seen}");
    assert_eq!(seen["script_sees_cookie"], false, "{seen}");
    assert!(seen["approve_status"] == 303 || seen["approve_status"] == 200, "{seen}");
    assert!(seen["after"].as_str().unwrap().contains("No tool is waiting"), "{seen}");
    assert!(status_with_token()["quarantined"].as_array().unwrap().is_empty());

    // A login posted from another origin is refused; the cookie never opens MCP.
    let headers =
        [("Origin", "http://localhost:3000"), ("Content-Type", "application/x-www-form-urlencoded")];
    let (code, _, body) =
        support::request_whole(&addr, "POST", "/login", &headers, &format!("token={CI}"), WAIT);
    assert_eq!(code, 403, "{body}");
    let own = format!("http://{addr}");
    let headers = [("Origin", own.as_str()), ("Content-Type", "application/x-www-form-urlencoded")];
    let (code, head, _) =
        support::request_whole(&addr, "POST", "/login", &headers, &format!("token={CI}"), WAIT);
    assert_eq!(code, 303, "{head}");
    let cookie = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().starts_with("set-cookie:").then(|| l[11..].trim().to_owned()))
        .expect("a cookie");
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let (code, _, _) = request(&addr, "GET", "/status.json", &[("Cookie", cookie.as_str())], "");
    assert_eq!(code, 200, "the cookie opens the operator's pages");
    let mcp = [
        ("Cookie", cookie.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}});
    let (code, _, body) = request(&addr, "POST", "/mcp", &mcp, &init.to_string());
    assert_eq!(code, 401, "the cookie never stands for a bearer token on /mcp: {body}");
}
