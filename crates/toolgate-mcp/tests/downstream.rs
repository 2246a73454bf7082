//! The gateway as an MCP client sees it, with rmcp's own client: over `tokio::io::duplex`
//! against the `ServerHandler`, and over HTTP against a server bound to 127.0.0.1:0, both
//! serving the embedded catalog as a static upstream.

mod common;

use common::{Client, WAIT, check_golden, is_error, text};
use rmcp::model::{
    CallToolRequestParams, ClientConfig, ProtocolVersion, ServerNotification, SubscriptionFilter,
};
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use toolgate::Catalog;
use toolgate_mcp::config::{BudgetConfig, Config, Exposure, ProfileConfig};
use toolgate_mcp::{Gateway, Settings};

const PLAYWRIGHT_SHOT: &str = "playwright__playwright_screenshot";
const PUPPETEER_SHOT: &str = "puppeteer__puppeteer_screenshot";
const SCREENSHOT_QUERY: &str = "take a screenshot of a web page";

fn embedded(exposure: Exposure) -> Gateway {
    let settings = Settings { exposure: Some(exposure), ..Settings::default() };
    Gateway::builder(settings).catalog("embedded", &Catalog::embedded()).build().unwrap()
}

/// The embedded catalog under the policy of `config`.
fn embedded_with(settings: Settings, config: Config) -> Gateway {
    let gateway = Gateway::builder(settings).policy(config).build().expect("the configuration applies");
    gateway.add_catalog("embedded", &Catalog::embedded());
    gateway
}

