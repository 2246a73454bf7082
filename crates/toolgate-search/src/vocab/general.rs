//! The general layer of the vocabularies: words generated from public dictionaries by
//! `scripts/vocab/` (WordNet 3.0's synonyms in `wordnet.tsv`; the same format takes a Chinese →
//! English dictionary), read leniently and laid under the hand-written entries.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::{Phrase, Vocabulary, content_lines, normal_analyzer};

/// `vocab/wordnet.tsv`: each English word and its synonyms in its most frequent senses.
const WORDNET: &str = include_str!("wordnet.tsv");

/// An English alternative of a general resource with more terms than this is a definition,
/// not a word: it is skipped.
const GENERAL_MAX_TERMS: usize = 3;

/// The general resources, parsed: what a word maps to, in the analyzer's normal form.
#[derive(Debug, Default)]
pub(crate) struct General {
    zh: FxHashMap<String, Vec<Phrase>>,
    synonyms: FxHashMap<String, Vec<String>>,
}

/// Parses the general resources: `key<TAB>value, value, …` lines. Their words are brought to
/// the analyzer's normal form; a value that has none (a stop word, a definition of many
/// words) or that is its key is skipped, and so is a line left without values.
pub(crate) fn parse_general(wordnet: &str, cedict: &str) -> General {
    let analyzer = normal_analyzer();
    let lines = |text| content_lines(text).filter_map(|(_, l)| l.split_once('\t'));
    let mut general = General::default();
    for (key, english) in lines(cedict) {
        if key.is_empty() || !key.chars().all(crate::text::is_cjk) {
            continue;
        }
        let mut phrases: Vec<Phrase> = Vec::new();
        for alt in english.split(',') {
            let mut words = Vec::new();
            analyzer.tokens(alt, &mut words);
            if (1..=GENERAL_MAX_TERMS).contains(&words.len()) && !phrases.contains(&words) {
                phrases.push(words);
            }
        }
        if !phrases.is_empty() {
            general.zh.entry(key.to_owned()).or_default().extend(phrases);
        }
    }
    for (key, others) in lines(wordnet) {
        let Some(key) = analyzer.normal_form(key.trim()) else { continue };
        let mut words: Vec<String> = Vec::new();
        for other in others.split(',').filter_map(|o| analyzer.normal_form(o.trim())) {
            if other != key && !words.contains(&other) {
                words.push(other);
            }
        }
        if !words.is_empty() {
            general.synonyms.entry(key).or_default().extend(words);
        }
    }
    general
}

/// The compiled-in general resources (parsed on first use).
pub(super) fn general() -> &'static General {
    static GENERAL: OnceLock<General> = OnceLock::new();
    // CC-CEDICT (`scripts/vocab/cedict.mjs`) is not compiled in: measured, it lifted one
    // Chinese set and cost the other, and a closing sentence in Chinese ("请确保每个结论都有
    // 数据支持") became tool words through it (docs/ranking.md).
    GENERAL.get_or_init(|| parse_general(WORDNET, ""))
}

impl Vocabulary {
    /// The hand-written entries with what the general resources add. A Chinese word written
    /// by hand keeps its hand-written translations only; the dictionary gives the others (but
    /// never a stop word: `一下` is in it, and says nothing of a tool). WordNet's synonyms are
    /// kept apart, for words no tool has ([`Vocabulary::unsaid_synonyms`]).
    pub(crate) fn with_general(mut self, general: &General) -> Vocabulary {
        for (key, phrases) in &general.zh {
            if !self.zh_stop.contains_key(key.as_str()) && !self.zh.contains_key(key) {
                self.zh.insert(key.clone(), phrases.clone());
            }
        }
        self.unsaid_synonyms = general.synonyms.clone();
        self.index_words();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::parse;

    #[test]
    fn the_general_resources_are_read_whole() {
        let g = parse_general(WORDNET, "");
        assert!(g.synonyms.len() > 3_000, "{} English words", g.synonyms.len());
        assert!(g.synonyms["car"].contains(&"automobile".to_owned()), "{:?}", g.synonyms["car"]);
    }

    #[test]
    fn general_entries_that_do_not_fit_are_skipped() {
        let g = parse_general(
            "car\tauto, the, car\nno tab here\ncars\tautomobiles\n",
            "天气\tweather, a definition far too long to be one\nabc\tx\n地图\tthe\n",
        );
        // `cars` meets `car` in normal form: its line adds to the same word.
        assert_eq!(g.synonyms["car"], ["auto", "automobile"]);
        assert_eq!(g.synonyms.len(), 1);
        assert_eq!(g.zh["天气"], [vec!["weather".to_owned()]]);
        assert_eq!(g.zh.len(), 1, "{:?}", g.zh);
    }

    #[test]
    fn a_hand_written_chinese_word_replaces_the_dictionarys() {
        let general = parse_general("search\tseek\n", "文件\tdocument, file\n天气\tweather\n一下\tbit\n");
        let v = parse("文件\tfile\n", "find, search\n", "", "").unwrap().with_general(&general);
        assert_eq!(v.zh["文件"], [vec!["file".to_owned()]]);
        assert_eq!(v.zh["天气"], [vec!["weather".to_owned()]]);
        // A stop word stays one, whatever the dictionary says.
        assert!(!v.zh.contains_key("一下"));
        // WordNet's synonyms are kept apart, for words no tool has.
        assert_eq!(v.synonyms["search"], ["find"]);
        assert_eq!(v.unsaid_synonyms["search"], ["seek"]);
        assert_eq!(v.en_zh["weather"], ["天气"]);
    }
}
