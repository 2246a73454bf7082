//! `toolgate render`: a provider's request for the next turn, from a catalog and a transcript,
//! and the cache-stability report of a scripted session in every mode.

use std::process::Command;

use serde_json::{Value, json};

fn render(args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate")).arg("render").args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn anthropic_mode_sends_every_definition_deferred_and_the_announcement() {
    let (code, v, err) = render(&["--provider", "anthropic", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["tools"], 528, "the embedded catalog's 527 tools and tool_search");
    assert_eq!(v["deferred"], 527);
    let tools = v["request"]["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "tool_search");
    assert!(v["request"]["system"].as_str().unwrap().starts_with("<available-deferred-tools>"));
}

#[test]
fn a_transcript_loads_what_it_discovered_and_chat_mode_lists_it() {
    let dir = std::env::temp_dir().join(format!("toolgate-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let transcript = dir.join("transcript.jsonl");
    let lines = [
        json!({"role": "user", "content": "take a screenshot"}),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "tool_reference", "tool_name": "playwright__playwright_screenshot"}]}]}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&transcript, text).unwrap();
    let (code, v, err) =
        render(&["--provider", "chat", "--json", "--transcript", transcript.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["loaded"], json!(["playwright__playwright_screenshot"]));
    let names: Vec<&str> = v["request"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(names, ["tool_search", "playwright__playwright_screenshot"]);
    assert_eq!(v["request"]["messages"][0]["role"], "system");

    std::fs::write(&transcript, "{\"role\": \"user\"}\nnot json\n").unwrap();
    let (code, _, err) = render(&["--provider", "chat", "--transcript", transcript.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("transcript.jsonl:2: not a JSON message"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_stability_report_meets_each_mode_s_promise() {
    let (code, v, err) = render(&["--provider", "all", "--stability", "--json"]);
    assert_eq!(code, 0, "{err}");
    let modes = v.as_object().unwrap();
    assert_eq!(modes.len(), 10);
    for (mode, r) in modes {
        let s = &r["summary"];
        assert_eq!(s["turns"], 20, "{mode}");
        assert!(s["loading_turns"].as_u64().unwrap() >= 4, "{mode}: {s}");
        assert_eq!(s["changed_on_other_turns"], 0, "{mode}: a turn that loaded nothing changed the prefix");
        let injection = ["chat", "gemini", "vertex", "anthropic-inject", "openai-responses-inject"];
        if injection.contains(&mode.as_str()) {
            // Client-side injection: one append-only change per loading turn.
            assert_eq!(s["changed_on_loading_turns"], s["loading_turns"], "{mode}: {s}");
            assert_eq!(s["append_only_changes"], s["loading_turns"], "{mode}: {s}");
        } else {
            assert_eq!(s["changed_on_loading_turns"], 0, "{mode}: {s}");
        }
    }
}

#[test]
fn an_unknown_mode_is_an_error_listing_the_modes() {
    let (code, _, err) = render(&["--provider", "claude"]);
    assert_eq!(code, 2);
    assert!(err.contains("--provider claude: unknown mode") && err.contains("openai-responses"), "{err}");
}

#[test]
fn the_model_table_picks_native_search_or_injection_and_the_configuration_extends_it() {
    let mode = |args: &[&str]| {
        let (code, v, err) = render(&[args, &["--json"]].concat());
        assert_eq!(code, 0, "{err}");
        (v["provider"].as_str().unwrap().to_owned(), v["deferred"].as_u64().unwrap())
    };
    assert_eq!(
        mode(&["--api", "anthropic", "--target-model", "claude-sonnet-4-5"]),
        ("anthropic".into(), 527)
    );
    assert_eq!(
        mode(&["--api", "anthropic", "--target-model", "claude-3-5-sonnet"]),
        ("anthropic-inject".into(), 0)
    );
    assert_eq!(mode(&["--api", "openai-responses", "--target-model", "gpt-5.5"]).0, "openai-responses");
    assert_eq!(mode(&["--api", "openai-responses", "--target-model", "gpt-4o"]).0, "openai-responses-inject");
    assert_eq!(mode(&["--api", "chat", "--target-model", "gpt-5.5"]).0, "chat");

    let dir = std::env::temp_dir().join(format!("toolgate-render-models-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let catalog =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/livemcpbench/catalog.jsonl");
    let config = dir.join("toolgate.toml");
    std::fs::write(
        &config,
        format!("[models]\n\"claude-3-5*\" = \"bridge\"\n[servers.demo]\ncatalog = {catalog:?}\n"),
    )
    .unwrap();
    let c = config.to_str().unwrap();
    assert_eq!(
        mode(&["--config", c, "--api", "anthropic", "--target-model", "claude-3-5-sonnet"]).0,
        "bridge"
    );
    std::fs::write(
        &config,
        format!("[models]\n\"claude-3-5*\" = \"fast\"\n[servers.demo]\ncatalog = {catalog:?}\n"),
    )
    .unwrap();
    let (code, _, err) =
        render(&["--config", c, "--api", "anthropic", "--target-model", "claude-3-5-sonnet"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown mode `fast`"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn openai_responses_counts_the_deferred_tools_inside_its_namespaces() {
    let (code, v, err) = render(&["--provider", "openai-responses", "--json"]);
    assert_eq!(code, 0, "{err}");
    let namespaces =
        v["request"]["tools"].as_array().unwrap().iter().filter(|t| t["type"] == "namespace").count();
    assert!(namespaces > 1, "one namespace per server: {}", v["request"]["tools"]);
    assert_eq!(v["deferred"], 527, "every tool of every namespace is deferred");
}

#[test]
fn a_request_too_long_for_a_terminal_goes_to_out_or_a_pipe() {
    let dir = std::env::temp_dir().join(format!("toolgate-render-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // `script` gives the command a terminal for its standard output.
    let toolgate = env!("CARGO_BIN_EXE_toolgate");
    let tty = Command::new("script")
        .args(["-qec", &format!("{toolgate} render --provider anthropic"), "/dev/null"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&tty.stdout);
    assert_eq!(tty.status.code(), Some(2), "{shown}");
    assert!(shown.contains("too much for a terminal") && shown.contains("--out FILE"), "{shown}");
    let out = dir.join("request.json");
    let (code, _, err) = render(&["--provider", "anthropic", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written["tools"].as_array().unwrap().len(), 528);
    // Piped, it is printed as before (the other tests read it from a pipe).
    let _ = std::fs::remove_dir_all(&dir);
}
