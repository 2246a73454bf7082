//! `toolgate-fixture-server`: a tiny MCP server on stdio for toolgate's own tests.
//!
//! Tools: `echo {text}` answers the text; `slow {ms}` sleeps that long, then answers;
//! `grow` adds a tool `extra` and sends `notifications/tools/list_changed`; `core_ping` is
//! marked `_meta["anthropic/alwaysLoad"]`. `tools/list` is paginated, two tools a page, so that
//! a client must follow `nextCursor`.
//!
//! Environment: `FIXTURE_CRASH_ON=TOOL` makes the process exit in the middle of a call to TOOL;
//! `FIXTURE_NAME` prefixes the descriptions (to tell two instances apart).
// A test fixture talks to its log on stderr; stdout is the MCP channel.
#![allow(clippy::print_stderr)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject, ListToolsResult,
    MetaObject, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

const PAGE: usize = 2;

#[derive(Clone, Default)]
struct Fixture {
    grown: Arc<AtomicBool>,
}

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    let prefix = std::env::var("FIXTURE_NAME").unwrap_or_default();
    let Value::Object(schema) = schema else { unreachable!("schemas here are objects") };
    Tool::new(name.to_owned(), format!("{prefix}{description}"), Arc::new(schema))
}

impl Fixture {
    fn tools(&self) -> Vec<Tool> {
        let mut meta = JsonObject::new();
        meta.insert("anthropic/alwaysLoad".into(), Value::Bool(true));
        let mut tools = vec![
            tool("core_ping", "Answer pong.", json!({"type": "object", "properties": {}})),
            tool(
                "echo",
                "Echo a text back.",
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            ),
            tool(
                "slow",
                "Sleep for some milliseconds, then answer.",
                json!({"type": "object", "properties": {"ms": {"type": "integer"}}, "required": ["ms"]}),
            ),
            tool("grow", "Add the tool extra to the list.", json!({"type": "object", "properties": {}})),
        ];
        tools[0] = tools[0].clone().with_meta(MetaObject(meta));
        if self.grown.load(Ordering::SeqCst) {
            tools.push(tool("extra", "A tool that appeared later.", json!({"type": "object"})));
        }
        tools
    }
}

fn text(t: impl Into<String>) -> CallToolResponse {
    CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(t.into())]))
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start: usize = request.and_then(|r| r.cursor).and_then(|c| c.parse().ok()).unwrap_or(0);
        let all = self.tools();
        let page: Vec<Tool> = all.iter().skip(start).take(PAGE).cloned().collect();
        let mut result = ListToolsResult::with_all_items(page);
        if start + PAGE < all.len() {
            result.next_cursor = Some((start + PAGE).to_string());
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        if std::env::var("FIXTURE_CRASH_ON").is_ok_and(|t| t == request.name) {
            eprintln!("fixture: crashing in the middle of `{}` as asked", request.name);
            std::process::exit(3);
        }
        Ok(match request.name.as_ref() {
            "core_ping" => text("pong"),
            "echo" => text(args.get("text").and_then(Value::as_str).unwrap_or_default()),
            "slow" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                if let Some(token) = context.meta.get_progress_token() {
                    let step = ProgressNotificationParam::new(token, 1.0).with_total(2.0);
                    let _ = context.peer.notify_progress(step).await;
                }
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => text(format!("slept {ms} ms")),
                    () = context.ct.cancelled() => text("cancelled"),
                }
            }
            "grow" => {
                self.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                text("grown")
            }
            other => CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(format!(
                "no tool `{other}`"
            ))])),
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    eprintln!("fixture: starting");
    let service = match Fixture::default().serve(rmcp::transport::stdio()).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fixture: initialize failed: {e}");
            std::process::exit(2);
        }
    };
    let _ = service.waiting().await;
}
