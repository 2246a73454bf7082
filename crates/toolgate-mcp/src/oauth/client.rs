//! client: the gateway as an OAuth client of an upstream MCP server (`[servers.NAME.oauth]`).
//!
//! - **Discovery**: the server's own protected-resource metadata (RFC 9728) names its
//!   authorization server, whose metadata (RFC 8414, OpenID discovery) names the endpoints;
//!   `issuer` in the configuration skips the first step.
//! - **Only named parties** get a credential: the caller's token (exchange) and the gateway's
//!   client secret (client credentials, a login with a secret) go only to an authorization
//!   server the operator named, the server's own `issuer` or one of `[oauth] issuers`; an
//!   upstream whose metadata names another is an error at start naming the server and both
//!   URLs ([`Trust`]). A refresh token goes only to the token endpoint the login used.
//! - **Client credentials**: the gateway's own token, asked for again before it expires.
//! - **Authorization code**: the tokens `toolgate login` got and sealed in the [`Vault`],
//!   refreshed before they expire (the new ones sealed again).
//! - **Token exchange** (RFC 8693): a call carries a token the authorization server exchanged
//!   for the caller's own (`OnBehalf`), so the server sees who is calling; the gateway's own
//!   client-credentials token only lists. A caller without an OAuth identity is refused before
//!   anything is sent (the gateway's pool).
//! - Every token request names the server as its `resource` (RFC 8707), so the token is good
//!   for that server alone. Tokens are never logged.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::config::{OAuthGrant, ServerOAuth};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use serde_json::Value;

use super::fetch;
use super::vault::{Stored, Vault};

/// A token is renewed when it has less than this left (seconds).
const RENEW_BEFORE_SECS: u64 = 60;

/// The most exchanged tokens kept (one per caller's token); past it the expired ones go, then
/// all.
const MAX_EXCHANGED: usize = 10_000;

/// The access token of the caller a request is made for, kept in the request's extensions
/// (never serialized, so never sent): the upstream's HTTP client exchanges it.
#[derive(Clone)]
pub(crate) struct OnBehalf(pub(crate) Arc<str>);

impl std::fmt::Debug for OnBehalf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnBehalf(***)")
    }
}

/// The authorization servers the operator named, to which a credential may go.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// The issuers of `[oauth] issuers` (the gateway's own callers').
    pub issuers: Vec<String>,
}

/// What a server's authorization server will be sent, which decides whether discovery may
/// follow the server's own metadata to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sends {
    /// A public client's request (a login with PKCE and no secret): the person signing in sees
    /// the authorization server, and what it gets is its own code.
    Public,
    /// A credential of the gateway's or a caller's (a client secret, a caller's token to
    /// exchange): only to an authorization server the operator named.
    Credential(&'static str),
}

/// `request` made for the caller whose OAuth access token is `on_behalf`: the token rides
/// beside it, never sent, for the upstream's HTTP client to exchange when the upstream acts
/// for each user, where [`credential_of`] refuses a request without one.
pub(crate) fn for_caller(
    mut request: rmcp::model::ClientRequest,
    on_behalf: Option<&Arc<str>>,
) -> rmcp::model::ClientRequest {
    if let Some(token) = on_behalf {
        rmcp::model::GetExtensions::extensions_mut(&mut request).insert(OnBehalf(token.clone()));
    }
    request
}

/// Where a server's tokens come from, and the last one got.
pub struct Credentials {
    name: String,
    resource: String,
    settings: ServerOAuth,
    trust: Trust,
    http: reqwest::Client,
    /// The authorization server, once found (found again after a token request fails).
    discovered: tokio::sync::Mutex<Option<Discovered>>,
    /// The vault, for tokens `toolgate login` got (opened on first use).
    vault: std::sync::OnceLock<Result<Vault, String>>,
    current: tokio::sync::Mutex<Option<Stored>>,
    /// Tokens exchanged for callers', by the SHA-256 of the caller's token.
    exchanged: tokio::sync::Mutex<std::collections::HashMap<[u8; 32], Stored>>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("name", &self.name)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

/// What discovery found: the issuer and its metadata.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The authorization server's issuer.
    pub issuer: String,
    /// Its metadata document.
    pub metadata: Value,
}

impl Discovered {
    /// An endpoint of the metadata (`token_endpoint`, `authorization_endpoint`, …).
    pub fn endpoint(&self, name: &str) -> Result<String, String> {
        self.metadata
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("the metadata of `{}` names no {name}", self.issuer))
    }
}

