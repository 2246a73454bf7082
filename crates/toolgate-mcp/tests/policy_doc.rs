//! Keeps `docs/policy.md` true: every worked example (a `toml` block, then `text` blocks that
//! start with `subject NAME` and list `tool  verdict` lines) is run through the policy, and the
//! error and notice texts the document quotes are the ones the library prints. The examples are
//! whole gateway configurations (with `command`), so the gateway's reader reads them.

use std::path::Path;

use toolgate::budget::{OverHardLimit, Unload, notice};
use toolgate::policy::{Policy, PolicyError, Rule, Verdict};
use toolgate::{Catalog, ToolSpec};
use toolgate_mcp::config::Config;

fn doc() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/policy.md")).unwrap()
}

/// The fenced blocks of a markdown text: (language, body).
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("```") {
            match current.take() {
                Some(block) => out.push(block),
                None => current = Some((rest.trim().to_owned(), String::new())),
            }
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

fn policy_for(config: &Config, subject: &str) -> Policy {
    let mut parts = subject.split('/');
    let top = parts.next().unwrap();
    let mut policy = Policy::new(config, (top != "main").then_some(top)).unwrap();
    for child in parts {
        policy = policy.child(child).unwrap();
    }
    policy
}

#[test]
fn worked_examples_say_what_the_policy_does() {
    let mut config = None;
    let mut checked = 0;
    for (lang, body) in blocks(&doc()) {
        if lang == "toml" {
            config = Some(Config::from_toml("policy.md", &body, Path::new(".")).unwrap());
            continue;
        }
        let Some(subject) = body.lines().next().and_then(|l| l.strip_prefix("subject ")) else { continue };
        let config = config.as_ref().expect("a toml block comes first");
        let policy = policy_for(config, subject);
        for line in body.lines().skip(1) {
            let (tool, expected) = line.split_once("  ").unwrap();
            let (name, read_only) = match tool.strip_suffix(" [readOnlyHint]") {
                Some(name) => (name, true),
                None => (tool, false),
            };
            let (server, own) = name.split_once("__").unwrap();
            let mut spec = ToolSpec::mcp(server, own, "Safe and read-only.");
            if read_only {
                spec.annotations.insert("readOnlyHint".into(), true.into());
            }
            let catalog = Catalog::builder().tool(spec).build().unwrap();
            let got = match policy.decide(&catalog.tools()[0]) {
                Verdict::Allow => "allow".to_owned(),
                Verdict::Deny(rule) => rule.to_string(),
            };
            assert_eq!(got, expected.trim(), "{subject}: {name}");
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} example lines found");
}

#[test]
fn quoted_errors_and_notices_are_the_real_ones() {
    let text = doc();
    let quoted = [
        PolicyError::RequiredOverBudget { server: "github".into(), required: 30, limit: 24 }.to_string(),
        PolicyError::RequiredOverFirstTurn { required: 100, fixed: 4, limit: 96 }.to_string(),
        PolicyError::FixedOverFirstTurn { fixed: 100, limit: 96 }.to_string(),
        Policy::new(
            &Config::from_toml("t", "[profiles.lead]\n[profiles.reviewer]\n", Path::new(".")).unwrap(),
            Some("writer"),
        )
        .unwrap_err()
        .to_string(),
        OverHardLimit { definitions: 130, hard: 128 }.to_string(),
        notice(&[
            Unload { tool: "github__get_issue".into(), rule: Rule::DynamicBudget { limit: 112 } },
            Unload { tool: "linear__list_issues".into(), rule: Rule::DynamicBudget { limit: 112 } },
        ]),
    ];
    for q in quoted {
        assert!(text.lines().any(|l| l == q), "docs/policy.md does not quote:\n{q}");
    }
}
