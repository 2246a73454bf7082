//! Pinned definitions, through the real binary: a pinned server's first listing is approved as
//! found, and what an upgrade, a rename or a lying upstream changes waits in quarantine (not
//! searchable, not callable) until `toolgate approve`, across restarts. The upgrade is a real
//! one: `@modelcontextprotocol/server-filesystem` 2025.3.28 (`e2e/upgrade`) replaced by the
//! release the other tests use.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::{Session, Upstream, WAIT, refused, scratch, text, tool};

fn e2e() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e")
}

/// `toolgate approve ARGS` (its output and exit status).
fn approve(config: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("approve")
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .expect("toolgate runs");
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "toolgate approve {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The held tools `toolgate approve --list --json` reports, as (name, reason).
fn held(config: &Path) -> Vec<(String, String)> {
    let out = approve(config, &["--list", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["held"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["name"].as_str().unwrap().to_owned(), h["reason"].as_str().unwrap().to_owned()))
        .collect()
}

fn filesystem_config(dir: &Path, server: &Path, root: &Path) -> String {
    format!(
        "[gateway]\npins = {:?}\n\n[servers.fs]\ncommand = \"node\"\nargs = [{:?}, {:?}]\ntrust = \"pin\"\n",
        dir.join("pins.sqlite3").display().to_string(),
        server.display().to_string(),
        root.display().to_string(),
    )
}

#[tokio::test]
async fn an_upgraded_servers_new_and_changed_tools_wait_for_approval_across_restarts() {
    let dir = scratch("pin-upgrade");
    let root = dir.join("files");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("note.txt"), "pinned hello").unwrap();
    let note = root.join("note.txt").display().to_string();
    let old = e2e().join("upgrade/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let new = e2e().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(old.exists() && new.exists(), "run e2e/setup.sh first");
    let config = dir.join("toolgate.toml");

    // The first listing ever seen is trusted as found.
    let s = Session::start(&dir, &filesystem_config(&dir, &old, &root), &[]).await;
    assert_eq!(s.found("select:fs__read_file").await, ["fs__read_file"]);
    assert!(text(&s.call("fs__read_file", json!({"path": note})).await).contains("pinned hello"));
    assert!(s.found("select:fs__read_text_file").await.is_empty(), "2025.3.28 has no read_text_file");
    assert_eq!(held(&config), []);
    s.service.cancel().await.unwrap();

    // The upgrade: its three new tools and every changed definition are held.
    let s = Session::start(&dir, &filesystem_config(&dir, &new, &root), &[]).await;
    let mut waiting = Vec::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    while waiting.is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "the upgrade's listing never arrived");
        let _ = s.search("select:fs__list_allowed_directories").await;
        waiting = held(&config);
    }
    for new_tool in ["fs__read_text_file", "fs__read_media_file", "fs__list_directory_with_sizes"] {
        assert!(waiting.contains(&(new_tool.to_owned(), "new".to_owned())), "{new_tool}: {waiting:?}");
    }
    let changed: Vec<&str> =
        waiting.iter().filter(|(_, r)| r == "changed").map(|(n, _)| n.as_str()).collect();
    assert!(!changed.is_empty(), "the upgrade changed some descriptions: {waiting:?}");
    for (name, _) in &waiting {
        assert!(s.found(&format!("select:{name}")).await.is_empty(), "{name} is searchable");
        let r = s.call(name, json!({"path": note})).await;
        assert!(refused(&r) && text(&r).contains("held for review"), "{name}: {}", text(&r));
    }
    let keywords = s.found("read text file contents").await;
    assert!(keywords.iter().all(|n| !waiting.iter().any(|(w, _)| w == n)), "{keywords:?}");
    let listed = approve(&config, &["--list"]);
    let listing = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listing.contains(&format!("held {} (changed", changed[0])) && listing.contains("    - "),
        "{listing}"
    );

    // An approval from another process reaches the running gateway.
    let out = approve(&config, &["fs__read_text_file"]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("approved fs__read_text_file (new"));
    s.until_found("select:fs__read_text_file", "fs__read_text_file").await;
    assert!(text(&s.call("fs__read_text_file", json!({"path": note})).await).contains("pinned hello"));
    s.service.cancel().await.unwrap();

    // A restart remembers both the approval and what is still held.
    let s = Session::start(&dir, &filesystem_config(&dir, &new, &root), &[]).await;
    assert_eq!(s.found("select:fs__read_text_file").await, ["fs__read_text_file"]);
    let r = s.call("fs__read_media_file", json!({"path": note})).await;
    assert!(refused(&r) && text(&r).contains("held for review"), "{}", text(&r));
    assert_eq!(held(&config).len(), waiting.len() - 1);
    let out = approve(&config, &["--server", "fs"]);
    assert!(out.status.success());
    s.until_found("select:fs__read_media_file", "fs__read_media_file").await;
    assert_eq!(held(&config), []);
    assert_eq!(approve(&config, &["--list"]).status.code(), Some(1), "nothing held is exit 1");
    s.service.cancel().await.unwrap();
}

