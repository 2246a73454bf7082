//! Conversations flattened into one request: the latest request counts more.
//!
//! A request of several lines is often a conversation with one user turn a line: a host that
//! searches with the recent messages, or a benchmark's multi-turn task. What is needed now is in
//! the latest line that asks for something ("Could you also check the advisories?"); what the
//! earlier lines asked for was, most likely, dealt with already. So the lexical strategies rank
//! such a request twice, whole and by its latest request alone, and add the two scores, each
//! divided by its best: a tool that fits the whole conversation and the latest request beats
//! one that fits only the first turn.
//!
//! The first line never counts as the latest request (the whole request already says it), and
//! neither does a line that asks for nothing: "The recipient's name is Mr. Suzuki." answers the
//! assistant and leaves the request where it was. One-line requests are ranked as before.

use rustc_hash::FxHashMap;

use super::bm25f::Bm25Index;
use super::{Expansion, Hit, Index, required_word};
use crate::catalog::ToolId;

/// The weight of the latest request's score against the whole request's (each divided by its
/// best). Chosen on ACEBench's development tasks, the only sets with multi-line requests.
pub(super) const LATEST_WEIGHT: f32 = 0.5;

/// The latest line of `query` after its first that asks for something, if `query` has more than
/// one line.
pub(super) fn latest_request(query: &str) -> Option<&str> {
    let lines: Vec<&str> = query.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines.get(1..)?.iter().rev().find(|l| asks(l)).copied()
}

/// Whether `line` asks for something: a question, or a phrase that makes a request.
fn asks(line: &str) -> bool {
    const CUES: &[&str] = &[
        "can you",
        "could you",
        "would you",
        "will you",
        "please",
        "i want",
        "i need",
        "i'd like",
        "i would like",
        "help me",
        "let me",
        "请",
        "帮我",
        "能否",
        "能不能",
        "可以",
        "我想",
        "我需要",
        "我还想",
        "吗",
    ];
    if line.contains(['?', '？']) {
        return true;
    }
    let lower = line.to_lowercase();
    CUES.iter().any(|c| lower.contains(c))
}

impl Index {
    /// The [latest request](latest_request) of `query`, if it has one, and its own ranking.
    fn rank_latest<'q>(
        &self,
        b: &Bm25Index,
        weights: Expansion,
        query: &'q str,
    ) -> Option<(&'q str, Vec<Hit>)> {
        let line = latest_request(query)?;
        let words: Vec<&str> = line.split_whitespace().collect();
        Some((line, self.rank_lexical(b, weights, &words, &[]).0))
    }

    /// [`rank_lexical`](Index::rank_lexical) of the whole request, mixed with the ranking of its
    /// [latest request](latest_request) when it has one and no term is required.
    pub(super) fn rank_lexical_latest(
        &self,
        b: &Bm25Index,
        weights: Expansion,
        query: &str,
        words: &[&str],
        required: &[&str],
    ) -> (Vec<Hit>, Vec<String>) {
        let (mut hits, unmatched) = self.rank_lexical(b, weights, words, required);
        if !required.is_empty() || weights.latest <= 0.0 {
            return (hits, unmatched);
        }
        let Some((_, latest)) = self.rank_latest(b, weights, query) else { return (hits, unmatched) };
        let best = |h: &[Hit]| h.iter().map(|h| h.score).fold(0.0f32, f32::max);
        let (whole_best, latest_best) = (best(&hits), best(&latest));
        if whole_best <= 0.0 || latest_best <= 0.0 {
            return (hits, unmatched);
        }
        let mut at: FxHashMap<_, usize> = FxHashMap::default();
        for (i, h) in hits.iter_mut().enumerate() {
            h.score /= whole_best;
            at.insert(h.tool, i);
        }
        for h in latest {
            let part = weights.latest * h.score / latest_best;
            match at.get(&h.tool) {
                Some(&i) => hits[i].score += part,
                None => hits.push(Hit { tool: h.tool, score: part }),
            }
        }
        (hits, unmatched)
    }

    /// Adds to `via` the latest request of `query` when it has one that counted and `tool`
    /// matched it, for `--explain`.
    pub(super) fn explain_latest(
        &self,
        b: &Bm25Index,
        weights: Expansion,
        query: &str,
        tool: ToolId,
        via: &mut String,
    ) {
        if query.split_whitespace().any(|w| required_word(w).is_some()) {
            return;
        }
        let Some((line, hits)) = self.rank_latest(b, weights, query) else { return };
        if hits.iter().any(|h| h.tool == tool && h.score > 0.0) {
            let mut shown: String = line.chars().take(SHOWN_CHARS).collect();
            if shown.len() < line.len() {
                shown.push('…');
            }
            via.push_str(&format!(", latest request: `{shown}`"));
        }
    }
}

/// How much of the latest request `--explain` quotes.
const SHOWN_CHARS: usize = 80;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_line_that_asks_is_the_latest_request() {
        let q = "I'm planning a trip to India. Can you tell me about health alerts?\n\
                 Sure, the whole of August.\n\
                 Great, one last thing. Could you provide vaccine advice?\n\
                 The trip starts on the 3rd.";
        assert_eq!(latest_request(q), Some("Great, one last thing. Could you provide vaccine advice?"));
        assert_eq!(latest_request("我想订机票\n请帮我查一下天气"), Some("请帮我查一下天气"));
    }

    #[test]
    fn explain_quotes_the_latest_request_a_tool_matched() {
        let catalog = crate::Catalog::builder()
            .tool(crate::catalog::ToolSpec::mcp("travel", "health_alerts", "Health alerts for a destination"))
            .tool(crate::catalog::ToolSpec::mcp("travel", "vaccine_advice", "Vaccine advice for a trip"))
            .build()
            .unwrap();
        let index = Index::builder().build(&catalog);
        let q = "Any health alerts for India?\nCould you also give vaccine advice?";
        let vaccine = index.named("travel__vaccine_advice")[0];
        let alerts = index.named("travel__health_alerts")[0];
        assert_eq!(
            index.explain(q, vaccine).via,
            "lexical, latest request: `Could you also give vaccine advice?`"
        );
        assert_eq!(index.explain(q, alerts).via, "lexical");
    }

    #[test]
    fn one_line_or_only_the_first_asking_has_no_latest_request() {
        assert_eq!(latest_request("Can you find flights to Paris?"), None);
        assert_eq!(latest_request("Can you find flights?\nFrom Paris.\nOn 2023-06-15."), None);
        assert_eq!(latest_request("Can you find flights?\n\n   \n"), None);
        assert_eq!(latest_request(""), None);
    }
}
