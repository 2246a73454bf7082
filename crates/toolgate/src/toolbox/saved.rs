//! saved: a [`Conversation`] as JSON, so that a session can outlive the process that served it
//! (a gateway's session store) and resume in another toolbox.
//!
//! The saved form holds names, servers and definition hashes, never ids or definitions, so it
//! is small and meets any toolbox: read back, it has met none yet, and the first operation
//! ([`Toolbox::resume`](crate::Toolbox::resume)) checks it against the current catalog and
//! policy, as after any catalog change.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{Conversation, Shown};
use crate::budget::Recency;
use crate::catalog::DefinitionHash;
use crate::session::ActiveSet;

/// The version of the saved form; a record of another version is refused, not guessed at.
const VERSION: u64 = 1;

/// A saved conversation that could not be read back: what was wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSavedConversation(pub String);

impl std::fmt::Display for BadSavedConversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "saved conversation: {}", self.0)
    }
}

impl std::error::Error for BadSavedConversation {}

impl Conversation {
    /// The conversation as JSON: its active set in order, when each tool was last used, the
    /// definitions it was shown (server and hash per name), the changes not yet told, and its
    /// announcement (so that it stays byte-identical).
    pub fn to_json(&self) -> Value {
        let shown: Map<String, Value> = self
            .shown
            .iter()
            .map(|(name, s)| (name.clone(), json!([s.server, s.hash.to_string()])))
            .collect();
        let (clock, used) = self.recency.parts();
        let used: Map<String, Value> = used.iter().map(|(name, &at)| (name.clone(), json!(at))).collect();
        json!({
            "version": VERSION,
            "active": self.active.active(),
            "clock": clock,
            "used": used,
            "shown": shown,
            "changed": self.changed,
            "announcement": self.announcement.as_deref(),
        })
    }

    /// Reads back what [`Conversation::to_json`] wrote. The conversation has met no toolbox:
    /// the next operation re-checks every tool in it against the current catalog and policy.
    pub fn from_json(saved: &Value) -> Result<Conversation, BadSavedConversation> {
        let bad = |why: String| BadSavedConversation(why);
        let object = saved.as_object().ok_or_else(|| bad(format!("not an object: {}", kind(saved))))?;
        match object.get("version").and_then(Value::as_u64) {
            Some(VERSION) => {}
            other => return Err(bad(format!("version {other:?}, this build reads version {VERSION}"))),
        }
        let names = |key: &str| -> Result<Vec<String>, BadSavedConversation> {
            let list = object
                .get(key)
                .and_then(Value::as_array)
                .ok_or_else(|| bad(format!("`{key}` is not a list")))?;
            list.iter()
                .map(|v| {
                    v.as_str().map(str::to_owned).ok_or_else(|| bad(format!("`{key}` holds {}", kind(v))))
                })
                .collect()
        };
        let active = names("active")?;
        let changed = names("changed")?;
        let clock = object
            .get("clock")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad("`clock` is not a number".into()))?;
        let mut used = HashMap::new();
        for (name, at) in map(object, "used")? {
            let at = at.as_u64().ok_or_else(|| bad(format!("`used.{name}` is not a number")))?;
            used.insert(name.clone(), at);
        }
        let mut shown = HashMap::new();
        for (name, entry) in map(object, "shown")? {
            let pair = entry.as_array().filter(|a| a.len() == 2);
            let server = pair.and_then(|a| a[0].as_str());
            let hash = pair.and_then(|a| a[1].as_str()).and_then(parse_hash);
            let (Some(server), Some(hash)) = (server, hash) else {
                return Err(bad(format!("`shown.{name}` is not [server, 64 hex digits]")));
            };
            shown.insert(name.clone(), Shown { server: server.to_owned(), hash });
        }
        let announcement = match object.get("announcement") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(Arc::from(text.as_str())),
            Some(other) => return Err(bad(format!("`announcement` is {}", kind(other)))),
        };
        let mut session = ActiveSet::new();
        session.activate(active.iter().map(String::as_str));
        Ok(Conversation {
            stamp: 0,
            active: session,
            recency: Recency::from_parts(clock, used),
            shown,
            changed,
            announcement,
            news: None,
            in_search: false,
        })
    }
}

fn map<'a>(
    object: &'a Map<String, Value>,
    key: &str,
) -> Result<&'a Map<String, Value>, BadSavedConversation> {
    object
        .get(key)
        .and_then(Value::as_object)
        .ok_or_else(|| BadSavedConversation(format!("`{key}` is not an object")))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A definition hash from its 64 lower-case hex digits (as `Display` writes it).
fn parse_hash(hex: &str) -> Option<DefinitionHash> {
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut bytes = [0u8; 32];
    for (i, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(DefinitionHash::from_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{Catalog, Conversation, Policy, Toolbox};

    const SHOT: &str = "playwright__playwright_screenshot";

    /// A permissive toolbox over the embedded catalog and a conversation that searched for
    /// [`SHOT`] and was shown it.
    fn shown_a_screenshot_tool() -> (Toolbox, Conversation) {
        let toolbox = Toolbox::builder(&Catalog::embedded(), Policy::permissive()).build().unwrap();
        let mut chat = toolbox.conversation();
        toolbox
            .tool_search(&mut chat, &json!({"query": "take a screenshot of a web page", "limit": 3}))
            .unwrap();
        toolbox.tools(&mut chat).unwrap();
        (toolbox, chat)
    }

    #[test]
    fn a_saved_conversation_reads_back_and_still_may_call_what_it_was_shown() {
        let (toolbox, chat) = shown_a_screenshot_tool();
        let saved = chat.to_json();
        let mut back = Conversation::from_json(&saved).unwrap();
        assert_eq!(back.active(), chat.active());
        assert_eq!(back.to_json(), saved, "the saved form is stable");
        assert!(toolbox.check(&mut back, SHOT, &json!({"name": "page"})).is_allow());
        // Through text, as a store keeps it.
        let text = serde_json::to_string(&saved).unwrap();
        let again = Conversation::from_json(&serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(again.active(), chat.active());
    }

    #[test]
    fn a_resumed_conversation_is_checked_against_the_policy_of_now() {
        let (_, chat) = shown_a_screenshot_tool();
        let saved = chat.to_json();
        let config = toolgate_config("[policy]\ndeny = [\"playwright__*\"]\n");
        let strict = Toolbox::builder(&Catalog::embedded(), config).build().unwrap();
        let mut back = Conversation::from_json(&saved).unwrap();
        assert!(!strict.check(&mut back, SHOT, &json!({"name": "page"})).is_allow());
        let listed = strict.tools(&mut back).unwrap();
        assert!(listed.iter().all(|t| !t.qualified_name().starts_with("playwright__")));
    }

    fn toolgate_config(text: &str) -> Policy {
        let config: crate::config::Config =
            crate::config::Config::from_toml("test", text, std::path::Path::new(".")).unwrap();
        Policy::new(&config, None).unwrap()
    }

    #[test]
    fn a_damaged_record_is_refused_with_what_was_wrong() {
        let cases = [
            (json!([]), "not an object"),
            (json!({"version": 9}), "version"),
            (json!({"version": 1, "active": "x"}), "`active` is not a list"),
            (
                json!({"version": 1, "active": [], "changed": [], "clock": 0, "used": {},
                       "shown": {"a__b": ["a", "zz"]}}),
                "`shown.a__b`",
            ),
        ];
        for (saved, needle) in cases {
            let error = Conversation::from_json(&saved).unwrap_err().to_string();
            assert!(error.contains(needle), "{saved}: {error}");
        }
    }
}
