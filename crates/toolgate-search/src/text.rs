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
    /// Whether `-ing` and `-ed` endings are stripped too ([`stem`]).
    stem: bool,
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
    toolgate_catalog::naming::split_words(s, &['_', '-', '.'], true)
}

/// Folds English plurals (a light S-stemmer): `repositories` → `repository`, `movies` →
/// `movie`, `boxes` → `box`, `files` → `file`; leaves `status`, `class`, `news`, `canvas`,
/// `alias` and `series` alone.
pub fn fold_plural(word: &str) -> &str {
    let n = word.len();
    if n <= 3 || !word.is_ascii() {
        return word;
    }
    if word.ends_with("ies") && !word.ends_with("eies") && !word.ends_with("aies") {
        if IES_SAME.contains(&word) {
            return word;
        }
        if IE_NOUNS.contains(&&word[..n - 1]) {
            return &word[..n - 1];
        }
        // The caller re-adds the `y`.
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
        && !word.ends_with("vas")
        && !word.ends_with("ias")
    {
        return &word[..n - 1];
    }
    word
}

/// Nouns ending in `-ie`, whose plural is `-ies` but not `-y`: `movies` → `movie`, not `movy`.
const IE_NOUNS: &[&str] = &[
    "auntie", "beanie", "birdie", "boogie", "brownie", "budgie", "calorie", "collie", "cookie", "die",
    "foodie", "freebie", "genie", "goalie", "hoodie", "lie", "lingerie", "movie", "newbie", "pie", "pixie",
    "prairie", "rookie", "selfie", "smoothie", "sortie", "techie", "tie", "veggie", "zombie",
];

/// Words in `-ies` that are their own singular.
const IES_SAME: &[&str] = &["series", "species"];

/// Whether a word ends in `-ing` or `-ed` and is long enough for [`stem`] to look at it.
fn has_inflection(word: &str) -> bool {
    (word.len() >= 6 && word.ends_with("ing")) || (word.len() >= 5 && word.ends_with("ed") && word != "embed")
}

/// Strips `-ing` and `-ed` in place, a light Porter step 1b: `getting` → `get`, `creating` →
/// `create`, `listed` → `list`, `copied` → `copy`, `resized` → `resize`; `need`, `embed` and
/// `string` stay. Base forms ending otherwise are fixed points, so the vocabularies can be
/// written in plain English. Inflections it gets wrong (`deleted` → `delet`) only cost a match.
pub fn stem(word: &mut String) {
    if !word.is_ascii() || !has_inflection(word) {
        return;
    }
    let n = word.len();
    let cut = if word.ends_with("ing") {
        3
    } else if word.ends_with("ied") {
        word.truncate(n - 3);
        word.push('y');
        return;
    } else if word.ends_with("eed") {
        return;
    } else {
        2
    };
    let stem_len = n - cut;
    if !word[..stem_len].bytes().any(is_vowel) {
        return;
    }
    word.truncate(stem_len);
    let b = word.as_bytes();
    let (x, y) = (b[stem_len - 2], b[stem_len - 1]);
    if x == y && !is_vowel(y) && !matches!(y, b'l' | b's' | b'z') {
        word.pop();
    } else if word.ends_with("at") || word.ends_with("bl") || word.ends_with("iz") || ends_short_cvc(b) {
        word.push('e');
    }
}

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u')
}

/// Whether a stem is one consonant-vowel-consonant syllable (Porter's m = 1 and *o): `mak`,
/// `writ`, `bas`, the stems that lost an `e` (`making`, `writing`, `based`).
fn ends_short_cvc(b: &[u8]) -> bool {
    let n = b.len();
    if n < 3 {
        return false;
    }
    let (c1, v, c2) = (b[n - 3], b[n - 2], b[n - 1]);
    let cvc = !is_vowel(c1) && is_vowel(v) && !is_vowel(c2) && !matches!(c2, b'w' | b'x' | b'y');
    // One vowel group before the end: nothing but consonants before `c1`.
    cvc && b[..n - 3].iter().all(|&c| !is_vowel(c))
}

impl Analyzer {
    /// An analyzer with English stop words and plural folding, and the given Chinese mode.
    pub fn new(chinese: Chinese) -> Analyzer {
        Analyzer { chinese, english: true, stem: false }
    }

    /// Like [`Analyzer::new`], and English words also lose `-ing` and `-ed` ([`stem`]).
    pub fn stemming(chinese: Chinese) -> Analyzer {
        Analyzer { chinese, english: true, stem: true }
    }

    /// An analyzer that keeps every word as it is (no stop words, no stemming): the plain
    /// BM25 baseline.
    pub fn plain() -> Analyzer {
        Analyzer { chinese: Chinese::Bigrams, english: false, stem: false }
    }

