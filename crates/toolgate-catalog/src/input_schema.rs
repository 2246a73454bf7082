//! A tool's input schema held compactly: its canonical JSON text and the words search reads,
//! parsed into a [`Value`] only when something needs the document itself.
//!
//! A `serde_json::Value` costs several times its text (a map per object, a string per key), and
//! of 100,000 tools a gateway renders or validates a few dozen. So the catalog keeps the text
//! (which is also what the definition hash reads) and the property names and descriptions the
//! index reads, and parses the document on first use, once.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

use super::write_canonical;

/// How deep [`InputSchema`] looks for words: deeper nesting is not read for search.
const MAX_DEPTH: usize = 12;

/// What ends each word of [`InputSchema::words`] where they are kept.
const WORD_END: char = '\0';

/// The JSON Schema of a tool's arguments.
///
/// Built from a [`Value`] (`InputSchema::from(value)`); it keeps the canonical JSON (keys
/// sorted, no white space) and the words search reads, and gives the document back as a
/// [`Value`] through [`InputSchema::value`], parsed on the first call and kept.
pub struct InputSchema {
    /// Canonical JSON.
    text: Box<str>,
    /// The property names and descriptions, each followed by a NUL (a NUL inside one is held
    /// as a space: search reads neither as a letter).
    words: Box<str>,
    /// The document, once something asked for it: boxed, since most tools never parse it and
    /// a box is a quarter of a `Value` in every tool.
    parsed: OnceLock<Box<Value>>,
}

impl InputSchema {
    /// An object schema without properties: `{"type": "object", "properties": {}}` (every
    /// tool's until it is given its own, so written out rather than built from a document).
    pub fn empty_object() -> InputSchema {
        InputSchema {
            text: r#"{"properties":{},"type":"object"}"#.into(),
            words: "".into(),
            parsed: OnceLock::new(),
        }
    }

    /// The document. Parsed from the text on the first call, and kept for the next ones.
    pub fn value(&self) -> &Value {
        self.parsed.get_or_init(|| {
            Box::new(serde_json::from_str(&self.text).expect("canonical JSON written here parses"))
        })
    }

    /// The document without keeping it: the parsed one if something asked for it before,
    /// otherwise parsed for this caller alone (for reading every tool of a catalog once).
    pub fn value_once(&self) -> Cow<'_, Value> {
        match self.parsed.get() {
            Some(v) => Cow::Borrowed(&**v),
            None => Cow::Owned(serde_json::from_str(&self.text).expect("canonical JSON written here parses")),
        }
    }

    /// The canonical JSON text: object keys sorted by their UTF-8 bytes, no white space.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Every property name and description, recursively through `properties`, `items`,
    /// `additionalProperties`, `anyOf`, `oneOf` and `allOf` (12 levels at most), in the order
    /// search reads them: keys in sorted order, a property's name, then its description, then
    /// what it holds.
    pub fn words(&self) -> impl Iterator<Item = &str> + '_ {
        self.words.split_terminator(WORD_END)
    }
}

impl From<Value> for InputSchema {
    fn from(value: Value) -> InputSchema {
        InputSchema::from(&value)
    }
}

impl From<&Value> for InputSchema {
    /// Reads the document; nothing of it is kept but the text and the words.
    fn from(value: &Value) -> InputSchema {
        let mut text = String::new();
        write_canonical(value, &mut text);
        let mut words = String::new();
        schema_words(value, 0, &mut |w| {
            words.extend(w.chars().map(|c| if c == WORD_END { ' ' } else { c }));
            words.push(WORD_END);
        });
        InputSchema {
            text: text.into(),
            words: words.into(),
            // Not kept: most tools of a large catalog are never rendered.
            parsed: OnceLock::new(),
        }
    }
}

impl Clone for InputSchema {
    /// A copy of the text and words; the parsed document, if any, is not copied.
    fn clone(&self) -> InputSchema {
        InputSchema { text: self.text.clone(), words: self.words.clone(), parsed: OnceLock::new() }
    }
}

impl PartialEq for InputSchema {
    fn eq(&self, other: &InputSchema) -> bool {
        self.text == other.text
    }
}

impl Eq for InputSchema {}

