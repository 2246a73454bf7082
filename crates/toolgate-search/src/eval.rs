//! eval: here are a catalog and queries with gold tools, tell me how well each ranker finds them.
//!
//! Metrics follow `bench/FORMAT.md` exactly: the ranked tools are mapped to the query's gold
//! level (qualified name, bare name or server) and de-duplicated keeping the first occurrence;
//! then Recall@K, nDCG@10 (binary gain, ideal DCG over min(|G|, 10) items), MRR (no cut-off) and
//! complete@5 are averaged over the queries.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::time::Instant;

use serde_json::Value;

use crate::{Index, IndexBuilder, Request, Strategy};
use toolgate_catalog::{Catalog, Tool};

/// What the gold strings of a query are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GoldLevel {
    /// Qualified names `server__name` (as in the source, before normalisation).
    Tool,
    /// Bare tool names: any server's tool of that name counts.
    Name,
    /// Server ids.
    Server,
}

impl GoldLevel {
    /// The name used in query files and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            GoldLevel::Tool => "tool",
            GoldLevel::Name => "name",
            GoldLevel::Server => "server",
        }
    }

    /// The label a tool has at this level.
    pub fn label(self, tool: &Tool) -> String {
        match self {
            GoldLevel::Tool => format!("{}__{}", tool.server(), tool.name()),
            GoldLevel::Name => tool.name().to_owned(),
            GoldLevel::Server => tool.server().to_owned(),
        }
    }
}

/// Which part of a query set a query belongs to: `tune` (rules, weights and vocabulary may be
/// fitted on it) or `check` (they are judged on it, and the CI gate runs on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// Tuning queries.
    Tune,
    /// Checking queries: never looked at while tuning.
    Check,
}

impl Part {
    /// The part of the query with this id: the first byte of SHA-256(id), even for `tune`, odd
    /// for `check`. Deterministic, independent of the file's order, about half each.
    pub fn of(id: &str) -> Part {
        use sha2::{Digest, Sha256};
        if Sha256::digest(id.as_bytes())[0] % 2 == 0 { Part::Tune } else { Part::Check }
    }

    /// `tune` or `check`.
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Tune => "tune",
            Part::Check => "check",
        }
    }
}

/// One query with its gold items.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// Unique id.
    pub id: String,
    /// The request as the retriever sees it.
    pub query: String,
    /// The relevant items; all are needed for complete@K.
    pub gold: Vec<String>,
    /// `en`, `zh` or `mixed`.
    pub lang: String,
    /// What the gold strings are.
    pub gold_level: GoldLevel,
}

/// A query file that could not be read; names the file, the line and the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError {
    /// The file.
    pub source_label: String,
    /// The 1-based line, 0 for the file as a whole.
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.source_label, self.message)
        } else {
            write!(f, "{}:{}: {}", self.source_label, self.line, self.message)
        }
    }
}

impl std::error::Error for QueryError {}

/// The language of a query left without `lang`: `zh` when it has Han characters, else `en`.
fn detect_lang(query: &str) -> &'static str {
    let han = |c: char| matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}');
    if query.chars().any(han) { "zh" } else { "en" }
}

/// A bench set folder (`catalog.jsonl` and `queries.jsonl`, as in `bench/FORMAT.md`), its
/// queries split into their parts.
#[derive(Debug, Clone)]
pub struct BenchSet {
    /// The tools.
    pub catalog: Catalog,
    /// The queries of the `tune` part.
    pub tune: Vec<Query>,
    /// The queries of the `check` part.
    pub check: Vec<Query>,
}

impl BenchSet {
    /// Reads the set in `dir`; an error names the file and what was wrong with it.
    pub fn load(dir: &std::path::Path) -> Result<BenchSet, String> {
        let catalog = Catalog::from_path(&dir.join("catalog.jsonl")).map_err(|e| e.to_string())?;
        let path = dir.join("queries.jsonl");
        let label = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{label}: {e}"))?;
        let queries = load_queries(&label, &text, &catalog).map_err(|e| e.to_string())?;
        let (tune, check) = queries.into_iter().partition(|q| Part::of(&q.id) == Part::Tune);
        Ok(BenchSet { catalog, tune, check })
    }
}

