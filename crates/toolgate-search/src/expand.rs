//! Query understanding for the `lexical` strategy: a query becomes groups of weighted
//! alternatives, one group per concept.
//!
//! - An English word gives its term (stemmed like the index) and, at a lower weight, the
//!   other words of its synonym group (`fetch` → `get`, `retrieve`), the kinds it is of
//!   (`villa` → `house`) and the fields it belongs to (`bitcoin` → `finance`); these two weigh
//!   more when no tool has the word itself. An expansion to a word the request says itself is
//!   left out, so that the word counts once.
//! - A run of Chinese characters is split by longest match over the bilingual vocabulary and
//!   the Chinese stop words. What is left between stop words becomes character bigrams, as in
//!   the index (they meet Chinese descriptions); each vocabulary word also gives its English
//!   words at a lower weight (they meet English descriptions): `仓库` → `repository`, `repo`.
//!   The kinds and fields of those English words come too, in English and in Chinese, at the
//!   weight of a kind or field: `欧元` → `euro` → `currency`, `货币`.
//!
//! The scorer gives a tool, for each group, the best of the group's alternatives.

use super::bm25f::{Alternative, Bm25Index};
use super::text::is_cjk;
use super::vocab::{Phrase, Piece};

/// How an alternative came from the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The query's own word.
    Direct,
    /// The bilingual vocabulary.
    Vocabulary,
    /// An English synonym.
    Synonym,
    /// The bilingual vocabulary read backwards: an English word's Chinese words.
    Reverse,
    /// A kind the word is of (`villa` is a kind of `house`), from `vocab/kinds.tsv`.
    Kind,
    /// A field the word belongs to (`bitcoin` is about `finance`), from `vocab/topics.tsv`.
    Topic,
}

impl Via {
    /// The name used in explanations.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Direct => "direct",
            Via::Vocabulary => "vocabulary",
            Via::Synonym => "synonym",
            Via::Reverse => "vocabulary (reverse)",
            Via::Kind => "kind",
            Via::Topic => "topic",
        }
    }
}

/// The weights of expansions, relative to a direct match (1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Expansion {
    /// Weight of the English words a Chinese vocabulary word gives.
    pub vocabulary: f32,
    /// Weight of an English word's synonyms.
    pub synonym: f32,
    /// Weight of the Chinese words the vocabulary gives for an English word (0 turns it off).
    pub reverse: f32,
    /// Weight of the kinds an English word is of (`villa` → `house`; 0 turns it off).
    pub kind: f32,
    /// Weight of the fields an English word belongs to (`bitcoin` → `finance`; 0 turns it off).
    pub topic: f32,
    /// Weight of a query word made of digits only (`35.6895`, `2024`), relative to other
    /// direct words: requests carry numbers as arguments, and tool schemas carry them as
    /// example values, so a full-weight number mostly finds the wrong tool.
    pub number: f32,
    /// Weight of the kinds and fields of a word no tool has (`bitcoin` in a catalog that says
    /// `cryptocurrencies`), in place of [`kind`](Expansion::kind) and
    /// [`topic`](Expansion::topic): they are all the word can say, and they drown no direct match.
    pub unsaid: f32,
    /// Weight of the ranking of a conversation's latest request, added to the whole one's
    /// (0 turns it off; see `turns`).
    pub latest: f32,
    /// Weight of the words of a line's label ("Task description:", "背景："; see `label`):
    /// what a line is, not what it asks for (0 leaves them out).
    pub label: f32,
    /// Whether the needs a task's shape says (a file to write, an address to fetch) get room
    /// near the top of the ranking (see `intent`).
    pub needs: bool,
}

/// The default [`Expansion::kind`]: off. A word's kinds (`villa` → `house`) were kept while
/// they lifted metatool; after the fitted entries went, leaving one set out (`examples/
/// ablation.rs`, `docs/ranking.md`) found them helping only livemcpbench's `tune` part (0.008)
/// and costing three `check` parts 0.001 each. The kinds of a word no tool has still count
/// ([`Expansion::unsaid`]).
const KIND_WEIGHT: f32 = 0.0;

/// A kind in more than this share of the tools is not looked for: on the development
/// sets no kind is that common (0.05 would start to cost), but in a large catalog of one domain
/// the general word is everywhere. In a catalog of a handful of tools this rules expansions
/// out, which costs little: such a catalog is shown whole anyway.
const KIND_MAX_SHARE: f32 = 0.1;

