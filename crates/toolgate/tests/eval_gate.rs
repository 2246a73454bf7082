//! The retrieval gate: the default strategy on development sets of `bench/` must not fall below
//! the figures it reached when it became the default (floors a little under the measured
//! values of `docs/ranking.md`, so that a change that loses ranking quality fails CI).

use toolgate::eval::{Report, evaluate, load_queries};
use toolgate::{Catalog, Strategy};

fn run(set: &str) -> Report {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench").join(set);
    let catalog = Catalog::from_path(&dir.join("catalog.jsonl")).unwrap();
    let path = dir.join("queries.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let queries = load_queries(&path.display().to_string(), &text, &catalog).unwrap();
    evaluate(&catalog, &queries, Strategy::DEFAULT, &[5])
}

fn gate(set: &str, recall5: f64, ndcg10: f64) {
    let r = run(set);
    let (got_r, got_n) = (r.all.recall[&5], r.all.ndcg10);
    assert!(
        got_r >= recall5 && got_n >= ndcg10,
        "{set}: R@5 {got_r:.3} (floor {recall5}), nDCG@10 {got_n:.3} (floor {ndcg10})"
    );
}

#[test]
fn default_strategy_keeps_its_quality_on_acebench_en() {
    gate("acebench-en", 0.955, 0.900);
}

#[test]
fn default_strategy_keeps_its_quality_on_livemcp_zh() {
    // Chinese requests for English-described tools: the bilingual vocabulary at work.
    gate("livemcp-zh", 0.85, 0.75);
}

#[test]
fn default_strategy_keeps_its_quality_on_acebench_zh() {
    gate("acebench-zh", 0.955, 0.900);
}
