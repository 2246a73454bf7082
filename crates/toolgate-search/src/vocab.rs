//! Vocabularies kept as data, compiled in and parsed once. Two layers:
//!
//! - **General resources**, generated from public dictionaries by `scripts/vocab/` and shipped
//!   with their licences: English synonyms from WordNet 3.0 (`vocab/wordnet.tsv`,
//!   `vocab/LICENSE-WordNet`), looked for when no tool has a request's word. The format also
//!   takes Chinese → English words from a dictionary (`scripts/vocab/cedict.mjs` writes them
//!   from CC-CEDICT), not compiled in for now. Their words are brought to the analyzer's normal
//!   form as they are read; an entry that does not fit is skipped.
//! - **Hand-written entries**: Chinese → English words (`vocab/zh_en.tsv`), English synonyms
//!   (`vocab/synonyms.tsv`), the kinds English words name (`vocab/kinds.tsv`: a `villa` is a
//!   `house`), the fields they belong to (`vocab/topics.tsv`: `bitcoin` is about `finance`),
//!   checked strictly. `examples/vocabulary.rs` leaves each out in turn and reports what it
//!   adds on each bench set (`docs/ranking.md` has the figures); a hand-written Chinese word
//!   replaces the dictionary's translations of it.
//!
//! They feed query expansion: a Chinese request for an English-described tool meets the tool
//! through the English words the vocabulary gives for its Chinese words, and `fetch` meets
//! tools that say `get`. Only general words belong here: verbs, objects, common domain nouns.

use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

use super::text::{Analyzer, Chinese};

mod general;

use general::general;

/// The Chinese → English vocabulary file.
pub(crate) const ZH_EN: &str = include_str!("vocab/zh_en.tsv");

/// The English synonym groups file.
pub(crate) const SYNONYMS: &str = include_str!("vocab/synonyms.tsv");
/// `vocab/kinds.tsv`: general words and the more specific words that are kinds of them.
pub(crate) const KINDS: &str = include_str!("vocab/kinds.tsv");
/// `vocab/topics.tsv`: fields and the specific words that belong to them.
pub(crate) const TOPICS: &str = include_str!("vocab/topics.tsv");

/// Chinese function words and politeness formulas dropped from queries: they say nothing of
/// what a tool does. Longer entries first is not needed: the segmenter takes the longest match.
const ZH_STOP: &[&str] = &[
    "的",
    "了",
    "吗",
    "呢",
    "吧",
    "啊",
    "呀",
    "哦",
    "嘛",
    "么",
    "着",
    "过",
    "地",
    "得",
    "很",
    "都",
    "也",
    "还",
    "就",
    "再",
    "又",
    "把",
    "被",
    "让",
    "给",
    "在",
    "是",
    "和",
    "与",
    "及",
    "或",
    "跟",
    "对",
    "从",
    "到",
    "向",
    "为",
    "将",
    "这",
    "那",
    "哪",
    "其",
    "之",
    "个",
    "些",
    "一下",
    "一个",
    "一些",
    "一张",
    "一条",
    "一份",
    "一篇",
    "一次",
    "这个",
    "那个",
    "这些",
    "那些",
    "这张",
    "这篇",
    "这份",
    "哪些",
    "哪个",
    "什么",
    "怎么",
    "怎样",
    "如何",
    "为什么",
    "是否",
    "是不是",
    "有没有",
    "能不能",
    "可不可以",
    "帮我",
    "帮忙",
    "帮",
    "请",
    "请你",
    "麻烦",
    "我想",
    "我要",
    "我需要",
    "需要",
    "想要",
    "想",
    "要",
    "我",
    "我们",
    "你",
    "你们",
    "他",
    "她",
    "它",
    "他们",
    "自己",
    "能",
    "能否",
    "可以",
    "可能",
    "应该",
    "会",
    "会不会",
    "一共",
    "到底",
    "具体",
    "大概",
    "现在",
    "然后",
    "先",
    "并",
    "并且",
    "而且",
    "但",
    "但是",
    "所以",
    "因为",
    "如果",
    "告诉",
    "知道",
    "一点",
    "有",
    "有些",
    "里",
    "中",
    "上面",
    "下面",
    "里面",
    "这里",
    "那里",
    "下",
    "了解",
    "关于",
    "以及",
    "还有",
];

