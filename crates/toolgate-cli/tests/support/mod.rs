//! What the end-to-end tests of the gateway share: the fixture upstream with a tool list a
//! test rewrites and a log of the calls it received, and a client session with
//! `toolgate serve --stdio`; a `toolgate serve --http` process and raw HTTP requests to it.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// How long a test waits for something that should come at once.
pub const WAIT: Duration = Duration::from_secs(20);

/// The fixture upstream, built beside the `toolgate` binary by `cargo test --workspace`.
pub fn fixture() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_toolgate")).with_file_name("toolgate-fixture-server");
    assert!(bin.exists(), "{} is missing: run the tests with `cargo test --workspace`", bin.display());
    bin
}

/// The folder `e2e/setup.sh` installs the real servers, clients and agent CLIs into.
pub fn e2e() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e").canonicalize().expect("the e2e folder")
}

/// Runs `node e2e/SCRIPT ARGS` for at most `secs` seconds and returns the JSON object it printed
/// on its last line; the test fails with what it printed when that is not JSON, when it exited
/// with an error or when the object says `fatal`.
pub fn node_report(script: &str, args: &[&str], secs: u32) -> Value {
    let out = Command::new("timeout")
        .arg(secs.to_string())
        .arg("node")
        .arg(e2e().join(script))
        .args(args)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(stdout.trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|e| {
            panic!("{script} printed no JSON ({e}):\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr))
        });
    assert!(out.status.success() && report["fatal"].is_null(), "{script} failed: {report:#}");
    report
}

/// An npm program `e2e/setup.sh` installed (`node_modules/.bin/NAME`).
pub fn npm_bin(name: &str) -> PathBuf {
    let path = e2e().join("node_modules/.bin").join(name);
    assert!(path.exists(), "{name} is not installed: run e2e/setup.sh (the README's test command does)");
    path
}

/// Marks `folder` trusted in the Claude Code settings of `home` (`~/.claude.json`, which
/// `claude mcp add` has written), as answering its trust question once, by running `claude`
/// there, does. Since 2.1.337 `claude mcp list` does not start the servers of a folder not
/// trusted ("Not checked (folder not trusted; run `claude` here)").
pub fn claude_trust(home: &Path, folder: &Path) {
    let file = home.join(".claude.json");
    let text = std::fs::read_to_string(&file).expect("claude mcp add writes ~/.claude.json");
    let mut settings: Value = serde_json::from_str(&text).expect("~/.claude.json is JSON");
    settings["projects"][folder.display().to_string()]["hasTrustDialogAccepted"] = Value::Bool(true);
    std::fs::write(&file, settings.to_string()).unwrap();
}

/// A fresh folder for one test, its own even when two tests running at once give the same name
/// (a shared one was emptied under the other's feet).
pub fn scratch(test: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nth = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("toolgate-e2e-{}-{nth}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An MCP tool object as an upstream lists it.
pub fn tool(name: &str, description: &str) -> Value {
    json!({"name": name, "description": description, "inputSchema": {"type": "object", "properties": {}}})
}

/// One fixture upstream: its tools file and its call log.
pub struct Upstream {
    pub tools: PathBuf,
    pub log: PathBuf,
}

impl Upstream {
    pub fn new(dir: &Path, name: &str, tools: &[Value]) -> Upstream {
        let upstream = Upstream {
            tools: dir.join(format!("{name}-tools.json")),
            log: dir.join(format!("{name}-calls.jsonl")),
        };
        upstream.set_tools(tools);
        upstream
    }

    /// Rewrites the listing; the fixture notices within 50 ms and sends `list_changed`.
    pub fn set_tools(&self, tools: &[Value]) {
        let tmp = self.tools.with_extension("tmp");
        std::fs::write(&tmp, serde_json::to_string(tools).unwrap()).unwrap();
        std::fs::rename(&tmp, &self.tools).unwrap();
    }

    /// The config table of this upstream under `[servers.KEY]` (quoted), plus `extra` lines.
    pub fn table(&self, key: &str, extra: &str) -> String {
        format!(
            "[servers.{key:?}]\ncommand = {:?}\nenv = {{ FIXTURE_TOOLS = {:?}, FIXTURE_LOG = {:?}, FIXTURE_EXTRAS = \"1\" }}\n{extra}\n",
            fixture().display().to_string(),
            self.tools.display().to_string(),
            self.log.display().to_string(),
        )
    }

    /// The calls the upstream received, by tool name.
    pub fn calls(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["tool"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// A client that counts `tools/list_changed`.
#[derive(Debug, Clone)]
pub struct Watcher(mpsc::UnboundedSender<()>);

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

/// A session with `toolgate serve --stdio --config FILE`.
pub struct Session {
    pub service: RunningService<RoleClient, Watcher>,
    pub changed: mpsc::UnboundedReceiver<()>,
}

impl Session {
    pub async fn start(dir: &Path, config: &str, flags: &[&str]) -> Session {
        let path = dir.join("toolgate.toml");
        std::fs::write(&path, config).unwrap();
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"));
        // A data directory of the test's own: the keys and the remembered listings (a restart
        // in the same directory starts from the listings of the session before it).
        cmd.args(["serve", "--stdio", "--config"])
            .arg(&path)
            .args(flags)
            .env("XDG_DATA_HOME", dir.join("data"));
        let (transport, _) =
            TokioChildProcess::builder(cmd).stderr(Stdio::null()).spawn().expect("toolgate starts");
        let (tx, changed) = mpsc::unbounded_channel();
        let service = Watcher(tx).serve(transport).await.expect("initialize");
        Session { service, changed }
    }

    pub async fn names(&self) -> Vec<String> {
        let tools = self.service.peer().list_all_tools().await.unwrap();
        tools.into_iter().map(|t| t.name.to_string()).collect()
    }

    pub async fn call(&self, name: &str, args: Value) -> CallToolResult {
        let Value::Object(args) = args else { panic!("arguments are an object") };
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(args);
        self.service.call_tool(params).await.expect("tools/call answers")
    }

    pub async fn search(&self, query: &str) -> Value {
        let r = self.call("tool_search", json!({"query": query, "limit": 20})).await;
        r.structured_content.unwrap_or_default()
    }

    pub async fn list_changed(&mut self) {
        tokio::time::timeout(WAIT, self.changed.recv()).await.expect("list_changed arrives");
    }

    /// Forgets the `list_changed` notices received so far.
    pub fn drain(&mut self) {
        while self.changed.try_recv().is_ok() {}
    }

    /// Waits until no server is starting any more: a search names none pending or
    /// reconnecting. A gateway started again serves a server's last listing while the server
    /// starts; a test of what the live server does waits for it here.
    pub async fn settled(&self) {
        let deadline = tokio::time::Instant::now() + WAIT;
        let busy = |found: &Value, key: &str| found[key].as_array().is_some_and(|p| !p.is_empty());
        loop {
            let found = self.search("settled").await;
            if !busy(&found, "pending_servers") && !busy(&found, "reconnecting_servers") {
                return;
            }
            assert!(tokio::time::Instant::now() < deadline, "a server is still starting: {found}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The names a `tool_search` for `query` found.
    pub async fn found(&self, query: &str) -> Vec<String> {
        let v = self.search(query).await;
        v["matches"]
            .as_array()
            .map_or(Vec::new(), |m| m.iter().filter_map(|m| m.as_str().map(str::to_owned)).collect())
    }

    /// Waits until a search for `query` finds `name`: the running gateway took in a change
    /// (an approval, a server a reload added).
    pub async fn until_found(&self, query: &str, name: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while !self.found(query).await.iter().any(|n| n == name) {
            assert!(tokio::time::Instant::now() < deadline, "{name} was never served");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until a search for `query` finds nothing: the gateway has taken in an upstream's
    /// new listing that dropped it.
    pub async fn until_gone(&self, query: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while self.search(query).await["matches"] != json!([]) {
            assert!(tokio::time::Instant::now() < deadline, "the re-list never arrived");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

pub fn text(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

/// Whether a result is a refusal.
pub fn refused(r: &CallToolResult) -> bool {
    r.is_error == Some(true)
}

/// A `toolgate serve` process (killed on drop) and its stderr lines.
pub struct Server {
    pub child: Child,
    pub addr: String,
    pub stderr: std_mpsc::Receiver<String>,
    /// The lines read from `stderr` so far, those before the address included.
    seen: std::sync::Mutex<Vec<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Every line the gateway wrote to stderr so far, from its first.
    pub fn log(&self) -> String {
        let mut seen = self.seen.lock().unwrap();
        seen.extend(self.stderr.try_iter());
        seen.join("\n")
    }

    /// Waits until `/status.json` (asked with `headers`) lists servers and every one is
    /// ready, as an operator waits for a gateway before pointing clients at it: a minute at
    /// most, since an upstream may be an `npx` server starting on a loaded machine.
    pub fn until_ready(&self, headers: &[(&str, &str)]) {
        let deadline = Instant::now() + 3 * WAIT;
        loop {
            let (status, _, body) =
                request_whole(&self.addr, "GET", "/status.json", headers, "", Duration::from_secs(5));
            let json: Value = serde_json::from_str(&body).unwrap_or_default();
            let servers = json["servers"].as_array().cloned().unwrap_or_default();
            if status == 200 && !servers.is_empty() && servers.iter().all(|s| s["state"] == "ready") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the upstreams are not ready on {}: {status} {body}\n{}",
                self.addr,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Starts `toolgate serve ARGS` (with `--http`) and waits until it says where it listens.
pub fn serve(args: &[&str], envs: &[(&str, &str)]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("serve")
        .args(args)
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std_mpsc::channel();
    let pipe = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let start = Instant::now();
    let mut seen = Vec::new();
    let addr = loop {
        let line = rx.recv_timeout(WAIT).expect("toolgate prints where it listens");
        let addr = line
            .strip_prefix("toolgate: listening on http://")
            .map(|rest| rest.strip_suffix("/mcp").unwrap().replace("0.0.0.0", "127.0.0.1"));
        seen.push(line);
        if let Some(addr) = addr {
            break addr;
        }
        assert!(start.elapsed() < WAIT);
    };
    Server { child, addr, stderr: rx, seen: std::sync::Mutex::new(seen) }
}

/// Writes one HTTP/1.1 request (`Connection: close`) and returns the connection, its reads
/// timing out after `timeout`.
fn send(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
    timeout: Duration,
) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(timeout)).unwrap();
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    write!(stream, "{head}\r\n{body}").unwrap();
    stream
}

/// A reply's status, head and body.
fn split_reply(data: &[u8]) -> (u16, String, String) {
    let text = String::from_utf8_lossy(data).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

/// One HTTP/1.1 request with `headers`; returns the status, the head and the body read until
/// the reply is complete: an event stream's JSON-RPC result or error, or else the connection's
/// end.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = send(addr, method, path, headers, body, Duration::from_secs(5));
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
        // An event stream may stay open after its answer: stop at the answer. Anything else
        // is read to its end (the request said `Connection: close`).
        let text = String::from_utf8_lossy(&data);
        let streamed = text
            .split("\r\n\r\n")
            .next()
            .is_some_and(|head| head.to_ascii_lowercase().contains("text/event-stream"));
        if streamed && (text.contains("\"result\"") || text.contains("\"error\"")) {
            break;
        }
    }
    split_reply(&data)
}

/// Like [`request`], but reads the reply to the end of the connection (waiting up to
/// `timeout`) and joins a chunked body back together.
pub fn request_whole(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
    timeout: Duration,
) -> (u16, String, String) {
    let mut stream = send(addr, method, path, headers, body, timeout);
    let mut data = Vec::new();
    let _ = stream.read_to_end(&mut data);
    let (status, head, body) = split_reply(&data);
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    (status, head, if chunked { unchunk(&body) } else { body })
}

/// A chunked HTTP body joined back together.
fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            out.push_str(&rest[..size.min(rest.len())]);
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].strip_prefix("\r\n").unwrap_or(&rest[size..]);
    }
    out
}

/// A `redis-server` of its own on a free loopback port, with nothing saved to disk.
pub struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    pub fn start(dir: &Path) -> Redis {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .current_dir(dir)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server runs: install Debian's redis-server (e2e/setup.sh does)");
        let redis = Redis { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while redis.command("PING") != "+PONG" {
            assert!(Instant::now() < deadline, "redis-server did not answer PING");
            std::thread::sleep(Duration::from_millis(20));
        }
        redis
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// One inline command's first reply line ("" when Redis is not there yet).
    pub fn command(&self, command: &str) -> String {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return String::new();
        };
        stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let _ = write!(stream, "{command}\r\n");
        let mut buf = [0u8; 4096];
        let n = stream.read(&mut buf).unwrap_or(0);
        String::from_utf8_lossy(&buf[..n]).lines().next().unwrap_or_default().to_owned()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `tools/call` of `name` with `arguments` at 2026-07-28 over HTTP (no session) as the
/// bearer of `token`, with `meta` added to the request's `_meta` and `extra` headers: the
/// status, head and body.
pub fn call_2026(
    addr: &str,
    token: &str,
    name: &str,
    arguments: Value,
    meta: Value,
    extra: &[(&str, &str)],
) -> (u16, String, String) {
    let mut all_meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    all_meta.as_object_mut().unwrap().extend(meta.as_object().cloned().unwrap_or_default());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": all_meta}})
    .to_string();
    let bearer = format!("Bearer {token}");
    let mut headers = vec![
        ("Authorization", bearer.as_str()),
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ];
    headers.extend_from_slice(extra);
    request(addr, "POST", "/mcp", &headers, &body)
}

/// The value of the `/metrics` sample whose line starts with `sample` (name and labels), read
/// as the bearer of `token`; 0 when there is none.
pub fn metric(addr: &str, token: &str, sample: &str) -> f64 {
    let bearer = format!("Bearer {token}");
    let (_, _, text) = request_whole(addr, "GET", "/metrics", &[("Authorization", &bearer)], "", WAIT);
    text.lines()
        .find(|l| l.starts_with(sample))
        .and_then(|l| l.rsplit(' ').next())
        .map_or(0.0, |n| n.parse().unwrap())
}

/// One 2025-11-25 session over HTTP, as the bearer of a token, in raw requests.
pub struct HttpSession<'a> {
    addr: &'a str,
    path: String,
    bearer: String,
    id: String,
}

impl<'a> HttpSession<'a> {
    /// Opens a session at `path` (`/mcp` or `/mcp/NAME`) of the gateway at `addr` as `token`;
    /// the refusal's status when there is none.
    pub fn open(addr: &'a str, path: &str, token: &str) -> Result<HttpSession<'a>, u16> {
        let mut session =
            HttpSession { addr, path: path.to_owned(), bearer: format!("Bearer {token}"), id: String::new() };
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-session", "version": "1"}}});
        let (status, head, _) =
            request(session.addr, "POST", path, &session.headers(), &initialize.to_string());
        let id = head.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id").then(|| value.trim().to_owned())
        });
        match (status, id) {
            (200, Some(id)) => session.id = id,
            (status, _) => return Err(status),
        }
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        request(session.addr, "POST", path, &session.headers(), &note.to_string());
        Ok(session)
    }

    fn headers(&self) -> Vec<(&str, &str)> {
        let mut headers = vec![
            ("Authorization", self.bearer.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if !self.id.is_empty() {
            headers.push(("Mcp-Session-Id", self.id.as_str()));
            headers.push(("Mcp-Protocol-Version", "2025-11-25"));
        }
        headers
    }

    /// One request: its HTTP status, head and body.
    pub fn send(&self, method: &str, params: Value) -> (u16, String, String) {
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}).to_string();
        request(self.addr, "POST", &self.path, &self.headers(), &body)
    }

    /// One request: its HTTP status and JSON-RPC message.
    pub fn ask(&self, method: &str, params: Value) -> (u16, Value) {
        let (status, _, reply) = self.send(method, params);
        let data = reply.lines().filter_map(|l| l.strip_prefix("data: ")).find(|d| d.starts_with('{'));
        (status, serde_json::from_str(data.unwrap_or(&reply).trim()).unwrap_or(Value::Null))
    }

    /// A `tools/call`'s result with no arguments (the test fails on an HTTP or JSON-RPC error).
    pub fn call(&self, name: &str) -> Value {
        self.call_with(name, json!({}))
    }

    /// The names a `tool_search` for `query` matched (and loaded).
    pub fn search(&self, query: &str) -> Vec<String> {
        let result = self.call_with("tool_search", json!({"query": query}));
        let matches = result["structuredContent"]["matches"].as_array().cloned().unwrap_or_default();
        matches.iter().filter_map(|m| m.as_str().map(str::to_owned)).collect()
    }

    /// A `tools/call`'s result with `arguments` (the test fails on an HTTP or JSON-RPC error).
    pub fn call_with(&self, name: &str, arguments: Value) -> Value {
        let (status, message) = self.ask("tools/call", json!({"name": name, "arguments": arguments}));
        assert_eq!(status, 200, "{name}: {message}");
        message["result"].clone()
    }

    /// The names of `tools/list`.
    pub fn names(&self) -> Vec<String> {
        let (_, message) = self.ask("tools/list", json!({}));
        let tools = message["result"]["tools"].as_array().cloned().unwrap_or_default();
        tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect()
    }
}

/// The processes whose `/proc/PID/FILE` (`cmdline`, `environ`) meets `meets`.
pub fn processes_where(file: &str, meets: impl Fn(&str) -> bool) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let text = std::fs::read(entry.path().join(file)).unwrap_or_default();
        if meets(&String::from_utf8_lossy(&text)) {
            found.push(pid);
        }
    }
    found
}
