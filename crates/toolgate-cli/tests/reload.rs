//! Live reconfiguration through the real binary: `toolgate serve` takes a new configuration
//! when its file changes, or on `SIGHUP`, while sessions live, over HTTP (2025-11-25 sessions
//! with bearer tokens) and over stdio.
//!
//! Through each kind of change, a session that lives through it shows what changed and what
//! did not:
//! - a file that does not parse, and one that parses but does not validate (required tools
//!   over the budget), keep the running configuration: the sessions' calls still run, and the
//!   error is in the log, on the status page and in `/metrics`;
//! - a server added starts and its tools are found; a server changed restarts (a new process
//!   serves the tool the session loaded before); a server removed stops (its process ends)
//!   and its tools are refused;
//! - a tool the new policy denies is refused from the next call on, and nothing reaches its
//!   upstream, while the session keeps the other tools it loaded;
//! - a token added works at once, one removed is refused at once, a token file rotated is read
//!   on `SIGHUP`; a profile added has its endpoint at once.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{HttpSession, Server, Session, Upstream, refused, request_whole, scratch, serve, text, tool};

const ALICE: &str = "alice-secret-0123456789";
const BOB: &str = "bob-secret-0123456789abcd";
const BOB_ROTATED: &str = "bob-rotated-secret-987654321";

/// The processes whose environment holds `value` (an upstream's log path: its fixture server).
fn processes_with(value: &str) -> Vec<u32> {
    support::processes_where("environ", |environ| environ.split('\0').any(|v| v.ends_with(value)))
}

