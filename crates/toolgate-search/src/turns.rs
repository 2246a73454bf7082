//! Conversations given as conversations: the latest request counts more.
//!
//! A request is one text. Only when its turns are marked as turns, as a transcript is (each
//! turn on its own line, labelled with who speaks: `user:`, `assistant:`, `用户：` …), is its
//! latest user turn that asks for something ranked as well: what the earlier turns asked for
//! was, most likely, dealt with already. The lexical strategies then rank the request twice,
//! whole and by that turn alone, and add the two scores, each divided by its best.
//!
//! Lines and paragraphs alone say nothing: a request's last paragraph is as often a closing
//! instruction ("make sure every finding is backed by data", "thanks in advance") as a new
//! request, and ranking it alone let such words pull in tools nobody asked for
//! (`tests/metamorphic.rs`). The first user turn never counts as the latest request (the whole
//! request already says it), and neither does a turn that asks for nothing.
//!
//! A request with no latest request to mix in is ranked once, and the scorer then keeps only
//! the hits that may be among the best the search reads ([`Index::rank_lexical_latest`]).

use rustc_hash::FxHashMap;

use super::bm25f::Bm25Index;
use super::expand::Expanded;
use super::{Expansion, Hit, Index, required_word};
use toolgate_catalog::ToolId;

/// The latest user turn of `query` after its first that asks for something, if `query` is a
/// transcript of marked turns with more than one user turn.
pub(super) fn latest_request(query: &str) -> Option<&str> {
    let turns: Vec<(Speaker, &str)> = query.lines().filter_map(turn).collect();
    // A transcript: every non-empty line is a marked turn, and there are two turns at least.
    let lines = query.lines().filter(|l| !l.trim().is_empty()).count();
    if turns.len() < 2 || turns.len() != lines {
        return None;
    }
    let user: Vec<&str> = turns.iter().filter(|(s, _)| *s == Speaker::User).map(|(_, t)| *t).collect();
    user.get(1..)?.iter().rev().find(|l| asks(l)).copied()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Speaker {
    User,
    Other,
}

/// A line that is a marked turn: its speaker and what it says.
fn turn(line: &str) -> Option<(Speaker, &str)> {
    const USER: &[&str] = &["user", "human", "customer", "用户", "客户"];
    const OTHER: &[&str] = &["assistant", "ai", "bot", "system", "agent", "model", "助手", "系统"];
    let line = line.trim();
    let (label, said) = line.split_once(':').or_else(|| line.split_once('：'))?;
    let label = label.trim().trim_matches(['[', ']', '*']).to_lowercase();
    let speaker = if USER.contains(&label.as_str()) {
        Speaker::User
    } else if OTHER.contains(&label.as_str()) {
        Speaker::Other
    } else {
        return None;
    };
    Some((speaker, said.trim()))
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
    /// The ranking of a [latest request](latest_request) on its own.
    fn rank_line(&self, b: &Bm25Index, weights: Expansion, line: &str) -> Vec<Hit> {
        let words: Vec<&str> = line.split_whitespace().collect();
        self.rank_lexical(b, weights, &words, &[]).0
    }

    /// The ranking of the whole request (`expanded`), mixed with the ranking of its
    /// [latest request](latest_request) when it has one and no term is required.
    ///
    /// With `depth`, a request with none to mix in gives only the hits that may be among its
    /// best `depth` (appending thousands of hits and choosing among them took a fifth of a
    /// long request's search); the mix reads every hit.
    pub(super) fn rank_lexical_latest(
        &self,
        b: &Bm25Index,
        weights: Expansion,
        query: &str,
        expanded: &Expanded,
        required: &[&str],
        depth: Option<usize>,
    ) -> (Vec<Hit>, Vec<String>) {
        let line = latest_to_mix(weights, query, required);
        let depth = if line.is_some() { None } else { depth };
        let (mut hits, unmatched) =
            (self.rank_expanded(b, expanded, required, depth), expanded.unmatched.clone());
        let Some(line) = line else { return (hits, unmatched) };
        let latest = self.rank_line(b, weights, line);
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
        let Some(line) = latest_request(query) else { return };
        let hits = self.rank_line(b, weights, line);
        if hits.iter().any(|h| h.tool == tool && h.score > 0.0) {
            let mut shown: String = line.chars().take(SHOWN_CHARS).collect();
            if shown.len() < line.len() {
                shown.push('…');
            }
            via.push_str(&format!(", latest request: `{shown}`"));
        }
    }
}

/// The latest request of `query` whose ranking is mixed into the whole one's: when it has
/// one, no word is required, and the weights give it a part.
fn latest_to_mix<'q>(weights: Expansion, query: &'q str, required: &[&str]) -> Option<&'q str> {
    (required.is_empty() && weights.latest > 0.0).then(|| latest_request(query)).flatten()
}

/// How much of the latest request `--explain` quotes.
const SHOWN_CHARS: usize = 80;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_user_turn_that_asks_is_the_latest_request() {
        let q = "User: I'm planning a trip to India. Can you tell me about health alerts?\n\
                 Assistant: For which month?\n\
                 User: Sure, the whole of August.\n\
                 User: Great, one last thing. Could you provide vaccine advice?\n\
                 [user]: The trip starts on the 3rd.";
        assert_eq!(latest_request(q), Some("Great, one last thing. Could you provide vaccine advice?"));
        assert_eq!(
            latest_request("用户：我想订机票\n助手：好的\n用户：请帮我查一下天气"),
            Some("请帮我查一下天气")
        );
    }

    #[test]
    fn lines_without_speakers_are_one_request() {
        let q = "I'm planning a trip to India. Can you tell me about health alerts?\n\
                 Great, one last thing. Could you provide vaccine advice?";
        assert_eq!(latest_request(q), None);
        assert_eq!(latest_request("我想订机票\n\n请帮我查一下天气"), None);
        // A line that only looks labelled ("Note: …") is no turn, and one unmarked line makes
        // the whole request one text.
        assert_eq!(latest_request("Note: book it\nUser: please book it"), None);
        assert_eq!(latest_request("User: find flights\nThen please check the weather?"), None);
    }

    #[test]
    fn explain_quotes_the_latest_request_a_tool_matched() {
        let catalog = crate::Catalog::builder()
            .tool(toolgate_catalog::ToolSpec::mcp(
                "travel",
                "health_alerts",
                "Health alerts for a destination",
            ))
            .tool(toolgate_catalog::ToolSpec::mcp("travel", "vaccine_advice", "Vaccine advice for a trip"))
            .build()
            .unwrap();
        let index = Index::builder().strategy(crate::Strategy::Lexical).build(&catalog);
        let q = "user: Any health alerts for India?\nuser: Could you also give vaccine advice?";
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
        assert_eq!(
            latest_request("user: Can you find flights?\nuser: From Paris.\nuser: On 2023-06-15."),
            None
        );
        assert_eq!(latest_request("Can you find flights?\n\n   \n"), None);
        assert_eq!(latest_request(""), None);
    }
}
