//! The real agent CLIs run a whole task through `toolgate serve --stdio`, in front of the real
//! `server-filesystem` and `server-memory`, with a configuration as a new user writes it (no
//! `mode` or `exposure` line), registered with the snippet `docs/gateway.md` gives for each CLI.
//! The memory server takes 3 s to start, as `npx -y` servers do. Only the model is scripted:
//! `e2e/scripted_model.py` serves the provider API each CLI speaks on 127.0.0.1 and follows one
//! plan (call a never-loaded memory tool, search for "read the notes file", call the reader it
//! loaded, answer with the file).
//!
//! What each CLI's model reads is asserted, not only that the calls went through: its first
//! request offers toolgate's `tool_search` (never deferred by the CLI's own tool search, with no
//! variable set) and names every deferred tool, the slow server's included.
//!
//! - Claude Code (npm `@anthropic-ai/claude-code`) over Anthropic Messages via
//!   `ANTHROPIC_BASE_URL`: the request right after the search already lists the loaded reader.
//! - Codex CLI (npm `@openai/codex`) over OpenAI Responses via a model provider with
//!   `base_url`: toolgate picks bridge exposure for it (it ignores `list_changed`), and refuses
//!   the never-loaded call itself with the loading hint.
//! - Gemini CLI (npm `@google/gemini-cli`) over the Gemini API via `GOOGLE_GEMINI_BASE_URL`:
//!   it refuses the never-loaded name itself, and the model's `wait_for_previous` (an argument
//!   Gemini CLI adds to every MCP tool) does not break `tool_search`.
//!
//! - Claude Code again, registered as an `http` server against `toolgate serve --http`: it
//!   speaks 2026-07-28 there, with no session, so its model reads the bridge and its call
//!   carries the grant the search result showed it.
//! - Claude Code registered with a plain `claude mcp add`, which does not wait for its servers:
//!   toolgate, having seen the slow server before, answers at once and names its tools.
//! - Codex with a code-mode model (`gpt-6-sol`): toolgate's tools are declared inside `exec`,
//!   and the search, the refused never-loaded tool and the reader all run from JavaScript.
//! - GitHub Copilot CLI (npm `@github/copilot`, its own provider pointed at the scripted model,
//!   offline): it never shows its model a server's instructions, so toolgate's announcement
//!   comes in `tool_search`'s description.
//!
//! In all of them, the memory server never sees a call (its file is never written). The CLIs and
//! servers are installed by `e2e/setup.sh`; none needs an account.

mod support;

use support::{e2e, npm_bin as bin};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A task's folder: the notes file, the memory file's place, a toolgate configuration, a home.
struct Task {
    dir: PathBuf,
    notes: PathBuf,
    memory: PathBuf,
    config: PathBuf,
    home: PathBuf,
    log: PathBuf,
}

impl Task {
    fn new(name: &str) -> Task {
        let dir = std::env::temp_dir().join(format!("toolgate-agents-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = dir.join("files");
        let home = dir.join("home");
        std::fs::create_dir_all(&files).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let notes = files.join("notes.txt");
        std::fs::write(&notes, "buy oat milk\n").unwrap();
        let memory = dir.join("memory.jsonl");
        let config = dir.join("toolgate.toml");
        // The memory server starts 3 s late, as a server fetched by `npx -y` does. These tests
        // are about what each model reads once the servers are up; with five agent CLIs and
        // their servers starting at once on two cores, the default 5 s wait for upstreams
        // ran out before either server had listed its tools. The wait itself is held by
        // `crates/toolgate-mcp/tests/revisions.rs`.
        let slow_memory = format!("sleep 3; exec {}", bin("mcp-server-memory").display());
        std::fs::write(
            &config,
            format!(
                "[gateway]\nready_timeout_secs = 30\n\n[servers.filesystem]\ncommand = {:?}\nargs = [{:?}]\n\n[servers.memory]\ncommand = \"sh\"\n\
                 args = [\"-c\", {slow_memory:?}]\nenv = {{ MEMORY_FILE_PATH = {:?} }}\n",
                bin("mcp-server-filesystem").display().to_string(),
                files.display().to_string(),
                memory.display().to_string(),
            ),
        )
        .unwrap();
        let log = dir.join("model.jsonl");
        Task { dir, notes, memory, config, home, log }
    }

    /// `toolgate serve --stdio --config CONFIG`, as the CLI's MCP entry.
    fn toolgate_args(&self) -> Vec<String> {
        vec![
            env!("CARGO_BIN_EXE_toolgate").to_owned(),
            "serve".into(),
            "--stdio".into(),
            "--config".into(),
            self.config.display().to_string(),
        ]
    }

    /// Every request the scripted model received, in order.
    fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["body"].clone()).collect()
    }
}

