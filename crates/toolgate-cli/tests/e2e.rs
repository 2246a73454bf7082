//! End-to-end: the real Python MCP client talks to `toolgate serve` in front of real MCP
//! servers from npm and PyPI, over stdio and streamable HTTP, in native and bridge exposure.
//!
//! The servers and the client are installed by `e2e/setup.sh` (the README's test command runs
//! it first); the scenario itself is `e2e/gateway_client.py`.

use std::path::PathBuf;
use std::process::Command;

fn e2e_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../e2e")
}

fn run_scenario(transport: &str, exposure: &str) {
    let dir = e2e_dir();
    let python = dir.join(".venv/bin/python");
    assert!(
        python.exists() && dir.join("node_modules/.bin/mcp-server-memory").exists(),
        "the end-to-end servers and client are not installed: run e2e/setup.sh (the README's test command does)"
    );
    let out = Command::new(&python)
        .arg(dir.join("gateway_client.py"))
        .args([
            "--toolgate",
            env!("CARGO_BIN_EXE_toolgate"),
            "--transport",
            transport,
            "--exposure",
            exposure,
        ])
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "scenario {transport}/{exposure} failed ({}):\nstdout:\n{stdout}\nstderr (last 4000 bytes):\n{}",
        out.status,
        &stderr[stderr.len().saturating_sub(4000)..]
    );
    let facts: serde_json::Value =
        serde_json::from_str(stdout.trim()).expect("the scenario prints one JSON line");
    assert_eq!(facts["memory_entities"], 0, "the refused call must not reach server-memory");
    assert!(facts["read_tool"].as_str().unwrap().starts_with("filesystem__read"));
}

#[test]
fn python_client_over_stdio_native() {
    run_scenario("stdio", "native");
}

#[test]
fn python_client_over_http_native() {
    run_scenario("http", "native");
}

#[test]
fn python_client_over_stdio_bridge() {
    run_scenario("stdio", "bridge");
}

#[test]
fn python_client_over_http_bridge() {
    run_scenario("http", "bridge");
}
