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

pub(crate) mod cache;
mod score;

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::text::Analyzer;
use super::vocab::{Vocabulary, vocabulary};
use crate::sealed::Site;
use toolgate_catalog::{Catalog, Tool};

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

    /// The parameters of the `lexical` strategy: BM25F's, with light stemming.
    pub fn lexical() -> Bm25Params {
        Bm25Params { analyzer: Analyzer::stemming(super::text::Chinese::Bigrams), ..Bm25Params::bm25f() }
    }

    /// Plain Okapi BM25 (k1 1.2, b 0.75) over all fields as one text, words kept as they are.
    pub fn plain() -> Bm25Params {
        Bm25Params { k1: 1.2, weights: [1.0; 5], b: [0.75; 5], merged: true, analyzer: Analyzer::plain() }
    }
}

/// Calls `f` with the field index (in [`Field::ALL`] order) and each term of a tool.
pub(crate) fn each_field_term(tool: &Tool, analyzer: &Analyzer, f: &mut dyn FnMut(usize, &str)) {
    analyzer.each_term(tool.name(), &mut |t| f(0, t));
    analyzer.each_term(tool.server(), &mut |t| f(1, t));
    analyzer.each_term(tool.description(), &mut |t| f(2, t));
    if let Some(h) = tool.search_hint() {
        analyzer.each_term(h, &mut |t| f(3, t));
    }
    for s in tool.schema().words() {
        analyzer.each_term(s, &mut |t| f(4, t));
    }
}

/// The terms of each field of a tool, as strings (for explanations and tests).
pub(crate) fn tool_fields(tool: &Tool, analyzer: &Analyzer) -> [Vec<String>; 5] {
    let mut f: [Vec<String>; 5] = Default::default();
    each_field_term(tool, analyzer, &mut |fi, t| f[fi].push(t.to_owned()));
    f
}

/// An inverted index with precomputed BM25(F) contributions.
#[derive(Debug)]
pub(crate) struct Bm25Index {
    params: Bm25Params,
    terms: FxHashMap<Box<str>, u32>,
    /// Postings of term t are `docs[offsets[t]..offsets[t + 1]]`, ascending by doc.
    offsets: Vec<u32>,
    docs: Vec<u32>,
    scores: Vec<f32>,
    idf: Vec<f32>,
    /// Average length of each field.
    avg_len: [f32; 5],
    n_docs: usize,
    /// The vocabularies queries are expanded with (the compiled-in ones unless a study of
    /// the vocabulary gives others).
    vocab: Arc<Vocabulary>,
}

/// One term's postings while building, tools ascending: each a [`Packed`] tool and term
/// frequencies.
type Postings = Vec<Packed>;

/// A posting while building, in 4 bytes (the index's largest transient, and at the end of the
/// build beside the postings it becomes): the tool, counted from its part's first (a part holds
/// at most [`PART_TOOLS`] tools), in the low 16 bits, then each field's term frequency in 3
/// bits. A frequency of 7 or more sets the top bit instead, and the frequencies are in
/// [`Partial::overflow`]. In 8 bytes (the whole tool, and 6 bits a frequency), the end of the
/// build of 100,000 tools, where these and the arrays made of them are both held, raised a
/// gateway's memory to 193 MB; in 4, to 177 MB.
#[derive(Debug, Clone, Copy)]
struct Packed(u32);

impl Packed {
    const BITS: u32 = 3;
    const MAX: u16 = (1 << Packed::BITS) - 1;
    const OVERFLOW: u32 = 1 << 31;

    /// Packs `tf` of the part's tool `doc`, or marks the posting as overflowing when a
    /// frequency does not fit.
    fn new(doc: u16, tf: [u16; 5]) -> Packed {
        if tf.iter().any(|&f| f >= Packed::MAX) {
            return Packed(u32::from(doc) | Packed::OVERFLOW);
        }
        let fields = tf.iter().rev().fold(0u32, |acc, &f| (acc << Packed::BITS) | u32::from(f));
        Packed(u32::from(doc) | fields << 16)
    }

    /// The tool, counted from its part's first.
    fn doc(self) -> u16 {
        self.0 as u16
    }

    /// The frequencies, or `None` when they are in the overflow table.
    fn tf(self) -> Option<[u16; 5]> {
        if self.0 & Packed::OVERFLOW != 0 {
            return None;
        }
        let fields = self.0 >> 16;
        Some(std::array::from_fn(|fi| ((fields >> (fi as u32 * Packed::BITS)) as u16) & Packed::MAX))
    }
}

/// The most tools of a part read on one core: its postings count its tools in 16 bits. Under
/// test, fewer, so that small catalogs are read in several parts.
#[cfg(not(test))]
const PART_TOOLS: usize = 1 << 16;
#[cfg(test)]
const PART_TOOLS: usize = 512;

