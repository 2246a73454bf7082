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

/// The JSON-RPC error reply to a message that broke a limit (its id cannot be trusted, so it
/// is `null`, as JSON-RPC asks of a request that could not be read).
pub fn error_reply(why: &Oversized) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": why.to_string()}})
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
        let reply = error_reply(&Oversized::Depth(65));
        assert_eq!(reply["id"], serde_json::Value::Null);
        assert!(reply["error"]["message"].as_str().unwrap().contains("at most 64 levels"));
    }
}
