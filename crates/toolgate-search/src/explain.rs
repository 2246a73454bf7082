//! explain: why a tool ranked where it did, term by term and field by field (`--explain`).

use std::collections::HashSet;

#[cfg(feature = "bert")]
use super::FUSION_DEPTH;
use super::bm25f::Bm25Index;
#[cfg(feature = "semantic")]
use super::semantic::RERANK_DEPTH;
use super::{Engine, Expansion, Index, QueryForm, Request, Via, expand, intent, required_word};
use toolgate_catalog::ToolId;

/// One term's part in a hit's score, for `--explain`.
#[derive(Debug, Clone, PartialEq)]
pub struct TermExplanation {
    /// The term as the ranker saw it.
    pub term: String,
    /// Each field's contribution (`name`, `server`, `description`, `hint`, `schema`, and for the
    /// keyword scorer `full-name`), expansion weights applied.
    pub fields: Vec<(&'static str, f32)>,
    /// For a term the query did not contain: the query text it was expanded from and how
    /// (`仓库` by the vocabulary, `fetch` by a synonym).
    pub expansion: Option<(String, Via)>,
}

/// Why a tool ranked where it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The tool.
    pub tool: ToolId,
    /// How it was found: `select`, `exact name`, `prefix` or the strategy's name.
    pub via: String,
    /// The term contributions (empty for `select`, exact-name and prefix hits).
    pub terms: Vec<TermExplanation>,
}
/// A score as JSON: rounded to 4 places; `null` for select, exact-name and prefix hits, whose
/// score is infinite.
pub fn score_json(score: f32) -> serde_json::Value {
    if score.is_finite() {
        serde_json::Value::from(((score as f64) * 10_000.0).round() / 10_000.0)
    } else {
        serde_json::Value::Null
    }
}

impl Explanation {
    /// As `toolgate search --explain --json` and the status page show it: `{"via", "terms":
    /// [{"term", "fields": {FIELD: score}, "expanded_from"?: {"text", "via"}}]}`.
    pub fn to_json(&self) -> serde_json::Value {
        let terms: Vec<serde_json::Value> = self
            .terms
            .iter()
            .map(|t| {
                let fields: serde_json::Map<String, serde_json::Value> =
                    t.fields.iter().map(|(f, s)| ((*f).to_owned(), score_json(*s))).collect();
                let mut v = serde_json::json!({"term": t.term, "fields": fields});
                if let Some((from, via)) = &t.expansion {
                    v["expanded_from"] = serde_json::json!({"text": from, "via": via.as_str()});
                }
                v
            })
            .collect();
        serde_json::json!({"via": self.via, "terms": terms})
    }
}