/// A field in more than this share of the tools is not looked for. Fields are broad, so their
/// posting lists are long: at 0.1 they cost the 10,000-tool query about 10 µs; at 0.05 about
/// half that, ranking alike (0.03 starts to cost metatool).
const TOPIC_MAX_SHARE: f32 = 0.05;

/// A word in more than this share of the tools (one in 500) is not expanded to its fields:
/// its own matches say more than a field can. On the development sets this ranks as well as
/// expanding every word (metatool 0.708 either way, acebench-en R@5 0.974 → 0.977,
/// livemcpbench nDCG@10 0.559 → 0.561, R@5 0.617 → 0.611), and it keeps the long posting
/// lists of fields out of most queries of a large catalog.
const TOPIC_WORD_MAX_SHARE: f32 = 0.002;

/// The default [`Expansion::topic`]: on the development sets 0.3 to 0.7 lift metatool R@5 by
/// 0.03 to 0.06 and acebench-en a little; 1.0 costs acebench-en 0.03 and livemcpbench 0.02
/// (`docs/ranking.md`). A field is a weaker hint than a kind, but a far more common one.
const TOPIC_WEIGHT: f32 = 0.6;

/// The default [`Expansion::number`]: on the development sets 0.25 lifts nDCG@10 by 0.001 to
/// 0.007 on every set with numbers in its requests (0 and 0.5 score alike); one livemcpbench task
/// loses a chart tool that its amounts had found by accident.
const NUMBER_WEIGHT: f32 = 0.25;

/// The default [`Expansion::latest`]: the weight of the latest request's score against the
/// whole request's (each divided by its best). Chosen on ACEBench's development tasks, the only
/// sets with multi-line requests.
const LATEST_WEIGHT: f32 = 0.5;

/// The default [`Expansion::unsaid`]: on the development sets 0.7 to 1.0 (and the ordinary
/// weights × 1.6) rank alike; against the ordinary weights they lift metatool R@5 by 0.01,
/// nDCG@10 by 0.01 and livemcpbench nDCG@10 by 0.006, and cost one acebench-en request a place.
const UNSAID_WEIGHT: f32 = 0.9;

impl Default for Expansion {
    fn default() -> Expansion {
        Expansion {
            vocabulary: 0.8,
            synonym: 0.6,
            reverse: 0.0,
            kind: KIND_WEIGHT,
            topic: TOPIC_WEIGHT,
            number: NUMBER_WEIGHT,
            unsaid: UNSAID_WEIGHT,
            latest: LATEST_WEIGHT,
            label: LABEL_WEIGHT,
            needs: true,
        }
    }
}

/// The default [`Expansion::label`].
const LABEL_WEIGHT: f32 = 0.25;

/// The general words of a Chinese word's translations ([`Builder::broader`]), each with how it
/// was found ([`Via::Kind`] or [`Via::Topic`]).
struct Broader<'a> {
    /// In English, for English descriptions.
    english: Vec<(&'a str, Via)>,
    /// Their Chinese words, as the index's bigrams, for Chinese descriptions.
    chinese: Vec<(Vec<String>, Via)>,
}

/// One alternative with where it came from, for explanations.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Source {
    /// The query text it stands for (a word, a Chinese vocabulary word).
    pub(crate) from: String,
    /// The terms, as text, in the order of [`Alternative::terms`].
    pub(crate) terms: Vec<String>,
    pub(crate) via: Via,
}

/// A query turned into groups.
#[derive(Debug, Default)]
pub(crate) struct Expanded {
    pub(crate) groups: Vec<Vec<Alternative>>,
    /// Parallel to `groups`: where each alternative came from. Filled only by
    /// [`expand_explained`]; [`expand`] leaves it empty.
    pub(crate) sources: Vec<Vec<Source>>,
    /// Query words none of whose terms or expansions any tool has.
    pub(crate) unmatched: Vec<String>,
}

/// The terms of one alternative, as text, borrowed from wherever they are.
#[derive(Debug, Clone, Copy)]
enum Terms<'t> {
    One(&'t str),
    Owned(&'t [String]),
    Borrowed(&'t [&'t str]),
}

impl<'t> Terms<'t> {
    fn iter(self) -> impl Iterator<Item = &'t str> {
        let (one, owned, borrowed): (Option<&'t str>, &'t [String], &'t [&'t str]) = match self {
            Terms::One(t) => (Some(t), &[], &[]),
            Terms::Owned(ts) => (None, ts, &[]),
            Terms::Borrowed(ts) => (None, &[], ts),
        };
        one.into_iter().chain(owned.iter().map(String::as_str)).chain(borrowed.iter().copied())
    }
}

