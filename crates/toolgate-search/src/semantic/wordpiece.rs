//! The BERT uncased tokenizer of all-MiniLM-L6-v2, written out: clean, split, WordPiece.
//!
//! Basic tokenisation follows BERT's `BasicTokenizer` with `do_lower_case`: control characters
//! dropped, every Han character its own word, lower-case, accents stripped (Latin-1 and Latin
//! Extended-A letters; others are kept as they are), white space and punctuation split. Each
//! word is then cut greedily, longest match first, into vocabulary pieces, the later ones with
//! the `##` continuation prefix; a word that cannot be cut entirely, or is longer than 100
//! characters, becomes the one `[UNK]` token.

use std::cell::Cell;

use rustc_hash::FxHashMap;

/// Words longer than this many characters become `[UNK]` (BERT's `max_input_chars_per_word`).
const MAX_WORD_CHARS: usize = 100;

/// The buffers of [`WordPiece::each_word`] (a word, its ids, a piece being looked up), kept
/// from call to call: a request's words would otherwise cost a few allocations each.
#[derive(Debug, Default)]
struct Scratch {
    word: String,
    ids: Vec<u32>,
    key: String,
}

thread_local! {
    /// The [`Scratch`] of this thread's [`WordPiece::each_word`] (a nested call finds it taken
    /// and starts its own).
    static SCRATCH: Cell<Scratch> = Cell::new(Scratch::default());
}

/// A WordPiece vocabulary: token text to id.
#[derive(Debug, Clone)]
pub(crate) struct WordPiece {
    ids: FxHashMap<String, u32>,
    /// The id of `[UNK]`.
    unk: u32,
}

/// One basic word and whether WordPiece could cut it without `[UNK]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WordKind {
    /// A Han character (BERT splits them one by one; MiniLM knows them poorly).
    Cjk,
    /// A punctuation mark.
    Punctuation,
    /// Any other word.
    Other,
}

impl WordPiece {
    /// A vocabulary from tokens in id order; `None` if it has no `[UNK]`.
    pub(crate) fn new<'a>(tokens: impl Iterator<Item = &'a str>) -> Option<WordPiece> {
        let ids: FxHashMap<String, u32> = tokens.enumerate().map(|(i, t)| (t.to_owned(), i as u32)).collect();
        let unk = *ids.get("[UNK]")?;
        Some(WordPiece { ids, unk })
    }

    /// The id of `[UNK]`.
    pub(crate) fn unk(&self) -> u32 {
        self.unk
    }

    /// Appends the token ids of `text` to `out`.
    pub(crate) fn encode(&self, text: &str, out: &mut Vec<u32>) {
        self.each_word(text, &mut |_, _, ids| out.extend_from_slice(ids));
    }

    /// Calls `f` with every basic word's kind, its lower-case form and its token ids (one
    /// `[UNK]` for an unknown word).
    pub(crate) fn each_word(&self, text: &str, f: &mut dyn FnMut(WordKind, &str, &[u32])) {
        let mut scratch = SCRATCH.take();
        let Scratch { word, ids, key } = &mut scratch;
        word.clear();
        let mut flush = |word: &mut String, kind: WordKind, ids: &mut Vec<u32>| {
            if !word.is_empty() {
                ids.clear();
                self.pieces(word, ids, key);
                f(kind, word, ids);
                word.clear();
            }
        };
        for c in text.chars() {
            // Most of a request is ASCII: its letters need no Unicode case tables or accents.
            if c.is_ascii_alphanumeric() {
                word.push(c.to_ascii_lowercase());
                continue;
            }
            if c == '\0' || c == '\u{fffd}' || (c.is_control() && !c.is_whitespace()) {
                continue;
            }
            if c.is_whitespace() {
                flush(word, WordKind::Other, ids);
            } else if is_cjk(c) || is_punctuation(c) {
                flush(word, WordKind::Other, ids);
                word.push(c);
                let kind = if is_cjk(c) { WordKind::Cjk } else { WordKind::Punctuation };
                flush(word, kind, ids);
            } else {
                for l in c.to_lowercase() {
                    word.push(strip_accent(l));
                }
            }
        }
        flush(word, WordKind::Other, ids);
        SCRATCH.set(scratch);
    }

    /// Greedy longest-match-first WordPiece of one basic word; `key` is room for the pieces
    /// looked up.
    fn pieces(&self, word: &str, out: &mut Vec<u32>, key: &mut String) {
        if word.len() > MAX_WORD_CHARS && word.chars().count() > MAX_WORD_CHARS {
            out.push(self.unk);
            return;
        }
        // Most words are whole vocabulary entries.
        if let Some(&id) = self.ids.get(word) {
            out.push(id);
            return;
        }
        let start_len = out.len();
        let mut start = 0;
        while start < word.len() {
            let rest = &word[start..];
            // Try the longest remaining prefix first, shrinking one character at a time.
            let mut end = rest.len();
            let found = loop {
                key.clear();
                if start > 0 {
                    key.push_str("##");
                }
                key.push_str(&rest[..end]);
                if let Some(&id) = self.ids.get(key.as_str()) {
                    break Some(id);
                }
                match rest[..end].char_indices().next_back() {
                    Some((i, _)) if i > 0 => end = i,
                    _ => break None,
                }
            };
            match found {
                Some(id) => {
                    out.push(id);
                    start += end;
                }
                None => {
                    out.truncate(start_len);
                    out.push(self.unk);
                    return;
                }
            }
        }
    }
}

