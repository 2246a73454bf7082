//! tokens: a real tokenizer for counting what definitions cost.
//!
//! OpenAI's `o200k_base` BPE from `tiktoken-rs`, whose vocabulary is compiled into the crate:
//! nothing is downloaded. Loading it takes a few hundred milliseconds, so it is loaded once,
//! on first use.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

use crate::catalog::Tool;

/// Counts tokens with `o200k_base`.
pub struct TokenCounter {
    bpe: CoreBPE,
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
        COUNTER.get_or_init(|| TokenCounter {
            bpe: tiktoken_rs::o200k_base().expect("o200k_base ships with tiktoken-rs"),
        })
    }

    /// Tokens of `text` (special tokens are counted as plain text).
    pub fn count(&self, text: &str) -> usize {
        self.bpe.encode_ordinary(text).len()
    }

    /// Tokens of a tool definition as a model API receives it (`{"name", "description",
    /// "input_schema"}`, compact JSON).
    pub fn definition(&self, tool: &Tool) -> usize {
        self.count(&tool.definition_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_real_tokens() {
        let c = TokenCounter::get();
        assert_eq!(c.count(""), 0);
        assert_eq!(c.count("hello world"), 2);
        assert!(c.count("帮我查一下明天上海到北京的火车余票") > 5);
    }
}