struct Builder<'a> {
    index: &'a Bm25Index,
    weights: Expansion,
    /// Whether to fill [`Expanded::sources`] (only explanations need them).
    explain: bool,
    out: Expanded,
    /// Terms already used directly (an expansion never pays for them twice).
    direct: Vec<u32>,
    /// Terms already used by some expansion.
    expanded: Vec<u32>,
    /// Whether the current word gave any term at all (a lone stop word gives none).
    produced: bool,
    /// The terms of every English word of the request: an expansion to one of them would count
    /// the word twice (`taco` → `cuisine` in "a taco … my cuisine tastes").
    said: Vec<u32>,
    /// What the current word's alternatives are multiplied by (less than 1 in a label).
    scale: f32,
}

impl<'a> Builder<'a> {
    /// Adds one group: the direct terms (if any) and expansions. Returns whether any matched,
    /// here or earlier in the request (a word said twice counts once, but it is not unmatched).
    fn group<'t>(
        &mut self,
        direct: Option<(&str, Terms<'_>)>,
        expansions: impl IntoIterator<Item = (&'t str, Terms<'t>, Via)>,
    ) -> bool {
        let mut alts = Vec::new();
        let mut sources = Vec::new();
        let mut known = false;
        // A word of the request that no tool has (not a Chinese word's bigrams: some of those
        // straddle words and are missing for that reason alone).
        let unknown = matches!(direct, Some((_, Terms::One(t))) if self.index.term(t).is_none());
        if let Some((from, terms)) = direct {
            let mut ids = Vec::new();
            let mut kept = Vec::new();
            for t in terms.iter() {
                let Some(id) = self.index.term(t) else { continue };
                known = true;
                if !self.direct.contains(&id) {
                    self.direct.push(id);
                    ids.push(id);
                    if self.explain {
                        kept.push(t.to_owned());
                    }
                }
            }
            if !ids.is_empty() {
                // A number is an argument (a coordinate, an amount, a date), not what the tool is
                // for; matched at full weight it finds example values in schema descriptions.
                let numeric = terms.iter().all(|t| t.bytes().all(|b| b.is_ascii_digit()));
                let weight = if numeric { self.weights.number } else { 1.0 };
                alts.push(Alternative { terms: ids, weight });
                if self.explain {
                    sources.push(Source { from: from.to_owned(), terms: kept, via: Via::Direct });
                }
            }
        }
        // An expansion's terms are looked up here first: most expansions are left out.
        let mut ids = Vec::new();
        for (from, terms, via) in expansions {
            ids.clear();
            ids.extend(terms.iter().filter_map(|t| self.index.term(t)));
            let taken =
                |i: &u32| self.direct.contains(i) || self.expanded.contains(i) || self.said.contains(i);
            if ids.is_empty() || ids.iter().any(taken) {
                continue;
            }
            // A kind most tools share (`product` in a shop's catalog) says little and costs a
            // long posting list.
            let max_share = match via {
                Via::Kind => KIND_MAX_SHARE,
                Via::Topic => TOPIC_MAX_SHARE,
                _ => 1.0,
            };
            if ids.iter().any(|&i| self.index.share(i) > max_share) {
                continue;
            }
            let unsaid = unknown && self.weights.unsaid > 0.0;
            let weight = match via {
                Via::Direct => 1.0,
                Via::Vocabulary => self.weights.vocabulary,
                Via::Synonym => self.weights.synonym,
                Via::Reverse => self.weights.reverse,
                Via::Kind | Via::Topic if unsaid => self.weights.unsaid,
                Via::Kind => self.weights.kind,
                Via::Topic => self.weights.topic,
            };
            if weight <= 0.0 {
                continue;
            }
            alts.push(Alternative { terms: ids.clone(), weight });
            if self.explain {
                let kept = terms.iter().filter(|t| self.index.term(t).is_some()).map(str::to_owned).collect();
                sources.push(Source { from: from.to_owned(), terms: kept, via });
            }
        }
        for a in alts.iter().filter(|a| a.weight < 1.0) {
            self.expanded.extend(&a.terms);
        }
        let any = !alts.is_empty();
        if any {
            for a in &mut alts {
                a.weight *= self.scale;
            }
            self.out.groups.push(alts);
            if self.explain {
                self.out.sources.push(sources);
            }
        }
        any || known
    }

    fn latin(&mut self, text: &str) -> bool {
        let index = self.index;
        let mut any = false;
        index.analyzer().each_term(text, &mut |t| {
            self.produced = true;
            if !is_request_word(t) {
                any |= self.latin_term(text, t);
            }
        });
        any
    }

