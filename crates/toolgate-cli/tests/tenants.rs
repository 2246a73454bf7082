//! One tenant may not touch another's HTTP session. The attacker holds a valid bearer token of
//! a narrow profile and knows the victim's `Mcp-Session-Id`; `e2e/tenants.py` stages each
//! attack with raw HTTP against real `toolgate serve --http` processes (two replicas sharing a
//! real `redis-server` where it takes two) in front of `e2e/tenant_server.py`, a real MCP
//! server of the Python SDK that writes down every call, cancellation and `logging/setLevel`
//! it receives:
//!
//! 1. a GET with the victim's session id and a `Last-Event-ID` takes the victim's in-flight
//!    tool result;
//! 2. a GET without one becomes the victim's event stream (`list_changed`, and log lines of a
//!    server the attacker's profile cannot see);
//! 3. a `notifications/cancelled` cancels the victim's call in flight;
//! 4. a `DELETE` ends the victim's session;
//! 5. a `logging/setLevel` silences the victim's upstream logs;
//! 6. a session not yet bound to its token (only initialized) is restored by the attacker on
//!    her profile's path or on another replica, and its owner is then refused;
//! 7. a `DELETE` on one replica leaves the session alive on another that restored it;
//! 8. a restored session does not count against `[gateway] max_sessions`;
//! 9. a sessionless `server/discover` with a profile-bound token gets the instructions of the
//!    unrestricted subject, naming every deferred tool.
//!
//! Fixed, a request of any method naming a session another token opened gets 403 with a
//! JSON-RPC error and nothing else happens: the attacker's connection gets none of the
//! victim's events, the upstream sees no cancellation or level of hers, and the victim's own
//! requests (the control of each attack) go on. A session deleted on one replica is 404 on
//! every other and stays gone; a restore past the cap gets 503; the attacker's discover names
//! no tool her profile cannot see. The script judges each attack (`blocked`) by what reached
//! the attacker's connection and the upstream's log.

mod support;

use std::process::Command;

use serde_json::Value;
use support::e2e;

const ATTACKS: [&str; 9] = [
    "steal_result",
    "hijack_stream",
    "cancel_call",
    "delete_session",
    "set_log_level",
    "restore_unbound",
    "delete_across_replicas",
    "restore_past_max_sessions",
    "discover_instructions",
];

/// The last `n` bytes of `text` or a little more, cut on a character boundary.
fn tail(text: &str, n: usize) -> &str {
    let mut start = text.len().saturating_sub(n);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    &text[start..]
}

#[test]
fn another_tenants_token_cannot_touch_a_session_it_did_not_open() {
    let python = e2e().join(".venv/bin/python");
    assert!(
        python.exists(),
        "the Python SDK is not installed: run e2e/setup.sh (the README's test command does)"
    );
    let out = Command::new("timeout")
        .arg("600")
        .arg(&python)
        .arg(e2e().join("tenants.py"))
        .args(["--toolgate", env!("CARGO_BIN_EXE_toolgate")])
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tenants.py failed ({}):\n{stdout}\n{}", out.status, tail(&stderr, 4000));
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("tenants.py printed no JSON ({e}):\n{stdout}"));
    let attacks = report["attacks"].as_array().unwrap_or_else(|| panic!("no attacks: {report}"));
    let names: Vec<&str> = attacks.iter().filter_map(|a| a["name"].as_str()).collect();
    assert_eq!(names, ATTACKS, "every attack ran: {report:#}");
    let succeeded: Vec<&str> =
        attacks.iter().filter(|a| a["blocked"] != true).filter_map(|a| a["name"].as_str()).collect();
    for attack in attacks {
        let name = attack["name"].as_str().unwrap_or_default();
        let why = attack["why"].as_str().unwrap_or_default();
        assert_eq!(
            attack["blocked"],
            true,
            "attack `{name}` was not blocked ({} of 9 were not: {succeeded:?}): {why}\nthe whole report:\n{report:#}",
            succeeded.len(),
        );
    }
}