/// One way to say a word in another vocabulary: every term of it is needed (`word cloud`).
pub(crate) type Phrase = Vec<String>;

/// The parsed vocabularies.
#[derive(Debug)]
pub(crate) struct Vocabulary {
    /// Chinese word → its English phrases.
    pub(crate) zh: FxHashMap<String, Vec<Phrase>>,
    /// Chinese stop words, as a set.
    zh_stop: FxHashMap<&'static str, ()>,
    /// Longest Chinese key or stop word, in characters.
    max_chars: usize,
    /// English word → the other words of its synonym group.
    pub(crate) synonyms: FxHashMap<String, Vec<String>>,
    /// English word → its synonyms from the general resource, looked for only when no tool
    /// has the word itself: a word the catalog has speaks for itself, and a dictionary's
    /// synonyms of it mostly find other tools.
    pub(crate) unsaid_synonyms: FxHashMap<String, Vec<String>>,
    /// English word → the more general words it is a kind of (`villa` → `house`, `home`).
    pub(crate) kinds: FxHashMap<String, Vec<String>>,
    /// English word → the fields it belongs to (`bitcoin` → `finance`, `cryptocurrency`).
    pub(crate) topics: FxHashMap<String, Vec<String>>,
    /// English word → the Chinese words that give it as a one-word phrase (the reverse
    /// direction: an English request for a tool described in Chinese).
    pub(crate) en_zh: FxHashMap<String, Vec<String>>,
}

/// A vocabulary line that does not follow the format; names the file, line and problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VocabError {
    pub(crate) file: &'static str,
    pub(crate) line: usize,
    pub(crate) message: String,
}

impl std::fmt::Display for VocabError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// The analyzer whose normal form the vocabularies are written in.
pub(crate) fn normal_analyzer() -> Analyzer {
    Analyzer::stemming(Chinese::Bigrams)
}

/// The lines of a data file that carry content, numbered from 1.
fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// Checks one English word: lower-case ASCII letters and digits, in the analyzer's normal form.
fn check_english(word: &str, analyzer: &Analyzer) -> Result<(), String> {
    if word.is_empty() || !word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
        return Err(format!("`{word}` is not one lower-case English word"));
    }
    match analyzer.normal_form(word) {
        Some(n) if n == word => Ok(()),
        Some(n) => Err(format!("`{word}` is not in normal form (the analyzer makes it `{n}`)")),
        None => Err(format!("`{word}` is a stop word or splits into several terms")),
    }
}

/// Parses the four files; every malformed line is an error.
pub(crate) fn parse(
    zh_en: &str,
    synonyms: &str,
    kinds_text: &str,
    topics_text: &str,
) -> Result<Vocabulary, VocabError> {
    let analyzer = normal_analyzer();
    let mut zh: FxHashMap<String, Vec<Phrase>> = FxHashMap::default();
    for (line, text) in content_lines(zh_en) {
        let err = |message: String| VocabError { file: "zh_en.tsv", line, message };
        let Some((key, english)) = text.split_once('\t') else {
            return Err(err("expected a Chinese word, a tab and English words".into()));
        };
        if key.is_empty() || !key.chars().all(super::text::is_cjk) {
            return Err(err(format!("`{key}` is not a word of Chinese characters")));
        }
        let mut phrases: Vec<Phrase> = Vec::new();
        for alt in english.split(',').map(str::trim) {
            let words: Phrase = alt.split(' ').filter(|w| !w.is_empty()).map(str::to_owned).collect();
            if words.is_empty() {
                return Err(err("an empty English alternative".into()));
            }
            for w in &words {
                check_english(w, &analyzer).map_err(err)?;
            }
            if phrases.contains(&words) {
                return Err(err(format!("`{alt}` is given twice")));
            }
            phrases.push(words);
        }
        if zh.insert(key.to_owned(), phrases).is_some() {
            return Err(err(format!("`{key}` has an earlier entry")));
        }
    }
    let mut groups: FxHashMap<String, Vec<String>> = FxHashMap::default();
    for (line, text) in content_lines(synonyms) {
        let err = |message: String| VocabError { file: "synonyms.tsv", line, message };
        let words: Vec<&str> = text.split(',').map(str::trim).collect();
        if words.len() < 2 {
            return Err(err("a group needs at least two words".into()));
        }
        for w in &words {
            check_english(w, &analyzer).map_err(err)?;
            let others = words.iter().filter(|o| *o != w).map(|o| (*o).to_owned()).collect();
            if groups.insert((*w).to_owned(), others).is_some() {
                return Err(err(format!("`{w}` is already in another group")));
            }
        }
    }
    let kinds = parse_broader(kinds_text, &KINDS_FILE, &analyzer)?;
    let topics = parse_broader(topics_text, &TOPICS_FILE, &analyzer)?;
    let zh_stop: FxHashMap<&'static str, ()> = ZH_STOP.iter().map(|s| (*s, ())).collect();
    let mut v = Vocabulary {
        zh,
        zh_stop,
        max_chars: 1,
        synonyms: groups,
        unsaid_synonyms: FxHashMap::default(),
        kinds,
        topics,
        en_zh: FxHashMap::default(),
    };
    v.index_words();
    Ok(v)
}