/// The postings of some consecutive tools, with their own term dictionary.
#[derive(Debug, Default)]
struct Partial {
    /// The number of the part's first tool.
    first: u32,
    terms: FxHashMap<Box<str>, u32>,
    /// term -> its postings.
    per_term: Vec<Postings>,
    /// The term frequencies of the postings too large to pack, by (term, tool).
    overflow: FxHashMap<(u32, u32), [u16; 5]>,
    /// Length of each field of each tool.
    lens: Vec<[u32; 5]>,
}

impl Partial {
    /// Reads `tools`, the first of which is tool number `first`.
    fn read(tools: &[Tool], first: u32, params: &Bm25Params) -> Partial {
        assert!(tools.len() <= PART_TOOLS, "a part of {} tools", tools.len());
        let mut p = Partial { first, lens: Vec::with_capacity(tools.len()), ..Partial::default() };
        // The tool being read: each term's position in `local`, found through `slot[term]`
        // (valid when `owner[term]` is this tool), so that counting needs no sort and no map.
        let mut local: Vec<(u32, [u16; 5])> = Vec::new();
        let mut slot: Vec<u32> = Vec::new();
        let mut owner: Vec<u32> = Vec::new();
        for (d, tool) in (first..).zip(tools) {
            local.clear();
            let mut len = [0u32; 5];
            each_field_term(tool, &params.analyzer, &mut |fi, t| {
                let fi = if params.merged { 0 } else { fi };
                let id = match p.terms.get(t) {
                    Some(&id) => id,
                    None => {
                        let id = p.per_term.len() as u32;
                        p.terms.insert(t.into(), id);
                        p.per_term.push(Vec::new());
                        slot.push(0);
                        owner.push(u32::MAX);
                        id
                    }
                };
                let i = id as usize;
                if owner[i] != d {
                    owner[i] = d;
                    slot[i] = local.len() as u32;
                    local.push((id, [0; 5]));
                }
                let tf = &mut local[slot[i] as usize].1[fi];
                *tf = tf.saturating_add(1);
                len[fi] += 1;
            });
            p.lens.push(len);
            for &(id, tf) in &local {
                let packed = Packed::new((d - first) as u16, tf);
                if packed.tf().is_none() {
                    p.overflow.insert((id, d), tf);
                }
                p.per_term[id as usize].push(packed);
            }
        }
        p
    }
}

/// The parts read on each core, under one term dictionary.
#[derive(Default)]
struct Merged {
    terms: FxHashMap<Box<str>, u32>,
    /// term -> its postings in each part that has the term, with the part's first tool, in the
    /// parts' order (so in tool order). Appending them to one vector per term, as merging did,
    /// held a grown copy of every term's postings beside the parts': 37 MB at 100,000 tools, the
    /// peak of a start.
    per_term: Vec<Vec<(u32, Postings)>>,
    overflow: FxHashMap<(u32, u32), [u16; 5]>,
    lens: Vec<[u32; 5]>,
}

impl Merged {
    /// `parts` in order, under the first part's term ids, later parts' new terms numbered after.
    fn of(parts: Vec<Partial>) -> Merged {
        let mut parts = parts.into_iter();
        let Some(first) = parts.next() else { return Merged::default() };
        let mut merged = Merged {
            terms: first.terms,
            per_term: first.per_term.into_iter().map(|list| vec![(first.first, list)]).collect(),
            overflow: first.overflow,
            lens: first.lens,
        };
        for later in parts {
            let mut postings: Vec<Option<Postings>> = later.per_term.into_iter().map(Some).collect();
            // later's term id -> the merged one.
            let mut renamed = vec![0u32; postings.len()];
            for (term, id) in later.terms {
                let list = postings[id as usize].take().expect("each term id once");
                renamed[id as usize] = match merged.terms.get(&term) {
                    Some(&mine) => {
                        merged.per_term[mine as usize].push((later.first, list));
                        mine
                    }
                    None => {
                        let mine = merged.per_term.len() as u32;
                        merged.terms.insert(term, mine);
                        merged.per_term.push(vec![(later.first, list)]);
                        mine
                    }
                };
            }
            for ((term, doc), tf) in later.overflow {
                merged.overflow.insert((renamed[term as usize], doc), tf);
            }
            merged.lens.extend(later.lens);
        }
        merged
    }
}

/// One way a query word may be met: its terms (all of them count) and a weight.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Alternative {
    /// Term ids, distinct.
    pub(crate) terms: Vec<u32>,
    /// Multiplies the alternative's score (1 for the word itself, less for an expansion).
    pub(crate) weight: f32,
}