/// Reads a JSONL query set (`{"id", "query", "gold", "lang", "gold_level"}` a line) and checks
/// that every gold item exists in `catalog` at its level. `lang` left out is `zh` for a query
/// with Han characters and `en` otherwise; `gold_level` left out is the first of `tool`, `name`
/// and `server` at which every gold item is in the catalog.
pub fn load_queries(label: &str, text: &str, catalog: &Catalog) -> Result<Vec<Query>, QueryError> {
    let err = |line, message: String| QueryError { source_label: label.to_owned(), line, message };
    let mut pools: BTreeMap<GoldLevel, HashSet<String>> = BTreeMap::new();
    for level in [GoldLevel::Tool, GoldLevel::Name, GoldLevel::Server] {
        pools.insert(level, catalog.tools().iter().map(|t| level.label(t)).collect());
    }
    let mut out = Vec::new();
    let mut ids = HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| err(n, format!("invalid JSON: {e}")))?;
        let s = |key: &str| -> Result<String, QueryError> {
            v.get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| err(n, format!("key `{key}` must be a string")))
        };
        let id = s("id")?;
        let query = s("query")?;
        // `lang` and `gold_level` may be left out: a query set written by hand rarely has them.
        let lang = match v.get("lang") {
            None | Some(Value::Null) => detect_lang(&query).to_owned(),
            Some(Value::String(lang)) => lang.clone(),
            Some(other) => {
                return Err(err(
                    n,
                    format!("key `lang` must be a string such as \"en\" or \"zh\", not {other}"),
                ));
            }
        };
        let stated = match v.get("gold_level") {
            None | Some(Value::Null) => None,
            Some(Value::String(level)) => Some(match level.as_str() {
                "tool" => GoldLevel::Tool,
                "name" => GoldLevel::Name,
                "server" => GoldLevel::Server,
                other => return Err(err(n, format!("gold_level `{other}` is not tool, name or server"))),
            }),
            Some(other) => {
                return Err(err(
                    n,
                    format!("key `gold_level` must be \"tool\", \"name\" or \"server\", not {other}"),
                ));
            }
        };
        let gold: Vec<String> = match v.get("gold") {
            Some(Value::Array(a)) if !a.is_empty() => a
                .iter()
                .map(|g| {
                    g.as_str().map(str::to_owned).ok_or_else(|| err(n, "gold items must be strings".into()))
                })
                .collect::<Result<_, _>>()?,
            _ => return Err(err(n, "key `gold` must be a non-empty list".into())),
        };
        let known = |level: &GoldLevel| gold.iter().all(|g| pools[level].contains(g));
        let gold_level = match stated {
            Some(level) => level,
            // Left out: the first level at which every gold item is in the catalog.
            None => match [GoldLevel::Tool, GoldLevel::Name, GoldLevel::Server].into_iter().find(known) {
                Some(level) => level,
                None => {
                    let g = gold.iter().find(|g| !pools[&GoldLevel::Tool].contains(*g)).unwrap_or(&gold[0]);
                    return Err(err(
                        n,
                        format!(
                            "gold `{g}` is not in the catalog as a tool (`server__tool`), a tool's own name or a \
                             server; fix the gold, or say which with gold_level"
                        ),
                    ));
                }
            },
        };
        if let Some(g) = gold.iter().find(|g| !pools[&gold_level].contains(*g)) {
            return Err(err(
                n,
                format!("gold `{g}` is not in the catalog (gold_level {})", gold_level.as_str()),
            ));
        }
        if !ids.insert(id.clone()) {
            return Err(err(n, format!("duplicate id `{id}`")));
        }
        out.push(Query { id, query, gold, lang, gold_level });
    }
    if out.is_empty() {
        return Err(err(0, "no queries".into()));
    }
    Ok(out)
}

/// Averaged retrieval metrics over some queries.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Metrics {
    /// Number of queries averaged.
    pub n: usize,
    /// Recall@K for each K asked for.
    pub recall: BTreeMap<usize, f64>,
    /// nDCG@10.
    pub ndcg10: f64,
    /// Mean reciprocal rank (no cut-off).
    pub mrr: f64,
    /// Share of queries with every gold item in the top 5.
    pub complete5: f64,
    /// Mean number of tools a `tool_search` with limit 5 loads (after the relevance cut).
    pub loaded5: f64,
    /// Recall over the tools a `tool_search` with limit 5 loads.
    pub recall_loaded5: f64,
}

