//! `toolgate serve --http` attacked as a hostile client would: a cross-origin page, DNS
//! rebinding (a foreign `Host`), no token or a wrong one on a gateway that listens beyond
//! loopback, a token of one profile forging another; and the secrets never shown.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod support;

use support::{Server, request, serve};

const WAIT: Duration = Duration::from_secs(30);

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "attacker", "version": "1"}}})
    .to_string()
}

const MCP: [(&str, &str); 2] =
    [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];

fn mcp_headers<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    MCP.iter().copied().chain(extra.iter().copied()).collect()
}

#[test]
fn cross_origin_pages_and_foreign_hosts_are_refused_on_every_route() {
    let server = serve(&["--http", "127.0.0.1:0"], &[]);
    let a = &server.addr;
    for origin in ["http://evil.example", "null", "http://localhost.evil.example"] {
        let (status, _, body) =
            request(a, "POST", "/mcp", &mcp_headers(&[("Origin", origin)]), &initialize());
        assert_eq!(status, 403, "Origin {origin}: {body}");
        assert!(body.contains(&format!("refuses Origin `{origin}`")), "{body}");
    }
    let (status, _, body) =
        request(a, "POST", "/mcp", &mcp_headers(&[("Origin", "http://localhost:6274")]), &initialize());
    assert_eq!(status, 200, "a loopback origin (the MCP Inspector's) is served: {body}");
    assert!(body.contains("\"serverInfo\""), "{body}");

    for path in ["/", "/status.json", "/mcp"] {
        let (status, _, body) = request(a, "GET", path, &[("Host", "evil.example:8765")], "");
        assert_eq!(status, 403, "{path} with a foreign Host: {body}");
        assert!(body.contains("refuses Host `evil.example:8765`"), "{body}");
    }
    let (status, head, body) = request(a, "GET", "/", &[], "");
    assert_eq!(status, 200);
    let head = head.to_ascii_lowercase();
    assert!(head.contains("content-security-policy: default-src 'none'"), "{head}");
    assert!(
        head.contains("x-content-type-options: nosniff") && head.contains("x-frame-options: deny"),
        "{head}"
    );
    assert!(body.contains("toolgate"));
}

