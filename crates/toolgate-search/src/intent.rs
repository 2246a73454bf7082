//! Task-shaped requests: what a request needs besides the words it says.
//!
//! Agents pass whole tasks to search ("summarise the paper and save it to
//! /root/markdown/notes.md"), and some of the tools such a task needs are never named in it:
//!
//! - a file path is data, not intent: its directory words (`root`, `markdown`) would pull in
//!   tools about markdown, while what the task needs is to write a file. A path becomes a
//!   need read from its extension and from the verb that governs it in its clause: written
//!   (`save`, `create`, `generate` …) or read (anything else); a directory is listed;
//! - a web address needs a fetch.
//!
//! A date relative to today (`tomorrow`, `next Friday`, `the past three days`, `下周五`) is
//! data too, like a path or a number: an argument of the request, taken out of its words, so
//! that "by next Friday" finds no tool about what comes next. It is not a need either:
//! requests name deadlines and time frames far more often than they ask what day it is, and
//! reading one as a need put a clock tool near the top of most long task requests
//! (`tests/metamorphic.rs`). A request that asks for the time says so in words a clock tool
//! matches.
//!
//! Each need is a small query of its own; the ranking makes room for its best tool near the
//! top (see `Index::keywords`), so that one part of a task does not crowd out the others.
//! The rules are general: they look at the shape of the request (paths, addresses, relative
//! dates), never at what any catalog holds.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use super::bm25f::Bm25Index;
use super::{Expansion, Hit, Index, TermExplanation};
use toolgate_catalog::ToolId;

/// One thing a request needs that its words do not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Need {
    /// The words to search for.
    pub(crate) words: &'static [&'static str],
    /// The query text that calls for it (a path, an address, a date word).
    pub(crate) cue: String,
}

/// A request read for its needs.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Reading<'q> {
    /// The request's words, paths taken out.
    pub(crate) words: Vec<&'q str>,
    /// Its needs, in the order of their cues, without repeats.
    pub(crate) needs: Vec<Need>,
}

/// How a path is used in its clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    Read,
    Write,
}

/// Reads a request given as whitespace-separated words.
pub(crate) fn read<'q>(words: &[&'q str]) -> Reading<'q> {
    let mut out = Reading { words: Vec::with_capacity(words.len()), needs: Vec::new() };
    // The verb that governs a path is the last read or write verb before it in its clause.
    let mut verb: Option<Use> = None;
    let mut last_file_at: Option<usize> = None;
    let mut files_read = 0;
    let mut compares = false;
    // A path glued to Chinese text (`路径是/a/b.txt，`) is cut out of it first.
    // A word in ASCII (most of them) is one run and holds no Chinese date.
    let mut split: Vec<&'q str> = Vec::with_capacity(words.len());
    for &w in words {
        if w.is_ascii() {
            split.push(w);
        } else {
            latin_runs(w).for_each(|run| without_chinese_dates(run, &mut split));
        }
    }
    let words = &split[..];
    let dates = date_words(words);
    let mut lower = String::new();
    for (i, &raw) in words.iter().enumerate() {
        let w = trim_punctuation(raw);
        lower.clear();
        lower.push_str(w);
        lower.make_ascii_lowercase();
        if dates[i] {
            // A date is an argument of the request, like a number: what it asks for is in its
            // other words ("by next Friday" finds no tool about what comes next).
            if ends_clause(raw) || lower == "then" {
                verb = None;
            }
            continue;
        }
        if is_address(&lower) {
            out.words.push(raw);
            // A page to read; an address of an image or a document is a file of its own kind.
            if path_kind(w).is_none_or(|k| matches!(k, Kind::Directory | Kind::Text)) {
                push(&mut out.needs, &["fetch", "url"], w);
            }
        } else if let Some(kind) = path_kind(w) {
            let mode = verb.unwrap_or(Use::Read);
            match kind {
                // A directory right after a file name is where that file is ("insert a.png
                // under /root/picture"), not a directory to list.
                Kind::Directory if last_file_at.is_some_and(|at| i - at <= 2) => {}
                Kind::Directory => push(&mut out.needs, kind.need(mode), w),
                _ => {
                    push(&mut out.needs, kind.need(mode), w);
                    if mode == Use::Read {
                        files_read += 1;
                    }
                }
            }
            if kind != Kind::Directory {
                last_file_at = Some(i);
            }
        } else {
            out.words.push(raw);
            if let Some(u) = verb_use(&lower) {
                verb = Some(u);
            }
            compares |=
                matches!(lower.as_str(), "compare" | "comparing" | "diff" | "difference" | "differences");
            if matches!(lower.as_str(), "calculate" | "calculation" | "compute" | "estimate") {
                push(&mut out.needs, &["calculate"], w);
            }
        }
        if ends_clause(raw) || lower == "then" {
            verb = None;
        }
    }
    // Two files read and compared: a diff.
    if compares && files_read >= 2 {
        push(&mut out.needs, &["diff", "text"], "compare");
    }
    out
}

