//! approval: the status page's approval form, made so that it cannot be turned against the
//! operator. The page is rendered with a token of its own (valid for an hour, signed with a
//! secret of this process), and each form names the definition hash it showed; the form is
//! accepted only with that token, from the gateway's own origin, and approves exactly the
//! definitions that were shown (one changed since is refused). An approval that matches nothing
//! is an error, never a success. On a gateway with tokens, a browser logs in once with a token
//! (`/login`) and gets a cookie a script cannot read and no other site's page sends, because a
//! browser cannot send a bearer header with a form.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use toolgate::secret::{constant_time_eq, hmac_sha256};

use crate::gateway::Gateway;
use crate::pins::{Held, PinError, Selection};

impl Gateway {
    /// The held tools and their approval.
    pub fn approvals(&self) -> Approvals<'_> {
        Approvals { gateway: self }
    }
}

/// The held tools of a gateway and their approval (`Gateway::approvals`): a view of the
/// gateway with no state of its own.
#[derive(Debug, Clone, Copy)]
pub struct Approvals<'a> {
    gateway: &'a Gateway,
}

impl Approvals<'_> {
    /// Rebuilds whenever another process (`toolgate approve`) wrote the pin store: its
    /// approvals take effect within a second.
    /// The pin store is the one in force at each tick: a reload may open it, or another.
    pub(crate) fn watch(&self) {
        let gateway = self.gateway.clone();
        let version = move || gateway.current().pins.as_ref().map(|p| p.store.version().ok());
        let gateway = self.gateway.clone();
        let task = tokio::spawn(async move {
            let mut last = version();
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tokio::select! {
                    _ = gateway.inner.shutdown.cancelled() => return,
                    _ = tick.tick() => {}
                }
                let now = version();
                if now != last {
                    last = now;
                    if let Err(e) = gateway.rebuild(None) {
                        tracing::error!("{e}");
                    }
                }
            }
        });
        self.gateway.track(task);
    }

    /// Approves held tools (see [`crate::pins`]) and serves them at once. Fails when no
    /// server is pinned or the store cannot be written.
    pub fn approve(&self, selection: Selection<'_>) -> Result<Vec<Held>, PinError> {
        let current = self.gateway.current();
        let Some(pins) = &current.pins else {
            return Err(PinError { path: "".into(), message: "no server has `trust = \"pin\"`".into() });
        };
        let approved = pins.store.approve(selection)?;
        if let Err(e) = self.gateway.rebuild(None) {
            tracing::error!("{e}");
        }
        Ok(approved)
    }

    /// The tools waiting in quarantine (none when no server is pinned).
    pub fn held(&self) -> Result<Vec<Held>, PinError> {
        self.gateway.current().pins.as_ref().map_or(Ok(Vec::new()), |p| p.store.held())
    }
}

/// How long a page's token is accepted.
const PAGE_TOKEN_SECS: u64 = 3600;

/// The form field that carries the page's token.
pub(crate) const PAGE_FIELD: &str = "page";

/// A new page's token: when it was made, and a MAC of that under `secret`.
pub(crate) fn page_token(secret: &[u8; 32]) -> String {
    let made = unix_now();
    format!("{made}.{}", mac(secret, made))
}

/// Why a form's page token is not accepted, if it is not.
pub(crate) fn check_page_token(secret: &[u8; 32], token: Option<&str>) -> Result<(), String> {
    let Some(token) = token else {
        return Err("the form carries no page token: approve from the status page".into());
    };
    let Some((made, given)) = token.split_once('.') else {
        return Err("the form's page token is malformed".into());
    };
    let Ok(made) = made.parse::<u64>() else {
        return Err("the form's page token is malformed".into());
    };
    let expected = mac(secret, made);
    let same = constant_time_eq(expected.as_bytes(), given.as_bytes());
    if !same {
        return Err("the form's page token was not made by this gateway".into());
    }
    if unix_now().saturating_sub(made) > PAGE_TOKEN_SECS {
        return Err("the page is more than an hour old: reload it and approve again".into());
    }
    Ok(())
}

/// Why a form from `origin` to a gateway reached as `host` is refused, if it is: a browser
/// posting it from any other origin (another port of localhost included) is refused.
pub(crate) fn check_origin(origin: Option<&str>, host: Option<&str>) -> Result<(), String> {
    let (Some(origin), Some(host)) = (origin, host) else {
        // Browsers send Origin with every form post; a client that sends none is no page.
        return Ok(());
    };
    let own = [format!("http://{host}"), format!("https://{host}")];
    if own.iter().any(|o| o.eq_ignore_ascii_case(origin.trim_end_matches('/'))) {
        Ok(())
    } else {
        Err(format!("the approval form was posted from {origin}, not from this gateway's own page"))
    }
}

