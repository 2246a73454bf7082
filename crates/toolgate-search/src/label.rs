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
//!
//! A sentence about the reply counts as a label does: "Answer in a short, structured list with
//! a one-line summary at the end", `回答要简短、有条理`. Its words (`list`, `summary`, `short`,
//! `列表`, `总结`) say how to answer, not what to do, and are tool words of many catalogs. This
//! one reads grammar, in English and Chinese: a reply verb used without an object ("Answer
//! in …", "Respond briefly", `请用列表回答`), the reply as the subject of a wish (`回答要…`), the
//! reply of the one addressed ("your answer", `你的回答`), or the reply given a manner by a verb
//! of keeping or making ("keep the answer short", "make the response brief"). A reply verb
//! with an object ("Reply to the client", `回复客户邮件`) or a reply that is data ("the
//! responses of the poll", `问卷回答`) is the task, and is read as it is written.
//!
//! A request's closing thanks count as a label too ("Thanks in advance, and tell me if anything
//! is unclear.", `先谢谢了，有不清楚的地方请告诉我。`): its last sentence, when it opens by
//! thanking the one addressed and asks nothing. Its other words (`unclear`, `地方`: a place)
//! would otherwise find tools. A thanks that asks on ("Thanks! Could you also …?"), that is not
//! the last sentence (a turn of a conversation), or that thanks someone else ("Thank the
//! client") is read as it is written. A request that is nothing but such sentences is read as
//! it is written too: there is nothing else to rank it by.

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

/// Splits `query` into its whitespace-separated words, telling labels (and the sentences
/// about the reply, which count as labels do) from the rest.
pub(crate) fn split(query: &str) -> Labelled<'_> {
    let thanks = mentions_thanks(query);
    let courtesy = thanks || mentions_reply(query);
    let out = split_as(query, courtesy, thanks);
    // A request that is all about the reply or thanks is read as it is written: there is
    // nothing else to rank by.
    if courtesy && out.words.is_empty() && !out.labels.is_empty() {
        return split_as(query, false, false);
    }
    out
}

/// [`split`], sentences about the reply counting as labels if `courtesy`, and a closing thanks
/// too if `thanks` as well.
fn split_as(query: &str, courtesy: bool, thanks: bool) -> Labelled<'_> {
    let mut out = Labelled::default();
    let colon = query.contains([':', '：']);
    let end = query.trim_end().len();
    if !colon && !courtesy {
        out.words.extend(query.split_whitespace());
        return out;
    }
    for line in query.lines() {
        let (label, rest) = match colon.then(|| label_end(line)).flatten() {
            Some(end) => line.split_at(end),
            None => ("", line),
        };
        out.labels.extend(label.split_whitespace());
        if !courtesy {
            out.words.extend(rest.split_whitespace());
            continue;
        }
        for sentence in sentences(rest) {
            // Thanks close a request: only its last sentence is read for them.
            let last = || offset_in(query, sentence) + sentence.len() >= end;
            let aside = about_reply(sentence) || (thanks && last() && thanks_the_reader(sentence));
            let to = if aside { &mut out.labels } else { &mut out.words };
            to.extend(sentence.split_whitespace());
        }
    }
    out
}

/// The verbs of replying, as a request addresses the one who answers it.
const REPLY_VERBS: [&str; 3] = ["answer", "reply", "respond"];

/// The nouns of a reply, after `your`.
const REPLY_NOUNS: [&str; 6] = ["answer", "answers", "reply", "replies", "response", "responses"];

/// Adjectives of an answer's manner, as in "keep the answer short".
const STYLE: [&str; 10] = [
    "short",
    "brief",
    "concise",
    "clear",
    "simple",
    "structured",
    "succinct",
    "focused",
    "readable",
    "precise",
];

/// What follows a reply verb used without an object: how to answer, not whom or what.
const HOW: [&str; 8] = ["in", "with", "using", "as", "briefly", "concisely", "only", "shortly"];

/// The Chinese verbs of replying.
const REPLY_VERBS_ZH: [&str; 3] = ["回答", "回复", "答复"];

/// What follows a Chinese reply verb that is the answer's own subject ("回答要简短": the answer
/// should be short), beside the end of its clause.
const AFTER_REPLY_ZH: [char; 6] = ['要', '应', '需', '请', '时', '尽'];

/// Whether `query` could hold a sentence about the reply: a cheap test before any split (the
/// stems of the reply words, in lower and upper case).
fn mentions_reply(query: &str) -> bool {
    (!query.is_ascii() && query.contains(['回', '答']))
        || ["nswer", "NSWER", "eply", "EPLY", "espon", "ESPON"].iter().any(|stem| query.contains(stem))
}

/// Where `part`, a slice of `text`, starts in it.
fn offset_in(text: &str, part: &str) -> usize {
    part.as_ptr() as usize - text.as_ptr() as usize
}

/// Whether `query` could hold a sentence that thanks the reader: a cheap test before any split.
fn mentions_thanks(query: &str) -> bool {
    (!query.is_ascii() && query.contains('谢')) || ["hank", "HANK"].iter().any(|stem| query.contains(stem))
}