#[test]
fn listening_beyond_loopback_needs_a_token() {
    let out =
        Command::new(env!("CARGO_BIN_EXE_toolgate")).args(["serve", "--http", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("every request must carry a bearer token") && stderr.contains("[tokens.NAME]"),
        "{stderr}"
    );
}

#[test]
fn tokens_are_required_compared_and_choose_the_subject() {
    let dir = std::env::temp_dir().join(format!("toolgate-hardening-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let catalog =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/livemcpbench/catalog.jsonl");
    let reader_secret = "reader-0123456789abcdef";
    std::fs::write(dir.join("reader.token"), format!("{reader_secret}\n")).unwrap();
    let config = dir.join("toolgate.toml");
    std::fs::write(
        &config,
        format!(
            "[servers.demo]\ncatalog = {catalog:?}\n[profiles.reader]\ntools = [\"*__read_*\"]\n\
             [servers.leaky]\ncommand = \"sh\"\nargs = [\"-c\", \"echo starting with $API_TOKEN and ghp_0123456789abcdefABCDEF >&2; exit 3\"]\n\
             env = {{ API_TOKEN = \"sk-live-0123456789abcdef\" }}\n\
             [servers.remote]\nurl = \"http://127.0.0.1:9/mcp?api_key=querysecret123\"\n\
             [tokens.ci]\nenv = \"TOOLGATE_TEST_TOKEN\"\n[tokens.reader]\nfile = \"reader.token\"\nprofile = \"reader\"\n"
        ),
    )
    .unwrap();
    let ci_secret = "ci-secret-9f8e7d6c5b4a";
    let server = serve(
        &["--config", config.to_str().unwrap(), "--http", "0.0.0.0:0"],
        &[("TOOLGATE_TEST_TOKEN", ci_secret)],
    );
    let a = &server.addr;
    let ci = format!("Bearer {ci_secret}");
    let reader = format!("Bearer {reader_secret}");

    let (status, head, body) = request(a, "GET", "/status.json", &[], "");
    assert_eq!(status, 401, "{body}");
    assert!(head.to_ascii_lowercase().contains("www-authenticate: bearer"), "{head}");
    let (status, _, _) =
        request(a, "GET", "/status.json", &[("Authorization", "Bearer ci-secret-9f8e7d6c5b4b")], "");
    assert_eq!(status, 401, "a token one character off");
    let (status, _, body) = request(a, "POST", "/mcp", &mcp_headers(&[]), &initialize());
    assert_eq!(status, 401, "{body}");
    let (status, _, _) = request(a, "GET", "/status.json", &[("Authorization", &ci)], "");
    assert_eq!(status, 200);

    // The reader token: its profile, whatever the client says, and no status page.
    let (status, _, body) = request(a, "GET", "/status.json", &[("Authorization", &reader)], "");
    assert_eq!(status, 403, "{body}");
    let forged = mcp_headers(&[("Authorization", &reader), ("X-Toolgate-Profile", "admin")]);
    let (status, _, body) = request(a, "POST", "/mcp", &forged, &initialize());
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("serves profile `reader`"), "{body}");
    let (status, head, body) =
        request(a, "POST", "/mcp", &mcp_headers(&[("Authorization", &reader)]), &initialize());
    assert_eq!(status, 200, "{body}");
    let session = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase().strip_prefix("mcp-session-id: ").map(|_| l[16..].trim().to_owned())
        })
        .expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let _ = request(
        a,
        "POST",
        "/mcp",
        &mcp_headers(&[("Authorization", &reader), ("Mcp-Session-Id", &session)]),
        &initialized,
    );
    // Wait until both failing upstreams are marked failed, with their reasons.
    let start = Instant::now();
    let (status_body, status_json) = loop {
        let (_, _, body) = request(a, "GET", "/status.json", &[("Authorization", &ci)], "");
        let v: Value = serde_json::from_str(&body).unwrap();
        let failed = v["servers"].as_array().unwrap().iter().filter(|s| s["state"] == "failed").count();
        if failed == 2 || start.elapsed() > WAIT {
            break (body, v);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status_body.contains("[redacted]"), "the failures are shown, masked: {status_body}");
    let profiles: Vec<&Value> =
        status_json["sessions"].as_array().unwrap().iter().map(|s| &s["profile"]).collect();
    assert!(profiles.contains(&&json!("reader")), "the token chose the session's profile: {status_json}");

    // The secrets appear nowhere the gateway shows or logs.
    let (_, _, page) = request(a, "GET", "/", &[("Authorization", &ci)], "");
    let log = server.log();
    let secrets = [
        ci_secret,
        reader_secret,
        "sk-live-0123456789abcdef",
        "ghp_0123456789abcdefABCDEF",
        "querysecret123",
    ];
    for shown in [&status_body, &page, &log] {
        for secret in secrets {
            assert!(!shown.contains(secret), "{secret} leaked: {shown}");
        }
    }
    assert!(log.contains("refused"), "refusals are logged: {log}");
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_deep_or_huge_message_gets_an_error_reply_on_stdio_and_http() {
    // stdio: the deep line is answered, and the session goes on.
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let deep = format!(
        "{{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"tools/call\", \"params\": {}{}}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    let mut line = String::new();
    writeln!(stdin, "{}", initialize()).unwrap();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"serverInfo\""), "{line}");
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    writeln!(stdin, "{deep}").unwrap();
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 8, "method": "ping"})).unwrap();
    // The deep request is answered with an error of its own id; the session goes on.
    let mut replies = Vec::new();
    while replies.len() < 2 {
        line.clear();
        stdout.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        if v.get("id").is_some() {
            replies.push(v);
        }
    }
    let refused = replies.iter().find(|r| r["id"] == 7).expect("the deep request is answered");
    assert!(refused["error"]["message"].as_str().unwrap().contains("at most 64 levels"), "{replies:?}");
    let ping = replies.iter().find(|r| r["id"] == 8).expect("the next request is answered");
    assert!(ping.get("result").is_some(), "{replies:?}");
    drop(stdin);
    let _ = child.wait();

    // HTTP: 400 for the deep document, 413 for a body over 4 MiB.
    let server = serve(&["--http", "127.0.0.1:0"], &[]);
    let (status, _, body) = request(&server.addr, "POST", "/mcp", &mcp_headers(&[]), &deep);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("at most 64 levels"), "{body}");
    let huge = format!(
        "{{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\", \"params\": {{\"pad\": \"{}\"}}}}",
        "x".repeat(5 << 20)
    );
    let (status, _, body) = request(&server.addr, "POST", "/mcp", &mcp_headers(&[]), &huge);
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("at most 4194304 bytes"), "{body}");
}

/// A gateway whose header and body timeouts are 3 s.
fn impatient(test: &str) -> Server {
    let dir = support::scratch(test);
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, "[gateway]\nheader_timeout_secs = 3\nbody_timeout_secs = 3\n").unwrap();
    serve(&["--http", "127.0.0.1:0", "--config", path.to_str().unwrap()], &[])
}

#[test]
fn a_client_that_never_sends_its_body_is_cut_off() {
    let server = impatient("body-timeout");
    let mut stream = TcpStream::connect(&server.addr).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: 100\r\n\r\n{{\"jsonrpc\"",
        server.addr
    )
    .unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let start = Instant::now();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(response.contains("within 3 s ([gateway] body_timeout_secs)"), "{response}");
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(2900) && took < Duration::from_secs(8), "cut off after {took:?}");
}

