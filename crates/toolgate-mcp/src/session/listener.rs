//! listener: how a session's client hears of changes (on the connection up to 2025-11-25, on
//! its subscriptions from 2026-07-28), which log messages it wants, and which tool list it
//! holds.

use std::sync::Arc;

use rmcp::RoleServer;
#[allow(deprecated)]
use rmcp::model::LoggingLevel;
use rmcp::model::{ProtocolVersion, RequestId};
use rmcp::service::{Peer, SubscriptionSink};

/// A session's client as the one who hears of changes.
#[derive(Debug, Default)]
pub(crate) struct Listener {
    /// The client, for notices on the connection (up to protocol 2025-11-25).
    peer: Option<Peer<RoleServer>>,
    /// The protocol revision the client speaks, once known.
    revision: Option<ProtocolVersion>,
    /// Open `subscriptions/listen` streams that accepted `tools/list_changed` (2026-07-28).
    subscriptions: Vec<SubscriptionSink>,
    /// A fingerprint of the tool list last served, to tell whether a rebuild changed it.
    listed: Option<u64>,
    /// Woken whenever the client lists the tools.
    relisted: Arc<tokio::sync::Notify>,
    /// Whether the client let a wait for its re-list run out (it ignores `list_changed`).
    ignores_list_changed: bool,
    /// The least severe log level the client wants relayed (`logging/setLevel`); all if unset.
    #[allow(deprecated)]
    log_level: Option<LoggingLevel>,
}

impl Listener {
    /// Fills in the client and its revision, where they are not known yet.
    pub(crate) fn seen(&mut self, peer: &Peer<RoleServer>, revision: Option<ProtocolVersion>) {
        if self.peer.is_none() {
            self.peer = Some(peer.clone());
        }
        if self.revision.is_none() {
            self.revision = revision;
        }
    }

    /// At `initialize`: the client to tell.
    pub(crate) fn opened(&mut self, peer: &Peer<RoleServer>) {
        self.peer = Some(peer.clone());
    }

    /// The client speaks `revision` (negotiated, or the one its request carries).
    pub(crate) fn speaks(&mut self, revision: Option<ProtocolVersion>) {
        self.revision = revision;
    }

    /// The protocol revision the client speaks, once known.
    pub(crate) fn revision(&self) -> Option<&ProtocolVersion> {
        self.revision.as_ref()
    }

    /// Whether the client speaks 2026-07-28 or later, which hears of changes only on the
    /// subscriptions it opened, never on the connection.
    pub(crate) fn is_modern(&self) -> bool {
        self.revision.as_ref().is_some_and(|v| !v.has_initialize())
    }

    /// The fingerprint of the tool list last served, if it is still the one the client holds.
    pub(crate) fn listed(&self) -> Option<u64> {
        self.listed
    }

    /// The client was served a tool list with `fingerprint`; whoever waits for it is woken.
    pub(crate) fn served_list(&mut self, fingerprint: u64) {
        self.listed = Some(fingerprint);
        self.relisted.notify_waiters();
    }

    /// The subscriptions of a request with no session follow the list with `fingerprint`, the
    /// same for every request of its subject.
    pub(crate) fn follows_list(&mut self, fingerprint: u64) {
        self.listed = Some(fingerprint);
    }

    /// The client's list is out of date (a search changed it, or the catalog did).
    pub(crate) fn list_changed(&mut self) {
        self.listed = None;
    }

    /// Woken whenever the client lists the tools.
    pub(crate) fn relisted(&self) -> Arc<tokio::sync::Notify> {
        self.relisted.clone()
    }

    /// Whether a loading search should wait (at most `wait`) for the client to list the tools
    /// again: not when it cannot hear of the change, nor once it let such a wait run out.
    pub(crate) fn relist_wait(&self, wait: std::time::Duration) -> Option<std::time::Duration> {
        let hears = self.connection_notices().is_some() || !self.subscriptions.is_empty();
        (hears && !self.ignores_list_changed).then_some(wait)
    }

    /// The client let a wait for its re-list run out: it is not waited for again.
    pub(crate) fn ignore_list_changed(&mut self) {
        self.ignores_list_changed = true;
    }

    /// A `subscriptions/listen` stream opened.
    pub(crate) fn subscribe(&mut self, sink: SubscriptionSink) {
        self.subscriptions.push(sink);
    }

    /// The `subscriptions/listen` stream `id` closed.
    pub(crate) fn unsubscribe(&mut self, id: &RequestId) {
        self.subscriptions.retain(|s| s.id() != id);
    }

    /// The client wants log messages from `level` up.
    #[allow(deprecated)]
    pub(crate) fn set_log_level(&mut self, level: LoggingLevel) {
        self.log_level = Some(level);
    }

    /// The least severe log level the client wants relayed, if it asked.
    #[allow(deprecated)]
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
    }

    /// The client, when it hears log messages (up to 2025-11-25: 2026-07-28 has no logging on
    /// the connection, SEP-2577).
    pub(crate) fn log_listener(&self) -> Option<Peer<RoleServer>> {
        if self.is_modern() { None } else { self.peer.clone() }
    }

    /// Where a list change is told: the connection (up to 2025-11-25, no subscription open)
    /// and the open subscriptions.
    pub(crate) fn change_listeners(&self) -> (Option<Peer<RoleServer>>, Vec<SubscriptionSink>) {
        (self.connection_notices(), self.subscriptions.clone())
    }

    /// The client, when notices go on the connection (up to 2025-11-25, no subscription open).
    fn connection_notices(&self) -> Option<Peer<RoleServer>> {
        if self.subscriptions.is_empty() && !self.is_modern() { self.peer.clone() } else { None }
    }

    /// Sends `notifications/tools/list_changed` to the client, on the path its protocol
    /// version uses: the connection (up to 2025-11-25) or its open subscriptions (2026-07-28).
    pub(crate) fn list_changed_notice(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (peer, sinks) = self.change_listeners();
        async move {
            if let Some(peer) = peer
                && let Err(e) = peer.notify_tool_list_changed().await
            {
                tracing::debug!("could not send tools/list_changed: {e}");
            }
            for sink in sinks {
                if let Err(e) = sink.notify_tool_list_changed().await {
                    tracing::debug!("could not send tools/list_changed on a subscription: {e}");
                }
            }
        }
    }
}
