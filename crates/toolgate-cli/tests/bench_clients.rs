//! A slice of the client harness (`bench/clients/`): whole tasks through the real Claude Code
//! and Codex CLIs, each request of the slice played by the same scripted model in three arms,
//! over LiveMCPBench's 70 servers (527 tools) each served by a process of its own:
//!
//! - `direct`: the servers connected to the CLI as it ships, its own tool search on;
//! - `listing`: the same with its own search off, every definition on every request;
//! - `toolgate`: the same servers behind `toolgate serve`, registered with the docs' snippet.
//!
//! It fails if toolgate's arm calls a gold tool less often than the client's own search does,
//! or costs more input tokens over the slice than listing every tool. The full tables and the
//! chart in `docs/clients.md` come from the same harness over every request.

mod support;

use std::process::Command;

use serde_json::Value;
use support::fixture;

/// Requests of LiveMCPBench's `check` part in the slice.
const SLICE: &str = "20";

#[test]
fn toolgate_calls_gold_tools_at_least_as_often_as_each_clients_own_search_and_costs_less_than_listing() {
    let out = std::env::temp_dir().join(format!("toolgate-bench-clients-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let harness = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/clients/harness.py");
    let run = Command::new("timeout")
        .arg("1500")
        .arg("python3")
        .arg(harness)
        .args(["--toolgate", env!("CARGO_BIN_EXE_toolgate")])
        .arg("--fixture")
        .arg(fixture())
        .args(["--set", "livemcpbench", "--limit", SLICE, "--clients", "claude,codex", "--forms", "keywords"])
        .arg("--out")
        .arg(&out)
        .output()
        .expect("python3 runs");
    let log = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "the harness failed:\n{}\n{log}", String::from_utf8_lossy(&run.stdout));
    let rows: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let row = |client: &str, arm: &str| -> &Value {
        rows.iter()
            .find(|r| r["client"] == client && r["arm"] == arm)
            .unwrap_or_else(|| panic!("no {client} {arm} row: {rows:#?}"))
    };
    for client in ["claude", "codex"] {
        let (own, listing, gate) = (row(client, "direct"), row(client, "listing"), row(client, "toolgate"));
        for r in [own, listing, gate] {
            assert_eq!(r["requests"], 20, "{r}");
            assert_eq!(r["problems"], 0, "a run failed: {r}\n{log}");
        }
        let gold = |r: &Value| r["gold_rate"].as_f64().unwrap_or_else(|| panic!("no search in {r}"));
        assert!(gold(gate) >= gold(own), "{client}: toolgate {gate} against its own search {own}");
        let tokens = |r: &Value| r["mean_input_tokens"].as_u64().unwrap();
        assert!(tokens(gate) < tokens(listing), "{client}: toolgate {gate} against listing {listing}");
        // Every toolgate run searched: the search tool was in front of the model.
        assert_eq!(gate["searched"], 20, "{client}: {gate}");
    }
    let _ = std::fs::remove_dir_all(&out);
}
