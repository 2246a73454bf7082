//! Golden request bodies per provider mode for one scripted session (first request, a search,
//! the request after it, a call, the request after that), and each body validated against the
//! official SDKs' typed request parameters (`e2e/validate_requests.py`, the `anthropic`,
//! `openai` and `google-genai` packages that `e2e/setup.sh` installs).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolgate::defer::{DeferConfig, DeferMode};
use toolgate::render::{self, Call, Provider, stability};
use toolgate::{Catalog, Policy, Toolbox};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn golden(mode: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/render-{mode}.json"))
}

fn catalog() -> Catalog {
    // Four small tools of two servers (`crates/toolgate/tests/fixtures/weather-git.jsonl`).
    Catalog::from_text("weather-git.jsonl", include_str!("fixtures/weather-git.jsonl"))
        .expect("a valid catalog")
}

/// One session in `provider`'s mode: each turn's tools, system prompt and the answers sent
/// back after it.
fn session(provider: Provider) -> Value {
    let toolbox = Toolbox::builder(&catalog(), Policy::permissive())
        .defer(DeferConfig { mode: DeferMode::On, ..DeferConfig::default() })
        .exposure(provider.exposure())
        .build()
        .unwrap();
    let mut chat = toolbox.conversation();
    let mut turns = Vec::new();
    let steps = [
        ("tool_search", json!({"query": "weather forecast", "limit": 1})),
        ("weather__forecast", json!({"city": "Paris"})),
    ];
    for (name, input) in steps {
        let turn = render::render(&toolbox, &mut chat, provider).unwrap();
        let mut answers = Vec::new();
        for call in render::calls(provider, &stability::model_reply(provider, "call_1", name, input.clone()))
        {
            answers.push(match call {
                Call::Search { id, arguments } => {
                    render::answer_search(&toolbox, &mut chat, provider, &id, &arguments)
                }
                Call::Tool { id, name, arguments } => {
                    assert!(toolbox.check(&mut chat, &name, &arguments).is_allow(), "{name} was loaded");
                    render::tool_output(provider, &id, "Sunny, 21 °C", false)
                }
            });
        }
        assert_eq!(answers.len(), 1, "{}: the reply was read", provider.name());
        turns.push(json!({"tools": turn.tools, "system": turn.system, "answers": answers}));
    }
    let last = render::render(&toolbox, &mut chat, provider).unwrap();
    turns.push(json!({"tools": last.tools, "system": last.system, "answers": []}));
    json!({"provider": provider.name(), "turns": turns})
}

#[test]
fn every_mode_renders_its_golden_session() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut stale = Vec::new();
    for (mode, provider) in Provider::NAMES {
        let text = serde_json::to_string_pretty(&session(provider)).unwrap() + "\n";
        let path = golden(mode);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "golden sessions differ (rerun with UPDATE_GOLDEN=1 and review the diff): {stale:?}"
    );
}

#[test]
fn the_golden_sessions_validate_against_the_official_sdk_types() {
    let python = repo().join("e2e/.venv/bin/python");
    assert!(python.exists(), "the SDKs are not installed: run e2e/setup.sh (the README's test command does)");
    let files: Vec<PathBuf> = Provider::NAMES.iter().map(|(m, _)| golden(m)).collect();
    let out = std::process::Command::new(python)
        .arg(repo().join("e2e/validate_requests.py"))
        .args(&files)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("30 turns checked, 0 problems"), "{stdout}");
}

#[test]
fn the_validator_can_fail() {
    let python = repo().join("e2e/.venv/bin/python");
    assert!(python.exists(), "the SDKs are not installed: run e2e/setup.sh");
    let dir = std::env::temp_dir().join(format!("toolgate-render-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    // Every tool deferred, a deferred tool with cache_control, and a key no tool type has.
    let tools = json!([{"name": "a", "input_schema": {"type": "object"}, "defer_loading": true,
                         "cache_control": {"type": "ephemeral"}, "colour": "red"}]);
    std::fs::write(
        &bad,
        json!({"provider": "anthropic", "turns": [{"tools": tools, "answers": []}]}).to_string(),
    )
    .unwrap();
    let out = std::process::Command::new(python)
        .arg(repo().join("e2e/validate_requests.py"))
        .arg(&bad)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    for want in ["every tool is deferred", "carries cache_control", "'colour'"] {
        assert!(stdout.contains(want), "{want} not reported: {stdout}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
