//! Labels: the few words before a colon that open a line and say what the line is ("Task
//! description:", "Background:", "Note:", "任务描述：", "背景：", "user:"), not what it asks
//! for. A heading over a request, or a label in front of its background, would otherwise pull
//! in the tools named like the label (`task`, `description`: a task manager) over the tools the
//! request is about. The lexical strategies count a label's words at a low weight
//! ([`Expansion::label`](crate::Expansion::label)), after the request's other words, so that a
//! request that is all label ("Translate: …" with nothing else a tool has) still ranks by it.
//!
//! This reads layout, not words: no list of heading words, in any language. A colon counts
//! when a line's first few words end at it: at most [`MAX_WORDS`] words, or [`MAX_HAN`] Han
//! characters, with no punctuation inside, and, for an ASCII colon, a space or the end of the
//! line after it (so that `https://…`, `10:30` and `C:\` are not labels).

/// The most whitespace-separated words a label has.
const MAX_WORDS: usize = 3;

/// The most Han characters a label has.
const MAX_HAN: usize = 6;

/// A request's words, split into the words of its lines' labels and the others.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Labelled<'q> {
    /// The words outside labels, in order.
    pub(crate) words: Vec<&'q str>,
    /// The words of labels, in order.
    pub(crate) labels: Vec<&'q str>,
}

/// Splits `query` into its whitespace-separated words, telling labels from the rest.
pub(crate) fn split(query: &str) -> Labelled<'_> {
    let mut out = Labelled::default();
    if !query.contains([':', '：']) {
        out.words.extend(query.split_whitespace());
        return out;
    }
    for line in query.lines() {
        let (label, rest) = match label_end(line) {
            Some(end) => line.split_at(end),
            None => ("", line),
        };
        out.labels.extend(label.split_whitespace());
        out.words.extend(rest.split_whitespace());
    }
    out
}

/// The words of a request's labels and its other words as one text, labels first, for a
/// reader that weighs every word by what it means (the dense side of `semantic`).
pub(crate) fn rejoin(labels: &[&str], words: &[&str]) -> String {
    labels.iter().chain(words).copied().collect::<Vec<_>>().join(" ")
}

/// Where the label of `line` ends (just past its colon), if it has one.
fn label_end(line: &str) -> Option<usize> {
    let (at, colon) = line.char_indices().find(|&(_, c)| c == ':' || c == '：')?;
    let end = at + colon.len_utf8();
    if colon == ':' && !line[end..].chars().next().is_none_or(char::is_whitespace) {
        return None;
    }
    let label = line[..at].trim_start().trim_start_matches(['#', '-', '*', '•', ' ']).trim();
    if label.is_empty()
        || label
            .chars()
            .any(|c| c.is_ascii_punctuation() && !matches!(c, '-' | '_' | '\'') || is_wide_punctuation(c))
    {
        return None;
    }
    let han = label.chars().filter(|&c| crate::text::is_cjk(c)).count();
    (label.split_whitespace().count() <= MAX_WORDS && han <= MAX_HAN).then_some(end)
}

/// Chinese and other full-width punctuation (`，。、；！？“”（）`).
fn is_wide_punctuation(c: char) -> bool {
    matches!(c, '\u{3000}'..='\u{303F}' | '\u{FF00}'..='\u{FF0F}' | '\u{FF1A}'..='\u{FF20}' | '\u{2018}'..='\u{201F}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(query: &str) -> (Vec<&str>, Vec<&str>) {
        let l = split(query);
        (l.labels, l.words)
    }

    #[test]
    fn a_heading_or_a_lead_in_is_a_label() {
        assert_eq!(
            labels("Task description:\n\nlist my repos"),
            (vec!["Task", "description:"], vec!["list", "my", "repos"])
        );
        assert_eq!(labels("任务描述：\n\n查看提交记录"), (vec!["任务描述："], vec!["查看提交记录"]));
        assert_eq!(labels("背景：我在一个小团队工作"), (vec!["背景："], vec!["我在一个小团队工作"]));
        assert_eq!(
            labels("## Note: use the staging server"),
            (vec!["##", "Note:"], vec!["use", "the", "staging", "server"])
        );
        assert_eq!(labels("user: find flights"), (vec!["user:"], vec!["find", "flights"]));
    }

    #[test]
    fn colons_inside_text_are_not_labels() {
        for q in [
            "open https://example.com/a",
            "meet at 10:30 tomorrow",
            "read C:\\temp\\a.txt",
            "the ratio 3:2 please",
            "I need three things done today: a report, a chart and a mail",
            "请帮我对两个博物馆的数字化文物进行分类。这是文物信息：",
            "Sure, here are the details:",
        ] {
            let (l, w) = labels(q);
            assert!(l.is_empty(), "{q:?} has a label {l:?}");
            assert_eq!(w, q.split_whitespace().collect::<Vec<_>>());
        }
    }

    #[test]
    fn every_word_is_kept_once() {
        let q = "Background: we ship weekly\nTask: 查看仓库：最近的提交\n- Goal: fewer bugs";
        let l = split(q);
        let mut all: Vec<&str> = l.labels.iter().chain(&l.words).copied().collect();
        let mut want: Vec<&str> = q.split_whitespace().collect();
        all.sort_unstable();
        want.sort_unstable();
        assert_eq!(all, want);
        assert_eq!(l.labels, ["Background:", "Task:", "-", "Goal:"]);
    }
}
