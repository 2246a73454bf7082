//! reach: how a session is reached and kept: a connection of its own, a streamable HTTP
//! session kept in the session store under a place of `max_sessions`, or one request with no
//! session at all (2026-07-28 over HTTP).

use std::sync::Arc;

use serde_json::Value;

use crate::store::Saved;

/// How a session is reached, and how it is kept.
#[derive(Debug)]
pub(crate) enum Reach {
    /// A connection of its own (stdio, a pipe): nothing is kept.
    Connection,
    /// A streamable HTTP session: kept in the session store, holding a place under
    /// `max_sessions` once `initialize` (or a restore) gave it one.
    Http(Stored),
    /// One request with no session (2026-07-28 over HTTP): nothing is kept, its subject's view
    /// hands out grants, and the calls it makes present them.
    Sessionless,
}

/// How one HTTP session is kept in the store.
#[derive(Debug, Default)]
pub(crate) struct Stored {
    /// The session's `Mcp-Session-Id`, once a request carried it.
    id: Option<String>,
    /// The record's `seq` this session last read or wrote.
    seq: u64,
    /// The token the session was opened with (by name): its owner.
    token: Option<String>,
    /// The client's `initialize` parameters, written into every record.
    initialize: Option<Value>,
    /// A digest of the conversation last pushed, to push only what changed.
    pushed: Option<u64>,
    /// Held across one push, so that this process writes a session's records in order.
    writing: Arc<tokio::sync::Mutex<()>>,
    /// Its place under `max_sessions` ([`crate::session::Seat`]), given back when it ends.
    seat: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl Reach {
    /// Whether this is one request with no session.
    pub(crate) fn is_sessionless(&self) -> bool {
        matches!(self, Reach::Sessionless)
    }

    /// Whether the client came over streamable HTTP (with a session or without).
    pub(crate) fn is_http(&self) -> bool {
        !matches!(self, Reach::Connection)
    }

    fn stored(&self) -> Option<&Stored> {
        match self {
            Reach::Http(stored) => Some(stored),
            _ => None,
        }
    }

    fn stored_mut(&mut self) -> Option<&mut Stored> {
        match self {
            Reach::Http(stored) => Some(stored),
            _ => None,
        }
    }

    /// The session's `Mcp-Session-Id`, once a request carried it.
    pub(crate) fn session_id(&self) -> Option<&str> {
        self.stored().and_then(|stored| stored.id.as_deref())
    }

    /// Whether the session needs no place under `max_sessions`, or holds one.
    pub(crate) fn has_seat(&self) -> bool {
        self.stored().is_none_or(|stored| stored.seat.is_some())
    }

    /// This HTTP session takes its place under `max_sessions`.
    pub(crate) fn take_seat(&mut self, permit: tokio::sync::OwnedSemaphorePermit) {
        if let Some(stored) = self.stored_mut() {
            stored.seat = Some(permit);
        }
    }

    /// At `initialize` over HTTP: the session belongs to `token` (by name), and the client's
    /// parameters go into every record.
    pub(crate) fn owned_by(&mut self, token: Option<String>, initialize: Option<Value>) {
        if let Some(stored) = self.stored_mut() {
            stored.token = token;
            stored.initialize = initialize;
        }
    }

    /// A request named this session `header`: the first names it; a later one naming another
    /// is refused. The session's id, once named.
    pub(crate) fn named(&mut self, header: Option<&str>) -> Result<Option<String>, String> {
        let Some(stored) = self.stored_mut() else { return Ok(None) };
        match (&stored.id, header) {
            (None, Some(header)) => stored.id = Some(header.to_owned()),
            (Some(id), Some(header)) if id != header => {
                return Err("the request names another session".into());
            }
            _ => {}
        }
        Ok(stored.id.clone())
    }

    /// Restored from the store as session `id`, at record `saved`.
    pub(crate) fn restored(&mut self, id: String, saved: &Saved) {
        if let Some(stored) = self.stored_mut() {
            stored.id = Some(id);
            stored.seq = saved.seq;
        }
    }

    /// Whether `saved` is newer than what this session last read or wrote.
    pub(crate) fn is_newer(&self, saved: &Saved) -> bool {
        self.stored().is_some_and(|stored| saved.seq > stored.seq)
    }

    /// Caught up with `saved`, newer than this session's own.
    pub(crate) fn caught_up(&mut self, saved: &Saved) {
        if let Some(stored) = self.stored_mut() {
            stored.seq = saved.seq;
            stored.pushed = None;
        }
    }

    /// The lock held across one push, so that this process writes a session's records in order.
    pub(crate) fn writing(&self) -> Option<Arc<tokio::sync::Mutex<()>>> {
        self.stored().map(|stored| stored.writing.clone())
    }

    /// The session's next record, when `conversation` (its saved form) changed since the last
    /// one written: the session's serialised form, under its `Mcp-Session-Id`.
    pub(crate) fn next_record(
        &mut self,
        conversation: Value,
        profile: Option<String>,
    ) -> Option<(String, Saved)> {
        let stored = self.stored_mut()?;
        let id = stored.id.clone()?;
        let digest = digest(&conversation);
        if stored.pushed == Some(digest) {
            return None;
        }
        stored.seq += 1;
        stored.pushed = Some(digest);
        let saved = Saved {
            seq: stored.seq,
            initialize: stored.initialize.clone().unwrap_or_default(),
            token: stored.token.clone(),
            profile,
            conversation: Some(conversation),
        };
        Some((id, saved))
    }

    /// The last record could not be written: the next push writes it again.
    pub(crate) fn not_written(&mut self) {
        if let Some(stored) = self.stored_mut() {
            stored.pushed = None;
        }
    }
}

/// A digest of a conversation's saved form.
fn digest(value: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    value.to_string().hash(&mut hasher);
    hasher.finish()
}