    /// The normal form of one word: the single term it analyses to, if it gives exactly one.
    pub fn normal_form(&self, word: &str) -> Option<String> {
        let mut out = Vec::new();
        self.tokens(word, &mut out);
        (out.len() == 1).then(|| out.remove(0))
    }

    /// The terms of `text`, in order, repeats kept.
    ///
    /// Words are runs of letters and digits (`_`, `-`, `.` and every other symbol separate);
    /// a camelCase word gives its parts and then the whole word (`GitHub` → `git hub github`),
    /// so that it meets both `github` and `git`.
    pub fn tokens(&self, text: &str, out: &mut Vec<String>) {
        self.each_term(text, &mut |t| out.push(t.to_owned()));
    }

    /// Calls `f` with every term of `text`, in order, without allocating per term (the index
    /// build runs through here for every word of every tool).
    pub fn each_term(&self, text: &str, f: &mut dyn FnMut(&str)) {
        thread_local! {
            static BUF: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
        }
        // A buffer for words that need lower-casing, reused across calls (a nested call just
        // finds it taken and starts its own).
        let mut buf = BUF.take();
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b.is_ascii_alphanumeric() {
                // The common case: an ASCII word, scanned byte by byte.
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                if i < bytes.len() && bytes[i] >= 0x80 {
                    i = self.unicode_word(text, start, &mut buf, f);
                } else {
                    self.latin_word(&text[start..i], &mut buf, f);
                }
            } else if b < 0x80 {
                i += 1;
            } else {
                i = self.unicode_word(text, i, &mut buf, f);
            }
        }
        BUF.set(buf);
    }

    /// The word of letters and digits (any script) starting at byte `start`; returns where it
    /// ends. A character that is no letter or digit is skipped.
    fn unicode_word(&self, text: &str, start: usize, buf: &mut String, f: &mut dyn FnMut(&str)) -> usize {
        let end = text[start..].find(|c: char| !c.is_alphanumeric()).map_or(text.len(), |e| start + e);
        if end == start {
            return start + text[start..].chars().next().map_or(1, char::len_utf8);
        }
        let mut rest = &text[start..end];
        while let Some(first) = rest.chars().next() {
            let cjk = is_cjk(first);
            let cut = rest.find(|c: char| is_cjk(c) != cjk).unwrap_or(rest.len());
            let (seg, tail) = rest.split_at(cut);
            if cjk {
                self.chinese_terms(seg, f);
            } else {
                self.latin_word(seg, buf, f);
            }
            rest = tail;
        }
        end
    }

    /// A word of one script: its camelCase parts (if it has humps), then the whole word.
    fn latin_word(&self, word: &str, buf: &mut String, f: &mut dyn FnMut(&str)) {
        if has_hump(word) {
            for_each_camel_part(word, &mut |p| {
                if p.len() < word.len() {
                    self.latin_term(p, buf, f);
                }
            });
        }
        self.latin_term(word, buf, f);
    }

    fn latin_term(&self, word: &str, buf: &mut String, f: &mut dyn FnMut(&str)) {
        // Fast path: a lower-case ASCII word needs no copy unless `ies` becomes `y`.
        if word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
            if !self.english {
                return f(word);
            }
            if is_stop_word(word) {
                return;
            }
            let folded = fold_plural(word);
            let ies = folded.len() + 3 == word.len() && word.ends_with("ies");
            let stems = self.stem && has_inflection(folded);
            if !ies && !stems {
                return f(folded);
            }
        }
        buf.clear();
        if word.is_ascii() {
            buf.push_str(word);
            buf.make_ascii_lowercase();
        } else {
            buf.extend(word.chars().flat_map(char::to_lowercase));
        }
        if self.english {
            if is_stop_word(buf) {
                return;
            }
            let folded = fold_plural(buf).len();
            let ies = folded + 3 == buf.len() && buf.ends_with("ies");
            buf.truncate(folded);
            if ies {
                buf.push('y');
            }
            if self.stem {
                stem(buf);
            }
        }
        f(buf);
    }

    fn chinese_terms(&self, seg: &str, f: &mut dyn FnMut(&str)) {
        match self.chinese {
            Chinese::Bigrams => bigrams(seg, f),
            #[cfg(feature = "jieba")]
            Chinese::Jieba => {
                for w in jieba().cut_for_search(seg, true) {
                    f(w.word);
                }
            }
        }
    }
}

/// Whether a word may have a camelCase boundary inside: an upper-case letter after its first
/// character (a cheap test before splitting, since most words have none).
fn has_hump(word: &str) -> bool {
    let mut prev_upper_or_lower = None;
    for c in word.chars() {
        if c.is_uppercase() {
            if prev_upper_or_lower.is_some() {
                return true;
            }
            prev_upper_or_lower = Some(true);
        } else {
            prev_upper_or_lower = prev_upper_or_lower.or(Some(false));
        }
    }
    false
}

