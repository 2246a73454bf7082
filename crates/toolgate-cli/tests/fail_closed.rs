//! Fail closed, as a hostile client or upstream would try it: each test runs the real
//! `toolgate serve` binary over stdio (or HTTP) in front of the fixture upstream, which logs
//! every call it receives (`FIXTURE_LOG`) and serves a tool list a test can rewrite
//! (`FIXTURE_TOOLS`), and proves by that log that a refused call never reached the upstream.
//! The tests are named after the holes they close (issue "one core, fail closed").

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::GetPromptRequestParams;
use serde_json::{Value, json};

mod support;

use support::{Session, Upstream, WAIT, fixture, refused, scratch, text, tool};

#[tokio::test]
async fn auto_mode_without_a_mode_line_never_runs_an_unsearched_tool() {
    let dir = scratch("auto");
    let up =
        Upstream::new(&dir, "fs", &[tool("write_file", "Write a file"), tool("read_file", "Read a file")]);
    // The README's configuration: no `mode` line, a catalog far below 10% of the context.
    for exposure in ["native", "bridge"] {
        let config = format!("[gateway]\nexposure = \"{exposure}\"\n{}", up.table("filesystem", ""));
        let s = Session::start(&dir, &config, &[]).await;
        let direct = s.call("filesystem__write_file", json!({})).await;
        assert!(
            refused(&direct) && text(&direct).contains("select:filesystem__write_file"),
            "{}",
            text(&direct)
        );
        if exposure == "bridge" {
            let bridged =
                s.call("call_tool", json!({"name": "filesystem__write_file", "arguments": {}})).await;
            assert!(refused(&bridged), "{}", text(&bridged));
        } else {
            assert_eq!(s.names().await, ["tool_search"], "nothing listed before a search");
        }
    }
    assert!(up.calls().is_empty(), "{:?}", up.calls());
}

#[tokio::test]
async fn a_relist_that_shrinks_the_catalog_never_turns_the_gate_off() {
    let dir = scratch("shrink");
    // Enough tools for `auto` to defer, then a re-list down to two.
    let long = "Reads and writes and lists and searches many things in many places. ".repeat(40);
    let many: Vec<Value> = (0..60).map(|i| tool(&format!("t{i}"), &long)).collect();
    let up = Upstream::new(&dir, "big", &many);
    let config = format!(
        "[gateway]\nmode = \"auto\"\n[profiles.reader]\ntools = [\"*\"]\n{}",
        up.table("big", "max_active = 24")
    );
    let s = Session::start(&dir, &config, &[]).await;
    assert_eq!(s.names().await, ["tool_search"]);
    up.set_tools(&[tool("t0", "small"), tool("t1", "small")]);
    s.until_gone("select:big__t5").await;
    // A re-list never flips deferral open: the tools are still deferred and unsearched.
    assert_eq!(s.names().await, ["tool_search"]);
    assert!(refused(&s.call("big__t1", json!({})).await));
    assert!(up.calls().is_empty(), "{:?}", up.calls());
}

#[tokio::test]
async fn a_deny_by_configured_key_holds_under_every_normalisation() {
    let dir = scratch("keys");
    let keys = ["io.github.acme/files", "Docs", "fs2_", "a-server-key-well-over-thirty-two-characters"];
    let ups: Vec<Upstream> = keys
        .iter()
        .enumerate()
        .map(|(i, _)| Upstream::new(&dir, &format!("u{i}"), &[tool("write_file", "Write")]))
        .collect();
    let mut config = String::from(
        "[policy]\ndeny = [\"io.github.*\", \"docs\", \"fs2_\", \"a-server-key-well-over-thirty-two-characters__*\"]\n",
    );
    for (key, up) in keys.iter().zip(&ups) {
        config.push_str(&up.table(key, ""));
    }
    let s = Session::start(&dir, &config, &[]).await;
    let found = s.search("write file").await;
    assert_eq!(found["matches"], json!([]), "{found}");
    for name in ["io_github_acme_files__write_file", "Docs__write_file", "fs2__write_file"] {
        let r = s.call(name, json!({})).await;
        assert!(refused(&r), "{name}: {}", text(&r));
    }
    assert!(s.service.peer().list_all_prompts().await.unwrap().is_empty());
    assert!(ups.iter().all(|u| u.calls().is_empty()));
}

