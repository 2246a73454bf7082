//! http: the gateway over HTTP: MCP streamable HTTP at `/mcp` (one session, and so one active
//! set, per `Mcp-Session-Id`), a small HTML status page at `/` and the same data at
//! `/status.json`. Each configured profile also has its endpoint, `/mcp/NAME`, whose sessions
//! see only what the profile allows; on `/mcp`, the header `X-Toolgate-Profile: NAME` does the
//! same.

use std::time::Duration;

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::downstream::door::{PROFILE_HEADER, SESSION_HEADER, jsonrpc_error};
use crate::downstream::endpoints::Endpoints;
use crate::gateway::Gateway;

/// The router: `/mcp`, `/` and `/status.json`. Cancelling `shutdown` ends every MCP session.
///
/// A session ends after `[gateway] session_idle_secs` without activity (`reap_idle`): a
/// request in flight is activity however long it runs; an open stream alone is not, so an idle
/// client does not keep a session forever. Before that, one with no stream open hibernates
/// after `[gateway] session_hibernate_secs`: only its record in the session store is kept, and
/// its next request restores it. A request naming a session that ended gets 404 with a
/// JSON-RPC error that says so. A new session past `[gateway] max_sessions` gets 503. `DELETE`
/// of a session is answered 204.
pub fn router(gateway: Gateway, shutdown: CancellationToken) -> axum::Router {
    let endpoints = Endpoints::new(gateway.clone(), shutdown.clone());
    // Exact paths only: `/mcp` and `/mcp/NAME` for each profile configured now. Any other path
    // (an unknown profile, `/mcp//reader`, a percent-encoded name) is 404, never the
    // unrestricted endpoint (`profile_exists`, outside every other MCP layer).
    let at_root = endpoints.clone();
    let at_profile = endpoints.clone();
    let router = axum::Router::new()
        .route(
            "/mcp",
            axum::routing::any(move |request: Request| async move { at_root.serve(None, request).await }),
        )
        .route(
            "/mcp/{*profile}",
            axum::routing::any(move |request: Request| async move {
                let profile = request.uri().path().strip_prefix("/mcp/").unwrap_or_default().to_owned();
                at_profile.serve(Some(&profile), request).await
            }),
        );
    let door = crate::downstream::door::Door {
        gateway: gateway.clone(),
        held: Default::default(),
        endpoints,
        streams: Default::default(),
    };
    tokio::spawn(reap_idle(door.clone(), shutdown.clone()));
    let guard = axum::middleware::from_fn_with_state(gateway.clone(), sessions_guard);
    let access = axum::middleware::from_fn_with_state(gateway.clone(), access_guard);
    // Outermost first: access, then the limits on the body, then the door (a session's owner),
    // then the session cap, a rate-limited call's 429 (`too_many`) and rmcp.
    router
        .route_layer(axum::middleware::from_fn_with_state(
            gateway.clone(),
            crate::downstream::too_many::guard,
        ))
        .route_layer(guard)
        .route_layer(axum::middleware::from_fn_with_state(door, crate::downstream::door::guard))
        .route_layer(axum::middleware::from_fn_with_state(gateway.clone(), limits_guard))
        .route_layer(axum::middleware::from_fn_with_state(gateway.clone(), profile_exists))
        .route("/", get(status_page))
        .route("/status.json", get(status_json))
        .route("/metrics", get(metrics))
        .route("/approve", axum::routing::post(approve))
        .route("/login", get(login_page).post(login))
        .route(METADATA_PATH, get(resource_metadata))
        .route(&format!("{METADATA_PATH}/{{*resource}}"), get(resource_metadata))
        .layer(access)
        .with_state(gateway)
}

/// Outside every other layer of the MCP endpoints: a path `/mcp/NAME` whose `NAME` is not a
/// profile configured now is 404, as a path the router does not know.
async fn profile_exists(State(gateway): State<Gateway>, request: Request, next: Next) -> Response {
    match request.uri().path().strip_prefix("/mcp/") {
        Some(name) if !gateway.decider().has_profile(name) => StatusCode::NOT_FOUND.into_response(),
        _ => next.run(request).await,
    }
}

