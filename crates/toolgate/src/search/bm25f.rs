//! Field-weighted BM25 (BM25F), and plain Okapi BM25 as the special case of one merged field.
//!
//! A tool has five fields: its name parts, its server, its description, its search hint and its
//! input schema (property names and descriptions, recursively). For a term t and a tool d,
//!
//! ```text
//! tf~(t, d) = Σ_f  w_f · tf_f(t, d) / (1 − b_f + b_f · len_f(d) / avglen_f)
//! score     = Σ_t  idf(t) · tf~ / (k1 + tf~),    idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))
//! ```
//!
//! Every (term, tool) contribution is computed once at build time and stored in the posting
//! list, so a query only adds numbers up. See `docs/ranking.md` for the weights and why.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::Value;

use super::text::Analyzer;
#[cfg(test)]
use crate::catalog::ToolId;
use crate::catalog::{Catalog, Tool};

/// The fields of a tool that BM25F scores separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// The tool's own name, split into parts.
    Name,
    /// The server id, split into parts.
    Server,
    /// The description.
    Description,
    /// The search hint (never shown to the model).
    Hint,
    /// Input-schema property names and descriptions, recursively.
    Schema,
}

impl Field {
    /// All fields, in score order.
    pub const ALL: [Field; 5] = [Field::Name, Field::Server, Field::Description, Field::Hint, Field::Schema];

    /// The field's name in explanations.
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::Server => "server",
            Field::Description => "description",
            Field::Hint => "hint",
            Field::Schema => "schema",
        }
    }
}

/// The parameters of a BM25 index.
#[derive(Debug, Clone)]
pub struct Bm25Params {
    /// Term-frequency saturation.
    pub k1: f32,
    /// Weight of each field, in [`Field::ALL`] order.
    pub weights: [f32; 5],
    /// Length normalisation of each field, in [`Field::ALL`] order.
    pub b: [f32; 5],
    /// Plain BM25: all fields merged into one document, one length normalisation (`b[0]`).
    pub merged: bool,
    /// How text becomes terms.
    pub analyzer: Analyzer,
}

impl Bm25Params {
    /// The BM25F parameters toolgate ranks with by default (measured on the bench sets).
    pub fn bm25f() -> Bm25Params {
        Bm25Params {
            k1: 1.2,
            weights: [3.0, 1.5, 1.0, 2.0, 0.5],
            b: [0.5, 0.3, 0.75, 0.5, 0.75],
            merged: false,
            analyzer: Analyzer::new(super::text::Chinese::Bigrams),
        }
    }

    /// Plain Okapi BM25 (k1 1.2, b 0.75) over all fields as one text, words kept as they are.
    pub fn plain() -> Bm25Params {
        Bm25Params { k1: 1.2, weights: [1.0; 5], b: [0.75; 5], merged: true, analyzer: Analyzer::plain() }
    }
}

/// The terms of each field of a tool.
pub(crate) fn tool_fields(tool: &Tool, analyzer: &Analyzer) -> [Vec<String>; 5] {
    let mut f: [Vec<String>; 5] = Default::default();
    analyzer.tokens(tool.name(), &mut f[0]);
    analyzer.tokens(tool.server(), &mut f[1]);
    analyzer.tokens(tool.description(), &mut f[2]);
    if let Some(h) = tool.search_hint() {
        analyzer.tokens(h, &mut f[3]);
    }
    schema_text(tool.input_schema(), 0, &mut |s| analyzer.tokens(s, &mut f[4]));
    f
}

/// Calls `emit` with every property name and description of a JSON Schema, recursively
/// through `properties`, `items`, `additionalProperties`, `anyOf`, `oneOf` and `allOf`.
pub(crate) fn schema_text(schema: &Value, depth: usize, emit: &mut dyn FnMut(&str)) {
    let Value::Object(map) = schema else { return };
    if depth > 12 {
        return;
    }
    if let Some(Value::Object(props)) = map.get("properties") {
        for (name, sub) in props {
            emit(name);
            if let Some(Value::String(d)) = sub.get("description") {
                emit(d);
            }
            schema_text(sub, depth + 1, emit);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub @ Value::Object(_)) = map.get(key) {
            if let Some(Value::String(d)) = sub.get("description") {
                emit(d);
            }
            schema_text(sub, depth + 1, emit);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(subs)) = map.get(key) {
            for sub in subs {
                if let Some(Value::String(d)) = sub.get("description") {
                    emit(d);
                }
                schema_text(sub, depth + 1, emit);
            }
        }
    }
}