#[tokio::test]
async fn a_search_loads_screenshot_tools_announces_them_and_lists_them_with_schemas() {
    let gateway = embedded(Exposure::Native);
    let mut client = Client::duplex(&gateway).await;
    // The embedded catalog is all MCP tools, so everything is deferred, and announced once.
    assert_eq!(client.names().await, ["tool_search"]);
    let info = client.service.peer_info().expect("the server introduced itself");
    let instructions = info.instructions.as_deref().unwrap_or_default();
    assert!(
        instructions.contains("<available-deferred-tools>\n12306-mcp: get-current-date, "),
        "{instructions}"
    );
    let playwright = instructions.lines().find(|l| l.starts_with("playwright: ")).expect("a playwright line");
    assert!(playwright.split(", ").any(|t| t.trim() == "playwright_screenshot"), "{playwright}");

    let result = client.call("tool_search", json!({"query": SCREENSHOT_QUERY})).await;
    assert!(!is_error(&result), "{}", text(&result));
    let body = text(&result);
    // The two screenshot tools and what else clears the relevance cut are loaded, not five.
    assert!(body.starts_with("Loaded ") && !body.starts_with("Loaded 5 "), "{body}");
    let structured = result.structured_content.clone().expect("structured content");
    let matches: Vec<&str> =
        structured["matches"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(&matches[..2], [PLAYWRIGHT_SHOT, PUPPETEER_SHOT]);
    assert_eq!(structured["already_loaded"], json!([]));
    assert_eq!(structured["pending_servers"], json!([]));
    client.list_changed().await;

    let tools = client.tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let loaded = structured["loaded"].as_array().unwrap().len();
    assert_eq!(names.len(), 1 + loaded, "{names:?}");
    assert_eq!(&names[..3], ["tool_search", PLAYWRIGHT_SHOT, PUPPETEER_SHOT]);
    let shot = &tools[1];
    assert_eq!(shot.input_schema["properties"]["width"]["type"], "number");

    // A server filter keeps the search to those servers.
    let filtered = client.call("tool_search", json!({"query": "screenshot", "servers": ["puppeteer"]})).await;
    assert_eq!(filtered.structured_content.unwrap()["matches"], json!([PUPPETEER_SHOT]));

    // The same search again loads nothing new and says so, without a notice.
    let again = client.call("tool_search", json!({"query": format!("select:{PLAYWRIGHT_SHOT}")})).await;
    assert!(text(&again).contains("Already loaded"), "{}", text(&again));
    assert!(!client.has_list_changed());
}

#[tokio::test]
async fn calls_are_gated_validated_and_answered_by_the_static_catalog() {
    let gateway = embedded(Exposure::Native);
    let client = Client::duplex(&gateway).await;

    let never_loaded = client.call(PLAYWRIGHT_SHOT, json!({"name": "x"})).await;
    assert!(is_error(&never_loaded));
    assert_eq!(
        text(&never_loaded),
        format!(
            "tool `{PLAYWRIGHT_SHOT}` is not loaded; load it first with tool_search {{\"query\": \"select:{PLAYWRIGHT_SHOT}\"}}, then call it"
        )
    );
    let unknown = client.call("no_such_tool", json!({})).await;
    assert!(text(&unknown).starts_with("no tool is named `no_such_tool`"), "{}", text(&unknown));

    client.call("tool_search", json!({"query": format!("select:{PLAYWRIGHT_SHOT}")})).await;
    let wrong_type = client.call(PLAYWRIGHT_SHOT, json!({"name": "x", "width": "wide"})).await;
    assert!(is_error(&wrong_type));
    let message = text(&wrong_type);
    assert!(message.contains("do not match its input schema"), "{message}");
    assert!(message.contains("`/width`"), "{message}");

    let demo = client.call(PLAYWRIGHT_SHOT, json!({"name": "x", "width": 800})).await;
    assert!(is_error(&demo));
    assert_eq!(
        text(&demo),
        format!("demo tool `{PLAYWRIGHT_SHOT}`, not connected: toolgate serves it from a static catalog")
    );
    // Every refusal is written the same way, wherever it arose: the gate's (never loaded,
    // unknown, wrong arguments) and the server's that cannot take an allowed call.
    let status = gateway.status();
    let reasons: Vec<&str> =
        status["refusals"].as_array().unwrap().iter().filter_map(|r| r["reason"].as_str()).collect();
    assert_eq!(reasons, ["not_connected", "invalid_arguments", "unknown", "not_loaded"], "{status}");

    let bad_search = client.call("tool_search", json!({"query": "x", "limit": 50})).await;
    assert!(is_error(&bad_search));
    assert!(text(&bad_search).contains("`/limit`"), "{}", text(&bad_search));
}

#[tokio::test]
async fn bridge_exposure_lists_two_tools_forever_and_call_tool_goes_through_the_gate() {
    let gateway = embedded(Exposure::Bridge);
    let mut client = Client::duplex(&gateway).await;
    assert_eq!(client.names().await, ["tool_search", "call_tool"]);

    let gated = client.call("call_tool", json!({"name": PUPPETEER_SHOT, "arguments": {"name": "x"}})).await;
    assert!(text(&gated).starts_with(&format!("tool `{PUPPETEER_SHOT}` is not loaded")), "{}", text(&gated));

    let found = client.call("tool_search", json!({"query": SCREENSHOT_QUERY, "limit": 2})).await;
    let body = text(&found);
    assert!(body.contains(&format!("- {PUPPETEER_SHOT}: {{")), "the schema is in the text: {body}");
    assert!(body.contains("\"encoded\""), "{body}");
    assert_eq!(client.names().await, ["tool_search", "call_tool"]);
    assert!(!client.has_list_changed());

    let invalid = client.call("call_tool", json!({"name": PUPPETEER_SHOT, "arguments": {"name": 3}})).await;
    assert!(text(&invalid).contains("do not match its input schema"), "{}", text(&invalid));
    let reached = client.call("call_tool", json!({"name": PUPPETEER_SHOT, "arguments": {"name": "x"}})).await;
    assert!(text(&reached).starts_with(&format!("demo tool `{PUPPETEER_SHOT}`")), "{}", text(&reached));
    let _ = client.changed.try_recv();
}

/// A gateway on 127.0.0.1:0; returns the MCP URL, the base URL and the shutdown token.
async fn serve_http(gateway: &Gateway) -> (String, String, CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    tokio::spawn(toolgate_mcp::http::serve(gateway.clone(), listener, shutdown.clone()));
    (format!("http://{addr}/mcp"), format!("{addr}"), shutdown)
}

/// A plain HTTP/1.1 GET, so the test needs no HTTP client of its own.
async fn get(addr: &str, path: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

#[tokio::test]
async fn two_http_sessions_keep_their_own_active_sets() {
    let gateway = embedded(Exposure::Native);
    let (url, addr, shutdown) = serve_http(&gateway).await;
    let mut first = Client::http(&url).await;
    let second = Client::http(&url).await;
    assert_eq!(first.names().await, ["tool_search"]);

    let (a, b) = tokio::join!(
        first.call("tool_search", json!({"query": format!("select:{PLAYWRIGHT_SHOT}")})),
        second.call("tool_search", json!({"query": "select:git__git_log"}))
    );
    assert!(!is_error(&a) && !is_error(&b), "{} / {}", text(&a), text(&b));
    first.list_changed().await;
    assert_eq!(first.names().await, ["tool_search", PLAYWRIGHT_SHOT]);
    assert_eq!(second.names().await, ["tool_search", "git__git_log"]);
    let refused = second.call(PLAYWRIGHT_SHOT, json!({"name": "x"})).await;
    assert!(text(&refused).contains("is not loaded"), "{}", text(&refused));

    let status = get(&addr, "/status.json").await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let body = &status[status.find("\r\n\r\n").unwrap() + 4..];
    let json: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    let mut active: Vec<String> = json["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["active"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_owned()).collect())
        .collect::<Vec<Vec<String>>>()
        .concat();
    active.sort();
    assert_eq!(active, ["git__git_log", PLAYWRIGHT_SHOT]);
    assert_eq!(json["servers"][0]["state"], "static");
    assert_eq!(json["servers"][0]["tools"], 527);
    let page = get(&addr, "/").await;
    assert!(page.contains("<h1>toolgate</h1>") && page.contains(PLAYWRIGHT_SHOT), "{page}");

    // A session that ends leaves the status page.
    first.service.cancel().await.unwrap();
    let one_left = |s: &Value| s["sessions"].as_array().is_some_and(|a| a.len() == 1);
    assert!(gateway.report().wait_until(WAIT, one_left).await, "{}", gateway.status());
    second.service.cancel().await.unwrap();
    shutdown.cancel();
}

#[tokio::test]
async fn the_wire_surfaces_match_their_golden_files() {
    let bridge = embedded(Exposure::Bridge);
    let client = Client::duplex(&bridge).await;
    check_golden("bridge_tools_list.json", &serde_json::to_value(client.tools().await).unwrap());

    let native = embedded(Exposure::Native);
    let client = Client::duplex(&native).await;
    let result = client.call("tool_search", json!({"query": SCREENSHOT_QUERY, "limit": 2})).await;
    check_golden("tool_search_result.json", &serde_json::to_value(&result).unwrap());
    check_golden("native_tools_list_after_search.json", &serde_json::to_value(client.tools().await).unwrap());
}

/// A search nothing fits, through the MCP surface: nothing loaded and no list change, the
/// nearest named, and the operator's list of searches the catalog could not serve has it.
#[tokio::test]
async fn a_search_nothing_fits_loads_nothing_and_the_operator_sees_it() {
    let gateway = embedded(Exposure::Native);
    let client = Client::duplex(&gateway).await;
    let before = client.tools().await.len();
    let result = client.call("tool_search", json!({"query": "tell me a joke about cats"})).await;
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured["nothing_fits"], true, "{structured}");
    assert_eq!(structured["loaded"], json!([]));
    assert!(!structured["also_found"].as_array().unwrap().is_empty(), "{structured}");
    assert!(text(&result).starts_with("Nothing in the catalog fits"), "{}", text(&result));
    assert_eq!(client.tools().await.len(), before, "nothing was loaded");
    let fitted = gateway.status()["timeline"]["nothing_fitted"].clone();
    assert!(fitted.to_string().contains("tell me a joke about cats"), "{fitted}");
}

#[tokio::test]
async fn a_profile_sees_only_the_tools_it_allows() {
    let profile = ProfileConfig {
        tools: vec!["playwright__*".into()],
        disallowed_tools: vec!["*__playwright_delete".into()],
    };
    let config = Config { profiles: [("browser".to_owned(), profile)].into(), ..Config::default() };
    let settings = Settings { profile: Some("browser".into()), ..Settings::default() };
    let gateway = embedded_with(settings, config);
    assert_eq!(gateway.status()["tools"], 31);
    let client = Client::duplex(&gateway).await;
    let found = client.call("tool_search", json!({"query": SCREENSHOT_QUERY, "limit": 3})).await;
    let matches = found.structured_content.unwrap()["matches"].clone();
    assert!(
        matches.as_array().unwrap().iter().all(|m| m.as_str().unwrap().starts_with("playwright__")),
        "{matches}"
    );
    let refused = client.call("playwright__playwright_delete", json!({"url": "x"})).await;
    assert!(text(&refused).contains("is not available to you"), "{}", text(&refused));
}

#[tokio::test]
async fn the_hard_budget_caps_the_tool_list_keeping_the_best_hits() {
    let config = Config { budget: BudgetConfig { first_turn: 3, dynamic: 3, hard: 3 }, ..Config::default() };
    let gateway = embedded_with(Settings::default(), config);
    let client = Client::duplex(&gateway).await;
    let found = client.call("tool_search", json!({"query": SCREENSHOT_QUERY, "limit": 3})).await;
    let structured = found.structured_content.unwrap();
    assert_eq!(structured["unloaded"].as_array().unwrap().len(), 1, "{structured}");
    assert_eq!(client.names().await, ["tool_search", PLAYWRIGHT_SHOT, PUPPETEER_SHOT]);
}

#[tokio::test]
async fn a_2026_07_28_client_on_its_own_connection_hears_list_changes_on_its_subscription() {
    let gateway = embedded(Exposure::Native);
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let server = gateway.server();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    let modern = vec![ProtocolVersion::V_2026_07_28];
    let client = ClientConfig::default()
        .serve_with_lifecycle(ours, ClientLifecycleMode::Discover { preferred_versions: modern })
        .await
        .expect("the client connects without initialize");
    let names = |r: rmcp::model::ListToolsResult| -> Vec<String> {
        r.tools.into_iter().map(|t| t.name.into()).collect()
    };
    assert_eq!(names(client.list_tools(None).await.unwrap()), ["tool_search"]);

    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut subscription = client.listen(filter).await.expect("the subscription is acknowledged");
    let Value::Object(args) = json!({"query": format!("select:{PLAYWRIGHT_SHOT}")}) else { unreachable!() };
    client.call_tool(CallToolRequestParams::new("tool_search").with_arguments(args)).await.unwrap();
    let notice = tokio::time::timeout(WAIT, subscription.next()).await.expect("a notice arrives").unwrap();
    assert!(matches!(notice, Some(ServerNotification::ToolListChangedNotification(_))), "{notice:?}");
    assert_eq!(names(client.list_tools(None).await.unwrap()), ["tool_search", PLAYWRIGHT_SHOT]);
}

#[tokio::test]
async fn each_http_session_sees_the_profile_of_its_path_or_header_and_nothing_more() {
    let reviewer = ProfileConfig {
        tools: vec!["git__*".into(), "github__*".into()],
        disallowed_tools: vec!["*__git_commit".into(), "*__git_push".into()],
    };
    let browser = ProfileConfig { tools: vec!["playwright__*".into()], disallowed_tools: Vec::new() };
    let config = Config {
        profiles: [("reviewer".to_owned(), reviewer), ("browser".to_owned(), browser)].into(),
        ..Config::default()
    };
    let gateway = embedded_with(Settings::default(), config);
    let (url, _addr, shutdown) = serve_http(&gateway).await;

    // By path.
    let by_path = Client::http(&format!("{url}/reviewer")).await;
    let found =
        by_path.call("tool_search", json!({"query": "git commit log status diff", "limit": 20})).await;
    let matches = found.structured_content.unwrap()["matches"].clone();
    let names: Vec<&str> = matches.as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert!(names.contains(&"git__git_log"), "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("git__") || n.starts_with("github__")), "{names:?}");
    assert!(!names.contains(&"git__git_commit"), "a disallowed tool was found: {names:?}");
    let by_name = by_path.call("tool_search", json!({"query": "select:git__git_commit"})).await;
    assert!(by_name.structured_content.unwrap()["loaded"].as_array().unwrap().is_empty());
    let refused = by_path.call("git__git_commit", json!({"repo_path": ".", "message": "x"})).await;
    assert!(text(&refused).contains("is not available to you"), "{}", text(&refused));

    // By header, on the plain endpoint.
    let by_header = Client::http_with_header(&url, "x-toolgate-profile", "browser").await.unwrap();
    let found = by_header.call("tool_search", json!({"query": "select:git__git_log"})).await;
    assert!(found.structured_content.unwrap()["loaded"].as_array().unwrap().is_empty());
    // Deferral is decided once per snapshot for every subject: a profile's few tools are
    // deferred too, and a search loads them.
    assert_eq!(by_header.names().await, ["tool_search"]);
    by_header.call("tool_search", json!({"query": format!("select:{PLAYWRIGHT_SHOT}")})).await;
    let names = by_header.names().await;
    assert!(names.contains(&PLAYWRIGHT_SHOT.to_owned()), "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("playwright__") || n == "tool_search"), "{names:?}");

    // A header naming no profile is refused at initialize; one contradicting the path too.
    let unknown = Client::http_with_header(&url, "x-toolgate-profile", "admin").await;
    assert!(unknown.is_err(), "an unknown profile must not open a session");
    let contradicting =
        Client::http_with_header(&format!("{url}/reviewer"), "x-toolgate-profile", "browser").await;
    assert!(contradicting.is_err(), "a header must not widen or change the path's profile");

    // The plain endpoint still sees everything; the status page shows each session's profile.
    let plain = Client::http(&url).await;
    let found = plain.call("tool_search", json!({"query": "select:git__git_commit"})).await;
    assert_eq!(found.structured_content.unwrap()["loaded"], json!(["git__git_commit"]));
    let profiles: Vec<Value> =
        gateway.status()["sessions"].as_array().unwrap().iter().map(|s| s["profile"].clone()).collect();
    for want in [json!("reviewer"), json!("browser"), Value::Null] {
        assert!(profiles.contains(&want), "{profiles:?}");
    }
    shutdown.cancel();
}

#[tokio::test]
async fn with_no_exposure_configured_codex_gets_bridge_and_other_clients_native() {
    use rmcp::model::{ClientCapabilities, Implementation, ProtocolVersion};
    let gateway =
        Gateway::builder(Settings::default()).catalog("embedded", &Catalog::embedded()).build().unwrap();
    let names = |r: rmcp::model::ListToolsResult| -> Vec<String> {
        r.tools.into_iter().map(|t| t.name.into()).collect()
    };
    for (client, want) in
        [("codex-mcp-client", vec!["tool_search", "call_tool"]), ("claude-code", vec!["tool_search"])]
    {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let server = gateway.server();
        tokio::spawn(async move {
            if let Ok(running) = server.serve(theirs).await {
                let _ = running.waiting().await;
            }
        });
        let info = ClientConfig::new(ClientCapabilities::default(), Implementation::new(client, "1.0"))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let peer = info.serve(ours).await.expect("initialize");
        assert_eq!(names(peer.list_tools(None).await.unwrap()), want, "{client}");
        let sessions = gateway.status()["sessions"].clone();
        let session = sessions
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["client"].as_str().unwrap().starts_with(client))
            .unwrap()
            .clone();
        assert_eq!(
            session["exposure"],
            if client.starts_with("codex") { "bridge" } else { "native" },
            "{session}"
        );
    }
    assert_eq!(gateway.status()["exposure"], "auto");
}

/// A plain HTTP/1.1 POST of a JSON-RPC message to `/mcp`, with the session id if given; the
/// whole response (status line, headers, body).
async fn post(addr: &str, session: Option<&str>, body: Value) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = body.to_string();
    let session = session.map(|s| format!("Mcp-Session-Id: {s}\r\n")).unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n{session}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

/// A plain HTTP/1.1 `DELETE` of session `id`.
async fn delete(addr: &str, id: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {id}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
}

/// Opens a session over raw HTTP and returns its id.
async fn open_session(addr: &str) -> String {
    let response = post(addr, None, initialize()).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let id = response
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase().starts_with("mcp-session-id:").then(|| l[15..].trim().to_owned())
        })
        .expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(addr, Some(&id), initialized).await;
    id
}

#[tokio::test]
async fn an_idle_http_session_ends_after_its_setting_with_a_clear_error() {
    let settings = Settings {
        gateway: toolgate_mcp::config::GatewayConfig {
            session_idle: std::time::Duration::from_secs(3),
            ..Default::default()
        },
        ..Settings::default()
    };
    let gateway = Gateway::builder(settings).catalog("embedded", &Catalog::embedded()).build().unwrap();
    let (_url, addr, shutdown) = serve_http(&gateway).await;
    let list = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});

    let id = open_session(&addr).await;
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let alive = post(&addr, Some(&id), list(2)).await;
    assert!(alive.starts_with("HTTP/1.1 200") && alive.contains("tool_search"), "idle 2 s: {alive}");
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    let gone = post(&addr, Some(&id), list(3)).await;
    assert!(gone.starts_with("HTTP/1.1 404"), "idle 5 s: {gone}");
    assert!(gone.contains("session_idle_secs") && gone.contains("start a new session"), "{gone}");
    shutdown.cancel();
}