/// Around the MCP endpoints: a POST's body is read whole within `[gateway] body_timeout_secs`
/// and screened against the [limits](crate::limits) before rmcp parses it.
async fn limits_guard(State(gateway): State<Gateway>, request: Request, next: Next) -> Response {
    use crate::limits::{MAX_MESSAGE_BYTES, Oversized, screen};
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let timeout = gateway.settings().gateway.body_timeout;
    let bytes = match tokio::time::timeout(timeout, axum::body::to_bytes(body, MAX_MESSAGE_BYTES)).await {
        Err(_) => {
            let message = format!(
                "the request body did not arrive within {} s ([gateway] body_timeout_secs)",
                timeout.as_secs()
            );
            return jsonrpc_error(StatusCode::REQUEST_TIMEOUT, &message);
        }
        Ok(Err(_)) => {
            let why = Oversized::Bytes(MAX_MESSAGE_BYTES + 1);
            return jsonrpc_error(StatusCode::PAYLOAD_TOO_LARGE, &why.to_string());
        }
        Ok(Ok(bytes)) => bytes,
    };
    if let Err(why) = screen(&bytes) {
        tracing::warn!("refused a message from the client: {why}");
        let status = match why {
            Oversized::Bytes(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Oversized::Depth(_) => StatusCode::BAD_REQUEST,
        };
        return jsonrpc_error(status, &why.to_string());
    }
    // Only a request naming no session can open one: the others are not read twice.
    let names_a_session = crate::access::Caller::of(&parts).is_some_and(|c| c.session.is_some());
    let opening = !names_a_session && opens_a_session(&bytes);
    let mut request = Request::from_parts(parts, axum::body::Body::from(bytes));
    if opening {
        request.extensions_mut().insert(Opening);
    }
    next.run(request).await
}

/// Marks a POST whose message is an `initialize`: the one request that opens a session.
#[derive(Debug, Clone, Copy)]
struct Opening;

/// Whether a message is an `initialize` request.
fn opens_a_session(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(bytes).ok().is_some_and(|message| {
        message.get("method").and_then(serde_json::Value::as_str) == Some("initialize")
    })
}

/// Around every route: the `Host`, the `Origin`, the bearer token, and the profile a token
/// serves ([`Access`](crate::access::Access)). A token with a profile puts its profile on the
/// request, and may not see the status page, which shows every subject's sessions.
async fn access_guard(State(gateway): State<Gateway>, mut request: Request, next: Next) -> Response {
    let headers = request.headers();
    // The headers that say who is asking are read here alone, and must be text.
    for name in [SESSION_HEADER, PROFILE_HEADER] {
        if headers.get(name).is_some_and(|v| v.to_str().is_err()) {
            let message =
                format!("the {name} header is not text (visible ASCII): it names no session or profile");
            return jsonrpc_error(StatusCode::BAD_REQUEST, &message);
        }
    }
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let authority = request.uri().authority().map(|a| a.as_str().to_owned());
    let host = get("host").map(str::to_owned).or(authority);
    let path = request.uri().path().to_owned();
    let from_path = path.strip_prefix("/mcp/").map(str::to_owned);
    let header_profile = get(PROFILE_HEADER).map(str::to_owned);
    let session = get(SESSION_HEADER).map(str::to_owned);
    let asked = from_path.clone().or_else(|| header_profile.clone());
    // The operator's pages (not MCP) also take the login cookie a browser got on `/login`,
    // which stands for the token it logged in with; `/login` itself needs no token yet. Host
    // and Origin are checked either way.
    let access = &gateway.settings().access;
    let authorization = get("authorization");
    let cookie_token = (authorization.is_none() && !path.starts_with("/mcp"))
        .then(|| crate::operator::approval::logged_in(&gateway.inner.page_secret, get("cookie")))
        .flatten()
        .and_then(|name| access.tokens.iter().find(|t| t.name == name).cloned());
    // The protected-resource metadata is public (RFC 9728): a client reads it to learn where
    // to get a token.
    let open_path = path == "/login" || path.starts_with(METADATA_PATH);
    let checked = if authorization.is_none() && (cookie_token.is_some() || open_path) {
        match access.check(host.as_deref(), get("origin"), None, None) {
            Ok(_) | Err(crate::access::Refusal::Token) => Ok(cookie_token.as_ref()),
            Err(other) => Err(other),
        }
    } else {
        access.check(host.as_deref(), get("origin"), authorization, asked.as_deref())
    };
    // Who the caller is (a token's name, or an OAuth identity's issuer and subject), and the
    // profile it serves.
    let (identity, serves, bearer) = match checked {
        Ok(token) => (token.map(|t| t.name.clone()), token.and_then(|t| t.profile.clone()), None),
        Err(crate::access::Refusal::Token) if access.oauth.is_some() => {
            let resource = access.oauth.as_ref().expect("checked above");
            let bearer = authorization
                .and_then(|a| a.strip_prefix("Bearer ").or_else(|| a.strip_prefix("bearer ")))
                .map(str::trim);
            let Some(bearer) = bearer else {
                tracing::warn!(target: "toolgate::audit", path = %path, "refused: no bearer token");
                return oauth_refusal(resource, None);
            };
            match resource.verify(bearer).await {
                Ok(who) => {
                    if let (Some(serves), Some(asked)) = (&who.profile, &asked)
                        && serves != asked
                    {
                        let refusal =
                            crate::access::Refusal::Profile { asked: asked.clone(), token: serves.clone() };
                        tracing::warn!(target: "toolgate::audit", path = %path, subject = %who.key(), "refused: {refusal}");
                        return jsonrpc_error(StatusCode::FORBIDDEN, &refusal.to_string());
                    }
                    (Some(who.key()), who.profile, Some(std::sync::Arc::<str>::from(bearer)))
                }
                Err(rejected) => {
                    tracing::warn!(target: "toolgate::audit", path = %path, "refused a bearer token: {rejected}");
                    return oauth_refusal(resource, Some(&rejected));
                }
            }
        }
        Err(refusal) => {
            tracing::warn!(target: "toolgate::audit", path = %path, "refused: {refusal}");
            let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::FORBIDDEN);
            // A browser asking for the page without a token gets the login form.
            if status == StatusCode::UNAUTHORIZED && path == "/" {
                return (StatusCode::UNAUTHORIZED, login_html(None)).into_response();
            }
            let mut response = jsonrpc_error(status, &refusal.to_string());
            if status == StatusCode::UNAUTHORIZED {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"toolgate\""));
            }
            return response;
        }
    };
    if let Some(serves) = &serves
        && !path.starts_with("/mcp")
        && !open_path
    {
        let message = format!(
            "this caller serves profile `{serves}`; the status page shows every subject and needs a token without a profile"
        );
        return jsonrpc_error(StatusCode::FORBIDDEN, &message);
    }
    let profile = header_profile.or(serves);
    request.extensions_mut().insert(crate::access::Caller { token: identity, bearer, profile, session });
    next.run(request).await
}

