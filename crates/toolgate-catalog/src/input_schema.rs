//! A tool's input schema held compactly: its canonical JSON text and the words search reads,
//! parsed into a [`Value`] only when something needs the document itself.
//!
//! A `serde_json::Value` costs several times its text (a map per object, a string per key), and
//! of 100,000 tools a gateway renders or validates a few dozen. So the catalog keeps the text
//! (which is also what the definition hash reads) and the property names and descriptions the
//! index reads, and parses the document on first use, once. Each of those words is kept as
//! where the text holds it, when it does (a word with characters JSON escapes, or hidden in a
//! packed sequence, is kept whole): kept apart, the words of 100,000 tools were 11 MB, and the
//! gateway serving them peaked 7-10 MB higher.
//!
//! The text is kept packed: each of a few byte sequences that JSON Schemas repeat (`"type":
//! "string"`, `"properties":{`, ...) is held as one control character, which canonical JSON
//! never holds as it is (JSON escapes every one inside a string), and written out again when the
//! text is read. The packed text is still a `str`, so a word is lent from it as it is. Packing
//! takes a third to two fifths off the schema text of real catalogs (at 100,000 tools, 24 MB
//! held instead of 39).

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

use super::write_canonical_onto;

/// How deep [`InputSchema`] looks for words: deeper nesting is not read for search.
const MAX_DEPTH: usize = 12;

/// How deep the outline of [`InputSchema::property_names`] goes.
const OUTLINE_DEPTH: usize = 8;

/// The first byte of a word's entry in [`InputSchema`]'s list of words: what follows is a span
/// of the packed text (its start and its length), not the word's length and bytes.
const SPAN: u8 = 1;

/// ... and the word is a property name of the schema's outline.
const OUTLINED: u8 = 2;

/// Appends `n` to `out`, seven bits a byte, the low ones first, the high bit set on every byte
/// but the last.
fn put_varint(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// The number [`put_varint`] wrote at the start of `bytes`, and what follows it.
fn varint(bytes: &[u8]) -> (usize, &[u8]) {
    let (mut n, mut shift) = (0usize, 0);
    for (i, &b) in bytes.iter().enumerate() {
        n |= usize::from(b & 0x7F) << shift;
        if b < 0x80 {
            return (n, &bytes[i + 1..]);
        }
        shift += 7;
    }
    (n, &[])
}

/// Where `needle` first occurs in `hay`. A schema's text is short and most words occur in it,
/// most of them at one of the first places their first byte does: looking there is quicker
/// than preparing a searcher for each word. Past those few places the searcher takes over, its
/// time linear in the text: compared at every place its first byte occurs, a word of a schema
/// of long runs of one letter would take the square of its length.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    const TRIED: usize = 8;
    let Some((&first, _)) = needle.split_first() else { return Some(0) };
    let mut places = memchr::memchr_iter(first, hay);
    for at in places.by_ref().take(TRIED) {
        if hay[at..].starts_with(needle) {
            return Some(at);
        }
    }
    let from = places.next()?;
    memchr::memmem::find(&hay[from..], needle).map(|at| from + at)
}

/// Appends `word`'s entry to `list`: where `packed` holds its bytes, if it does, else the word
/// itself.
fn put_word(list: &mut Vec<u8>, packed: &[u8], word: &str, outlined: bool) {
    let kind = if outlined { OUTLINED } else { 0 };
    match find(packed, word.as_bytes()) {
        Some(start) => {
            list.push(kind | SPAN);
            put_varint(list, start);
            put_varint(list, word.len());
        }
        None => {
            list.push(kind);
            put_varint(list, word.len());
            list.extend_from_slice(word.as_bytes());
        }
    }
}