impl Vocabulary {
    /// Rebuilds what is derived from the Chinese words: the reverse map and the longest key.
    fn index_words(&mut self) {
        let mut en_zh: FxHashMap<String, Vec<String>> = FxHashMap::default();
        let mut keys: Vec<&String> = self.zh.keys().collect();
        keys.sort();
        for key in keys {
            for phrase in &self.zh[key] {
                if let [word] = phrase.as_slice() {
                    en_zh.entry(word.clone()).or_default().push(key.clone());
                }
            }
        }
        self.en_zh = en_zh;
        self.max_chars = self
            .zh
            .keys()
            .map(String::as_str)
            .chain(self.zh_stop.keys().copied())
            .map(|k| k.chars().count())
            .max()
            .unwrap_or(1);
    }
}

/// A file of one-directional relations from specific words to broader ones, and how its
/// errors say the relation.
struct BroaderFile {
    name: &'static str,
    /// `specific` is `relation` `general`: "a kind of", "about".
    relation: &'static str,
    /// What the right-hand words are, for the format error.
    right: &'static str,
}

const KINDS_FILE: BroaderFile =
    BroaderFile { name: "kinds.tsv", relation: "a kind of", right: "the words that are kinds of them" };
const TOPICS_FILE: BroaderFile =
    BroaderFile { name: "topics.tsv", relation: "about", right: "the words that belong to them" };

/// Parses `general, …: specific, …` lines into specific word → general words.
fn parse_broader(
    text: &str,
    file: &BroaderFile,
    analyzer: &Analyzer,
) -> Result<FxHashMap<String, Vec<String>>, VocabError> {
    let mut map: FxHashMap<String, Vec<String>> = FxHashMap::default();
    for (line, text) in content_lines(text) {
        let err = |message: String| VocabError { file: file.name, line, message };
        let Some((general, specific)) = text.split_once(':') else {
            return Err(err(format!("expected general words, `:` and {}", file.right)));
        };
        let general: Vec<&str> = general.split(',').map(str::trim).collect();
        let specific: Vec<&str> = specific.split(',').map(str::trim).collect();
        for w in general.iter().chain(&specific) {
            check_english(w, analyzer).map_err(err)?;
        }
        for s in &specific {
            if general.contains(s) {
                return Err(err(format!("`{s}` is {} itself", file.relation)));
            }
            let entry = map.entry((*s).to_owned()).or_default();
            for g in &general {
                if entry.iter().any(|e| e == g) {
                    return Err(err(format!("`{s}` is already {} `{g}`", file.relation)));
                }
                entry.push((*g).to_owned());
            }
        }
    }
    Ok(map)
}

/// The compiled-in vocabularies, hand-written and general (parsed on first use; the tests
/// keep them well-formed).
pub(crate) fn vocabulary() -> &'static Arc<Vocabulary> {
    static VOCAB: OnceLock<Arc<Vocabulary>> = OnceLock::new();
    VOCAB.get_or_init(|| {
        let hand =
            parse(ZH_EN, SYNONYMS, KINDS, TOPICS).unwrap_or_else(|e| panic!("compiled-in vocabulary: {e}"));
        Arc::new(hand.with_general(general()))
    })
}

