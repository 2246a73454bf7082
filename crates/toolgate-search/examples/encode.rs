//! The model's encoding of given texts, timed: what `scripts/encode_speed.py` puts beside
//! sentence-transformers on the same texts.
//!
//! `cargo run --release -p toolgate-search --features bert --example encode -- MODEL_DIR TEXTS RUNS`
//!
//! TEXTS is a JSON-lines file of `{"label": …, "text": …}`. For each text the encoder runs
//! RUNS times after one warm-up; one JSON line per text goes to stdout: the label, the
//! median and the 90th percentile in milliseconds, and the unit vector (so that the script
//! can check both encoders agree).

#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::time::Instant;

use toolgate_search::semantic::bert::BertEncoder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: encode MODEL_DIR TEXTS.jsonl RUNS";
    let dir = PathBuf::from(args.next().ok_or(usage)?);
    let texts = PathBuf::from(args.next().ok_or(usage)?);
    let runs: usize = args.next().ok_or(usage)?.parse()?;
    let encoder = BertEncoder::from_dir(&dir)?;
    for (n, line) in std::fs::read_to_string(&texts)?.lines().enumerate() {
        let item: serde_json::Value = serde_json::from_str(line)?;
        let (Some(label), Some(text)) = (item["label"].as_str(), item["text"].as_str()) else {
            return Err(format!("{}:{}: a line needs a label and a text", texts.display(), n + 1).into());
        };
        let vector = encoder.embed(text)?;
        let mut ms: Vec<f64> = (0..runs.max(1))
            .map(|_| {
                let start = Instant::now();
                let _ = encoder.embed(text);
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        let at = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
        let out = serde_json::json!({"label": label, "p50_ms": at(0.5), "p90_ms": at(0.9), "vector": vector});
        println!("{out}");
    }
    Ok(())
}
