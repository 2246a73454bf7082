//! `toolgate doctor` through the real binary and real servers: a configuration with every
//! problem it looks for (the Python `mcp-server-time`, which does not announce
//! `tools/list_changed`, started 2 s late against a 1 s ready wait; a catalog whose one server
//! costs over 25k tokens, has a name over 64 characters and two names that collide); a
//! configuration with no server; and one that starts toolgate on itself, refused before anything
//! starts, by `doctor` and `serve` alike. The snippets it prints are pasted, as a user would,
//! into the real Claude Code, Codex CLI and Gemini CLI, which must then connect.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::{e2e, scratch};

fn doctor(args: &[&str], config: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("doctor")
        .args(args)
        .arg("--config")
        .arg(config)
        .output()
        .unwrap()
}

/// A configuration with every problem the doctor looks for (and `${DOCTOR_TZ}` to read).
fn troubled(dir: &Path) -> PathBuf {
    let long = "x".repeat(70);
    let mut lines = vec![
        json!({"server": "big", "name": "read.file", "description": "Read a file."}),
        json!({"server": "big", "name": "read_file", "description": "Read a file too."}),
        json!({"server": "big", "name": long, "description": "A long name."}),
    ];
    let words = "summarise the quarterly report and send it to every stakeholder on the list ".repeat(30);
    for i in 0..120 {
        lines.push(json!({"server": "big", "name": format!("tool_{i}"), "description": words}));
    }
    let catalog: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("big.jsonl"), catalog).unwrap();
    let time = e2e().join(".venv/bin/mcp-server-time");
    assert!(time.exists(), "run e2e/setup.sh first");
    let late = format!("sleep 2; exec {}", time.display());
    let config = format!(
        "[gateway]\npins = \"pins.sqlite3\"\nready_timeout_secs = 1\n\n[servers.big]\ncatalog = \"big.jsonl\"\n\n\
         [servers.time]\ncommand = \"sh\"\nargs = [\"-c\", {late:?}]\ntrust = \"pin\"\n\
         env = {{ TZ = \"${{DOCTOR_TZ:-UTC}}\" }}\n",
    );
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, config).unwrap();
    path
}

#[test]
fn doctor_names_each_problem_and_gives_snippets_that_work_when_pasted() {
    let dir = scratch("doctor");
    let path = troubled(&dir);
    let out = doctor(&["--json"], &path);
    assert_eq!(out.status.code(), Some(1), "warnings are exit 1: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let servers = v["servers"].as_array().unwrap();
    let server = |name: &str| servers.iter().find(|s| s["name"] == name).unwrap().clone();
    assert_eq!(server("time")["state"], "ready");
    assert_eq!(server("time")["list_changed"], false);
    assert!(server("time")["start_ms"].as_u64().unwrap() >= 2000, "{v}");
    assert_eq!(server("big")["tools"], 123);
    assert!(server("big")["tokens"].as_u64().unwrap() > 25_000, "{v}");
    let findings: Vec<(String, String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or("").to_owned();
            (s("level"), s("server"), s("message"))
        })
        .collect();
    let has = |level: &str, server: &str, words: &str| {
        findings.iter().any(|(l, s, m)| l == level && s == server && m.contains(words))
    };
    assert!(has("warning", "big", "over 25000"), "{findings:?}");
    assert!(has("warning", "big", "over the 64 clients accept"), "{findings:?}");
    assert!(has("warning", "", "`big__read.file`") && has("warning", "", "`big__read_file`"), "{findings:?}");
    assert!(has("warning", "time", "longer than ready_timeout_secs (1 s)"), "{findings:?}");
    assert!(
        has("note", "time", "does not announce tools/list_changed"),
        "a note, not a warning: {findings:?}"
    );
    assert!(has("note", "time", "did not read or write the pin store"), "{findings:?}");
    assert!(!dir.join("pins.sqlite3").exists());
    let clients: Vec<&str> =
        v["clients"].as_array().unwrap().iter().map(|c| c["client"].as_str().unwrap()).collect();
    assert_eq!(clients, ["Claude Code", "Codex CLI", "Gemini CLI", "Cursor", "VS Code"]);
    let client =
        |name: &str| v["clients"].as_array().unwrap().iter().find(|c| c["client"] == name).unwrap().clone();
    assert!(client("Cursor")["needs"].as_str().unwrap().contains("within Cursor's 40"), "{v}");
    for c in v["clients"].as_array().unwrap() {
        assert!(c["needs"].as_str().unwrap().contains("reads DOCTOR_TZ"), "{c}");
        let snippet = c["snippet"].as_str().unwrap();
        let absolute = path.canonicalize().unwrap().display().to_string();
        assert!(snippet.contains(&absolute), "an absolute configuration path: {snippet}");
    }
    assert!(client("Codex CLI")["snippet"].as_str().unwrap().contains(r#"env_vars = ["DOCTOR_TZ"]"#), "{v}");

    // The text report says the same, each finding on its line.
    let text = String::from_utf8_lossy(&doctor(&[], &path).stdout).into_owned();
    assert!(text.contains("note: time: does not announce tools/list_changed"), "{text}");
    assert!(text.contains("claude mcp add-json -s user toolgate"), "{text}");

    // Pasted as printed, each snippet makes its client connect to toolgate.
    paste_into_the_clients(&dir, &v);
}

/// Pastes the doctor's snippets for Claude Code, Codex CLI and Gemini CLI into a shell with a
/// throwaway home, and asks each client to list its MCP servers.
fn paste_into_the_clients(dir: &Path, v: &Value) {
    let bin = e2e().join("node_modules/.bin");
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let shell = |script: &str| -> String {
        let out = Command::new("timeout")
            .args(["120", "sh", "-c", script])
            .env_clear()
            .env("PATH", &path)
            .env("HOME", &home)
            .env("CODEX_HOME", home.join(".codex"))
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env("DOCTOR_TZ", "UTC")
            .current_dir(dir)
            .output()
            .unwrap();
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "`{script}` failed:\n{all}");
        all
    };
    let client = |name: &str| -> &Value {
        v["clients"].as_array().unwrap().iter().find(|c| c["client"] == name).unwrap()
    };
    let snippet = |name: &str| -> String { client(name)["snippet"].as_str().unwrap().to_owned() };
    shell(&snippet("Claude Code"));
    // Claude Code checks servers only in a folder its trust question was answered for (what
    // running `claude` there once does), as the advice beside the snippet says.
    let needs = client("Claude Code")["needs"].as_str().unwrap();
    assert!(needs.contains("run `claude` there once"), "{needs}");
    support::claude_trust(&home, dir);
    let listed = shell("claude mcp list");
    assert!(listed.contains("toolgate") && listed.contains("Connected"), "Claude Code: {listed}");
    std::fs::write(home.join(".codex/config.toml"), snippet("Codex CLI")).unwrap();
    let listed = shell("codex mcp list");
    assert!(listed.contains("toolgate") && listed.contains("enabled"), "Codex CLI: {listed}");
    shell(&snippet("Gemini CLI"));
    let listed = shell("gemini mcp list");
    assert!(listed.contains("toolgate") && listed.contains("Connected"), "Gemini CLI: {listed}");
}

#[test]
fn a_configuration_with_no_server_is_a_warning() {
    let dir = scratch("doctor-empty");
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, "[gateway]\nmode = \"on\"\n").unwrap();
    let out = doctor(&[], &path);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("warning: the configuration has no server"), "{text}");
}

