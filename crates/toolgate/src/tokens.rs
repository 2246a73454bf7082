//! tokens: a real tokenizer for counting what definitions cost.
//!
//! OpenAI's `o200k_base` BPE, its vocabulary compiled into the crate (written by `build.rs`
//! from the one `tiktoken-rs` ships): nothing is downloaded. A text is split into pieces by the
//! vocabulary's pattern; a piece that is a token counts one, and any other is merged from its
//! bytes, the adjacent pair of lowest rank first, as `tiktoken` does. The counts are
//! `tiktoken`'s own (the tests compare them on every development catalog).
//!
//! The vocabulary is held once: each token's bytes in the compiled-in file (2.5 MB), found by
//! rank through a table of offsets and by bytes through a hash table of ranks (about 2 MB).
//! Loaded as `tiktoken-rs` loads it (three maps of the tokens, each an allocation of its own)
//! it took about 35 MB, which a gateway of 100,000 tools kept beside its catalog and index once
//! a client had listed its tools. Loading takes a few tens of milliseconds, on first use.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::OnceLock;

use hashbrown::HashTable;

use crate::catalog::Tool;

/// `o200k_base`'s ordinary tokens: for each, its rank (4 bytes, little-endian), its length (one
/// byte) and its bytes.
static VOCABULARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.bin"));

/// The pattern that splits a text into the pieces BPE merges within.
static PATTERN: &str = include_str!(concat!(env!("OUT_DIR"), "/o200k_base.pattern"));

/// A pair of parts that cannot merge: no token is their bytes.
const NO_RANK: u32 = u32::MAX;

/// Pieces this long or longer are merged with a heap of the candidate pairs instead of by
/// scanning every pair at each merge (as `tiktoken` does, at the same length): a piece of a
/// hostile definition may be megabytes of one letter.
const LONG_PIECE: usize = 100;

/// Counts tokens with `o200k_base`.
pub struct TokenCounter {
    /// Each token's rank, found by the hash of its bytes.
    ranks: HashTable<u32>,
    /// By rank: where the token's length and bytes are in [`VOCABULARY`] (`u32::MAX`: no such
    /// rank).
    at: Vec<u32>,
    pattern: fancy_regex::Regex,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenCounter(o200k_base)")
    }
}

impl TokenCounter {
    /// The tokenizer's name, as reported in `toolgate tokens --json`.
    pub const NAME: &'static str = "o200k_base";

