//! The client matrix: each cell is one real client, at the newest release `e2e/setup.sh`
//! installs, against the real `toolgate` binary in front of the real `server-filesystem` and
//! `server-memory`, in one protocol mode over one transport. Every cell lists the tools,
//! searches, calls the tool the search loaded (it returns the notes file's marker) and calls a
//! tool it never loaded (refused with the loading hint, and nothing reaches server-memory: its
//! file is never written). The revision the client negotiated is asserted too: today's clients
//! speak 2026-07-28 first, on stdio (the connection is the session) and over HTTP (no session:
//! bridge exposure, and the call presents the grant the search gave).
//!
//! Drivers: `e2e/matrix.mjs` (`@modelcontextprotocol/client` 2.x and `@modelcontextprotocol/sdk`
//! 1.x), `e2e/matrix.py` (the Python `mcp` SDK's `Client`), and the MCP Inspector CLI. Claude
//! Code, Codex CLI and Gemini CLI are in `tests/agents.rs`.

mod support;

use support::{e2e, npm_bin as bin};

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

const MARKER: &str = "buy oat milk";

/// One cell's folder: the notes file the filesystem server serves, the memory server's file
/// (which must never be written), and a configuration as a new user writes it.
struct Cell {
    dir: PathBuf,
    notes: PathBuf,
    memory: PathBuf,
    config: PathBuf,
}

impl Cell {
    fn new(name: &str, extra: &str) -> Cell {
        let dir = support::scratch(&format!("matrix-{name}"));
        let files = dir.join("files");
        std::fs::create_dir_all(&files).unwrap();
        let notes = files.join("notes.txt");
        std::fs::write(&notes, format!("{MARKER}\n")).unwrap();
        let memory = dir.join("memory.jsonl");
        let config = dir.join("toolgate.toml");
        std::fs::write(
            &config,
            format!(
                "{extra}[servers.filesystem]\ncommand = {:?}\nargs = [{:?}]\n\n[servers.memory]\ncommand = {:?}\n\
                 env = {{ MEMORY_FILE_PATH = {:?} }}\n",
                bin("mcp-server-filesystem").display().to_string(),
                files.display().to_string(),
                bin("mcp-server-memory").display().to_string(),
                memory.display().to_string(),
            ),
        )
        .unwrap();
        Cell { dir, notes, memory, config }
    }

    /// `toolgate serve --stdio --config CONFIG`, as a client's command and arguments.
    fn stdio_args(&self) -> (String, String) {
        let args = json!(["serve", "--stdio", "--config", self.config.display().to_string()]);
        (env!("CARGO_BIN_EXE_toolgate").to_owned(), args.to_string())
    }

    /// `toolgate serve --http` with this cell's configuration, and its MCP endpoint.
    fn http(&self) -> (support::Server, String) {
        let server =
            support::serve(&["--http", "127.0.0.1:0", "--config", &self.config.display().to_string()], &[]);
        let url = format!("http://{}/mcp", server.addr);
        (server, url)
    }

    /// The checks every cell shares, on the facts a driver printed.
    fn check(&self, facts: &Value, revision: &str, transport: &str) {
        assert_eq!(facts["protocol_version"], revision, "the negotiated revision: {facts}");
        // With no session, the search's grant is what lets the call run.
        let sessionless = transport == "http" && revision == "2026-07-28";
        let granted =
            facts["granted"].as_array().is_some_and(|g| g.iter().any(|n| n == "filesystem__read_text_file"));
        assert_eq!(granted, sessionless, "a grant exactly when there is no session: {facts}");
        let first = facts["first_list"].as_array().expect("the first tools/list");
        assert!(first.iter().any(|n| n == "tool_search"), "{facts}");
        let loaded = facts["loaded"].as_array().expect("what the search loaded");
        assert!(loaded.iter().any(|n| n == "filesystem__read_text_file"), "{facts}");
        assert_eq!(facts["marker"].as_str().map(str::trim), Some(MARKER), "the loaded tool ran: {facts}");
        let refusal = facts["refusal"].as_str().unwrap_or_default();
        assert!(refusal.contains("select:memory__create_entities"), "the loading hint: {facts}");
        assert!(!self.memory.exists(), "the refused call reached server-memory");
    }
}