/// Where the protected-resource metadata is served (RFC 9728): this path, and this path
/// followed by the resource's own path (`/.well-known/oauth-protected-resource/mcp`).
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// A 401 (or 403 for a token that is valid but not enough) that points to the metadata, as
/// the MCP authorization specification asks, with the reason as a JSON-RPC error too.
fn oauth_refusal(
    resource: &crate::oauth::resource::Resource,
    rejected: Option<&crate::oauth::resource::Rejected>,
) -> Response {
    use crate::oauth::resource::Rejected;
    let (status, message) = match rejected {
        None => (
            StatusCode::UNAUTHORIZED,
            format!(
                "toolgate needs an access token here: get one from an authorization server its metadata \
                 names ({}) for resource {}, and send `Authorization: Bearer TOKEN`",
                resource.metadata_url(),
                resource.resource()
            ),
        ),
        Some(r @ Rejected::Token(_)) => {
            (StatusCode::UNAUTHORIZED, format!("the access token is refused: {r}"))
        }
        Some(r) => (StatusCode::FORBIDDEN, format!("the access token is refused: {r}")),
    };
    let mut response = jsonrpc_error(status, &message);
    if let Ok(value) = HeaderValue::from_str(&resource.challenge(rejected)) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The protected-resource metadata (RFC 9728 §3), when `[oauth]` is configured.
async fn resource_metadata(State(gateway): State<Gateway>) -> Response {
    match &gateway.settings().access.oauth {
        Some(resource) => Json(resource.metadata()).into_response(),
        None => jsonrpc_error(
            StatusCode::NOT_FOUND,
            "this gateway takes no OAuth access tokens ([oauth] is not configured)",
        ),
    }
}

/// Around the MCP endpoints: refuses a new session past the cap, and explains a 404 for a
/// session that ended.
async fn sessions_guard(State(gateway): State<Gateway>, mut request: Request, next: Next) -> Response {
    let settings = gateway.settings();
    let session = request.extensions().get::<crate::access::Caller>().and_then(|c| c.session.clone());
    if session.is_none() && request.extensions().get::<Opening>().is_some() {
        // The place is taken before the request goes on, and given back if no session takes it:
        // requests released together cannot all pass a count made before any registers.
        let Some(seat) = crate::session::Seat::take_from(&gateway.inner.seats) else {
            let message = format!(
                "toolgate serves at most {} sessions at once ([gateway] max_sessions) and they are all \
                 open; close one or try again later",
                settings.gateway.max_sessions
            );
            return jsonrpc_error(StatusCode::SERVICE_UNAVAILABLE, &message);
        };
        request.extensions_mut().insert(seat);
    }
    let response = next.run(request).await;
    if response.status() == StatusCode::BAD_REQUEST {
        return explain_revision(response).await;
    }
    match session {
        Some(id) if response.status() == StatusCode::NOT_FOUND => {
            let message = format!(
                "session `{id}` is not open: sessions end after {} s without a request ([gateway] \
                 session_idle_secs), or the gateway restarted; start a new session with initialize",
                settings.gateway.session_idle.as_secs()
            );
            jsonrpc_error(StatusCode::NOT_FOUND, &message)
        }
        _ => response,
    }
}

/// What toolgate serves where, for a client that asked for a revision it does not serve.
fn revisions_served(requested: &str) -> String {
    format!(
        "toolgate does not serve MCP revision `{requested}`. Over streamable HTTP it serves 2024-11-05, \
         2025-03-26, 2025-06-18 and 2025-11-25 with sessions (initialize, Mcp-Session-Id) and 2026-07-28 \
         without (server/discover; a call presents the grant tool_search gave); over stdio the same five \
         revisions, the connection being the session"
    )
}

/// rmcp's refusals of an unknown protocol revision (a JSON-RPC error -32022, or a bare 400 for
/// the `MCP-Protocol-Version` header), rewritten to say which revisions each transport serves.
async fn explain_revision(response: Response) -> Response {
    const UNSUPPORTED: i64 = -32022;
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
        return jsonrpc_error(StatusCode::BAD_REQUEST, "the request was refused");
    };
    let text = String::from_utf8_lossy(&bytes);
    if let Some(requested) = text.strip_prefix("Bad Request: Unsupported MCP-Protocol-Version: ") {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {
            "code": UNSUPPORTED, "message": revisions_served(requested.trim()),
            "data": {"requested": requested.trim(), "supported": rmcp::model::ProtocolVersion::KNOWN_VERSIONS}}});
        let mut response = (StatusCode::BAD_REQUEST, body.to_string()).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return response;
    }
    if let Ok(mut message) = serde_json::from_slice::<serde_json::Value>(&bytes)
        && message["error"]["code"].as_i64() == Some(UNSUPPORTED)
    {
        let requested = message["error"]["data"]["requested"].as_str().unwrap_or("?").to_owned();
        message["error"]["message"] = serde_json::Value::String(revisions_served(&requested));
        let mut parts = parts;
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, axum::body::Body::from(message.to_string()));
    }
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

