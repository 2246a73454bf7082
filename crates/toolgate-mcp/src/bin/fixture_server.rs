//! `toolgate-fixture-server`: a tiny MCP server on stdio for toolgate's own tests.
//!
//! Tools: `echo {text}` answers the text; `slow {ms}` sleeps that long, then answers;
//! `grow` adds a tool `extra` and sends `notifications/tools/list_changed`; `core_ping` is
//! marked `_meta["anthropic/alwaysLoad"]`. `tools/list` is paginated, two tools a page, so that
//! a client must follow `nextCursor`.
//!
//! Environment: `FIXTURE_CRASH_ON=TOOL` makes the process exit in the middle of a call to TOOL;
//! `FIXTURE_NAME` prefixes the descriptions (to tell two instances apart).
//!
//! `FIXTURE_GARBAGE` makes it write lines to stdout that are not MCP messages (plain text, half a
//! JSON object, binary bytes, and in some modes a response to a request nobody sent):
//! `start` writes the noise before anything else, then serves normally; `stray` writes a response
//! with an unknown id before anything else, then serves; `middle` serves normally but writes every
//! kind of garbage, stray response included, before each message after the `initialize` answer;
//! `only` never serves and answers every line it reads with noise.
//!
//! `FIXTURE_EXTRAS=1` adds what is not tools: two more tools, `log {level, text}` (sends a
//! `notifications/message` with logger `fixture`) and `cancel_count` (how many calls of `slow`
//! were cancelled by their client), `ask {question}` (puts the question to the client with
//! `elicitation/create` and answers `answered: RESULT` or `not answered: ERROR`); a prompt
//! `greet {name}`; `task {ms}` (works ms milliseconds: as a task, for a client that declared the
//! tasks extension, which `tasks/get` reports and `tasks/cancel` cancels); a resource `fixture://readme` and a
//! template `fixture://notes/{id}`; completions of `greet`'s `name` (`alice`, `alex`, `bob`,
//! those that start with what was typed).
//!
//! `FIXTURE_START_MS=N` makes it wait N milliseconds before it reads anything (a server that is
//! slow to start, as `npx -y` ones are). `FIXTURE_PROTOCOL=2025-11-25` makes it speak that
//! revision and older only (a `server/discover` probe is refused as most servers today refuse
//! it); by default it speaks every revision rmcp knows, 2026-07-28 included.
//!
//! `FIXTURE_PAGE_SIZE=N` lists N tools a page instead of two (a bench set's server of a
//! thousand tools, served as its publisher would). `FIXTURE_TOOLS=FILE` serves the tools of FILE (a JSON array of MCP tool objects, as a hostile
//! or changing upstream would list them) in place of the four above; a call of one of them
//! answers `ran NAME`. The file is read again every 50 ms, and a change sends
//! `notifications/tools/list_changed` (rename, redefine, grow or shrink a listing from a test).
//! `FIXTURE_ENDLESS=1` makes `tools/list` page forever, with new tools on every page.
//! `FIXTURE_LOG=FILE` appends one JSON line `{"tool", "arguments"}` per `tools/call` it receives,
//! so a test can prove that a refused call never reached it.
//!
//! `FIXTURE_FLOOD=N` adds two tools: `flood {every_ms}` starts sending N
//! `notifications/tools/list_changed` in the background (a burst when `every_ms` is 0, else one
//! every `every_ms` milliseconds) and adds the tool `extra` just before the last one;
//! `list_count` answers how many times a client has listed the tools (first pages only).
// A test fixture talks to its log on stderr; stdout is the MCP channel.
#![allow(clippy::print_stderr)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CompleteRequestParams,
    CompleteResult, CompletionInfo, ContentBlock, CreateTaskResult, DetailedTask, ElicitRequest,
    ElicitRequestParams, GetPromptRequestParams, GetPromptResponse, GetPromptResult, GetTaskParams,
    GetTaskResult, JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, MetaObject, PaginatedRequestParams, ProgressNotificationParam, Prompt, PromptArgument,
    PromptMessage, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig, ServerRequest,
    Task, TaskPayload, TaskStatus, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