    /// The shared counter (loaded on first use).
    pub fn get() -> &'static TokenCounter {
        static COUNTER: OnceLock<TokenCounter> = OnceLock::new();
        COUNTER.get_or_init(TokenCounter::load)
    }

    fn load() -> TokenCounter {
        let mut at = Vec::with_capacity(200_000);
        let mut offset = 0;
        while let [a, b, c, d, len, ..] = VOCABULARY[offset..] {
            let rank = u32::from_le_bytes([a, b, c, d]);
            let index = usize::try_from(rank).expect("a rank fits a usize");
            if at.len() <= index {
                at.resize(index + 1, u32::MAX);
            }
            at[index] = u32::try_from(offset + 4).expect("the vocabulary is under 4 GB");
            offset += 5 + usize::from(len);
        }
        let mut ranks = HashTable::with_capacity(200_000);
        let token = |rank: u32| token_at(at[rank as usize]);
        for (rank, &offset) in (0..).zip(&at) {
            if offset != u32::MAX {
                ranks.insert_unique(hash(token(rank)), rank, |&r| hash(token(r)));
            }
        }
        let pattern = fancy_regex::Regex::new(PATTERN).expect("o200k_base's pattern compiles");
        TokenCounter { ranks, at, pattern }
    }

    /// The bytes of the token of `rank` (a rank the vocabulary has).
    fn token(&self, rank: u32) -> &'static [u8] {
        token_at(self.at[rank as usize])
    }

    /// Tokens of `text` (special tokens are counted as plain text). Where the pattern gives up
    /// on a text (its backtracking limit, against a hostile run of whitespace), the rest of the
    /// text counts a token a byte: never fewer than it has.
    pub fn count(&self, text: &str) -> usize {
        let (mut tokens, mut done) = (0, 0);
        for piece in self.pattern.find_iter(text) {
            let Ok(piece) = piece else { return tokens + text.len() - done };
            done = piece.end();
            let bytes = piece.as_str().as_bytes();
            tokens += if self.rank(bytes) != NO_RANK { 1 } else { self.merged(bytes) };
        }
        tokens
    }

    /// Tokens of a tool definition as a model API receives it (`{"name", "description",
    /// "input_schema"}`, compact JSON).
    pub fn definition(&self, tool: &Tool) -> usize {
        self.count(&tool.definition_text())
    }

    /// The rank of the token `bytes` are, if any.
    fn rank(&self, bytes: &[u8]) -> u32 {
        self.ranks.find(hash(bytes), |&rank| self.token(rank) == bytes).copied().unwrap_or(NO_RANK)
    }

    /// How many tokens `piece` (two bytes or more, not itself a token) merges into.
    fn merged(&self, piece: &[u8]) -> usize {
        if piece.len() >= LONG_PIECE { self.merged_long(piece) } else { self.merged_short(piece) }
    }

    /// [`TokenCounter::merged`] by scanning: the parts' starts, each with the rank of its
    /// merge with the next part; the leftmost of the lowest rank merges, until none can.
    fn merged_short(&self, piece: &[u8]) -> usize {
        let mut parts: Vec<(usize, u32)> =
            (0..piece.len().saturating_sub(1)).map(|i| (i, self.rank(&piece[i..i + 2]))).collect();
        parts.push((piece.len().saturating_sub(1), NO_RANK));
        parts.push((piece.len(), NO_RANK));
        // The rank of part `i` merged with the next, once the part after it is gone.
        let rank_after = |parts: &[(usize, u32)], i: usize| {
            if i + 3 < parts.len() { self.rank(&piece[parts[i].0..parts[i + 3].0]) } else { NO_RANK }
        };
        loop {
            let mut best = (NO_RANK, usize::MAX);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < best.0 {
                    best = (rank, i);
                }
            }
            let (rank, i) = best;
            if rank == NO_RANK {
                break;
            }
            if i > 0 {
                parts[i - 1].1 = rank_after(&parts, i - 1);
            }
            parts[i].1 = rank_after(&parts, i);
            parts.remove(i + 1);
        }
        parts.len() - 1
    }

    /// [`TokenCounter::merged`] with a heap: the parts linked by their starts, the candidate
    /// merges in a heap by rank then start (so the leftmost of the lowest rank comes first, as
    /// in [`TokenCounter::merged_short`]); a candidate whose part changed since is skipped.
    fn merged_long(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut alive = vec![true; n];
        let mut rank_at = vec![NO_RANK; n];
        let mut heap = BinaryHeap::with_capacity(n);
        // The rank of part `start` merged with the next part.
        let pair = |next: &[usize], start: usize| match next[start] {
            end if end < n => self.rank(&piece[start..next[end]]),
            _ => NO_RANK,
        };
        for (start, rank) in rank_at.iter_mut().enumerate().take(n - 1) {
            *rank = pair(&next, start);
            if *rank != NO_RANK {
                heap.push(Reverse((*rank, start)));
            }
        }
        let mut parts = n;
        while let Some(Reverse((rank, start))) = heap.pop() {
            // A token's rank names its bytes: the same rank at the same start is the same pair.
            if !alive[start] || rank_at[start] != rank {
                continue;
            }
            let gone = next[start];
            alive[gone] = false;
            next[start] = next[gone];
            if next[gone] < n {
                prev[next[gone]] = start;
            }
            parts -= 1;
            for at in [start, prev[start]] {
                if at < n {
                    rank_at[at] = pair(&next, at);
                    if rank_at[at] != NO_RANK {
                        heap.push(Reverse((rank_at[at], at)));
                    }
                }
            }
        }
        parts
    }
}