#[tokio::test]
async fn an_idle_http_session_hibernates_and_its_next_request_finds_what_it_loaded() {
    let second = std::time::Duration::from_secs(1);
    let settings = Settings {
        gateway: toolgate_mcp::config::GatewayConfig { session_hibernate: second, ..Default::default() },
        ..Settings::default()
    };
    let gateway = Gateway::builder(settings).catalog("embedded", &Catalog::embedded()).build().unwrap();
    let (_url, addr, shutdown) = serve_http(&gateway).await;
    let shot = "playwright__playwright_screenshot";
    let live = || gateway.status()["sessions"].as_array().map_or(0, Vec::len);
    let id = open_session(&addr).await;
    let search = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "tool_search", "arguments": {"query": format!("select:{shot}")}}});
    let found = post(&addr, Some(&id), search).await;
    assert!(found.starts_with("HTTP/1.1 200") && found.contains(shot), "{found}");
    // A second session keeps an event stream open: it stays, however quiet.
    let streaming = open_session(&addr).await;
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: {streaming}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200", "the event stream opens");
    assert_eq!(live(), 2);

    tokio::time::sleep(4 * second).await;
    assert_eq!(live(), 1, "the quiet session without a stream hibernated");
    let list = post(&addr, Some(&id), json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})).await;
    assert!(list.starts_with("HTTP/1.1 200"), "{list}");
    assert!(list.contains(shot), "what it loaded is listed again after the restore: {list}");
    assert_eq!(live(), 2, "restored beside the streaming one");
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": shot, "arguments": {"name": "page"}}});
    let called = post(&addr, Some(&id), call).await;
    assert!(!called.contains("not loaded") && !called.contains("never shown"), "{called}");
    drop(stream);
    // The stream gone, both sessions hibernate; DELETE ends a hibernated session.
    tokio::time::sleep(4 * second).await;
    assert_eq!(live(), 0, "both quiet and without a stream");
    let response = delete(&addr, &streaming).await;
    assert!(response.starts_with("HTTP/1.1 204"), "{response}");
    let gone =
        post(&addr, Some(&streaming), json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})).await;
    assert!(gone.starts_with("HTTP/1.1 404"), "{gone}");
    shutdown.cancel();
}

