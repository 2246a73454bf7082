//! Glob patterns over tool names: `*` matches any run of characters (also none), `?` exactly
//! one character, and every other character itself, case-sensitively. There is no escape and no
//! character class; tool names do not need them.

use super::PatternProblem;

/// Whether `pattern` matches the whole of `text`.
///
/// Iterative, with one backtrack point (the last `*`), so the worst case is O(n·m) time and no
/// recursion however many stars a pattern has.
///
/// ```
/// use toolgate::config::glob_match;
///
/// assert!(glob_match("github__*", "github__search_issues"));
/// assert!(glob_match("*__delete_*", "fs__delete_file"));
/// assert!(!glob_match("*__delete_*", "fs__undelete_file"));
/// ```
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    // Literal characters compare byte by byte: both sides are UTF-8 and `*` and `?` never occur
    // inside a multi-byte character, so equal bytes from a character boundary are equal
    // characters. Only `?` and backtracking step over whole characters of the text.
    let (mut pi, mut ti) = (0, 0);
    // After the last `*`: where the pattern resumes, and where in the text it retries next.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some(b'*') => {
                pi += 1;
                star = Some((pi, ti));
                continue;
            }
            Some(b'?') => {
                pi += 1;
                ti += char_len(t[ti]);
                continue;
            }
            Some(&c) if c == t[ti] => {
                pi += 1;
                ti += 1;
                continue;
            }
            _ => {}
        }
        let Some((resume, from)) = star else {
            return false;
        };
        let next = from + char_len(t[from]);
        star = Some((resume, next));
        pi = resume;
        ti = next;
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Length of the UTF-8 character that starts with `first`.
fn char_len(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

/// Checks that a pattern is non-empty and printable.
pub(super) fn check(pattern: &str) -> Result<(), PatternProblem> {
    if pattern.is_empty() {
        return Err(PatternProblem::Empty);
    }
    match pattern.chars().find(|c| c.is_control()) {
        Some(c) => Err(PatternProblem::ControlCharacter(c)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The definition, by recursion over characters: slow, obviously right.
    fn reference(p: &[char], t: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('*', rest)) => (0..=t.len()).any(|i| reference(rest, &t[i..])),
            Some(('?', rest)) => !t.is_empty() && reference(rest, &t[1..]),
            Some((c, rest)) => t.first() == Some(c) && reference(rest, &t[1..]),
        }
    }

    #[test]
    fn policy_patterns_match_qualified_names() {
        let cases = [
            ("*__delete_*", "filesystem__delete_file", true),
            ("*__delete_*", "github__delete_", true),
            ("*__delete_*", "filesystem__undelete_file", false),
            ("*__delete_*", "delete_file", false),
            ("github__*", "github__search_issues", true),
            ("github__*", "github__", true),
            ("github__*", "gitlab__search", false),
            ("github__*", "my_github__search", false),
            ("list_?", "list_a", true),
            ("list_?", "list_", false),
            ("list_?", "list_ab", false),
            ("?", "é", true),
            ("??", "é", false),
            ("a?c", "a中c", true),
            ("*", "", true),
            ("**", "", true),
            ("?", "", false),
            ("", "", true),
            ("", "a", false),
            ("a*b*c", "abc", true),
            ("a*b*c", "a_x_b_y_c", true),
            ("a*b*c", "a_x_c_y_b", false),
            ("*a", "bba", true),
            ("*ab", "a", false),
            ("Search", "search", false),
        ];
        for (pattern, text, want) in cases {
            assert_eq!(glob_match(pattern, text), want, "{pattern:?} vs {text:?}");
        }
    }

    #[test]
    fn many_stars_stay_fast() {
        // Exponential for naive recursion; a few thousand steps here.
        let pattern = "*a*a*a*a*a*a*a*a*a*a*b";
        let text = "a".repeat(60);
        assert!(!glob_match(pattern, &text));
    }

    #[test]
    fn patterns_must_be_printable() {
        assert_eq!(check("list_*"), Ok(()));
        assert_eq!(check("中文?"), Ok(()));
        assert_eq!(check(""), Err(PatternProblem::Empty));
        assert_eq!(check("a\tb"), Err(PatternProblem::ControlCharacter('\t')));
    }

    proptest! {
        #[test]
        fn matches_the_recursive_definition(pattern in "[ab*?é_]{0,7}", text in "[abé_]{0,9}") {
            let p: Vec<char> = pattern.chars().collect();
            let t: Vec<char> = text.chars().collect();
            prop_assert_eq!(glob_match(&pattern, &text), reference(&p, &t));
        }
    }
}