/// The metrics of one query, when a search with limit 5 loads the first `loaded` of `ranked`.
pub fn score_query_loading(ranked: &[String], gold: &[String], ks: &[usize], loaded: usize) -> Metrics {
    let mut m = score_query(ranked, gold, ks);
    let g: HashSet<&str> = gold.iter().map(String::as_str).collect();
    let mut seen = HashSet::new();
    let list: Vec<&String> = ranked.iter().filter(|l| seen.insert(l.as_str())).take(5).collect();
    let loaded = loaded.min(list.len());
    m.loaded5 = loaded as f64;
    m.recall_loaded5 =
        list[..loaded].iter().filter(|l| g.contains(l.as_str())).count() as f64 / g.len() as f64;
    m
}

/// The metrics of one query.
pub fn score_query(ranked: &[String], gold: &[String], ks: &[usize]) -> Metrics {
    let mut seen = HashSet::new();
    let list: Vec<&String> = ranked.iter().filter(|l| seen.insert(l.as_str())).collect();
    let g: HashSet<&str> = gold.iter().map(String::as_str).collect();
    let hits_in = |k: usize| list.iter().take(k).filter(|l| g.contains(l.as_str())).count();
    let recall = ks.iter().map(|&k| (k, hits_in(k) as f64 / g.len() as f64)).collect();
    let dcg: f64 = list
        .iter()
        .take(10)
        .enumerate()
        .filter(|(_, l)| g.contains(l.as_str()))
        .map(|(r, _)| 1.0 / ((r + 2) as f64).log2())
        .sum();
    let idcg: f64 = (0..g.len().min(10)).map(|r| 1.0 / ((r + 2) as f64).log2()).sum();
    let mrr = list.iter().position(|l| g.contains(l.as_str())).map_or(0.0, |r| 1.0 / (r + 1) as f64);
    Metrics {
        n: 1,
        recall,
        ndcg10: dcg / idcg,
        mrr,
        complete5: if hits_in(5) == g.len() { 1.0 } else { 0.0 },
        loaded5: 0.0,
        recall_loaded5: 0.0,
    }
}

impl Metrics {
    fn add(&mut self, other: &Metrics) {
        self.n += other.n;
        for (k, v) in &other.recall {
            *self.recall.entry(*k).or_default() += v;
        }
        self.ndcg10 += other.ndcg10;
        self.mrr += other.mrr;
        self.complete5 += other.complete5;
        self.loaded5 += other.loaded5;
        self.recall_loaded5 += other.recall_loaded5;
    }

    fn averaged(mut self) -> Metrics {
        let n = self.n.max(1) as f64;
        for v in self.recall.values_mut() {
            *v /= n;
        }
        self.ndcg10 /= n;
        self.mrr /= n;
        self.complete5 /= n;
        self.loaded5 /= n;
        self.recall_loaded5 /= n;
        self
    }

    /// The metrics as the JSON object of the `eval --json` contract (rounded to 4 places).
    pub fn to_json(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        let r = |x: f64| Value::from((x * 10_000.0).round() / 10_000.0);
        for (k, v) in &self.recall {
            m.insert(format!("recall@{k}"), r(*v));
        }
        m.insert("ndcg@10".into(), r(self.ndcg10));
        m.insert("mrr".into(), r(self.mrr));
        m.insert("complete@5".into(), r(self.complete5));
        m.insert("loaded@5".into(), r(self.loaded5));
        m.insert("recall_loaded@5".into(), r(self.recall_loaded5));
        m.insert("n".into(), Value::from(self.n));
        m
    }
}