#[tokio::test]
async fn sessions_past_the_cap_are_refused_with_a_clear_error() {
    let settings = Settings {
        gateway: toolgate_mcp::config::GatewayConfig { max_sessions: 2, ..Default::default() },
        ..Settings::default()
    };
    let gateway = Gateway::builder(settings).catalog("embedded", &Catalog::embedded()).build().unwrap();
    let (_url, addr, shutdown) = serve_http(&gateway).await;
    open_session(&addr).await;
    open_session(&addr).await;
    let third = post(&addr, None, initialize()).await;
    assert!(third.starts_with("HTTP/1.1 503") && third.contains("max_sessions"), "{third}");
    shutdown.cancel();
}

#[tokio::test]
async fn delete_ends_a_session_with_204() {
    let gateway =
        Gateway::builder(Settings::default()).catalog("embedded", &Catalog::embedded()).build().unwrap();
    let (_url, addr, shutdown) = serve_http(&gateway).await;
    let id = open_session(&addr).await;
    let response = delete(&addr, &id).await;
    // The Python SDK logs `Session termination failed: 202` for rmcp's own answer.
    assert!(response.starts_with("HTTP/1.1 204"), "{response}");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let gone = post(&addr, Some(&id), list).await;
    assert!(gone.starts_with("HTTP/1.1 404"), "{gone}");
    shutdown.cancel();
}

