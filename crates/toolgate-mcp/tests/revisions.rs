//! MCP 2026-07-28 on a connection of its own (stdio), as today's clients speak it first:
//! `server/discover` before anything else, the revision in every request's `_meta`, and every
//! result carrying `resultType`, forwarded ones included. The client here is raw JSON lines, so
//! that what the wire carries is what is checked (rmcp's own client would fill gaps in). Over
//! HTTP, where that revision has no session, a subscription still hears list changes.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::WAIT;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};
use toolgate::defer::{DeferConfig, DeferMode};
use toolgate_mcp::config::{Config, Transport};
use toolgate_mcp::{Gateway, Settings};

const FIXTURE: &str = env!("CARGO_BIN_EXE_toolgate-fixture-server");

/// A gateway in front of the fixture server on 2025-11-25 (with its prompts, resources and
/// completions), which waits `start_ms` before it reads its first message.
fn gateway(start_ms: u64, ready_timeout: Duration) -> Gateway {
    gateway_on("2025-11-25", start_ms, ready_timeout)
}

/// [`gateway`] with the fixture on `protocol` (`all` for every revision rmcp knows).
fn gateway_on(protocol: &str, start_ms: u64, ready_timeout: Duration) -> Gateway {
    let fixture = toolgate_mcp::config::server(Transport::Stdio {
        command: FIXTURE.to_owned(),
        args: Vec::new(),
        env: [
            ("FIXTURE_EXTRAS", "1".to_owned()),
            ("FIXTURE_START_MS", start_ms.to_string()),
            ("FIXTURE_PROTOCOL", protocol.to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect(),
        cwd: None,
    });
    let settings = Settings {
        defer: DeferConfig { mode: DeferMode::On, ..DeferConfig::default() },
        gateway: toolgate_mcp::config::GatewayConfig { ready_timeout, ..Default::default() },
        restart_backoff: None,
        ..Settings::default()
    };
    let config = Config { servers: BTreeMap::from([("fix".to_owned(), fixture)]), ..Config::default() };
    Gateway::builder(settings).start(&config).expect("the gateway starts")
}

/// A 2026-07-28 client speaking raw JSON lines to one session of a gateway.
struct Modern {
    to_server: WriteHalf<DuplexStream>,
    from_server: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    next_id: u64,
    /// Notifications that arrived while waiting for a response, in order.
    notifications: Vec<Value>,
}

impl Modern {
    fn open(gateway: &Gateway) -> Modern {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let gateway = gateway.clone();
        tokio::spawn(async move {
            let (read, write) = tokio::io::split(theirs);
            let _ = toolgate_mcp::server::serve_stdio_on(
                gateway,
                tokio_util::sync::CancellationToken::new(),
                read,
                write,
            )
            .await;
        });
        let (read, write) = tokio::io::split(ours);
        Modern {
            to_server: write,
            from_server: BufReader::new(read).lines(),
            next_id: 1,
            notifications: Vec::new(),
        }
    }

    /// The `_meta` every 2026-07-28 request carries.
    fn meta() -> Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw-modern", "version": "1.0.0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        })
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.to_server.write_all(line.as_bytes()).await.unwrap();
    }

    /// Sends request `method` with `params` (and the revision's `_meta`) and returns its
    /// whole response object.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_with(method, params, Modern::meta()).await
    }

    /// [`Modern::request`] with `meta` as the request's `_meta`.
    async fn request_with(&mut self, method: &str, mut params: Value, meta: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        params["_meta"] = meta;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        loop {
            let message = self.next().await;
            if message["id"] == id {
                return message;
            }
            self.notifications.push(message);
        }
    }

    /// The next message from the server.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.from_server.next_line())
            .await
            .expect("the server answers in time")
            .unwrap()
            .expect("the server is still there");
        serde_json::from_str(&line).unwrap()
    }

    /// Calls a tool and returns the response's `result`.
    async fn call(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments})).await;
        answer.get("result").cloned().unwrap_or_else(|| panic!("tools/call {name} failed: {answer}"))
    }
}