/// An inverted index with precomputed BM25(F) contributions.
#[derive(Debug)]
pub(crate) struct Bm25Index {
    params: Bm25Params,
    terms: HashMap<Box<str>, u32>,
    /// Postings of term t are `docs[offsets[t]..offsets[t + 1]]`, ascending by doc.
    offsets: Vec<u32>,
    docs: Vec<u32>,
    scores: Vec<f32>,
    idf: Vec<f32>,
    /// Average length of each field.
    avg_len: [f32; 5],
    n_docs: usize,
}

thread_local! {
    static SCRATCH: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

impl Bm25Index {
    pub(crate) fn build(catalog: &Catalog, params: Bm25Params) -> Bm25Index {
        let n = catalog.len();
        let fields: Vec<[Vec<String>; 5]> =
            catalog.tools().iter().map(|t| merge(tool_fields(t, &params.analyzer), params.merged)).collect();
        let mut avg_len = [0f32; 5];
        for doc in &fields {
            for (a, f) in avg_len.iter_mut().zip(doc) {
                *a += f.len() as f32;
            }
        }
        for a in &mut avg_len {
            *a = (*a / n.max(1) as f32).max(1e-6);
        }
        // term -> [(doc, tf per field)]
        let mut terms: HashMap<Box<str>, u32> = HashMap::new();
        let mut per_term: Vec<Vec<(u32, [u16; 5])>> = Vec::new();
        for (d, doc) in fields.iter().enumerate() {
            let mut local: HashMap<&str, [u16; 5]> = HashMap::new();
            for (fi, f) in doc.iter().enumerate() {
                for t in f {
                    let e = local.entry(t.as_str()).or_default();
                    e[fi] = e[fi].saturating_add(1);
                }
            }
            let mut local: Vec<_> = local.into_iter().collect();
            local.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (t, tf) in local {
                let next = terms.len() as u32;
                let id = *terms.entry(t.into()).or_insert(next);
                if id as usize == per_term.len() {
                    per_term.push(Vec::new());
                }
                per_term[id as usize].push((d as u32, tf));
            }
        }
        let mut offsets = Vec::with_capacity(per_term.len() + 1);
        let mut docs = Vec::new();
        let mut scores = Vec::new();
        let mut idf = Vec::with_capacity(per_term.len());
        offsets.push(0);
        for postings in &per_term {
            let df = postings.len() as f32;
            let w = (1.0 + (n as f32 - df + 0.5) / (df + 0.5)).ln();
            idf.push(w);
            for &(d, tf) in postings {
                let tf_tilde = weighted_tf(&params, &tf, &fields[d as usize], &avg_len);
                docs.push(d);
                scores.push(w * tf_tilde / (params.k1 + tf_tilde));
            }
            offsets.push(docs.len() as u32);
        }
        Bm25Index { params, terms, offsets, docs, scores, idf, avg_len, n_docs: n }
    }

    pub(crate) fn analyzer(&self) -> &Analyzer {
        &self.params.analyzer
    }

    /// The id of a term, if any tool has it.
    pub(crate) fn term(&self, t: &str) -> Option<u32> {
        self.terms.get(t).copied()
    }

    fn postings(&self, term: u32) -> (&[u32], &[f32]) {
        let (a, b) = (self.offsets[term as usize] as usize, self.offsets[term as usize + 1] as usize);
        (&self.docs[a..b], &self.scores[a..b])
    }

    /// Whether `doc` has `term` in any field.
    pub(crate) fn contains(&self, term: u32, doc: u32) -> bool {
        self.postings(term).0.binary_search(&doc).is_ok()
    }

    /// Adds up the scores of `terms` (distinct term ids) and calls `visit` with every tool that
    /// scored above zero.
    pub(crate) fn score(&self, terms: &[u32], visit: &mut dyn FnMut(u32, f32)) {
        SCRATCH.with(|cell| {
            let mut acc = cell.borrow_mut();
            acc.clear();
            acc.resize(self.n_docs, 0.0);
            let mut touched: Vec<u32> = Vec::new();
            for &t in terms {
                let (docs, scores) = self.postings(t);
                for (&d, &s) in docs.iter().zip(scores) {
                    let slot = &mut acc[d as usize];
                    if *slot == 0.0 {
                        touched.push(d);
                    }
                    *slot += s;
                }
            }
            for d in touched {
                let s = acc[d as usize];
                if s > 0.0 {
                    visit(d, s);
                }
            }
        });
    }

    /// Each field's part of the score of `tool` for `term`.
    pub(crate) fn explain(&self, tool: &Tool, term: u32, term_text: &str) -> Vec<(Field, f32)> {
        let fields = merge(tool_fields(tool, &self.params.analyzer), self.params.merged);
        let mut tf = [0u16; 5];
        for (fi, f) in fields.iter().enumerate() {
            tf[fi] = f.iter().filter(|t| t.as_str() == term_text).count() as u16;
        }
        let tf_tilde = weighted_tf(&self.params, &tf, &fields, &self.avg_len);
        if tf_tilde <= 0.0 {
            return Vec::new();
        }
        let total = self.idf[term as usize] * tf_tilde / (self.params.k1 + tf_tilde);
        Field::ALL
            .iter()
            .enumerate()
            .filter(|&(fi, _)| tf[fi] > 0)
            .map(|(fi, &field)| {
                let part = field_tf(&self.params, fi, tf[fi], fields[fi].len(), &self.avg_len);
                (field, total * part / tf_tilde)
            })
            .collect()
    }
}

fn merge(fields: [Vec<String>; 5], merged: bool) -> [Vec<String>; 5] {
    if !merged {
        return fields;
    }
    let mut all: [Vec<String>; 5] = Default::default();
    all[0] = fields.into_iter().flatten().collect();
    all
}

fn field_tf(params: &Bm25Params, fi: usize, tf: u16, len: usize, avg_len: &[f32; 5]) -> f32 {
    let b = params.b[fi];
    let norm = 1.0 - b + b * len as f32 / avg_len[fi];
    params.weights[fi] * tf as f32 / norm
}

fn weighted_tf(params: &Bm25Params, tf: &[u16; 5], fields: &[Vec<String>; 5], avg_len: &[f32; 5]) -> f32 {
    (0..5).filter(|&fi| tf[fi] > 0).map(|fi| field_tf(params, fi, tf[fi], fields[fi].len(), avg_len)).sum()
}

/// The score of one tool for a query, computed from scratch: the model the index is tested
/// against.
#[cfg(test)]
pub(crate) fn brute_force(
    catalog: &Catalog,
    params: &Bm25Params,
    tool: ToolId,
    query_terms: &[String],
) -> f32 {
    let all: Vec<[Vec<String>; 5]> =
        catalog.tools().iter().map(|t| merge(tool_fields(t, &params.analyzer), params.merged)).collect();
    let n = all.len() as f32;
    let mut avg = [0f32; 5];
    for doc in &all {
        for (a, f) in avg.iter_mut().zip(doc) {
            *a += f.len() as f32 / n;
        }
    }
    for a in &mut avg {
        *a = a.max(1e-6);
    }
    let mut distinct: Vec<&String> = query_terms.iter().collect();
    distinct.sort();
    distinct.dedup();
    let doc = &all[tool.index()];
    let mut score = 0.0;
    for t in distinct {
        let df = all.iter().filter(|d| d.iter().any(|f| f.contains(t))).count() as f32;
        if df == 0.0 {
            continue;
        }
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        let mut tf_tilde = 0.0;
        for (fi, field) in doc.iter().enumerate() {
            let tf = field.iter().filter(|x| *x == t).count();
            if tf > 0 {
                tf_tilde += field_tf(params, fi, tf as u16, field.len(), &avg);
            }
        }
        if tf_tilde > 0.0 {
            score += idf * tf_tilde / (params.k1 + tf_tilde);
        }
    }
    score
}
