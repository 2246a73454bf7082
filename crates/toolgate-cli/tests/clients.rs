//! Real clients against the real binary, as a user starts them: the MCP Inspector CLI (npm
//! `@modelcontextprotocol/inspector`) spawns `toolgate serve --stdio` in front of the real
//! `server-filesystem` and asks at once, with no wait in between; what it gets must already be
//! useful. The packages are installed by `e2e/setup.sh` (the README's test command runs it).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn e2e() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e")
}

fn bin(name: &str) -> PathBuf {
    let path = e2e().join("node_modules/.bin").join(name);
    assert!(path.exists(), "{name} is not installed: run e2e/setup.sh (the README's test command does)");
    path
}

/// A folder with a notes file and a configuration serving it through the real filesystem
/// server, as a new user writes it (no `mode` or `exposure` line).
fn workspace(test: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("toolgate-clients-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("notes.txt"), "buy oat milk\n").unwrap();
    let config = dir.join("toolgate.toml");
    std::fs::write(
        &config,
        format!(
            "[servers.filesystem]\ncommand = {:?}\nargs = [{:?}]\n",
            bin("mcp-server-filesystem").display().to_string(),
            files.display().to_string()
        ),
    )
    .unwrap();
    (dir, config)
}

/// Runs the Inspector CLI with `args` against `toolgate serve --stdio --config CONFIG`.
fn inspector(config: &Path, args: &[&str]) -> Value {
    let out = Command::new(bin("mcp-inspector"))
        .arg("--cli")
        .args(args)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--stdio", "--config"])
        .arg(config)
        .output()
        .expect("the inspector runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "inspector {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("inspector {args:?} printed no JSON ({e}):\n{stdout}"))
}

#[test]
fn the_inspector_cli_lists_tool_search_and_finds_the_reader_on_its_first_request() {
    let (_dir, config) = workspace("inspector");
    let listed = inspector(&config, &["--method", "tools/list"]);
    let names: Vec<&str> =
        listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["tool_search"], "{listed}");

    let found = inspector(
        &config,
        &["--method", "tools/call", "--tool-name", "tool_search", "--tool-arg", "query=read a text file"],
    );
    let text = found["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Loaded "), "the first search already sees the server's tools: {text}");
    let loaded = found["structuredContent"]["loaded"].as_array().unwrap();
    assert!(loaded.iter().any(|n| n == "filesystem__read_text_file"), "{found}");
    assert_eq!(found["structuredContent"]["pending_servers"], serde_json::json!([]), "{found}");
}

/// `toolgate serve --http` on a free port of 127.0.0.1 with `config`, stopped when dropped.
struct Http {
    child: std::process::Child,
    url: String,
}

impl Http {
    fn start(config: &Path) -> Http {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["serve", "--http", &format!("127.0.0.1:{port}"), "--config"])
            .arg(config)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "toolgate is not listening");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Http { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `e2e/ts_sdk.mjs` with `args`; its one JSON line.
fn ts_sdk(args: &[&str]) -> Value {
    let out = Command::new("node").arg(e2e().join("ts_sdk.mjs")).args(args).output().expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "ts_sdk {args:?}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(stdout.trim()).unwrap()
}

#[test]
fn the_typescript_sdk_over_http_calls_a_loaded_tool_and_meets_a_clear_error_after_the_idle_expiry() {
    let dir = std::env::temp_dir().join(format!("toolgate-clients-{}-ts", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/livemcpbench/catalog.jsonl");
    let config = dir.join("toolgate.toml");
    std::fs::write(
        &config,
        format!(
            "[gateway]\nsession_idle_secs = 3\n[servers.demo]\ncatalog = {:?}\n",
            catalog.display().to_string()
        ),
    )
    .unwrap();
    let gateway = Http::start(&config);
    // The figures of a real run are printed by `node e2e/ts_sdk.mjs bench URL 1000`; here the
    // calls must only all get through.
    let bench = ts_sdk(&["bench", &gateway.url, "50"]);
    assert_eq!(bench["calls"], 50, "{bench}");
    let idle = ts_sdk(&["idle", &gateway.url]);
    let error = idle["error_after_5s"].as_str().unwrap();
    assert!(error.contains("session_idle_secs") && error.contains("start a new session"), "{idle}");
}