/// One hand-written entry: a content line of one of the four files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandEntry {
    /// The file's name (`zh_en.tsv`, `synonyms.tsv`, `kinds.tsv`, `topics.tsv`).
    pub file: &'static str,
    /// The line's number, from 1.
    pub line: usize,
    /// The line as written.
    pub text: String,
}

impl HandEntry {
    /// Every hand-written entry, file by file.
    pub fn all() -> Vec<HandEntry> {
        let files =
            [("zh_en.tsv", ZH_EN), ("synonyms.tsv", SYNONYMS), ("kinds.tsv", KINDS), ("topics.tsv", TOPICS)];
        let mut out = Vec::new();
        for (file, text) in files {
            for (line, l) in content_lines(text) {
                out.push(HandEntry { file, line, text: l.to_owned() });
            }
        }
        out
    }

    /// The compiled-in vocabulary without `entries` (the general resources still give what
    /// they have for their words).
    pub(crate) fn vocabulary_without(entries: &[HandEntry]) -> Arc<Vocabulary> {
        let blank = |name: &str, text: &'static str| -> String {
            let mut out = String::with_capacity(text.len());
            for (i, l) in text.lines().enumerate() {
                if !entries.iter().any(|e| e.file == name && e.line == i + 1) {
                    out.push_str(l);
                }
                out.push('\n');
            }
            out
        };
        let hand = parse(
            &blank("zh_en.tsv", ZH_EN),
            &blank("synonyms.tsv", SYNONYMS),
            &blank("kinds.tsv", KINDS),
            &blank("topics.tsv", TOPICS),
        )
        .unwrap_or_else(|e| panic!("compiled-in vocabulary: {e}"));
        Arc::new(hand.with_general(general()))
    }
}