#[test]
fn a_configuration_that_starts_toolgate_on_itself_is_refused_before_anything_starts() {
    let dir = scratch("doctor-itself");
    let marker = dir.join("started");
    let path = dir.join("servers.json");
    // An `mcpServers` file moved behind toolgate with toolgate's own entry still in it, and a
    // server that leaves a mark if it is ever started.
    let config = json!({"mcpServers": {
        "toolgate": {"command": env!("CARGO_BIN_EXE_toolgate"), "args": ["serve", "--stdio", "--config", path]},
        "marker": {"command": "sh", "args": ["-c", format!("touch {}; sleep 30", marker.display())]},
    }});
    std::fs::write(&path, config.to_string()).unwrap();
    for command in ["doctor", "serve"] {
        let mut run = Command::new("timeout");
        run.arg("30").arg(env!("CARGO_BIN_EXE_toolgate")).args([command, "--config"]).arg(&path);
        if command == "serve" {
            run.arg("--stdio");
        }
        let out = run.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(
            stderr.contains("servers.toolgate") && stderr.contains("this same configuration"),
            "{stderr}"
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!marker.exists(), "a server was started before the refusal");
}

#[test]
fn a_loop_through_a_wrapper_ends_at_the_first_turn() {
    let dir = scratch("doctor-loop");
    let path = dir.join("toolgate.toml");
    let count = dir.join("starts");
    // A wrapper script hides that the server is toolgate on this same file (a `sh -c` line is
    // read through before anything starts); the lock the gateway holds on it tells.
    let script = dir.join("wrapper.sh");
    let wrapper = format!(
        "echo x >> {}; exec {} serve --stdio --config {}\n",
        count.display(),
        env!("CARGO_BIN_EXE_toolgate"),
        path.display()
    );
    std::fs::write(&script, wrapper).unwrap();
    let script = script.display().to_string();
    std::fs::write(&path, format!("[servers.wrapped]\ncommand = \"sh\"\nargs = [{script:?}]\n")).unwrap();
    let out = doctor(&["--json", "--timeout", "20"], &path);
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let wrapped = &v["servers"][0];
    assert_eq!(wrapped["state"], "failed", "{v}");
    let starts = std::fs::read_to_string(&count).unwrap_or_default().lines().count();
    // Each start is the gateway's own (a restart after the failure at most); a nested gateway
    // that started its servers would have started the wrapper again, and so on.
    assert!((1..=2).contains(&starts), "{starts} starts: the nested toolgate started its own servers");
    assert!(
        wrapped["error"].as_str().unwrap_or_default().contains("is already served by toolgate process"),
        "the nested gateway said why it stopped: {v}"
    );
}
