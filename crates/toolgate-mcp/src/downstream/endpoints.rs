//! endpoints: the MCP endpoints of the HTTP router, `/mcp` and `/mcp/NAME` for each profile,
//! each an rmcp streamable HTTP service with its own session manager. A profile's endpoint is
//! made when first asked for while the profile is configured, so that a profile a reload adds
//! is served at once; one a reload removes answers 404 from its next request on (the router's
//! `profile_exists` layer), and its sessions see nothing.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::downstream::server::GatewayServer;
use crate::gateway::Gateway;

type Service = StreamableHttpService<GatewayServer, LocalSessionManager>;

/// One endpoint: its service and the manager that holds its sessions.
type Endpoint = (Service, Arc<LocalSessionManager>);

/// The endpoints made so far, by profile (`None`: `/mcp`), shared by the router and the door.
#[derive(Clone)]
pub(crate) struct Endpoints {
    gateway: Gateway,
    shutdown: CancellationToken,
    made: Arc<Mutex<BTreeMap<Option<String>, Endpoint>>>,
}

impl std::fmt::Debug for Endpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoints").finish_non_exhaustive()
    }
}

impl Endpoints {
    /// No endpoint made yet; cancelling `shutdown` ends every session of every endpoint.
    pub(crate) fn new(gateway: Gateway, shutdown: CancellationToken) -> Endpoints {
        Endpoints { gateway, shutdown, made: Arc::default() }
    }

    /// Answers `request` at the endpoint of `profile` (`None`: `/mcp`), made now if need be.
    /// The caller has checked that the profile is configured.
    pub(crate) async fn serve(&self, profile: Option<&str>, request: Request) -> Response {
        let service = self.service(profile);
        service.handle(request).await.into_response()
    }

    /// Every session manager made so far.
    pub(crate) fn managers(&self) -> Vec<Arc<LocalSessionManager>> {
        let made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        made.values().map(|(_, manager)| manager.clone()).collect()
    }

    fn service(&self, profile: Option<&str>) -> Service {
        let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        let key = profile.map(str::to_owned);
        if let Some((service, _)) = made.get(&key) {
            return service.clone();
        }
        let (service, manager) = self.make(key.clone());
        made.insert(key, (service.clone(), manager));
        service
    }

    fn make(&self, profile: Option<String>) -> Endpoint {
        let gateway = self.gateway.clone();
        let factory = move || Ok(GatewayServer::for_http(gateway.clone(), profile.clone()));
        let settings = self.gateway.settings();
        // rmcp's own Host check is off: the access guard, in front of every route, checks Host
        // and Origin against the configuration in force (a reload may name new hosts).
        let mut config = StreamableHttpServerConfig::default()
            .with_cancellation_token(self.shutdown.clone())
            .disable_allowed_hosts();
        // A session this process does not hold (it restarted, or another replica opened it)
        // is restored from the store ([`crate::downstream::resume`]).
        config.session_store = Some(Arc::new(crate::store::ForRmcp {
            store: settings.sessions.clone(),
            ttl: settings.gateway.session_idle,
        }));
        // rmcp would end a session after `keep_alive` without a message, a long call in flight
        // included; toolgate ends idle sessions itself (`reap_idle`).
        let mut sessions = SessionConfig::default();
        sessions.keep_alive = None;
        let mut manager = LocalSessionManager::default();
        manager.session_config = sessions;
        let manager = Arc::new(manager);
        (StreamableHttpService::new(factory, manager.clone(), config), manager)
    }
}