impl Bm25Index {
    pub(crate) fn build(catalog: &Catalog, params: Bm25Params) -> Bm25Index {
        let n = catalog.len();
        // Reading the tools is most of the work: split it over the cores, then merge the
        // dictionaries. Later parts hold later tools, so appended postings stay ascending.
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).min(8);
        let chunk = n.div_ceil(threads).clamp(512, PART_TOOLS);
        let tools = catalog.tools();
        let chunks = tools.chunks(chunk).enumerate().collect();
        let parts =
            crate::cores::on_parts(chunks, |(i, part)| Partial::read(part, (i * chunk) as u32, &params));
        let Merged { terms, per_term, overflow, lens } = Merged::of(parts);
        let mut avg_len = [0f32; 5];
        for len in &lens {
            for (a, l) in avg_len.iter_mut().zip(len) {
                *a += *l as f32;
            }
        }
        for a in &mut avg_len {
            *a = (*a / n.max(1) as f32).max(1e-6);
        }
        let total: usize = per_term.iter().flatten().map(|(_, list)| list.len()).sum();
        let mut offsets = Vec::with_capacity(per_term.len() + 1);
        let mut docs = Vec::with_capacity(total);
        let mut scores = Vec::with_capacity(total);
        let mut idf = Vec::with_capacity(per_term.len());
        offsets.push(0);
        // Each tool's per-field factor w_f / (1 − b_f + b_f · len_f / avglen_f), computed once.
        let factors: Vec<[f32; 5]> = lens
            .iter()
            .map(|len| std::array::from_fn(|fi| field_tf(&params, fi, 1, len[fi], &avg_len)))
            .collect();
        for (t, lists) in per_term.into_iter().enumerate() {
            let df = lists.iter().map(|(_, list)| list.len()).sum::<usize>() as f32;
            let w = (1.0 + (n as f32 - df + 0.5) / (df + 0.5)).ln();
            idf.push(w);
            // Each part's list is dropped once written, so the lists and the flat arrays are
            // not both whole at any moment.
            for (first, packed) in
                lists.into_iter().flat_map(|(first, list)| list.into_iter().map(move |p| (first, p)))
            {
                let d = first + u32::from(packed.doc());
                let tf = packed.tf().unwrap_or_else(|| overflow[&(t as u32, d)]);
                let f = &factors[d as usize];
                let tf_tilde: f32 = (0..5).map(|fi| tf[fi] as f32 * f[fi]).sum();
                docs.push(d);
                scores.push(w * tf_tilde / (params.k1 + tf_tilde));
            }
            offsets.push(docs.len() as u32);
        }
        Bm25Index {
            params,
            terms,
            offsets,
            docs,
            scores,
            idf,
            avg_len,
            n_docs: n,
            vocab: vocabulary().clone(),
        }
    }

    /// [`Bm25Index::build`], or with `cache` (a directory), the index saved there for this
    /// catalog and these parameters if there is one (see `bm25f/cache.rs`), else built and
    /// saved. Says whether it came from the cache.
    pub(crate) fn build_cached(
        catalog: &Catalog,
        params: Bm25Params,
        cache: Option<Site<'_>>,
    ) -> (Bm25Index, bool) {
        // No key (no data directory, or one that cannot be read or made): no cache.
        let Some((site, mac)) = cache.and_then(|site| Some((site, site.mac()?))) else {
            return (Bm25Index::build(catalog, params), false);
        };
        let key = cache::key(catalog, &params);
        let path = cache::path(site.dir, &key);
        if let Some(index) = Bm25Index::read_cache(&path, &key, &mac, catalog.len(), params.clone()) {
            return (index, true);
        }
        (site.before_build)();
        let index = Bm25Index::build(catalog, params);
        index.write_cache(&path, &key, &mac);
        (index, false)
    }

    /// The vocabularies queries are expanded with.
    pub(crate) fn vocabulary(&self) -> &Vocabulary {
        &self.vocab
    }

    /// Expands queries with `vocab` instead of the compiled-in vocabularies.
    pub(crate) fn set_vocabulary(&mut self, vocab: Arc<Vocabulary>) {
        self.vocab = vocab;
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

    /// The share of tools that have `term` in some field.
    pub(crate) fn share(&self, term: u32) -> f32 {
        self.postings(term).0.len() as f32 / self.n_docs.max(1) as f32
    }

    /// Whether `doc` has `term` in any field.
    pub(crate) fn contains(&self, term: u32, doc: u32) -> bool {
        self.postings(term).0.binary_search(&doc).is_ok()
    }

    /// The term ids of each required word (a tool must have every one of a word's analysed
    /// terms), or `None` if some required word has a term no tool has, so that nothing can
    /// match.
    pub(crate) fn required_terms(&self, required: &[&str]) -> Option<Vec<Vec<u32>>> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for r in required {
            buf.clear();
            self.analyzer().tokens(r, &mut buf);
            let group: Option<Vec<u32>> = buf.iter().map(|t| self.term(t)).collect();
            match group {
                Some(g) if !g.is_empty() => out.push(g),
                _ => return None,
            }
        }
        Some(out)
    }

    /// Whether `doc` has every term of every required word (see [`Bm25Index::required_terms`]).
    pub(crate) fn has_required(&self, required: &[Vec<u32>], doc: u32) -> bool {
        required.iter().all(|g| g.iter().all(|&t| self.contains(t, doc)))
    }

    /// Each field's part of the score of `tool` for `term`.
    pub(crate) fn explain(&self, tool: &Tool, term: u32, term_text: &str) -> Vec<(Field, f32)> {
        let fields = merge(tool_fields(tool, &self.params.analyzer), self.params.merged);
        let mut tf = [0u16; 5];
        for (fi, f) in fields.iter().enumerate() {
            tf[fi] = f.iter().filter(|t| t.as_str() == term_text).count() as u16;
        }
        let lens = lengths(&fields);
        let tf_tilde = weighted_tf(&self.params, &tf, &lens, &self.avg_len);
        if tf_tilde <= 0.0 {
            return Vec::new();
        }
        let total = self.idf[term as usize] * tf_tilde / (self.params.k1 + tf_tilde);
        Field::ALL
            .iter()
            .enumerate()
            .filter(|&(fi, _)| tf[fi] > 0)
            .map(|(fi, &field)| {
                let part = field_tf(&self.params, fi, tf[fi], lens[fi], &self.avg_len);
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

fn field_tf(params: &Bm25Params, fi: usize, tf: u16, len: u32, avg_len: &[f32; 5]) -> f32 {
    let b = params.b[fi];
    let norm = 1.0 - b + b * len as f32 / avg_len[fi];
    params.weights[fi] * tf as f32 / norm
}

fn weighted_tf(params: &Bm25Params, tf: &[u16; 5], lens: &[u32; 5], avg_len: &[f32; 5]) -> f32 {
    (0..5).filter(|&fi| tf[fi] > 0).map(|fi| field_tf(params, fi, tf[fi], lens[fi], avg_len)).sum()
}

fn lengths(fields: &[Vec<String>; 5]) -> [u32; 5] {
    std::array::from_fn(|fi| fields[fi].len() as u32)
}

/// The score of one tool for a query, computed from scratch: the model the index is tested
/// against.
#[cfg(test)]
pub(crate) fn brute_force(
    catalog: &Catalog,
    params: &Bm25Params,
    tool: toolgate_catalog::ToolId,
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
                tf_tilde += field_tf(params, fi, tf as u16, field.len() as u32, &avg);
            }
        }
        if tf_tilde > 0.0 {
            score += idf * tf_tilde / (params.k1 + tf_tilde);
        }
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_catalog::ToolSpec;

    #[test]
    fn a_posting_packs_small_frequencies_and_marks_large_ones() {
        for tf in [[0, 0, 0, 0, 0], [1, 0, 3, 0, 6], [6, 6, 6, 6, 6], [5, 1, 0, 0, 1]] {
            let p = Packed::new(u16::MAX, tf);
            assert_eq!((p.doc(), p.tf()), (u16::MAX, Some(tf)));
        }
        for tf in [[7, 0, 0, 0, 0], [0, 0, 0, 0, 1000], [u16::MAX; 5], [6, 6, 6, 6, 7]] {
            let p = Packed::new(7, tf);
            assert_eq!((p.doc(), p.tf()), (7, None));
        }
    }

    /// A word 70 times in one tool's description and 200 times in another's schema, in the
    /// second of two parts (so that its term id is renamed on merging): the scores are those
    /// computed from scratch.
    #[test]
    fn frequencies_too_large_to_pack_score_exactly() {
        let mut builder = Catalog::builder();
        for i in 0..600 {
            builder = builder.tool(ToolSpec::mcp("s", &format!("tool_{i}"), "an ordinary tool"));
        }
        let many = vec!["zebra"; 70].join(" ");
        let props: serde_json::Map<String, serde_json::Value> =
            (0..200).map(|i| (format!("p{i}"), serde_json::json!({"description": "zebra"}))).collect();
        let catalog = builder
            .tool(ToolSpec::mcp("s", "striped", &many))
            .tool(
                ToolSpec::mcp("s", "schema_heavy", "").with_schema(serde_json::json!({"properties": props})),
            )
            .build()
            .unwrap();
        let params = Bm25Params::bm25f();
        let index = Bm25Index::build(&catalog, params.clone());
        let term = index.term("zebra").expect("indexed");
        let (docs, scores) = index.postings(term);
        assert_eq!(docs.len(), 2);
        for (&d, &s) in docs.iter().zip(scores) {
            let want = brute_force(&catalog, &params, catalog.id(d as usize), &["zebra".to_owned()]);
            assert!((s - want).abs() < 1e-5, "{s} vs {want}");
        }
    }
}
