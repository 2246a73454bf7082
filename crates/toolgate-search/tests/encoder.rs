//! The `bert` strategy's encoder against sentence-transformers on torch, the reference it
//! reimplements: the same model (`e2e/model`, all-MiniLM-L6-v2, installed by `e2e/setup.sh`),
//! the same texts, vectors compared by cosine. A short request, a paragraph, one long enough to
//! be cut at 256 tokens, accents and Chinese, and several texts of different lengths encoded in
//! one batch (packed with no padding) must each give sentence-transformers' vector.
//!
//! sentence-transformers' vectors are recorded in `tests/data/minilm_reference.json` by
//! `scripts/minilm_reference.py` (torch's wheels bring gigabytes of CUDA libraries that the
//! tests do not install); the file names the model's weights by hash, checked here.
#![cfg(feature = "bert")]

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use toolgate_search::semantic::bert::BertEncoder;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The recorded texts and sentence-transformers' unit vector of each, one forward pass each,
/// after checking that `model` holds the weights they were recorded with.
fn reference(model: &Path) -> Vec<(String, Vec<f32>)> {
    let weights = model.join("model.safetensors");
    let bytes = std::fs::read(&weights).unwrap_or_else(|e| {
        panic!("{}: {e}; run e2e/setup.sh (the README's test command does)", weights.display())
    });
    let recorded: serde_json::Value =
        serde_json::from_str(include_str!("data/minilm_reference.json")).unwrap();
    let hash: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        recorded["model_safetensors_sha256"],
        hash,
        "{} is not the model the vectors were recorded with: run scripts/minilm_reference.py",
        weights.display()
    );
    let texts = recorded["texts"].as_array().unwrap();
    texts
        .iter()
        .map(|t| {
            let vector = t["vector"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
            (t["text"].as_str().unwrap().to_owned(), vector)
        })
        .collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn every_text_encodes_to_sentence_transformers_vector_alone_and_in_a_batch() {
    let model = repo().join("e2e/model");
    let recorded = reference(&model);
    let encoder = BertEncoder::from_dir(&model).unwrap();
    // What the recording must hold for the test to mean what it says: a text cut at 256
    // tokens, one of Chinese, one of accents, and six in all.
    assert!(recorded.len() >= 6);
    assert!(
        recorded.iter().any(|(t, _)| t.split_whitespace().count() > 300),
        "no text long enough to be cut"
    );
    assert!(recorded.iter().any(|(t, _)| t.contains('天')), "no Chinese text");
    assert!(recorded.iter().any(|(t, _)| t.contains('é')), "no accented text");
    let texts: Vec<&str> = recorded.iter().map(|(t, _)| t.as_str()).collect();
    let batch = encoder.embed_batch(&texts).unwrap();
    for ((text, want), batched) in recorded.iter().zip(&batch) {
        let alone = encoder.embed(text).unwrap();
        let label: String = text.chars().take(30).collect();
        assert_eq!(alone.len(), want.len());
        assert!(cosine(&alone, want) > 0.9999, "{label}: cosine {}", cosine(&alone, want));
        assert!(cosine(batched, want) > 0.9999, "{label} in a batch: cosine {}", cosine(batched, want));
    }
    // Different texts stay apart: the check above could not pass with one vector for all.
    assert!(cosine(&batch[0], &batch[4]) < 0.9);
}