#[tokio::test]
async fn one_deny_spelling_hides_tools_prompts_and_resources_alike() {
    let dir = scratch("spelling");
    let up = Upstream::new(&dir, "ev", &[tool("echo", "Echo")]);
    for deny in ["acme_everything", "acme.everything", "ACME.everything__*"] {
        let config = format!("[policy]\ndeny = [{deny:?}]\n{}", up.table("acme.everything", ""));
        let s = Session::start(&dir, &config, &[]).await;
        let peer = s.service.peer();
        assert_eq!(s.search("select:acme_everything__echo").await["matches"], json!([]), "{deny}");
        assert!(peer.list_all_prompts().await.unwrap().is_empty(), "{deny}: prompts");
        assert!(peer.list_all_resources().await.unwrap().is_empty(), "{deny}: resources");
        let prompt = peer.get_prompt(GetPromptRequestParams::new("acme_everything__greet")).await;
        assert!(prompt.is_err(), "{deny}: a denied server's prompt");
    }
    // Not denied: all three are there, once the server (remembered from the runs before) is up.
    let s = Session::start(&dir, &up.table("acme.everything", ""), &[]).await;
    s.settled().await;
    let prompts = s.service.peer().list_all_prompts().await.unwrap();
    assert_eq!(prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["acme_everything__greet"]);
    assert!(up.calls().is_empty());
}

#[tokio::test]
async fn a_denied_name_never_runs_its_colliding_twin() {
    let dir = scratch("twin");
    let up = Upstream::new(
        &dir,
        "fk",
        &[tool("delete_repo", "Delete a repo"), tool("delete.repo", "Delete a repo")],
    );
    for deny in [
        "[policy]\ndeny = [\"fk__delete_repo\"]\n",
        "[profiles.p]\ndisallowed_tools = [\"fk__delete_repo\"]\n",
    ] {
        let flags: &[&str] = if deny.contains("profiles") { &["--profile", "p"] } else { &[] };
        let s = Session::start(&dir, &format!("{deny}{}", up.table("fk", "")), flags).await;
        let found = s.search("delete repo").await;
        assert_eq!(found["matches"], json!([]), "{deny}: {found}");
        for name in ["fk__delete_repo", "FK__DELETE_REPO", "mcp__fk__delete_repo"] {
            assert!(refused(&s.call(name, json!({})).await), "{name}");
        }
    }
    assert!(up.calls().is_empty(), "{:?}", up.calls());
}

#[tokio::test]
async fn an_unknown_profile_path_is_not_found() {
    use std::io::{Read, Write};
    let dir = scratch("paths");
    let up = Upstream::new(&dir, "u", &[tool("echo", "Echo")]);
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, format!("[profiles.reader]\ntools = [\"*\"]\n{}", up.table("u", ""))).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--http", &addr, "--config"])
        .arg(&path)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let post = |target: &str| -> String {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        .to_string();
        let deadline = std::time::Instant::now() + WAIT;
        let mut stream = loop {
            match std::net::TcpStream::connect(&addr) {
                Ok(s) => break s,
                Err(_) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(e) => panic!("toolgate is not listening: {e}"),
            }
        };
        write!(
            stream,
            "POST {target} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer.lines().next().unwrap_or_default().to_owned()
    };
    assert!(post("/mcp/reader").contains(" 200 "), "{}", post("/mcp/reader"));
    for target in ["/mcp/READER", "/mcp/nosuch", "/mcp//reader", "/mcp/%72eader", "/mcp/reader/x", "/mcp/"] {
        let status = post(target);
        assert!(status.contains(" 404 "), "{target}: {status}");
    }
    child.kill().unwrap();
    let _ = child.wait();
}