/// The cookie a browser gets for a token entered once on the login page.
pub(crate) const LOGIN_COOKIE: &str = "toolgate_login";

/// How long a browser stays logged in.
const LOGIN_SECS: u64 = 8 * 3600;

/// The `Set-Cookie` value that logs a browser in as token `name` for eight hours: HttpOnly (no
/// script reads it) and SameSite=Strict (no other site's page sends it).
pub(crate) fn login_cookie(secret: &[u8; 32], name: &str) -> String {
    let until = unix_now() + LOGIN_SECS;
    let value = format!("{name}.{until}.{}", login_mac(secret, name, until));
    format!("{LOGIN_COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/; Max-Age={LOGIN_SECS}")
}

/// The token name a request's `Cookie` header logs it in as, if its login cookie is this
/// gateway's and still valid.
pub(crate) fn logged_in(secret: &[u8; 32], cookies: Option<&str>) -> Option<String> {
    let value = cookies?
        .split(';')
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == LOGIN_COOKIE)
        .map(|(_, v)| v)?;
    let mut parts = value.rsplitn(3, '.');
    let (given, until, name) = (parts.next()?, parts.next()?, parts.next()?);
    let until: u64 = until.parse().ok()?;
    let expected = login_mac(secret, name, until);
    let same = constant_time_eq(expected.as_bytes(), given.as_bytes());
    (same && until > unix_now()).then(|| name.to_owned())
}

fn login_mac(secret: &[u8; 32], name: &str, until: u64) -> String {
    sign(secret, &format!("toolgate-login\0{name}\0{until}"))
}

fn mac(secret: &[u8; 32], made: u64) -> String {
    sign(secret, &format!("toolgate-status-page\0{made}"))
}

/// The first 16 bytes of the HMAC of `message` under `secret`, in hex.
fn sign(secret: &[u8; 32], message: &str) -> String {
    hmac_sha256(secret, message.as_bytes())[..16].iter().map(|b| format!("{b:02x}")).collect()
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_token_holds_for_its_gateway_only() {
        let secret = [7u8; 32];
        let token = page_token(&secret);
        assert_eq!(check_page_token(&secret, Some(&token)), Ok(()));
        assert!(check_page_token(&[8u8; 32], Some(&token)).is_err());
        assert!(check_page_token(&secret, None).is_err());
        let old = format!("{}.{}", unix_now() - 7200, mac(&secret, unix_now() - 7200));
        assert!(check_page_token(&secret, Some(&old)).unwrap_err().contains("hour"));
        let forged = format!("{}.{}", unix_now() + 10, &token[token.find('.').unwrap() + 1..]);
        assert!(check_page_token(&secret, Some(&forged)).is_err());
    }

    #[test]
    fn a_login_cookie_names_its_token_until_it_expires_and_cannot_be_made_elsewhere() {
        let secret = [3u8; 32];
        let cookie = login_cookie(&secret, "ci");
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
        let value = cookie.split(';').next().unwrap();
        assert_eq!(logged_in(&secret, Some(&format!("a=b; {value}"))).as_deref(), Some("ci"));
        assert_eq!(logged_in(&[4u8; 32], Some(value)), None);
        let renamed = value.replacen("=ci.", "=root.", 1);
        assert_eq!(logged_in(&secret, Some(&renamed)), None);
        let past = format!("{LOGIN_COOKIE}=ci.1.{}", login_mac(&secret, "ci", 1));
        assert_eq!(logged_in(&secret, Some(&past)), None);
        assert_eq!(logged_in(&secret, None), None);
    }

    #[test]
    fn only_the_gateways_own_origin_may_post() {
        assert_eq!(check_origin(Some("http://127.0.0.1:8765"), Some("127.0.0.1:8765")), Ok(()));
        assert!(check_origin(Some("http://localhost:3000"), Some("127.0.0.1:8765")).is_err());
        assert!(check_origin(Some("http://127.0.0.1:3000"), Some("127.0.0.1:8765")).is_err());
        assert!(check_origin(Some("null"), Some("127.0.0.1:8765")).is_err());
        assert_eq!(check_origin(None, Some("127.0.0.1:8765")), Ok(()));
    }
}