/// The resource a server's tokens are for: `resource`, else its URL.
pub fn resource_of(url: &str, settings: &ServerOAuth) -> String {
    settings.resource.clone().unwrap_or_else(|| url.to_owned())
}

/// Finds the authorization server of server `name` at `url`: `settings.issuer`, else the one
/// the server's protected-resource metadata names (path-aware URL first, then the root one).
/// When the authorization server will be sent a credential (`sends`), discovery takes only one
/// the operator named: `settings.issuer`, or one of `trust`'s issuers that the metadata lists;
/// a metadata that names only others is an error naming the server, the metadata's URL and
/// the authorization servers on both sides.
pub async fn discover(
    http: &reqwest::Client,
    name: &str,
    url: &str,
    settings: &ServerOAuth,
    trust: &Trust,
    sends: Sends,
) -> Result<Discovered, String> {
    let issuer = match &settings.issuer {
        Some(issuer) => issuer.clone(),
        None => {
            let resource = resource_of(url, settings);
            let origin_only = url
                .split_once("://")
                .map(|(s, rest)| format!("{s}://{}", rest.split('/').next().unwrap_or_default()));
            let mut tried = Vec::new();
            let mut found = None;
            for base in [Some(url.to_owned()), origin_only].into_iter().flatten() {
                let Some(meta_url) = fetch::well_known(&base, "oauth-protected-resource") else { continue };
                if tried.contains(&meta_url) {
                    continue;
                }
                match fetch::json(http, &meta_url).await {
                    Ok(doc) => {
                        found = Some((meta_url, doc));
                        break;
                    }
                    Err(e) => tried.push(e),
                }
            }
            let (meta_url, doc) = found.ok_or_else(|| {
                format!(
                    "{url} publishes no protected-resource metadata ({}); set `issuer` in [servers.{name}.oauth]",
                    tried.join("; ")
                )
            })?;
            let named = doc.get("resource").and_then(Value::as_str).unwrap_or_default();
            if !resource.trim_end_matches('/').starts_with(named.trim_end_matches('/')) || named.is_empty() {
                return Err(format!(
                    "{meta_url} describes resource `{named}`, not {resource}; its metadata is not taken"
                ));
            }
            let listed: Vec<&str> = doc
                .get("authorization_servers")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if listed.is_empty() {
                return Err(format!("{meta_url} names no authorization_servers"));
            }
            match sends {
                Sends::Public => listed[0].to_owned(),
                Sends::Credential(what) => {
                    let trusted = listed.iter().find_map(|server| {
                        trust.issuers.iter().find(|i| i.trim_end_matches('/') == server.trim_end_matches('/'))
                    });
                    match trusted {
                        Some(issuer) => issuer.clone(),
                        None => {
                            return Err(format!(
                                "server `{name}`: its metadata {meta_url} names authorization server {}, which \
                                 the configuration does not name ({}); {what} is sent only to an authorization \
                                 server the operator named: if you trust {}, set `issuer = \"{}\"` in \
                                 [servers.{name}.oauth]",
                                listed.join(", "),
                                if trust.issuers.is_empty() {
                                    "no `issuer` here and no [oauth] issuers".to_owned()
                                } else {
                                    format!("[oauth] issuers: {}", trust.issuers.join(", "))
                                },
                                listed[0],
                                listed[0]
                            ));
                        }
                    }
                }
            }
        }
    };
    let metadata = fetch::authorization_server(http, &issuer).await?;
    Ok(Discovered { issuer, metadata })
}

/// The seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default()
}

/// How a client proves itself at the token endpoint.
pub(crate) enum ClientAuth<'a> {
    /// A public client: its id in the form.
    Public(&'a str),
    /// HTTP Basic with the id and secret (RFC 6749 §2.3.1), or in the form when the server
    /// supports only `client_secret_post`.
    Secret { id: &'a str, secret: &'a str, post: bool },
}

impl<'a> ClientAuth<'a> {
    /// The way `metadata` supports for a client of `id` and `secret`.
    pub(crate) fn of(metadata: &Value, id: &'a str, secret: Option<&'a str>) -> ClientAuth<'a> {
        let Some(secret) = secret else { return ClientAuth::Public(id) };
        let methods: Vec<&str> = metadata
            .get("token_endpoint_auth_methods_supported")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let post = !methods.is_empty()
            && !methods.contains(&"client_secret_basic")
            && methods.contains(&"client_secret_post");
        ClientAuth::Secret { id, secret, post }
    }
}

