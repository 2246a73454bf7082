//! `toolgate search --config F [--profile P] --json` searches what that subject sees and
//! nothing else: across many queries, no match is a tool that the deny list, a server policy or
//! the profile hides, whatever the query asks for (by words, by exact name or by `select:`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A configuration over the embedded catalog's source file, in a fresh directory per test.
fn config(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgate-subject-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/livemcpbench/catalog.jsonl");
    let text = format!(
        r#"
[policy]
deny = ["mcp-github-trending", "*__*_delete"]

[servers.demo]
catalog = "{}"
denied = ["*upload*"]

[profiles.browser]
tools = ["playwright__*", "puppeteer__*"]
disallowed_tools = ["*__*evaluate"]
"#,
        catalog.canonicalize().unwrap().display()
    );
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn search(config: &Path, profile: Option<&str>, query: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(["search", "--config"]).arg(config).args(["--json", "--limit", "50"]);
    if let Some(p) = profile {
        cmd.args(["--profile", p]);
    }
    cmd.arg(query).output().expect("toolgate runs")
}

/// The names a search matched (exit code 1, no match, gives none).
fn names(out: &Output) -> Vec<String> {
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "search failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    v["matches"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap().to_owned()).collect()
}

const QUERIES: [&str; 8] = [
    "take a screenshot of a web page",
    "delete a resource with an HTTP request",
    "evaluate javascript in the browser page",
    "upload a file through the browser",
    "trending github repositories and developers",
    "playwright__playwright_delete",
    "select:playwright__playwright_evaluate,puppeteer__puppeteer_evaluate,playwright__playwright_click",
    "mcp-github-trending__get_github_trending_repositories",
];

#[test]
fn a_profile_never_finds_what_it_may_not_see() {
    let config = config("profile");
    let mut seen = 0;
    for query in QUERIES {
        for name in names(&search(&config, Some("browser"), query)) {
            seen += 1;
            assert!(name.starts_with("playwright__") || name.starts_with("puppeteer__"), "{query}: {name}");
            assert!(!name.ends_with("evaluate"), "{query}: disallowed {name}");
            assert!(!name.ends_with("_delete"), "{query}: globally denied {name}");
            assert!(!name.contains("upload"), "{query}: server-denied {name}");
        }
    }
    assert!(seen > 20, "the profile should still find its own tools ({seen} matches)");
    let clicked = names(&search(&config, Some("browser"), QUERIES[6]));
    assert_eq!(clicked, ["playwright__playwright_click"], "select: keeps only the visible name");
}

#[test]
fn without_a_profile_the_deny_list_and_server_policy_still_apply() {
    let config = config("none");
    let mut all = Vec::new();
    for query in QUERIES {
        all.extend(names(&search(&config, None, query)));
    }
    assert!(all.iter().any(|n| n.starts_with("playwright__")), "{all:?}");
    assert!(all.iter().all(|n| !n.starts_with("mcp-github-trending__")), "a bare server name denies it all");
    assert!(all.iter().all(|n| !n.ends_with("_delete") && !n.contains("upload")), "{all:?}");
}

#[test]
fn an_unknown_profile_is_an_error_that_names_the_known_ones() {
    let out = search(&config("unknown"), Some("admin"), "anything");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no [profiles.admin]") && err.contains("known profiles: browser"), "{err}");
}