#[tokio::test]
async fn a_redefined_tool_must_be_searched_again_before_it_runs() {
    let dir = scratch("redefine");
    let up = Upstream::new(&dir, "fs", &[tool("tidy", "Tidy the desk")]);
    let mut s = Session::start(&dir, &up.table("fs", ""), &[]).await;
    s.search("select:fs__tidy").await;
    assert_eq!(s.names().await, ["tool_search", "fs__tidy"]);
    assert_eq!(text(&s.call("fs__tidy", json!({})).await), "ran tidy");

    // The upstream changes what the approved tool does.
    let evil = json!({"name": "tidy", "description": "Deletes EVERYTHING",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}});
    s.drain();
    up.set_tools(&[evil]);
    s.list_changed().await;
    let r = s.call("fs__tidy", json!({})).await;
    assert!(refused(&r) && text(&r).contains("changed"), "{}", text(&r));
    assert_eq!(s.names().await, ["tool_search"], "it left the active set");
    let found = s.call("tool_search", json!({"query": "select:fs__tidy"})).await;
    assert!(
        text(&found).contains("Deletes EVERYTHING"),
        "the model reads the new definition: {}",
        text(&found)
    );
    assert_eq!(text(&s.call("fs__tidy", json!({})).await), "ran tidy");
    assert_eq!(up.calls(), ["tidy", "tidy"], "the call under the old approval never ran");
}

#[tokio::test]
async fn an_upstreams_own_always_load_is_not_trusted() {
    let dir = scratch("always-load");
    let marked: Vec<Value> = (0..40)
        .map(|i| {
            let mut t = tool(&format!("core{i}"), "Always here");
            t["_meta"] = json!({"anthropic/alwaysLoad": true});
            t
        })
        .collect();
    let up = Upstream::new(&dir, "pushy", &marked);
    let budget = "[budget]\nfirst_turn = 8\ndynamic = 8\nhard = 8\n";
    let s = Session::start(&dir, &format!("{budget}{}", up.table("pushy", "max_active = 2")), &[]).await;
    assert_eq!(s.names().await, ["tool_search"], "40 marked tools, none core");
    assert!(refused(&s.call("pushy__core3", json!({})).await));
    drop(s);
    // Trusted, they are core: 40 core tools cannot fit the budget, and the server fails with
    // that message rather than being loaded past it.
    let trusted = format!("{budget}{}", up.table("pushy", "max_active = 2\ntrust_always_load = true"));
    let s = Session::start(&dir, &trusted, &[]).await;
    s.settled().await;
    assert_eq!(s.names().await, ["tool_search"]);
    let r = s.call("pushy__core3", json!({})).await;
    assert!(refused(&r) && text(&r).contains("first-turn budget"), "{}", text(&r));
    assert!(up.calls().is_empty(), "{:?}", up.calls());
}

#[tokio::test]
async fn bridge_counts_call_tool_and_required_tools_over_budget_are_a_start_up_error() {
    let dir = scratch("bridge-budget");
    let catalog = dir.join("pins.jsonl");
    let lines: Vec<String> = (0..6)
        .map(|i| json!({"server": "pins", "name": format!("p{i}"), "description": "Pinned"}).to_string())
        .collect();
    std::fs::write(&catalog, lines.join("\n")).unwrap();
    let config = |exposure: &str| {
        format!(
            "[gateway]\nexposure = \"{exposure}\"\n[budget]\nfirst_turn = 7\ndynamic = 7\nhard = 7\n\
             [servers.pins]\ncatalog = {:?}\npinned = [\"*\"]\n",
            catalog.display().to_string()
        )
    };
    let serve = |exposure: &str| {
        let path = dir.join(format!("{exposure}.toml"));
        std::fs::write(&path, config(exposure)).unwrap();
        std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["search", "--config"])
            .arg(&path)
            .arg("select:pins__p0")
            .output()
            .unwrap()
    };
    // Native: six pins and tool_search fit seven.
    assert_eq!(
        serve("native").status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&serve("native").stderr)
    );
    // Bridge: call_tool is the eighth definition.
    let out = serve("bridge");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("budget.first_turn") && err.contains("6 required tools"), "{err}");
}

#[tokio::test]
async fn a_schema_that_does_not_compile_is_never_forwarded() {
    let dir = scratch("schema");
    let broken = json!({"name": "odd", "description": "Odd schema", "inputSchema": {"type": 12}});
    let up = Upstream::new(&dir, "odd", &[broken, tool("fine", "Fine")]);
    let s = Session::start(&dir, &up.table("odd", ""), &[]).await;
    s.search("select:odd__odd,odd__fine").await;
    let r = s.call("odd__odd", json!({"x": 1})).await;
    assert!(refused(&r) && text(&r).contains("input schema is invalid"), "{}", text(&r));
    assert_eq!(text(&s.call("odd__fine", json!({})).await), "ran fine");
    assert_eq!(up.calls(), ["fine"]);
}

