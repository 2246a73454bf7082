//! preselect: here are the tools a subject may see, the user's message and the system prompt,
//! give me the first turn's working set (EthanKit's `rankMcpTools`, step 3).
//!
//! The ranking is lexical, deterministic and explainable, with no model call:
//!
//! ```text
//! score = 12 × tool words in the user's message
//!       +  2 × tool words in the system prompt
//!       + 16 if the user's message names the tool's server
//!       +  3 if the system prompt names the tool's server
//!       +  3 if the tool is read-only (readOnlyHint, or the trusted read_only list)
//!       + read/write intent: on a read-shaped message, +8 for read-shaped tools, −32 for write tools
//!       + intent aliases: 12 (user) or 2 (system prompt) per alias group that names the tool
//! ```
//!
//! Tool words are the tool's name and description split into runs of Unicode letters and
//! digits, lower-cased and deduplicated; a hit is a tool word that is also a word of the text.
//! Aliases carry what a message says in other words, in English and Chinese (`PR`, `合并请求`
//! → `pull_request`; `工单` → `issue`; `评审` → `review`; `日志` → `log`; ...), to tool names.
//! A message is read-shaped when it has a read signal (`list`, `recent`, `summary`, `review`,
//! `查询`, `列出`, `最近`, ...) and no write signal (`create`, `delete`, `发送`, ...): a message
//! that asks for both gets no correction. The correction ranks, it never permits: permission
//! is the policy's.
//!
//! Ties go by qualified name. Each server gets at most [`FAIRNESS_CAP`] tools (12), fewer when
//! its `max_active` is stricter, so one large server cannot crowd out the others; the total is
//! bounded by the first-turn capacity. Every candidate is ranked even at score 0, so the first
//! turn fills up to the caps (EthanKit's: 4 servers × 40 tools give 12 per server).

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use crate::catalog::{Tool, ToolId};

/// Most tools one server gets in the first turn (EthanKit's), before its `max_active`.
pub const FAIRNESS_CAP: usize = 12;

/// Weight of a tool word found in the user's message.
pub const USER_TERM: i64 = 12;
/// Weight of a tool word found in the system prompt.
pub const SYSTEM_TERM: i64 = 2;
/// Bonus when the user's message names the tool's server.
pub const USER_SERVER: i64 = 16;
/// Bonus when the system prompt names the tool's server.
pub const SYSTEM_SERVER: i64 = 3;
/// Bonus of a read-only tool.
pub const READ_ONLY: i64 = 3;
/// Bonus of a read-shaped tool on a read-shaped message.
pub const READ_INTENT: i64 = 8;
/// Penalty of a write tool on a read-shaped message.
pub const WRITE_ON_READ: i64 = -32;
/// Bonus per alias group of the user's message that names the tool.
pub const USER_ALIAS: i64 = 12;
/// Bonus per alias group of the system prompt that names the tool.
pub const SYSTEM_ALIAS: i64 = 2;

/// One group of intent aliases: what a message may say, and the tool-name words it means.
struct Alias {
    phrases: &'static [&'static str],
    targets: &'static [&'static str],
}