impl Index {
    /// Why `tool` ranks for `query` (free keywords; other forms say how they matched).
    pub fn explain(&self, query: &str, tool: ToolId) -> Explanation {
        let found = self.search(Request::new(query, usize::MAX));
        let mut via = match found.form {
            QueryForm::Select => "select",
            QueryForm::Exact => "exact name",
            QueryForm::Prefix => "prefix",
            QueryForm::Keywords => {
                if found.hits.iter().any(|h| h.tool == tool && h.score.is_infinite()) {
                    "exact name"
                } else {
                    self.strategy.as_str()
                }
            }
        }
        .to_owned();
        let mut terms = Vec::new();
        if found.form == QueryForm::Keywords {
            // Read as a search reads them: labels apart under the lexical strategies.
            let labelled = self.labelled(query);
            let labels = &labelled.labels[..];
            let words: Vec<&str> = labelled.words.iter().map(|w| required_word(w).unwrap_or(w)).collect();
            match &self.engine {
                Engine::Keyword(k) => {
                    let mut so_far = 0u32;
                    for w in &words {
                        let t = w.to_lowercase();
                        let parts = k.term_fields(tool.index(), &t, so_far);
                        so_far += parts.iter().map(|(_, s)| s).sum::<u32>();
                        let fields: Vec<(&'static str, f32)> =
                            parts.iter().filter(|(_, s)| *s > 0).map(|(f, s)| (*f, *s as f32)).collect();
                        if !fields.is_empty() {
                            terms.push(TermExplanation { term: t, fields, expansion: None });
                        }
                    }
                }
                Engine::Bm25(b) => {
                    let mut seen = HashSet::new();
                    let mut buf = Vec::new();
                    for w in &words {
                        buf.clear();
                        b.analyzer().tokens(w, &mut buf);
                        for t in &buf {
                            let Some(id) = b.term(t) else { continue };
                            if !seen.insert(id) {
                                continue;
                            }
                            let fields: Vec<(&'static str, f32)> = b
                                .explain(self.catalog.tool(tool), id, t)
                                .into_iter()
                                .map(|(f, s)| (f.as_str(), s))
                                .collect();
                            if !fields.is_empty() {
                                terms.push(TermExplanation { term: t.clone(), fields, expansion: None });
                            }
                        }
                    }
                }
                Engine::Lexical(b, weights) => {
                    let reading = intent::read(&words);
                    terms = self.explain_lexical(b, *weights, &reading.words, labels, tool);
                    self.explain_latest(b, *weights, query, tool, &mut via);
                    self.explain_need(b, &reading, tool, &mut via, &mut terms);
                }
                #[cfg(feature = "semantic")]
                Engine::Semantic(b, weights, dense) => {
                    let reading = intent::read(&words);
                    terms = self.explain_lexical(b, *weights, &reading.words, labels, tool);
                    // Where each side of the fusion ranked the tool.
                    let lexical = self.fused_lexical(b, *weights, query, &reading, labels, RERANK_DEPTH);
                    let lexical_rank = shown_rank(lexical.iter().position(|h| h.tool == tool));
                    let text = super::label::rejoin(labels, &reading.words);
                    // The dense side reads the lexical candidates' cosines, and this tool's.
                    let mut candidates: Vec<ToolId> = lexical.iter().map(|h| h.tool).collect();
                    if !candidates.contains(&tool) {
                        candidates.push(tool);
                    }
                    let dense_hits = dense.rerank(&text, &candidates);
                    let dense_rank = shown_rank(dense_hits.iter().position(|h| h.0 == tool));
                    via.push_str(&format!(" (lexical {lexical_rank}, dense {dense_rank})"));
                    self.explain_latest(b, *weights, query, tool, &mut via);
                    self.explain_need(b, &reading, tool, &mut via, &mut terms);
                    // The cosine to the whole request, or the one its clauses lifted.
                    let cosine = dense.similarity(&text, tool);
                    let field = match dense_hits.iter().find(|h| h.0 == tool) {
                        Some(&(_, lifted)) if lifted > cosine + 1e-4 => ("lifted cosine", lifted),
                        _ => ("cosine", cosine),
                    };
                    terms.push(TermExplanation {
                        term: "(meaning)".to_owned(),
                        fields: vec![field],
                        expansion: None,
                    });
                }
                #[cfg(feature = "bert")]
                Engine::Bert(b, weights, dense, model) => {
                    let reading = intent::read(&words);
                    terms = self.explain_lexical(b, *weights, &reading.words, labels, tool);
                    let lexical = self.fused_lexical(b, *weights, query, &reading, labels, FUSION_DEPTH);
                    let lexical_rank = shown_rank(lexical.iter().position(|h| h.tool == tool));
                    if let Ok(v) = model.encoder().embed(query) {
                        let near = dense.rank(&v);
                        let position = near.iter().position(|h| h.0 == tool);
                        via.push_str(&format!(" (lexical {lexical_rank}, model {})", shown_rank(position)));
                        if let Some(p) = position {
                            terms.push(TermExplanation {
                                term: "(meaning)".to_owned(),
                                fields: vec![("cosine", near[p].1)],
                                expansion: None,
                            });
                        }
                    }
                    self.explain_latest(b, *weights, query, tool, &mut via);
                    self.explain_need(b, &reading, tool, &mut via, &mut terms);
                }
                #[cfg(feature = "bm25-crate")]
                Engine::Codex(_) => {}
            }
        }
        Explanation { tool, via, terms }
    }
}

/// A rank as `--explain` shows it: `#1` for the first, `-` for none.
#[cfg(any(feature = "semantic", feature = "bert"))]
fn shown_rank(rank: Option<usize>) -> String {
    rank.map_or("-".to_owned(), |r| format!("#{}", r + 1))
}

impl Index {
    /// The lexical side's best `depth` hits, which a fused strategy (`semantic`, `bert`) fuses
    /// for `query` as `reading` read it.
    #[cfg(any(feature = "semantic", feature = "bert"))]
    fn fused_lexical(
        &self,
        b: &Bm25Index,
        weights: Expansion,
        query: &str,
        reading: &intent::Reading<'_>,
        labels: &[&str],
        depth: usize,
    ) -> Vec<super::Hit> {
        let expanded = expand::expand(b, &reading.words, labels, weights);
        let (mut lexical, _) = self.rank_lexical_latest(b, weights, query, &expanded, &[], Some(depth));
        self.top(&mut lexical, depth);
        lexical
    }

    /// For each query group, the alternative that counted for `tool` (the best one), term by
    /// term and field by field.
    pub(super) fn explain_lexical(
        &self,
        b: &Bm25Index,
        weights: Expansion,
        words: &[&str],
        labels: &[&str],
        tool: ToolId,
    ) -> Vec<TermExplanation> {
        let expanded = expand::expand_explained(b, words, labels, weights);
        let t = self.catalog.tool(tool);
        let mut out = Vec::new();
        for (alts, sources) in expanded.groups.iter().zip(&expanded.sources) {
            let mut best: Option<(f32, Vec<TermExplanation>)> = None;
            for (alt, source) in alts.iter().zip(sources) {
                let mut total = 0.0;
                let mut parts = Vec::new();
                for (&id, text) in alt.terms.iter().zip(&source.terms) {
                    let fields: Vec<(&'static str, f32)> = b
                        .explain(t, id, text)
                        .into_iter()
                        .map(|(f, s)| (f.as_str(), s * alt.weight))
                        .collect();
                    if fields.is_empty() {
                        continue;
                    }
                    total += fields.iter().map(|(_, s)| s).sum::<f32>();
                    let expansion = (source.via != Via::Direct).then(|| (source.from.clone(), source.via));
                    parts.push(TermExplanation { term: text.clone(), fields, expansion });
                }
                if total > 0.0 && best.as_ref().is_none_or(|(s, _)| total > *s) {
                    best = Some((total, parts));
                }
            }
            out.extend(best.map(|(_, p)| p).unwrap_or_default());
        }
        out
    }
}