/// `w` cut where Chinese characters (or full-width punctuation) meet other text, so that a
/// path or address inside Chinese text stands alone. Most words come back whole.
fn latin_runs(w: &str) -> impl Iterator<Item = &str> {
    let wide = |c: char| {
        super::text::is_cjk(c)
            || ('\u{3000}'..='\u{303f}').contains(&c)
            || ('\u{ff00}'..='\u{ffef}').contains(&c)
    };
    let mut rest = w;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let cut = rest.find(|c: char| wide(c) != wide(first)).unwrap_or(rest.len());
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

const WEEKDAYS: [&str; 7] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/// Which of `words` say a date relative to today or a weekday, which are arguments of a
/// request, not what it asks for: `tomorrow`, `yesterday`, `tonight`, `Friday`, `next week`,
/// `the past three days`, `this weekend`, `3 days ago`.
fn date_words(words: &[&str]) -> Vec<bool> {
    // Lower-cased only where a word has a capital (most have none).
    let lower: Vec<Cow<'_, str>> = words
        .iter()
        .map(|w| {
            let w = trim_punctuation(w);
            if w.bytes().any(|b| b.is_ascii_uppercase()) {
                Cow::Owned(w.to_ascii_lowercase())
            } else {
                Cow::Borrowed(w)
            }
        })
        .collect();
    let unit = |w: &str| {
        let u = w.trim_end_matches('s');
        WEEKDAYS.contains(&w)
            || matches!(u, "day" | "week" | "weekend" | "month" | "year" | "hour" | "quarter")
    };
    let mut out = vec![false; words.len()];
    for (i, w) in lower.iter().enumerate() {
        if matches!(&**w, "tomorrow" | "yesterday" | "tonight") || WEEKDAYS.contains(&&**w) {
            out[i] = true;
        }
        // A deadline's bound: "by Friday at the latest".
        if w == "at"
            && lower.get(i + 1).is_some_and(|n| n == "the")
            && lower.get(i + 2).is_some_and(|n| n == "latest" || n == "earliest")
        {
            out[i..=i + 2].iter_mut().for_each(|d| *d = true);
        }
        if w == "ago" && i >= 1 && unit(&lower[i - 1]) {
            out[i] = true;
            out[i - 1] = true;
            if i >= 2 && is_count(&lower[i - 2]) {
                out[i - 2] = true;
            }
        }
        if matches!(&**w, "next" | "last" | "past" | "coming" | "this") {
            for j in [i + 1, i + 2] {
                let Some(next) = lower.get(j) else { break };
                if unit(next) && (w != "this" || WEEKDAYS.contains(&&**next) || next == "weekend") {
                    if j == i + 2 && !is_count(&lower[i + 1]) {
                        break;
                    }
                    out[i..=j].iter_mut().for_each(|d| *d = true);
                    break;
                }
            }
        }
    }
    out
}

/// A number in digits or an English count word.
fn is_count(w: &str) -> bool {
    w.bytes().all(|b| b.is_ascii_digit()) && !w.is_empty()
        || matches!(
            w,
            "a" | "one" | "two" | "three" | "four" | "five" | "six" | "seven" | "few" | "several" | "couple"
        )
}

/// `w` without the Chinese dates relative to today it holds (明天, 下周五, 上个月, 过去三天 …):
/// the rest of it, in pieces added to `pieces`.
fn without_chinese_dates<'w>(w: &'w str, pieces: &mut Vec<&'w str>) {
    const WHOLE: &[&str] = &["明天", "后天", "昨天", "前天", "今晚", "下个月", "上个月", "这个月", "本月"];
    const WEEK: &[&str] = &["下周", "上周", "本周", "这周", "下星期", "上星期", "这星期", "周", "星期"];
    const SPAN: &[&str] = &["过去", "最近", "未来", "接下来"];
    const DAYS: &str = "一二三四五六日天末";
    const COUNTS: &str = "一二两三四五六七八九十几0123456789";
    // Every date above is in Chinese characters: a word in ASCII holds none.
    if w.is_ascii() {
        pieces.push(w);
        return;
    }
    let mut start = 0;
    let mut i = 0;
    while i < w.len() {
        let rest = &w[i..];
        let mut len = WHOLE.iter().find(|p| rest.starts_with(**p)).map_or(0, |p| p.len());
        if len == 0
            && let Some(p) = WEEK.iter().find(|p| rest.starts_with(**p))
        {
            // `周` alone is a date only with its day (周五, 周末); `下周` is one either way.
            match rest[p.len()..].chars().next().filter(|c| DAYS.contains(*c)) {
                Some(day) => len = p.len() + day.len_utf8(),
                None if p.chars().count() > 1 => len = p.len(),
                None => {}
            }
        }
        if len == 0
            && let Some(p) = SPAN.iter().find(|p| rest.starts_with(**p))
        {
            let after = &rest[p.len()..];
            let counted: usize = after.chars().take_while(|c| COUNTS.contains(*c)).map(char::len_utf8).sum();
            let tail = &after[counted..];
            if let Some(u) = ["天", "周", "个月", "月", "年", "小时"].iter().find(|u| tail.starts_with(**u))
            {
                len = p.len() + counted + u.len();
            }
        }
        if len > 0 {
            if start < i {
                pieces.push(&w[start..i]);
            }
            i += len;
            start = i;
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    if start < w.len() {
        pieces.push(&w[start..]);
    }
}

fn push(needs: &mut Vec<Need>, words: &'static [&'static str], cue: &str) {
    if !needs.iter().any(|n| n.words == words) {
        needs.push(Need { words, cue: cue.to_owned() });
    }
}

fn trim_punctuation(w: &str) -> &str {
    w.trim_start_matches(['(', '[', '"', '\'', '`', '“', '‘', '<']).trim_end_matches([
        '.', ',', ';', ':', '!', '?', ')', ']', '"', '\'', '`', '”', '’', '>', '。', '，', '；',
    ])
}

fn ends_clause(raw: &str) -> bool {
    let trimmed = raw.trim_end_matches([')', ']', '"', '\'', '`', '”', '’']);
    trimmed.ends_with(['.', ';', '!', '?', '。', '；', '！', '？']) && !trimmed.ends_with("..")
}

fn is_address(lower: &str) -> bool {
    lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("www.")
}

/// What a path names, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Word,
    Slides,
    Sheet,
    Pdf,
    Image,
    Directory,
}