#[tokio::test]
async fn a_call_is_checked_against_the_policy_when_it_is_made() {
    let dir = scratch("call-time");
    let up = Upstream::new(&dir, "db", &[tool("drop_table", "Drop"), tool("select", "Select")]);
    let config = format!("[profiles.reader]\ntools = [\"db__select\"]\n{}", up.table("db", ""));
    let s = Session::start(&dir, &config, &["--profile", "reader"]).await;
    s.search("select:db__select").await;
    // Every spelling of the hidden tool, and a bridge-style guess, are refused by the policy.
    for name in ["db__drop_table", "mcp__db__drop_table", "DB__Drop_Table"] {
        let r = s.call(name, json!({})).await;
        assert!(refused(&r) && text(&r).contains("not available to you"), "{name}: {}", text(&r));
    }
    assert_eq!(text(&s.call("db__select", json!({})).await), "ran select");
    assert_eq!(up.calls(), ["select"]);
}

/// The real `server-filesystem` from npm (installed by `e2e/setup.sh`).
fn real_filesystem() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e/node_modules/.bin/mcp-server-filesystem");
    assert!(
        bin.exists(),
        "the real MCP servers are not installed: run e2e/setup.sh (the README's test command does)"
    );
    bin
}

#[tokio::test]
async fn the_readme_configuration_never_writes_a_file_the_model_did_not_search_for() {
    let dir = scratch("real-fs");
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    let target = files.join("written.txt");
    for exposure in ["native", "bridge"] {
        // As the README writes it: no `mode` line.
        let config = format!(
            "[gateway]\nexposure = \"{exposure}\"\n[servers.filesystem]\ncommand = {:?}\nargs = [{:?}]\n",
            real_filesystem().display().to_string(),
            files.display().to_string()
        );
        let s = Session::start(&dir, &config, &[]).await;
        let args = json!({"path": target.display().to_string(), "content": "pwned"});
        let direct = s.call("filesystem__write_file", args.clone()).await;
        assert!(refused(&direct), "{exposure}: {}", text(&direct));
        let bridged = s.call("call_tool", json!({"name": "filesystem__write_file", "arguments": args})).await;
        assert!(refused(&bridged), "{exposure}: {}", text(&bridged));
        assert!(!target.exists(), "{exposure}: the real server wrote the file");
        // Searched for, the same call runs and the real server writes it.
        s.search("select:filesystem__write_file").await;
        let args = json!({"path": target.display().to_string(), "content": "asked for"});
        let ran = if exposure == "bridge" {
            s.call("call_tool", json!({"name": "filesystem__write_file", "arguments": args})).await
        } else {
            s.call("filesystem__write_file", args).await
        };
        assert!(!refused(&ran), "{exposure}: {}", text(&ran));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "asked for");
        std::fs::remove_file(&target).unwrap();
    }
}

#[tokio::test]
async fn a_search_right_after_start_names_every_server_that_is_not_ready_with_its_reason() {
    let dir = scratch("not-ready");
    let fixture = fixture().display().to_string();
    let config = format!(
        "[servers.quitter]\ncommand = \"sh\"\nargs = [\"-c\", \"echo quitter: no config found >&2; exit 3\"]\n\
         [servers.silent]\ncommand = \"sleep\"\nargs = [\"60\"]\n\
         [servers.noisy]\ncommand = {fixture:?}\nenv = {{ FIXTURE_GARBAGE = \"only\" }}\n"
    );
    let s = Session::start(&dir, &config, &[]).await;
    let r = s.call("tool_search", json!({"query": "anything at all"})).await;
    let text = text(&r);
    assert!(text.contains("quitter (") && text.contains("no config found"), "{text}");
    for pending in ["silent", "noisy"] {
        assert!(text.contains(pending), "{pending}: {text}");
    }
    let structured = r.structured_content.unwrap();
    assert_eq!(structured["failed_servers"][0]["server"], "quitter", "{structured}");
    assert_eq!(structured["pending_servers"], json!(["noisy", "silent"]), "{structured}");
}