impl Drop for Cell {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs a driver to completion (two minutes at most); its one JSON line.
fn facts(command: &mut Command, what: &str) -> Value {
    let out = command.output().unwrap_or_else(|e| panic!("{what} does not run: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout:\n{stdout}\nstderr (last 4000 bytes):\n{}",
        out.status,
        &stderr[stderr.len().saturating_sub(4000)..]
    );
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{what} printed no JSON line ({e}):\n{stdout}"))
}

/// Runs one cell: `driver` (a driver script's command, with its own arguments) pointed at the
/// gateway over `transport`, its facts checked, `revision` the one it must have negotiated.
fn run_cell(name: &str, mut driver: Command, transport: &str, revision: &str) {
    let cell = Cell::new(name, "");
    driver.args(["--transport", transport, "--notes"]).arg(&cell.notes);
    let _server;
    if transport == "http" {
        let (server, url) = cell.http();
        _server = server;
        driver.args(["--url", &url]);
    } else {
        let (command, args) = cell.stdio_args();
        driver.args(["--command", &command, "--args", &args]);
    }
    cell.check(&facts(&mut driver, name), revision, transport);
}

/// A TypeScript cell: `client` is `ts2` or `ts1`, `mode` `auto`, `legacy` or `pin`.
fn typescript(client: &str, mode: &str, transport: &str, revision: &str) {
    let mut node = Command::new("timeout");
    node.arg("120").arg("node").arg(e2e().join("matrix.mjs")).args(["--client", client, "--mode", mode]);
    run_cell(&format!("{client}-{mode}-{transport}"), node, transport, revision);
}

/// A Python cell: `mode` is `auto`, `legacy` or `2026-07-28`.
fn python(mode: &str, transport: &str, revision: &str) {
    let mut py = Command::new("timeout");
    py.arg("120").arg(e2e().join(".venv/bin/python")).arg(e2e().join("matrix.py")).args(["--mode", mode]);
    run_cell(&format!("py-{mode}-{transport}"), py, transport, revision);
}

#[test]
fn typescript_client_2_auto_over_stdio_speaks_2026_07_28() {
    typescript("ts2", "auto", "stdio", "2026-07-28");
}

#[test]
fn typescript_client_2_legacy_over_stdio() {
    typescript("ts2", "legacy", "stdio", "2025-11-25");
}

#[test]
fn typescript_client_2_pinned_to_2026_07_28_over_stdio() {
    typescript("ts2", "pin", "stdio", "2026-07-28");
}

#[test]
fn typescript_client_2_auto_over_http_speaks_2026_07_28_without_a_session() {
    typescript("ts2", "auto", "http", "2026-07-28");
}

#[test]
fn typescript_client_2_legacy_over_http() {
    typescript("ts2", "legacy", "http", "2025-11-25");
}

#[test]
fn typescript_sdk_1_over_stdio() {
    typescript("ts1", "legacy", "stdio", "2025-11-25");
}

#[test]
fn typescript_sdk_1_over_http() {
    typescript("ts1", "legacy", "http", "2025-11-25");
}

#[test]
fn python_client_auto_over_stdio_speaks_2026_07_28() {
    python("auto", "stdio", "2026-07-28");
}

#[test]
fn python_client_legacy_over_stdio() {
    python("legacy", "stdio", "2025-11-25");
}

#[test]
fn python_client_pinned_to_2026_07_28_over_stdio() {
    python("2026-07-28", "stdio", "2026-07-28");
}

#[test]
fn python_client_auto_over_http_speaks_2026_07_28_without_a_session() {
    python("auto", "http", "2026-07-28");
}

#[test]
fn python_client_legacy_over_http() {
    python("legacy", "http", "2025-11-25");
}

/// One run of the Inspector CLI (a new session each run) in protocol era `era`: its JSON, and
/// whether it exited 0 (it exits 1 when a tool answers with an error).
fn inspector_run(era: &str, target: &[String], args: &[&str]) -> (Value, bool) {
    let mut cli = Command::new("timeout");
    cli.arg("120").arg(bin("mcp-inspector")).args(["--cli", "--protocol-era", era]).args(args);
    cli.args(target);
    let out = cli.output().expect("the inspector runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "inspector {era} {args:?} printed no JSON ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (json, out.status.success())
}

/// [`inspector_run`] of a request that must succeed.
fn inspector(era: &str, target: &[String], args: &[&str]) -> Value {
    let (json, ok) = inspector_run(era, target, args);
    assert!(ok, "inspector {era} {args:?} failed: {json}");
    json
}

/// The Inspector's cell. Each of its runs is a new session, so a tool cannot be loaded in one
/// run and called in the next: the reader is pinned (listed from the start, so the Inspector's
/// own check before a call finds it), and the never-loaded call goes through a bridge session's
/// `call_tool`, since the Inspector refuses to call a name it was not listed.
fn inspector_cell(era: &str, transport: &str) {
    let cell = Cell::new(&format!("inspector-{era}-{transport}"), "");
    let config = std::fs::read_to_string(&cell.config).unwrap();
    let native = config.replace("[servers.memory]", "pinned = [\"read_text_file\"]\n\n[servers.memory]");
    std::fs::write(&cell.config, &native).unwrap();
    let bridge = cell.dir.join("bridge.toml");
    std::fs::write(&bridge, format!("[gateway]\nexposure = \"bridge\"\n\n{config}")).unwrap();

    let mut servers = Vec::new();
    let mut target = |config: &Path| -> Vec<String> {
        if transport == "http" {
            let server =
                support::serve(&["--http", "127.0.0.1:0", "--config", &config.display().to_string()], &[]);
            let url = format!("http://{}/mcp", server.addr);
            servers.push(server);
            vec!["--transport".into(), "http".into(), "--server-url".into(), url]
        } else {
            let toolgate = env!("CARGO_BIN_EXE_toolgate").to_owned();
            vec![
                "--".into(),
                toolgate,
                "serve".into(),
                "--stdio".into(),
                "--config".into(),
                config.display().to_string(),
            ]
        }
    };
    let native = target(&cell.config);
    let listed = inspector(era, &native, &["--method", "tools/list"]);
    let names: Vec<&str> =
        listed["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["tool_search", "filesystem__read_text_file"], "{listed}");

    let query = "query=read a text file";
    let found = inspector(
        era,
        &native,
        &["--method", "tools/call", "--tool-name", "tool_search", "--tool-arg", query],
    );
    let matches = found["structuredContent"]["matches"].as_array().expect("the search's matches");
    assert!(matches.iter().any(|n| n == "filesystem__read_text_file"), "{found}");

    let path = format!("path={}", cell.notes.display());
    let read = inspector(
        era,
        &native,
        &["--method", "tools/call", "--tool-name", "filesystem__read_text_file", "--tool-arg", &path],
    );
    assert_eq!(read["content"][0]["text"].as_str().map(str::trim), Some(MARKER), "{read}");

    let bridged = target(&bridge);
    let arguments = r#"arguments={"entities":[{"name":"intruder","entityType":"x","observations":["y"]}]}"#;
    let (refused, _) = inspector_run(
        era,
        &bridged,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "call_tool",
            "--tool-arg",
            "name=memory__create_entities",
            "--tool-arg",
            arguments,
        ],
    );
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused["content"][0]["text"].as_str().unwrap().contains("select:memory__create_entities"),
        "{refused}"
    );
    assert!(!cell.memory.exists(), "the refused call reached server-memory");
}

#[test]
fn the_inspector_cli_in_the_legacy_era_over_stdio() {
    inspector_cell("legacy", "stdio");
}

#[test]
fn the_inspector_cli_in_the_modern_era_over_stdio() {
    inspector_cell("modern", "stdio");
}

#[test]
fn the_inspector_cli_in_the_legacy_era_over_http() {
    inspector_cell("legacy", "http");
}

/// The Inspector at 2026-07-28 over HTTP: no session, so every run is a request of its own,
/// and the grant one run's search gave runs the tool in the next.
#[test]
fn the_inspector_cli_in_the_modern_era_over_http_carries_a_grant_from_one_run_to_the_next() {
    let cell = Cell::new("inspector-modern-http", "");
    let (_server, url) = cell.http();
    let target = vec!["--transport".into(), "http".into(), "--server-url".into(), url];
    let listed = inspector("modern", &target, &["--method", "tools/list"]);
    let names: Vec<&str> =
        listed["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["tool_search", "call_tool"], "{listed}");

    let query = "query=read a text file";
    let found = inspector(
        "modern",
        &target,
        &["--method", "tools/call", "--tool-name", "tool_search", "--tool-arg", query],
    );
    let grant = found["structuredContent"]["grants"]["filesystem__read_text_file"]
        .as_str()
        .unwrap_or_else(|| panic!("no grant for the reader: {found}"))
        .to_owned();

    let arguments = format!("arguments={}", json!({"path": cell.notes.display().to_string()}));
    let grant_arg = format!("grant={grant}");
    let read = inspector(
        "modern",
        &target,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "call_tool",
            "--tool-arg",
            "name=filesystem__read_text_file",
            "--tool-arg",
            &arguments,
            "--tool-arg",
            &grant_arg,
        ],
    );
    assert_eq!(read["content"][0]["text"].as_str().map(str::trim), Some(MARKER), "{read}");

    // The reader's grant does not run another tool.
    let intruder = r#"arguments={"entities":[{"name":"intruder","entityType":"x","observations":["y"]}]}"#;
    let (refused, _) = inspector_run(
        "modern",
        &target,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "call_tool",
            "--tool-arg",
            "name=memory__create_entities",
            "--tool-arg",
            intruder,
            "--tool-arg",
            &grant_arg,
        ],
    );
    assert_eq!(refused["isError"], true, "{refused}");
    let said = refused["content"][0]["text"].as_str().unwrap_or_default();
    assert!(said.contains("select:memory__create_entities"), "{refused}");
    assert!(!cell.memory.exists(), "the refused call reached server-memory");
}