impl Kind {
    fn need(self, mode: Use) -> &'static [&'static str] {
        match (self, mode) {
            (Kind::Text, Use::Read) => &["read", "file"],
            (Kind::Text, Use::Write) => &["write", "file"],
            (Kind::Word, Use::Read) => &["read", "word", "document"],
            (Kind::Word, Use::Write) => &["create", "word", "document"],
            (Kind::Slides, Use::Read) => &["read", "presentation", "pptx"],
            (Kind::Slides, Use::Write) => &["create", "presentation", "pptx"],
            (Kind::Sheet, Use::Read) => &["read", "spreadsheet"],
            (Kind::Sheet, Use::Write) => &["write", "spreadsheet"],
            (Kind::Pdf, Use::Read) => &["read", "pdf", "document"],
            (Kind::Pdf, Use::Write) => &["create", "pdf", "document"],
            (Kind::Image, Use::Read) => &["read", "image"],
            (Kind::Image, Use::Write) => &["save", "image"],
            (Kind::Directory, Use::Read) => &["list", "directory"],
            (Kind::Directory, Use::Write) => &["create", "directory"],
        }
    }
}

/// Whether `w` is a file path or a file name, and of what kind. A path has a `/` or `\` and
/// starts like one (`/`, `~/`, `./`, `../`, `C:\`) or has two or more separators; a bare name
/// needs a known extension (`report.docx`), so that `e.g.` or `v1.2` are not files.
fn path_kind(w: &str) -> Option<Kind> {
    let anchored = w.starts_with('/')
        || w.starts_with("~/")
        || w.starts_with("./")
        || w.starts_with("../")
        || (w.len() > 2 && w.as_bytes()[1] == b':' && w.as_bytes()[2] == b'\\');
    let separators = w.matches(['/', '\\']).count();
    let is_path = (anchored && w.len() > 1) || separators >= 2;
    let last = w.rsplit(['/', '\\']).next().unwrap_or(w);
    let ext = last.rsplit_once('.').map(|(stem, e)| (stem, e.to_ascii_lowercase()));
    let kind = match ext {
        Some((stem, e)) if !stem.is_empty() => extension_kind(&e),
        _ => None,
    };
    match kind {
        Some(k) => Some(k),
        None if is_path && !last.contains('.') => Some(Kind::Directory),
        None if is_path => Some(Kind::Text),
        None => None,
    }
}

