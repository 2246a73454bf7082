//! Text analysis shared by the index and the query: identifier splitting, Unicode word tokens,
//! Chinese segmentation, stop words and light stemming.
//!
//! One function, [`Analyzer::tokens`], turns any text into search terms, so that a document and
//! a query always agree on what a term is.

/// How runs of Han characters (and kana) become terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Chinese {
    /// Overlapping character bigrams; a lone character stays a unigram.
    #[default]
    Bigrams,
    /// Words from jieba-rs (`cut_for_search`); needs the `jieba` feature.
    #[cfg(feature = "jieba")]
    Jieba,
}

/// Turns text into search terms.
#[derive(Debug, Clone, Default)]
pub struct Analyzer {
    chinese: Chinese,
    /// Whether English stop words are dropped and plurals folded.
    english: bool,
}

/// Whether `c` is a CJK ideograph or kana.
pub fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}')
}

/// Splits an identifier into words: `getUserID_v2-list.all` → `get User ID v2 list all`.
///
/// camelCase and acronym boundaries become spaces, and so do `_`, `-` and `.`.
pub fn split_identifier(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if matches!(c, '_' | '-' | '.') {
            if !out.ends_with(' ') {
                out.push(' ');
            }
            continue;
        }
        if i > 0 && c.is_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary =
                prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower);
            if boundary && !out.ends_with(' ') {
                out.push(' ');
            }
        }
        out.push(c);
    }
    out
}

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "could", "do", "does", "for", "from",
    "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please",
    "should", "so", "some", "that", "the", "their", "them", "then", "there", "these", "this", "those", "to",
    "us", "was", "we", "what", "when", "where", "which", "who", "will", "with", "would", "you", "your",
];

/// Folds English plurals (a light S-stemmer): `repositories` → `repository`,
/// `boxes` → `box`, `files` → `file`; leaves `status`, `class`, `news` alone.
pub fn fold_plural(word: &str) -> &str {
    let n = word.len();
    if n <= 3 || !word.is_ascii() {
        return word;
    }
    if word.ends_with("ies") && !word.ends_with("eies") && !word.ends_with("aies") {
        // Callers re-add the `y`; see `stem`.
        return &word[..n - 3];
    }
    if word.ends_with("sses") || word.ends_with("xes") || word.ends_with("ches") || word.ends_with("shes") {
        return &word[..n - 2];
    }
    if word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
        && !word.ends_with("ws")
    {
        return &word[..n - 1];
    }
    word
}

fn stem(word: &str) -> String {
    let folded = fold_plural(word);
    if folded.len() + 3 == word.len() && word.ends_with("ies") {
        format!("{folded}y")
    } else {
        folded.to_owned()
    }
}

impl Analyzer {
    /// An analyzer with English stop words and plural folding, and the given Chinese mode.
    pub fn new(chinese: Chinese) -> Analyzer {
        Analyzer { chinese, english: true }
    }

    /// An analyzer that keeps every word as it is (no stop words, no stemming): the plain
    /// BM25 baseline.
    pub fn plain() -> Analyzer {
        Analyzer { chinese: Chinese::Bigrams, english: false }
    }

    /// The terms of `text`, in order, repeats kept.
    ///
    /// Words are runs of letters and digits (`_`, `-`, `.` and every other symbol separate);
    /// a camelCase word gives its parts and then the whole word (`GitHub` → `git hub github`),
    /// so that it meets both `github` and `git`.
    pub fn tokens(&self, text: &str, out: &mut Vec<String>) {
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            let mut rest = word;
            while let Some(first) = rest.chars().next() {
                let cjk = is_cjk(first);
                let end = rest.find(|c: char| is_cjk(c) != cjk).unwrap_or(rest.len());
                let (seg, tail) = rest.split_at(end);
                if cjk {
                    self.chinese_terms(seg, out);
                } else {
                    let split = split_identifier(seg);
                    let mut parts = split.split(' ').filter(|p| !p.is_empty()).peekable();
                    let first_part = parts.next().unwrap_or_default();
                    if parts.peek().is_some() {
                        self.latin_term(&first_part.to_lowercase(), out);
                        for p in parts {
                            self.latin_term(&p.to_lowercase(), out);
                        }
                    }
                    self.latin_term(&seg.to_lowercase(), out);
                }
                rest = tail;
            }
        }
    }

    fn latin_term(&self, word: &str, out: &mut Vec<String>) {
        if self.english {
            if STOP_WORDS.contains(&word) {
                return;
            }
            out.push(stem(word));
        } else {
            out.push(word.to_owned());
        }
    }

    fn chinese_terms(&self, seg: &str, out: &mut Vec<String>) {
        match self.chinese {
            Chinese::Bigrams => bigrams(seg, out),
            #[cfg(feature = "jieba")]
            Chinese::Jieba => {
                for w in jieba().cut_for_search(seg, true) {
                    out.push(w.word.to_owned());
                }
            }
        }
    }
}

fn bigrams(seg: &str, out: &mut Vec<String>) {
    let chars: Vec<char> = seg.chars().collect();
    if chars.len() == 1 {
        out.push(seg.to_owned());
        return;
    }
    for pair in chars.windows(2) {
        out.push(pair.iter().collect());
    }
}

#[cfg(feature = "jieba")]
fn jieba() -> &'static jieba_rs::Jieba {
    static JIEBA: std::sync::OnceLock<jieba_rs::Jieba> = std::sync::OnceLock::new();
    JIEBA.get_or_init(jieba_rs::Jieba::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};

    fn check(analyzer: &Analyzer, text: &str, expect: Expect) {
        let mut out = Vec::new();
        analyzer.tokens(text, &mut out);
        expect.assert_eq(&out.join(" "));
    }

    #[test]
    fn identifiers_split_like_tool_names() {
        assert_eq!(split_identifier("getUserID_v2-list.all"), "get User ID v2 list all");
        assert_eq!(split_identifier("npmVulnerabilities"), "npm Vulnerabilities");
        assert_eq!(split_identifier("PDF&URLTool"), "PDF&URL Tool");
        check(
            &Analyzer::default(),
            "ask_codex npmVulnerabilities",
            expect!["ask codex npm vulnerabilities npmvulnerabilities"],
        );
    }

    #[test]
    fn english_words_lose_stop_words_and_plurals() {
        check(
            &Analyzer::new(Chinese::Bigrams),
            "List the open Issues of my repositories",
            expect!["list open issue repository"],
        );
        check(
            &Analyzer::new(Chinese::Bigrams),
            "status class news boxes files",
            expect!["status class news box file"],
        );
        check(&Analyzer::plain(), "List the Issues", expect!["list the issues"]);
    }

    #[test]
    fn chinese_becomes_bigrams() {
        check(&Analyzer::default(), "查询12306余票信息", expect!["查询 12306 余票 票信 信息"]);
        check(&Analyzer::default(), "火车 票", expect!["火车 票"]);
        check(&Analyzer::default(), "用GitHub创建issue", expect!["用 git hub github 创建 issue"]);
    }
}