const PAGE: usize = 2;

/// Tools a page of `tools/list`: `FIXTURE_PAGE_SIZE`, else [`PAGE`].
fn page_size() -> usize {
    std::env::var("FIXTURE_PAGE_SIZE").ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(PAGE)
}

/// The creation and update time of every task (the fixture's tasks need no real clock).
const STAMP: &str = "2026-01-01T00:00:00Z";

/// Lines that are not MCP messages and that no client can answer: plain text, half a JSON
/// object, and bytes that are not even UTF-8.
const NOISE: &[&[u8]] = &[
    b"fixture: this line is not JSON at all\n",
    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"half\n",
    b"\x00\xff\xfe\x80\x1b[31mbinary\x07\n",
];

/// A well-formed JSON-RPC response to a request that nobody sent.
const STRAY: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":987654,\"result\":{}}\n";

#[derive(Clone, Default)]
struct Fixture {
    /// The tasks `task` made, with when each is done and whether it was cancelled.
    tasks: Arc<std::sync::Mutex<std::collections::HashMap<String, (std::time::Instant, bool)>>>,
    grown: Arc<AtomicBool>,
    /// How many times `tools/list` was asked for its first page.
    lists: Arc<AtomicUsize>,
    /// How many calls of `slow` were cancelled.
    cancelled: Arc<AtomicUsize>,
}

/// Whether `FIXTURE_EXTRAS` asks for logging, prompts and resources.
fn extras() -> bool {
    std::env::var("FIXTURE_EXTRAS").is_ok_and(|v| v == "1")
}

/// How many notifications `flood` sends, from `FIXTURE_FLOOD`; `None` leaves the tool out.
fn flood_count() -> Option<u64> {
    std::env::var("FIXTURE_FLOOD").ok().and_then(|n| n.parse().ok())
}

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    let prefix = std::env::var("FIXTURE_NAME").unwrap_or_default();
    let Value::Object(schema) = schema else { unreachable!("schemas here are objects") };
    Tool::new(name.to_owned(), format!("{prefix}{description}"), Arc::new(schema))
}

/// The tools of `FIXTURE_TOOLS`, if set: `None` when unset, the file's tools (none if it cannot
/// be read or parsed, which the fixture says on stderr) otherwise.
fn file_tools() -> Option<Vec<Tool>> {
    let path = std::env::var("FIXTURE_TOOLS").ok()?;
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    match serde_json::from_str::<Vec<Tool>>(&text) {
        Ok(tools) => Some(tools),
        Err(e) => {
            eprintln!("fixture: {path} is not a JSON array of tools: {e}");
            Some(Vec::new())
        }
    }
}

/// Appends the call to `FIXTURE_LOG`, if set, with the W3C `traceparent` its `_meta` carried.
fn log_call(name: &str, arguments: &JsonObject, traceparent: Option<&str>) {
    let Ok(path) = std::env::var("FIXTURE_LOG") else { return };
    let line = json!({"tool": name, "arguments": arguments, "traceparent": traceparent}).to_string();
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, format!("{line}\n").as_bytes()));
    if let Err(e) = appended {
        eprintln!("fixture: cannot append to {path}: {e}");
    }
}

/// Sends `tools/list_changed` whenever the file of `FIXTURE_TOOLS` changes.
async fn watch_tools(peer: rmcp::Peer<RoleServer>) {
    let Ok(path) = std::env::var("FIXTURE_TOOLS") else { return };
    let mut last = std::fs::read(&path).unwrap_or_default();
    loop {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = std::fs::read(&path).unwrap_or_default();
        if now != last {
            last = now;
            eprintln!("fixture: {path} changed; sending tools/list_changed");
            if peer.notify_tool_list_changed().await.is_err() {
                return;
            }
        }
    }
}

