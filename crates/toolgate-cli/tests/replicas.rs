//! Sessions that outlive a process: two `toolgate serve --http` gateways share one real
//! `redis-server` on loopback (`[gateway] sessions = "redis://…"`), and the official
//! TypeScript SDK (`e2e/replicas.mjs`) continues on one gateway the session it opened on the
//! other, as a load balancer without sticky sessions sends it. The upstreams are the real
//! `server-filesystem` and `server-everything`; `redis-server` is Debian's (`e2e/setup.sh`).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use support::{Redis, Server, scratch, serve};

fn e2e() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e")
}

fn bin(name: &str) -> String {
    let path = e2e().join("node_modules/.bin").join(name);
    assert!(path.exists(), "{name} is not installed: run e2e/setup.sh (the README's test command does)");
    path.display().to_string()
}

/// Runs `e2e/replicas.mjs ARGS`; its one JSON line.
fn replicas(args: &[&str]) -> Value {
    let out = Command::new("node").arg(e2e().join("replicas.mjs")).args(args).output().expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "replicas.mjs {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array().unwrap_or_else(|| panic!("not a list: {list}")).iter().filter_map(Value::as_str).collect()
}

const ALICE: &str = "alice-secret-0123456789";
const BOB: &str = "bob-secret-0123456789";

