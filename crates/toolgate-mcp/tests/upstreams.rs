//! Upstream MCP servers as child processes: the fixture server of this crate
//! (`toolgate-fixture-server`) behind the gateway, reached with rmcp's own client.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Client, WAIT, is_error, text};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate::Catalog;
use toolgate::defer::{DeferConfig, DeferMode};
use toolgate_mcp::config::{Config, ServerConfig, Transport};
use toolgate_mcp::{Gateway, Settings};

const FIXTURE: &str = env!("CARGO_BIN_EXE_toolgate-fixture-server");

fn settings() -> Settings {
    Settings {
        defer: DeferConfig { mode: DeferMode::On, ..DeferConfig::default() },
        gateway: toolgate_mcp::config::GatewayConfig { ..Default::default() },
        restart_backoff: None,
        ..Settings::default()
    }
}

/// A stdio server running `command` with `env`.
fn stdio(command: &str, env: &[(&str, &str)]) -> ServerConfig {
    toolgate_mcp::config::server(Transport::Stdio {
        command: command.to_owned(),
        args: Vec::new(),
        env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        cwd: None,
    })
}

fn start(settings: Settings, servers: Vec<(&str, ServerConfig)>) -> Gateway {
    start_with(settings, servers, |_| {})
}

/// Like [`start`], with the configuration edited first (policy, budgets, profiles).
fn start_with(
    settings: Settings,
    servers: Vec<(&str, ServerConfig)>,
    edit: impl FnOnce(&mut Config),
) -> Gateway {
    let mut config = Config {
        servers: servers.into_iter().map(|(n, s)| (n.to_owned(), s)).collect::<BTreeMap<_, _>>(),
        ..Config::default()
    };
    edit(&mut config);
    Gateway::builder(settings).start(&config).expect("the gateway starts")
}