/// The bytes of the token whose length is at `offset` of [`VOCABULARY`].
fn token_at(offset: u32) -> &'static [u8] {
    let offset = offset as usize;
    let len = usize::from(VOCABULARY[offset]);
    &VOCABULARY[offset + 1..offset + 1 + len]
}

/// The hash a token's bytes are found by. The table is the vocabulary's, fixed: a text cannot
/// choose what collides in it.
fn hash(bytes: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(bytes)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn counts_real_tokens() {
        let c = TokenCounter::get();
        assert_eq!(c.count(""), 0);
        assert_eq!(c.count("hello world"), 2);
        assert!(c.count("帮我查一下明天上海到北京的火车余票") > 5);
    }

    /// Texts that take every path: tokens whole, pieces merged short and long, runs of one
    /// byte, whitespace of every kind, digits, contractions, scripts and emoji.
    fn hard_texts() -> Vec<String> {
        let mut texts: Vec<String> = [
            "",
            " ",
            "\n\n\n",
            "  \t \r\n  x",
            "I'm sure they'll say it's fine; we've SEEN it, you'd KNOW.",
            "1234567890 3.14159 1,000,000",
            "naïve café résumé Straße ĳ",
            "帮我查一下明天上海到北京的火车余票，谢谢！",
            "日本語のテキストと한국어 텍스트",
            "emoji 🦀🔥👩‍👩‍👧‍👦 flags 🇫🇷",
            "{\"name\":\"fs__read_file\",\"input_schema\":{\"type\":\"object\"}}",
            "https://example.com/a/b?c=d&e=f#g",
            "snake_case_identifier camelCaseIdentifier SCREAMING_CASE",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        for n in [99, 100, 101, 257, 3000] {
            texts.push("a".repeat(n));
            texts.push("ab".repeat(n));
            texts.push(" ".repeat(n));
            texts.push("7".repeat(n));
            texts.push("é".repeat(n));
            texts.push("x".repeat(n) + "y" + &"z".repeat(n));
            texts.push("supercalifragilisticexpialidocious".repeat(n / 30 + 1));
        }
        // Pseudo-random letters: long pieces that are no token.
        let mut state = 0x2545_f491_u32;
        for len in [5, 40, 99, 100, 150, 1000] {
            let word: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 17;
                    state ^= state << 5;
                    char::from(b'a' + (state % 26) as u8)
                })
                .collect();
            texts.push(word);
        }
        texts
    }

    #[test]
    fn both_merges_count_alike_on_every_length() {
        let c = TokenCounter::get();
        for text in hard_texts() {
            for piece in c.pattern.find_iter(&text).map(Result::unwrap) {
                let bytes = piece.as_str().as_bytes();
                if bytes.len() >= 2 {
                    assert_eq!(c.merged_short(bytes), c.merged_long(bytes), "{:?}", piece.as_str());
                }
            }
        }
    }

    #[test]
    fn counts_as_tiktoken_does_on_every_development_catalog_and_request() {
        let reference = tiktoken_rs::o200k_base().unwrap();
        let c = TokenCounter::get();
        let mut texts = hard_texts();
        let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench");
        for set in ["acebench-en", "acebench-zh", "livemcp-zh", "livemcpbench", "metatool"] {
            let catalog = crate::Catalog::from_path(&bench.join(set).join("catalog.jsonl")).unwrap();
            texts.extend(catalog.tools().iter().map(Tool::definition_text));
            let queries = std::fs::read_to_string(bench.join(set).join("queries.jsonl")).unwrap();
            for line in queries.lines().filter(|l| !l.trim().is_empty()) {
                let query: serde_json::Value = serde_json::from_str(line).unwrap();
                texts.push(query["query"].as_str().unwrap().to_owned());
            }
        }
        assert!(texts.len() > 5_000, "{} texts", texts.len());
        for text in &texts {
            let expected = reference.encode_ordinary(text).len();
            assert_eq!(c.count(text), expected, "{:?}", text.chars().take(200).collect::<String>());
        }
    }
}
