//! How many of a search's hits a `tool_search` loads: those that clear a cut relative to the
//! best hit, so that a request for the time in Tokyo does not load three music tools. Fused
//! rankings (`semantic`) score by rank, falling slowly, so the cut leaves them whole.

use super::Hit;
use crate::catalog::ToolId;

/// The relevance cut of loading: a `tool_search` loads the hits scoring at least this share of
/// its best hit's score (always the best one, and every exactly named tool). Measured on the
/// `tune` parts of `bench/` (`docs/ranking.md`, "How many tools a search loads").
pub const RELEVANCE_CUT: f32 = 0.4;

/// How many of `hits` (ranked, best first) a search loads under the relevance `cut`: those
/// scoring at least `cut` times the best score, at least one. Exact and `select:` hits
/// (infinite scores) all count.
pub fn relevant(hits: &[Hit], cut: f32) -> usize {
    let Some(best) = hits.first().map(|h| h.score) else { return 0 };
    if !best.is_finite() {
        return hits.iter().take_while(|h| !h.score.is_finite()).count().max(1);
    }
    let floor = best * cut;
    hits.iter().take_while(|h| h.score >= floor).count().max(1)
}

/// A fused order as hits: rank scores that fall slowly (1 / (1 + rank / 100)), since a fused
/// order has no scale of its own; the relevance cut then leaves its first hits whole.
pub fn rank_scored(ranked: impl IntoIterator<Item = ToolId>) -> Vec<Hit> {
    ranked
        .into_iter()
        .enumerate()
        .map(|(rank, tool)| Hit { tool, score: 1.0 / (1.0 + rank as f32 / 100.0) })
        .collect()
}
