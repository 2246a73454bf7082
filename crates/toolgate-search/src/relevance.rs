//! How many of a search's hits a `tool_search` loads: those that stand out from what the
//! request's incidental words find, so that a request for the time in Tokyo does not load three
//! music tools. `semantic` is cut the same way, on its fused scores (the lexical score over the
//! best one, plus the weighted cosine); rankings fused by rank alone (`bert`) score by rank,
//! falling slowly, so the cut leaves them whole.

use super::Hit;
use toolgate_catalog::ToolId;

/// The relevance cut of loading. A hit's standing is where its score lies between the floor
/// (the score of the [`FLOOR_RANK`]th hit of the whole ranking, 0 if there are fewer) and the
/// best score: 0 at the floor, 1 at the best. Measured on the `tune` parts of `bench/`
/// (`docs/ranking.md`, "How many tools a search loads").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadCut {
    /// A hit loads if its standing is at least this.
    pub share: f32,
    /// A hit also loads if its standing is at least this and it matches a term of the request
    /// (a word, a translation, a synonym) that no hit loaded before it matches: it serves
    /// another part of a task.
    pub novel_share: f32,
    /// "Nothing fits": where the compiled-in model reads the request (`semantic`), a search
    /// loads nothing if the request is less near than this in meaning to its first hit, on the
    /// catalog's centred cosine scale (0: no nearer than the catalog's average tool). The hits
    /// are still listed, below the cut. `f32::NEG_INFINITY` turns it off. Strategies without
    /// the model, and requests it cannot read (Chinese), are not judged by it; nor is a
    /// request that states a need a tool was placed for. A catalog of fewer than
    /// [`CENTER_MIN_TOOLS`](crate::semantic::CENTER_MIN_TOOLS) tools is not centred, and its
    /// cosines stand higher, so there it seldom applies.
    pub fit: f32,
}

/// The default [`LoadCut`].
pub const LOAD_CUT: LoadCut = LoadCut { share: 0.3, novel_share: 0.2, fit: NOTHING_FITS };

/// The default [`LoadCut::fit`]: of 0, 0.01 … 0.05, the highest centred cosine at which
/// "nothing fits" costs each development set's `tune` part at most 0.01 of the recall of what
/// its intact requests load (issue 44; `docs/ranking.md`, "Nothing fits").
pub const NOTHING_FITS: f32 = 0.04;

/// The rank whose score is the floor of [`LoadCut`]: past the few tools a request asks for,
/// where the hits its incidental words find begin. Chosen with the shares on the `tune` parts
/// of `bench/`: measured from the fifth or the eighth hit, the cut lost far more recall for
/// what it saved.
pub const FLOOR_RANK: usize = 10;

/// How many of `hits` (ranked, best first) a search loads under `cut`, at least one; `floor`
/// is the score of the [`FLOOR_RANK`]th hit of the whole ranking (0 if there are fewer).
/// Hits are loaded from the first until one falls short. `words(i)` is the set of request
/// terms hit `i` matches, as bits (0 where unknown: then only [`LoadCut::share`] counts).
/// Exact and `select:` hits (infinite scores) all count, and only they if they come first.
pub fn relevant(hits: &[Hit], floor: f32, cut: LoadCut, words: &mut dyn FnMut(usize) -> u64) -> usize {
    let Some(best) = hits.first().map(|h| h.score) else { return 0 };
    if !best.is_finite() {
        return hits.iter().take_while(|h| !h.score.is_finite()).count().max(1);
    }
    let span = best - floor;
    // What the loaded hits match, asked only once a hit needs it.
    let mut seen: Option<u64> = None;
    let mut n = 1;
    for (i, h) in hits.iter().enumerate().skip(1) {
        let standing = if span > 0.0 { (h.score - floor) / span } else { 1.0 };
        if standing < cut.share {
            if standing < cut.novel_share {
                break;
            }
            let before = match seen {
                Some(s) => s,
                None => (0..n).fold(0, |m, j| m | words(j)),
            };
            let w = words(i);
            if w & !before == 0 {
                break;
            }
            seen = Some(before | w);
        } else if let Some(s) = seen.as_mut() {
            *s |= words(i);
        }
        n += 1;
    }
    n
}

/// The floor of `hits` (every hit of a ranking, best first, or at least its first
/// [`FLOOR_RANK`]): the score of its [`FLOOR_RANK`]th hit, or 0.
pub fn floor_of(hits: &[Hit]) -> f32 {
    hits.get(FLOOR_RANK - 1).map_or(0.0, |h| h.score)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(scores: &[f32]) -> Vec<Hit> {
        scores
            .iter()
            .enumerate()
            .map(|(i, &score)| Hit { tool: toolgate_catalog::Brand::default().id(i as u32), score })
            .collect()
    }

    #[test]
    fn hits_load_by_their_standing_above_the_floor() {
        let h = hits(&[10.0, 8.0, 4.0, 3.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.0]);
        // Standing of 4.0: (4 - 2) / 8 = 0.25, below 0.3.
        assert_eq!(relevant(&h, floor_of(&h), LOAD_CUT, &mut |_| 0), 2);
        // Measured from 0 (a ranking of fewer than ten), 4.0 stands at 0.4, 3.5 at 0.35 and
        // 2.5 at 0.25.
        assert_eq!(relevant(&h, 0.0, LOAD_CUT, &mut |_| 0), 4);
    }

    #[test]
    fn a_hit_for_another_word_of_the_request_loads_lower() {
        let h = hits(&[10.0, 8.0, 4.0, 3.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.0]);
        // Hit 2 (standing 0.25) matches word 1, which hits 0 and 1 do not: it loads; hit 3
        // (0.1875) is below the lower share whatever it matches.
        let words = [0b01, 0b01, 0b10, 0b100];
        assert_eq!(relevant(&h, floor_of(&h), LOAD_CUT, &mut |i| words.get(i).copied().unwrap_or(0)), 3);
        // The same hit matching only words already met stops the loading.
        assert_eq!(relevant(&h, floor_of(&h), LOAD_CUT, &mut |i| [0b01, 0b11, 0b10][i.min(2)]), 2);
    }

    #[test]
    fn exact_hits_and_level_rankings_load_whole() {
        let exact = hits(&[f32::INFINITY, f32::INFINITY, 3.0]);
        assert_eq!(relevant(&exact, 0.0, LOAD_CUT, &mut |_| 0), 2);
        let level = hits(&[1.0; 12]);
        assert_eq!(relevant(&level, floor_of(&level), LOAD_CUT, &mut |_| 0), 12);
        assert_eq!(relevant(&[], 0.0, LOAD_CUT, &mut |_| 0), 0);
    }
}