/// How one strategy did on a query set.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The strategy (for a ranker that is not one, the lexical strategy it builds on).
    pub strategy: Strategy,
    /// The name the report goes by: the strategy's, or the ranker's (`bert`, `bert-only` …).
    pub label: &'static str,
    /// Over all queries.
    pub all: Metrics,
    /// Per query language.
    pub by_lang: BTreeMap<String, Metrics>,
    /// Per gold level.
    pub by_level: BTreeMap<GoldLevel, Metrics>,
    /// Per number of gold items: `1` and `2+`.
    pub by_gold_size: BTreeMap<String, Metrics>,
    /// Per part of the set ([`Part`]).
    pub by_part: BTreeMap<Part, Metrics>,
    /// Median latency of one search with a limit of 10, in microseconds.
    pub query_p50_us: f64,
    /// 99th-percentile latency of the same, in microseconds.
    pub query_p99_us: f64,
    /// Time to build the index, in milliseconds.
    pub build_ms: f64,
}

/// Runs every query through `strategy` over `catalog` and averages the metrics.
pub fn evaluate(catalog: &Catalog, queries: &[Query], strategy: Strategy, ks: &[usize]) -> Report {
    evaluate_with(catalog, queries, Index::builder().strategy(strategy), ks)
}

/// Like [`evaluate`], with an index built by `builder` (for tuning parameters).
pub fn evaluate_with(catalog: &Catalog, queries: &[Query], builder: IndexBuilder, ks: &[usize]) -> Report {
    evaluate_with_progress(catalog, queries, builder, ks, &mut || {})
}

/// Like [`evaluate_with`], calling `progress` after each query is scored (for a progress bar).
pub fn evaluate_with_progress(
    catalog: &Catalog,
    queries: &[Query],
    builder: IndexBuilder,
    ks: &[usize],
    progress: &mut dyn FnMut(),
) -> Report {
    evaluate_with_cut(catalog, queries, builder, ks, crate::LOAD_CUT, progress)
}

/// Like [`evaluate_with_progress`], with the relevance cut of loading set to `cut` (see
/// [`crate::relevant`]), for measuring it.
pub fn evaluate_with_cut(
    catalog: &Catalog,
    queries: &[Query],
    builder: IndexBuilder,
    ks: &[usize],
    cut: crate::LoadCut,
    progress: &mut dyn FnMut(),
) -> Report {
    let start = Instant::now();
    let index = builder.build(catalog);
    let strategy = index.strategy();
    let build_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut rank = |q: &str| index.search(Request { cut, ..Request::new(q, usize::MAX) });
    let mut time = |q: &str| {
        std::hint::black_box(index.search(Request::new(q, 10)));
    };
    let ranker = Ranker { label: strategy.as_str(), strategy, build_ms, rank: &mut rank, time: &mut time };
    evaluate_ranker(catalog, queries, ks, ranker, progress)
}

/// A ranking to evaluate: what it is called, how to rank one query (every tool it finds, best
/// first, and how many of them a search loads) and what to time (one search as a user would
/// run it).
pub struct Ranker<'r> {
    /// The name of its report.
    pub label: &'static str,
    /// The strategy it is or builds on.
    pub strategy: Strategy,
    /// What building it took, in milliseconds.
    pub build_ms: f64,
    /// Ranks one query.
    pub rank: &'r mut dyn FnMut(&str) -> crate::Found,
    /// Runs one query for the latency figures.
    pub time: &'r mut dyn FnMut(&str),
}

impl std::fmt::Debug for Ranker<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ranker").field("label", &self.label).finish()
    }
}

