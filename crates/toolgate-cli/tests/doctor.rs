//! `toolgate doctor` on a configuration with every problem it looks for, through the real
//! binary and real servers: the Python `mcp-server-time` (which does not announce
//! `tools/list_changed`), the `toolgate` binary itself as a server, and a catalog whose one
//! server costs over 25k tokens, has a name over 64 characters and two names that collide.

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::scratch;

#[test]
fn doctor_names_each_problem_and_what_clients_need() {
    let dir = scratch("doctor");
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
    let time = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e/.venv/bin/mcp-server-time");
    assert!(time.exists(), "run e2e/setup.sh first");
    let config = format!(
        "[gateway]\npins = \"pins.sqlite3\"\n\n[servers.big]\ncatalog = \"big.jsonl\"\n\n[servers.time]\ncommand = {:?}\ntrust = \"pin\"\n\n\
         [servers.loop]\ncommand = {:?}\nargs = [\"serve\", \"--stdio\"]\n",
        time.display().to_string(),
        env!("CARGO_BIN_EXE_toolgate"),
    );
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, config).unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["doctor", "--json", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "warnings are exit 1: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let servers = v["servers"].as_array().unwrap();
    let server = |name: &str| servers.iter().find(|s| s["name"] == name).unwrap().clone();
    assert_eq!(server("time")["state"], "ready");
    assert_eq!(server("time")["list_changed"], false);
    assert_eq!(server("loop")["list_changed"], true, "toolgate announces it");
    assert_eq!(server("big")["tools"], 123);
    assert!(server("big")["tokens"].as_u64().unwrap() > 25_000, "{v}");
    let findings: Vec<(String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["server"].as_str().unwrap_or("").to_owned(), f["message"].as_str().unwrap().to_owned()))
        .collect();
    let has = |server: &str, words: &str| findings.iter().any(|(s, m)| s == server && m.contains(words));
    assert!(has("big", "over 25000"), "{findings:?}");
    assert!(has("big", "over the 64 clients accept"), "{findings:?}");
    assert!(has("", "`big__read.file`") && has("", "`big__read_file`"), "{findings:?}");
    assert!(has("time", "does not announce tools/list_changed"), "{findings:?}");
    assert!(has("loop", "this is toolgate itself"), "{findings:?}");
    assert!(has("time", "did not read or write the pin store"), "{findings:?}");
    assert!(!dir.join("pins.sqlite3").exists());
    let clients: Vec<&str> =
        v["clients"].as_array().unwrap().iter().map(|c| c["client"].as_str().unwrap()).collect();
    assert_eq!(clients, ["Claude Code", "Codex CLI", "Cursor", "VS Code"]);
    assert!(v["clients"][2]["needs"].as_str().unwrap().contains("within Cursor's 40"), "{v}");

    // The text report says the same, with each warning on its line.
    let text = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["doctor", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("warning: time: does not announce tools/list_changed"), "{text}");
    assert!(text.contains("claude mcp add toolgate -- toolgate serve --stdio --config"), "{text}");
}
