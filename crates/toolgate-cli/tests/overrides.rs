//! Tool overrides through the real binary (`[servers.NAME.tools.TOOL]`): a renamed tool with an
//! extended description, hidden parameters and a default is what the index finds and the client
//! lists; a call reaches the upstream under the upstream's name with the fixed values, a call
//! that sets one is refused before the upstream hears of it, and the old name reaches nothing.
//! `toolgate doctor` says what each override changed and what it did to the tokens.

mod support;

use std::process::Command;

use serde_json::{Value, json};
use support::{Session, Upstream, refused, scratch, text};

/// The fixture's tools: an issue tracker whose `create_issue` wants the repository each time.
fn tracker() -> Vec<Value> {
    vec![
        json!({
            "name": "create_issue",
            "description": "Create a new issue in a GitHub repository.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "owner": {"type": "string", "description": "Repository owner (user or organisation)"},
                    "repo": {"type": "string", "description": "Repository name"},
                    "title": {"type": "string", "description": "Issue title"},
                    "labels": {"type": "array", "items": {"type": "string"}, "description": "Labels to apply"}
                },
                "required": ["owner", "repo", "title", "labels"]
            }
        }),
        json!({
            "name": "list_issues",
            "description": "List issues.",
            "inputSchema": {"type": "object", "properties": {"state": {"type": "string"}}}
        }),
    ]
}

const OVERRIDES: &str = r#"tools.create_issue = { name = "open_bug", append = "Files the bug in the acme/app tracker, where the team triages it.", hide = { owner = "acme", repo = "app" }, defaults = { labels = ["triage"] }, destructive = false }
tools.list_issues = { description = "List the open bugs of the acme/app tracker, newest first.", read_only = true }"#;

/// The calls the upstream received: (tool, arguments).
fn received(upstream: &Upstream) -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(&upstream.log).unwrap_or_default();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["tool"].as_str().unwrap().to_owned(), v["arguments"].clone())
        })
        .collect()
}

#[tokio::test]
async fn the_model_sees_the_operators_definition_and_the_upstream_gets_its_own_terms() {
    let dir = scratch("overrides");
    let gh = Upstream::new(&dir, "gh", &tracker());
    let config = gh.table("gh", OVERRIDES);
    let s = Session::start(&dir, &config, &[]).await;
    s.settled().await;

    // The index reads the operator's words: the appended sentence and the new description.
    let found = s.search("file a bug for the team to triage").await;
    assert_eq!(found["matches"][0], "gh__open_bug", "{found}");
    let found = s.search("newest open bugs in the tracker").await;
    assert!(found["matches"].as_array().unwrap().iter().any(|m| m == "gh__list_issues"), "{found}");

    // What the client lists is the overridden definition.
    let tools = s.service.peer().list_all_tools().await.unwrap();
    let open = tools.iter().find(|t| t.name == "gh__open_bug").expect("loaded by the search");
    assert!(tools.iter().all(|t| t.name != "gh__create_issue"), "the upstream's name is not shown");
    let description = open.description.as_deref().unwrap_or_default();
    assert!(
        description.starts_with("Create a new issue") && description.ends_with("where the team triages it.")
    );
    let schema = Value::Object((*open.input_schema).clone());
    assert_eq!(schema["required"], json!(["title"]), "{schema}");
    assert!(schema["properties"].get("owner").is_none() && schema["properties"].get("repo").is_none());
    assert_eq!(schema["properties"]["labels"]["default"], json!(["triage"]));
    let hints = serde_json::to_value(&open.annotations).unwrap();
    assert_eq!(hints["destructiveHint"], json!(false), "{hints}");
    let list = tools.iter().find(|t| t.name == "gh__list_issues").expect("loaded by the search");
    assert_eq!(serde_json::to_value(&list.annotations).unwrap()["readOnlyHint"], json!(true));

    // A call goes upstream under the upstream's name, with the default and the fixed values.
    let r = s.call("gh__open_bug", json!({"title": "Crash on start"})).await;
    assert!(!refused(&r), "{}", text(&r));
    assert_eq!(
        received(&gh),
        [(
            "create_issue".to_owned(),
            json!({"title": "Crash on start", "labels": ["triage"], "owner": "acme", "repo": "app"})
        )]
    );

    // A call that sets a hidden parameter is refused, and the upstream never hears of it.
    let r = s.call("gh__open_bug", json!({"title": "x", "owner": "someone-else"})).await;
    assert!(refused(&r), "{}", text(&r));
    assert!(text(&r).contains("parameter `owner` of tool `open_bug` is fixed"), "{}", text(&r));
    // Nor does the upstream's own name reach it: it was never shown.
    let r = s
        .call("gh__create_issue", json!({"title": "x", "owner": "someone-else", "repo": "r", "labels": []}))
        .await;
    assert!(refused(&r), "{}", text(&r));
    assert_eq!(received(&gh).len(), 1, "{:?}", received(&gh));

    s.service.cancel().await.unwrap();

    // The doctor says what each override changed, and what it did to the definition's tokens.
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["doctor", "--json", "--config"])
        .arg(dir.join("toolgate.toml"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    });
    let overrides = report["overrides"].as_array().expect("an overrides section");
    let open = overrides.iter().find(|o| o["tool"] == "create_issue").unwrap();
    let changes: Vec<&str> =
        open["changes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(
        changes,
        [
            "shown as `open_bug`",
            "description extended",
            "hides `owner`, `repo` (fixed values sent upstream)",
            "defaults for `labels`",
            "destructiveHint = false"
        ]
    );
    let (before, after) = (open["tokens_before"].as_u64().unwrap(), open["tokens_after"].as_u64().unwrap());
    assert!(after < before, "two parameters fewer outweigh a sentence more: {before} → {after}");
    let text_out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["doctor", "--config"])
        .arg(dir.join("toolgate.toml"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&text_out.stdout);
    assert!(
        shown.contains("gh.create_issue: shown as `open_bug`")
            && shown.contains(&format!("{before} → {after} tokens")),
        "{shown}"
    );
}

