//! Claude Code's ToolSearch keyword scorer, reimplemented faithfully as a baseline.
//!
//! Terms are the query lower-cased and split on white space, nothing else. A tool's name parts
//! are its qualified name lower-cased and split on `__` and `_` (an MCP tool), or on camelCase
//! and `_` (a built-in). For each term, in order:
//!
//! - +12 (MCP) or +10 (built-in) if the term equals a name part, else +6 / +5 if it is a
//!   substring of one;
//! - +3 if the full name (parts joined by spaces) contains the term and the tool's score so far
//!   is still 0;
//! - +4 if the search hint contains the term as a word (`\bterm\b`);
//! - +2 if the description contains the term as a word.
//!
//! Only tools scoring above 0 are returned, highest first, ties by qualified name.

use toolgate_catalog::{Catalog, Origin, Tool};

use super::text::split_identifier;

#[derive(Debug)]
struct Parsed {
    parts: Vec<String>,
    full: String,
    mcp: bool,
    description: String,
    hint: String,
}

/// The keyword scorer's view of a catalog.
#[derive(Debug)]
pub(crate) struct KeywordIndex {
    tools: Vec<Parsed>,
}

/// One term's score parts for one tool: (name-part score, full-name hit, hint hit, description hit).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TermHit {
    pub(crate) part: u32,
    pub(crate) full: bool,
    pub(crate) hint: bool,
    pub(crate) description: bool,
}

fn parse(tool: &Tool) -> Parsed {
    let mcp = tool.origin() == Origin::Mcp;
    let parts: Vec<String> = if mcp {
        tool.qualified_name()
            .to_lowercase()
            .split("__")
            .flat_map(|p| p.split('_').map(str::to_owned).collect::<Vec<_>>())
            .filter(|p| !p.is_empty())
            .collect()
    } else {
        split_identifier(&tool.name().replace('_', " "))
            .to_lowercase()
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    Parsed {
        full: parts.join(" "),
        parts,
        mcp,
        description: tool.description().to_lowercase(),
        hint: tool.search_hint().unwrap_or_default().to_lowercase(),
    }
}

fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Whether `haystack` matches the regular expression `\bterm\b` (Unicode word characters).
pub(crate) fn contains_word(haystack: &str, term: &str) -> bool {
    if term.is_empty() {
        return false;
    }
    let first = term.chars().next();
    let last = term.chars().next_back();
    haystack.match_indices(term).any(|(i, _)| {
        let before = haystack[..i].chars().next_back();
        let after = haystack[i + term.len()..].chars().next();
        is_word(before) != is_word(first) && is_word(last) != is_word(after)
    })
}

impl KeywordIndex {
    pub(crate) fn build(catalog: &Catalog) -> KeywordIndex {
        KeywordIndex { tools: catalog.tools().iter().map(parse).collect() }
    }

    /// How `term` (lower-case) meets tool `doc`.
    pub(crate) fn term_hit(&self, doc: usize, term: &str) -> TermHit {
        let p = &self.tools[doc];
        let (exact, partial) = if p.mcp { (12, 6) } else { (10, 5) };
        let part = if p.parts.iter().any(|x| x == term) {
            exact
        } else if p.parts.iter().any(|x| x.contains(term)) {
            partial
        } else {
            0
        };
        TermHit {
            part,
            full: p.full.contains(term),
            hint: !p.hint.is_empty() && contains_word(&p.hint, term),
            description: contains_word(&p.description, term),
        }
    }

    /// Whether tool `doc` meets a required term: a name part, the description or the hint.
    pub(crate) fn meets(&self, doc: usize, term: &str) -> bool {
        let h = self.term_hit(doc, term);
        h.part > 0 || h.hint || h.description
    }

    /// What `term` adds to tool `doc`'s score after `so_far` from the terms before it, field by
    /// field (0 where it adds nothing): the name part (12 / 10 equal, 6 / 5 within), the full
    /// name (3, only while nothing has scored), the hint (4), the description (2). The one place
    /// the weights are applied: [`KeywordIndex::score`] adds them up and `explain` lists them.
    pub(crate) fn term_fields(&self, doc: usize, term: &str, so_far: u32) -> [(&'static str, u32); 4] {
        let h = self.term_hit(doc, term);
        let full = if h.full && so_far + h.part == 0 { 3 } else { 0 };
        [
            ("name", h.part),
            ("full-name", full),
            ("hint", if h.hint { 4 } else { 0 }),
            ("description", if h.description { 2 } else { 0 }),
        ]
    }

    /// The score of tool `doc` for the terms, in order.
    pub(crate) fn score(&self, doc: usize, terms: &[String]) -> u32 {
        let mut score = 0;
        for t in terms {
            score += self.term_fields(doc, t, score).iter().map(|(_, s)| s).sum::<u32>();
        }
        score
    }

    pub(crate) fn len(&self) -> usize {
        self.tools.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_catalog::ToolSpec;

    #[test]
    fn word_boundaries_follow_regex_semantics() {
        assert!(contains_word("send a message", "send"));
        assert!(!contains_word("resend a message", "send"));
        // As with the regular expression, `\bc++\b` needs a word character after the `+`.
        assert!(!contains_word("use c++ here", "c++"));
        assert!(contains_word("use c++x", "c++"));
        assert!(!contains_word("查询余票", "余票"));
        assert!(contains_word("查询 余票", "余票"));
    }

    #[test]
    fn weights_match_the_seed() {
        let cat = Catalog::builder()
            .tool(ToolSpec::mcp("gate", "cex_spot_get_ticker", "Get spot ticker"))
            .tool(ToolSpec::builtin("FileReadTool", "Read a file"))
            .build()
            .unwrap();
        let k = KeywordIndex::build(&cat);
        let t = |s: &str| vec![s.to_owned()];
        assert_eq!(k.score(0, &t("spot")), 12 + 2);
        assert_eq!(k.score(0, &t("tick")), 6);
        assert_eq!(k.score(1, &t("read")), 10 + 2);
        assert_eq!(k.score(1, &t("rea")), 5);
        assert_eq!(k.score(0, &["spot".into(), "ticker".into()]), 28);
    }
}