/// Whether `text` (what a model read) names every deferred tool of the task's two servers, the
/// slow one's included: toolgate's announcement.
fn names_every_deferred_tool(text: &str) -> bool {
    text.contains("<available-deferred-tools>")
        && text.contains("filesystem: create_directory, ")
        && text.contains("memory: add_observations, create_entities, ")
}

/// The scripted model, on a port of its own; killed when dropped.
struct Model {
    child: Child,
    url: String,
}

impl Model {
    fn start(task: &Task) -> Model {
        let port_file = task.dir.join("port");
        let child = Command::new("python3")
            .arg(e2e().join("scripted_model.py"))
            .arg("--port-file")
            .arg(&port_file)
            .arg("--log")
            .arg(&task.log)
            .arg("--notes")
            .arg(&task.notes)
            .spawn()
            .expect("python3 runs");
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                break port;
            }
            assert!(Instant::now() < deadline, "the scripted model did not start");
            std::thread::sleep(Duration::from_millis(20));
        };
        Model { child, url: format!("http://127.0.0.1:{port}") }
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `command` to completion within two minutes; its stdout, or a panic with both streams.
fn run(command: &mut Command, what: &str) -> String {
    let out = command.stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("{what} does not run: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}", out.status);
    stdout
}

/// A command with a clean environment of its own: the task's home, no proxies or keys of the
/// machine, and `timeout` bounding it.
fn cli(task: &Task, program: &Path) -> Command {
    let mut command = Command::new("timeout");
    command.arg("120").arg(program);
    command.env_clear();
    command.env("PATH", std::env::var("PATH").unwrap_or_default());
    command.env("HOME", &task.home);
    command.current_dir(&task.dir);
    command
}

/// Registers toolgate in Claude Code as `docs/gateway.md` says: `claude mcp add-json` with
/// `alwaysLoad`, so that Claude Code waits for toolgate (and toolgate for its servers) before
/// the first request; with `plain`, `claude mcp add` as a user who skipped the snippet would.
fn claude_add(task: &Task, plain: bool) {
    let claude = bin("claude");
    let mut add = cli(task, &claude);
    if plain {
        add.args(["mcp", "add", "-s", "user", "toolgate", "--"]).args(task.toolgate_args());
    } else {
        let args = task.toolgate_args();
        let entry =
            serde_json::json!({"type": "stdio", "command": args[0], "args": args[1..], "alwaysLoad": true});
        add.args(["mcp", "add-json", "-s", "user", "toolgate", &entry.to_string()]);
    }
    run(&mut add, "claude mcp add");
    support::claude_trust(&task.home, &task.dir);
    let listed = run(cli(task, &claude).args(["mcp", "list"]), "claude mcp list");
    assert!(listed.contains("toolgate") && listed.contains("Connected"), "{listed}");
}

/// `claude -p "read the notes file"` against the scripted model, with no `ENABLE_TOOL_SEARCH`
/// set (Claude Code's own tool search is on by default); its answer.
fn claude_ask(task: &Task, model: &Model) -> Value {
    claude_ask_with(task, model, &[])
}

/// [`claude_ask`] with `envs` set as well.
fn claude_ask_with(task: &Task, model: &Model, envs: &[(&str, &str)]) -> Value {
    let mut ask = cli(task, &bin("claude"));
    ask.envs(envs.iter().copied());
    ask.args(["-p", "read the notes file", "--output-format", "json", "--allowedTools", "mcp__toolgate"])
        .env("ANTHROPIC_BASE_URL", &model.url)
        .env("ANTHROPIC_API_KEY", "sk-scripted")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    serde_json::from_str(&run(&mut ask, "claude -p")).expect("JSON output")
}