    /// One term of a Latin-script word, with its synonyms (and Chinese words, if asked for).
    fn latin_term(&mut self, text: &str, t: &str) -> bool {
        let vocab = Bm25Index::vocabulary(self.index);
        let synonyms = vocab.synonyms.get(t).map_or(&[][..], Vec::as_slice);
        let unsaid = if self.index.term(t).is_none() { vocab.unsaid_synonyms.get(t) } else { None };
        let unsaid = unsaid.map_or(&[][..], Vec::as_slice);
        let kinds = vocab.kinds.get(t).map_or(&[][..], Vec::as_slice);
        let topics = vocab.topics.get(t).filter(|_| !self.common(t)).map_or(&[][..], Vec::as_slice);
        let expansions = synonyms
            .iter()
            .chain(unsaid.iter().filter(|o| !synonyms.contains(o)))
            .map(|o| (t, Terms::One(o), Via::Synonym))
            .chain(kinds.iter().map(|k| (t, Terms::One(k), Via::Kind)))
            .chain(topics.iter().map(|k| (t, Terms::One(k), Via::Topic)));
        // Chinese words for it, as the index has them (bigrams), for Chinese descriptions.
        let reverse = if self.weights.reverse > 0.0 { self.chinese_words(t) } else { Vec::new() };
        let reverse = reverse.iter().map(|b| (t, Terms::Owned(b), Via::Reverse));
        self.group(Some((text, Terms::One(t))), expansions.chain(reverse))
    }

    /// Whether the catalog's tools say `word` often enough (one in 500) that it speaks for
    /// itself: its fields are only looked for when hardly any tool has it.
    fn common(&self, word: &str) -> bool {
        self.index.term(word).is_some_and(|i| self.index.share(i) > TOPIC_WORD_MAX_SHARE)
    }

    /// The Chinese words the vocabulary gives `english` for, as the index has them (bigrams),
    /// for Chinese descriptions.
    fn chinese_words(&self, english: &str) -> Vec<Vec<String>> {
        let keys = Bm25Index::vocabulary(self.index).en_zh.get(english).map_or(&[][..], Vec::as_slice);
        keys.iter()
            .map(|key| {
                let mut bigrams = Vec::new();
                self.index.analyzer().tokens(key, &mut bigrams);
                bigrams
            })
            .collect()
    }

    /// The kinds and fields of a Chinese word's one-word English translations (`欧元` → `euro`
    /// → `currency`), in English for English descriptions and as the index's bigrams of their
    /// Chinese words (`货币`) for Chinese ones, each with how it was found. As for an English
    /// word, a translation many tools have is not expanded to its fields.
    fn broader(&self, phrases: &[Phrase]) -> Broader<'a> {
        let vocab = Bm25Index::vocabulary(self.index);
        let mut english: Vec<(&'a str, Via)> = Vec::new();
        let mut chinese = Vec::new();
        for phrase in phrases.iter().filter(|p| p.len() == 1) {
            let word = phrase[0].as_str();
            let kinds = vocab.kinds.get(word).map(|k| (k, Via::Kind));
            let topics = vocab.topics.get(word).filter(|_| !self.common(word)).map(|t| (t, Via::Topic));
            for (general, via) in kinds.into_iter().chain(topics) {
                for g in general {
                    if english.iter().any(|(e, _)| e == g) {
                        continue;
                    }
                    english.push((g.as_str(), via));
                    chinese.extend(self.chinese_words(g).into_iter().map(|bigrams| (bigrams, via)));
                }
            }
        }
        Broader { english, chinese }
    }