/// Han characters as BERT's `_is_chinese_char` sees them (CJK ideographs and their extensions).
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2CEAF
        | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// ASCII punctuation and symbols (BERT treats all of them as punctuation) and the common
/// Unicode punctuation blocks (general, CJK, full-width, Latin-1).
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(c as u32,
            0x2010..=0x2027 | 0x2030..=0x205E | 0x3001..=0x3003 | 0x3008..=0x3011 | 0x3014..=0x301F
            | 0xFF01..=0xFF0F | 0xFF1A..=0xFF20 | 0xFF3B..=0xFF40 | 0xFF5B..=0xFF65)
        || matches!(c, '¡' | '§' | '«' | '¶' | '·' | '»' | '¿')
}

/// The base letter of a lower-case accented Latin-1 or Latin Extended-A letter, as BERT's NFD
/// and mark removal give it (letters without a decomposition, such as `ø` and `ł`, stay).
fn strip_accent(c: char) -> char {
    const LATIN1: &str = "aaaaaaæceeeeiiiiðnooooo÷øuuuuyþy";
    match c as u32 {
        0xE0..=0xFF => LATIN1.chars().nth((c as u32 - 0xE0) as usize).unwrap_or(c),
        0x100..=0x17F => {
            const BASE: &str = "aaaaaaccccccccddđđeeeeeeeeeegggggggghhħħiiiiiiiiiıĳĳjjkkĸllllllŀŀłłnnnnnnŉŋŋooooooœœrrrrrrssssssssttttŧŧuuuuuuuuuuuuwwyyyzzzzzzſ";
            BASE.chars().nth((c as u32 - 0x100) as usize).unwrap_or(c)
        }
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> WordPiece {
        let tokens = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "run", "##ning", "git", "##hub",
            ",", "!", "_", "log", "cafe", "中",
        ];
        WordPiece::new(tokens.iter().copied()).unwrap()
    }

    fn encode(text: &str) -> Vec<u32> {
        let mut v = Vec::new();
        vocab().encode(text, &mut v);
        v
    }

    #[test]
    fn continuation_pieces_take_the_longest_match_first() {
        assert_eq!(encode("unaffable"), vec![4, 5, 6]);
        assert_eq!(encode("Running GitHub"), vec![7, 8, 9, 10]);
    }

    #[test]
    fn a_word_that_cannot_be_cut_is_one_unknown_token() {
        // `unx` has a known prefix but no `##x`: the whole word is [UNK], not `un [UNK]`.
        assert_eq!(encode("unx run"), vec![1, 7]);
        assert_eq!(encode(&"a".repeat(101)), vec![1]);
    }

    #[test]
    fn punctuation_and_han_characters_are_words_of_their_own() {
        assert_eq!(encode("git_log, run!"), vec![9, 13, 14, 11, 7, 12]);
        assert_eq!(encode("run中run"), vec![7, 16, 7]);
        let mut kinds = Vec::new();
        vocab().each_word("中 run", &mut |k, _, _| kinds.push(k));
        assert_eq!(kinds, vec![WordKind::Cjk, WordKind::Other]);
    }

    #[test]
    fn accents_are_stripped_and_control_characters_dropped() {
        assert_eq!(encode("CAFÉ\u{7}"), vec![15]);
        assert_eq!(strip_accent('ń'), 'n');
        assert_eq!(strip_accent('ž'), 'z');
    }

    #[test]
    fn a_vocabulary_without_unk_is_refused() {
        assert!(WordPiece::new(["a", "b"].iter().copied()).is_none());
    }
}
