//! Rate limits through the real binary (`[limits]`, `[profiles.NAME.limits]`): a runaway client
//! loops over two `toolgate serve --http` replicas sharing one real `redis-server`, and the
//! upstream receives no more calls than the limits allow, whichever replica each request hits.
//! Every call over a limit is answered in the shape of SEP-3304: JSON-RPC `-32023` with
//! `data.retryAfterMs`, and over HTTP status 429 with `Retry-After`, at 2026-07-28 (no session)
//! and in a 2025-11-25 session, whose answer rmcp would stream; on stdio the JSON-RPC error
//! alone. Both replicas count the refusals in `/metrics` and show them on the status page.

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::{Redis, Server, Upstream, scratch, serve, tool};

const ALICE: &str = "alice-secret-0123456789";
const BOT: &str = "bot-secret-0123456789abc";
const GRANT_KEY: &str = "limits-test-grant-key-0123456789abcdef";

/// Alice may make 5 calls a minute, 2 of them `create_issue`; the `ci` profile's bot 1.
fn config(upstream: &Upstream, redis: &Redis) -> String {
    format!(
        "[gateway]\nsessions = {:?}\nmode = \"off\"\ngrant_key = \"${{TG_GRANT_KEY}}\"\n\n\
         [tokens.alice]\nenv = \"TG_ALICE\"\n\
         [tokens.bot]\nenv = \"TG_BOT\"\nprofile = \"ci\"\n\n\
         [limits]\ncalls_per_minute = 5\n\
         [limits.tools.\"fx__create_issue\"]\ncalls_per_minute = 2\n\n\
         [profiles.ci]\n[profiles.ci.limits]\ncalls_per_minute = 1\n\n{}",
        redis.url(),
        upstream.table("fx", "")
    )
}

/// One `tools/call` of `name` at 2026-07-28 as `token`: status, head and body.
fn call(server: &Server, token: &str, name: &str) -> (u16, String, String) {
    support::call_2026(&server.addr, token, name, json!({}), json!({}), &[])
}

/// The JSON-RPC message of a reply's body: the body itself, or its event's data.
fn message(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| {
        let data: String = body.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
        serde_json::from_str(&data).unwrap_or(Value::Null)
    })
}

/// Checks that `(status, head, body)` is SEP-3304's answer for `scope`, and returns its wait.
fn assert_limited(reply: &(u16, String, String), scope: &str) -> u64 {
    let (status, head, body) = reply;
    assert_eq!(*status, 429, "{head}\n{body}");
    let retry_after = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("retry-after: ").map(str::to_owned))
        .expect("a Retry-After header");
    let error = &message(body)["error"];
    assert_eq!(error["code"], -32023, "{body}");
    let ms = error["data"]["retryAfterMs"].as_u64().expect("data.retryAfterMs");
    assert_eq!(error["data"]["scope"], scope, "{body}");
    assert_eq!(retry_after.trim().parse::<u64>().unwrap(), ms.div_ceil(1000));
    ms
}

fn rate_limited_refusals(server: &Server) -> u64 {
    support::metric(&server.addr, ALICE, "toolgate_refusals_total{reason=\"rate_limited\"}") as u64
}