#[tokio::test]
async fn a_catalog_upstreams_own_rules_hide_the_tools_it_serves_for_other_servers_and_name_the_rule() {
    // The embedded catalog holds the tools of many servers; its upstream's rules apply to them
    // all, as the policy's rule: a call is refused as not available, not as an unknown name.
    let rules = "[servers.embedded]\ncatalog = \"x\"\ndenied = [\"playwright_delete\"]\n";
    let config = Config::from_toml("toolgate.toml", rules, std::path::Path::new(".")).unwrap();
    let gateway = embedded_with(Settings::default(), config);
    let client = Client::duplex(&gateway).await;
    let found = client.call("tool_search", json!({"query": "select:playwright__playwright_delete"})).await;
    assert!(found.structured_content.unwrap()["loaded"].as_array().unwrap().is_empty());
    let refused = client.call("playwright__playwright_delete", json!({"url": "x"})).await;
    assert!(text(&refused).contains("is not available to you"), "{}", text(&refused));
    let shot = client.call("tool_search", json!({"query": format!("select:{PLAYWRIGHT_SHOT}")})).await;
    assert_eq!(shot.structured_content.unwrap()["loaded"], json!([PLAYWRIGHT_SHOT]), "the rest is served");
}

/// Sends `head` (with its header bytes as they are, not text) and an empty body; the whole
/// response.
async fn raw(addr: &str, head: &[u8]) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    String::from_utf8_lossy(&response).into_owned()
}