/// The status entry of upstream `name`.
fn server(status: &Value, name: &str) -> Value {
    status["servers"].as_array().unwrap().iter().find(|s| s["name"] == name).cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_stdio_upstream_is_listed_across_pages_and_its_calls_are_forwarded() {
    let mut fixture = stdio(FIXTURE, &[]);
    fixture.trust_always_load = true;
    let gateway = start(settings(), vec![("fix", fixture)]);
    assert!(gateway.settled(WAIT).await, "{}", gateway.status());
    let status = gateway.status();
    assert_eq!(server(&status, "fix")["state"], "ready");
    // Four tools, two a page: the gateway followed nextCursor.
    assert_eq!(server(&status, "fix")["tools"], 4);

    let client = Client::duplex(&gateway).await;
    // core_ping carries _meta["anthropic/alwaysLoad"] and the configuration trusts the
    // server's marks, so it is core.
    assert_eq!(client.names().await, ["fix__core_ping", "tool_search"]);
    assert_eq!(text(&client.call("fix__core_ping", json!({})).await), "pong");

    let denied = client.call("fix__echo", json!({"text": "hi"})).await;
    assert!(text(&denied).contains("select:fix__echo"), "{}", text(&denied));
    client.call("tool_search", json!({"query": "select:fix__echo"})).await;
    let echoed = client.call("fix__echo", json!({"text": "hello"})).await;
    assert!(!is_error(&echoed), "{}", text(&echoed));
    assert_eq!(text(&echoed), "hello");
    let invalid = client.call("fix__echo", json!({"text": 5})).await;
    assert!(text(&invalid).contains("do not match its input schema"), "{}", text(&invalid));
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_call_that_outlives_its_timeout_gets_a_clear_error_and_the_upstream_stays_up() {
    let mut fixture = stdio(FIXTURE, &[]);
    fixture.host.call_timeout = Some(Duration::from_millis(300));
    let gateway = start(settings(), vec![("fix", fixture)]);
    assert!(gateway.settled(WAIT).await);
    let client = Client::duplex(&gateway).await;
    client.call("tool_search", json!({"query": "select:fix__slow,fix__echo"})).await;

    let slow = client.call("fix__slow", json!({"ms": 20_000})).await;
    assert!(is_error(&slow));
    assert_eq!(
        text(&slow),
        "server `fix` did not answer the call to `fix__slow` within 0.3 s, so the call was cancelled; \
         try again, or raise the server's call_timeout_secs in the configuration"
    );
    let quick = client.call("fix__slow", json!({"ms": 1})).await;
    assert_eq!(text(&quick), "slept 1 ms");
    assert_eq!(server(&gateway.status(), "fix")["state"], "ready");
    gateway.shutdown().await;
}

#[tokio::test]
async fn an_upstream_that_crashes_mid_call_is_marked_failed_and_the_rest_keeps_working() {
    let gateway = start(
        settings(),
        vec![("crashy", stdio(FIXTURE, &[("FIXTURE_CRASH_ON", "slow")])), ("steady", stdio(FIXTURE, &[]))],
    );
    assert!(gateway.settled(WAIT).await);
    let mut client = Client::duplex(&gateway).await;
    client.call("tool_search", json!({"query": "select:crashy__slow,crashy__echo,steady__echo"})).await;
    client.list_changed().await;
    assert_eq!(client.names().await.len(), 4);

    let crashed = client.call("crashy__slow", json!({"ms": 1})).await;
    assert!(is_error(&crashed));
    assert!(
        text(&crashed).starts_with("server `crashy` closed its connection during the call"),
        "{}",
        text(&crashed)
    );
    assert!(
        gateway.report().wait_until(WAIT, |s| server(s, "crashy")["state"] == "failed").await,
        "{}",
        gateway.status()
    );
    // The status says why, in the server's own words from its stderr.
    let error = server(&gateway.status(), "crashy")["error"].as_str().unwrap_or_default().to_owned();
    assert!(error.contains("crashing in the middle of `slow` as asked"), "{error}");
    // The session listed its tools before, so it hears that they went away.
    client.list_changed().await;
    let names = client.names().await;
    assert!(!names.iter().any(|n| n.starts_with("crashy__")), "{names:?}");
    let gone = client.call("crashy__echo", json!({"text": "x"})).await;
    assert!(
        text(&gone).starts_with("tool `echo` of server `crashy` is unavailable: the server failed"),
        "{}",
        text(&gone)
    );
    assert_eq!(text(&client.call("steady__echo", json!({"text": "still here"})).await), "still here");
    assert_eq!(server(&gateway.status(), "steady")["state"], "ready");
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_crashed_upstream_restarts_after_its_backoff() {
    let settings = Settings { restart_backoff: Some(Duration::from_millis(50)), ..settings() };
    let gateway = start(settings, vec![("crashy", stdio(FIXTURE, &[("FIXTURE_CRASH_ON", "slow")]))]);
    assert!(gateway.settled(WAIT).await);
    let client = Client::duplex(&gateway).await;
    client.call("tool_search", json!({"query": "select:crashy__slow,crashy__echo"})).await;
    client.call("crashy__slow", json!({"ms": 1})).await;
    assert!(gateway.report().wait_until(WAIT, |s| server(s, "crashy")["state"] == "failed").await);
    assert!(gateway.report().wait_until(WAIT, |s| server(s, "crashy")["state"] == "ready").await);
    // The session's active set survived the restart.
    assert_eq!(text(&client.call("crashy__echo", json!({"text": "back"})).await), "back");
    gateway.shutdown().await;
}

#[tokio::test]
async fn an_upstream_list_change_is_listed_again_and_searchable() {
    let gateway = start(settings(), vec![("fix", stdio(FIXTURE, &[]))]);
    assert!(gateway.settled(WAIT).await);
    let client = Client::duplex(&gateway).await;
    let none = client.call("tool_search", json!({"query": "select:fix__extra"})).await;
    assert_eq!(none.structured_content.unwrap()["matches"], json!([]));

    client.call("tool_search", json!({"query": "select:fix__grow"})).await;
    assert_eq!(text(&client.call("fix__grow", json!({})).await), "grown");
    assert!(
        gateway.report().wait_until(WAIT, |s| server(s, "fix")["tools"] == 5).await,
        "{}",
        gateway.status()
    );
    let found = client.call("tool_search", json!({"query": "select:fix__extra"})).await;
    assert_eq!(found.structured_content.unwrap()["matches"], json!(["fix__extra"]));
    gateway.shutdown().await;
}

#[tokio::test]
async fn servers_that_are_starting_are_reported_pending_and_bad_commands_fail_clearly() {
    // No waiting for starting servers, so that the first search sees one still starting.
    let settings = Settings {
        gateway: toolgate_mcp::config::GatewayConfig {
            startup_timeout: Duration::from_millis(500),
            ready_timeout: Duration::ZERO,
            ..settings().gateway
        },
        ..settings()
    };
    let gateway = start(
        settings,
        vec![
            (
                "sleepy",
                toolgate_mcp::config::server(Transport::Stdio {
                    command: "sleep".into(),
                    args: vec!["30".into()],
                    env: BTreeMap::new(),
                    cwd: None,
                }),
            ),
            ("missing", stdio("/nonexistent/toolgate-no-such-server", &[])),
            ("off", ServerConfig { enabled: false, ..stdio(FIXTURE, &[]) }),
        ],
    );
    let client = Client::duplex(&gateway).await;
    let early = client.call("tool_search", json!({"query": "anything"})).await;
    let pending = early.structured_content.unwrap()["pending_servers"].clone();
    assert!(pending.as_array().unwrap().contains(&json!("sleepy")), "{pending}");

    assert!(gateway.settled(WAIT).await);
    let status = gateway.status();
    let sleepy = server(&status, "sleepy");
    assert_eq!(sleepy["state"], "failed");
    assert!(
        sleepy["error"].as_str().unwrap().starts_with("did not start and list its tools within 0.5 s"),
        "{sleepy}"
    );
    assert_eq!(server(&status, "off")["state"], "disabled");
    let missing = server(&status, "missing");
    assert!(
        missing["error"]
            .as_str()
            .unwrap()
            .starts_with("could not start `/nonexistent/toolgate-no-such-server`"),
        "{missing}"
    );
    gateway.shutdown().await;
}

#[tokio::test]
async fn an_upstream_that_exits_right_after_start_fails_clearly_and_the_others_keep_working() {
    let gateway = start(
        settings(),
        vec![
            (
                "quitter",
                toolgate_mcp::config::server(Transport::Stdio {
                    command: "sh".into(),
                    args: vec!["-c".into(), "echo 'quitter: no config found' >&2; exit 3".into()],
                    env: BTreeMap::new(),
                    cwd: None,
                }),
            ),
            ("steady", stdio(FIXTURE, &[])),
        ],
    );
    assert!(gateway.settled(WAIT).await, "{}", gateway.status());
    let status = gateway.status();
    let quitter = server(&status, "quitter");
    assert_eq!(quitter["state"], "failed", "{quitter}");
    let error = quitter["error"].as_str().unwrap();
    // The error carries what the child said on its way out.
    assert!(error.contains("quitter: no config found"), "{quitter}");
    assert_eq!(server(&status, "steady")["state"], "ready", "{status}");

    let client = Client::duplex(&gateway).await;
    client.call("tool_search", json!({"query": "select:steady__echo"})).await;
    let echoed = client.call("steady__echo", json!({"text": "still here"})).await;
    assert_ne!(echoed.is_error, Some(true), "{echoed:?}");
    gateway.shutdown().await;
}

#[tokio::test]
async fn an_http_upstream_is_listed_and_its_calls_are_forwarded() {
    // The inner gateway serves the embedded catalog without deferral, so it lists all 527 tools
    // (every one counts against the budget, which is raised for it).
    let inner_settings = Settings {
        defer: DeferConfig { mode: DeferMode::Off, ..DeferConfig::default() },
        gateway: toolgate_mcp::config::GatewayConfig { ..settings().gateway },
        ..settings()
    };
    let roomy = toolgate_mcp::config::BudgetConfig { first_turn: 600, dynamic: 600, hard: 600 };
    let inner = Gateway::builder(inner_settings)
        .policy(Config { budget: roomy, ..Config::default() })
        .build()
        .unwrap();
    inner.add_catalog("embedded", &Catalog::embedded());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    tokio::spawn(toolgate_mcp::http::serve(inner.clone(), listener, stop.clone()));

    let headers = BTreeMap::from([("X-Toolgate-Test".to_owned(), "1".to_owned())]);
    let outer =
        start(settings(), vec![("inner", toolgate_mcp::config::server(Transport::Http { url, headers }))]);
    assert!(outer.settled(WAIT).await, "{}", outer.status());
    assert_eq!(server(&outer.status(), "inner")["tools"], 527, "{}", outer.status());

    let client = Client::duplex(&outer).await;
    let found =
        client.call("tool_search", json!({"query": "take a screenshot of a web page", "limit": 1})).await;
    let matches = found.structured_content.unwrap()["matches"].clone();
    let name = matches[0].as_str().unwrap().to_owned();
    assert!(name.starts_with("inner__") && name.ends_with("playwright_screenshot"), "{matches}");
    let answer = client.call(&name, json!({"name": "shot"})).await;
    assert_eq!(
        text(&answer),
        "demo tool `playwright__playwright_screenshot`, not connected: toolgate serves it from a static catalog"
    );
    outer.shutdown().await;
    stop.cancel();
}

#[tokio::test]
async fn denied_tools_are_never_offered_searched_or_called() {
    let mut fixture = stdio(FIXTURE, &[]);
    fixture.denied = vec!["slow".into()];
    let config = Config {
        servers: BTreeMap::from([("fix".to_owned(), fixture)]),
        policy: toolgate_mcp::config::PolicyConfig { deny: vec!["*__grow".into()] },
        ..Config::default()
    };
    let gateway = Gateway::builder(settings()).start(&config).unwrap();
    assert!(gateway.settled(WAIT).await);
    let fix = server(&gateway.status(), "fix");
    assert_eq!((fix["tools"].clone(), fix["visible"].clone()), (json!(4), json!(2)), "{fix}");
    assert_eq!(gateway.status()["tools"], 2, "{}", gateway.status());

    let client = Client::duplex(&gateway).await;
    let found = client.call("tool_search", json!({"query": "select:fix__slow,fix__grow,fix__echo"})).await;
    assert_eq!(found.structured_content.unwrap()["matches"], json!(["fix__echo"]));
    let refused = client.call("fix__slow", json!({"ms": 1})).await;
    assert!(text(&refused).starts_with("tool `fix__slow` is not available to you"), "{}", text(&refused));
    gateway.shutdown().await;
}

#[tokio::test]
async fn progress_of_a_forwarded_call_reaches_the_client_that_made_it() {
    let gateway = start(settings(), vec![("fix", stdio(FIXTURE, &[]))]);
    assert!(gateway.settled(WAIT).await);
    let mut client = Client::duplex(&gateway).await;
    let mut bystander = Client::duplex(&gateway).await;
    client.call("tool_search", json!({"query": "select:fix__slow"})).await;
    // rmcp gives every request a progress token, so the fixture always reports progress.
    let done = client.call("fix__slow", json!({"ms": 1})).await;
    assert_eq!(text(&done), "slept 1 ms");
    let step = tokio::time::timeout(WAIT, client.progress.recv()).await.unwrap().unwrap();
    assert_eq!((step.progress, step.total), (1.0, Some(2.0)));
    assert!(bystander.progress.try_recv().is_err(), "progress went to another session");
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_server_keeps_at_most_max_active_tools_loaded_unloading_the_least_recently_used() {
    let mut fixture = stdio(FIXTURE, &[]);
    fixture.max_active = 2;
    let gateway = start(settings(), vec![("fix", fixture)]);
    assert!(gateway.settled(WAIT).await);
    let client = Client::duplex(&gateway).await;
    client.call("tool_search", json!({"query": "select:fix__echo"})).await;
    client.call("tool_search", json!({"query": "select:fix__slow"})).await;
    // echo is used after slow was loaded, so slow is the least recently used.
    assert_eq!(text(&client.call("fix__echo", json!({"text": "x"})).await), "x");
    let grown = client.call("tool_search", json!({"query": "select:fix__grow"})).await;
    assert_eq!(grown.structured_content.clone().unwrap()["unloaded"], json!(["fix__slow"]));
    assert!(text(&grown).contains("Unloaded to stay within the tool budget"), "{}", text(&grown));
    assert_eq!(client.names().await, ["tool_search", "fix__echo", "fix__grow"]);
    let gone = client.call("fix__slow", json!({"ms": 1})).await;
    assert!(text(&gone).contains("select:fix__slow"), "{}", text(&gone));
    gateway.shutdown().await;
}

/// The status error of upstream `name`, or "" when it has none.
fn error_of(status: &Value, name: &str) -> String {
    server(status, name)["error"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn garbage_on_stdout_before_the_initialize_answer_is_skipped_and_the_upstream_becomes_ready() {
    let gateway = start(
        settings(),
        vec![("noisy", stdio(FIXTURE, &[("FIXTURE_GARBAGE", "start")])), ("steady", stdio(FIXTURE, &[]))],
    );
    assert!(gateway.settled(WAIT).await, "{}", gateway.status());
    // rmcp drops lines that are not JSON, half a JSON object and binary bytes alike.
    let status = gateway.status();
    let noisy = server(&status, "noisy");
    assert_eq!((noisy["state"].clone(), noisy["tools"].clone()), (json!("ready"), json!(4)), "{noisy}");
    let client = Client::duplex(&gateway).await;
    client.call("tool_search", json!({"query": "select:noisy__echo,steady__echo"})).await;
    assert_eq!(text(&client.call("noisy__echo", json!({"text": "through"})).await), "through");
    assert_eq!(text(&client.call("steady__echo", json!({"text": "fine"})).await), "fine");
    gateway.shutdown().await;
}

#[tokio::test]
async fn an_upstream_whose_first_answer_is_a_stray_response_fails_initialize_with_a_clear_error() {
    let gateway = start(
        settings(),
        vec![("stray", stdio(FIXTURE, &[("FIXTURE_GARBAGE", "stray")])), ("steady", stdio(FIXTURE, &[]))],
    );
    assert!(gateway.settled(WAIT).await, "{}", gateway.status());
    let status = gateway.status();
    assert_eq!(server(&status, "stray")["state"], "failed", "{status}");
    let error = error_of(&status, "stray");
    assert!(
        error.starts_with(
            "initialize failed: the server sent a response to request 987654, which was never sent, \
             where the answer to `initialize` (request 0) belonged; its stdout must carry MCP messages only"
        ),
        "{error}"
    );
    assert_eq!(server(&status, "steady")["state"], "ready", "{status}");
    let client = Client::duplex(&gateway).await;
    client.call("tool_search", json!({"query": "select:steady__echo"})).await;
    assert_eq!(text(&client.call("steady__echo", json!({"text": "fine"})).await), "fine");
    gateway.shutdown().await;
}

#[tokio::test]
async fn an_upstream_that_answers_initialize_only_with_garbage_fails_naming_the_missing_answer() {
    let settings = Settings {
        gateway: toolgate_mcp::config::GatewayConfig {
            startup_timeout: Duration::from_millis(1500),
            ..settings().gateway
        },
        ..settings()
    };
    let gateway = start(
        settings,
        vec![("babbler", stdio(FIXTURE, &[("FIXTURE_GARBAGE", "only")])), ("steady", stdio(FIXTURE, &[]))],
    );
    let client = Client::duplex(&gateway).await;
    assert!(gateway.settled(WAIT).await, "{}", gateway.status());
    let status = gateway.status();
    assert_eq!(server(&status, "babbler")["state"], "failed", "{status}");
    let error = error_of(&status, "babbler");
    assert!(
        error.starts_with(
            "did not start and list its tools within 1.5 s: it never answered `initialize` (lines on its \
             stdout that are not MCP messages are ignored, so a server that logs to stdout looks like this)"
        ),
        "{error}"
    );
    // The server's own stderr follows, which here says what it did instead.
    assert!(error.contains("fixture: writing garbage instead of answering initialize"), "{error}");
    assert_eq!(server(&status, "steady")["state"], "ready", "{status}");
    client.call("tool_search", json!({"query": "select:steady__echo"})).await;
    assert_eq!(text(&client.call("steady__echo", json!({"text": "fine"})).await), "fine");
    let refused = client.call("babbler__echo", json!({"text": "x"})).await;
    assert!(
        text(&refused)
            .starts_with("tool `echo` of server `babbler` is unavailable: the server failed (did not"),
        "{}",
        text(&refused)
    );
    gateway.shutdown().await;
}

#[tokio::test]
async fn garbage_between_valid_messages_is_ignored_and_the_session_keeps_working() {
    // After the initialize answer the fixture writes plain text, half a JSON object, binary bytes
    // and a response with an unknown id before every message.
    let gateway = start(
        settings(),
        vec![("noisy", stdio(FIXTURE, &[("FIXTURE_GARBAGE", "middle")])), ("steady", stdio(FIXTURE, &[]))],
    );
    assert!(gateway.settled(WAIT).await, "{}", gateway.status());
    // The tools were listed across two pages, each answer after a block of garbage.
    assert_eq!(server(&gateway.status(), "noisy")["tools"], 4, "{}", gateway.status());
    let client = Client::duplex(&gateway).await;
    client.call("tool_search", json!({"query": "select:noisy__echo,noisy__grow,steady__echo"})).await;
    for i in 0..5 {
        let said = format!("call {i}");
        assert_eq!(text(&client.call("noisy__echo", json!({"text": said})).await), said);
    }
    // A list change (a notification after garbage, then a listing answered after garbage) works too.
    assert_eq!(text(&client.call("noisy__grow", json!({})).await), "grown");
    assert!(
        gateway.report().wait_until(WAIT, |s| server(s, "noisy")["tools"] == 5).await,
        "{}",
        gateway.status()
    );
    let status = gateway.status();
    assert_eq!(server(&status, "noisy")["state"], "ready", "{status}");
    assert_eq!(server(&status, "noisy")["error"], Value::Null, "{status}");
    assert_eq!(text(&client.call("steady__echo", json!({"text": "fine"})).await), "fine");
    gateway.shutdown().await;
}

/// How many times the fixture behind `name` was listed, asked through the gateway.
async fn listings(client: &Client, name: &str) -> u64 {
    let answer = client.call(name, json!({})).await;
    text(&answer).parse().unwrap_or_else(|_| panic!("list_count answers a number: {}", text(&answer)))
}

/// Calls `name` with an echo and fails if the answer takes longer than two seconds.
async fn prompt_echo(client: &Client, name: &str) {
    let call = client.call(name, json!({"text": "prompt"}));
    let answer = tokio::time::timeout(Duration::from_secs(2), call)
        .await
        .unwrap_or_else(|_| panic!("`{name}` did not answer within 2 s during the flood"));
    assert_eq!(text(&answer), "prompt");
}

/// A gateway with a flooding upstream `noisy` (sending `notices` at a time) and a quiet one,
/// and a client that has loaded the tools the flood tests use.
async fn flood_setup(notices: &str) -> (Gateway, Client) {
    let gateway = start(
        settings(),
        vec![("noisy", stdio(FIXTURE, &[("FIXTURE_FLOOD", notices)])), ("steady", stdio(FIXTURE, &[]))],
    );
    assert!(gateway.settled(WAIT).await, "{}", gateway.status());
    assert_eq!(server(&gateway.status(), "noisy")["tools"], 6, "{}", gateway.status());
    let client = Client::duplex(&gateway).await;
    let query = "select:noisy__flood,noisy__list_count,noisy__echo,steady__echo";
    client.call("tool_search", json!({"query": query})).await;
    (gateway, client)
}

#[tokio::test]
async fn a_burst_of_list_changed_notices_is_coalesced_into_a_few_listings() {
    let (gateway, client) = flood_setup("1000").await;
    let before = listings(&client, "noisy__list_count").await;
    assert_eq!(text(&client.call("noisy__flood", json!({"every_ms": 0})).await), "flooding 1000");
    prompt_echo(&client, "steady__echo").await;
    prompt_echo(&client, "noisy__echo").await;
    // The tool extra appears just before the last notice, so seeing it means the last one was heard.
    assert!(
        gateway.report().wait_until(WAIT, |s| server(s, "noisy")["tools"] == 7).await,
        "{}",
        gateway.status()
    );
    let relisted = listings(&client, "noisy__list_count").await - before;
    assert!((1..=10).contains(&relisted), "1000 notices caused {relisted} listings");
    let found = client.call("tool_search", json!({"query": "select:noisy__extra"})).await;
    assert_eq!(found.structured_content.unwrap()["matches"], json!(["noisy__extra"]));
    assert_eq!(server(&gateway.status(), "noisy")["state"], "ready");
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_steady_stream_of_list_changed_notices_is_listed_at_a_bounded_rate_and_calls_stay_prompt() {
    let (gateway, client) = flood_setup("2000").await;
    let before = listings(&client, "noisy__list_count").await;
    // One notice a millisecond: about two seconds of them.
    assert_eq!(text(&client.call("noisy__flood", json!({"every_ms": 1})).await), "flooding 2000");
    let started = tokio::time::Instant::now();
    let mut pace = tokio::time::interval(Duration::from_millis(50));
    let mut rounds = 0;
    while server(&gateway.status(), "noisy")["tools"] != 7 {
        assert!(started.elapsed() < WAIT, "the flood never ended: {}", gateway.status());
        pace.tick().await;
        prompt_echo(&client, "steady__echo").await;
        prompt_echo(&client, "noisy__echo").await;
        rounds += 1;
    }
    assert!(rounds >= 5, "only {rounds} rounds of calls ran during the flood");
    let relisted = listings(&client, "noisy__list_count").await - before;
    // Listings start at least 100 ms apart, so about 20 in two seconds; one per notice would be 2000.
    assert!((1..=100).contains(&relisted), "2000 notices caused {relisted} listings");
    let found = client.call("tool_search", json!({"query": "select:noisy__extra"})).await;
    assert_eq!(found.structured_content.unwrap()["matches"], json!(["noisy__extra"]));
    assert_eq!(server(&gateway.status(), "noisy")["state"], "ready");
    gateway.shutdown().await;
}

/// A fixture with logging, prompts and resources (`FIXTURE_EXTRAS=1`).
fn extras() -> ServerConfig {
    stdio(FIXTURE, &[("FIXTURE_EXTRAS", "1")])
}

#[tokio::test]
#[allow(deprecated)] // logging/setLevel: deprecated in the newest protocol, relayed for the others
async fn upstream_log_messages_reach_every_session_that_wants_their_level() {
    use rmcp::model::{LoggingLevel, SetLevelRequestParams};
    let gateway = start(settings(), vec![("fix", extras())]);
    assert!(gateway.settled(WAIT).await, "{}", gateway.status());
    let mut client = Client::duplex(&gateway).await;
    let mut picky = Client::duplex(&gateway).await;
    picky.service.set_level(SetLevelRequestParams::new(LoggingLevel::Error)).await.expect("setLevel answers");
    client.call("tool_search", json!({"query": "select:fix__log"})).await;

    let done = client.call("fix__log", json!({"level": "warning", "text": "disk almost full"})).await;
    assert_eq!(text(&done), "logged");
    let message = tokio::time::timeout(WAIT, client.logs.recv()).await.expect("the log arrives").unwrap();
    assert_eq!(message.level, LoggingLevel::Warning);
    assert_eq!(message.logger.as_deref(), Some("fix/fixture"), "the logger names the upstream");
    assert_eq!(message.data, json!("disk almost full"));

    client.call("fix__log", json!({"level": "critical", "text": "disk full"})).await;
    let severe =
        tokio::time::timeout(WAIT, picky.logs.recv()).await.expect("the critical log arrives").unwrap();
    assert_eq!(severe.data, json!("disk full"), "a session that asked for errors got no warning first");
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_client_that_cancels_a_call_cancels_it_at_the_upstream() {
    use rmcp::model::{CallToolRequest, ClientRequest};
    use rmcp::service::PeerRequestOptions;
    let gateway = start(settings(), vec![("fix", extras())]);
    assert!(gateway.settled(WAIT).await);
    let client = Client::duplex(&gateway).await;
    client.call("tool_search", json!({"query": "select:fix__slow,fix__cancel_count"})).await;

    let Value::Object(args) = json!({"ms": 60_000}) else { unreachable!() };
    let params = rmcp::model::CallToolRequestParams::new("fix__slow").with_arguments(args);
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let peer = client.service.peer();
    let handle = peer.send_cancellable_request(request, PeerRequestOptions::no_options()).await.unwrap();
    // Let the call reach the upstream before cancelling it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    handle.cancel(Some("the user pressed stop".into())).await.expect("the cancellation is sent");

    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let count = text(&client.call("fix__cancel_count", json!({})).await);
        if count == "1" {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the upstream never saw the cancellation ({count})");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(server(&gateway.status(), "fix")["state"], "ready");
    gateway.shutdown().await;
}

#[tokio::test]
async fn prompts_and_resources_of_upstreams_are_served_namespaced_and_denied_servers_offer_none() {
    use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams, ResourceContents};
    let gateway = start_with(settings(), vec![("fix", extras()), ("hidden", extras())], |c| {
        c.policy.deny = vec!["hidden".into()];
    });
    assert!(gateway.settled(WAIT).await);
    let client = Client::duplex(&gateway).await;
    let peer = client.service.peer();

    let prompts = peer.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["fix__greet"]);
    let Value::Object(args) = json!({"name": "Ada"}) else { unreachable!() };
    let greeting =
        peer.get_prompt(GetPromptRequestParams::new("fix__greet").with_arguments(args)).await.unwrap();
    assert_eq!(serde_json::to_value(&greeting.messages[0]).unwrap()["content"]["text"], "Hello, Ada!");
    let hidden = peer.get_prompt(GetPromptRequestParams::new("hidden__greet")).await;
    assert!(hidden.unwrap_err().to_string().contains("no prompt `hidden__greet`"));

    let resources = peer.list_all_resources().await.unwrap();
    assert_eq!(resources.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(), ["fixture://readme"]);
    let templates = peer.list_all_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 1, "the denied server's template is not offered");
    let read = |uri: &str| peer.read_resource(ReadResourceRequestParams::new(uri));
    let text_of = |contents: &ResourceContents| match contents {
        ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("not text: {other:?}"),
    };
    assert_eq!(text_of(&read("fixture://readme").await.unwrap().contents[0]), "the fixture's readme");
    assert_eq!(text_of(&read("fixture://notes/7").await.unwrap().contents[0]), "note 7");
    let missing = read("memo://nowhere").await.unwrap_err().to_string();
    assert!(missing.contains("no connected server lists resource `memo://nowhere`"), "{missing}");
    gateway.shutdown().await;
}

#[tokio::test]
async fn required_tools_over_max_active_are_a_configuration_error_never_a_silent_drop() {
    // A live server in mode = "all" requires its four tools; max_active 2 cannot hold them.
    let mut all = stdio(FIXTURE, &[]);
    all.mode = toolgate_mcp::config::ServerMode::All;
    all.max_active = 2;
    let mut pinned = stdio(FIXTURE, &[]);
    pinned.pinned = vec!["echo".into()];
    let gateway = start(settings(), vec![("greedy", all), ("fine", pinned)]);
    assert!(gateway.settled(WAIT).await);
    let status = gateway.status();
    assert_eq!(server(&status, "greedy")["state"], "failed");
    assert_eq!(
        error_of(&status, "greedy"),
        "server `greedy`: 4 required tools (pinned or mode=all) exceed max_active 2; pin fewer tools, \
         narrow `allowed`, or use mode = \"auto\""
    );
    // A pin that fits is always loaded (active from the start, never unloaded); the
    // server's own alwaysLoad mark on core_ping is not trusted, so core_ping is deferred.
    let client = Client::duplex(&gateway).await;
    assert_eq!(client.names().await, ["tool_search", "fine__echo"]);
    gateway.shutdown().await;

    // A static catalog whose pins do not fit fails at start, naming the key.
    let dir = std::env::temp_dir().join(format!("toolgate-pins-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cat.jsonl");
    let lines: Vec<String> = (0..5)
        .map(|i| json!({"server": "demo", "name": format!("tool_{i}"), "description": "A tool."}).to_string())
        .collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    let mut demo = toolgate_mcp::config::server(Transport::Catalog { path: path.clone() });
    demo.pinned = vec!["tool_*".into()];
    demo.max_active = 3;
    let config = Config { servers: [("demo".to_owned(), demo)].into(), ..Config::default() };
    let error = Gateway::builder(settings()).start(&config).expect_err("pins over budget fail");
    assert_eq!(error.key, "servers.demo.pinned");
    assert!(error.message.contains("5 required tools (pinned or mode=all) exceed max_active 3"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_call_in_flight_keeps_its_http_session_alive_past_the_idle_time() {
    // Sessions end after 1 s without a request; the call takes 3 s.
    let settings = Settings {
        gateway: toolgate_mcp::config::GatewayConfig {
            session_idle: Duration::from_secs(1),
            ..settings().gateway
        },
        ..settings()
    };
    let gateway = start(settings, vec![("fix", stdio(FIXTURE, &[]))]);
    assert!(gateway.settled(WAIT).await, "{}", gateway.status());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    tokio::spawn(toolgate_mcp::http::serve(gateway.clone(), listener, stop.clone()));

    let client = Client::http(&url).await;
    client.call("tool_search", json!({"query": "select:fix__slow"})).await;
    let slow = client.call("fix__slow", json!({"ms": 3000})).await;
    assert_eq!(text(&slow), "slept 3000 ms", "the session outlived its idle time while the call ran");
    let status = gateway.status();
    let session = &status["sessions"][0];
    assert_eq!(
        (session["transport"].as_str(), session["kind"].as_str()),
        (Some("http"), Some("agent")),
        "{status}"
    );
    assert_eq!(session["in_flight"], 0, "{status}");
    let first = session["id"].clone();
    // Then idle: it ends (rmcp's client opens a new session for its next request).
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let _ = client.service.list_tools(None).await;
    let status = gateway.status();
    let ids: Vec<&Value> = status["sessions"].as_array().unwrap().iter().map(|s| &s["id"]).collect();
    assert!(!ids.contains(&&first), "the idle session ended: {status}");
    stop.cancel();
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_listing_that_pages_forever_or_grows_past_a_cap_fails_its_server_naming_the_cap() {
    use toolgate_mcp::config::ListCaps;
    for (caps, key) in [
        (ListCaps { pages: 40, ..ListCaps::default() }, "list_max_pages"),
        (ListCaps { tools: 25, ..ListCaps::default() }, "list_max_tools"),
        (ListCaps { bytes: 2048, ..ListCaps::default() }, "list_max_bytes"),
    ] {
        let settings = Settings {
            gateway: toolgate_mcp::config::GatewayConfig { list_caps: caps, ..settings().gateway },
            ..settings()
        };
        let gateway = start(
            settings,
            vec![("endless", stdio(FIXTURE, &[("FIXTURE_ENDLESS", "1")])), ("steady", stdio(FIXTURE, &[]))],
        );
        assert!(gateway.settled(WAIT).await, "{}", gateway.status());
        let status = gateway.status();
        let endless = server(&status, "endless");
        assert_eq!(endless["state"], "failed", "{status}");
        let error = endless["last_error"].as_str().or(endless["error"].as_str()).unwrap_or_default();
        assert!(error.contains(key), "{key}: {endless}");
        assert_eq!(endless["tools"], 0, "nothing of a refused listing is served: {endless}");
        assert_eq!(server(&status, "steady")["state"], "ready", "the other server is not affected");
        gateway.shutdown().await;
    }
}
