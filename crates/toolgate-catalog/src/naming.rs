//! Qualified names: `server__tool`, at most 64 characters of `[A-Za-z0-9_-]`.
//!
//! Clients cap tool names at 64 characters and some reject `.` or `/`, so every tool gets a
//! name that all of them accept. The rules, applied in order:
//!
//! 1. **Server part.** Every character outside `[A-Za-z0-9_-]` becomes `_`; runs of `_`
//!    collapse to one and leading or trailing `_` are dropped, so the server part never
//!    contains `__` and a qualified name splits unambiguously at its first `__`. The part is cut
//!    to 32 characters; an empty result becomes `server`.
//! 2. **Tool part.** Every character outside `[A-Za-z0-9_-]` becomes `_`; a result with no
//!    letter or digit left (an empty name, or one written wholly in Chinese) becomes `tool-` and
//!    the first 6 hex digits of SHA-256(NUL `name`).
//! 3. **Length.** `server__tool` longer than 64 characters is cut to 57 and gets `-` plus the
//!    first 6 hex digits of SHA-256(`server` NUL `name`) of the original names.
//! 4. **Collisions.** When several tools end with the same name, the one whose original
//!    `server__name` already was that name keeps it; if none was, the one whose original
//!    (server, name) sorts first keeps it. Every other one is renamed as in rule 3 (cut so that
//!    the suffix fits, then `-` and hex digits of its own hash), adding hex digits until the name
//!    is unique.
//!
//! The outcome depends only on the set of tools, never on the order they were listed in.
//!
//! The other name rules every part of toolgate shares live here too: a model's `mcp__` prefix
//! ([`strip_mcp_prefix`]) and an identifier cut into words (`split_words`).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};

use sha2::{Digest, Sha256};

/// Longest qualified name any client accepts.
pub const MAX_LEN: usize = 64;

/// Longest server part of a qualified name.
pub const MAX_SERVER_LEN: usize = 32;

/// Separator between the server and the tool part.
pub const SEPARATOR: &str = "__";

