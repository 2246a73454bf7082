//! A deterministic generator of large synthetic catalogs, recombined from the embedded one.
//!
//! The embedded catalog (527 real MCP tools on 70 servers) is cut into material: server ids,
//! tool-name parts, description sentences and words (English and Chinese), input schemas and
//! annotations. Each synthetic tool takes a real tool as its template and is assembled from that
//! material:
//!
//! - its server is the template's server plus a numeric suffix (`git-17`), with as many
//!   suffixes as keep the real catalog's average of about 7.5 tools per server;
//! - its name joins two to four real name parts, the first one taken from the first parts of
//!   real names (`get`, `list`, `search`, ...);
//! - its description holds one to three real sentences in the template's language (often the
//!   template's own first sentence first), sometimes followed by a sentence of real words, and
//!   empty when the template's is (as for 19 of the 527 real tools);
//! - its input schema and annotations are the template's.
//!
//! The random numbers come from SplitMix64 with a fixed seed, so every run builds the same
//! catalogs and nothing generated is ever written to disk.

use std::collections::HashSet;

use toolgate_catalog::{Catalog, Tool};
use toolgate_catalog::{Origin, ToolSpec};
use toolgate_search::text::is_cjk;

/// The rotating queries; every one matches some tool of every catalog under every strategy.
pub const QUERIES: [&str; 20] = [
    "take a screenshot of a web page",
    "send a slack message",
    "list open pull requests",
    "read file contents",
    "查询火车余票 12306",
    "天气预报 weather forecast",
    "search npm package vulnerabilities",
    "git commit log",
    "current stock price",
    "convert time between timezones",
    "search arxiv papers about transformers",
    "fetch a url and convert it to markdown",
    "推荐菜谱 recipe",
    "create a mermaid flowchart",
    "crypto price of bitcoin",
    "youtube video transcript",
    "b站 bilibili 热门视频排行",
    "run a docker container",
    "write data to an excel spreadsheet",
    "wikipedia article summary",
];

/// The seed of every generated catalog.
const SEED: u64 = 0x746f_6f6c_6761_7465;

/// Tool names are not grown past this many bytes, so that qualified names stay short.
const MAX_NAME_LEN: usize = 40;

/// The SplitMix64 generator: tiny, fast and good enough to shuffle benchmark material.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` must not be 0), by multiply-and-shift.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// An element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// True with probability `1 / n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

/// The pieces of the real catalog that synthetic tools are assembled from.
#[derive(Debug)]
pub struct Material {
    /// The real tools, used as templates.
    templates: Vec<Template>,
    /// The first part of every real tool name (`get`, `list`, `search`, ...).
    first_parts: Vec<String>,
    /// Every part of every real tool name, split on `_` and `-`.
    parts: Vec<String>,
    /// Sentences of real descriptions without Chinese characters.
    en_sentences: Vec<String>,
    /// Sentences of real descriptions with Chinese characters.
    zh_sentences: Vec<String>,
    /// Words of the English sentences.
    en_words: Vec<String>,
    /// Runs of Chinese characters of the Chinese sentences.
    zh_words: Vec<String>,
}

impl Material {
    /// Cuts the catalog embedded in the library into material.
    pub fn embedded() -> Material {
        Material::from_catalog(&Catalog::embedded())
    }

    /// Cuts a catalog into material; every list is deduplicated and keeps catalog order.
    pub fn from_catalog(catalog: &Catalog) -> Material {
        let mut first_parts = Distinct::default();
        let mut parts = Distinct::default();
        let mut en_sentences = Distinct::default();
        let mut zh_sentences = Distinct::default();
        let mut en_words = Distinct::default();
        let mut zh_words = Distinct::default();
        let mut templates = Vec::with_capacity(catalog.len());
        for tool in catalog.tools() {
            templates.push(Template {
                tool: tool.clone(),
                first: sentences(tool.description()).next(),
                zh: tool.description().chars().any(is_cjk),
            });
            let mut name_parts = name_parts(tool.name());
            if let Some(first) = name_parts.next() {
                first_parts.push(first);
                parts.push(first);
            }
            name_parts.for_each(|p| parts.push(p));
            for sentence in sentences(tool.description()) {
                if sentence.chars().any(is_cjk) {
                    cjk_runs(&sentence).for_each(|w| zh_words.push(w));
                    zh_sentences.push(&sentence);
                } else {
                    english_words(&sentence).for_each(|w| en_words.push(w));
                    en_sentences.push(&sentence);
                }
            }
        }
        Material {
            templates,
            first_parts: first_parts.items,
            parts: parts.items,
            en_sentences: en_sentences.items,
            zh_sentences: zh_sentences.items,
            en_words: en_words.items,
            zh_words: zh_words.items,
        }
    }

    /// A catalog of `n` synthetic tools with unique (server, name) pairs, the same on every run.
    ///
    /// # Panics
    /// When the material is empty or the catalog does not build.
    pub fn catalog(&self, n: usize) -> Catalog {
        let catalog = self
            .specs(n)
            .into_iter()
            .fold(Catalog::builder(), |builder, spec| builder.tool(spec))
            .build()
            .expect("the synthetic catalog builds");
        assert_eq!(catalog.len(), n);
        catalog
    }

