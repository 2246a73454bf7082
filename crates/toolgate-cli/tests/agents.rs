//! The real agent CLIs run a whole task through `toolgate serve --stdio`, in front of the real
//! `server-filesystem` and `server-memory`, with a configuration as a new user writes it (no
//! `mode` or `exposure` line). Only the model is scripted: `e2e/scripted_model.py` serves the
//! provider API each CLI speaks on 127.0.0.1 and follows one plan (call a never-loaded memory
//! tool, search for "read the notes file", call the reader it loaded, answer with the file).
//!
//! - Claude Code (npm `@anthropic-ai/claude-code`) over Anthropic Messages via
//!   `ANTHROPIC_BASE_URL`: the request right after the search already lists the loaded reader.
//! - Codex CLI (npm `@openai/codex`) over OpenAI Responses via a model provider with
//!   `base_url`: toolgate picks bridge exposure for it (it ignores `list_changed`), and refuses
//!   the never-loaded call itself with the loading hint.
//!
//! In both, the memory server never sees a call (its file is never written). The CLIs and
//! servers are installed by `e2e/setup.sh`; both run without an account.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn e2e() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e").canonicalize().unwrap()
}

fn bin(name: &str) -> PathBuf {
    let path = e2e().join("node_modules/.bin").join(name);
    assert!(path.exists(), "{name} is not installed: run e2e/setup.sh (the README's test command does)");
    path
}

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
        std::fs::write(
            &config,
            format!(
                "[servers.filesystem]\ncommand = {:?}\nargs = [{:?}]\n\n[servers.memory]\ncommand = {:?}\nenv = {{ MEMORY_FILE_PATH = {:?} }}\n",
                bin("mcp-server-filesystem").display().to_string(),
                files.display().to_string(),
                bin("mcp-server-memory").display().to_string(),
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

#[test]
fn claude_code_runs_a_task_through_toolgate_and_sees_the_loaded_tool_at_once() {
    let task = Task::new("claude");
    let model = Model::start(&task);
    let claude = bin("claude");
    let mut add = cli(&task, &claude);
    add.args(["mcp", "add", "-s", "user", "toolgate", "--"]).args(task.toolgate_args());
    run(&mut add, "claude mcp add");
    let listed = run(cli(&task, &claude).args(["mcp", "list"]), "claude mcp list");
    assert!(listed.contains("toolgate") && listed.contains("Connected"), "{listed}");

    let mut ask = cli(&task, &claude);
    ask.args(["-p", "read the notes file", "--output-format", "json", "--allowedTools", "mcp__toolgate"])
        .env("ANTHROPIC_BASE_URL", &model.url)
        .env("ANTHROPIC_API_KEY", "sk-scripted")
        // Claude Code's own tool search would defer toolgate's tool_search behind another one.
        .env("ENABLE_TOOL_SEARCH", "false")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let answer: Value = serde_json::from_str(&run(&mut ask, "claude -p")).expect("JSON output");
    assert_eq!(answer["result"], "The notes say: buy oat milk", "{answer}");

    let turns: Vec<Value> = task
        .requests()
        .into_iter()
        .filter(|b| {
            b["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["name"] == "mcp__toolgate__tool_search"))
        })
        .collect();
    let names = |b: &Value| -> Vec<String> {
        b["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).map(str::to_owned).collect()
    };
    // Before the search: toolgate offers tool_search alone.
    let first = names(&turns[0]);
    assert!(
        first.iter().filter(|n| n.starts_with("mcp__toolgate__")).eq(["mcp__toolgate__tool_search"].iter()),
        "{first:?}"
    );
    // The request right after the search result already lists the reader it loaded.
    let after = turns
        .iter()
        .find(|b| {
            b["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .to_string()
                .contains("filesystem__read_text_file")
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
fn codex_runs_a_task_through_toolgate_in_the_bridge_it_picks_for_codex() {
    let task = Task::new("codex");
    let model = Model::start(&task);
    let codex_home = task.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let args: Vec<String> = task.toolgate_args();
    // Codex gives an MCP server 10 s to start unless told otherwise; a debug build of toolgate
    // starting its own upstreams on a loaded 2-core machine has taken longer, and Codex then
    // runs the task without it. Users set the same key for slow servers.
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"gpt-5\"\nmodel_provider = \"scripted\"\n\n[model_providers.scripted]\nname = \"scripted\"\n\
             base_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"SCRIPTED_API_KEY\"\n\n\
             [mcp_servers.toolgate]\ncommand = {:?}\nargs = {:?}\ndefault_tools_approval_mode = \"approve\"\n\
             startup_timeout_sec = 60\n",
            model.url, args[0], &args[1..]
        ),
    )
    .unwrap();
    let codex = bin("codex");
    let listed =
        run(cli(&task, &codex).env("CODEX_HOME", &codex_home).args(["mcp", "list"]), "codex mcp list");
    assert!(listed.contains("toolgate"), "{listed}");
    let mut ask = cli(&task, &codex);
    ask.env("CODEX_HOME", &codex_home).env("SCRIPTED_API_KEY", "scripted").args([
        "exec",
        "--skip-git-repo-check",
        "read the notes file",
    ]);
    let out = run(&mut ask, "codex exec");
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
    // toolgate itself refused the never-loaded call, with the loading hint.
    let all = serde_json::to_string(&requests).unwrap();
    assert!(all.contains(r#"select:memory__create_entities"#), "the loading hint reached the model");
    assert!(!task.memory.exists(), "the memory server stored something");
}