/// Runs every query through `ranker` and averages the metrics, as [`evaluate_with_cut`] does
/// for an index (for rankers outside the strategies, such as a full embedding model's).
pub fn evaluate_ranker(
    catalog: &Catalog,
    queries: &[Query],
    ks: &[usize],
    ranker: Ranker<'_>,
    progress: &mut dyn FnMut(),
) -> Report {
    let Ranker { label, strategy, build_ms, rank, time } = ranker;
    let mut all = Metrics::default();
    let mut by_lang: BTreeMap<String, Metrics> = BTreeMap::new();
    let mut by_level: BTreeMap<GoldLevel, Metrics> = BTreeMap::new();
    let mut by_gold_size: BTreeMap<String, Metrics> = BTreeMap::new();
    let mut by_part: BTreeMap<Part, Metrics> = BTreeMap::new();
    for q in queries {
        let found = rank(&q.query);
        let labels: Vec<String> =
            found.hits.iter().map(|h| q.gold_level.label(catalog.tool(h.tool))).collect();
        // The loading decision does not depend on the limit past the hits it loads.
        let m = score_query_loading(&labels, &q.gold, ks, found.loads.min(5));
        all.add(&m);
        by_lang.entry(q.lang.clone()).or_default().add(&m);
        by_level.entry(q.gold_level).or_default().add(&m);
        let size = if q.gold.len() == 1 { "1" } else { "2+" };
        by_gold_size.entry(size.to_owned()).or_default().add(&m);
        by_part.entry(Part::of(&q.id)).or_default().add(&m);
        progress();
    }
    let mut times: Vec<f64> = queries
        .iter()
        .map(|q| {
            let t = Instant::now();
            time(&q.query);
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times.get(((times.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0);
    Report {
        strategy,
        label,
        all: all.averaged(),
        by_lang: averaged(by_lang),
        by_level: averaged(by_level),
        by_gold_size: averaged(by_gold_size),
        by_part: averaged(by_part),
        query_p50_us: pct(0.5),
        query_p99_us: pct(0.99),
        build_ms,
    }
}

fn averaged<K: Ord>(m: BTreeMap<K, Metrics>) -> BTreeMap<K, Metrics> {
    m.into_iter().map(|(k, v)| (k, v.averaged())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn metrics_follow_the_bench_definitions() {
        let m = score_query(&s(&["a", "x", "a", "b"]), &s(&["b", "a"]), &[1, 5, 10]);
        assert_eq!(m.recall[&1], 0.5);
        assert_eq!(m.recall[&5], 1.0);
        assert_eq!(m.mrr, 1.0);
        assert_eq!(m.complete5, 1.0);
        // De-duplicated list: a, x, b → DCG = 1 + 1/log2(4); IDCG = 1 + 1/log2(3).
        let want = (1.0 + 0.5) / (1.0 + 1.0 / 3f64.log2());
        assert!((m.ndcg10 - want).abs() < 1e-12);
        let none = score_query(&s(&["x"]), &s(&["a"]), &[1]);
        assert_eq!((none.mrr, none.ndcg10, none.complete5), (0.0, 0.0, 0.0));
    }

    #[test]
    fn bad_query_lines_name_the_line() {
        let cat = Catalog::from_text("c", r#"{"server":"git","name":"git_log","description":""}"#).unwrap();
        let good = r#"{"id":"1","query":"q","gold":["git__git_log"],"lang":"en","gold_level":"tool"}"#;
        let e = load_queries(
            "q.jsonl",
            &format!("{good}\n{}", good.replace("git__git_log", "git__nope").replace("\"1\"", "\"2\"")),
            &cat,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "q.jsonl:2: gold `git__nope` is not in the catalog (gold_level tool)");
        let e = load_queries("q.jsonl", &format!("{good}\n{good}"), &cat).unwrap_err();
        assert_eq!(e.to_string(), "q.jsonl:2: duplicate id `1`");
        let e = load_queries("q.jsonl", &good.replace(r#""lang":"en""#, r#""lang":5"#), &cat).unwrap_err();
        assert_eq!(e.to_string(), r#"q.jsonl:1: key `lang` must be a string such as "en" or "zh", not 5"#);
    }

    #[test]
    fn a_query_line_without_lang_or_gold_level_gets_them_from_its_text_and_its_gold() {
        let cat = Catalog::from_text("c", r#"{"server":"git","name":"git_log","description":""}"#).unwrap();
        let lines = [
            r#"{"id":"tool","query":"show the log","gold":["git__git_log"]}"#,
            r#"{"id":"name","query":"显示提交日志","gold":["git_log"]}"#,
            r#"{"id":"server","query":"history","gold":["git"]}"#,
        ];
        let queries = load_queries("q.jsonl", &lines.join("\n"), &cat).unwrap();
        let got: Vec<(&str, &str, &str)> =
            queries.iter().map(|q| (q.id.as_str(), q.lang.as_str(), q.gold_level.as_str())).collect();
        assert_eq!(got, [("tool", "en", "tool"), ("name", "zh", "name"), ("server", "en", "server")]);
        let e = load_queries("q.jsonl", r#"{"id":"1","query":"q","gold":["nope"]}"#, &cat).unwrap_err();
        assert!(e.to_string().starts_with("q.jsonl:1: gold `nope` is not in the catalog as a tool"), "{e}");
    }
}