/// Ends every HTTP session idle for `[gateway] session_idle_secs`: no request in flight, and
/// none begun or ended for that long. A session no request has named
/// to toolgate yet (it only initialized) is idle from when it was first seen here.
///
/// A session idle for `[gateway] session_hibernate_secs` with no event stream open hibernates: rmcp's state for it (a worker and its channels) is closed
/// the same way, while its record stays in the session store, whose expiry is
/// `session_idle`; its next request restores it from the record
/// ([`crate::downstream::resume`]), as another replica would. Such a session has nothing to
/// hear meanwhile: with no stream open, no message of the server's could reach its client.
async fn reap_idle(door: crate::downstream::door::Door, shutdown: CancellationToken) {
    use std::collections::HashMap;
    use std::time::Instant;
    let gateway = &door.gateway;
    let endpoints = door.endpoints.clone();
    let idle = gateway.settings().gateway.session_idle;
    let hibernate = gateway.settings().gateway.session_hibernate.min(idle);
    let every = (hibernate / 4).clamp(Duration::from_millis(250), Duration::from_secs(30));
    let mut first_seen: HashMap<String, Instant> = HashMap::new();
    loop {
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = shutdown.cancelled() => return,
        }
        let activity = gateway.sessions().http_activity();
        let mut present = std::collections::HashSet::new();
        let mut closed = 0;
        for manager in endpoints.managers() {
            let ids: Vec<_> = manager.sessions.read().await.keys().cloned().collect();
            for id in ids {
                let key = id.to_string();
                let last = match activity.get(&key) {
                    Some((in_flight, _)) if *in_flight > 0 => {
                        present.insert(key);
                        continue;
                    }
                    Some((_, Some(last))) => *last,
                    _ => *first_seen.entry(key.clone()).or_insert_with(Instant::now),
                };
                let quiet = last.elapsed();
                if quiet >= idle {
                    tracing::info!(session = %key, "HTTP session ended after {} s without a request", idle.as_secs());
                } else if quiet >= hibernate && !door.streaming(&key) {
                    tracing::debug!(session = %key, "HTTP session hibernates after {} s without a request", hibernate.as_secs());
                } else {
                    present.insert(key);
                    continue;
                }
                let _ = rmcp::transport::streamable_http_server::session::SessionManager::close_session(
                    &*manager, &id,
                )
                .await;
                closed += 1;
            }
        }
        first_seen.retain(|id, _| present.contains(id));
        door.retain(&present);
        if closed > 0 {
            crate::session::closed_sessions();
        }
    }
}