    fn chinese(&mut self, run: &str) -> bool {
        let vocab = Bm25Index::vocabulary(self.index);
        let mut pieces = Vec::new();
        vocab.segment(run, &mut |p| pieces.push(p));
        self.produced |= pieces.iter().any(|p| !matches!(p, Piece::Stop));
        let mut any = false;
        // Each stretch between stop words gives character bigrams, as the index has them. A
        // bigram inside a vocabulary word joins that word's group (with its English words);
        // the others (across words, or in uncovered characters) stand alone. A stretch is a
        // slice of `run`: its characters are (start, end, vocabulary word) in it.
        let mut stretch: Vec<(usize, usize, Option<usize>)> = Vec::new();
        let mut words: Vec<(&str, Vec<&str>)> = Vec::new();
        // Where a piece starts in `run` (the segmenter gives slices of it, and pieces between
        // two stop words are adjacent, so a bigram is a slice of `run` too).
        let offset = |piece: &str| piece.as_ptr() as usize - run.as_ptr() as usize;
        for p in pieces.iter().chain(std::iter::once(&Piece::Stop)) {
            match *p {
                Piece::Word(w) | Piece::Other(w) => {
                    let word = matches!(p, Piece::Word(_)).then_some(words.len());
                    let at = offset(w);
                    stretch.extend(w.char_indices().map(|(i, c)| (at + i, at + i + c.len_utf8(), word)));
                    if word.is_some() {
                        words.push((w, Vec::new()));
                    }
                }
                Piece::Stop => {
                    if let [(start, end, word)] = stretch[..] {
                        let gram = &run[start..end];
                        match word {
                            Some(i) => words[i].1.push(gram),
                            None => any |= self.group(Some((gram, Terms::One(gram))), []),
                        }
                    } else {
                        for pair in stretch.windows(2) {
                            let ((start, _, a), (_, end, b)) = (pair[0], pair[1]);
                            let gram = &run[start..end];
                            match a.filter(|_| a == b) {
                                Some(i) => words[i].1.push(gram),
                                None => any |= self.group(Some((gram, Terms::One(gram))), []),
                            }
                        }
                    }
                    stretch.clear();
                }
            }
        }
        for (w, grams) in &words {
            let phrases = &vocab.zh[*w];
            let broader = self.broader(phrases);
            let expansions = phrases
                .iter()
                .map(|phrase| (*w, Terms::Owned(phrase), Via::Vocabulary))
                .chain(broader.english.iter().map(|&(g, via)| (*w, Terms::One(g), via)))
                .chain(broader.chinese.iter().map(|(grams, via)| (*w, Terms::Owned(grams), *via)));
            let direct = (!grams.is_empty()).then_some((*w, Terms::Borrowed(grams)));
            any |= self.group(direct, expansions);
        }
        any
    }
}

/// Turns the free words of a query into groups over `index`'s terms: `words`, then the words
/// of its lines' `labels` (see `label`) at [`Expansion::label`].
pub(crate) fn expand(index: &Bm25Index, words: &[&str], labels: &[&str], weights: Expansion) -> Expanded {
    run(index, words, labels, weights, false)
}

/// [`expand`], with where each alternative came from ([`Expanded::sources`]), for explanations.
pub(crate) fn expand_explained(
    index: &Bm25Index,
    words: &[&str],
    labels: &[&str],
    weights: Expansion,
) -> Expanded {
    run(index, words, labels, weights, true)
}

fn run(index: &Bm25Index, words: &[&str], labels: &[&str], weights: Expansion, explain: bool) -> Expanded {
    let mut b = Builder {
        index,
        weights,
        explain,
        out: Expanded::default(),
        direct: Vec::new(),
        expanded: Vec::new(),
        produced: false,
        said: Vec::new(),
        scale: 1.0,
    };
    let labels = if weights.label > 0.0 { labels } else { &[] };
    for w in words.iter().chain(labels) {
        index.analyzer().each_term(w, &mut |t| {
            if let Some(id) = index.term(t).filter(|_| !is_request_word(t) && !t.chars().any(is_cjk)) {
                b.said.push(id);
            }
        });
    }
    // A label's words come last: a word the request also says outside it counts there, whole.
    let scaled = words.iter().map(|w| (w, 1.0)).chain(labels.iter().map(|w| (w, weights.label)));
    for (w, scale) in scaled {
        let mut any = false;
        b.produced = false;
        b.scale = scale;
        let mut rest = *w;
        while let Some(first) = rest.chars().next() {
            let cjk = is_cjk(first);
            let cut = rest.find(|c: char| is_cjk(c) != cjk).unwrap_or(rest.len());
            let (seg, tail) = rest.split_at(cut);
            any |= if cjk { b.chinese(seg) } else { b.latin(seg) };
            rest = tail;
        }
        if !any && b.produced {
            b.out.unmatched.push(w.to_lowercase());
        }
    }
    b.out
}

/// Words of English requests that say nothing of the tool wanted (`can you help me`, `I need`,
/// `I'd like`): dropped from queries only (a tool may well be about help or likes).
pub(crate) fn is_request_word(term: &str) -> bool {
    matches!(
        term,
        "help"
            | "need"
            | "want"
            | "like"
            | "know"
            | "tell"
            | "let"
            | "also"
            | "just"
            | "sure"
            | "yes"
            | "ok"
            | "thank"
            | "thanks"
            | "hi"
            | "hello"
            | "im"
            | "id"
            | "ll"
            | "ve"
            | "m"
            | "s"
            | "t"
            | "d"
    )
}