impl fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InputSchema({})", self.text)
    }
}

/// Calls `emit` with every property name and description of a JSON Schema (see
/// [`InputSchema::words`]).
fn schema_words(schema: &Value, depth: usize, emit: &mut dyn FnMut(&str)) {
    let Value::Object(map) = schema else { return };
    if depth > MAX_DEPTH {
        return;
    }
    // One pass over the keys (a schema object is a sorted map: lookups by key cost compares).
    for (key, value) in map {
        match (key.as_str(), value) {
            ("properties", Value::Object(props)) => {
                for (name, sub) in props {
                    emit(name);
                    if let Some(Value::String(d)) = sub.get("description") {
                        emit(d);
                    }
                    schema_words(sub, depth + 1, emit);
                }
            }
            ("items" | "additionalProperties", sub @ Value::Object(_)) => {
                if let Some(Value::String(d)) = sub.get("description") {
                    emit(d);
                }
                schema_words(sub, depth + 1, emit);
            }
            ("anyOf" | "oneOf" | "allOf", Value::Array(subs)) => {
                for sub in subs {
                    if let Some(Value::String(d)) = sub.get("description") {
                        emit(d);
                    }
                    schema_words(sub, depth + 1, emit);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_text_is_canonical_and_the_document_comes_back_whole() {
        let doc = json!({"type": "object", "required": ["q"], "properties": {"q": {"type": "string", "description": "the query"}}});
        let s = InputSchema::from(doc.clone());
        assert_eq!(
            s.text(),
            r#"{"properties":{"q":{"description":"the query","type":"string"}},"required":["q"],"type":"object"}"#
        );
        assert_eq!(s.value(), &doc);
        assert_eq!(s, InputSchema::from(serde_json::from_str::<Value>(s.text()).unwrap()));
    }

    #[test]
    fn words_are_names_then_descriptions_in_key_order_through_nesting() {
        let s = InputSchema::from(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "where"},
                "filter": {
                    "type": "object",
                    "description": "what to keep",
                    "properties": {"glob": {"description": "a pattern"}},
                },
                "tags": {"type": "array", "items": {"description": "one tag", "properties": {"name": {}}}},
                "mode": {"anyOf": [{"description": "fast"}, {"description": "slow"}]},
            },
        }));
        let words: Vec<&str> = s.words().collect();
        assert_eq!(
            words,
            [
                "filter",
                "what to keep",
                "glob",
                "a pattern",
                "mode",
                "fast",
                "slow",
                "path",
                "where",
                "tags",
                "one tag",
                "name"
            ]
        );
        assert_eq!(InputSchema::empty_object().words().count(), 0);
        assert_eq!(
            InputSchema::empty_object(),
            InputSchema::from(json!({"type": "object", "properties": {}}))
        );
    }

    #[test]
    fn an_empty_word_stays_a_word_and_a_nul_in_one_does_not_split_it() {
        let s = InputSchema::from(json!({
            "properties": {"a": {"description": ""}, "b\u{0}c": {"description": "x\u{0}y"}},
        }));
        assert_eq!(s.words().collect::<Vec<_>>(), ["a", "", "b c", "x y"]);
        assert_eq!(InputSchema::from(json!({"properties": {"": {}}})).words().collect::<Vec<_>>(), [""]);
    }

    /// A catalog holds one spec per tool: at 100,000 tools each 16 bytes are 1.6 MB, and the
    /// allocator rounds an `Arc<ToolSpec>` up to its next size class (192 bytes now, 256 before).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_tool_spec_fits_its_size_class() {
        assert!(std::mem::size_of::<InputSchema>() <= 48, "{}", std::mem::size_of::<InputSchema>());
        assert!(std::mem::size_of::<crate::ToolSpec>() <= 176, "{}", std::mem::size_of::<crate::ToolSpec>());
    }

    #[test]
    fn words_stop_at_the_depth_limit() {
        let mut deep = json!({"properties": {"leaf": {}}});
        for i in 0..20 {
            deep = json!({"properties": {format!("p{i}"): deep}});
        }
        let n = InputSchema::from(deep).words().count();
        assert_eq!(n, MAX_DEPTH + 1);
    }
}