fn extension_kind(e: &str) -> Option<Kind> {
    Some(match e {
        "md" | "markdown" | "txt" | "log" | "csv" | "tsv" | "json" | "jsonl" | "yaml" | "yml" | "toml"
        | "xml" | "html" | "htm" | "bib" | "tex" | "py" | "js" | "ts" | "rs" | "go" | "java" | "c"
        | "cpp" | "h" | "sh" | "sql" | "ini" | "cfg" | "conf" => Kind::Text,
        "docx" | "doc" | "odt" | "rtf" => Kind::Word,
        "pptx" | "ppt" | "odp" | "key" => Kind::Slides,
        "xlsx" | "xls" | "ods" => Kind::Sheet,
        "pdf" => Kind::Pdf,
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "svg" | "bmp" => Kind::Image,
        _ => return None,
    })
}

/// Verbs that decide whether a path in their clause is read or written.
fn verb_use(lower: &str) -> Option<Use> {
    match lower {
        "save" | "saved" | "saving" | "saves" | "write" | "writes" | "writing" | "written" | "create"
        | "creates" | "creating" | "generate" | "generates" | "generating" | "draft" | "export"
        | "exports" | "output" | "store" | "stores" | "produce" | "compose" | "dump" | "put" | "make"
        | "build" | "append" | "record" => Some(Use::Write),
        "read" | "reads" | "reading" | "open" | "load" | "view" | "show" | "check" | "analyze"
        | "analyse" | "parse" | "summarize" | "summarise" | "compare" | "convert" | "extract" | "look"
        | "list" | "get" | "find" | "insert" | "use" | "from" => Some(Use::Read),
        _ => None,
    }
}

// How the ranking makes room for needs, and how it explains a tool it placed.

/// Where the best tool of a request's first, second … need goes at the latest.
const NEED_SLOTS: [usize; 4] = [1, 3, 4, 5];

/// How many of a need's best tools are checked for meeting it.
const NEED_CANDIDATES: usize = 5;