/// The Claude Code requests that carry toolgate's `tool_search` (the agent's turns).
fn claude_turns(task: &Task) -> Vec<Value> {
    task.requests()
        .into_iter()
        .filter(|b| {
            b["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["name"] == "mcp__toolgate__tool_search"))
        })
        .collect()
}

/// `tool_search` as Claude Code sent it to the model in `request`.
fn claude_search_tool(request: &Value) -> Value {
    let tools = request["tools"].as_array().unwrap();
    tools.iter().find(|t| t["name"] == "mcp__toolgate__tool_search").cloned().unwrap()
}

#[test]
fn claude_code_runs_a_task_through_toolgate_and_its_model_reads_every_deferred_tool_at_once() {
    let task = Task::new("claude");
    let model = Model::start(&task);
    claude_add(&task, false);
    let answer = claude_ask(&task, &model);
    assert_eq!(answer["result"], "The notes say: buy oat milk", "{answer}");

    let turns = claude_turns(&task);
    let names = |b: &Value| -> Vec<String> {
        b["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).map(str::to_owned).collect()
    };
    // Before the search: toolgate offers tool_search alone, not deferred behind Claude Code's
    // own tool search, and the model reads the announcement of every deferred tool, the slow
    // server's included (Claude Code puts server instructions in the messages).
    let first = &turns[0];
    assert!(
        names(first)
            .iter()
            .filter(|n| n.starts_with("mcp__toolgate__"))
            .eq(["mcp__toolgate__tool_search"].iter()),
        "{:?}",
        names(first)
    );
    assert_ne!(claude_search_tool(first)["defer_loading"], true, "tool_search must not be deferred");
    assert!(names_every_deferred_tool(&first["messages"].to_string()), "{}", first["messages"]);
    // The request right after the search result already lists the reader it loaded.
    let after = turns
        .iter()
        .find(|b| {
            b["messages"]
                .as_array()
                .unwrap()
                .iter()
                .rev()
                .take(2)
                .any(|m| m.to_string().contains("filesystem__read_text_file"))
        })
        .expect("a request carrying the search result");
    assert!(
        names(after).iter().any(|n| n == "mcp__toolgate__filesystem__read_text_file"),
        "{:?}",
        names(after)
    );
    // The never-loaded memory tool was refused before anything reached the memory server.
    let all = serde_json::to_string(&turns).unwrap();
    assert!(all.contains("No such tool available: mcp__toolgate__memory__create_entities"), "the refusal");
    assert!(!task.memory.exists(), "the memory server stored something");
}

#[test]
fn registered_plainly_claude_codes_first_request_names_a_slow_servers_tools_from_its_last_listing() {
    // `claude mcp add` with no alwaysLoad: Claude Code sends its first request without waiting
    // for its MCP servers. The memory server takes 3 s to start. toolgate has seen it before
    // (a first run that waited, as one registered with the snippet does), so the next start
    // answers at once, announcing the memory server's tools as it listed them last time.
    let task = Task::new("claude-plain-slow");
    let model = Model::start(&task);
    claude_add(&task, true);
    claude_ask_with(&task, &model, &[("MCP_CONNECTION_NONBLOCKING", "0")]);
    let kept = task.home.join(".local/share/toolgate/listings");
    let files = std::fs::read_dir(&kept).map(|d| d.count()).unwrap_or(0);
    assert!(files >= 2, "toolgate kept its servers' listings in {}: {files} files", kept.display());
    let before = task.requests().len();

    let answer = claude_ask(&task, &model);
    assert_eq!(answer["result"], "The notes say: buy oat milk", "{answer}");
    let turns: Vec<Value> = task.requests().into_iter().skip(before).collect();
    let first = turns
        .iter()
        .find(|b| b["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .expect("the agent's first request");
    let offered = first["tools"].to_string();
    assert!(offered.contains("mcp__toolgate__tool_search"), "toolgate is in the first request: {offered}");
    let read = first["messages"].to_string();
    assert!(names_every_deferred_tool(&read), "the slow server's tools are named at once: {read}");
    assert!(read.contains("Starting, with the tools they had last time"), "{read}");
    assert!(!task.memory.exists(), "the memory server stored something");
}

#[test]
fn claude_code_does_not_defer_tool_search_even_when_registered_without_the_snippet() {
    let task = Task::new("claude-plain");
    let model = Model::start(&task);
    // `claude mcp add` with no alwaysLoad, as a user who skipped the snippet, and toolgate on its
    // embedded catalog. Without alwaysLoad Claude Code sends its first request without waiting
    // for MCP servers, so whether toolgate is in it is a race with the binary's start (lost
    // when that took 3 s: tried); `MCP_CONNECTION_NONBLOCKING=0` makes this run wait, as
    // alwaysLoad would, so that what is checked is how the tool is sent.
    let claude = bin("claude");
    let mut add = cli(&task, &claude);
    add.args([
        "mcp",
        "add",
        "-s",
        "user",
        "toolgate",
        "--",
        env!("CARGO_BIN_EXE_toolgate"),
        "serve",
        "--stdio",
    ]);
    run(&mut add, "claude mcp add");
    claude_ask_with(&task, &model, &[("MCP_CONNECTION_NONBLOCKING", "0")]);
    let turns = claude_turns(&task);
    let first = turns.first().unwrap_or_else(|| panic!("toolgate's tool_search is not in any request's tools: deferred behind Claude Code's own tool search?"));
    // Claude Code's own tool search defers every MCP tool unless the tool is marked: toolgate's
    // tool_search is sent in full, and the model reads toolgate's announcement.
    assert_ne!(claude_search_tool(first)["defer_loading"], true, "{}", claude_search_tool(first));
    assert!(first["messages"].to_string().contains("<available-deferred-tools>"), "{}", first["messages"]);
}

/// Registers toolgate in Codex (`$CODEX_HOME/config.toml`) as `docs/gateway.md` says, with
/// `model`, against the scripted model; `codex exec "read the notes file"`'s output.
fn codex_ask(task: &Task, model: &Model, name: &str) -> String {
    let codex_home = task.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let args: Vec<String> = task.toolgate_args();
    // The snippet of docs/gateway.md: `required = true` makes Codex wait for toolgate before
    // its first request (an optional server that is still starting is left out of it),
    // `startup_timeout_sec` gives toolgate, waiting for its own servers, the time it needs, and
    // `omit_tools_from` keeps toolgate's tools out from behind Codex's own tool search.
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"{name}\"\nmodel_provider = \"scripted\"\n\n[model_providers.scripted]\nname = \"scripted\"\n\
             base_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"SCRIPTED_API_KEY\"\n\n\
             [mcp_servers.toolgate]\ncommand = {:?}\nargs = {:?}\ndefault_tools_approval_mode = \"approve\"\n\
             required = true\nstartup_timeout_sec = 60\nomit_tools_from = [\"deferred\"]\n",
            model.url, args[0], &args[1..]
        ),
    )
    .unwrap();
    let codex = bin("codex");
    let listed =
        run(cli(task, &codex).env("CODEX_HOME", &codex_home).args(["mcp", "list"]), "codex mcp list");
    assert!(listed.contains("toolgate"), "{listed}");
    let mut ask = cli(task, &codex);
    ask.env("CODEX_HOME", &codex_home).env("SCRIPTED_API_KEY", "scripted").args([
        "exec",
        "--skip-git-repo-check",
        "read the notes file",
    ]);
    run(&mut ask, "codex exec")
}

#[test]
fn codex_runs_a_task_through_toolgate_in_the_bridge_it_picks_for_codex() {
    let task = Task::new("codex");
    let model = Model::start(&task);
    let out = codex_ask(&task, &model, "gpt-5");
    assert!(out.contains("The notes say: buy oat milk"), "{out}");

    let requests = task.requests();
    let namespace = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "namespace" && t["name"] == "mcp__toolgate")
        .cloned()
        .expect("toolgate's tools as one namespace");
    let mut inner: Vec<&str> =
        namespace["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    inner.sort_unstable();
    assert_eq!(inner, ["call_tool", "tool_search"], "bridge exposure for Codex");
    // The model reads toolgate's instructions as the namespace's description: every deferred
    // tool, the slow server's included.
    let description = namespace["description"].as_str().unwrap_or_default();
    assert!(names_every_deferred_tool(description), "{description}");
    // toolgate itself refused the never-loaded call, with the loading hint.
    let all = serde_json::to_string(&requests).unwrap();
    assert!(all.contains(r#"select:memory__create_entities"#), "the loading hint reached the model");
    assert!(!task.memory.exists(), "the memory server stored something");
}

#[test]
fn gemini_cli_runs_a_task_through_toolgate_and_its_model_reads_every_deferred_tool() {
    let task = Task::new("gemini");
    let model = Model::start(&task);
    let gemini = bin("gemini");
    // The snippet of docs/gateway.md: a user-scope server, trusted (so that a non-interactive
    // run may call its tools without asking).
    let mut add = cli(&task, &gemini);
    add.args(["mcp", "add", "-s", "user", "--trust", "toolgate"]).args(task.toolgate_args());
    add.env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    run(&mut add, "gemini mcp add");
    // An API key (any: the endpoint is scripted), and no usage statistics to send.
    let settings = task.home.join(".gemini/settings.json");
    let mut written: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    written["security"] = serde_json::json!({"auth": {"selectedType": "gemini-api-key"}});
    written["privacy"] = serde_json::json!({"usageStatisticsEnabled": false});
    std::fs::write(&settings, written.to_string()).unwrap();

    let mut ask = cli(&task, &gemini);
    ask.args(["-p", "read the notes file", "--model", "gemini-2.5-flash", "--output-format", "json"])
        .env("GEMINI_API_KEY", "scripted")
        .env("GOOGLE_GEMINI_BASE_URL", &model.url)
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    let answer: Value = serde_json::from_str(&run(&mut ask, "gemini -p")).expect("JSON output");
    assert_eq!(answer["response"], "The notes say: buy oat milk", "{answer}");

    let requests = task.requests();
    let declared = |b: &Value| -> Vec<String> {
        b["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| t["functionDeclarations"].as_array().cloned().unwrap_or_default())
            .filter_map(|d| d["name"].as_str().map(str::to_owned))
            .collect()
    };
    let first =
        requests.iter().find(|b| declared(b).iter().any(|n| n.ends_with("tool_search"))).expect("a turn");
    let mine: Vec<String> = declared(first).into_iter().filter(|n| n.starts_with("mcp_toolgate_")).collect();
    assert_eq!(mine, ["mcp_toolgate_tool_search"], "toolgate offers tool_search alone at first");
    // Gemini CLI puts server instructions in the first user turn.
    assert!(names_every_deferred_tool(&first["contents"].to_string()), "{}", first["contents"]);
    // The reader the search loaded was offered on the next turn and ran.
    assert!(
        requests.iter().any(|b| declared(b).iter().any(|n| n == "mcp_toolgate_filesystem__read_text_file"))
    );
    assert!(!task.memory.exists(), "the memory server stored something");
}

/// Claude Code against `toolgate serve --http`, registered as an `http` server: it speaks
/// 2026-07-28 there (no session), so its model reads the bridge, and its call of the reader
/// carries the grant the search result showed next to the reader's schema.
#[test]
fn claude_code_over_http_runs_the_task_with_what_its_model_reads() {
    let task = Task::new("claude-http");
    let model = Model::start(&task);
    let config = task.config.display().to_string();
    let gateway = support::serve(&["--http", "127.0.0.1:0", "--config", &config], &[]);
    // An HTTP gateway runs before its clients come, as an operator starts it: its upstreams
    // are up when Claude Code connects. (Until they are, `server/discover` answers within the
    // 5 s Claude Code gives it, announcing what is ready: `tests/revisions.rs` in the gateway.)
    gateway.until_ready(&[]);
    let url = format!("http://{}/mcp", gateway.addr);
    let claude = bin("claude");
    let entry = serde_json::json!({"type": "http", "url": url, "alwaysLoad": true});
    run(
        cli(&task, &claude).args(["mcp", "add-json", "-s", "user", "toolgate", &entry.to_string()]),
        "claude mcp add",
    );
    let answer = claude_ask(&task, &model);
    assert_eq!(answer["result"], "The notes say: buy oat milk", "{answer}\n{}", gateway.log());

    let turns = claude_turns(&task);
    let mut offered: Vec<String> = turns[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| n.starts_with("mcp__toolgate__"))
        .map(str::to_owned)
        .collect();
    offered.sort();
    assert_eq!(
        offered,
        ["mcp__toolgate__call_tool", "mcp__toolgate__tool_search"],
        "the bridge\n{}",
        gateway.log()
    );
    // The gateway's log says when each upstream finished starting, should one be missing.
    let messages = turns[0]["messages"].to_string();
    assert!(names_every_deferred_tool(&messages), "{messages}\n{}", gateway.log());
    // The model read a grant in the search result, and its call of the reader carried it.
    let all = serde_json::to_string(&turns).unwrap();
    assert!(all.contains("grant: "), "the search result shows no grant");
    let carried = turns.iter().flat_map(|t| t["messages"].as_array().unwrap()).any(|m| {
        m["content"].as_array().is_some_and(|blocks| {
            blocks.iter().any(|b| b["type"] == "tool_use" && b["input"]["grant"].is_string())
        })
    });
    assert!(carried, "no tool_use carried a grant");
    assert!(!task.memory.exists(), "the memory server stored something");
}

#[test]
fn codex_code_mode_reaches_toolgate_from_inside_exec_and_the_invariant_holds() {
    // gpt-6-sol is one of the code-mode-only models of Codex 0.171's catalog: its model gets
    // one freeform `exec` tool that runs JavaScript, and MCP tools are `tools.NAME(...)` in it.
    let task = Task::new("codex-code");
    let model = Model::start(&task);
    let out = codex_ask(&task, &model, "gpt-6-sol");
    assert!(out.contains("The notes say: buy oat milk"), "{out}");

    let requests = task.requests();
    let first = &requests[0];
    let exec = first["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "additional_tools")
        .flat_map(|i| i["tools"].as_array().unwrap())
        .flat_map(|n| n["tools"].as_array().cloned().unwrap_or_default())
        .find(|t| t["type"] == "custom" && t["name"] == "exec")
        .expect("code mode: one exec tool");
    assert!(
        first["tools"].as_array().is_none_or(|t| t.is_empty()),
        "no other tool offered: {}",
        first["tools"]
    );
    // toolgate's two tools are declared inside exec, their descriptions as doc comments that
    // say how a loaded tool is run here.
    let declared = exec["description"].as_str().unwrap();
    for name in ["mcp__toolgate__tool_search", "mcp__toolgate__call_tool"] {
        assert!(declared.contains(&format!("declare const tools: {{ {name}(")), "{name} not declared");
    }
    let search_doc = &declared[declared.find("### `mcp__toolgate__tool_search`").expect("its section")..];
    assert!(search_doc.contains("Run a loaded tool on your next step with call_tool"), "{search_doc}");
    assert!(declared.contains("<available-deferred-tools>"), "the announcement reaches the model");
    // Every call went through exec: the search, the never-loaded tool (refused by toolgate,
    // never sent to the memory server) and the reader the search loaded.
    let scripts: Vec<String> = requests
        .iter()
        .flat_map(|b| b["input"].as_array().cloned().unwrap_or_default())
        .filter(|i| i["type"] == "custom_tool_call")
        .map(|i| i["input"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(scripts.iter().any(|s| s.contains("tools.mcp__toolgate__tool_search(")), "{scripts:?}");
    let all = serde_json::to_string(&requests).unwrap();
    assert!(all.contains("memory__create_entities` is not loaded"), "the refusal reached the model");
    assert!(!task.memory.exists(), "the memory server stored something");
}

#[test]
fn copilot_cli_reads_the_announcement_in_tool_search_and_runs_the_task() {
    // GitHub Copilot CLI with its own provider (BYOK) pointed at the scripted model, offline:
    // it shows its model the tools and never the server's instructions, so toolgate puts its
    // announcement in tool_search's description for it.
    let task = Task::new("copilot");
    let model = Model::start(&task);
    let home = task.home.join(".copilot");
    std::fs::create_dir_all(&home).unwrap();
    let args = task.toolgate_args();
    let entry = serde_json::json!({"type": "local", "command": args[0], "args": args[1..], "tools": ["*"]});
    std::fs::write(
        home.join("mcp-config.json"),
        serde_json::json!({"mcpServers": {"toolgate": entry}}).to_string(),
    )
    .unwrap();
    let mut ask = cli(&task, &bin("copilot"));
    ask.args(["-p", "read the notes file", "-s", "--no-auto-update"])
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_PROVIDER_BASE_URL", &model.url)
        .env("COPILOT_PROVIDER_TYPE", "anthropic")
        .env("COPILOT_PROVIDER_API_KEY", "scripted")
        .env("COPILOT_MODEL", "claude-sonnet-4.5")
        .env("COPILOT_ALLOW_ALL", "true");
    let out = run(&mut ask, "copilot -p");
    assert!(out.contains("The notes say: buy oat milk"), "{out}");

    let requests = task.requests();
    let first = requests
        .iter()
        .find(|b| {
            b["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["name"] == "toolgate-tool_search"))
        })
        .expect("a request offering toolgate's tool_search");
    let search =
        first["tools"].as_array().unwrap().iter().find(|t| t["name"] == "toolgate-tool_search").unwrap();
    assert_ne!(search["defer_loading"], true, "not deferred behind Copilot's own search: {search}");
    // The instructions never reach its model; the announcement does, in the tool's description.
    assert!(!first["messages"].to_string().contains("<available-deferred-tools>"));
    let described = search["description"].as_str().unwrap();
    assert!(names_every_deferred_tool(described), "{described}");
    let loaded = requests.iter().any(|b| {
        b["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "toolgate-filesystem__read_text_file"))
    });
    assert!(loaded, "the loaded reader joined the tool list");
    assert!(!task.memory.exists(), "the memory server stored something");
}