/// A configuration for the filesystem server over `files`, sharing sessions through `redis`,
/// with `deny` and two bearer tokens.
fn config(dir: &Path, name: &str, redis: &Redis, files: &Path, deny: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let text = format!(
        "[gateway]\nsessions = {:?}\n\n[tokens.alice]\nenv = \"TG_ALICE\"\n[tokens.bob]\nenv = \"TG_BOB\"\n\n\
         [policy]\ndeny = {deny:?}\n\n[servers.fs]\ncommand = {:?}\nargs = [{:?}]\n",
        redis.url(),
        bin("mcp-server-filesystem"),
        files.display().to_string(),
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn gateway(config: &Path) -> Server {
    let config = config.display().to_string();
    serve(&["--http", "127.0.0.1:0", "--config", &config], &[("TG_ALICE", ALICE), ("TG_BOB", BOB)])
}

fn url(server: &Server) -> String {
    format!("http://{}/mcp", server.addr)
}

#[test]
fn a_session_continues_on_another_gateway_after_the_first_is_killed_under_the_policy_of_the_second() {
    let dir = scratch("replicas-handover");
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("notes.txt"), "buy oat milk\n").unwrap();
    let redis = Redis::start(&dir);
    let first_config = config(&dir, "first.toml", &redis, &files, &["fs__write_file"]);
    // The second gateway is stricter: a tool the session loaded on the first is denied here.
    let second_config =
        config(&dir, "second.toml", &redis, &files, &["fs__write_file", "fs__list_directory"]);
    let mut first = gateway(&first_config);
    let second = gateway(&second_config);

    let alice = replicas(&[
        "open",
        &url(&first),
        ALICE,
        "select:fs__read_text_file",
        "select:fs__list_directory",
        "write a file",
    ]);
    let alice_tools = names(&alice["tools"]);
    assert!(
        alice_tools.contains(&"fs__read_text_file") && alice_tools.contains(&"fs__list_directory"),
        "{alice}"
    );
    assert!(!alice_tools.contains(&"fs__write_file"), "a denied tool is never loaded: {alice}");
    // Bob opens his own session on the other gateway and loads another tool.
    let bob = replicas(&["open", &url(&second), BOB, "select:fs__get_file_info"]);
    assert!(names(&bob["tools"]).contains(&"fs__get_file_info"), "{bob}");

    let _ = first.child.kill();
    let _ = first.child.wait();
    let session = alice["session"].as_str().unwrap();
    let notes = files.join("notes.txt").display().to_string();
    let read = json!({"name": "fs__read_text_file", "arguments": {"path": notes}}).to_string();
    let list =
        json!({"name": "fs__list_directory", "arguments": {"path": files.display().to_string()}}).to_string();
    let write = json!({"name": "fs__write_file", "arguments": {"path": notes, "content": "x"}}).to_string();
    let info = json!({"name": "fs__get_file_info", "arguments": {"path": notes}}).to_string();
    let resumed = replicas(&["resume", &url(&second), ALICE, session, &read, &list, &write, &info]);
    let tools = names(&resumed["tools"]);
    assert!(tools.contains(&"fs__read_text_file"), "the active set came along: {resumed}");
    assert!(!tools.contains(&"fs__list_directory"), "denied by the second gateway's policy: {resumed}");
    assert!(!tools.contains(&"fs__get_file_info"), "bob's tool is not alice's: {resumed}");
    let calls = resumed["calls"].as_array().unwrap();
    assert_eq!(calls[0]["error"], false, "{resumed}");
    assert!(calls[0]["text"].as_str().unwrap().contains("buy oat milk"), "{resumed}");
    for refused in &calls[1..] {
        assert_eq!(refused["error"], true, "{resumed}");
    }
    assert_eq!(std::fs::read_to_string(files.join("notes.txt")).unwrap(), "buy oat milk\n");

    // Bob's session id with alice's token, and alice's with bob's: refused, on a gateway that
    // holds the session and on one that must restore it.
    let bob_session = bob["session"].as_str().unwrap();
    let stolen = replicas(&["resume", &url(&second), ALICE, bob_session, &info]);
    assert!(stolen["tools"].is_null(), "{stolen}");
    assert!(stolen["error"].as_str().unwrap().contains("another bearer token"), "{stolen}");
    let third = gateway(&first_config);
    let stolen = replicas(&["resume", &url(&third), BOB, session, &read]);
    assert!(stolen["tools"].is_null(), "{stolen}");
    // And bob, on the third gateway, still has his own session and only his own tools.
    let bob_again = replicas(&["resume", &url(&third), BOB, bob_session, &info]);
    let bob_tools = names(&bob_again["tools"]);
    assert!(
        bob_tools.contains(&"fs__get_file_info") && !bob_tools.contains(&"fs__read_text_file"),
        "{bob_again}"
    );
    assert_eq!(bob_again["calls"][0]["error"], false, "{bob_again}");
    let log = third.log();
    assert!(log.contains("session resumed from the store"), "{log}");

    // Redis goes away: the gateway that holds bob's session answers from its own state.
    drop(redis);
    let alone = replicas(&["resume", &url(&third), BOB, bob_session, &info]);
    assert_eq!(alone["calls"][0]["error"], false, "{alone}");
    assert!(third.log().contains("answering from this gateway's own state"), "{}", third.log());
}

#[test]
fn replicas_relay_list_changes_and_two_hundred_sessions_over_two_lose_and_cross_no_answer() {
    let dir = scratch("replicas-load");
    let redis = Redis::start(&dir);
    let path = dir.join("toolgate.toml");
    let text = format!(
        "[gateway]\nsessions = {:?}\n\n[servers.ev]\ncommand = {:?}\n",
        redis.url(),
        bin("mcp-server-everything"),
    );
    std::fs::write(&path, text).unwrap();
    let path = path.display().to_string();
    let a = serve(&["--http", "127.0.0.1:0", "--config", &path], &[]);
    let b = serve(&["--http", "127.0.0.1:0", "--config", &path], &[]);
    // A tool loaded through one replica: the other, which holds the client's event stream,
    // tells the client.
    let notice = replicas(&["notice", &url(&a), &url(&b), "ev__get-sum"]);
    assert_eq!(notice["notified"], true, "{notice}");
    assert_eq!(notice["listed"], true, "{notice}");
    // 200 sessions at once, 100 calls each, every other call on the other replica.
    let run = replicas(&["load", &url(&a), &url(&b), "200", "100", "ev__echo"]);
    #[allow(clippy::print_stderr)]
    {
        eprintln!("load over two replicas: {run}");
    }
    assert_eq!(run["lost"], 0, "{run}");
    assert_eq!(run["crossed"], 0, "{run}");
    assert_eq!(run["calls"], 20_000, "{run}");
    assert!(
        a.log().contains("session resumed from the store")
            || b.log().contains("session resumed from the store")
    );
}