fn valid(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The server part of a qualified name (rule 1).
pub fn normalize_server(server: &str) -> String {
    let mut out = String::with_capacity(server.len());
    for c in server.chars() {
        let c = if valid(c) { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    out.truncate(MAX_SERVER_LEN);
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() { "server".to_owned() } else { out }
}

/// The tool part of a qualified name (rule 2).
pub fn normalize_tool(name: &str) -> String {
    let out: String = name.chars().map(|c| if valid(c) { c } else { '_' }).collect();
    if out.chars().any(|c| c.is_ascii_alphanumeric()) {
        out
    } else {
        format!("tool-{}", &digest_hex("", name)[..6])
    }
}

fn digest_hex(server: &str, name: &str) -> String {
    let mut h = Sha256::new();
    h.update(server.as_bytes());
    h.update([0]);
    h.update(name.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn with_suffix(base: &str, hex: &str, digits: usize) -> String {
    let keep = MAX_LEN - 1 - digits;
    // `base` is ASCII after normalisation, so byte slicing is safe.
    let cut = &base[..base.len().min(keep)];
    format!("{cut}-{}", &hex[..digits])
}

/// The qualified name of one tool, before collision handling (rules 1 to 3).
pub fn qualify(server: &str, name: &str) -> String {
    let full = format!("{}{SEPARATOR}{}", normalize_server(server), normalize_tool(name));
    if full.len() <= MAX_LEN { full } else { with_suffix(&full, &digest_hex(server, name), 6) }
}

/// Qualified names for a whole catalog, in the order given (rules 1 to 4).
pub fn qualify_all(tools: &[(&str, &str)]) -> Vec<String> {
    let mut names: Vec<String> = tools.iter().map(|(s, n)| qualify(s, n)).collect();
    // Each name's first tool, and the names of more than one tool, in name order, with all
    // their tools in catalog order.
    let mut first: HashMap<&str, usize, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(names.len(), Default::default());
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        match first.entry(n.as_str()) {
            Entry::Occupied(e) => groups.entry(n.as_str()).or_insert_with(|| vec![*e.get()]).push(i),
            Entry::Vacant(e) => {
                e.insert(i);
            }
        }
    }
    let collisions: Vec<(String, Vec<usize>)> = groups.into_iter().map(|(n, m)| (n.to_owned(), m)).collect();
    if collisions.is_empty() {
        return names;
    }
    let mut taken: HashSet<String> = names.iter().cloned().collect();
    for (name, mut members) in collisions {
        members.sort_by(|&a, &b| {
            let unchanged = |i: usize| format!("{}{SEPARATOR}{}", tools[i].0, tools[i].1) == name;
            unchanged(b).cmp(&unchanged(a)).then_with(|| tools[a].cmp(&tools[b]))
        });
        for &i in &members[1..] {
            let hex = digest_hex(tools[i].0, tools[i].1);
            let mut digits = 6;
            let mut candidate = with_suffix(&name, &hex, digits);
            while taken.contains(&candidate) && digits < hex.len() {
                digits += 2;
                candidate = with_suffix(&name, &hex, digits);
            }
            taken.insert(candidate.clone());
            names[i] = candidate;
        }
    }
    names
}

/// Splits a qualified name at its first `__` into server and tool part.
pub fn split(qualified: &str) -> Option<(&str, &str)> {
    qualified.split_once(SEPARATOR)
}

/// A model-written tool name without its leading `mcp__` (Claude Code's spelling, any letter
/// case), or the name as it is when it has none or nothing follows it. The one place the
/// prefix is stripped: the catalog, the search, policy patterns and the gateway's reply for a
/// server that is down all read a name through it.
pub fn strip_mcp_prefix(name: &str) -> &str {
    match name.get(..5) {
        Some(p) if p.eq_ignore_ascii_case("mcp__") && name.len() > 5 => &name[5..],
        _ => name,
    }
}

/// The one identifier splitter: each run of `separators` becomes a space, and so does a
/// camelCase hump (`getWeather`, `v2List`) and, with `acronyms`, the end of an acronym before a
/// word (`URLTool` → `URL Tool`). The lexical baselines split with
/// `toolgate_search::text::split_identifier`; the
/// embedding text keeps acronyms whole and also cuts at `/`.
pub fn split_words(s: &str, separators: &[char], acronyms: bool) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if separators.contains(&c) {
            if !out.ends_with(' ') {
                out.push(' ');
            }
            continue;
        }
        if i > 0 && c.is_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = prev.is_lowercase()
                || prev.is_ascii_digit()
                || (acronyms && prev.is_uppercase() && next_lower);
            if boundary && !out.ends_with(' ') {
                out.push(' ');
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_names_stay() {
        assert_eq!(qualify("git", "git_log"), "git__git_log");
        assert_eq!(qualify("npm-sentinel-mcp", "npmDeps"), "npm-sentinel-mcp__npmDeps");
    }

    #[test]
    fn bad_characters_become_underscores() {
        assert_eq!(qualify("metatool", "PDF&URLTool"), "metatool__PDF_URLTool");
        assert_eq!(qualify("Ant Design Components", "a.b/c"), "Ant_Design_Components__a_b_c");
        assert_eq!(qualify("my__server", "x"), "my_server__x");
        assert!(qualify("..", "查询").starts_with("server__tool-"));
        assert_ne!(qualify("s", "查询"), qualify("s", "搜索"));
    }

    #[test]
    fn long_names_are_cut_with_a_hash() {
        let n = qualify("server", &"x".repeat(80));
        assert_eq!(n.len(), 64);
        assert!(n.starts_with("server__xxx"));
        assert_eq!(n.as_bytes()[57], b'-');
    }

    #[test]
    fn collisions_do_not_depend_on_order() {
        let a = [("s", "a.b"), ("s", "a_b"), ("s", "a/b")];
        let b = [("s", "a/b"), ("s", "a.b"), ("s", "a_b")];
        let na = qualify_all(&a);
        let nb = qualify_all(&b);
        // `a_b` was already valid, so it keeps the plain name.
        assert_eq!(na[1], "s__a_b");
        assert_eq!(nb[2], "s__a_b");
        assert_eq!(na[0], nb[1]);
        assert_eq!(na[2], nb[0]);
        assert_ne!(na[0], na[2]);
    }

    proptest! {
        #[test]
        fn names_are_valid_and_unique(tools in proptest::collection::btree_set(("[a-z.]{0,4}", "[A-Za-z0-9 ._/-]{0,70}"), 0..40)) {
            let pairs: Vec<(&str, &str)> = tools.iter().map(|(s, n)| (s.as_str(), n.as_str())).collect();
            let names = qualify_all(&pairs);
            let unique: HashSet<&String> = names.iter().collect();
            prop_assert_eq!(unique.len(), names.len());
            for n in &names {
                prop_assert!(!n.is_empty() && n.len() <= MAX_LEN);
                prop_assert!(n.chars().all(valid), "{}", n);
                let (server, _) = split(n).unwrap();
                prop_assert!(!server.contains(SEPARATOR));
            }
        }
    }
}