/// Phrases are matched as whole words (ASCII) or as substrings (Chinese); targets as
/// consecutive words of the tool's name (`pull_request`, `createPullRequest`), plural or not.
const ALIASES: &[Alias] = &[
    Alias {
        phrases: &["pr", "prs", "mr", "合并请求", "拉取请求"],
        targets: &["pull_request", "merge_request"],
    },
    Alias {
        phrases: &["ticket", "tickets", "bug", "bugs", "工单", "问题单", "缺陷"],
        targets: &["issue", "ticket"],
    },
    Alias { phrases: &["评审", "审查", "审核", "code review"], targets: &["review"] },
    Alias { phrases: &["logs", "日志"], targets: &["log"] },
    Alias { phrases: &["提交记录", "提交历史"], targets: &["commit"] },
    Alias { phrases: &["分支"], targets: &["branch"] },
    Alias { phrases: &["repo", "repos", "仓库", "代码库"], targets: &["repository", "repo"] },
    Alias { phrases: &["文件"], targets: &["file"] },
    Alias { phrases: &["目录", "文件夹", "folder"], targets: &["directory", "dir", "folder"] },
    Alias { phrases: &["截图", "截屏"], targets: &["screenshot"] },
    Alias {
        phrases: &["网页", "页面", "浏览器", "website", "webpage"],
        targets: &["page", "browser", "navigate", "url"],
    },
    Alias { phrases: &["邮件", "e-mail", "mail"], targets: &["email", "mail"] },
    Alias { phrases: &["消息", "msg"], targets: &["message"] },
    Alias { phrases: &["频道"], targets: &["channel"] },
    Alias { phrases: &["日历", "日程", "schedule"], targets: &["calendar", "event"] },
    Alias { phrases: &["会议"], targets: &["meeting"] },
    Alias { phrases: &["数据库", "db", "sql"], targets: &["database", "query", "sql"] },
    Alias { phrases: &["文档", "doc", "docs"], targets: &["document", "doc"] },
    Alias { phrases: &["任务", "todo"], targets: &["task", "todo"] },
    Alias { phrases: &["评论", "回复"], targets: &["comment"] },
    Alias { phrases: &["部署"], targets: &["deploy", "deployment"] },
    Alias { phrases: &["发布版本", "版本发布"], targets: &["release"] },
    Alias { phrases: &["标签"], targets: &["label", "tag"] },
    Alias { phrases: &["用户"], targets: &["user"] },
    Alias { phrases: &["通知"], targets: &["notification"] },
    Alias { phrases: &["天气"], targets: &["weather", "forecast"] },
    Alias { phrases: &["翻译"], targets: &["translate", "translation"] },
    Alias { phrases: &["地图", "路线", "导航"], targets: &["map", "route", "directions"] },
    Alias { phrases: &["搜索", "查找", "lookup"], targets: &["search", "find"] },
];

/// Words and phrases that make a message read-shaped (EthanKit's: 查询、列出、最近、summary、review).
const READ_SIGNALS: &[&str] = &[
    "list",
    "show",
    "find",
    "search",
    "get",
    "read",
    "view",
    "check",
    "look",
    "summary",
    "summarize",
    "summarise",
    "review",
    "recent",
    "latest",
    "status",
    "what",
    "which",
    "query",
    "fetch",
    "inspect",
    "查询",
    "列出",
    "最近",
    "查看",
    "查找",
    "搜索",
    "显示",
    "获取",
    "读取",
    "总结",
    "摘要",
    "统计",
    "看看",
    "查一下",
    "有哪些",
    "是什么",
    "状态",
    "评审",
];

/// Words and phrases that make a message write-shaped.
const WRITE_SIGNALS: &[&str] = &[
    "create", "update", "delete", "remove", "push", "send", "write", "edit", "post", "merge", "close", "add",
    "modify", "rename", "move", "upload", "publish", "deploy", "submit", "reply", "assign", "创建", "新建",
    "更新", "修改", "删除", "发送", "推送", "写入", "编辑", "上传", "关闭", "添加", "移除", "部署", "回复",
];

/// Verbs of read-shaped tools (EthanKit's: list, search, get, read, find, view, download).
const READ_VERBS: &[&str] =
    &["list", "search", "get", "read", "find", "view", "download", "fetch", "query", "show", "describe"];

/// Verbs of write tools (EthanKit's: create, update, delete, push, send, ...).
const WRITE_VERBS: &[&str] = &[
    "create", "update", "delete", "push", "send", "write", "remove", "edit", "post", "put", "patch", "merge",
    "close", "add", "set", "insert", "modify", "move", "rename", "upload", "publish", "drop", "reset",
    "revert", "deploy", "submit", "comment", "reply", "assign", "archive", "cancel", "kill",
];

/// One tool the first turn may pick: a visible, deferred, not required tool of an `auto`
/// server.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// The tool's id in the catalog the caller works with.
    pub id: ToolId,
    /// The tool.
    pub tool: &'a Tool,
    /// Whether it counts as read-only ([`Policy::is_read_only`](crate::policy::Policy::is_read_only)).
    pub read_only: bool,
}

/// The limits of one preselection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreselectParams {
    /// How many tools may be chosen in total (the first-turn budget minus core tools,
    /// meta-tools and required tools).
    pub capacity: usize,
    /// Most tools per server ([`FAIRNESS_CAP`]).
    pub per_server_cap: usize,
    /// A stricter limit for some servers (`max_active` minus the server's required tools).
    pub room: BTreeMap<String, usize>,
}

impl PreselectParams {
    /// `capacity` in total, [`FAIRNESS_CAP`] per server.
    pub fn new(capacity: usize) -> PreselectParams {
        PreselectParams { capacity, per_server_cap: FAIRNESS_CAP, room: BTreeMap::new() }
    }