#[test]
fn a_runaway_loop_over_two_replicas_gets_no_more_than_the_limit_and_sep_3304_answers() {
    let dir = scratch("limits");
    let redis = Redis::start(&dir);
    let fx = Upstream::new(
        &dir,
        "fx",
        &[tool("create_issue", "Create an issue."), tool("list_issues", "List issues.")],
    );
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, config(&fx, &redis)).unwrap();
    let envs = [("TG_ALICE", ALICE), ("TG_BOT", BOT), ("TG_GRANT_KEY", GRANT_KEY)];
    let start = |name: &str| {
        let data = dir.join(name);
        let data = data.display().to_string();
        let mut envs = envs.to_vec();
        envs.push(("XDG_DATA_HOME", &data));
        let server = serve(&["--http", "127.0.0.1:0", "--config", path.to_str().unwrap()], &envs);
        server.until_ready(&[("Authorization", &format!("Bearer {ALICE}"))]);
        server
    };
    let replicas = [start("a"), start("b")];
    let on = |i: usize| &replicas[i % 2];

    // Alice loops on create_issue: its own limit of 2 holds across both replicas.
    let mut answers = Vec::new();
    for i in 0..6 {
        answers.push(call(on(i), ALICE, "fx__create_issue"));
    }
    let ok = answers.iter().filter(|(s, _, b)| *s == 200 && message(b)["result"]["isError"] != true).count();
    assert_eq!(ok, 2, "{answers:?}");
    for reply in &answers[2..] {
        let ms = assert_limited(reply, "tool fx__create_issue");
        assert!(ms > 20_000 && ms <= 30_000, "2 a minute: the next in about 30 s, not {ms} ms");
    }
    // Then on another tool, until all its calls (5 a minute) are gone: 3 more.
    let answers: Vec<_> = (0..5).map(|i| call(on(i), ALICE, "fx__list_issues")).collect();
    assert_eq!(answers.iter().filter(|(s, _, _)| *s == 200).count(), 3, "{answers:?}");
    assert_limited(&answers[3], "all calls");
    // The bot's profile has a limit of its own, and alice's use does not touch it.
    let answers: Vec<_> = (0..3).map(|i| call(on(i), BOT, "fx__list_issues")).collect();
    assert_eq!(answers[0].0, 200, "{answers:?}");
    assert_limited(&answers[1], "all calls");

    // A 2025-11-25 session of alice's, whose answers rmcp streams: still 429.
    let bearer = format!("Bearer {ALICE}");
    let session = support::HttpSession::open(&replicas[1].addr, "/mcp", ALICE).expect("a session");
    let (status, listed) = session.ask("tools/list", json!({}));
    assert!(status == 200 && listed.to_string().contains("fx__list_issues"), "{listed}");
    let reply = session.send("tools/call", json!({"name": "fx__list_issues", "arguments": {}}));
    assert_limited(&reply, "all calls");

    // The upstream heard of exactly the calls the limits allowed: 2 + 3 of alice's, 1 of the bot's.
    let calls = fx.calls();
    assert_eq!(calls.iter().filter(|c| *c == "create_issue").count(), 2, "{calls:?}");
    assert_eq!(calls.iter().filter(|c| *c == "list_issues").count(), 4, "{calls:?}");
    // Both replicas count what they refused: 4 + 2 + 2 + 1.
    assert_eq!(rate_limited_refusals(&replicas[0]) + rate_limited_refusals(&replicas[1]), 9);
    let (_, _, status) = support::request_whole(
        &replicas[1].addr,
        "GET",
        "/status.json",
        &[("Authorization", &bearer)],
        "",
        std::time::Duration::from_secs(5),
    );
    let status: Value = serde_json::from_str(&status).unwrap();
    assert!(status["refusals"].to_string().contains("rate_limited"), "{status}");
    assert_eq!(status["limits"]["everyone"]["calls_per_minute"], 5, "{status}");
}

#[tokio::test]
async fn on_stdio_a_call_over_the_limit_is_the_json_rpc_error() {
    let dir = scratch("limits-stdio");
    let fx = Upstream::new(&dir, "fx", &[tool("list_issues", "List issues.")]);
    let config =
        format!("[gateway]\nmode = \"off\"\n[limits]\ncalls_per_minute = 1\n\n{}", fx.table("fx", ""));
    let s = support::Session::start(Path::new(&dir), &config, &[]).await;
    s.settled().await;
    assert_eq!(s.names().await, ["fx__list_issues"], "deferral off: every tool, and no search");
    let first = s.call("fx__list_issues", json!({})).await;
    assert!(!support::refused(&first), "{}", support::text(&first));
    let params = rmcp::model::CallToolRequestParams::new("fx__list_issues");
    let err = s.service.call_tool(params).await.expect_err("over the limit");
    let rmcp::ServiceError::McpError(error) = err else { panic!("{err}") };
    assert_eq!(error.code.0, -32023);
    assert!(error.data.unwrap()["retryAfterMs"].as_u64().unwrap() > 50_000);
    assert_eq!(fx.calls().len(), 1);
}