#[tokio::test]
async fn a_session_or_profile_header_that_is_not_text_names_nothing_and_is_refused() {
    let gateway = embedded(Exposure::Native);
    let (_url, addr, shutdown) = serve_http(&gateway).await;
    let id = open_session(&addr).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    for (verb, header) in [
        ("POST", [b"Mcp-Session-Id: ".as_slice(), id.as_bytes(), b"\xff"].concat()),
        ("DELETE", [b"Mcp-Session-Id: ".as_slice(), id.as_bytes(), b"\xff"].concat()),
        ("POST", b"X-Toolgate-Profile: r\xe9ader".to_vec()),
    ] {
        let head = [
            format!(
                "{verb} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
                list.len()
            )
            .as_bytes(),
            &header,
            b"\r\n\r\n",
            list.as_bytes(),
        ]
        .concat();
        let response = raw(&addr, &head).await;
        assert!(response.starts_with("HTTP/1.1 400"), "{verb}: {response}");
        assert!(response.contains("header is not text"), "{verb}: {response}");
    }
    // The session those requests came close to naming is still there, untouched.
    let listed = post(&addr, Some(&id), json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})).await;
    assert!(listed.starts_with("HTTP/1.1 200") && listed.contains("tool_search"), "{listed}");
    shutdown.cancel();
}