impl Fixture {
    fn tools(&self) -> Vec<Tool> {
        if let Some(tools) = file_tools() {
            return tools;
        }
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
        if flood_count().is_some() {
            tools.push(tool(
                "flood",
                "Send many tools/list_changed notifications.",
                json!({"type": "object", "properties": {"every_ms": {"type": "integer"}}}),
            ));
            tools.push(tool(
                "list_count",
                "Answer how many times the tools were listed.",
                json!({"type": "object"}),
            ));
        }
        if extras() {
            tools.push(tool(
                "log",
                "Send a log message.",
                json!({"type": "object", "properties": {"level": {"type": "string"}, "text": {"type": "string"}}}),
            ));
            tools.push(tool(
                "cancel_count",
                "Answer how many calls were cancelled.",
                json!({"type": "object"}),
            ));
            tools.push(tool(
                "task",
                "Work for ms milliseconds; as a task when the client follows tasks.",
                json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
            ));
            tools.push(tool(
                "ask",
                "Ask the user a question (elicitation/create) and answer what they said.",
                json!({"type": "object", "properties": {"question": {"type": "string"}}}),
            ));
        }
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
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        match std::env::var("FIXTURE_PROTOCOL").as_deref() {
            Ok("2025-11-25") => {
                std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
            }
            _ => std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
        }
    }