/// A 2025-11-25 server slower to start than rmcp's `server/discover` probe waits (10 s) reads
/// the probe late and refuses it where the answer to `initialize` belongs. The gateway
/// connects to it again with `initialize` alone; it used to fail it (and, restarted, would
/// have failed it the same way every time).
#[tokio::test]
async fn a_legacy_server_slower_to_start_than_the_probe_waits_is_connected_with_initialize() {
    let gateway = gateway_on("2025-11-25", 10_500, Duration::from_secs(1));
    let fix = |s: &Value| s["servers"][0].clone();
    let ready = gateway.report().wait_until(Duration::from_secs(60), |s| fix(s)["state"] != "starting").await;
    let status = gateway.status();
    assert!(ready, "{status}");
    assert_eq!(fix(&status)["state"], "ready", "{status}");
    assert!(fix(&status)["tools"].as_u64().is_some_and(|n| n > 0), "{status}");
}

#[tokio::test]
async fn discover_waits_for_a_starting_server_and_every_result_is_complete() {
    let gateway = gateway(1500, Duration::from_secs(20));
    let mut client = Modern::open(&gateway);
    let discovered = client.request("server/discover", json!({})).await;
    let instructions = discovered["result"]["instructions"].as_str().unwrap_or_default().to_owned();
    assert!(
        instructions.contains("<available-deferred-tools>\nfix: ")
            && !instructions.contains("Still connecting"),
        "server/discover answers once the server is ready, announcing its tools: {discovered}"
    );
    assert_eq!(discovered["result"]["resultType"], "complete");

    let listed = client.request("tools/list", json!({})).await;
    assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    let search = client.call("tool_search", json!({"query": "select:fix__echo"})).await;
    assert_eq!(search["resultType"], "complete", "{search}");
    client.request("tools/list", json!({})).await;
    assert!(
        !client.notifications.iter().any(|n| n["method"] == "notifications/tools/list_changed"),
        "2026-07-28 hears of changes only on a subscription it opened: {:?}",
        client.notifications
    );

    // The upstream speaks 2025-11-25 and sends no resultType: forwarded, the result has one.
    let echoed = client.call("fix__echo", json!({"text": "hello"})).await;
    assert_eq!(echoed["resultType"], "complete", "a forwarded tool result: {echoed}");
    assert_eq!(echoed["content"][0]["text"], "hello");
    let refused = client.call("fix__slow", json!({"ms": 1})).await;
    assert_eq!(refused["resultType"], "complete", "a refusal: {refused}");
    assert_eq!(refused["isError"], true);

    let prompt =
        client.request("prompts/get", json!({"name": "fix__greet", "arguments": {"name": "Ada"}})).await;
    assert_eq!(prompt["result"]["resultType"], "complete", "a forwarded prompt: {prompt}");
    assert_eq!(prompt["result"]["messages"][0]["content"]["text"], "Hello, Ada!");
    let read = client.request("resources/read", json!({"uri": "fixture://notes/7"})).await;
    assert_eq!(read["result"]["resultType"], "complete", "a forwarded resource: {read}");
    assert_eq!(read["result"]["contents"][0]["text"], "note 7");
    let completed = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "fix__greet"}, "argument": {"name": "name", "value": "al"}}),
        )
        .await;
    assert_eq!(completed["result"]["resultType"], "complete", "a forwarded completion: {completed}");
    assert_eq!(completed["result"]["completion"]["values"], json!(["alice", "alex"]));
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_server_that_finishes_starting_after_discover_is_told_in_tool_search_and_on_the_subscription() {
    // The ready wait runs out long before the server starts.
    let gateway = gateway(2500, Duration::from_millis(300));
    let mut client = Modern::open(&gateway);
    let discovered = client.request("server/discover", json!({})).await;
    let instructions = discovered["result"]["instructions"].as_str().unwrap_or_default().to_owned();
    assert!(instructions.contains("Still connecting") && instructions.contains("fix"), "{instructions}");

    let listen = json!({"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
        "params": {"_meta": Modern::meta(), "notifications": {"toolsListChanged": true}}});
    client.send(listen).await;
    let first = client.request("tools/list", json!({})).await;
    let description = |list: &Value| -> String {
        let tools = list["result"]["tools"].as_array().unwrap();
        let search = tools.iter().find(|t| t["name"] == "tool_search").unwrap();
        search["description"].as_str().unwrap().to_owned()
    };
    assert!(!description(&first).contains("deferred-tools-added"), "nothing has arrived yet");
    let early = client.call("tool_search", json!({"query": "echo the text"})).await;
    let text = early["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Servers still starting"), "a search names them before anything else: {text}");

    // The server arrives: the subscription hears of it, and the list's tool_search tells it.
    let deadline = tokio::time::Instant::now() + WAIT;
    while !client.notifications.iter().any(|n| n["method"] == "notifications/tools/list_changed") {
        assert!(tokio::time::Instant::now() < deadline, "no list_changed: {:?}", client.notifications);
        let message = client.next().await;
        client.notifications.push(message);
    }
    let changed =
        client.notifications.iter().find(|n| n["method"] == "notifications/tools/list_changed").unwrap();
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen", "{changed}");
    let again = client.request("tools/list", json!({})).await;
    let told = description(&again);
    assert!(told.contains("<deferred-tools-added>\nfix: "), "{told}");
    let found = client.call("tool_search", json!({"query": "select:fix__echo"})).await;
    assert!(found["content"][0]["text"].as_str().unwrap().starts_with("Loaded "), "{found}");
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_question_waits_for_its_own_session_only_and_its_answer_reaches_the_upstream() {
    let gateway = gateway(0, Duration::from_secs(20));
    let mut alice = Modern::open(&gateway);
    let mut mallory = Modern::open(&gateway);
    for client in [&mut alice, &mut mallory] {
        client.request("server/discover", json!({})).await;
        client.call("tool_search", json!({"query": "select:fix__ask"})).await;
    }
    // The `_meta` of a client that declared elicitation, or of one that did not.
    let meta = |elicits: bool| {
        let mut meta = Modern::meta();
        if elicits {
            meta["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {"form": {}}});
        }
        meta
    };
    let ask = |state: Option<&str>, answer: &str| {
        let mut params = json!({"name": "fix__ask", "arguments": {"question": "ship it?"}});
        if let Some(state) = state {
            params["requestState"] = json!(state);
            params["inputResponses"] =
                json!({"elicitation": {"action": "accept", "content": {"answer": answer}}});
        }
        params
    };
    // Alice declared elicitation: her call waits while toolgate asks her.
    let asked = alice.request_with("tools/call", ask(None, ""), meta(true)).await["result"].clone();
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    assert_eq!(asked["inputRequests"]["elicitation"]["params"]["message"], "ship it?", "{asked}");
    let state = asked["requestState"].as_str().unwrap().to_owned();

    // Another session presenting Alice's state gets nothing of hers, and her call still waits.
    let refused =
        mallory.request_with("tools/call", ask(Some(&state), "no"), meta(true)).await["result"].clone();
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused["content"][0]["text"].as_str().unwrap().contains("names no call waiting in this session")
    );

    // Alice answers: the upstream gets her answer.
    let done = alice.request_with("tools/call", ask(Some(&state), "yes"), meta(true)).await["result"].clone();
    let text = done["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("answered: ") && text.contains(r#""answer":"yes""#), "{done}");

    // Mallory declared no elicitation: the upstream's question is refused, she is never asked.
    let silent = mallory.request_with("tools/call", ask(None, ""), meta(false)).await["result"].clone();
    let text = silent["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("not answered") && text.contains("did not declare elicitation"), "{silent}");
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_task_is_followed_by_the_session_that_started_it_and_by_no_other() {
    let gateway = gateway_on("all", 0, Duration::from_secs(20));
    let mut alice = Modern::open(&gateway);
    let mut mallory = Modern::open(&gateway);
    let tasks_meta = || {
        let mut meta = Modern::meta();
        meta["io.modelcontextprotocol/clientCapabilities"] =
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
        meta
    };
    for client in [&mut alice, &mut mallory] {
        client.request("server/discover", json!({})).await;
        client.call("tool_search", json!({"query": "select:fix__task"})).await;
    }
    let started = alice
        .request_with("tools/call", json!({"name": "fix__task", "arguments": {"ms": 300}}), tasks_meta())
        .await;
    assert_eq!(started["result"]["resultType"], "task", "{started}");
    let id = started["result"]["taskId"].as_str().unwrap().to_owned();

    // Another session asking for Alice's task learns nothing of it.
    let stolen = mallory.request_with("tasks/get", json!({"taskId": id}), tasks_meta()).await;
    assert!(stolen["error"]["message"].as_str().unwrap().contains("no task"), "{stolen}");

    // Alice follows it to its end through the gateway.
    let deadline = tokio::time::Instant::now() + WAIT;
    let done = loop {
        let got = alice.request_with("tasks/get", json!({"taskId": id}), tasks_meta()).await;
        let result = got["result"].clone();
        assert!(result.is_object(), "{got}");
        if result["status"] == "completed" {
            break result;
        }
        assert!(tokio::time::Instant::now() < deadline, "the task never completed: {got}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(done["result"]["content"][0]["text"], format!("{id} done"), "{done}");

    // Cancelled through the gateway, by its session only.
    let long = alice
        .request_with("tools/call", json!({"name": "fix__task", "arguments": {"ms": 60000}}), tasks_meta())
        .await;
    let long = long["result"]["taskId"].as_str().unwrap().to_owned();
    let refused = mallory.request_with("tasks/cancel", json!({"taskId": long}), tasks_meta()).await;
    assert!(refused["error"].is_object(), "{refused}");
    let cancelled = alice.request_with("tasks/cancel", json!({"taskId": long}), tasks_meta()).await;
    assert!(cancelled["result"].is_object(), "{cancelled}");
    let got = alice.request_with("tasks/get", json!({"taskId": long}), tasks_meta()).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");

    // A client that does not follow tasks gets the plain result: the upstream was told so.
    let plain = mallory.call("fix__task", json!({"ms": 10})).await;
    assert_eq!(plain["content"][0]["text"], "done after 10 ms, without a task", "{plain}");
    gateway.shutdown().await;
}

/// Over HTTP at 2026-07-28 there is no session, but a `subscriptions/listen` stream still hears
/// that the list every request of its subject gets has changed (here every tool is listed:
/// nothing is deferred).
#[tokio::test]
async fn over_http_a_subscription_hears_that_the_list_every_request_gets_changed() {
    use tokio::io::AsyncReadExt;
    let settings = Settings {
        defer: DeferConfig { mode: DeferMode::Off, ..DeferConfig::default() },
        gateway: toolgate_mcp::config::GatewayConfig { ..Default::default() },
        ..Settings::default()
    };
    let gateway = Gateway::builder(settings).policy(Config::default()).build().unwrap();
    let one = |names: &[&str]| {
        names
            .iter()
            .fold(toolgate::Catalog::builder(), |b, n| {
                b.tool(toolgate::ToolSpec::mcp("docs", n, "A doc tool"))
            })
            .build()
            .unwrap()
    };
    gateway.add_catalog("docs", &one(&["read"]));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    tokio::spawn(toolgate_mcp::http::serve(gateway.clone(), listener, stop.clone()));

    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {"_meta": meta, "notifications": {"toolsListChanged": true}}})
    .to_string();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut seen = String::new();
    let read_until = async |needle: &str, stream: &mut tokio::net::TcpStream, seen: &mut String| {
        let deadline = tokio::time::Instant::now() + WAIT;
        let mut buf = [0u8; 4096];
        while !seen.contains(needle) {
            let n = tokio::time::timeout_at(deadline, stream.read(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("no {needle} within {WAIT:?}: {seen}"))
                .unwrap();
            assert!(n > 0, "the stream ended: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    };
    read_until("200 OK", &mut stream, &mut seen).await;
    // Give the subscription a moment to be registered before the list changes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!seen.contains("list_changed"), "{seen}");
    gateway.add_catalog("docs", &one(&["read", "write"]));
    read_until("notifications/tools/list_changed", &mut stream, &mut seen).await;
    stop.cancel();
}

/// Over HTTP, `server/discover` is a client's probe for 2026-07-28, and clients give it 5 s
/// (Claude Code, the C# SDK) before they fall back to `initialize` and a session. So it does
/// not wait for a server that is still starting past that: it answers within
/// `HTTP_DISCOVER_WAIT` (3 s), naming the server as still connecting, even with a ready wait
/// of 30 s. (Over stdio it waits as `initialize` does: the first test above.)
#[tokio::test]
async fn over_http_discover_answers_before_a_client_gives_up_the_probe() {
    use tokio::io::AsyncReadExt;
    let gateway = gateway(15_000, Duration::from_secs(30));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    tokio::spawn(toolgate_mcp::http::serve(gateway.clone(), listener, stop.clone()));

    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": Modern::meta()}})
            .to_string();
    let asked = tokio::time::Instant::now();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n\
         Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = String::new();
    let mut buf = [0u8; 4096];
    while !answer.contains("\"instructions\"") {
        let n = tokio::time::timeout_at(asked + WAIT, stream.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("no answer within {WAIT:?}: {answer}"))
            .unwrap();
        assert!(n > 0, "the stream ended: {answer}");
        answer.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let took = asked.elapsed();
    assert!(took < Duration::from_secs(5), "server/discover took {took:?}, past the 5 s clients probe for");
    assert!(answer.contains("Still connecting") && answer.contains("fix"), "{answer}");
    stop.cancel();
    gateway.shutdown().await;
}