/// Asks `endpoint` for a token with `form` (the grant's own fields), authenticated as
/// `client`; returns what it answered, with `expires_at` worked out.
pub(crate) async fn token_request(
    http: &reqwest::Client,
    endpoint: &str,
    client: &ClientAuth<'_>,
    mut form: Vec<(&str, String)>,
) -> Result<Stored, String> {
    let mut request = http.post(endpoint).header("accept", "application/json");
    match client {
        ClientAuth::Public(id) => form.push(("client_id", (*id).to_owned())),
        ClientAuth::Secret { id, secret, post: true } => {
            form.push(("client_id", (*id).to_owned()));
            form.push(("client_secret", (*secret).to_owned()));
        }
        ClientAuth::Secret { id, secret, post: false } => {
            request = request.basic_auth(urlencode(id), Some(urlencode(secret)));
        }
    }
    let answer = fetch::send(request.form(&form), endpoint).await?;
    if answer.status != 200 {
        let code = answer.body.get("error").and_then(Value::as_str).unwrap_or("no error code");
        let description = answer.body.get("error_description").and_then(Value::as_str).unwrap_or_default();
        return Err(format!(
            "the token endpoint {endpoint} refused ({}): {code}{}{description}",
            answer.status,
            if description.is_empty() { "" } else { ": " }
        ));
    }
    let body = answer.body;
    let access_token = body.get("access_token").and_then(Value::as_str).unwrap_or_default();
    if access_token.is_empty() {
        return Err(format!("the token endpoint {endpoint} answered no access_token"));
    }
    let token_type = body.get("token_type").and_then(Value::as_str).unwrap_or("bearer");
    if !token_type.eq_ignore_ascii_case("bearer") && !token_type.eq_ignore_ascii_case("n_a") {
        return Err(format!(
            "the token endpoint {endpoint} answered a `{token_type}` token; only bearer tokens are used"
        ));
    }
    Ok(Stored {
        token_endpoint: endpoint.to_owned(),
        access_token: access_token.to_owned(),
        expires_at: body.get("expires_in").and_then(Value::as_u64).map(|s| now() + s),
        refresh_token: body.get("refresh_token").and_then(Value::as_str).map(str::to_owned),
        scope: body.get("scope").and_then(Value::as_str).unwrap_or_default().to_owned(),
        ..Stored::default()
    })
}

/// `application/x-www-form-urlencoded` encoding of one value (RFC 6749 Appendix B).
pub(crate) fn urlencode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