    fn limit(&self, server: &str) -> usize {
        self.room.get(server).copied().unwrap_or(usize::MAX).min(self.per_server_cap)
    }
}

/// The parts of one tool's score, for `--explain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Score {
    /// Tool words found in the user's message.
    pub user_terms: u32,
    /// Tool words found in the system prompt.
    pub system_terms: u32,
    /// The user's message names the tool's server.
    pub user_server: bool,
    /// The system prompt names the tool's server.
    pub system_server: bool,
    /// The tool is read-only.
    pub read_only: bool,
    /// The read/write intent correction (+8, −32 or 0).
    pub intent: i64,
    /// The alias bonus.
    pub alias: i64,
}

impl Score {
    /// The total, by the formula in the module doc.
    pub fn total(&self) -> i64 {
        USER_TERM * i64::from(self.user_terms)
            + SYSTEM_TERM * i64::from(self.system_terms)
            + if self.user_server { USER_SERVER } else { 0 }
            + if self.system_server { SYSTEM_SERVER } else { 0 }
            + if self.read_only { READ_ONLY } else { 0 }
            + self.intent
            + self.alias
    }
}

impl fmt::Display for Score {
    /// The non-zero parts and the total, for `--explain`: `12×2 user words + 3 read-only = 27`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.user_terms > 0 {
            parts.push(format!("{USER_TERM}×{} user words", self.user_terms));
        }
        if self.system_terms > 0 {
            parts.push(format!("{SYSTEM_TERM}×{} system-prompt words", self.system_terms));
        }
        if self.user_server {
            parts.push(format!("{USER_SERVER} server named by the user"));
        }
        if self.system_server {
            parts.push(format!("{SYSTEM_SERVER} server named by the system prompt"));
        }
        if self.read_only {
            parts.push(format!("{READ_ONLY} read-only"));
        }
        match self.intent {
            0 => {}
            READ_INTENT => parts.push(format!("{READ_INTENT} read tool for a read request")),
            n => parts.push(format!("{n} write tool for a read request")),
        }
        if self.alias != 0 {
            parts.push(format!("{} aliases", self.alias));
        }
        if parts.is_empty() {
            return f.write_str("0");
        }
        write!(f, "{} = {}", parts.join(" + ").replace("+ -", "- "), self.total())
    }
}

/// One ranked candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scored {
    /// The tool.
    pub tool: ToolId,
    /// Its qualified name.
    pub name: String,
    /// Its score.
    pub score: Score,
    /// Whether it was chosen.
    pub chosen: bool,
}

/// The first turn's working set.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Preselection {
    /// The tools to activate, in order: required tools first (by qualified name), then the
    /// ranked picks, best first.
    pub chosen: Vec<ToolId>,
    /// How many of `chosen` (at its front) are required.
    pub required: usize,
    /// Tools chosen per server (required ones included).
    pub per_server: BTreeMap<String, usize>,
    /// Every ranked candidate, best first, with its score parts.
    pub scores: Vec<Scored>,
}

/// A text split into lower-case words.
#[derive(Debug, Clone, Default)]
struct Words {
    lower: String,
    seq: Vec<String>,
    set: HashSet<String>,
}

impl Words {
    fn new(text: &str) -> Words {
        let lower = text.to_lowercase();
        let seq = words(&lower);
        let set = seq.iter().cloned().collect();
        Words { lower, seq, set }
    }

    /// Whether the text says `phrase`: a run of whole words for ASCII phrases, a substring
    /// otherwise (Chinese has no spaces between words).
    fn says(&self, phrase: &str) -> bool {
        if !phrase.is_ascii() {
            return self.lower.contains(phrase);
        }
        let needle = words(phrase);
        match needle.len() {
            0 => false,
            1 => self.set.contains(&needle[0]),
            n => self.seq.windows(n).any(|w| w == needle.as_slice()),
        }
    }
}

/// Runs of Unicode letters and digits.
fn words(lower: &str) -> Vec<String> {
    lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_owned).collect()
}

/// The words of a tool name, with camelCase split too, lower-cased and with a plural `s`
/// dropped: `createPullRequests` → create, pull, request.
fn name_words(name: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(name.len() + 8);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && prev_lower {
            spaced.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        spaced.push(c);
    }
    words(&spaced.to_lowercase()).into_iter().map(|w| singular(&w).to_owned()).collect()
}

