//! access: who may talk to the gateway over HTTP. The `Host` a request names (a page on
//! another site that rebinds its DNS to 127.0.0.1 still sends its own name), the `Origin` a
//! browser sends (the MCP specification says servers must check it), and the bearer token
//! that proves a caller and, when it is given one, chooses the caller's subject: a token, not
//! a client's header, decides which profile a session sees.

use std::fmt;

use sha2::{Digest, Sha256};

/// A caller's token, kept as its SHA-256 only.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    /// The token's name in the configuration (`[tokens.NAME]`), for logs.
    pub name: String,
    digest: [u8; 32],
    /// The subject the token's sessions are (`profile = "NAME"`), or the gateway's own.
    pub profile: Option<String>,
}

impl Token {
    /// A token of `secret` named `name`, serving `profile`.
    pub fn new(name: &str, secret: &str, profile: Option<String>) -> Token {
        Token { name: name.to_owned(), digest: Sha256::digest(secret.as_bytes()).into(), profile }
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Token")
            .field("name", &self.name)
            .field("profile", &self.profile)
            .finish_non_exhaustive()
    }
}

/// Who is asking, settled once by the access guard for every HTTP request: each later stage
/// (the body limits, the door, the session cap, the server's handlers, a session's restore)
/// reads this, and none of them reads the request's `Authorization`, `Mcp-Session-Id` or
/// `X-Toolgate-Profile` header again. A session answers only the caller it was opened by.
/// There is no default caller: only the access guard makes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller {
    /// Who the caller is: the name of its token (`[tokens.NAME]`), or the issuer and subject
    /// of its OAuth access token ([`Identity::key`](crate::oauth::resource::Identity::key));
    /// `None` when the gateway asks for no token.
    pub(crate) token: Option<String>,
    /// The OAuth access token it sent, for an upstream that acts for each user (token
    /// exchange); never for a static token.
    pub(crate) bearer: Option<std::sync::Arc<str>>,
    /// The profile it asks for besides its path's: its `X-Toolgate-Profile` header, else the
    /// profile its token serves. Whether that profile exists, and agrees with the path, is
    /// [`crate::downstream::door::asked_profile`]'s to say.
    pub(crate) profile: Option<String>,
    /// The session it names (`Mcp-Session-Id`), if any.
    pub(crate) session: Option<String>,
}

impl Caller {
    /// The caller of the HTTP request whose head is `parts`, as the access guard settled it.
    pub(crate) fn of(parts: &axum::http::request::Parts) -> Option<&Caller> {
        parts.extensions.get::<Caller>()
    }

    /// The caller of the HTTP request behind `context`; `None` on stdio.
    pub(crate) fn behind(context: &rmcp::service::RequestContext<rmcp::RoleServer>) -> Option<&Caller> {
        Caller::of(context.extensions.get::<axum::http::request::Parts>()?)
    }
}

/// The OAuth access token of the HTTP request behind `context`, if its caller sent one.
pub(crate) fn bearer_of(
    context: &rmcp::service::RequestContext<rmcp::RoleServer>,
) -> Option<std::sync::Arc<str>> {
    Caller::behind(context)?.bearer.clone()
}

