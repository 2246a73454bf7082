//! What the end-to-end tests of the gateway share: the fixture upstream with a tool list a
//! test rewrites and a log of the calls it received, and a client session with
//! `toolgate serve --stdio`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

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

/// A fresh folder for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgate-e2e-{}-{test}", std::process::id()));
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
        cmd.args(["serve", "--stdio", "--config"]).arg(&path).args(flags);
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