/// Serves the router on `listener` until `shutdown` is cancelled; open connections get five
/// seconds to finish. Each connection is HTTP/1.1 with `[gateway] header_timeout_secs` on its
/// headers (a client dripping them, or one that connects and says nothing, is cut off after
/// it).
pub async fn serve(
    gateway: Gateway,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    gateway.relay_announcements();
    let app = router(gateway.clone(), shutdown.child_token());
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let (tcp, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(connection) => connection,
                Err(e) => {
                    // Out of file descriptors, say: wait a moment rather than spin.
                    tracing::warn!("could not accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        // Without TCP_NODELAY, Nagle's algorithm and delayed ACKs add about 40 ms to every
        // request of clients that write headers and body separately (Node's fetch, the
        // TypeScript SDK).
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("could not set TCP_NODELAY: {e}");
        }
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let stop = shutdown.clone();
        let header_timeout = gateway.settings().gateway.header_timeout;
        connections.spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(tcp), service);
            tokio::pin!(connection);
            tokio::select! {
                served = connection.as_mut() => {
                    if let Err(e) = served {
                        tracing::debug!("connection ended: {e}");
                    }
                }
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
        while connections.try_join_next().is_some() {}
    }
    let drained = tokio::time::timeout(Duration::from_secs(5), async {
        while connections.join_next().await.is_some() {}
    });
    if drained.await.is_err() {
        tracing::warn!("open HTTP connections did not close within 5 s after shutdown; dropping them");
    }
    Ok(())
}

async fn status_json(State(gateway): State<Gateway>) -> impl IntoResponse {
    let mut response = Json(gateway.status()).into_response();
    response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// The headers of the status page: no script, no framing, no sniffing, no referrer beyond its
/// own origin (`no-referrer` would make Chromium send `Origin: null` with the approval form,
/// which the access guard refuses).
const PAGE_HEADERS: [(header::HeaderName, &str); 4] = [
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'",
    ),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::X_FRAME_OPTIONS, "DENY"),
    (header::REFERRER_POLICY, "same-origin"),
];

