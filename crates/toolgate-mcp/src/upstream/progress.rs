//! progress: relays `notifications/progress` of a forwarded call from the upstream back to the
//! downstream client that asked for it.
//!
//! rmcp gives every request a progress token of the sending peer's own, so the upstream sees the
//! gateway's token, not the client's; a route maps the upstream's token (per upstream: each
//! connection counts from zero) back to the client and its token while the call runs.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;

/// The routes of every call in flight whose client asked for progress.
#[derive(Debug, Default)]
pub(crate) struct Relay {
    routes: Mutex<HashMap<String, (Peer<RoleServer>, ProgressToken)>>,
}

/// One call's route; dropping it (when the call ends) closes it.
#[derive(Debug)]
pub(crate) struct Route<'a> {
    relay: &'a Relay,
    key: String,
}

impl Drop for Route<'_> {
    fn drop(&mut self) {
        self.relay.routes.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.key);
    }
}

/// The route key of a token of one upstream connection.
fn key(upstream: &str, token: &ProgressToken) -> String {
    format!("{upstream}\u{0}{}", serde_json::to_string(token).unwrap_or_default())
}

impl Relay {
    /// Routes progress that `upstream` reports under `upstream_token` to `client`, which asked
    /// for it under `token`.
    pub(crate) fn open(
        &self,
        upstream: &str,
        upstream_token: &ProgressToken,
        client: Peer<RoleServer>,
        token: ProgressToken,
    ) -> Route<'_> {
        let key = key(upstream, upstream_token);
        self.routes.lock().unwrap_or_else(|e| e.into_inner()).insert(key.clone(), (client, token));
        Route { relay: self, key }
    }

    /// Passes a progress notification of `upstream` on to the client whose call it belongs to;
    /// one for no open route is dropped.
    pub(crate) async fn relay(&self, upstream: &str, mut params: ProgressNotificationParam) {
        let route = {
            let routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
            routes.get(&key(upstream, &params.progress_token)).cloned()
        };
        let Some((client, token)) = route else { return };
        params.progress_token = token;
        params.meta = None;
        if let Err(e) = client.notify_progress(params).await {
            tracing::debug!("could not relay a progress notification: {e}");
        }
    }
}