/// Waits until `done` holds, for at most `WAIT`; `what` says what was waited for.
fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + support::WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits, without holding up the runtime, until the processes of `upstream` meet `done`.
async fn until_processes(upstream: &Upstream, what: &str, done: impl Fn(&[u32]) -> bool) {
    let deadline = Instant::now() + support::WAIT;
    loop {
        let now = processes_with(upstream.log.to_str().unwrap());
        if done(&now) {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting until {what}: {now:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The two fixture upstreams every test here reconfigures: `fx`, an issue tracker, and `gh`, a
/// code search.
fn upstreams(dir: &Path) -> (Upstream, Upstream) {
    let fx = Upstream::new(
        dir,
        "fx",
        &[
            tool("create_issue", "Create an issue in the tracker."),
            tool("list_issues", "List the open issues."),
        ],
    );
    let gh = Upstream::new(dir, "gh", &[tool("search_code", "Search source code across repositories.")]);
    (fx, gh)
}

fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

/// `/status.json`, read as the bearer of `token`.
fn status(server: &Server, token: &str) -> Value {
    let bearer = format!("Bearer {token}");
    let headers = [("Authorization", bearer.as_str())];
    let (_, _, body) =
        request_whole(&server.addr, "GET", "/status.json", &headers, "", Duration::from_secs(5));
    serde_json::from_str(&body).unwrap_or(Value::Null)
}

/// Waits until the status page counts `applied` reloads applied and `failed` refused, read as
/// the bearer of `token`; returns its `configuration`.
fn reloads(server: &Server, token: &str, applied: u64, failed: u64) -> Value {
    let mut last = Value::Null;
    until(&format!("{applied} reloads are applied and {failed} refused"), || {
        last = status(server, token)["configuration"].clone();
        last["reloads_applied"] == applied && last["reloads_failed"] == failed
    });
    last
}

/// The configuration of the HTTP test: tools deferred, alice's token read from the
/// environment and bob's from a file, then `rest`.
fn http_config(dir: &Path, rest: &str) -> String {
    format!(
        "[gateway]\nmode = \"on\"\n\n[tokens.alice]\nenv = \"TG_ALICE\"\n\n[tokens.bob]\nfile = {:?}\n\n{rest}",
        dir.join("bob.token").display().to_string()
    )
}

#[test]
fn an_http_gateway_takes_each_kind_of_change_while_its_sessions_live() {
    let dir = scratch("reload-http");
    let (fx, gh) = upstreams(&dir);
    std::fs::write(dir.join("bob.token"), BOB).unwrap();
    let path = dir.join("toolgate.toml");
    let write = |rest: &str| std::fs::write(&path, http_config(&dir, rest)).unwrap();
    write(&fx.table("fx", ""));
    let server = serve(
        &["--config", path.to_str().unwrap(), "--http", "127.0.0.1:0"],
        &[("TG_ALICE", ALICE), ("XDG_DATA_HOME", dir.join("data").to_str().unwrap())],
    );
    server.until_ready(&[("Authorization", &format!("Bearer {ALICE}"))]);
    let alice = HttpSession::open(&server.addr, "/mcp", ALICE).unwrap();
    assert_eq!(alice.search("create an issue")[0], "fx__create_issue");
    assert!(!is_error(&alice.call("fx__create_issue")));
    assert_eq!(fx.calls(), ["create_issue"]);
    let first_fx = processes_with(fx.log.to_str().unwrap());
    assert_eq!(first_fx.len(), 1, "one fixture process serves fx");

    // A file that does not parse: the running configuration stays, and says why.
    std::fs::write(&path, "[gateway\nmode = \"on\"\n").unwrap();
    let shown = reloads(&server, ALICE, 0, 1);
    let error = shown["failing"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("toolgate.toml"), "the error names the file: {shown}");
    assert!(!is_error(&alice.call("fx__create_issue")), "the session's call still runs");
    assert_eq!(fx.calls(), ["create_issue", "create_issue"]);
    assert_eq!(
        support::metric(&server.addr, ALICE, "toolgate_config_reloads_total{outcome=\"failed\"}"),
        1.0
    );
    assert_eq!(support::metric(&server.addr, ALICE, "toolgate_config_reload_failing"), 1.0);
    until("the log says the file was not reloaded", || {
        server.log().contains("the configuration was not reloaded")
    });

    // A file that parses but does not validate: fx's two tools always loaded, one at most.
    write(&fx.table("fx", "mode = \"all\"\nmax_active = 1"));
    let shown = reloads(&server, ALICE, 0, 2);
    assert!(shown["failing"]["error"].as_str().unwrap_or_default().contains("servers.fx"), "{shown}");
    assert!(!is_error(&alice.call("fx__create_issue")));
    assert_eq!(fx.calls().len(), 3);

    // A server added, a token added (bob's, from its file) and a profile added, in one file.
    let profile = "[profiles.reader]\ntools = [\"gh__*\"]\n\n";
    write(&format!("{profile}{}\n{}", fx.table("fx", ""), gh.table("gh", "")));
    let shown = reloads(&server, ALICE, 1, 2);
    assert!(shown["failing"].is_null(), "an applied reload clears the failure: {shown}");
    assert_eq!(support::metric(&server.addr, ALICE, "toolgate_config_reload_failing"), 0.0);
    until("gh is ready", || {
        status(&server, BOB)["servers"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["name"] == "gh" && s["state"] == "ready"))
    });
    assert_eq!(alice.search("search source code")[0], "gh__search_code");
    assert!(!is_error(&alice.call("gh__search_code")));
    assert_eq!(gh.calls(), ["search_code"]);
    let bob = HttpSession::open(&server.addr, "/mcp", BOB).expect("a token added works at once");
    let reader =
        HttpSession::open(&server.addr, "/mcp/reader", BOB).expect("a profile added has its endpoint");
    assert_eq!(reader.search("search code"), ["gh__search_code"], "the profile sees gh alone");
    assert_eq!(reader.search("create an issue"), Vec::<String>::new());

    // A server changed (its call timeout): it restarts, and the tool the session loaded runs
    // in the new process.
    write(&format!("{profile}{}\n{}", fx.table("fx", "call_timeout_secs = 30"), gh.table("gh", "")));
    let shown = reloads(&server, ALICE, 2, 2);
    assert!(shown["last_applied"]["changes"].to_string().contains("server fx restarted"), "{shown}");
    until("a new fx process serves", || {
        let now = processes_with(fx.log.to_str().unwrap());
        now.len() == 1 && now != first_fx
    });
    server.until_ready(&[("Authorization", &format!("Bearer {ALICE}"))]);
    assert!(!is_error(&alice.call("fx__create_issue")), "the loaded tool is still loaded");
    assert_eq!(fx.calls().len(), 4);

    // The policy denies one loaded tool: refused from the next call on, nothing upstream;
    // the session keeps its other loaded tool.
    let deny = "[policy]\ndeny = [\"fx__create_issue\"]\n\n";
    write(&format!("{deny}{profile}{}\n{}", fx.table("fx", "call_timeout_secs = 30"), gh.table("gh", "")));
    reloads(&server, ALICE, 3, 2);
    let denied = alice.call("fx__create_issue");
    assert!(is_error(&denied), "{denied}");
    assert_eq!(fx.calls().len(), 4, "nothing reached the upstream");
    assert!(!alice.names().contains(&"fx__create_issue".to_owned()));
    assert!(!is_error(&alice.call("gh__search_code")), "the other loaded tool is kept");
    assert_eq!(gh.calls().len(), 2);

    // Alice's token removed: refused at once, her session with it; bob's goes on.
    let tokens_without_alice = |rest: &str| {
        let text = http_config(&dir, rest).replace("[tokens.alice]\nenv = \"TG_ALICE\"\n\n", "");
        std::fs::write(&path, text).unwrap();
    };
    tokens_without_alice(&format!(
        "{deny}{profile}{}\n{}",
        fx.table("fx", "call_timeout_secs = 30"),
        gh.table("gh", "")
    ));
    reloads(&server, BOB, 4, 2);
    assert_eq!(alice.ask("tools/list", json!({})).0, 401, "a token removed is refused at once");
    assert!(!is_error(&bob.call_with("tool_search", json!({"query": "list issues"}))));

    // A server removed: its process ends, and its tools are refused.
    let gh_process = processes_with(gh.log.to_str().unwrap());
    assert_eq!(gh_process.len(), 1);
    tokens_without_alice(&format!("{deny}{profile}{}", fx.table("fx", "call_timeout_secs = 30")));
    reloads(&server, BOB, 5, 2);
    until("gh's process ended", || processes_with(gh.log.to_str().unwrap()).is_empty());
    let gone = reader.call("gh__search_code");
    assert!(is_error(&gone), "{gone}");
    assert_eq!(gh.calls().len(), 2, "nothing reached the removed server");

    // SIGHUP reads what the file names again: bob's token file rotated.
    std::fs::write(dir.join("bob.token"), BOB_ROTATED).unwrap();
    let pid = server.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap().success());
    reloads(&server, BOB_ROTATED, 6, 2);
    assert_eq!(bob.ask("tools/list", json!({})).0, 401, "the old secret is refused");
    assert!(HttpSession::open(&server.addr, "/mcp", BOB_ROTATED).is_ok(), "the new one is taken");

    // A rate limit, a tool override and another ranking added, the profile removed: each from
    // the next request, and fx, reached as before, keeps its process.
    let fx_process = processes_with(fx.log.to_str().unwrap());
    let limit = "[limits.tools.\"fx__open_issues\"]\ncalls_per_minute = 1\n\n";
    let rename = "[servers.fx.tools.list_issues]\nname = \"open_issues\"\n";
    let ranking = "[search]\nstrategy = \"bm25f\"\n\n";
    let fx_table = fx.table("fx", "call_timeout_secs = 30");
    tokens_without_alice(&format!("{deny}{limit}{ranking}{fx_table}{rename}"));
    let shown = reloads(&server, BOB_ROTATED, 7, 2);
    assert!(shown["last_applied"]["changes"].to_string().contains("server fx rules changed"), "{shown}");
    assert_eq!(status(&server, BOB_ROTATED)["strategy"], "bm25f", "the ranking the file names");
    assert_eq!(reader.ask("tools/list", json!({})).0, 401, "the rotated token");
    let carol = HttpSession::open(&server.addr, "/mcp", BOB_ROTATED).unwrap();
    assert_eq!(
        HttpSession::open(&server.addr, "/mcp/reader", BOB_ROTATED).err(),
        Some(404),
        "a profile removed"
    );
    assert_eq!(carol.search("list the open issues")[0], "fx__open_issues", "the override is what is found");
    assert!(!is_error(&carol.call("fx__open_issues")));
    assert_eq!(fx.calls().last().map(String::as_str), Some("list_issues"), "called by its upstream name");
    assert_eq!(
        carol.ask("tools/call", json!({"name": "fx__open_issues", "arguments": {}})).0,
        429,
        "the limit"
    );
    assert_eq!(processes_with(fx.log.to_str().unwrap()), fx_process, "fx was not restarted");
    let log = server.log();
    assert!(log.contains("reloading the configuration: SIGHUP"), "{log}");
    assert!(!log.contains(BOB_ROTATED) && !log.contains(ALICE), "secrets stay out of the log");
}

#[tokio::test]
async fn a_stdio_session_lives_through_each_kind_of_change() {
    let dir = scratch("reload-stdio");
    let (fx, gh) = upstreams(&dir);
    let base = "[gateway]\nmode = \"on\"\n\n";
    let mut session = Session::start(&dir, &format!("{base}{}", fx.table("fx", "")), &[]).await;
    let path = dir.join("toolgate.toml");
    let write = |text: String| std::fs::write(&path, text).unwrap();
    session.settled().await;
    assert_eq!(session.search("create an issue").await["matches"][0], "fx__create_issue");
    assert!(!refused(&session.call("fx__create_issue", json!({})).await));

    // A file that does not parse: nothing changes for the session.
    write("[servers.fx\n".to_owned());
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let ran = session.call("fx__create_issue", json!({})).await;
    assert!(!refused(&ran), "{}", text(&ran));
    assert_eq!(fx.calls().len(), 2);

    // A server added: the session is told its list changed, and finds the new tools.
    session.drain();
    write(format!("{base}{}\n{}", fx.table("fx", ""), gh.table("gh", "")));
    session.until_found("search source code", "gh__search_code").await;
    assert_eq!(session.search("search source code").await["matches"][0], "gh__search_code");
    session.list_changed().await;
    assert!(session.names().await.contains(&"gh__search_code".to_owned()));
    assert!(!refused(&session.call("gh__search_code", json!({})).await));
    assert_eq!(gh.calls(), ["search_code"]);

    // A server changed: a new process serves the tool the session loaded.
    let first_fx = processes_with(fx.log.to_str().unwrap());
    assert_eq!(first_fx.len(), 1);
    write(format!("{base}{}\n{}", fx.table("fx", "call_timeout_secs = 30"), gh.table("gh", "")));
    until_processes(&fx, "fx restarted", |now| now.len() == 1 && now != first_fx).await;
    session.settled().await;
    let ran = session.call("fx__create_issue", json!({})).await;
    assert!(!refused(&ran), "{}", text(&ran));
    assert_eq!(fx.calls().len(), 3);

    // The policy denies a loaded tool: refused from the next call on, the other kept.
    write(format!(
        "{base}[policy]\ndeny = [\"fx__create_issue\"]\n\n{}\n{}",
        fx.table("fx", "call_timeout_secs = 30"),
        gh.table("gh", "")
    ));
    let deadline = Instant::now() + support::WAIT;
    while session.names().await.contains(&"fx__create_issue".to_owned()) {
        assert!(Instant::now() < deadline, "the deny never took effect");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let denied = session.call("fx__create_issue", json!({})).await;
    assert!(refused(&denied), "{}", text(&denied));
    assert_eq!(fx.calls().len(), 3, "nothing reached the upstream");
    assert!(!refused(&session.call("gh__search_code", json!({})).await), "the other loaded tool is kept");

    // A server removed: its process ends and its tool is refused.
    assert_eq!(processes_with(gh.log.to_str().unwrap()).len(), 1);
    write(format!(
        "{base}[policy]\ndeny = [\"fx__create_issue\"]\n\n{}",
        fx.table("fx", "call_timeout_secs = 30")
    ));
    until_processes(&gh, "gh's process ended", <[u32]>::is_empty).await;
    let gone = session.call("gh__search_code", json!({})).await;
    assert!(refused(&gone), "{}", text(&gone));
    assert_eq!(gh.calls().len(), 2);
}