impl Credentials {
    /// The credentials of server `name` at `url`; a credential goes only to an authorization
    /// server `settings` or `trust` names.
    pub fn new(name: &str, url: &str, settings: ServerOAuth, trust: Trust) -> Credentials {
        Credentials {
            name: name.to_owned(),
            resource: resource_of(url, &settings),
            settings,
            trust,
            http: fetch::client(),
            discovered: tokio::sync::Mutex::new(None),
            vault: std::sync::OnceLock::new(),
            current: tokio::sync::Mutex::new(None),
            exchanged: tokio::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// Uses `vault` for tokens `toolgate login` got, instead of the default one.
    pub fn with_vault(self, vault: Vault) -> Credentials {
        let _ = self.vault.set(Ok(vault));
        self
    }

    fn vault(&self) -> Result<&Vault, String> {
        self.vault.get_or_init(Vault::open_default).as_ref().map_err(Clone::clone)
    }

    /// The grant.
    pub fn grant(&self) -> OAuthGrant {
        self.settings.grant
    }

    /// The authorization server, found once ([`discover`]; a credential of this grant goes
    /// only to one the operator named).
    async fn authorization_server(&self) -> Result<Discovered, String> {
        let mut kept = self.discovered.lock().await;
        if let Some(found) = kept.as_ref() {
            return Ok(found.clone());
        }
        let sends = match self.settings.grant {
            OAuthGrant::TokenExchange => Sends::Credential("a caller's access token (token exchange)"),
            OAuthGrant::ClientCredentials => Sends::Credential("the gateway's client secret"),
            OAuthGrant::AuthorizationCode if self.settings.client_secret.is_some() => {
                Sends::Credential("the gateway's client secret")
            }
            OAuthGrant::AuthorizationCode => Sends::Public,
        };
        let found =
            discover(&self.http, &self.name, &self.resource, &self.settings, &self.trust, sends).await?;
        *kept = Some(found.clone());
        Ok(found)
    }

    /// Forgets the authorization server found, after a token request failed.
    async fn rediscover(&self) {
        *self.discovered.lock().await = None;
    }

    /// An access token good for at least `RENEW_BEFORE_SECS` more (when the server said
    /// how long it lasts); `renew` asks for a new one whatever the current one says (after the
    /// server refused it).
    pub async fn token(&self, renew: bool) -> Result<String, String> {
        let mut current = self.current.lock().await;
        if current.is_none() && self.settings.grant == OAuthGrant::AuthorizationCode {
            *current = self.vault()?.load(&self.name, &self.resource)?;
            if current.is_none() {
                return Err(format!(
                    "no token for `{}` yet: run `toolgate login {}` once to sign in to its authorization server",
                    self.name, self.name
                ));
            }
        }
        let fresh =
            current.as_ref().is_some_and(|c| c.expires_at.is_none_or(|e| e > now() + RENEW_BEFORE_SECS));
        if let (Some(c), true, false) = (current.as_ref(), fresh, renew) {
            return Ok(c.access_token.clone());
        }
        let got = match self.settings.grant {
            OAuthGrant::AuthorizationCode => {
                let stored = current.clone().expect("loaded above");
                let refreshed = self.refresh(&stored).await.map_err(|e| {
                    format!("the token of `{}` expired and could not be refreshed ({e}); run `toolgate login {}` again", self.name, self.name)
                })?;
                self.vault()?.save(&self.name, &self.resource, &refreshed)?;
                refreshed
            }
            OAuthGrant::ClientCredentials | OAuthGrant::TokenExchange => self.client_credentials().await?,
        };
        tracing::info!(upstream = %self.name, expires_in = ?got.expires_at.map(|e| e.saturating_sub(now())), "got an access token");
        let token = got.access_token.clone();
        *current = Some(got);
        Ok(token)
    }

    /// A token for this server exchanged (RFC 8693) for `subject`, the caller's own access
    /// token; kept until it nears its expiry.
    pub async fn exchanged(&self, subject: &str) -> Result<String, String> {
        use sha2::Digest;
        let key: [u8; 32] = sha2::Sha256::digest(subject.as_bytes()).into();
        let fresh = |s: &Stored| s.expires_at.is_some_and(|e| e > now() + RENEW_BEFORE_SECS);
        if let Some(s) = self.exchanged.lock().await.get(&key).filter(|s| fresh(s)) {
            return Ok(s.access_token.clone());
        }
        let found = self.authorization_server().await?;
        let endpoint = found.endpoint("token_endpoint")?;
        let id = self.settings.client_id.as_deref().unwrap_or_default();
        let secret = self.settings.client_secret.as_ref().map(|s| s.0.as_str());
        const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";
        let mut form = vec![
            ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange".to_owned()),
            ("subject_token", subject.to_owned()),
            ("subject_token_type", ACCESS_TOKEN.to_owned()),
            ("requested_token_type", ACCESS_TOKEN.to_owned()),
            ("resource", self.resource.clone()),
        ];
        if !self.settings.scopes.is_empty() {
            form.push(("scope", self.settings.scopes.join(" ")));
        }
        let got =
            match token_request(&self.http, &endpoint, &ClientAuth::of(&found.metadata, id, secret), form)
                .await
            {
                Ok(got) => got,
                Err(e) => {
                    self.rediscover().await;
                    return Err(format!(
                        "the caller's token could not be exchanged for one of `{}`: {e}",
                        self.name
                    ));
                }
            };
        let token = got.access_token.clone();
        let mut kept = self.exchanged.lock().await;
        if kept.len() >= MAX_EXCHANGED {
            kept.retain(|_, s| fresh(s));
            if kept.len() >= MAX_EXCHANGED {
                kept.clear();
            }
        }
        // A token that says nothing of its expiry is used once.
        if got.expires_at.is_some() {
            kept.insert(key, got);
        }
        Ok(token)
    }

    async fn client_credentials(&self) -> Result<Stored, String> {
        let found = self.authorization_server().await?;
        let endpoint = found.endpoint("token_endpoint")?;
        let id = self.settings.client_id.as_deref().unwrap_or_default();
        let secret = self.settings.client_secret.as_ref().map(|s| s.0.as_str());
        let mut form =
            vec![("grant_type", "client_credentials".to_owned()), ("resource", self.resource.clone())];
        if !self.settings.scopes.is_empty() {
            form.push(("scope", self.settings.scopes.join(" ")));
        }
        let got =
            token_request(&self.http, &endpoint, &ClientAuth::of(&found.metadata, id, secret), form).await;
        if got.is_err() {
            self.rediscover().await;
        }
        let mut got = got?;
        got.issuer = found.issuer;
        got.client_id = id.to_owned();
        Ok(got)
    }

    /// A refresh: the refresh token goes to the token endpoint the login used, and only while
    /// the configuration names no other authorization server for this server than the login's.
    async fn refresh(&self, stored: &Stored) -> Result<Stored, String> {
        let refresh_token = stored.refresh_token.clone().ok_or("no refresh token was issued")?;
        if let Some(named) = &self.settings.issuer
            && named.trim_end_matches('/') != stored.issuer.trim_end_matches('/')
        {
            return Err(format!(
                "the tokens were got from `{}`, and the configuration now names `{named}`; the refresh \
                 token is not sent to either",
                stored.issuer
            ));
        }
        let secret =
            stored.client_secret.as_deref().or(self.settings.client_secret.as_ref().map(|s| s.0.as_str()));
        let metadata = fetch::authorization_server(&self.http, &stored.issuer).await.unwrap_or(Value::Null);
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.clone()),
            ("resource", self.resource.clone()),
        ];
        let mut got = token_request(
            &self.http,
            &stored.token_endpoint,
            &ClientAuth::of(&metadata, &stored.client_id, secret),
            form,
        )
        .await?;
        got.issuer = stored.issuer.clone();
        got.client_id = stored.client_id.clone();
        got.client_secret = stored.client_secret.clone();
        // A server that does not rotate refresh tokens keeps the one it gave.
        got.refresh_token = got.refresh_token.or(Some(refresh_token));
        Ok(got)
    }
}