/// What may come before a Chinese word of thanks at the start of a sentence: in advance (`先`,
/// `提前`), very (`非常`, `十分`, `太`, `真`).
const BEFORE_THANKS_ZH: [&str; 6] = ["先", "提前", "非常", "十分", "太", "真"];

/// The Chinese words that thank the one addressed, as a sentence opens with them.
const THANKS_ZH: [&str; 5] = ["谢谢", "多谢", "感谢你", "感谢您", "谢了"];

/// Whether `sentence` opens by thanking the one addressed and asks nothing ("Thanks in advance,
/// and …", "Thank you for your help.", "Many thanks!", `先谢谢了，…。`, `多谢！`,
/// `感谢您的帮助。`): a courtesy, whatever else it says, when it closes the request. A thanks
/// that goes on to ask ("Thanks, can you also …?", `谢谢，可以告诉我…吗？`) is a request;
/// thanking someone else ("Thank the client for the order", `感谢客户`) is a task; both are
/// read as written, as is a thanks later in a sentence.
fn thanks_the_reader(sentence: &str) -> bool {
    let end = sentence.trim_end();
    if end.ends_with(['?', '？']) || end.trim_end_matches(['。', '.', '!', '！']).ends_with(['吗', '呢'])
    {
        return false;
    }
    let opening = sentence.trim_start();
    // An English opening counts for English only: a Chinese sentence's ASCII words come after
    // its Han characters.
    if opening.starts_with(|c: char| c.is_ascii_alphabetic()) {
        let mut words = opening
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .filter(|w| !w.is_empty() && w.is_ascii());
        let is = |w: Option<&str>, this: &str| w.is_some_and(|w| w.eq_ignore_ascii_case(this));
        let first = words.next();
        return is(first, "thanks")
            || is(first, "thx")
            || (is(first, "many") && is(words.next(), "thanks"))
            || (is(first, "thank") && is(words.next(), "you"));
    }
    let rest = BEFORE_THANKS_ZH.iter().find_map(|lead| opening.strip_prefix(lead)).unwrap_or(opening);
    THANKS_ZH.iter().any(|t| rest.starts_with(t))
}

/// The sentences of a line: pieces ending at `.`, `?` or `!` before a space, or at `。`, `？`,
/// `！`, their punctuation kept.
fn sentences(line: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut chars = line.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some((at, c)) = chars.next() {
            let ends = matches!(c, '。' | '？' | '！')
                || (matches!(c, '.' | '?' | '!') && chars.peek().is_none_or(|&(_, n)| n.is_whitespace()));
            if ends {
                let end = at + c.len_utf8();
                let piece = &line[start..end];
                start = end;
                return Some(piece);
            }
        }
        (start < line.len()).then(|| {
            let piece = &line[start..];
            start = line.len();
            piece
        })
    })
}

/// Whether `sentence` is about the reply rather than the task: a reply verb used without an
/// object ("Answer in a short list", "Respond briefly", `请用列表回答`), the reply as the subject
/// of a wish (`回答要简短`), the reply of the one addressed ("your answer", `你的回答`), or the
/// reply given a manner ("keep the answer short"). A reply verb with an object ("reply to the
/// client", "answer the survey", `回复客户邮件`) is a task, and so is a reply that is data ("the
/// responses of the poll", `问卷回答`).
fn about_reply(sentence: &str) -> bool {
    let words: Vec<&str> =
        sentence.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty() && w.is_ascii()).collect();
    // Whether `w` is one of `these`, in any case.
    let among = |w: &str, these: &[&str]| these.iter().any(|t| w.eq_ignore_ascii_case(t));
    let first = usize::from(words.first().is_some_and(|w| w.eq_ignore_ascii_case("please")));
    let bare_verb = words.get(first).is_some_and(|w| among(w, &REPLY_VERBS))
        && words.get(first + 1).is_some_and(|w| among(w, &HOW));
    let yours = words.windows(2).any(|p| p[0].eq_ignore_ascii_case("your") && among(p[1], &REPLY_NOUNS));
    // The reply given a manner by a verb of keeping or making: "keep the answer short".
    let styled = words.windows(4).any(|p| {
        among(p[0], &["keep", "make"])
            && among(p[1], &["the", "your", "an", "a"])
            && among(p[2], &REPLY_NOUNS)
            && among(p[3], &STYLE)
    });
    let zh = REPLY_VERBS_ZH.iter().any(|v| {
        sentence.match_indices(v).any(|(at, _)| {
            let before = &sentence[..at];
            let next = sentence[at + v.len()..].chars().next();
            before.ends_with("你的")
                || before.ends_with("您的")
                || next.is_none_or(|c| {
                    is_wide_punctuation(c) || c.is_ascii_punctuation() || AFTER_REPLY_ZH.contains(&c)
                })
        })
    });
    bare_verb || yours || styled || zh
}