/// The byte sequences a packed text holds as one byte, longest first, with that byte: thirteen
/// control characters, which JSON text holds only escaped. Each is a JSON Schema keyword with
/// its usual value as canonical JSON writes it; every sequence begins with a quote.
const PACKED: [(&[u8], u8); 13] = [
    (br#""$schema":"http://json-schema.org/draft-07/schema#""#, 0x01),
    (br#""additionalProperties":false"#, 0x02),
    (br#""description":""#, 0x03),
    (br#""type":"boolean""#, 0x04),
    (br#""type":"integer""#, 0x05),
    (br#""properties":{"#, 0x06),
    (br#""type":"number""#, 0x07),
    (br#""type":"object""#, 0x08),
    (br#""type":"string""#, 0x09),
    (br#""required":[""#, 0x0A),
    (br#""type":"array""#, 0x0B),
    (br#""default":"#, 0x0C),
    (br#""title":""#, 0x0D),
];

/// Whether `b` stands for a sequence of [`PACKED`] (no byte of canonical JSON does).
fn is_packed(b: u8) -> bool {
    (0x01..=0x0D).contains(&b)
}

/// Appends `text` to `out` with every sequence of [`PACKED`] (leftmost first, the longest where
/// several begin at one byte) held as its byte.
fn pack_onto(text: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'"'
            && let Some(&(seq, byte)) = PACKED.iter().find(|(seq, _)| text[i..].starts_with(seq))
        {
            out.push(byte);
            i += seq.len();
            continue;
        }
        out.push(text[i]);
        i += 1;
    }
}

/// `text` packed (see [`pack_onto`]).
fn pack(text: &str) -> Box<str> {
    let mut out = Vec::with_capacity(text.len());
    pack_onto(text.as_bytes(), &mut out);
    String::from_utf8(out).expect("packing a str into control characters keeps it a str").into()
}

/// Buffers a thread reuses for every schema it reads.
#[derive(Default)]
struct Scratch {
    text: Vec<u8>,
    packed: Vec<u8>,
    words: Vec<u8>,
}

thread_local! {
    /// A schema is written, packed and its words gathered here, and only the results are
    /// allocated, each once at its size. Grown in vectors of their own and then shrunk, they
    /// left a freed block per tool among the kept ones, which an allocator that keeps each size
    /// apart (mimalloc) cannot give back: a gateway serving 100,000 tools peaked at 291-303 MB
    /// that way, and at 204-219 MB with these buffers.
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// What a buffer of [`Scratch`] may keep between schemas.
const SCRATCH_KEPT: usize = 1 << 16;

/// The text `packed` holds, in pieces: each run of bytes held as they are, and each sequence a
/// byte stands for.
fn unpacked(packed: &[u8]) -> impl Iterator<Item = &[u8]> + '_ {
    let mut rest = packed;
    std::iter::from_fn(move || {
        let (&first, tail) = rest.split_first()?;
        if is_packed(first) {
            rest = tail;
            return PACKED.iter().find(|&&(_, byte)| byte == first).map(|&(seq, _)| seq);
        }
        let run = rest.iter().position(|&b| is_packed(b)).unwrap_or(rest.len());
        let (piece, tail) = rest.split_at(run);
        rest = tail;
        Some(piece)
    })
}

/// The JSON Schema of a tool's arguments.
///
/// Built from a [`Value`] (`InputSchema::from(value)`); it keeps the canonical JSON (keys
/// sorted, no white space) and the words search reads, and gives the document back as a
/// [`Value`] through [`InputSchema::value`], parsed on the first call and kept.
pub struct InputSchema {
    /// Canonical JSON, packed (see [`pack`]).
    packed: Box<str>,
    /// The property names and descriptions, each an entry: a byte of [`SPAN`] and
    /// [`OUTLINED`], then the start and length of its bytes in `packed` ([`put_varint`]), or
    /// its length and bytes.
    words: Box<[u8]>,
    /// The document, once something asked for it: boxed, since most tools never parse it and
    /// a box is a quarter of a `Value` in every tool.
    parsed: OnceLock<Box<Value>>,
}

impl InputSchema {
    /// An object schema without properties: `{"type": "object", "properties": {}}` (every
    /// tool's until it is given its own, so written out rather than built from a document).
    pub fn empty_object() -> InputSchema {
        InputSchema {
            packed: pack(r#"{"properties":{},"type":"object"}"#),
            words: Box::default(),
            parsed: OnceLock::new(),
        }
    }

    /// The document. Parsed from the text on the first call, and kept for the next ones.
    pub fn value(&self) -> &Value {
        self.parsed.get_or_init(|| {
            Box::new(serde_json::from_str(&self.text()).expect("canonical JSON written here parses"))
        })
    }

    /// The document without keeping it: the parsed one if something asked for it before,
    /// otherwise parsed for this caller alone (for reading every tool of a catalog once).
    pub fn value_once(&self) -> Cow<'_, Value> {
        match self.parsed.get() {
            Some(v) => Cow::Borrowed(&**v),
            None => {
                Cow::Owned(serde_json::from_str(&self.text()).expect("canonical JSON written here parses"))
            }
        }
    }

    /// The canonical JSON text: object keys sorted by their UTF-8 bytes, no white space.
    /// Written out from the packed text (borrowed if nothing of it was packed).
    pub fn text(&self) -> Cow<'_, str> {
        if !self.packed.bytes().any(is_packed) {
            return Cow::Borrowed(&self.packed);
        }
        let mut out = Vec::with_capacity(self.packed.len() * 2);
        self.pieces().for_each(|piece| out.extend_from_slice(piece));
        Cow::Owned(String::from_utf8(out).expect("unpacked to the str it was packed from"))
    }

    /// The canonical JSON text's bytes in pieces, in order: what [`InputSchema::text`] joins,
    /// for a writer (a hash, a definition being written) that needs no string of its own.
    pub fn pieces(&self) -> impl Iterator<Item = &[u8]> + '_ {
        unpacked(self.packed.as_bytes())
    }

    /// How many bytes the text is held in (packed; the text itself is longer).
    pub fn held_len(&self) -> usize {
        self.packed.len()
    }

    /// Every property name and description, recursively through `properties`, `items`,
    /// `additionalProperties`, `anyOf`, `oneOf` and `allOf` (12 levels at most), in the order
    /// search reads them: keys in sorted order, a property's name, then its description, then
    /// what it holds.
    pub fn words(&self) -> impl Iterator<Item = &str> + '_ {
        self.entries().map(|(word, _)| word)
    }

    /// The schema's outline: the names of its properties, nested ones through `properties` and
    /// `items` alone (not through `additionalProperties` or the `anyOf` family), 8 levels at
    /// most, in the order of [`InputSchema::words`]. Read from the words, without parsing the
    /// document.
    pub fn property_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.entries().filter_map(|(word, outlined)| outlined.then_some(word))
    }

    /// Each word, and whether it is a name of the outline.
    fn entries(&self) -> impl Iterator<Item = (&str, bool)> + '_ {
        let mut rest = &*self.words;
        std::iter::from_fn(move || {
            let (&kind, tail) = rest.split_first()?;
            let word = if kind & SPAN != 0 {
                let (start, tail) = varint(tail);
                let (len, tail) = varint(tail);
                rest = tail;
                &self.packed[start..start + len]
            } else {
                let (len, tail) = varint(tail);
                let (bytes, tail) = tail.split_at(len);
                rest = tail;
                std::str::from_utf8(bytes).expect("a word's entry holds the bytes of a str")
            };
            Some((word, kind & OUTLINED != 0))
        })
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
        SCRATCH.with_borrow_mut(|Scratch { text, packed, words }| {
            text.clear();
            packed.clear();
            words.clear();
            write_canonical_onto(value, text);
            pack_onto(text, packed);
            schema_words(value, Path { depth: 0, outline: true }, &mut |w, outlined| {
                put_word(words, packed.as_slice(), w, outlined);
            });
            let schema = InputSchema {
                packed: std::str::from_utf8(packed).expect("packed from a str").into(),
                words: words.as_slice().into(),
                // Not kept: most tools of a large catalog are never rendered.
                parsed: OnceLock::new(),
            };
            text.shrink_to(SCRATCH_KEPT);
            packed.shrink_to(SCRATCH_KEPT);
            words.shrink_to(SCRATCH_KEPT);
            schema
        })
    }
}

impl Clone for InputSchema {
    /// A copy of the text and words; the parsed document, if any, is not copied.
    fn clone(&self) -> InputSchema {
        InputSchema { packed: self.packed.clone(), words: self.words.clone(), parsed: OnceLock::new() }
    }
}

impl PartialEq for InputSchema {
    fn eq(&self, other: &InputSchema) -> bool {
        // Packing is a function of the text, and unpacking its inverse.
        self.packed == other.packed
    }
}

impl Eq for InputSchema {}

impl fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InputSchema({})", self.text())
    }
}

/// Where [`schema_words`] is in a schema: how deep, and whether only `properties` and `items`
/// led there (the outline of [`InputSchema::property_names`]).
#[derive(Clone, Copy)]
struct Path {
    depth: usize,
    outline: bool,
}

impl Path {
    /// One level down, through `properties` or `items` (`outline`) or not.
    fn down(self, outline: bool) -> Path {
        Path { depth: self.depth + 1, outline: self.outline && outline }
    }
}

/// Calls `emit` with every property name and description of a JSON Schema (see
/// [`InputSchema::words`]), and whether it is a name of the outline.
fn schema_words(schema: &Value, at: Path, emit: &mut dyn FnMut(&str, bool)) {
    let Value::Object(map) = schema else { return };
    if at.depth > MAX_DEPTH {
        return;
    }
    let description = |sub: &Value, emit: &mut dyn FnMut(&str, bool)| {
        if let Some(Value::String(d)) = sub.get("description") {
            emit(d, false);
        }
    };
    // One pass over the keys (a schema object is a sorted map: lookups by key cost compares).
    for (key, value) in map {
        match (key.as_str(), value) {
            ("properties", Value::Object(props)) => {
                for (name, sub) in props {
                    emit(name, at.outline && at.depth <= OUTLINE_DEPTH);
                    description(sub, emit);
                    schema_words(sub, at.down(true), emit);
                }
            }
            ("items" | "additionalProperties", sub @ Value::Object(_)) => {
                description(sub, emit);
                schema_words(sub, at.down(key == "items"), emit);
            }
            ("anyOf" | "oneOf" | "allOf", Value::Array(subs)) => {
                for sub in subs {
                    description(sub, emit);
                    schema_words(sub, at.down(false), emit);
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
        assert_eq!(s, InputSchema::from(serde_json::from_str::<Value>(&s.text()).unwrap()));
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
    fn every_word_comes_back_as_it_was_where_the_text_holds_it_or_not() {
        let s = InputSchema::from(json!({
            "properties": {
                "a": {"description": ""},
                "b\u{0}c": {"description": "x\u{1}y"},
                "default": {"description": "say \"hi\" \\ é 中"},
                "q": {"items": {"description": "\u{7f}"}},
            },
        }));
        let words = ["a", "", "b\u{0}c", "x\u{1}y", "default", "say \"hi\" \\ é 中", "q", "\u{7f}"];
        assert_eq!(s.words().collect::<Vec<_>>(), words);
        assert_eq!(s.property_names().collect::<Vec<_>>(), ["a", "b\u{0}c", "default", "q"]);
        // Only the words the text cannot lend are kept whole: a NUL and a quote are escaped
        // there, and `"default":` is a packed byte.
        let whole: usize =
            ["b\u{0}c", "x\u{1}y", "default", "say \"hi\" \\ é 中"].iter().map(|w| w.len()).sum();
        assert!(s.words.len() < whole + 3 * 8, "{} bytes for the words", s.words.len());
        assert_eq!(InputSchema::from(json!({"properties": {"": {}}})).words().collect::<Vec<_>>(), [""]);
    }

    /// Words are found where the text holds them, past the first few places of their first
    /// byte too (compared at every `a`, the second word of this schema would take about 10^10
    /// byte comparisons).
    #[test]
    fn words_short_and_long_are_found_where_the_text_holds_them() {
        let run = "a".repeat(100_000);
        let s = InputSchema::from(json!({
            "properties": {"x": {"description": run.clone()}, "y": {"description": format!("{run}b")}},
        }));
        let words: Vec<&str> = s.words().collect();
        assert_eq!(words.len(), 4);
        assert_eq!((words[1].len(), words[3].len()), (100_000, 100_001));
        assert!(s.words.len() < 40, "the long words were kept whole: {} bytes", s.words.len());
        let text = b"xx\"abcdefghijklmnopqrstuvwxyz\"";
        assert_eq!(find(text, b"abcdefghijklmnopq"), Some(3));
        assert_eq!(find(text, b"abc"), Some(3));
        assert_eq!(find(text, b"abd"), None);
        assert_eq!(find(text, b""), Some(0));
        // Past the first few places of its first byte.
        let many = format!("{}abc", "a,".repeat(20));
        assert_eq!(find(many.as_bytes(), b"abc"), Some(40));
        assert_eq!(find(many.as_bytes(), b"abd"), None);
        assert_eq!(find(b"a,a,a,a,a,a,a,a,a", b"a,a"), Some(0));
    }

    /// A word's entry reads back as it was written, spans and lengths of every size.
    #[test]
    fn a_varint_reads_back_as_written() {
        for n in [0, 1, 127, 128, 300, 16_383, 16_384, 1 << 20, usize::MAX >> 1, usize::MAX] {
            let mut out = vec![];
            put_varint(&mut out, n);
            out.push(0xAB);
            assert_eq!(varint(&out), (n, &[0xABu8][..]), "{n}");
        }
    }

    #[test]
    fn the_outline_is_the_names_through_properties_and_items() {
        let s = InputSchema::from(json!({
            "properties": {
                "path": {"description": "where"},
                "tags": {"items": {"properties": {"name": {}}}},
                "extra": {"additionalProperties": {"properties": {"hidden": {}}}},
                "mode": {"anyOf": [{"properties": {"fast": {}}}]},
            },
        }));
        assert_eq!(s.property_names().collect::<Vec<_>>(), ["extra", "mode", "path", "tags", "name"]);
        assert_eq!(s.words().count(), 8);
        assert_eq!(InputSchema::empty_object().property_names().count(), 0);
    }

    /// The outline as the dense index read it from the parsed document before the words
    /// marked it: `properties`, then `items`, 8 levels at most.
    fn outline_of(schema: &Value, depth: usize, out: &mut Vec<String>) {
        if depth > OUTLINE_DEPTH {
            return;
        }
        if let Some(Value::Object(props)) = schema.get("properties") {
            for (name, sub) in props {
                out.push(name.clone());
                outline_of(sub, depth + 1, out);
            }
        }
        if let Some(items) = schema.get("items") {
            outline_of(items, depth + 1, out);
        }
    }

    /// Schemas nested through every keyword the words read, with names that hold the
    /// characters ending a word.
    fn nested_schema() -> impl proptest::strategy::Strategy<Value = Value> {
        let leaf = proptest::prop_oneof![
            proptest::strategy::Just(json!({})),
            "[a-c\u{0}\u{1}\u{5}\u{d}\"é]{0,3}".prop_map(|d| json!({"description": d})),
        ];
        leaf.prop_recursive(12, 64, 4, |inner| {
            proptest::prop_oneof![
                proptest::collection::btree_map("[a-d\u{1}\\\\]{0,2}|default|type", inner.clone(), 0..4)
                    .prop_map(|props| json!({"properties": props})),
                inner.clone().prop_map(|sub| json!({"items": sub})),
                inner.clone().prop_map(|sub| json!({"additionalProperties": sub})),
                proptest::collection::vec(inner.clone(), 0..3).prop_map(|subs| json!({"anyOf": subs})),
                (inner.clone(), inner).prop_map(|(a, b)| {
                    let mut both = a.as_object().cloned().unwrap_or_default();
                    both.insert("items".into(), b);
                    Value::Object(both)
                }),
            ]
        })
    }

    proptest::proptest! {
        /// The text reads back as the document, the words read back are the words read from
        /// it, in order, and the outline read from them is, name for name, the one read from
        /// the document.
        #[test]
        fn the_outline_is_what_the_document_outlines(schema in nested_schema()) {
            let s = InputSchema::from(&schema);
            // Control characters in names and descriptions are no packed sequences.
            proptest::prop_assert_eq!(serde_json::from_str::<Value>(&s.text()).unwrap(), schema.clone());
            let mut read = Vec::new();
            schema_words(&schema, Path { depth: 0, outline: true }, &mut |w, _| read.push(w.to_owned()));
            proptest::prop_assert_eq!(s.words().collect::<Vec<_>>(), read);
            let mut want = Vec::new();
            outline_of(&schema, 0, &mut want);
            let mut got: Vec<String> = s.property_names().map(str::to_owned).collect();
            want.sort();
            got.sort();
            proptest::prop_assert_eq!(got, want);
        }
    }

    /// A catalog holds one spec per tool: at 100,000 tools each 16 bytes are 1.6 MB, and the
    /// allocator rounds an `Arc<ToolSpec>` up to its next size class (192 bytes now, 256 before).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_tool_spec_fits_its_size_class() {
        assert!(std::mem::size_of::<InputSchema>() <= 48, "{}", std::mem::size_of::<InputSchema>());
        assert!(std::mem::size_of::<crate::ToolSpec>() <= 176, "{}", std::mem::size_of::<crate::ToolSpec>());
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// Texts made of the packed sequences, pieces of them, and other characters come back
        /// byte for byte, and never longer.
        #[test]
        fn a_packed_text_unpacks_to_itself(parts in proptest::collection::vec(
            proptest::prop_oneof![
                (0..PACKED.len()).prop_map(|i| std::str::from_utf8(PACKED[i].0).unwrap().to_owned()),
                (0..PACKED.len(), 1..8usize).prop_map(|(i, n)| {
                    let seq = std::str::from_utf8(PACKED[i].0).unwrap();
                    seq[..n.min(seq.len() - 1)].to_owned()
                }),
                "[\"{}:,a-z\\\\é中\u{0}]{1,3}",
            ],
            0..30,
        )) {
            let text: String = parts.concat();
            let packed = pack(&text);
            proptest::prop_assert!(packed.len() <= text.len());
            let back: Vec<u8> = unpacked(packed.as_bytes()).flatten().copied().collect();
            proptest::prop_assert_eq!(back, text.as_bytes());
        }
    }

    #[test]
    fn a_schema_is_held_packed_and_read_whole() {
        let doc = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "additionalProperties": false,
            "type": "object",
            "required": ["q"],
            "properties": {"q": {"type": "string", "description": "say \"type\":\"string\""}},
        });
        let s = InputSchema::from(&doc);
        let text = s.text();
        assert!(s.held_len() < text.len() / 2, "{} of {}", s.held_len(), text.len());
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), doc);
        assert_eq!(s.pieces().flatten().copied().collect::<Vec<u8>>(), text.as_bytes());
        assert!(matches!(InputSchema::from(json!({"x": 1})).text(), Cow::Borrowed(r#"{"x":1}"#)));
    }

    #[test]
    fn words_stop_at_the_depth_limit() {
        let mut deep = json!({"properties": {"leaf": {}}});
        for i in 0..20 {
            deep = json!({"properties": {format!("p{i}"): deep}});
        }
        let s = InputSchema::from(deep);
        assert_eq!(s.words().count(), MAX_DEPTH + 1);
        assert_eq!(s.property_names().count(), OUTLINE_DEPTH + 1);
    }
}
