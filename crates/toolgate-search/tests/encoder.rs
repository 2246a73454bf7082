//! The `bert` strategy's encoder against sentence-transformers on torch, the reference it
//! reimplements: the same model (`e2e/model`, all-MiniLM-L6-v2, installed by `e2e/setup.sh`),
//! the same texts, vectors compared by cosine. A short request, a paragraph, one long enough to
//! be cut at 256 tokens, accents and Chinese, and several texts of different lengths encoded in
//! one batch (packed with no padding) must each give sentence-transformers' vector.
#![cfg(feature = "bert")]

use std::path::{Path, PathBuf};
use std::process::Command;

use toolgate_search::semantic::bert::BertEncoder;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// sentence-transformers' unit vectors of `texts`, one forward pass each.
fn reference(texts: &[String]) -> Vec<Vec<f32>> {
    let python = repo().join("e2e/.venv/bin/python");
    assert!(python.exists(), "the SDKs are not installed: run e2e/setup.sh (the README's test command does)");
    let script = "import json, sys\n\
        from sentence_transformers import SentenceTransformer\n\
        model = SentenceTransformer(sys.argv[1], device='cpu')\n\
        texts = json.load(sys.stdin)\n\
        print(json.dumps([model.encode(t, normalize_embeddings=True).tolist() for t in texts]))\n";
    let mut child = Command::new(python)
        .args(["-c", script])
        .arg(repo().join("e2e/model"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    serde_json::to_writer(child.stdin.take().unwrap(), texts).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn every_text_encodes_to_sentence_transformers_vector_alone_and_in_a_batch() {
    let long = "Every Monday someone exports the numbers, cleans them by hand and mails a chart. ".repeat(40);
    let texts: Vec<String> = [
        "find the cheapest flight from Berlin to Lisbon next Friday",
        "Read notes.md, pull out every line that mentions a deadline, and add each of them as an \
         event to my calendar for the right day, with a reminder one day before.",
        long.as_str(),
        "Crème brûlée recipes, naïve café reviews",
        "帮我查一下明天北京的天气",
        "a",
    ]
    .map(str::to_owned)
    .to_vec();
    let want = reference(&texts);
    let encoder = BertEncoder::from_dir(&repo().join("e2e/model")).unwrap();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batch = encoder.embed_batch(&refs).unwrap();
    for ((text, want), batched) in texts.iter().zip(&want).zip(&batch) {
        let alone = encoder.embed(text).unwrap();
        let label: String = text.chars().take(30).collect();
        assert_eq!(alone.len(), want.len());
        assert!(cosine(&alone, want) > 0.9999, "{label}: cosine {}", cosine(&alone, want));
        assert!(cosine(batched, want) > 0.9999, "{label} in a batch: cosine {}", cosine(batched, want));
    }
    // Different texts stay apart: the check above could not pass with one vector for all.
    assert!(cosine(&batch[0], &batch[4]) < 0.9);
}