/// `issues` → `issue`; `status`, `access` and `analysis` stay.
fn singular(w: &str) -> &str {
    match w.strip_suffix('s') {
        Some(stem) if stem.len() >= 3 && !stem.ends_with(['s', 'u', 'i']) => stem,
        _ => w,
    }
}

/// The user's message and the system prompt, read once.
#[derive(Debug, Clone)]
pub struct Context {
    user: Words,
    system: Words,
    read_intent: bool,
    user_aliases: Vec<usize>,
    system_aliases: Vec<usize>,
}

impl Context {
    /// Reads the two texts.
    pub fn new(user_message: &str, system_prompt: &str) -> Context {
        let user = Words::new(user_message);
        let system = Words::new(system_prompt);
        let read_intent =
            READ_SIGNALS.iter().any(|s| user.says(s)) && !WRITE_SIGNALS.iter().any(|s| user.says(s));
        let aliases = |w: &Words| -> Vec<usize> {
            (0..ALIASES.len()).filter(|&i| ALIASES[i].phrases.iter().any(|p| w.says(p))).collect()
        };
        let user_aliases = aliases(&user);
        let system_aliases = aliases(&system);
        Context { user, system, read_intent, user_aliases, system_aliases }
    }

    /// Whether the user's message is read-shaped (a read signal and no write signal).
    #[cfg(test)]
    pub(crate) fn read_intent(&self) -> bool {
        self.read_intent
    }

    /// The score of one candidate.
    pub fn score(&self, c: &Candidate<'_>) -> Score {
        let tool = c.tool;
        let mut tool_words: Vec<String> =
            words(&format!("{} {}", tool.name(), tool.description()).to_lowercase());
        tool_words.sort_unstable();
        tool_words.dedup();
        let hits = |w: &Words| tool_words.iter().filter(|t| w.set.contains(*t)).count() as u32;
        let server = tool.server().to_lowercase();
        let names = name_words(tool.name());
        let write = !c.read_only && names.iter().any(|w| WRITE_VERBS.contains(&w.as_str()));
        let read_shaped = !write && names.iter().any(|w| READ_VERBS.contains(&w.as_str()));
        let intent = match (self.read_intent, write, read_shaped) {
            (true, true, _) => WRITE_ON_READ,
            (true, false, true) => READ_INTENT,
            _ => 0,
        };
        let names_alias =
            |i: &usize| ALIASES[*i].targets.iter().any(|t| contains_run(&names, &name_words(t)));
        let alias = USER_ALIAS * self.user_aliases.iter().filter(|i| names_alias(i)).count() as i64
            + SYSTEM_ALIAS * self.system_aliases.iter().filter(|i| names_alias(i)).count() as i64;
        Score {
            user_terms: hits(&self.user),
            system_terms: hits(&self.system),
            user_server: !server.is_empty() && self.user.says(&server),
            system_server: !server.is_empty() && self.system.says(&server),
            read_only: c.read_only,
            intent,
            alias,
        }
    }
}

/// Whether `needle` occurs as consecutive words of `hay`.
fn contains_run(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Ranks `candidates` against the user's message and the system prompt and picks the best
/// within `params`: per server at most [`PreselectParams::per_server_cap`] (or its `room`),
/// in total at most [`PreselectParams::capacity`]. Ties go by qualified name.
pub fn preselect(
    candidates: &[Candidate<'_>],
    user_message: &str,
    system_prompt: &str,
    params: &PreselectParams,
) -> Preselection {
    let ctx = Context::new(user_message, system_prompt);
    let mut scored: Vec<(Scored, &str)> = candidates
        .iter()
        .map(|c| {
            let s = Scored {
                tool: c.id,
                name: c.tool.qualified_name().to_owned(),
                score: ctx.score(c),
                chosen: false,
            };
            (s, c.tool.server())
        })
        .collect();
    scored.sort_by(|(a, _), (b, _)| b.score.total().cmp(&a.score.total()).then_with(|| a.name.cmp(&b.name)));
    let mut out = Preselection::default();
    for (s, server) in &mut scored {
        if out.chosen.len() >= params.capacity {
            break;
        }
        let n = out.per_server.get(*server).copied().unwrap_or(0);
        if n >= params.limit(server) {
            continue;
        }
        s.chosen = true;
        out.chosen.push(s.tool);
        out.per_server.insert((*server).to_owned(), n + 1);
    }
    out.scores = scored.into_iter().map(|(s, _)| s).collect();
    out
}

#[cfg(test)]
mod tests;
