//! limits: how large and how deep a client's JSON-RPC message may be, checked before any
//! parser sees it, on every transport, with an error reply that says which limit it broke (a
//! document nested 200 deep used to get no reply at all on stdio, and the client hung).

use serde_json::json;

/// Most bytes of one message.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// Most levels of nested arrays and objects in one message (a tool's arguments included).
pub const MAX_DEPTH: usize = 64;

/// Why a message was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Oversized {
    /// More bytes than [`MAX_MESSAGE_BYTES`] (at least this many were seen).
    Bytes(usize),
    /// Deeper than [`MAX_DEPTH`] (this deep at least).
    Depth(usize),
}

impl std::fmt::Display for Oversized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Oversized::Bytes(n) => write!(
                f,
                "the message has {n} bytes or more; toolgate reads messages of at most {MAX_MESSAGE_BYTES} bytes"
            ),
            Oversized::Depth(n) => write!(
                f,
                "the message nests arrays and objects {n} deep or more; toolgate reads at most {MAX_DEPTH} levels"
            ),
        }
    }
}

/// Checks `message` (one JSON text) against the limits without parsing it: the nesting depth
/// is counted outside strings, escapes respected.
pub fn screen(message: &[u8]) -> Result<(), Oversized> {
    if message.len() > MAX_MESSAGE_BYTES {
        return Err(Oversized::Bytes(message.len()));
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in message {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(Oversized::Depth(depth));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// The name of the call that stands in for a refused request on stdio (no tool can have it: it
/// holds a NUL).
pub const REFUSED_TOOL: &str = "\u{0}toolgate/refused";

/// The id of a refused message, read from its top level without parsing the rest, and the
/// request that stands in for it: a call of [`REFUSED_TOOL`] with the reason, which the server
/// answers with an error of that id. `None` when the message has no readable id (a
/// notification, or not JSON at all).
pub fn substitute(message: &[u8], why: &Oversized) -> Option<Vec<u8>> {
    let id = top_level_id_of(message)?;
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": REFUSED_TOOL, "arguments": {"reason": why.to_string()}}});
    Some(call.to_string().into_bytes())
}

/// The value of the key `id` of the top-level object, if it is an id rmcp can answer under (a
/// string, or a number that is an integer in `i64`, by rmcp's own rule): a stand-in with any
/// other id (`22.4`, say, which a fuzzer sent) would not parse, and the client would get no
/// answer at all, as it gets none for that id on any message.
fn top_level_id_of(message: &[u8]) -> Option<serde_json::Value> {
    let (mut depth, mut i) = (0usize, 0usize);
    let mut last_key: Option<(usize, usize)> = None;
    while i < message.len() {
        match message[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < message.len() && message[i] != b'"' {
                    i += if message[i] == b'\\' { 2 } else { 1 };
                }
                last_key = (depth == 1).then_some((start, i + 1));
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b':' if depth == 1 => {
                if let Some((s, e)) = last_key.take()
                    && message.get(s..e) == Some(b"\"id\"".as_slice())
                {
                    let rest = &message[i + 1..];
                    let end = rest.iter().position(|&b| b == b',' || b == b'}').unwrap_or(rest.len());
                    let value: serde_json::Value = serde_json::from_slice(rest.get(..end)?).ok()?;
                    let answerable =
                        serde_json::from_value::<rmcp::model::NumberOrString>(value.clone()).is_ok();
                    return answerable.then_some(value);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_is_counted_outside_strings() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(screen(deep(64).as_bytes()), Ok(()));
        assert_eq!(screen(deep(200).as_bytes()), Err(Oversized::Depth(65)));
        let in_string = format!("{{\"a\": \"{}\\\"{}\"}}", "[".repeat(500), "{".repeat(500));
        assert_eq!(screen(in_string.as_bytes()), Ok(()));
        let big = vec![b' '; MAX_MESSAGE_BYTES + 1];
        assert_eq!(screen(&big), Err(Oversized::Bytes(MAX_MESSAGE_BYTES + 1)));
        let deep = format!(
            "{{\"jsonrpc\": \"2.0\", \"params\": {}{}, \"id\": 7}}",
            "[".repeat(100),
            "]".repeat(100)
        );
        let call: serde_json::Value =
            serde_json::from_slice(&substitute(deep.as_bytes(), &Oversized::Depth(65)).unwrap()).unwrap();
        assert_eq!(call["id"], 7);
        assert_eq!(call["params"]["name"], REFUSED_TOOL);
        let named = br#"{"method": "x", "params": {"id": 3}, "id": "a\"b"}"#;
        assert_eq!(top_level_id_of(named), Some(serde_json::json!("a\"b")));
        assert_eq!(top_level_id_of(br#"{"method": "notifications/x", "params": {"id": 3}}"#), None);
        assert!(Oversized::Depth(65).to_string().contains("at most 64 levels"));
    }

    /// Found by the `jsonrpc` fuzz target: a fractional id made a stand-in rmcp cannot parse.
    #[test]
    fn a_stand_in_always_parses_and_ids_rmcp_cannot_answer_get_none() {
        let deep = |id: &str| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"params\":{}}}", "[".repeat(70));
        for id in ["22.4", "1e400", "18446744073709551615", "true", "null", "[1]"] {
            assert_eq!(substitute(deep(id).as_bytes(), &Oversized::Depth(65)), None, "id {id}");
        }
        for id in ["7", "-3", "1.0", "1e2", "\"x\""] {
            let call = substitute(deep(id).as_bytes(), &Oversized::Depth(65)).expect(id);
            let parsed: Result<rmcp::model::ClientJsonRpcMessage, _> = serde_json::from_slice(&call);
            assert!(parsed.is_ok(), "id {id}: {}", String::from_utf8_lossy(&call));
        }
    }
}