    fn get_info(&self) -> ServerConfig {
        if extras() {
            #[allow(deprecated)]
            let capabilities = ServerCapabilities::builder()
                .enable_logging()
                .enable_tasks()
                .enable_completions()
                .enable_prompts()
                .enable_resources()
                .enable_tools()
                .enable_tool_list_changed()
                .build();
            return ServerConfig::new(capabilities);
        }
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        eprintln!("fixture: log level set to {:?}", request.level);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let name = PromptArgument::new("name").with_description("Who to greet").with_required(true);
        let greet = Prompt::new("greet", Some("Greet someone by name."), Some(vec![name]));
        Ok(ListPromptsResult::with_all_items(vec![greet]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "greet" {
            return Err(ErrorData::invalid_params(format!("no prompt `{}`", request.name), None));
        }
        let who = request
            .arguments
            .unwrap_or_default()
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("nobody")
            .to_owned();
        let message = PromptMessage::new_text(Role::User, format!("Hello, {who}!"));
        Ok(GetPromptResponse::Complete(GetPromptResult::new(vec![message])))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        let Some(&(done, cancelled)) = tasks.get(&request.task_id) else {
            return Err(ErrorData::invalid_params(format!("no task `{}`", request.task_id), None));
        };
        let payload = if cancelled {
            TaskPayload::Cancelled
        } else if std::time::Instant::now() < done {
            TaskPayload::Working
        } else {
            let result =
                CallToolResult::success(vec![ContentBlock::text(format!("{} done", request.task_id))]);
            let Ok(Value::Object(result)) = serde_json::to_value(result) else {
                return Err(ErrorData::internal_error("a result that is not an object", None));
            };
            TaskPayload::Completed { result }
        };
        let task = Task::new(request.task_id, TaskStatus::Working, STAMP, STAMP);
        Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        match tasks.get_mut(&request.task_id) {
            Some(entry) => {
                entry.1 = true;
                Ok(())
            }
            None => Err(ErrorData::invalid_params(format!("no task `{}`", request.task_id), None)),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let typed = request.argument.value.as_str();
        let values: Vec<String> = ["alice", "alex", "bob"]
            .iter()
            .filter(|v| v.starts_with(typed))
            .map(|v| (*v).to_owned())
            .collect();
        let completion = CompletionInfo::new(values).map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CompleteResult::new(completion))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let readme = Resource::new("fixture://readme", "readme");
        Ok(ListResourcesResult::with_all_items(vec![readme]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let notes = ResourceTemplate::new("fixture://notes/{id}", "notes");
        Ok(ListResourceTemplatesResult::with_all_items(vec![notes]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let body = match uri.strip_prefix("fixture://notes/") {
            Some(id) => format!("note {id}"),
            None if uri == "fixture://readme" => "the fixture's readme".to_owned(),
            None => return Err(ErrorData::resource_not_found(format!("no resource `{uri}`"), None)),
        };
        let contents = ResourceContents::text(body, uri);
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(vec![contents])))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start: usize = request.and_then(|r| r.cursor).and_then(|c| c.parse().ok()).unwrap_or(0);
        if start == 0 {
            self.lists.fetch_add(1, Ordering::SeqCst);
        }
        if std::env::var_os("FIXTURE_ENDLESS").is_some() {
            // A server that pages forever, a new tool on every line of every page.
            let page: Vec<Tool> = (start..start + PAGE)
                .map(|i| {
                    let schema =
                        serde_json::json!({"type": "object"}).as_object().cloned().unwrap_or_default();
                    Tool::new(format!("endless_{i}"), "One more tool, forever", std::sync::Arc::new(schema))
                })
                .collect();
            let mut result = ListToolsResult::with_all_items(page);
            result.next_cursor = Some((start + PAGE).to_string());
            return Ok(result);
        }
        let all = self.tools();
        let size = page_size();
        let page: Vec<Tool> = all.iter().skip(start).take(size).cloned().collect();
        let mut result = ListToolsResult::with_all_items(page);
        if start + size < all.len() {
            result.next_cursor = Some((start + size).to_string());
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let traceparent = context.meta.get_traceparent().map(str::to_owned);
        log_call(&request.name, &args, traceparent.as_deref());
        if let Some(tools) = file_tools() {
            let known = tools.iter().any(|t| t.name == request.name);
            let answer =
                if known { format!("ran {}", request.name) } else { format!("no tool `{}`", request.name) };
            return Ok(CallToolResponse::Complete(if known {
                CallToolResult::success(vec![ContentBlock::text(answer)])
            } else {
                CallToolResult::error(vec![ContentBlock::text(answer)])
            }));
        }
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
                    () = context.ct.cancelled() => {
                        self.cancelled.fetch_add(1, Ordering::SeqCst);
                        eprintln!("fixture: `slow` was cancelled by its client");
                        text("cancelled")
                    }
                }
            }
            "grow" => {
                self.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                text("grown")
            }
            "flood" => {
                let count = flood_count().unwrap_or(0);
                let every = args.get("every_ms").and_then(Value::as_u64).unwrap_or(0);
                let peer = context.peer.clone();
                let grown = self.grown.clone();
                tokio::spawn(async move {
                    let mut tick = tokio::time::interval(Duration::from_millis(every.max(1)));
                    for sent in 1..=count {
                        if every > 0 {
                            tick.tick().await;
                        }
                        if sent == count {
                            grown.store(true, Ordering::SeqCst);
                        }
                        let _ = peer.notify_tool_list_changed().await;
                    }
                    eprintln!("fixture: sent {count} tools/list_changed");
                });
                text(format!("flooding {count}"))
            }
            "list_count" => text(self.lists.load(Ordering::SeqCst).to_string()),
            "cancel_count" => text(self.cancelled.load(Ordering::SeqCst).to_string()),
            "task" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                if !context.client_capabilities().is_some_and(|c| c.supports_tasks()) {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    return Ok(text(format!("done after {ms} ms, without a task")));
                }
                let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
                let id = format!("task-{}", tasks.len() + 1);
                tasks.insert(id.clone(), (std::time::Instant::now() + Duration::from_millis(ms), false));
                let task = Task::new(id, TaskStatus::Working, STAMP, STAMP).with_poll_interval_ms(50);
                CallToolResponse::Task(CreateTaskResult::new(task))
            }
            "ask" => {
                let question =
                    args.get("question").and_then(Value::as_str).unwrap_or("yes or no?").to_owned();
                let schema = json!({"type": "object", "properties": {"answer": {"type": "string"}}});
                let params: ElicitRequestParams = serde_json::from_value(
                    json!({"mode": "form", "message": question, "requestedSchema": schema}),
                )
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                let asked =
                    context.peer.send_request(ServerRequest::ElicitRequest(ElicitRequest::new(params)));
                match asked.await {
                    Ok(answer) => {
                        text(format!("answered: {}", serde_json::to_string(&answer).unwrap_or_default()))
                    }
                    Err(e) => text(format!("not answered: {e}")),
                }
            }
            "log" => {
                let level = args.get("level").cloned().unwrap_or_else(|| json!("warning"));
                #[allow(deprecated)]
                let level: rmcp::model::LoggingLevel = serde_json::from_value(level)
                    .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
                let said = args.get("text").cloned().unwrap_or(Value::Null);
                #[allow(deprecated)]
                let message =
                    rmcp::model::LoggingMessageNotificationParam::new(level, said).with_logger("fixture");
                #[allow(deprecated)]
                let _ = context.peer.notify_logging_message(message).await;
                text("logged")
            }
            other => CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(format!(
                "no tool `{other}`"
            ))])),
        })
    }
}

