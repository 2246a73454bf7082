//! Helpers shared by the gateway's integration tests: an rmcp client that records
//! `notifications/tools/list_changed`, progress and log messages, connected over `tokio::io::duplex` or over HTTP.

#![allow(dead_code)]
// Logging is deprecated in the newest protocol version, but relayed for the older ones.
#![allow(deprecated)]

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, JsonObject, LoggingMessageNotificationParam,
    ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::mpsc;
use toolgate_mcp::Gateway;

/// How long a test waits for something that should come at once.
pub const WAIT: Duration = Duration::from_secs(20);

/// A client that forwards every `tools/list_changed`, progress notification and log message to
/// a channel.
#[derive(Debug, Clone)]
pub struct Watcher {
    changed: mpsc::UnboundedSender<()>,
    progress: mpsc::UnboundedSender<ProgressNotificationParam>,
    logs: mpsc::UnboundedSender<LoggingMessageNotificationParam>,
}

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.logs.send(params);
    }
}

/// A connected test client and the notices it received.
pub struct Client {
    pub service: RunningService<RoleClient, Watcher>,
    pub changed: mpsc::UnboundedReceiver<()>,
    pub progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
    pub logs: mpsc::UnboundedReceiver<LoggingMessageNotificationParam>,
}

impl Client {
    /// A client of a new session of `gateway`, over an in-memory pipe.
    pub async fn duplex(gateway: &Gateway) -> Client {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let server = gateway.server();
        tokio::spawn(async move {
            if let Ok(running) = server.serve(theirs).await {
                let _ = running.waiting().await;
            }
        });
        Client::connect(ours).await
    }

    /// A client of a new HTTP session at `url`.
    pub async fn http(url: &str) -> Client {
        Client::connect(StreamableHttpClientTransport::from_uri(url.to_owned())).await
    }

    /// A client of a new HTTP session at `url` that sends `header: value` with every request,
    /// or the error of its `initialize`.
    pub async fn http_with_header(url: &str, header: &'static str, value: &str) -> Result<Client, String> {
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let headers = [(
            axum::http::HeaderName::from_static(header),
            axum::http::HeaderValue::try_from(value).map_err(|e| e.to_string())?,
        )];
        let config =
            StreamableHttpClientTransportConfig::with_uri(url.to_owned()).custom_headers(headers.into());
        let transport = StreamableHttpClientTransport::from_config(config);
        let (changed, changed_rx) = mpsc::unbounded_channel();
        let (progress, progress_rx) = mpsc::unbounded_channel();
        let (logs, logs_rx) = mpsc::unbounded_channel();
        let service =
            Watcher { changed, progress, logs }.serve(transport).await.map_err(|e| e.to_string())?;
        Ok(Client { service, changed: changed_rx, progress: progress_rx, logs: logs_rx })
    }

    async fn connect<T, E, A>(transport: T) -> Client
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let (changed, changed_rx) = mpsc::unbounded_channel();
        let (progress, progress_rx) = mpsc::unbounded_channel();
        let (logs, logs_rx) = mpsc::unbounded_channel();
        let service =
            Watcher { changed, progress, logs }.serve(transport).await.expect("the client connects");
        Client { service, changed: changed_rx, progress: progress_rx, logs: logs_rx }
    }

    /// The names `tools/list` returns.
    pub async fn names(&self) -> Vec<String> {
        self.tools().await.into_iter().map(|t| t.name.into_owned()).collect()
    }

    /// The tools `tools/list` returns.
    pub async fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.service.list_tools(None).await.expect("tools/list answers").tools
    }

    /// Calls `name` with `args` (a JSON object) and returns the result.
    pub async fn call(&self, name: &str, args: Value) -> CallToolResult {
        let Value::Object(args) = args else { panic!("arguments must be an object") };
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(args as JsonObject);
        self.service.call_tool(params).await.expect("tools/call answers")
    }

    /// Waits for one `tools/list_changed`; panics after [`WAIT`].
    pub async fn list_changed(&mut self) {
        tokio::time::timeout(WAIT, self.changed.recv())
            .await
            .expect("tools/list_changed arrives")
            .expect("the client is still running");
    }

    /// Whether a `tools/list_changed` has arrived without waiting.
    pub fn has_list_changed(&mut self) -> bool {
        self.changed.try_recv().is_ok()
    }
}

/// The text of a result's first content block.
pub fn text(result: &CallToolResult) -> String {
    result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default()
}

/// Whether a result is a tool error.
pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// Compares `actual` with `tests/golden/NAME`, or rewrites the file when `UPDATE_GOLDEN=1`.
pub fn check_golden(name: &str, actual: &Value) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    let actual = format!("{}\n", serde_json::to_string_pretty(actual).unwrap());
    if std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(&path, &actual).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read golden file {}: {e}\n(run with UPDATE_GOLDEN=1 to create it)", path.display())
    });
    assert!(
        expected == actual,
        "{} differs from the golden file (run with UPDATE_GOLDEN=1 to accept):\n{actual}",
        path.display()
    );
}
