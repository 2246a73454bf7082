//! `toolgate serve` as a process: the HTTP address it prints, the status page, a clean stop on
//! SIGTERM, and MCP over stdio with nothing but JSON-RPC on stdout.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgate starts")
}

/// Lines of a child's pipe, read on a thread so that the test can wait with a timeout.
fn lines(pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for the child to exit; kills it and fails after [`WAIT`].
fn exit_code(mut child: Child) -> Option<i32> {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if start.elapsed() > WAIT {
            let _ = child.kill();
            panic!("toolgate did not exit within {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serve_prints_its_address_shows_a_status_page_and_stops_on_sigterm() {
    let mut child = spawn(&["serve", "--http", "127.0.0.1:0"]);
    let stderr = lines(child.stderr.take().unwrap());
    let addr = loop {
        let line = stderr.recv_timeout(WAIT).expect("toolgate prints where it listens");
        if let Some(rest) = line.strip_prefix("toolgate: listening on http://") {
            break rest.strip_suffix("/mcp").expect("the address ends in /mcp").to_owned();
        }
    };
    let mut stream = TcpStream::connect(&addr).unwrap();
    write!(stream, "GET /status.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let body: Value = serde_json::from_str(&response[response.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    assert_eq!(body["tools"], 527);
    assert_eq!(body["servers"][0]["state"], "static");

    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    assert_eq!(exit_code(child), Some(0));
}

#[test]
fn serve_stdio_speaks_json_rpc_on_stdout_and_exits_when_stdin_closes() {
    let mut child = spawn(&["serve", "--stdio"]);
    let stdout = lines(child.stdout.take().unwrap());
    let _stderr = lines(child.stderr.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    for m in &messages {
        writeln!(stdin, "{m}").unwrap();
    }
    let init: Value = serde_json::from_str(&stdout.recv_timeout(WAIT).unwrap()).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "toolgate", "{init}");
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    let list: Value = serde_json::from_str(&stdout.recv_timeout(WAIT).unwrap()).unwrap();
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["tool_search"]);

    drop(stdin);
    assert_eq!(exit_code(child), Some(0));
    assert!(stdout.recv_timeout(Duration::from_millis(100)).is_err(), "nothing else on stdout");
}

/// Whether process `pid` is gone (or a zombie waiting to be reaped).
fn is_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_stops_the_gateway_and_its_upstream_children() {
    let dir = std::env::temp_dir().join(format!("toolgate-serve-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("child.pid");
    let config = dir.join("toolgate.toml");
    // An upstream that never answers `initialize`: it stays "starting" until the gateway stops.
    let script = format!("echo $$ > {}; exec sleep 300", pidfile.display());
    std::fs::write(&config, format!("[servers.stuck]\ncommand = \"sh\"\nargs = [\"-c\", {script:?}]\n"))
        .unwrap();

    let mut child = spawn(&["serve", "--http", "127.0.0.1:0", "--config", config.to_str().unwrap()]);
    let stderr = lines(child.stderr.take().unwrap());
    while !stderr.recv_timeout(WAIT).expect("toolgate starts").contains("listening on") {}
    let start = std::time::Instant::now();
    let upstream = loop {
        match std::fs::read_to_string(&pidfile) {
            Ok(pid) if pid.ends_with('\n') => break pid.trim().to_owned(),
            _ if start.elapsed() > WAIT => panic!("the upstream child did not start"),
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    assert!(!is_gone(&upstream));

    let interrupted = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(interrupted.success());
    assert_eq!(exit_code(child), Some(0));
    let start = std::time::Instant::now();
    while !is_gone(&upstream) {
        assert!(start.elapsed() < WAIT, "upstream child {upstream} outlived the gateway");
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_profile_needs_a_configuration_that_defines_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--profile", "reviewer"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--profile needs --config"), "{stderr}");
}

#[test]
fn a_bad_catalog_in_the_configuration_is_an_error_naming_file_and_key() {
    let dir = std::env::temp_dir().join(format!("toolgate-serve-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("toolgate.toml");
    std::fs::write(&config, "[servers.demo]\ncatalog = \"missing.jsonl\"\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--http", "127.0.0.1:0", "--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let expected = format!("toolgate: error: {}: servers.demo.catalog: ", config.display());
    assert!(stderr.contains(&expected) && stderr.contains("missing.jsonl"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn http_takes_localhost_as_an_address() {
    let mut child = spawn(&["serve", "--http", "localhost:0"]);
    let stderr = lines(child.stderr.take().unwrap());
    let line = loop {
        let line = stderr.recv_timeout(WAIT).expect("toolgate prints where it listens");
        if line.starts_with("toolgate: listening on ") {
            break line;
        }
    };
    assert!(line.starts_with("toolgate: listening on http://127.0.0.1:"), "{line}");
    let _ = child.kill();
    let _ = child.wait();
    let out =
        Command::new(env!("CARGO_BIN_EXE_toolgate")).args(["serve", "--http", "nowhere:1"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not IP:PORT or localhost:PORT"), "{err}");
}

#[test]
fn a_stdio_session_is_logged_and_shown_on_the_status_page_when_http_is_on_too() {
    let mut child = spawn(&["serve", "--stdio", "--http", "127.0.0.1:0"]);
    let stdout = lines(child.stdout.take().unwrap());
    let stderr = lines(child.stderr.take().unwrap());
    let addr = loop {
        let line = stderr.recv_timeout(WAIT).expect("toolgate prints where it listens");
        if let Some(rest) = line.strip_prefix("toolgate: listening on http://") {
            break rest.strip_suffix("/mcp").unwrap().to_owned();
        }
    };
    let mut stdin = child.stdin.take().unwrap();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "stdio-check", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}});
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"_meta": meta,
            "name": "tool_search", "arguments": {"query": "select:playwright__playwright_screenshot"}}}),
    ];
    for m in &messages {
        writeln!(stdin, "{m}").unwrap();
        let answer: Value = serde_json::from_str(&stdout.recv_timeout(WAIT).unwrap()).unwrap();
        assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    }
    // What the search loaded is in the log...
    let logged = loop {
        let line = stderr.recv_timeout(WAIT).expect("the search is logged");
        if line.contains("tool_search") {
            break line;
        }
    };
    assert!(logged.contains("loaded=playwright__playwright_screenshot"), "{logged}");
    // ... and the session, with its revision, on the status page beside it.
    let mut stream = TcpStream::connect(&addr).unwrap();
    write!(stream, "GET /status.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let body: Value = serde_json::from_str(reply.split_once("\r\n\r\n").unwrap().1).unwrap();
    let session = &body["sessions"][0];
    assert_eq!(session["transport"], "stdio", "{body}");
    assert_eq!(session["revision"], "2026-07-28", "{body}");
    assert_eq!(session["kind"], "agent", "{body}");
    assert_eq!(session["active"], json!(["playwright__playwright_screenshot"]), "{body}");
    drop(stdin);
    assert_eq!(exit_code(child), Some(0), "the gateway ends with its stdio client");
}
