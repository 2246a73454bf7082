//! `docs/config.md` documents every key the `toolgate.toml` parser accepts, and no other; its
//! example configuration parses, and so does the team setup of `docs/deploy.md`.

use std::collections::BTreeSet;
use std::path::Path;

use toolgate_mcp::config::Config;

fn doc() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md")).unwrap()
}

#[test]
fn the_reference_lists_exactly_the_keys_the_parser_accepts() {
    let documented: BTreeSet<String> = doc()
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(key, _)| key.to_owned())
        .filter(|key| key != "key")
        .collect();
    let known: BTreeSet<String> = Config::known_keys().into_iter().collect();
    let missing: Vec<&String> = known.difference(&documented).collect();
    let unknown: Vec<&String> = documented.difference(&known).collect();
    assert!(missing.is_empty(), "docs/config.md does not document: {missing:?}");
    assert!(unknown.is_empty(), "docs/config.md documents keys the parser does not accept: {unknown:?}");
}

#[test]
fn the_example_configuration_parses() {
    let text = doc();
    let start = text.find("```toml\n").expect("an example") + 8;
    let end = start + text[start..].find("```").unwrap();
    let config = Config::from_toml("docs/config.md", &text[start..end], Path::new(".")).unwrap();
    assert_eq!(config.servers.len(), 2);
    assert!(config.profiles.contains_key("reader"));
}

#[test]
fn the_team_setup_of_the_deployment_guide_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/deploy.md");
    let text = std::fs::read_to_string(path).unwrap();
    let blocks: Vec<&str> = text.split("```toml\n").skip(1).filter_map(|b| b.split("```").next()).collect();
    let team = blocks.iter().find(|b| b.contains("[oauth]")).expect("a team setup with [oauth]");
    // The guide reads the client secret from the environment; any value does here.
    let team = team.replace("${SENTRY_CLIENT_SECRET}", "a-client-secret");
    let config = Config::from_toml("docs/deploy.md", &team, Path::new(".")).unwrap();
    let oauth = config.host.oauth.expect("[oauth]");
    assert_eq!(oauth.profiles.len(), 2);
    assert!(config.servers.values().filter(|s| s.host.oauth.is_some()).count() == 2);
    for block in blocks.iter().filter(|b| !b.contains("${")) {
        Config::from_toml("docs/deploy.md", block, Path::new(".")).unwrap();
    }
}

#[test]
fn the_tool_overrides_example_parses_to_what_the_text_says() {
    let config = example_of("## Tool overrides");
    let overrides = &config.servers["github"].host.tools;
    let (name, args) =
        overrides.upstream_call("open_bug", serde_json::json!({"title": "t"}).as_object().cloned()).unwrap();
    assert_eq!(name, "create_issue");
    assert_eq!(
        serde_json::Value::Object(args.unwrap()),
        serde_json::json!({"title": "t", "labels": ["triage"], "owner": "acme", "repo": "app"})
    );
    assert!(
        overrides.upstream_call("open_bug", serde_json::json!({"owner": "x"}).as_object().cloned()).is_err()
    );
}

#[test]
fn the_rate_limits_example_parses_to_what_the_text_says() {
    let config = example_of("## Rate limits");
    let limits = &config.host.limits;
    let scopes = |who, profile| -> Vec<String> {
        limits.buckets(who, profile, "github", "github__create_issue").into_iter().map(|b| b.scope).collect()
    };
    assert_eq!(scopes("alice", None), ["all calls", "server github", "tool github__create_issue"]);
    assert_eq!(scopes("bot", Some("ci")), ["all calls"]);
    assert_eq!(limits.everyone.all.unwrap().burst, 10);
}

/// The first TOML example after `heading` in docs/config.md, read as the gateway reads it.
fn example_of(heading: &str) -> Config {
    let text = doc();
    let section = &text[text.find(heading).expect("the section")..];
    let start = section.find("```toml\n").expect("an example") + 8;
    let end = start + section[start..].find("```").unwrap();
    Config::from_toml("docs/config.md", &section[start..end], Path::new(".")).unwrap()
}