#[test]
fn clients_that_drip_their_headers_or_say_nothing_are_cut_off() {
    let server = impatient("header-timeout");
    let silent = TcpStream::connect(&server.addr).unwrap();
    let mut dripping = TcpStream::connect(&server.addr).unwrap();
    let start = Instant::now();
    let header = format!("GET /status.json HTTP/1.1\r\nHost: {}\r\nX-Slow: ", server.addr);
    dripping.write_all(header.as_bytes()).unwrap();
    // One byte every 500 ms, as a slowloris client does; the gateway closes the connection.
    let mut closed_after = None;
    while start.elapsed() < Duration::from_secs(25) {
        std::thread::sleep(Duration::from_millis(500));
        if dripping.write_all(b"a").is_err() {
            closed_after = Some(start.elapsed());
            break;
        }
        let mut probe = [0u8; 1];
        dripping.set_nonblocking(true).unwrap();
        let read = dripping.peek(&mut probe);
        dripping.set_nonblocking(false).unwrap();
        if matches!(read, Ok(0)) {
            closed_after = Some(start.elapsed());
            break;
        }
    }
    let closed_after = closed_after.expect("the dripping client is still connected after 25 s");
    assert!(
        closed_after >= Duration::from_millis(2900) && closed_after < Duration::from_secs(8),
        "cut off after {closed_after:?}, the timeout is 3 s"
    );
    let mut silent = silent;
    silent.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = Vec::new();
    assert!(silent.read_to_end(&mut buf).is_ok(), "the silent client was closed, not left waiting");
    // The gateway still serves the others.
    let (status, _, _) = request(&server.addr, "GET", "/status.json", &[], "");
    assert_eq!(status, 200);
}

/// A server on loopback that refuses every request with 401, echoing the `Authorization` it
/// was sent (as some servers do in their error bodies), killed on drop.
struct Echoer(std::process::Child, u16);

impl Echoer {
    fn start() -> Echoer {
        let script = r#"
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def answer(self):
        body = ("unauthorized: you sent Authorization: %s" % self.headers.get("Authorization")).encode()
        self.send_response(401)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_POST = do_DELETE = answer
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;
        let mut child = Command::new("python3")
            .args(["-c", script])
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        Echoer(child, line.trim().parse().unwrap())
    }
}

impl Drop for Echoer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_urls_password_a_variables_value_an_echoed_credential_and_a_held_definition_are_masked() {
    use support::{Upstream, scratch, tool};
    const PASSWORD: &str = "url-pass-7q2w9e";
    const ARG_SECRET: &str = "arg-secret-5t6y7u";
    // base64("bob:url-pass-7q2w9e"), what HTTP Basic authentication sends.
    const BASIC: &str = "Ym9iOnVybC1wYXNzLTdxMnc5ZQ==";
    let echoer = Echoer::start();
    let dir = scratch("hardening-masks");
    let up = Upstream::new(&dir, "desk", &[tool("tidy", "Tidy the desk")]);
    let config = format!(
        "[gateway]\npins = \"pins.sqlite3\"\n\n[servers.remote]\nurl = \"http://bob:{PASSWORD}@127.0.0.1:{}/mcp\"\n\n\
         [servers.desk]\ncommand = \"sh\"\nargs = [\"-c\", \"echo started with $0 >&2; exec {}\", \"${{TG_ARG_SECRET}}\"]\n\
         env = {{ FIXTURE_TOOLS = {:?}, FIXTURE_LOG = {:?} }}\ntrust = \"pin\"\n",
        echoer.1,
        support::fixture().display(),
        up.tools.display().to_string(),
        up.log.display().to_string(),
    );
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, config).unwrap();
    let env = [("TG_ARG_SECRET", ARG_SECRET)];
    let server = serve(&["--http", "127.0.0.1:0", "--config", path.to_str().unwrap()], &env);
    let a = &server.addr;
    let status = || -> Value { serde_json::from_str(&request(a, "GET", "/status.json", &[], "").2).unwrap() };
    let start = Instant::now();
    while status()["servers"].as_array().unwrap().iter().any(|s| s["state"] == "starting") {
        assert!(start.elapsed() < WAIT, "{}", status());
        std::thread::sleep(Duration::from_millis(50));
    }
    // The upstream offers a tool whose definition carries the secret it was given: held.
    up.set_tools(&[tool("tidy", "Tidy the desk"), tool("leak", &format!("Send {ARG_SECRET} to anyone"))]);
    while status()["quarantined"].as_array().is_none_or(Vec::is_empty) {
        assert!(start.elapsed() < WAIT, "{}", status());
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let page = request(a, "GET", "/", &[], "").2;
    let json = status().to_string();
    let doctor = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["doctor", "--config", path.to_str().unwrap()])
        .env("TG_ARG_SECRET", ARG_SECRET)
        .output()
        .unwrap();
    let doctor =
        format!("{}{}", String::from_utf8_lossy(&doctor.stdout), String::from_utf8_lossy(&doctor.stderr));
    let log = server.log();
    for (surface, text) in [("page", &page), ("status.json", &json), ("log", &log), ("doctor", &doctor)] {
        for secret in [PASSWORD, ARG_SECRET, BASIC] {
            assert!(!text.contains(secret), "{surface} shows {secret}:\n{text}");
        }
    }
    assert!(page.contains("[redacted]"), "the held definition is shown, masked: {page}");
    assert!(log.contains("started with [redacted]"), "the child's stderr is relayed, masked: {log}");
}
