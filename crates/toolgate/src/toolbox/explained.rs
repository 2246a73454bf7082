//! explained: a read-only search of the visible tools that loads nothing, each hit with its
//! score and the reasons of `--explain`: what an operator's search box shows.

use super::Toolbox;
use crate::catalog::Tool;
use crate::search::{Explanation, Request, Strategy};

/// What [`Toolbox::explained_search`] found.
#[derive(Debug)]
pub struct Explained<'a> {
    /// The ranker that ranked the hits.
    pub strategy: Strategy,
    /// The hits, best first.
    pub hits: Vec<ExplainedHit<'a>>,
    /// Query terms (or `select:` names) that matched no tool at all.
    pub unmatched_terms: Vec<String>,
    /// How many of the first hits a `tool_search` would load ([`Found::loads`]).
    ///
    /// [`Found::loads`]: crate::search::Found::loads
    pub loads: usize,
    /// Whether none of the hits fits closely enough to load ([`Found::nothing_fits`]).
    ///
    /// [`Found::nothing_fits`]: crate::search::Found::nothing_fits
    pub nothing_fits: bool,
}

/// One hit of an [`Explained`] search.
#[derive(Debug)]
pub struct ExplainedHit<'a> {
    /// The tool.
    pub tool: &'a Tool,
    /// Its score (exact-name and `select:` hits score `f32::INFINITY`).
    pub score: f32,
    /// Why it scored so.
    pub explanation: Explanation,
}

impl Toolbox {
    /// Searches this subject's visible tools for `query` (at most `limit` hits) without
    /// touching any conversation, and explains each hit (waiting for the index if it is being
    /// built).
    pub fn explained_search(&self, query: &str, limit: usize) -> Explained<'_> {
        let index = self.index.get();
        let found = index.search(Request::new(query, limit));
        let nothing_fits = found.nothing_fits();
        let hits = found
            .hits
            .iter()
            .map(|h| ExplainedHit {
                tool: index.catalog().tool(h.tool),
                score: h.score,
                explanation: index.explain(query, h.tool),
            })
            .collect();
        Explained {
            strategy: index.strategy(),
            hits,
            unmatched_terms: found.unmatched_terms,
            loads: found.loads,
            nothing_fits,
        }
    }
}
