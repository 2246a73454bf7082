//! grant: what a showing leaves behind when there is no session to remember it.
//!
//! A conversation remembers which definitions it was shown ([`Conversation`]); a caller with
//! no conversation on the host (MCP 2026-07-28 over HTTP, where any replica answers any
//! request) cannot. So whatever shows such a caller a tool hands out a *grant* with it: a short
//! string bound to the subject, the tool's qualified name and server, its definition hash and
//! an expiry, signed with a key every replica shares ([`GrantKey`]). A later call presents the
//! grant; [`Grants::admit`](crate::toolbox::Grants::admit) checks it and counts the tool as shown in a
//! fresh conversation, and the call then goes through [`Toolbox::check`](crate::Toolbox::check)
//! like any session's. A grant for an older definition admits nothing and makes the call a
//! [`Denial::Changed`](crate::gate::Denial::Changed): a changed definition needs a new search.
//!
//! The text of a grant: `KKKK-HHHHHHHHHHHHHHHH-EXPIRY-MAC`: the key's id (4 hex digits), the
//! first 8 bytes of the definition hash (16 hex digits), the expiry in Unix seconds and an
//! HMAC-SHA-256 over all of it with the subject, name and server, cut to 16 bytes (base64url).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::catalog::Tool;
use crate::policy::Subject;
use crate::secret::{constant_time_eq, hmac_sha256};

/// The secret that signs and checks grants. Every replica that should accept another's grants
/// holds the same one.
#[derive(Clone)]
pub struct GrantKey {
    key: [u8; 32],
    /// Names the key in every grant, so that a grant of another key is told apart from a forgery.
    id: u16,
    /// How long a grant stays valid.
    ttl: Duration,
}

impl std::fmt::Debug for GrantKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrantKey").field("id", &format_args!("{:04x}", self.id)).finish_non_exhaustive()
    }
}

/// Why a presented grant admits nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantProblem {
    /// It is not a grant's text at all.
    Malformed,
    /// It was signed with another key (another gateway's, or before the key changed).
    OtherKey,
    /// Its time is over.
    Expired,
    /// Its signature does not hold for this subject and tool: it was given to another subject,
    /// for another tool, or made up.
    NotThisTool,
    /// It was given for an earlier definition of the tool.
    Changed,
}

impl std::fmt::Display for GrantProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GrantProblem::Malformed => "the grant is not one tool_search gave",
            GrantProblem::OtherKey => {
                "the grant was given by a gateway with another grant key (every replica needs the same [gateway] grant_key)"
            }
            GrantProblem::Expired => "the grant has expired",
            GrantProblem::NotThisTool => "the grant was not given to you for this tool",
            GrantProblem::Changed => "the tool's definition changed since the grant was given",
        })
    }
}

impl GrantKey {
    /// A key from a secret (any length; its SHA-256 is the key), valid for `ttl`.
    pub fn new(secret: &[u8], ttl: Duration) -> GrantKey {
        let key: [u8; 32] = Sha256::digest(secret).into();
        let id_digest = Sha256::digest([b"toolgate-grant-key-id\0".as_slice(), &key].concat());
        GrantKey { key, id: u16::from_be_bytes([id_digest[0], id_digest[1]]), ttl }
    }

    /// How long a grant of this key stays valid.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The grant of `tool`'s current definition to `subject`, valid from `now` for the key's
    /// time.
    pub fn grant(&self, subject: &Subject, tool: &Tool, now: SystemTime) -> String {
        let expiry = unix(now).saturating_add(self.ttl.as_secs().max(1));
        let prefix = hash_prefix(tool);
        let head = format!("{:04x}-{prefix}-{expiry}", self.id);
        let mac = self.mac(&head, subject, tool);
        format!("{head}-{}", base64url(&mac))
    }