/// Writes `lines` to `out` and flushes it.
async fn write_lines(out: &mut tokio::io::Stdout, lines: &[&[u8]]) {
    for line in lines {
        let _ = out.write_all(line).await;
    }
    let _ = out.flush().await;
}

/// Copies the server's messages from `from` to stdout, a line at a time, with `garbage` before
/// each one after the first (the `initialize` answer).
async fn pump(from: tokio::io::DuplexStream, garbage: Vec<&'static [u8]>) {
    let mut from = tokio::io::BufReader::new(from);
    let mut out = tokio::io::stdout();
    let mut line = Vec::new();
    let mut first = true;
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if !first {
            write_lines(&mut out, &garbage).await;
        }
        first = false;
        write_lines(&mut out, &[&line]).await;
    }
}

/// Never serves: answers every line read from stdin with noise, until stdin ends.
async fn only_garbage() {
    let mut out = tokio::io::stdout();
    write_lines(&mut out, NOISE).await;
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(_)) = lines.next_line().await {
        write_lines(&mut out, NOISE).await;
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    eprintln!("fixture: starting");
    if let Some(ms) = std::env::var("FIXTURE_START_MS").ok().and_then(|v| v.parse().ok()) {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let garbage = std::env::var("FIXTURE_GARBAGE").unwrap_or_default();
    let served = match garbage.as_str() {
        "" => Fixture::default().serve(rmcp::transport::stdio()).await,
        "only" => {
            eprintln!("fixture: writing garbage instead of answering initialize");
            only_garbage().await;
            return;
        }
        mode => {
            let mut out = tokio::io::stdout();
            let mid: Vec<&'static [u8]> = match mode {
                "start" => {
                    write_lines(&mut out, NOISE).await;
                    Vec::new()
                }
                "stray" => {
                    write_lines(&mut out, &[STRAY]).await;
                    Vec::new()
                }
                "middle" => NOISE.iter().copied().chain([STRAY]).collect(),
                other => {
                    eprintln!("fixture: unknown FIXTURE_GARBAGE `{other}`");
                    std::process::exit(2);
                }
            };
            let (ours, theirs) = tokio::io::duplex(1 << 16);
            tokio::spawn(pump(theirs, mid));
            Fixture::default().serve((tokio::io::stdin(), ours)).await
        }
    };
    let service = match served {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fixture: initialize failed: {e}");
            std::process::exit(2);
        }
    };
    tokio::spawn(watch_tools(service.peer().clone()));
    let _ = service.waiting().await;
}
