//! Traces through the real binary (`[telemetry]`): `toolgate serve --http` exports its spans over
//! OTLP/HTTP to a real receiver that decodes them with the official OpenTelemetry protobuf
//! definitions (`e2e/otlp_receiver.py`, the `opentelemetry-proto` package). A search and a call
//! from a client that sends its own trace context (the `traceparent` header, and SEP-414's
//! `_meta.traceparent`) come back as span trees under the client's spans: the request, the
//! search with its query, hits and loads, the gate's check with its decision, the upstream call,
//! whose trace the upstream receives in its own `_meta`. No argument value reaches a span. With
//! the collector down, requests go on and the spans are counted as dropped.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Server, Upstream, scratch, serve, tool};

const ALICE: &str = "alice-secret-0123456789";
const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";
const SECRET_ARGUMENT: &str = "the-text-no-span-may-hold";

/// The receiver, listening on a free port; it writes what it decodes to `spans`.
struct Receiver {
    child: Child,
    port: u16,
    spans: PathBuf,
}

impl Receiver {
    fn start(dir: &Path) -> Receiver {
        let e2e = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e");
        let python = e2e.join(".venv/bin/python");
        assert!(python.exists(), "run e2e/setup.sh (the README's test command does)");
        let (spans, port_file) = (dir.join("spans.jsonl"), dir.join("otlp.port"));
        let child = Command::new(python)
            .arg(e2e.join("otlp_receiver.py"))
            .arg(&spans)
            .arg(&port_file)
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            if let Some(port) = std::fs::read_to_string(&port_file).ok().and_then(|p| p.trim().parse().ok()) {
                break port;
            }
            assert!(Instant::now() < deadline, "the OTLP receiver did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        Receiver { child, port, spans }
    }

    /// The spans received so far.
    fn spans(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.spans).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    /// Waits until `pred` holds of the spans received.
    fn until(&self, what: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let spans = self.spans();
            if pred(&spans) {
                return spans;
            }
            assert!(Instant::now() < deadline, "{what}: {spans:#?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `tools/call` at 2026-07-28, with `extra_headers` and the request's `_meta` additions:
/// the JSON-RPC answer.
fn call(server: &Server, name: &str, arguments: Value, meta: Value, extra_headers: &[(&str, &str)]) -> Value {
    let (status, _, body) = support::call_2026(&server.addr, ALICE, name, arguments, meta, extra_headers);
    assert_eq!(status, 200, "{body}");
    let data: String = body.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
    serde_json::from_str(if data.is_empty() { &body } else { &data }).unwrap()
}

fn gateway(dir: &Path, upstream: &Upstream, endpoint: &str) -> Server {
    let config = format!(
        "[gateway]\nmode = \"off\"\n\n[tokens.alice]\nenv = \"TG_ALICE\"\n\n\
         [telemetry]\notlp_endpoint = {endpoint:?}\nservice_name = \"gateway-under-test\"\n\
         headers = {{ x-collector-key = \"k1\" }}\n\n{}",
        upstream.table("fx", "")
    );
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, config).unwrap();
    let data = dir.join("data").display().to_string();
    let server = serve(
        &["--http", "127.0.0.1:0", "--config", path.to_str().unwrap()],
        &[("TG_ALICE", ALICE), ("XDG_DATA_HOME", &data)],
    );
    server.until_ready(&[("Authorization", &format!("Bearer {ALICE}"))]);
    server
}

fn find(spans: &[Value], pred: impl Fn(&Value) -> bool) -> &Value {
    spans.iter().find(|s| pred(s)).unwrap_or_else(|| panic!("no such span among {spans:#?}"))
}

#[test]
fn a_search_and_a_call_come_back_as_span_trees_under_the_clients_trace() {
    let dir = scratch("traces");
    let receiver = Receiver::start(&dir);
    let fx = Upstream::new(
        &dir,
        "fx",
        &[tool("create_issue", "Create an issue in the tracker."), tool("list_issues", "List issues.")],
    );
    let server = gateway(&dir, &fx, &format!("http://127.0.0.1:{}", receiver.port));

    // The search: the client's context in the HTTP header.
    let traceparent = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01");
    let found = call(
        &server,
        "tool_search",
        json!({"query": "create an issue"}),
        json!({}),
        &[("traceparent", &traceparent)],
    );
    assert!(
        found["result"]["structuredContent"]["matches"].to_string().contains("fx__create_issue"),
        "{found}"
    );
    // The call: the client's context in `_meta` (SEP-414), another span of the same trace.
    let call_parent = "b7ad6b7169203331";
    let answer = call(
        &server,
        "fx__create_issue",
        json!({"title": SECRET_ARGUMENT}),
        json!({"traceparent": format!("00-{CLIENT_TRACE}-{call_parent}-01")}),
        &[],
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");

    let spans = receiver.until("the spans of a search and a call", |spans| {
        spans.iter().any(|s| s["name"] == "tools/call upstream")
            && spans.iter().any(|s| s["name"] == "tool_search")
    });
    assert!(spans.iter().all(|s| s["service"] == "gateway-under-test" && s["scope"] == "toolgate"));
    assert!(spans.iter().all(|s| s["header"] == "k1"), "the configured headers go with each export");
    assert!(spans.iter().all(|s| s["end"].as_u64() >= s["start"].as_u64()));
    assert!(!serde_json::to_string(&spans).unwrap().contains(SECRET_ARGUMENT), "no argument value in a span");

    // The search's tree: the request under the client's span, the search under the request.
    let search =
        find(&spans, |s| s["name"] == "tools/call" && s["attributes"]["gen_ai.tool.name"] == "tool_search");
    assert_eq!(
        (search["trace_id"].as_str(), search["parent_span_id"].as_str()),
        (Some(CLIENT_TRACE), Some(CLIENT_SPAN))
    );
    assert_eq!(search["kind"], "server");
    let attributes = &search["attributes"];
    assert_eq!(attributes["mcp.protocol.version"], "2026-07-28");
    assert_eq!(attributes["network.transport"], "http");
    assert_eq!(attributes["toolgate.subject"], "main");
    let searched = find(&spans, |s| s["name"] == "tool_search");
    assert_eq!(searched["parent_span_id"], search["span_id"]);
    assert_eq!(searched["trace_id"], CLIENT_TRACE);
    assert_eq!(searched["attributes"]["toolgate.search.query"], "create an issue");
    assert!(searched["attributes"]["toolgate.search.hits"].as_i64().unwrap() >= 1, "{searched}");

    // The call's tree: the request under the client's other span; the check and the upstream
    // call under the request.
    let request = find(&spans, |s| {
        s["name"] == "tools/call" && s["attributes"]["gen_ai.tool.name"] == "fx__create_issue"
    });
    assert_eq!(
        (request["trace_id"].as_str(), request["parent_span_id"].as_str()),
        (Some(CLIENT_TRACE), Some(call_parent))
    );
    let check = find(&spans, |s| s["name"] == "check");
    assert_eq!(check["parent_span_id"], request["span_id"]);
    assert_eq!(check["attributes"]["toolgate.decision"], "allowed");
    assert_eq!(check["attributes"]["toolgate.server"], "fx");
    let upstream = find(&spans, |s| s["name"] == "tools/call upstream");
    assert_eq!(upstream["parent_span_id"], request["span_id"]);
    assert_eq!(upstream["kind"], "client");
    assert_eq!(upstream["attributes"]["toolgate.outcome"], "ok");
    assert_eq!(upstream["attributes"]["toolgate.upstream.tool"], "create_issue");

    // The upstream received the trace, under the upstream call's span.
    let log = std::fs::read_to_string(&fx.log).unwrap();
    let received: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    let upstream_span = upstream["span_id"].as_str().unwrap();
    assert_eq!(received["traceparent"], format!("00-{CLIENT_TRACE}-{upstream_span}-01"), "{received}");

    // A refused call: its check says why and fails.
    call(&server, "fx__no_such_tool", json!({}), json!({}), &[]);
    let spans = receiver.until("the refused call's check", |spans| {
        spans.iter().any(|s| s["name"] == "check" && s["attributes"]["toolgate.decision"] != "allowed")
    });
    let refused = find(&spans, |s| s["name"] == "check" && s["attributes"]["toolgate.decision"] != "allowed");
    assert_eq!(refused["status"]["code"], 2, "{refused}");
}

#[test]
fn with_the_collector_down_requests_go_on_and_spans_are_counted_as_dropped() {
    let dir = scratch("traces-down");
    let fx = Upstream::new(&dir, "fx", &[tool("list_issues", "List issues.")]);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = gateway(&dir, &fx, &format!("http://127.0.0.1:{closed}"));
    let started = Instant::now();
    for _ in 0..20 {
        let answer = call(&server, "fx__list_issues", json!({}), json!({}), &[]);
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    assert!(started.elapsed() < Duration::from_secs(10), "no request waits for the collector");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let dropped = support::metric(&server.addr, ALICE, "toolgate_trace_spans_dropped_total ");
        if dropped >= 60.0 {
            break;
        }
        assert!(Instant::now() < deadline, "3 spans a call, 20 calls, all dropped: {dropped}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(server.log().contains("did not take"), "the gateway says the collector did not take spans");
}