/// English stop words (a `match`, which compiles to a length switch and a few compares).
pub(crate) fn is_stop_word(word: &str) -> bool {
    matches!(
        word,
        "a" | "an"
            | "and"
            | "any"
            | "are"
            | "as"
            | "at"
            | "be"
            | "by"
            | "can"
            | "could"
            | "do"
            | "does"
            | "during"
            | "for"
            | "from"
            | "have"
            | "how"
            | "i"
            | "if"
            | "in"
            | "into"
            | "is"
            | "it"
            | "its"
            | "me"
            | "my"
            | "of"
            | "on"
            | "or"
            | "our"
            | "please"
            | "should"
            | "so"
            | "some"
            | "that"
            | "the"
            | "their"
            | "them"
            | "then"
            | "there"
            | "these"
            | "this"
            | "those"
            | "to"
            | "us"
            | "was"
            | "we"
            | "what"
            | "when"
            | "where"
            | "which"
            | "who"
            | "will"
            | "with"
            | "would"
            | "you"
            | "your"
            // More determiners and indefinite pronouns beside `any`, `some` and `this`:
            // closed-class words, which say what a request quantifies, never what a tool does
            // (`all` stays a word: tools are named `get_all_…`).
            | "every"
            | "each"
            | "both"
            | "either"
            | "neither"
            | "anything"
            | "everything"
            | "something"
            | "nothing"
            | "anyone"
            | "everyone"
            | "someone"
            | "anybody"
            | "everybody"
            | "somebody"
            | "nobody"
            | "whatever"
            | "whichever"
            | "whoever"
            // The rest of the auxiliary verbs beside `be`, `is`, `are`, `was`, `do`, `does`,
            // `have`, `can`, `could`, `should`, `will` and `would`.
            | "am"
            | "were"
            | "been"
            | "being"
            | "did"
            | "done"
            | "doing"
            | "has"
            | "had"
            | "having"
            | "might"
            | "must"
            | "shall"
    )
}

/// Calls `f` with each camelCase part of a word that has no separators (`npmDeps` → `npm`,
/// `Deps`; `getUserID` → `get`, `User`, `ID`). A word without humps is one part, itself.
fn for_each_camel_part(word: &str, f: &mut dyn FnMut(&str)) {
    let mut start = 0;
    let mut prev: Option<char> = None;
    let mut iter = word.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        if let Some(p) = prev
            && c.is_uppercase()
        {
            let next_lower = iter.peek().is_some_and(|&(_, n)| n.is_lowercase());
            if (p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next_lower)) && i > start {
                f(&word[start..i]);
                start = i;
            }
        }
        prev = Some(c);
    }
    if start < word.len() {
        f(&word[start..]);
    }
}

fn bigrams(seg: &str, f: &mut dyn FnMut(&str)) {
    // Start offsets of the previous character and of the current one; each new character
    // closes the bigram that began one character earlier.
    let mut starts = seg.char_indices().map(|(i, _)| i).chain(std::iter::once(seg.len()));
    let Some(mut a) = starts.next() else { return };
    let Some(mut b) = starts.next() else { return };
    let Some(mut c) = starts.next() else {
        return f(seg);
    };
    loop {
        f(&seg[a..c]);
        (a, b) = (b, c);
        match starts.next() {
            Some(next) => c = next,
            None => return,
        }
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
        check(
            &Analyzer::new(Chinese::Bigrams),
            "movies Movies movie cookies pies cities series species",
            expect!["movie movie movie cookie pie city series species"],
        );
        check(&Analyzer::plain(), "List the Issues", expect!["list the issues"]);
    }

    #[test]
    fn stemming_folds_ing_and_ed() {
        check(
            &Analyzer::stemming(Chinese::Bigrams),
            "getting creating listed copied resized making writing based Running",
            expect!["get create list copy resize make write base run"],
        );
        check(
            &Analyzer::stemming(Chinese::Bigrams),
            "need embed string thing speed installing processing drawing",
            expect!["need embed string thing speed install process draw"],
        );
        check(&Analyzer::new(Chinese::Bigrams), "getting listed", expect!["getting listed"]);
    }

    #[test]
    fn stop_words_are_words_of_no_content() {
        assert!(is_stop_word("the") && is_stop_word("please") && is_stop_word("your"));
        assert!(!is_stop_word("file") && !is_stop_word("") && !is_stop_word("they"));
    }

    #[test]
    fn chinese_becomes_bigrams() {
        check(&Analyzer::default(), "查询12306余票信息", expect!["查询 12306 余票 票信 信息"]);
        check(&Analyzer::default(), "火车 票", expect!["火车 票"]);
        check(&Analyzer::default(), "用GitHub创建issue", expect!["用 git hub github 创建 issue"]);
    }
}