async fn status_page(
    State(gateway): State<Gateway>,
    axum::extract::Query(params): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> impl IntoResponse {
    let query = params.get("q").map(|q| q.trim()).filter(|q| !q.is_empty());
    if query.is_some() {
        crate::gateway::indexed(&gateway.view(None, crate::config::Exposure::Native).toolbox).await;
    }
    let found = query.map(|q| gateway.report().explain(q, 10));
    let token = crate::operator::approval::page_token(&gateway.inner.page_secret);
    let mut response =
        Html(crate::operator::status_page::render(&gateway.status(), found.as_ref(), &token)).into_response();
    for (name, value) in PAGE_HEADERS {
        response.headers_mut().insert(name, HeaderValue::from_static(value));
    }
    response
}

/// `/metrics`: the OpenMetrics text format (which Prometheus scrapes).
async fn metrics(State(gateway): State<Gateway>) -> impl IntoResponse {
    let mut response = gateway.report().metrics().into_response();
    let kind = HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8");
    response.headers_mut().insert(header::CONTENT_TYPE, kind);
    response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// The login form of a gateway with tokens: a browser cannot send a bearer header, so it logs
/// in once with a token and gets a cookie.
fn login_html(problem: Option<&str>) -> Response {
    let problem = problem
        .map(|p| format!("<p class=\"failed\">{}</p>", crate::operator::status_page::esc(p)))
        .unwrap_or_default();
    let body = format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>toolgate: log in</title></head><body>\n\
         <h1>toolgate</h1>\n{problem}<p>This gateway asks for a token. Enter one of its tokens (one without a \
         profile) to see the status page; your browser keeps a cookie for eight hours.</p>\n\
         <form method=\"post\" action=\"/login\"><input type=\"password\" name=\"token\" id=\"token\" \
         autocomplete=\"current-password\"> <button type=\"submit\" id=\"login\">Log in</button></form>\n</body></html>\n"
    );
    let mut response = Html(body).into_response();
    for (name, value) in PAGE_HEADERS {
        response.headers_mut().insert(name, HeaderValue::from_static(value));
    }
    response
}

async fn login_page() -> Response {
    login_html(None)
}

/// `POST /login`: a token entered in the login form, from this gateway's own page. A token of
/// the configuration without a profile gets the login cookie and goes to the page; any other
/// gets the form again, saying why (401).
async fn login(
    State(gateway): State<Gateway>,
    headers: axum::http::HeaderMap,
    axum::Form(pairs): axum::Form<Vec<(String, String)>>,
) -> Response {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Err(why) = crate::operator::approval::check_origin(get("origin"), get("host")) {
        tracing::warn!(target: "toolgate::audit", "login refused: {why}");
        return (StatusCode::FORBIDDEN, why).into_response();
    }
    let entered =
        pairs.iter().find(|(k, _)| k == "token").map(|(_, v)| v.trim().to_owned()).unwrap_or_default();
    let access = &gateway.settings().access;
    let bearer = format!("Bearer {entered}");
    let refuse = |why: &str| {
        tracing::warn!(target: "toolgate::audit", "login refused: {why}");
        let mut response = login_html(Some(why));
        *response.status_mut() = StatusCode::UNAUTHORIZED;
        response
    };
    match access.check(get("host"), get("origin"), Some(&bearer), None) {
        Ok(Some(token)) if token.profile.is_none() => {
            tracing::info!(target: "toolgate::audit", token = %token.name, "logged in to the status page");
            let mut response = StatusCode::SEE_OTHER.into_response();
            response.headers_mut().insert(header::LOCATION, HeaderValue::from_static("/"));
            if let Ok(cookie) = HeaderValue::from_str(&crate::operator::approval::login_cookie(
                &gateway.inner.page_secret,
                &token.name,
            )) {
                response.headers_mut().insert(header::SET_COOKIE, cookie);
            }
            response
        }
        Ok(Some(_)) => refuse(
            "that token serves a profile; the status page shows every subject and needs a token without one",
        ),
        Ok(None) => refuse("this gateway has no tokens: its page needs no login"),
        Err(_) => refuse("that is not a token of this gateway"),
    }
}

/// The status page's approval form: `page` (the page's token), and `tool=NAME` with
/// `hash=HASH` for each definition the page showed. The access guard has checked the token;
/// here the page's token, the origin (the gateway's own page only) and the hashes are checked,
/// and nothing is approved unless all hold: a definition changed since the page showed it, an
/// unknown name, or a form that names nothing is 400 with the reason. Answers 303 back to the
/// page.
async fn approve(
    State(gateway): State<Gateway>,
    headers: axum::http::HeaderMap,
    axum::Form(pairs): axum::Form<Vec<(String, String)>>,
) -> Response {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let refused = |status: StatusCode, why: String| {
        tracing::warn!(target: "toolgate::audit", action = "approval refused", "{why}");
        (status, why).into_response()
    };
    if let Err(why) = crate::operator::approval::check_origin(get("origin"), get("host")) {
        return refused(StatusCode::FORBIDDEN, why);
    }
    let field = |key: &'static str| pairs.iter().filter(move |(k, _)| k == key).map(|(_, v)| v.clone());
    let page = field(crate::operator::approval::PAGE_FIELD).next();
    if let Err(why) = crate::operator::approval::check_page_token(&gateway.inner.page_secret, page.as_deref())
    {
        return refused(StatusCode::FORBIDDEN, why);
    }
    let tools: Vec<String> = field("tool").collect();
    let hashes: Vec<String> = field("hash").collect();
    if tools.is_empty() || tools.len() != hashes.len() {
        return refused(
            StatusCode::BAD_REQUEST,
            "name each tool to approve with the hash of the definition shown (tool=NAME&hash=HASH)".into(),
        );
    }
    let shown: Vec<(String, String)> = tools.into_iter().zip(hashes).collect();
    match gateway.approvals().approve(crate::pins::Selection::Shown(&shown)) {
        Ok(done) if done.is_empty() => {
            refused(StatusCode::BAD_REQUEST, "nothing matched: no tool was approved".into())
        }
        Ok(done) => {
            let names: Vec<&str> = done.iter().map(|h| h.qualified.as_str()).collect();
            tracing::info!(target: "toolgate::audit", tools = ?names, action = "approved", "approved from the status page");
            let mut response = StatusCode::SEE_OTHER.into_response();
            response.headers_mut().insert(header::LOCATION, HeaderValue::from_static("/"));
            response
        }
        Err(e) => refused(StatusCode::BAD_REQUEST, e.message),
    }
}