    /// The specs of [`Material::catalog`].
    ///
    /// # Panics
    /// When the material is empty.
    pub fn specs(&self, n: usize) -> Vec<ToolSpec> {
        assert!(!self.templates.is_empty() && !self.parts.is_empty(), "no material to recombine");
        let mut rng = SplitMix64::new(SEED ^ n as u64);
        // As many suffixes per real server as keep the real number of tools per server.
        let suffixes = n.div_ceil(self.templates.len()).max(1);
        let mut seen: HashSet<String> = HashSet::with_capacity(n);
        let mut specs = Vec::with_capacity(n);
        for i in 0..n {
            let template = rng.pick(&self.templates);
            let tool = &template.tool;
            let server = format!("{}-{}", tool.server(), rng.below(suffixes) + 1);
            let separator = if tool.name().contains('-') { '-' } else { '_' };
            let mut name = self.name(&mut rng, separator);
            let mut attempts = 0;
            while !seen.insert(format!("{server}__{name}")) {
                attempts += 1;
                name = if attempts < 8 {
                    self.name(&mut rng, separator)
                } else {
                    // Give up on luck: the position in the catalog makes the name unique.
                    format!("{name}{separator}{i}")
                };
            }
            specs.push(ToolSpec {
                server,
                name,
                description: self.description(&mut rng, template),
                input_schema: tool.schema().clone(),
                annotations: tool.annotations().clone(),
                origin: Origin::Mcp,
                always_load: false,
                should_defer: false,
                search_hint: None,
            });
        }
        specs
    }

    /// Two to four real name parts, joined by `separator`.
    fn name(&self, rng: &mut SplitMix64, separator: char) -> String {
        let mut name = rng.pick(&self.first_parts).clone();
        let count = 2 + rng.below(3);
        for _ in 1..count {
            let part = rng.pick(&self.parts);
            if name.len() + 1 + part.len() > MAX_NAME_LEN {
                break;
            }
            name.push(separator);
            name.push_str(part);
        }
        name
    }

    /// A description in the template's language; empty when the template's is empty.
    fn description(&self, rng: &mut SplitMix64, template: &Template) -> String {
        let Some(first) = &template.first else {
            return String::new();
        };
        let (pool, words, joiner, stop) = if template.zh {
            (&self.zh_sentences, &self.zh_words, "", "。")
        } else {
            (&self.en_sentences, &self.en_words, " ", ".")
        };
        // One to three sentences, chosen first so that the text is allocated once.
        let count = 1 + rng.below(3);
        let mut chosen: [&str; 3] = [""; 3];
        for (k, slot) in chosen.iter_mut().take(count).enumerate() {
            let own = (k == 0 && !rng.one_in(3)) || pool.is_empty();
            *slot = if own { first } else { rng.pick(pool).as_str() };
        }
        let extra_words = if words.is_empty() || !rng.one_in(4) { 0 } else { 4 + rng.below(6) };
        let mut out =
            String::with_capacity(chosen.iter().map(|s| s.len() + 1).sum::<usize>() + 16 * extra_words);
        for sentence in &chosen[..count] {
            if !out.is_empty() {
                out.push_str(joiner);
            }
            out.push_str(sentence);
        }
        // Sometimes a sentence of real words in a new order, capitalised when it is English.
        if extra_words > 0 {
            out.push_str(joiner);
            let start = out.len();
            for k in 0..extra_words {
                if k > 0 {
                    out.push_str(joiner);
                }
                out.push_str(rng.pick(words).as_str());
            }
            if let Some(head) = out.get_mut(start..start + 1) {
                head.make_ascii_uppercase();
            }
            out.push_str(stop);
        }
        out
    }
}

/// A real tool, with what a synthetic tool built on it needs from its description.
#[derive(Debug)]
struct Template {
    tool: Tool,
    /// The first sentence of the description; `None` when the description is empty.
    first: Option<String>,
    /// Whether the description has Chinese characters.
    zh: bool,
}

/// A list that keeps the first copy of each item.
#[derive(Debug, Default)]
struct Distinct {
    items: Vec<String>,
    seen: HashSet<String>,
}

impl Distinct {
    fn push(&mut self, item: &str) {
        if !self.seen.contains(item) {
            self.seen.insert(item.to_owned());
            self.items.push(item.to_owned());
        }
    }
}

/// The parts of a tool name split on `_` and `-`, without empty ones.
fn name_parts(name: &str) -> impl Iterator<Item = &str> {
    name.split(['_', '-']).filter(|p| !p.is_empty())
}

/// The sentences of a description, with white space collapsed and end punctuation kept.
///
/// A sentence ends at `。`, `！`, `？` or `；`, or at `.`, `!` or `?` followed by white space.
fn sentences(text: &str) -> impl Iterator<Item = String> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = flat.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        let end = matches!(c, '。' | '！' | '？' | '；')
            || (matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace()));
        if end || chars.peek().is_none() {
            let sentence = current.trim();
            if sentence.chars().count() >= 4 {
                out.push(sentence.to_owned());
            }
            current.clear();
        }
    }
    out.into_iter()
}

/// The words of an English sentence, trimmed of punctuation, at least two characters long.
fn english_words(sentence: &str) -> impl Iterator<Item = &str> {
    sentence
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| w.len() >= 2)
}

/// The runs of two to eight Chinese characters of a sentence.
fn cjk_runs(sentence: &str) -> impl Iterator<Item = &str> {
    sentence.split(|c: char| !is_cjk(c)).filter(|w| (2..=8).contains(&w.chars().count()))
}