/// A piece of a run of Chinese characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// A vocabulary word.
    Word(&'a str),
    /// Characters no vocabulary word covers.
    Other(&'a str),
    /// A stop word (dropped; it separates runs).
    Stop,
}

impl Vocabulary {
    /// Splits a run of Chinese characters by longest match over the vocabulary and the stop
    /// words, left to right: vocabulary words, uncovered stretches and stop words.
    pub(crate) fn segment<'a>(&self, run: &'a str, f: &mut dyn FnMut(Piece<'a>)) {
        let starts: Vec<usize> =
            run.char_indices().map(|(i, _)| i).chain(std::iter::once(run.len())).collect();
        let chars = starts.len() - 1;
        let mut i = 0;
        let mut other_start: Option<usize> = None;
        while i < chars {
            let mut matched = None;
            for len in (1..=self.max_chars.min(chars - i)).rev() {
                let w = &run[starts[i]..starts[i + len]];
                if self.zh.contains_key(w) {
                    matched = Some((len, true));
                    break;
                }
                if self.zh_stop.contains_key(w) {
                    matched = Some((len, false));
                    break;
                }
            }
            match matched {
                Some((len, is_word)) => {
                    if let Some(s) = other_start.take() {
                        f(Piece::Other(&run[starts[s]..starts[i]]));
                    }
                    f(if is_word { Piece::Word(&run[starts[i]..starts[i + len]]) } else { Piece::Stop });
                    i += len;
                }
                None => {
                    other_start.get_or_insert(i);
                    i += 1;
                }
            }
        }
        if let Some(s) = other_start {
            f(Piece::Other(&run[starts[s]..]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_figures_in_the_docs_are_of_these_entries() {
        // `docs/vocabulary-entries.tsv` is `examples/vocabulary.rs`'s output: an entry added,
        // changed or moved since leaves it stale.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/vocabulary-entries.tsv");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let listed: Vec<(String, usize, String)> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let fields: Vec<&str> = l.split('\t').collect();
                let line = fields[1].parse().unwrap_or_else(|_| panic!("{path}: {l}"));
                (fields[0].to_owned(), line, fields[fields.len() - 1].to_owned())
            })
            .collect();
        let entries: Vec<(String, usize, String)> = HandEntry::all()
            .into_iter()
            .map(|e| (e.file.to_owned(), e.line, e.text.replace('\t', " → ")))
            .collect();
        let stale = "docs/vocabulary-entries.tsv is stale: regenerate it with `cargo run --release \
                     -p toolgate-search --example vocabulary > docs/vocabulary-entries.tsv`";
        assert_eq!(listed.len(), entries.len(), "{stale}");
        for (l, e) in listed.iter().zip(&entries) {
            assert_eq!(l, e, "{stale}");
        }
    }

    #[test]
    fn vocab_files_are_well_formed() {
        // Parsing checks the format, duplicates and the normal form of every English word.
        let v = parse(ZH_EN, SYNONYMS, KINDS, TOPICS).unwrap_or_else(|e| panic!("{e}"));
        assert!(v.zh.len() >= 300, "{} Chinese entries", v.zh.len());
        assert!(v.synonyms.len() >= 60);
        assert_eq!(v.zh["文件"], vec![vec!["file".to_owned()]]);
        assert_eq!(v.zh["词云"], vec![vec!["word".to_owned(), "cloud".to_owned()]]);
        assert!(v.synonyms["fetch"].contains(&"get".to_owned()));
        assert!(v.kinds["villa"].contains(&"house".to_owned()));
        assert!(v.topics["bitcoin"].contains(&"finance".to_owned()));
    }

    /// Names of products, services, companies, exchanges, leagues and organisations, in the
    /// analyzer's normal form: none may stand anywhere in the vocabulary, on either side. The
    /// vocabulary holds the ordinary words of a language; a name would fit one catalog.
    const NAMES: &[&str] = &[
        "wikipedia",
        "google",
        "github",
        "gitlab",
        "slack",
        "notion",
        "jira",
        "figma",
        "youtube",
        "twitter",
        "facebook",
        "instagram",
        "tiktok",
        "reddit",
        "spotify",
        "netflix",
        "amazon",
        "alibaba",
        "taobao",
        "wechat",
        "weibo",
        "baidu",
        "bilibili",
        "zhihu",
        "douyin",
        "openai",
        "chatgpt",
        "claude",
        "gemini",
        "microsoft",
        "powerpoint",
        "apple",
        "android",
        "iphone",
        "tesla",
        "nasdaq",
        "nyse",
        "ftse",
        "nikkei",
        "dax",
        "opec",
        "usdt",
        "usdc",
        "solana",
        "cardano",
        "ripple",
        "xrp",
        "litecoin",
        "dogecoin",
        "binance",
        "coinbase",
        "nba",
        "nfl",
        "mlb",
        "nhl",
        "fifa",
        "uefa",
        "nascar",
        "wimbledon",
        "superbowl",
        "bundesliga",
        "laliga",
        "ncaa",
        "12306",
        "amap",
        "gaode",
        "playwright",
        "puppeteer",
    ];

    #[test]
    fn the_vocabulary_names_no_product_or_service() {
        let v = parse(ZH_EN, SYNONYMS, KINDS, TOPICS).unwrap_or_else(|e| panic!("{e}"));
        let mut words: Vec<&str> = Vec::new();
        for alternatives in v.zh.values() {
            words.extend(alternatives.iter().flatten().map(String::as_str));
        }
        for map in [&v.synonyms, &v.kinds, &v.topics] {
            for (word, others) in map {
                words.push(word);
                words.extend(others.iter().map(String::as_str));
            }
        }
        let named: Vec<&&str> = words.iter().filter(|w| NAMES.contains(w)).collect();
        assert!(named.is_empty(), "product or service names in the vocabulary: {named:?}");
    }

    #[test]
    fn vocab_errors_name_the_line() {
        // The four files' texts (zh_en, synonyms, kinds, topics), and the error they give.
        let cases: [([&str; 4], &str); 14] = [
            (["# c\n文件\tfile\n文件\tdocument\n", "", "", ""], "zh_en.tsv:3: `文件` has an earlier entry"),
            (["文件\tFiles\n", "", "", ""], "zh_en.tsv:1: `Files` is not one lower-case English word"),
            (
                ["文件\tfiles\n", "", "", ""],
                "zh_en.tsv:1: `files` is not in normal form (the analyzer makes it `file`)",
            ),
            (["文件\tthe\n", "", "", ""], "zh_en.tsv:1: `the` is a stop word or splits into several terms"),
            (["file\tfile\n", "", "", ""], "zh_en.tsv:1: `file` is not a word of Chinese characters"),
            (
                ["", "get, fetch\nfetch, retrieve\n", "", ""],
                "synonyms.tsv:2: `fetch` is already in another group",
            ),
            (["", "get\n", "", ""], "synonyms.tsv:1: a group needs at least two words"),
            (
                ["", "", "house, home apartment\n", ""],
                "kinds.tsv:1: expected general words, `:` and the words that are kinds of them",
            ),
            (["", "", "house: villa, house\n", ""], "kinds.tsv:1: `house` is a kind of itself"),
            (
                ["", "", "house: villa\nhouse, home: villa\n", ""],
                "kinds.tsv:2: `villa` is already a kind of `house`",
            ),
            (
                ["", "", "house: villas\n", ""],
                "kinds.tsv:1: `villas` is not in normal form (the analyzer makes it `villa`)",
            ),
            (["", "", "", "finance: finance, bitcoin\n"], "topics.tsv:1: `finance` is about itself"),
            (
                ["", "", "", "finance bitcoin\n"],
                "topics.tsv:1: expected general words, `:` and the words that belong to them",
            ),
            (
                ["", "", "", "finance: bitcoin\nfinance: bitcoin\n"],
                "topics.tsv:2: `bitcoin` is already about `finance`",
            ),
        ];
        for ([zh_en, synonyms, kinds, topics], want) in cases {
            let e = parse(zh_en, synonyms, kinds, topics).unwrap_err();
            assert_eq!(e.to_string(), want);
        }
        let v = parse("", "", "house, home: villa\nplace: villa\n", "").unwrap();
        assert_eq!(v.kinds["villa"], ["house", "home", "place"]);
    }

    #[test]
    fn chinese_stop_words_are_not_vocabulary_words() {
        let v = vocabulary();
        let both: Vec<&&str> = ZH_STOP.iter().filter(|s| v.zh.contains_key(**s)).collect();
        assert!(both.is_empty(), "both a stop word and a vocabulary word: {both:?}");
    }

    #[test]
    fn segmentation_takes_the_longest_word_and_drops_stop_words() {
        let mut out = Vec::new();
        vocabulary().segment("帮我看看这个仓库最近的提交记录", &mut |p| out.push(p));
        let want = [Piece::Stop, Piece::Word("看看"), Piece::Stop, Piece::Word("仓库"), Piece::Word("最近")];
        assert_eq!(out[..5], want);
        assert_eq!(out[5..], [Piece::Stop, Piece::Word("提交"), Piece::Word("记录")]);
        out.clear();
        vocabulary().segment("做个桑基图吧", &mut |p| out.push(p));
        assert_eq!(out, [Piece::Word("做"), Piece::Stop, Piece::Word("桑基图"), Piece::Stop]);
        out.clear();
        vocabulary().segment("宫保鸡丁", &mut |p| out.push(p));
        assert_eq!(out, [Piece::Other("宫保鸡丁")]);
    }

    #[test]
    fn leaving_an_entry_out_leaves_the_dictionary_in() {
        let entry = HandEntry::all().into_iter().find(|e| e.text.starts_with("查询\t")).unwrap();
        let without = HandEntry::vocabulary_without(std::slice::from_ref(&entry));
        assert!(vocabulary().zh.contains_key("查询"));
        assert!(!without.zh.contains_key("查询"));
        assert_eq!(without.synonyms, vocabulary().synonyms);
        assert_eq!(HandEntry::vocabulary_without(&[]).zh.len(), vocabulary().zh.len());
    }

    #[test]
    fn words_holding_a_stop_character_stay_whole() {
        // `有` and `地` are stop words; `有趣` and `地方` are words of their own.
        let mut out = Vec::new();
        vocabulary().segment("附近有趣的地方", &mut |p| out.push(p));
        let want = [Piece::Word("附近"), Piece::Word("有趣"), Piece::Stop, Piece::Word("地方")];
        assert_eq!(out, want);
        out.clear();
        vocabulary().segment("有没有", &mut |p| out.push(p));
        assert_eq!(out, [Piece::Stop]);
    }
}