/// How much of a need's ranking an index keeps: enough that a search whose policy hides some
/// of the best still finds its candidates there.
const NEED_RANKING_KEPT: usize = 64;

/// A need's ranking as an index keeps it ([`Index::need_ranking`]).
#[derive(Debug)]
pub(crate) struct NeedRanking {
    /// The best hits, in rank order, each with whether its tool is [about the
    /// need](Index::about_need): judged once when the ranking is made rather than at every
    /// search that has the need.
    best: Vec<(Hit, bool)>,
    /// Whether `best` is the whole ranking.
    whole: bool,
}

/// A need's words in the normal form of `b`'s analyzer ([`Index::about_need`]).
fn needed_terms(b: &Bm25Index, words: &[&str]) -> Vec<String> {
    words.iter().filter_map(|w| b.analyzer().normal_form(w)).collect()
}

/// The need rankings an index has made, by the need's words.
#[derive(Debug, Default)]
pub(crate) struct NeedRankings(Mutex<FxHashMap<&'static [&'static str], Arc<NeedRanking>>>);

impl Index {
    /// Puts the best tool of each need (see the module's documentation) near the top: need
    /// `i` goes to position `NEED_SLOTS[i]` at the latest, so that the part of a task its words
    /// say does not crowd out a file to write or a date to resolve.
    pub(super) fn make_room_for_needs(
        &self,
        reading: &Reading<'_>,
        hits: &mut Vec<Hit>,
        allowed: &dyn Fn(ToolId) -> bool,
    ) -> Vec<ToolId> {
        let mut placed = Vec::new();
        for (need, &slot) in reading.needs.iter().zip(NEED_SLOTS.iter()) {
            placed.extend(self.make_room(need.words, slot, hits, allowed));
        }
        placed
    }

