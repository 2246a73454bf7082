//! The gateway's policy in front of a real MCP server: `@modelcontextprotocol/server-filesystem`
//! from npm (installed by `e2e/setup.sh`, which the README's test command runs first), in
//! `side_effects = "read_only"` mode.

mod common;

use std::path::PathBuf;

use common::{Client, WAIT, is_error, text};
use serde_json::json;
use toolgate::defer::{DeferConfig, DeferMode};
use toolgate_mcp::config::{Config, SideEffects, Transport};
use toolgate_mcp::{Gateway, Settings};

/// The server-filesystem launcher that `e2e/setup.sh` installs.
fn filesystem_server() -> PathBuf {
    let bin =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../e2e/node_modules/.bin/mcp-server-filesystem");
    assert!(bin.exists(), "{} is missing: run e2e/setup.sh (the README's test command does)", bin.display());
    bin
}

#[tokio::test]
async fn read_only_server_filesystem_hides_and_refuses_writes_and_serves_reads() {
    let dir = std::env::temp_dir().join(format!("toolgate-read-only-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let existing = dir.join("notes.txt");
    std::fs::write(&existing, "kept as it was\n").unwrap();

    let mut server = toolgate_mcp::config::server(Transport::Stdio {
        command: filesystem_server().display().to_string(),
        args: vec![dir.display().to_string()],
        env: Default::default(),
        cwd: None,
    });
    server.side_effects = SideEffects::ReadOnly;
    let config = Config { servers: [("filesystem".to_owned(), server)].into(), ..Config::default() };
    let settings = Settings {
        defer: DeferConfig { mode: DeferMode::On, ..DeferConfig::default() },
        gateway: toolgate_mcp::config::GatewayConfig { ..Default::default() },
        restart_backoff: None,
        ..Settings::default()
    };
    let gateway = Gateway::builder(settings).start(&config).expect("the gateway starts");
    assert!(gateway.settled(WAIT).await, "{}", gateway.status());
    let status = gateway.status();
    let fs =
        status["servers"].as_array().unwrap().iter().find(|s| s["name"] == "filesystem").unwrap().clone();
    assert_eq!(fs["state"], "ready", "{fs}");
    let (listed, visible) = (fs["tools"].as_u64().unwrap(), fs["visible"].as_u64().unwrap());
    assert!(visible > 0 && visible < listed, "read_only keeps some tools, not all: {fs}");

    let client = Client::duplex(&gateway).await;
    // Searching for writing finds no write tool; asking for one by name finds nothing either.
    let search = client.call("tool_search", json!({"query": "write create edit move file directory"})).await;
    let found = text(&search);
    for write in ["write_file", "edit_file", "create_directory", "move_file"] {
        assert!(!found.contains(&format!("filesystem__{write}")), "{write} is searchable:\n{found}");
    }
    let by_name = client.call("tool_search", json!({"query": "select:filesystem__write_file"})).await;
    assert!(!text(&by_name).contains("Loaded"), "{}", text(&by_name));

    // Calling a write tool is refused and the file system is untouched.
    let target = dir.join("intruder.txt");
    let refused = client
        .call("filesystem__write_file", json!({"path": target.display().to_string(), "content": "x"}))
        .await;
    assert!(is_error(&refused), "{}", text(&refused));
    assert!(!target.exists(), "a write reached server-filesystem");
    let names = client.names().await;
    assert!(names.iter().all(|n| !n.contains("write") && !n.contains("edit")), "{names:?}");

    // Reads work.
    client.call("tool_search", json!({"query": "select:filesystem__read_text_file"})).await;
    let read =
        client.call("filesystem__read_text_file", json!({"path": existing.display().to_string()})).await;
    assert!(!is_error(&read), "{}", text(&read));
    assert!(text(&read).contains("kept as it was"), "{}", text(&read));
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "kept as it was\n");

    gateway.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