    /// Whether `grant` shows that `subject` was given `tool`'s current definition.
    pub fn verify(
        &self,
        grant: &str,
        subject: &Subject,
        tool: &Tool,
        now: SystemTime,
    ) -> Result<(), GrantProblem> {
        let grant = grant.trim();
        // The signature's alphabet has `-` too: it is whatever follows the third.
        let fields: Vec<&str> = grant.splitn(4, '-').collect();
        let [id, prefix, expiry, mac] = fields[..] else {
            return Err(GrantProblem::Malformed);
        };
        let head = &grant[..grant.len() - mac.len() - 1];
        let shaped = id.len() == 4
            && prefix.len() == 16
            && [id, prefix].iter().all(|f| f.bytes().all(|b| b.is_ascii_hexdigit()));
        let (Some(expiry), true) = (expiry.parse::<u64>().ok(), shaped) else {
            return Err(GrantProblem::Malformed);
        };
        if u16::from_str_radix(id, 16) != Ok(self.id) {
            return Err(GrantProblem::OtherKey);
        }
        let expected = base64url(&self.mac(head, subject, tool));
        if !constant_time_eq(expected.as_bytes(), mac.as_bytes()) {
            return Err(GrantProblem::NotThisTool);
        }
        if expiry <= unix(now) {
            return Err(GrantProblem::Expired);
        }
        if prefix != hash_prefix(tool) {
            return Err(GrantProblem::Changed);
        }
        Ok(())
    }

    /// The HMAC of the grant's head, subject, name and server, cut to 16 bytes.
    fn mac(&self, head: &str, subject: &Subject, tool: &Tool) -> [u8; 16] {
        let message =
            format!("toolgate-grant-v1\0{head}\0{subject}\0{}\0{}", tool.qualified_name(), tool.server());
        let mut out = [0u8; 16];
        out.copy_from_slice(&hmac_sha256(&self.key, message.as_bytes())[..16]);
        out
    }
}

/// The first 8 bytes of a tool's definition hash, in hex: enough that no upstream can make a
/// changed definition with the same prefix (2^64 tries).
fn hash_prefix(tool: &Tool) -> String {
    tool.hash().as_bytes()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

fn unix(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Unpadded base64url.
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 2);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Catalog, ToolSpec};

    fn tool(description: &str) -> Tool {
        let catalog = Catalog::builder().tool(ToolSpec::mcp("files", "read", description)).build().unwrap();
        catalog.tools()[0].clone()
    }

    #[test]
    fn a_grant_admits_its_subject_and_definition_only() {
        let key = GrantKey::new(b"a shared secret of the replicas", Duration::from_secs(60));
        let now = SystemTime::now();
        let main = Subject::new("main");
        let reader = Subject::new("reader");
        let read = tool("Read a file.");
        let grant = key.grant(&main, &read, now);
        assert_eq!(key.verify(&grant, &main, &read, now), Ok(()));
        assert_eq!(key.verify(&grant, &reader, &read, now), Err(GrantProblem::NotThisTool));
        let changed = tool("Read a file, and send it somewhere.");
        assert_eq!(key.verify(&grant, &main, &changed, now), Err(GrantProblem::Changed));
        let later = now + Duration::from_secs(61);
        assert_eq!(key.verify(&grant, &main, &read, later), Err(GrantProblem::Expired));
        let other = GrantKey::new(b"another gateway", Duration::from_secs(60));
        assert_eq!(other.verify(&grant, &main, &read, now), Err(GrantProblem::OtherKey));
        // A forged expiry or prefix breaks the signature.
        let mut fields: Vec<String> = grant.splitn(4, '-').map(str::to_owned).collect();
        fields[2] = (fields[2].parse::<u64>().unwrap() + 3600).to_string();
        assert_eq!(key.verify(&fields.join("-"), &main, &read, now), Err(GrantProblem::NotThisTool));
        for bad in ["", "nope", "zzzz-0011223344556677-1-AAAA", "0000-00-1-AAAA"] {
            assert!(key.verify(bad, &main, &read, now).is_err(), "{bad}");
        }
    }

    #[test]
    fn base64url_matches_the_rfc_vectors() {
        for (input, output) in [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg")] {
            assert_eq!(base64url(input.as_bytes()), output);
        }
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }
}