    /// Places the best tool for a need's `words` at `slot` at the latest; returns it if it is
    /// in the ranking for the need (placed, or there already).
    fn make_room(
        &self,
        words: &'static [&'static str],
        slot: usize,
        hits: &mut Vec<Hit>,
        allowed: &dyn Fn(ToolId) -> bool,
    ) -> Option<ToolId> {
        let best = self.meets_need(words, allowed)?;
        let at = hits.iter().position(|h| h.tool == best.tool);
        if at.is_some_and(|at| at <= slot) {
            return Some(best.tool);
        }
        if let Some(at) = at {
            hits.remove(at);
        }
        let slot = slot.min(hits.len());
        // It takes the score of the hit it displaces, so scores stay in order.
        let score = hits.get(slot).map_or(best.score, |h| h.score);
        hits.insert(slot, Hit { tool: best.tool, score });
        Some(best.tool)
    }

    /// The ranking for a need's `words`, best first: the first [`NEED_RANKING_KEPT`] hits of
    /// the whole ranking, and whether that is all of it. Ranked at the first search that has
    /// the need, then kept: a long task request has one need or more, and ranking a need took
    /// a third of its search's scoring (`cargo bench -p toolgate-search --bench search --
    /// tasks/lexical`).
    fn need_ranking(&self, words: &'static [&'static str]) -> Option<Arc<NeedRanking>> {
        let (b, weights) = self.engine.lexical()?;
        if let Some(kept) = self.needs.0.lock().unwrap_or_else(|e| e.into_inner()).get(words) {
            return Some(kept.clone());
        }
        let (mut found, _) = self.rank_lexical(b, weights, words, &[]);
        let whole = found.len() <= NEED_RANKING_KEPT;
        self.top(&mut found, NEED_RANKING_KEPT);
        let needed = needed_terms(b, words);
        let best = found.into_iter().map(|h| (h, self.about_need(b, &needed, h.tool))).collect();
        let ranking = Arc::new(NeedRanking { best, whole });
        let mut kept = self.needs.0.lock().unwrap_or_else(|e| e.into_inner());
        Some(kept.entry(words).or_insert(ranking).clone())
    }

    /// The best tool for a need's words, if one is about the need.
    fn meets_need(&self, words: &'static [&'static str], allowed: &dyn Fn(ToolId) -> bool) -> Option<Hit> {
        let (b, weights) = self.engine.lexical()?;
        let ranking = self.need_ranking(words)?;
        // The best `NEED_CANDIDATES` of those allowed: from the kept ranking when it holds
        // that many of them (or is whole), else from the whole ranking again.
        let kept: Vec<(Hit, bool)> =
            ranking.best.iter().filter(|(h, _)| allowed(h.tool)).take(NEED_CANDIDATES).copied().collect();
        if kept.len() == NEED_CANDIDATES || ranking.whole {
            return kept.into_iter().find(|&(_, about)| about).map(|(h, _)| h);
        }
        let (mut found, _) = self.rank_lexical(b, weights, words, &[]);
        found.retain(|h| allowed(h.tool));
        self.top(&mut found, NEED_CANDIDATES);
        let needed = needed_terms(b, words);
        found.into_iter().find(|h| self.about_need(b, &needed, h.tool))
    }

    /// Whether `tool` is about a need whose words are `needed` (see [`needed_terms`]): only
    /// such a tool is worth a place. Its name has all of the need's words but one, and its
    /// name and description together all of them (all but one of three or more). A catalog
    /// without a clock should not offer the weather tool that takes a time.
    fn about_need(&self, b: &Bm25Index, needed: &[String], tool: ToolId) -> bool {
        let n = needed.len();
        let met = |text: &str, met: &mut [bool]| {
            b.analyzer().each_term(text, &mut |t| {
                if let Some(i) = needed.iter().position(|x| x == t) {
                    met[i] = true;
                }
            })
        };
        let count = |m: &[bool]| m.iter().filter(|&&x| x).count();
        let tool = self.catalog.tool(tool);
        let mut m = vec![false; n];
        met(tool.name(), &mut m);
        if count(&m) + 1 < n.max(2) {
            return false;
        }
        met(tool.description(), &mut m);
        count(&m) + usize::from(n >= 3) >= n
    }

    /// If `tool` is what one of the request's needs calls for, says so in `via` and adds the
    /// need's terms.
    pub(super) fn explain_need(
        &self,
        b: &Bm25Index,
        reading: &Reading<'_>,
        tool: ToolId,
        via: &mut String,
        terms: &mut Vec<TermExplanation>,
    ) {
        for need in &reading.needs {
            if self.meets_need(need.words, &|_| true).is_some_and(|h| h.tool == tool) {
                via.push_str(&format!(", needed: {} (for `{}`)", need.words.join(" "), need.cue));
                let weights = self.engine.lexical().map_or_else(Expansion::default, |(_, e)| e);
                terms.extend(self.explain_lexical(b, weights, need.words, &[], tool));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(q: &str) -> Vec<(String, String)> {
        let words: Vec<&str> = q.split_whitespace().collect();
        read(&words).needs.into_iter().map(|n| (n.words.join(" "), n.cue)).collect()
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn a_path_is_written_when_a_write_verb_governs_it() {
        assert_eq!(
            needs("Summarize the paper, then save it to /root/markdown/notes.md."),
            pairs(&[("write file", "/root/markdown/notes.md")])
        );
        assert_eq!(
            needs("Generate a PDF report titled report.pdf in /root/pdf"),
            pairs(&[("create pdf document", "report.pdf")])
        );
    }

    #[test]
    fn a_path_is_read_otherwise_and_the_clause_resets_the_verb() {
        assert_eq!(
            needs("Create a summary. Read /root/txt/a.txt and /root/excel/b.xlsx"),
            pairs(&[("read file", "/root/txt/a.txt"), ("read spreadsheet", "/root/excel/b.xlsx")])
        );
        assert_eq!(
            needs("Convert the list in /root/txt/refs.bib into a Word file saved at /root/word/refs.docx"),
            pairs(&[("read file", "/root/txt/refs.bib"), ("create word document", "/root/word/refs.docx")])
        );
        assert_eq!(
            needs("Read all the papers in /root/data/papers"),
            pairs(&[("list directory", "/root/data/papers")])
        );
    }

    #[test]
    fn paths_leave_the_words_and_addresses_stay() {
        let words: Vec<&str> = "fetch https://example.com/a/b and save to /root/x/y.md".split(' ').collect();
        let r = read(&words);
        assert_eq!(r.words, ["fetch", "https://example.com/a/b", "and", "save", "to"]);
        assert_eq!(
            r.needs.iter().map(|n| n.words.join(" ")).collect::<Vec<_>>(),
            ["fetch url", "write file"]
        );
    }

    #[test]
    fn not_paths() {
        for q in ["e.g. this", "version 1.2", "and/or", "50/50 split", "TCP/IP stack"] {
            assert_eq!(needs(q), [], "{q}");
        }
    }

    #[test]
    fn paths_inside_chinese_text_are_cut_out() {
        let words = ["文件在/server/logs/a.txt，请分析"];
        let r = read(&words);
        assert_eq!(r.words, ["文件在", "，请分析"]);
        assert_eq!(needs("识别这张图里的文字：https://example.com/poster.png"), []);
        assert_eq!(
            needs("总结这个网页：https://example.com/post"),
            pairs(&[("fetch url", "https://example.com/post")])
        );
    }

    #[test]
    fn a_directory_is_listed_whatever_its_name_says() {
        // Folder names are one benchmark's layout, not language: /root/pdf holds whatever it holds.
        assert_eq!(
            needs("Read all the papers in /root/pdf/papers"),
            pairs(&[("list directory", "/root/pdf/papers")])
        );
    }

    #[test]
    fn two_files_compared_need_a_diff() {
        assert_eq!(
            needs("Compare /root/txt/a.txt and /root/txt/b.txt"),
            pairs(&[("read file", "/root/txt/a.txt"), ("diff text", "compare")])
        );
        // "changed" asks what changed, not for a comparison of two files.
        assert_eq!(
            needs("What changed between /root/txt/a.txt and /root/txt/b.txt?"),
            pairs(&[("read file", "/root/txt/a.txt")])
        );
        assert_eq!(needs("compare /root/txt/a.txt with the web"), pairs(&[("read file", "/root/txt/a.txt")]));
    }

    #[test]
    fn a_directory_after_a_file_name_is_its_location() {
        assert_eq!(needs("insert clock.png under /root/picture"), pairs(&[("read image", "clock.png")]));
    }

    #[test]
    fn dates_are_arguments_not_words_of_the_request() {
        let words = |q: &str| {
            let w: Vec<&str> = q.split_whitespace().collect();
            read(&w).words.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>().join(" ")
        };
        assert_eq!(words("I need this done by next Friday at the latest."), "I need this done by");
        assert_eq!(words("get the latest news"), "get the latest news");
        assert_eq!(words("news of the past three days"), "news of the");
        assert_eq!(words("3 days ago"), "");
        assert_eq!(words("this is the last one"), "this is the last one");
        assert_eq!(words("list the next tasks"), "list the next tasks");
        assert_eq!(words("最晚下周五之前需要完成。"), "最晚 之前需要完成。");
        assert_eq!(words("明天北京的天气"), "北京的天气");
        assert_eq!(words("这是为接下来一周准备的"), "这是为 准备的");
        assert_eq!(words("周报怎么写"), "周报怎么写");
    }

    #[test]
    fn dates_and_time_frames_are_not_needs() {
        for q in [
            "train tickets for next Wednesday",
            "stay tomorrow for three days",
            "the last 24h of BTC",
            "how it changed over the past three days",
            "明天北京的天气",
            "I need this done by next Friday at the latest.",
            "today's top news",
        ] {
            assert_eq!(needs(q), [], "{q}");
        }
    }
}