/// rmcp's streamable HTTP client with the server's current access token on every request,
/// and one retry with a new token when the server refuses the one sent.
#[derive(Clone)]
pub(crate) struct Authorized {
    pub(crate) http: reqwest::Client,
    pub(crate) credentials: Arc<Credentials>,
}

type HttpError = StreamableHttpError<reqwest::Error>;

impl Authorized {
    async fn token(&self, renew: bool) -> Result<String, HttpError> {
        self.credentials
            .token(renew)
            .await
            .map_err(|e| StreamableHttpError::UnexpectedServerResponse(e.into()))
    }

    /// The token `message` goes with, as [`credential_of`] decides.
    async fn token_for(&self, message: &ClientJsonRpcMessage, renew: bool) -> Result<String, HttpError> {
        let refused = |why: String| StreamableHttpError::UnexpectedServerResponse(why.into());
        match credential_of(self.credentials.grant(), message) {
            Credential::Gateway => self.token(renew).await,
            Credential::Caller(subject) => self.credentials.exchanged(&subject).await.map_err(refused),
            Credential::Refused(method) => Err(refused(format!(
                "server `{}` acts for each user with a token exchanged for theirs, and this `{method}` \
                 carries no caller's token; it was not sent (no shared credential is used)",
                self.credentials.name
            ))),
        }
    }
}

/// Which credential a message to an upstream carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Credential {
    /// The gateway's own token for the server.
    Gateway,
    /// A token exchanged for this caller's access token.
    Caller(Arc<str>),
    /// None: the message is not sent (its method, for the error).
    Refused(String),
}

/// What a server that acts for each user (token exchange) is asked with the gateway's own
/// credential: opening the connection and listing what it offers, the same for everyone, and
/// the gateway's own subscription to changes of those lists (2026-07-28; toolgate forwards no
/// caller's subscription).
const LISTING: &[&str] = &[
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "subscriptions/listen",
];

/// The one place that decides which credential a message to an upstream carries. A server
/// with the gateway's own grant gets the gateway's token. A server that acts for each user
/// gets, for listing ([`LISTING`]) and for notifications and answers to its own questions
/// (which ask nothing of it), the gateway's token; for every other request (calls, prompts,
/// resources, completions, subscriptions, tasks, and any method added later) the caller's
/// exchanged token, or nothing at all when the request carries no caller ([`OnBehalf`]).
pub(crate) fn credential_of(grant: OAuthGrant, message: &ClientJsonRpcMessage) -> Credential {
    use rmcp::model::GetExtensions;
    if grant != OAuthGrant::TokenExchange {
        return Credential::Gateway;
    }
    let ClientJsonRpcMessage::Request(request) = message else {
        return Credential::Gateway;
    };
    let method = serde_json::to_value(&request.request)
        .ok()
        .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
    if LISTING.contains(&method.as_str()) {
        return Credential::Gateway;
    }
    match request.request.extensions().get::<OnBehalf>() {
        Some(OnBehalf(subject)) => Credential::Caller(subject.clone()),
        None => Credential::Refused(method),
    }
}