#[test]
fn an_override_that_cannot_hold_is_a_configuration_error_naming_it() {
    let dir = scratch("overrides-errors");
    let gh = Upstream::new(&dir, "gh", &tracker());
    for (extra, want) in [
        (
            "tools.create_issue = { name = \"gh__x\" }",
            "servers.gh.tools.create_issue.name: \"gh__x\" is out of range; expected a tool name of 1 to 64 letters",
        ),
        (
            "tools.create_issue = { hide = { labels = [] }, defaults = { labels = [] } }",
            "servers.gh.tools.create_issue.defaults: \"labels\" is out of range; expected a parameter either hidden",
        ),
        (
            "tools.create_issue = { name = \"list_issues\" }\ntools.list_issues = { read_only = true }",
            "is out of range; expected a name no other tool of the server is shown under",
        ),
        ("tools.create_issue = { hidden = { owner = \"a\" } }", "unknown key `hidden`; did you mean `hide`?"),
    ] {
        let path = dir.join("bad.toml");
        std::fs::write(&path, gh.table("gh", extra)).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["serve", "--stdio", "--config"])
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra}: {err}");
        assert!(err.contains(want), "{extra}:\n{err}");
    }
}

#[tokio::test]
async fn a_deny_written_for_the_upstreams_name_still_holds_after_a_rename() {
    let dir = scratch("overrides-deny");
    let gh = Upstream::new(&dir, "gh", &tracker());
    for (rule, denied) in [
        ("denied = [\"create_*\"]", true),
        ("[policy]\ndeny = [\"gh__create_issue\"]", true),
        ("[policy]\ndeny = [\"gh__open_bug\"]", true),
        ("[policy]\ndeny = [\"gh__list_*\"]", false),
    ] {
        // A server rule goes in the server's table; a `[policy]` table after it.
        let config = if rule.starts_with('[') {
            format!("{}{rule}\n", gh.table("gh", OVERRIDES))
        } else {
            gh.table("gh", &format!("{rule}\n{OVERRIDES}"))
        };
        let s = Session::start(&dir, &config, &[]).await;
        s.settled().await;
        let found = s.search("file a bug for the team to triage").await;
        let shown = found["matches"].as_array().unwrap().iter().any(|m| m == "gh__open_bug");
        assert_eq!(shown, !denied, "{rule}: {found}");
        let r = s.call("gh__open_bug", json!({"title": "x"})).await;
        assert_eq!(refused(&r), denied, "{rule}: {}", text(&r));
        s.service.cancel().await.unwrap();
    }
    assert_eq!(received(&gh).len(), 1, "only the last configuration let a call through");
}