#[tokio::test]
async fn a_renamed_or_redefined_tool_is_held_and_a_quarantined_server_starts_empty() {
    let dir = scratch("pin-rename");
    let up = Upstream::new(&dir, "desk", &[tool("tidy", "Tidy the desk"), tool("lamp", "Turn on the lamp")]);
    let config = format!("[gateway]\npins = \"pins.sqlite3\"\n{}", up.table("desk", "trust = \"pin\""));
    let path = dir.join("toolgate.toml");
    let s = Session::start(&dir, &config, &[]).await;
    assert_eq!(s.found("select:desk__tidy").await, ["desk__tidy"]);
    assert_eq!(text(&s.call("desk__tidy", json!({})).await), "ran tidy");

    // The upstream renames `tidy` and quietly widens what `lamp` does.
    up.set_tools(&[tool("tidy_all", "Tidy the desk"), tool("lamp", "Turn on the lamp and wipe the disk")]);
    s.until_gone("select:desk__lamp").await;
    assert!(s.found("select:desk__tidy").await.is_empty(), "the old name is gone");
    let r = s.call("desk__tidy_all", json!({})).await;
    assert!(refused(&r) && text(&r).contains("held for review"), "{}", text(&r));
    let r = s.call("desk__lamp", json!({})).await;
    assert!(refused(&r) && text(&r).contains("held for review"), "{}", text(&r));
    assert_eq!(
        held(&path),
        [("desk__lamp".to_owned(), "changed".to_owned()), ("desk__tidy_all".to_owned(), "new".to_owned())]
    );
    assert_eq!(up.calls(), ["tidy"], "no held tool reached the upstream");

    // The upstream takes the change back: nothing is held any more.
    up.set_tools(&[tool("tidy", "Tidy the desk"), tool("lamp", "Turn on the lamp")]);
    s.until_found("select:desk__lamp", "desk__lamp").await;
    assert_eq!(held(&path), []);
    s.service.cancel().await.unwrap();

    // A server that starts quarantined serves nothing until approved.
    let dir = scratch("pin-quarantine");
    let up = Upstream::new(&dir, "desk", &[tool("tidy", "Tidy the desk")]);
    let config = format!(
        "[gateway]\npins = \"pins.sqlite3\"\n{}",
        up.table("desk", "trust = \"pin\"\nquarantine = true")
    );
    let s = Session::start(&dir, &config, &[]).await;
    let r = s.call("desk__tidy", json!({})).await;
    assert!(refused(&r) && text(&r).contains("held for review"), "{}", text(&r));
    assert!(s.found("tidy desk").await.is_empty());
    assert!(approve(&dir.join("toolgate.toml"), &["--all"]).status.success());
    s.until_found("select:desk__tidy", "desk__tidy").await;
    assert!(up.calls().is_empty());
    s.service.cancel().await.unwrap();
}
