//! What an upstream asks of the user passes through toolgate, in both revisions on both sides,
//! with the real Python `mcp` SDK at both ends: `e2e/elicit_server.py` (an MCPServer whose
//! `book_table` asks how many guests) behind `toolgate serve --stdio`, and `e2e/elicit_client.py`
//! (the SDK's `Client`) in front of it.
//!
//! The upstream speaks 2026-07-28 when toolgate probes it (its question comes back as an
//! `InputRequiredResult` whose `requestState` must return to it untouched: the SDK rejects a
//! state it did not issue) or 2025-11-25 with `protocol = "2025-11-25"` (its question is an
//! `elicitation/create` in the middle of the call). The client speaks 2025-11-25 (`legacy`) or
//! 2026-07-28 (pinned). A client that declared elicitation is asked and its answer reaches the
//! upstream; one that did not is never asked, and the upstream is told so: on 2026-07-28 it
//! learns, with the call, the capabilities of the client that made it, not toolgate's.

mod support;

use support::e2e;

use std::process::Command;

use serde_json::Value;

/// Runs one cell over stdio: the upstream on `upstream` (`auto` or `2025-11-25`), the client in
/// `mode`, answering with 4 guests or declaring nothing. Its facts.
fn cell(upstream: &str, mode: &str, answers: bool) -> Value {
    cell_on(upstream, mode, answers, false)
}

/// [`cell`], over HTTP when `http`.
fn cell_on(upstream: &str, mode: &str, answers: bool, http: bool) -> Value {
    let python = e2e().join(".venv/bin/python");
    assert!(
        python.exists(),
        "the Python SDK is not installed: run e2e/setup.sh (the README's test command does)"
    );
    let dir = support::scratch(&format!("elicit-{upstream}-{mode}-{answers}"));
    let config = dir.join("toolgate.toml");
    std::fs::write(
        &config,
        format!(
            "[servers.elicit]\ncommand = {:?}\nargs = [{:?}]\nprotocol = {upstream:?}\n",
            python.display().to_string(),
            e2e().join("elicit_server.py").display().to_string(),
        ),
    )
    .unwrap();
    let mut client = Command::new("timeout");
    client.arg("120").arg(&python).arg(e2e().join("elicit_client.py"));
    client.args(["--mode", mode]);
    let _server;
    if http {
        let server =
            support::serve(&["--http", "127.0.0.1:0", "--config", &config.display().to_string()], &[]);
        client.args(["--url", &format!("http://{}/mcp", server.addr)]);
        _server = server;
    } else {
        client.args(["--toolgate", env!("CARGO_BIN_EXE_toolgate"), "--config"]).arg(&config);
    }
    if answers {
        client.args(["--answer", "4"]);
    }
    let out = client.output().expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "elicit_client {upstream} {mode} failed:\n{stdout}\n{}",
        &stderr[stderr.len().saturating_sub(4000)..]
    );
    let _ = std::fs::remove_dir_all(&dir);
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap()
}

/// A client that declared elicitation was asked once, and the upstream got its answer.
fn answered(facts: &Value, client: &str, upstream: &str) {
    assert_eq!(facts["protocol"], client, "{facts}");
    assert_eq!(facts["asked"], serde_json::json!(["How many guests for Chez Toolgate?"]), "{facts}");
    assert_eq!(facts["booked"], "booked a table for 4 at Chez Toolgate", "{facts}");
    assert_eq!(facts["upstream_was_told"]["protocol"], upstream, "{facts}");
}

/// A client that declared nothing was never asked, and the call failed saying why.
fn not_asked(facts: &Value) -> String {
    assert_eq!(facts["asked"], serde_json::json!([]), "{facts}");
    assert_eq!(facts["booked_is_error"], true, "{facts}");
    facts["booked"].as_str().unwrap().to_owned()
}

#[test]
fn a_2026_07_28_upstream_asks_a_2025_11_25_client_and_gets_its_answer() {
    answered(&cell("auto", "legacy", true), "2025-11-25", "2026-07-28");
}

#[test]
fn a_2026_07_28_upstream_asks_a_2026_07_28_client_with_its_own_request_state() {
    answered(&cell("auto", "2026-07-28", true), "2026-07-28", "2026-07-28");
}

#[test]
fn a_2025_11_25_upstream_asks_a_2025_11_25_client_and_gets_its_answer() {
    answered(&cell("2025-11-25", "legacy", true), "2025-11-25", "2025-11-25");
}

#[test]
fn a_2025_11_25_upstream_asks_a_2026_07_28_client_while_its_call_waits() {
    answered(&cell("2025-11-25", "2026-07-28", true), "2026-07-28", "2025-11-25");
}

#[test]
fn a_2026_07_28_upstream_is_told_the_calling_clients_capabilities_not_toolgates() {
    let declared = cell("auto", "2026-07-28", true);
    assert!(declared["upstream_was_told"]["capabilities"]["elicitation"].is_object(), "{declared}");
    for mode in ["legacy", "2026-07-28"] {
        let silent = cell("auto", mode, false);
        assert_eq!(silent["upstream_was_told"]["capabilities"], serde_json::json!({}), "{silent}");
        let why = not_asked(&silent);
        assert!(why.contains("did not declare the form elicitation capability"), "{why}");
    }
}

#[test]
fn a_2025_11_25_upstreams_question_is_refused_for_a_client_that_did_not_declare_elicitation() {
    for mode in ["legacy", "2026-07-28"] {
        let why = not_asked(&cell("2025-11-25", mode, false));
        assert!(why.contains("the client that made the call did not declare elicitation"), "{why}");
    }
}

#[test]
fn over_http_the_question_rides_the_calls_own_stream() {
    answered(&cell_on("auto", "legacy", true, true), "2025-11-25", "2026-07-28");
    answered(&cell_on("2025-11-25", "legacy", true, true), "2025-11-25", "2025-11-25");
}