impl StreamableHttpClient for Authorized {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: std::collections::HashMap<axum::http::HeaderName, axum::http::HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(uri, message, session_id, auth, headers, limits).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth: Option<String>,
        headers: std::collections::HashMap<axum::http::HeaderName, axum::http::HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let token = self.token_for(&message, false).await?;
        let first = self
            .http
            .post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                Some(token),
                headers.clone(),
                limits,
            )
            .await;
        match first {
            Err(StreamableHttpError::AuthRequired(_)) => {
                let token = self.token_for(&message, true).await?;
                self.http
                    .post_message_with_response_limits(uri, message, session_id, Some(token), headers, limits)
                    .await
            }
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth: Option<String>,
        headers: std::collections::HashMap<axum::http::HeaderName, axum::http::HeaderValue>,
    ) -> Result<(), HttpError> {
        let token = self.token(false).await?;
        self.http.delete_session(uri, session_id, Some(token), headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth: Option<String>,
        headers: std::collections::HashMap<axum::http::HeaderName, axum::http::HeaderValue>,
    ) -> Result<futures_util::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>, HttpError>
    {
        let token = self.token(false).await?;
        self.http.get_stream(uri, session_id, last_event_id, Some(token), headers).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth: Option<String>,
        headers: std::collections::HashMap<axum::http::HeaderName, axum::http::HeaderValue>,
        max: usize,
    ) -> Result<futures_util::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>, HttpError>
    {
        let token = self.token(false).await?;
        self.http
            .get_stream_with_max_sse_event_size(uri, session_id, last_event_id, Some(token), headers, max)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listing_of_a_per_user_server_goes_with_the_gateways_own_token() {
        use rmcp::model::{
            ClientRequest, GetExtensions, GetPromptRequest, GetPromptRequestParams, ListToolsRequest,
            ReadResourceRequest, ReadResourceRequestParams,
        };
        let message = |request: ClientRequest| {
            ClientJsonRpcMessage::request(request, rmcp::model::RequestId::Number(1))
        };
        let list = message(ClientRequest::ListToolsRequest(ListToolsRequest::default()));
        let read = || {
            ClientRequest::ReadResourceRequest(ReadResourceRequest::new(ReadResourceRequestParams::new(
                "memo://a",
            )))
        };
        let prompt = ClientRequest::GetPromptRequest(GetPromptRequest::new(GetPromptRequestParams::new("p")));
        let exchange = OAuthGrant::TokenExchange;
        assert_eq!(credential_of(exchange, &list), Credential::Gateway);
        assert_eq!(credential_of(exchange, &message(read())), Credential::Refused("resources/read".into()));
        assert_eq!(credential_of(exchange, &message(prompt)), Credential::Refused("prompts/get".into()));
        let mut mine = read();
        mine.extensions_mut().insert(OnBehalf("alice's".into()));
        assert_eq!(credential_of(exchange, &message(mine.clone())), Credential::Caller("alice's".into()));
        // A server with the gateway's own grant gets the gateway's token for everything.
        assert_eq!(credential_of(OAuthGrant::ClientCredentials, &message(mine)), Credential::Gateway);
        assert_eq!(credential_of(OAuthGrant::ClientCredentials, &message(read())), Credential::Gateway);
    }

    #[test]
    fn form_values_are_encoded_and_client_auth_follows_the_metadata() {
        assert_eq!(urlencode("a b:c/d~"), "a+b%3Ac%2Fd~");
        let basic = serde_json::json!({"token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"]});
        assert!(matches!(ClientAuth::of(&basic, "id", Some("s")), ClientAuth::Secret { post: false, .. }));
        let post = serde_json::json!({"token_endpoint_auth_methods_supported": ["client_secret_post"]});
        assert!(matches!(ClientAuth::of(&post, "id", Some("s")), ClientAuth::Secret { post: true, .. }));
        assert!(matches!(
            ClientAuth::of(&Value::Null, "id", Some("s")),
            ClientAuth::Secret { post: false, .. }
        ));
        assert!(matches!(ClientAuth::of(&basic, "id", None), ClientAuth::Public("id")));
    }
}