/// The words of a request's labels and its other words as one text, labels first, for a
/// reader that weighs every word by what it means (the dense side of `semantic`).
#[cfg(feature = "semantic")]
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
    fn a_sentence_about_the_reply_counts_as_a_label() {
        assert_eq!(
            labels(
                "Find my notes.\n\nAnswer in a short, structured list with a one-line summary at the end."
            ),
            (
                vec![
                    "Answer",
                    "in",
                    "a",
                    "short,",
                    "structured",
                    "list",
                    "with",
                    "a",
                    "one-line",
                    "summary",
                    "at",
                    "the",
                    "end."
                ],
                vec!["Find", "my", "notes."]
            )
        );
        assert_eq!(
            labels("list my repos. Please respond briefly"),
            (vec!["Please", "respond", "briefly"], vec!["list", "my", "repos."])
        );
        assert_eq!(
            labels("Check the logs. Keep your answer short!"),
            (vec!["Keep", "your", "answer", "short!"], vec!["Check", "the", "logs."])
        );
        assert_eq!(
            labels("查一下天气\n\n请用简短的列表回答，最后附一句总结。"),
            (vec!["请用简短的列表回答，最后附一句总结。"], vec!["查一下天气"])
        );
        assert_eq!(labels("查看提交记录。回答要简短。"), (vec!["回答要简短。"], vec!["查看提交记录。"]));
        assert_eq!(
            labels("Find my notes.\n\nDouble-check your work, and keep the answer short and clear."),
            (
                vec![
                    "Double-check",
                    "your",
                    "work,",
                    "and",
                    "keep",
                    "the",
                    "answer",
                    "short",
                    "and",
                    "clear."
                ],
                vec!["Find", "my", "notes."]
            )
        );
        assert_eq!(
            labels("List the open issues. Make the response brief."),
            (vec!["Make", "the", "response", "brief."], vec!["List", "the", "open", "issues."])
        );
        assert_eq!(labels("查天气。你的回答请附上来源"), (vec!["你的回答请附上来源"], vec!["查天气。"]));
    }

    #[test]
    fn a_reply_that_is_the_task_is_not_a_label() {
        for q in [
            "Reply to the client's last email",
            "answer the survey for me",
            "Draft a response to the complaint",
            "I need to analyze the responses from a recent poll",
            "The alert should trigger if the response time exceeds 300ms",
            "find the answer to this riddle",
            "有三个任务：1. 完成设计；2. 回复客户邮件",
            "问卷回答包括问题Q1答为A",
            "Tune the checkout API. Keep the response time under 300ms.",
            "Publish the FAQ. Make the answers public on the forum.",
            // A request that is all about the reply has nothing else to rank by.
            "Answer in a short list.",
            "Keep the answer short and structured.",
        ] {
            let l = split(q);
            assert!(l.labels.iter().all(|w| w.ends_with(':') || w.ends_with('：')), "{q:?}: {:?}", l.labels);
        }
    }

    #[test]
    fn thanks_that_close_a_request_count_as_a_label() {
        assert_eq!(
            labels("Find flights to Paris.\n\nThanks in advance, and tell me if anything is unclear."),
            (
                vec!["Thanks", "in", "advance,", "and", "tell", "me", "if", "anything", "is", "unclear."],
                vec!["Find", "flights", "to", "Paris."]
            )
        );
        assert_eq!(
            labels("查一下北京的天气\n\n先谢谢了，有不清楚的地方请告诉我。"),
            (vec!["先谢谢了，有不清楚的地方请告诉我。"], vec!["查一下北京的天气"])
        );
        assert_eq!(
            labels("Send me the manual for pump XYZ789. Thank you very much for your help!"),
            (
                vec!["Thank", "you", "very", "much", "for", "your", "help!"],
                vec!["Send", "me", "the", "manual", "for", "pump", "XYZ789."]
            )
        );
        assert_eq!(labels("帮我查物流。非常感谢您！"), (vec!["非常感谢您！"], vec!["帮我查物流。"]));
    }

    #[test]
    fn thanks_that_ask_or_go_on_or_thank_someone_else_are_read_as_written() {
        for q in [
            // It goes on to ask.
            "I want a loan.\n谢谢，可以告诉我个人住房贷款的申请流程吗？",
            "Give me health tips.\nThanks! Could you also suggest a diet?",
            "Find my order.\nThanks, can you also track it?",
            // Not the request's last sentence: a turn of a conversation, read as written.
            "Check the alerts.\nThanks for the info. Also check the travel advisories.",
            // Someone else is thanked: the task.
            "Write an email. Thank the client for the order.",
            "写封邮件。感谢客户的订单。",
            // Nothing but thanks: nothing else to rank by.
            "Thanks!",
            "谢谢您的帮助。",
        ] {
            let l = split(q);
            assert!(l.labels.is_empty(), "{q:?}: {:?}", l.labels);
            // Every word is there, in order (a Chinese run may be cut at its sentence ends).
            assert_eq!(l.words.concat(), q.split_whitespace().collect::<String>(), "{q:?}");
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