/// Which hosts, origins and tokens the HTTP endpoints accept.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// Host names (or `host:port`) accepted besides the loopback ones, lower case.
    pub hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`) accepted besides loopback ones, lower case.
    pub origins: Vec<String>,
    /// The tokens; with none and no `oauth`, no token is asked for (only allowed on a
    /// loopback address).
    pub tokens: Vec<Token>,
    /// The verifier of OAuth access tokens (`[oauth]`), accepted beside the static tokens.
    pub oauth: Option<std::sync::Arc<crate::oauth::resource::Resource>>,
}

/// Why a request was refused, and the HTTP status that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A `Host` that is neither loopback nor configured (403).
    Host(String),
    /// An `Origin` that is neither loopback nor configured (403).
    Origin(String),
    /// No token, or not a known one (401).
    Token,
    /// A profile header or path other than the one the token serves (403).
    Profile {
        /// What the request named.
        asked: String,
        /// What the token serves.
        token: String,
    },
}

impl Refusal {
    /// The HTTP status of the refusal.
    pub fn status(&self) -> u16 {
        if *self == Refusal::Token { 401 } else { 403 }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Host(h) => write!(
                f,
                "toolgate refuses Host `{h}`: only localhost, 127.0.0.1, ::1 and the names in \
                 [gateway] allowed_hosts are served (this protects against DNS rebinding)"
            ),
            Refusal::Origin(o) => write!(
                f,
                "toolgate refuses Origin `{o}`: only loopback origins and those in [gateway] \
                 allowed_origins may call it from a browser"
            ),
            Refusal::Token => f.write_str(
                "toolgate needs a bearer token here: send `Authorization: Bearer TOKEN` with a token of \
                 the configuration's [tokens]",
            ),
            Refusal::Profile { asked, token } => write!(
                f,
                "this token serves profile `{token}`, and the request asks for `{asked}`; a token's \
                 profile cannot be changed by a header or path"
            ),
        }
    }
}

/// The host part of an authority (`host`, `host:port`, `[v6]:port`), lower case.
fn host_of(authority: &str) -> String {
    let a = authority.trim().to_ascii_lowercase();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default().to_owned();
    }
    match a.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') && port.chars().all(|c| c.is_ascii_digit()) => {
            host.to_owned()
        }
        _ => a,
    }
}

/// Whether `host` names this machine's loopback interface.
fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host == "::1"
        || host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

/// Compares two digests without stopping at the first difference.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Access {
    /// Whether a caller must prove itself: static tokens or OAuth are configured.
    pub fn asks_for_tokens(&self) -> bool {
        !self.tokens.is_empty() || self.oauth.is_some()
    }

    /// Checks a request's `Host`, `Origin` and `Authorization` headers, and the profile it
    /// asks for (its `/mcp/NAME` path or `X-Toolgate-Profile` header). Returns the token that
    /// proved the caller, if tokens are required.
    pub fn check(
        &self,
        host: Option<&str>,
        origin: Option<&str>,
        authorization: Option<&str>,
        asked_profile: Option<&str>,
    ) -> Result<Option<&Token>, Refusal> {
        let host = host.unwrap_or_default();
        let name = host_of(host);
        let listed = self.hosts.iter().any(|h| *h == name || *h == host.to_ascii_lowercase());
        if !(is_loopback(&name) || listed) {
            return Err(Refusal::Host(host.to_owned()));
        }
        if let Some(origin) = origin {
            let o = origin.trim().trim_end_matches('/').to_ascii_lowercase();
            let loopback = ["http://", "https://"]
                .iter()
                .find_map(|scheme| o.strip_prefix(scheme))
                .is_some_and(|authority| is_loopback(&host_of(authority)));
            if !(loopback || self.origins.contains(&o)) {
                return Err(Refusal::Origin(origin.to_owned()));
            }
        }
        if !self.asks_for_tokens() {
            return Ok(None);
        }
        let presented = authorization
            .and_then(|a| a.strip_prefix("Bearer ").or_else(|| a.strip_prefix("bearer ")))
            .map(|t| -> [u8; 32] { Sha256::digest(t.trim().as_bytes()).into() })
            .ok_or(Refusal::Token)?;
        // Every token is compared, so the time taken says nothing about which one matched.
        let mut found = None;
        for token in &self.tokens {
            if same(&token.digest, &presented) && found.is_none() {
                found = Some(token);
            }
        }
        let token = found.ok_or(Refusal::Token)?;
        if let (Some(serves), Some(asked)) = (&token.profile, asked_profile)
            && serves != asked
        {
            return Err(Refusal::Profile { asked: asked.to_owned(), token: serves.clone() });
        }
        Ok(Some(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access() -> Access {
        Access {
            hosts: vec!["gateway.internal".into()],
            origins: vec!["https://app.example".into()],
            tokens: vec![
                Token::new("ci", "s3cret-token", None),
                Token::new("reader", "r3ader", Some("reader".into())),
            ],
            oauth: None,
        }
    }

    #[test]
    fn hosts_and_origins_are_loopback_or_configured() {
        let open = Access::default();
        for host in ["127.0.0.1:8765", "localhost", "LOCALHOST:1", "[::1]:8765", "127.1.2.3"] {
            assert_eq!(open.check(Some(host), None, None, None), Ok(None), "{host}");
        }
        for host in ["evil.example", "evil.example:8765", "127.0.0.1.evil.example", "", "[::2]:80"] {
            assert_eq!(open.check(Some(host), None, None, None), Err(Refusal::Host(host.into())), "{host}");
        }
        let ok = |origin| open.check(Some("localhost"), Some(origin), None, None).is_ok();
        assert!(ok("http://localhost:6274") && ok("http://127.0.0.1") && ok("https://[::1]:3000/"));
        assert!(!ok("http://evil.example") && !ok("null") && !ok("http://localhost.evil.example"));
        assert!(!ok("file://localhost"));
        let a = access();
        assert!(
            a.check(
                Some("gateway.internal:443"),
                Some("https://app.example"),
                Some("Bearer s3cret-token"),
                None
            )
            .is_ok()
        );
    }

    #[test]
    fn tokens_prove_the_caller_and_fix_its_profile() {
        let a = access();
        let host = Some("localhost");
        assert_eq!(a.check(host, None, None, None).unwrap_err(), Refusal::Token);
        assert_eq!(a.check(host, None, Some("Bearer nope"), None).unwrap_err(), Refusal::Token);
        assert_eq!(a.check(host, None, Some("Basic s3cret-token"), None).unwrap_err(), Refusal::Token);
        assert_eq!(a.check(host, None, Some("Bearer s3cret-token"), None).unwrap().unwrap().name, "ci");
        let reader = a.check(host, None, Some("Bearer r3ader"), Some("reader")).unwrap().unwrap();
        assert_eq!(reader.profile.as_deref(), Some("reader"));
        let forged = a.check(host, None, Some("Bearer r3ader"), Some("admin")).unwrap_err();
        assert_eq!(forged, Refusal::Profile { asked: "admin".into(), token: "reader".into() });
        assert_eq!(forged.status(), 403);
        assert!(!format!("{:?}", a).contains("s3cret"), "no secret in Debug");
    }
}
