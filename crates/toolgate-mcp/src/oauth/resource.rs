//! resource: the gateway as an OAuth 2.1 resource server, as the MCP authorization
//! specification describes one. It publishes its protected-resource metadata (RFC 9728), and
//! reads a JWT access token only from an issuer of the configuration, with that issuer's
//! published keys: the signature, `iss`, `aud` (this gateway's resource URI, RFC 8707), `exp`
//! and `nbf`, and the scopes the configuration asks for. The claims then choose the caller's
//! profile. A caller is known by its issuer and subject, not by the token it sent, so a
//! refreshed token keeps its session.

use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::config::OAuthConfig;
use serde_json::{Map, Value};

use super::fetch;
use super::jwt::{self, Key};

/// Clock difference tolerated on `exp`, `nbf` and `iat`.
const LEEWAY_SECS: u64 = 30;

/// A key set is read again after this long, so a withdrawn key stops working.
const KEYS_MAX_AGE: Duration = Duration::from_secs(3600);

/// A token naming a key the set lacks makes the set be read again, at most this often, so that
/// a stranger sending made-up key ids cannot make the gateway hammer its issuer. The read is
/// single-flight: a token that comes while one is due or under way waits for that one read and
/// takes its answer, so no caller waits longer than this plus one fetch, however many tokens
/// come, and a rotation right after such a token is still picked up.
const REFRESH_AT_MOST_EVERY: Duration = Duration::from_secs(1);

/// Who a verified token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The issuer (`iss`).
    pub issuer: String,
    /// The subject (`sub`).
    pub subject: String,
    /// The profile its claims give, or `None` for the gateway's own subject.
    pub profile: Option<String>,
}

impl Identity {
    /// The caller as a session's owner knows it: issuer and subject. An issuer is a URL, so
    /// this never equals the name of a static token.
    pub fn key(&self) -> String {
        format!("{} {}", self.issuer, self.subject)
    }
}

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejected {
    /// Not a valid token for this gateway (401, `invalid_token`).
    Token(String),
    /// Valid, without a scope the configuration asks for (403, `insufficient_scope`).
    Scope(String),
    /// Valid, but its claims give no profile (403).
    Unmapped(String),
}

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejected::Token(why) | Rejected::Scope(why) | Rejected::Unmapped(why) => f.write_str(why),
        }
    }
}

/// One configured issuer's signing keys, as last read.
#[derive(Debug, Default)]
struct KeySet {
    jwks_uri: Option<String>,
    keys: Vec<Key>,
    read: Option<Instant>,
    /// How many reads there were: a caller that waited for the read lock knows by it whether
    /// another read happened meanwhile.
    reads: u64,
}

/// The keys of one configured issuer, and the lock that makes their re-reads single-flight.
#[derive(Debug, Default)]
struct IssuerKeys {
    set: Mutex<KeySet>,
    reading: tokio::sync::Mutex<()>,
}

/// The verifier of inbound access tokens (`[oauth]`), with each issuer's keys cached.
///
/// Nothing a token's claims choose is fetched before its signature is checked: the issuer is
/// matched against the configured ones first and known from then on by the configured
/// spelling, so the key cache holds one entry per configured issuer, fetched from the
/// configured URL, whatever spelling a token used.
#[derive(Debug)]
pub struct Resource {
    config: OAuthConfig,
    http: reqwest::Client,
    /// One per configured issuer, in the configuration's order.
    keys: Vec<IssuerKeys>,
}

impl Resource {
    /// A verifier of `config`'s tokens.
    pub fn new(config: OAuthConfig) -> Resource {
        let keys = config.issuers.iter().map(|_| IssuerKeys::default()).collect();
        Resource { config, http: fetch::client(), keys }
    }

    /// The resource URI tokens must be for.
    pub fn resource(&self) -> &str {
        &self.config.resource
    }

    /// The URL of this gateway's protected-resource metadata (RFC 9728 §3.1: the well-known
    /// name between the resource's origin and path), which a 401 points to.
    pub fn metadata_url(&self) -> String {
        fetch::well_known(&self.config.resource, "oauth-protected-resource").unwrap_or_default()
    }

    /// The protected-resource metadata document (RFC 9728 §2).
    pub fn metadata(&self) -> Value {
        let mut doc = serde_json::json!({
            "resource": self.config.resource,
            "authorization_servers": self.config.issuers,
            "bearer_methods_supported": ["header"],
            "resource_name": "toolgate",
        });
        if !self.config.scopes.is_empty() {
            doc["scopes_supported"] = serde_json::json!(self.config.scopes);
        }
        doc
    }

    /// The `WWW-Authenticate` value of a 401 or 403 (RFC 6750 §3, RFC 9728 §5.1): the metadata
    /// pointer always, and the error when a token was presented.
    pub fn challenge(&self, rejected: Option<&Rejected>) -> String {
        let mut value = format!("Bearer resource_metadata=\"{}\"", self.metadata_url());
        if !self.config.scopes.is_empty() {
            value.push_str(&format!(", scope=\"{}\"", self.config.scopes.join(" ")));
        }
        if let Some(rejected) = rejected {
            let code = match rejected {
                Rejected::Token(_) => "invalid_token",
                Rejected::Scope(_) => "insufficient_scope",
                Rejected::Unmapped(_) => "insufficient_scope",
            };
            // A quoted-string may not hold `"` or `\`, and a header holds no control characters.
            let description: String = rejected
                .to_string()
                .chars()
                .map(|c| if c == '"' || c == '\\' || c.is_control() { '\'' } else { c })
                .collect();
            value.push_str(&format!(", error=\"{code}\", error_description=\"{description}\""));
        }
        value
    }

    /// Verifies `token` and maps its claims to a profile.
    pub async fn verify(&self, token: &str) -> Result<Identity, Rejected> {
        let bad = |why: String| Rejected::Token(why);
        let jwt = jwt::parse(token).map_err(bad)?;
        // The issuer is matched before anything is fetched: a token of an unknown issuer costs
        // the gateway nothing, and a known one is known by the configuration's spelling.
        let claimed = jwt.claims.get("iss").and_then(Value::as_str).unwrap_or_default();
        let Some(which) = self.config.issuers.iter().position(|i| same_url(i, claimed)) else {
            return Err(bad(format!(
                "tokens of issuer `{}` are not accepted here; accepted issuers: {}",
                shown(claimed),
                self.config.issuers.join(", ")
            )));
        };
        let issuer = &self.config.issuers[which];
        let key = self.key_for(which, &jwt).await.map_err(bad)?;
        if !key.verify(&jwt) {
            return Err(bad(format!("the token's signature is not one of `{issuer}`'s keys")));
        }
        self.check_claims(issuer, &jwt.claims, now())
    }

    /// The key of configured issuer `which` that should have signed `jwt`: by `kid`, reading
    /// the issuer's key set again when it lacks that key (a rotation) or is old. The re-read is
    /// single-flight and at most once every [`REFRESH_AT_MOST_EVERY`]: a caller that waited
    /// while another read takes that read's answer rather than reading again.
    async fn key_for(&self, which: usize, jwt: &jwt::Jwt<'_>) -> Result<Key, String> {
        let issuer = &self.config.issuers[which];
        let slot = &self.keys[which];
        let find = |set: &KeySet| {
            set.keys.iter().find(|k| k.fits(&jwt.alg) && (jwt.kid.is_none() || k.kid == jwt.kid)).cloned()
        };
        let lock = || slot.set.lock().unwrap_or_else(|e| e.into_inner());
        let (found, reads) = {
            let set = lock();
            let stale = set.read.is_none_or(|r| r.elapsed() > KEYS_MAX_AGE);
            match find(&set) {
                Some(key) if !stale => return Ok(key),
                found => (found, set.reads),
            }
        };
        let _reading = slot.reading.lock().await;
        let (wait, jwks_uri) = {
            let set = lock();
            if set.reads != reads {
                // Read by another while this one waited: that read is this token's too.
                return find(&set).ok_or_else(|| unknown_key(issuer, jwt));
            }
            let wait = set.read.map(|r| REFRESH_AT_MOST_EVERY.saturating_sub(r.elapsed()));
            (wait.unwrap_or_default(), set.jwks_uri.clone())
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        let jwks_uri = match jwks_uri {
            Some(uri) => Ok(uri),
            None => fetch::authorization_server(&self.http, issuer).await.and_then(|meta| {
                meta.get("jwks_uri")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| format!("the metadata of `{issuer}` names no jwks_uri"))
            }),
        };
        let read_now = match &jwks_uri {
            Ok(uri) => fetch::json(&self.http, uri).await.map(|doc| jwt::keys_of(&doc)),
            Err(e) => Err(e.clone()),
        };
        let mut set = lock();
        set.reads += 1;
        if let Ok(uri) = jwks_uri {
            set.jwks_uri = Some(uri);
        }
        match read_now {
            Ok(read) => {
                tracing::info!(issuer = %issuer, keys = read.len(), "read the issuer's signing keys");
                set.keys = read;
                set.read = Some(Instant::now());
            }
            // Keys already held keep working while the issuer cannot be reached; a failed
            // read counts as a read for the spacing, so an unreachable issuer is not hammered.
            Err(e) => {
                set.read = Some(Instant::now());
                if found.is_none() {
                    return Err(e);
                }
                tracing::warn!(issuer = %issuer, "{e}; keeping the keys read before");
            }
        }
        find(&set).ok_or_else(|| unknown_key(issuer, jwt))
    }

    /// Checks `iss`, `aud`, `exp`, `nbf`, `iat`, `sub` and the scopes at time `now` (seconds
    /// since the epoch), and maps the claims to a profile.
    fn check_claims(
        &self,
        issuer: &str,
        claims: &Map<String, Value>,
        now: u64,
    ) -> Result<Identity, Rejected> {
        let bad = |why: String| Rejected::Token(why);
        let audiences: Vec<&str> = match claims.get("aud") {
            Some(Value::String(a)) => vec![a],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !audiences.iter().any(|a| same_url(a, &self.config.resource)) {
            return Err(bad(format!(
                "the token is for {}, not for this gateway ({}); ask the authorization server for a \
                 token with resource={}",
                if audiences.is_empty() { "no audience".to_owned() } else { audiences.join(", ") },
                self.config.resource,
                self.config.resource
            )));
        }
        let time = |name: &str| claims.get(name).and_then(Value::as_f64).map(|t| t.max(0.0) as u64);
        match time("exp") {
            None => return Err(bad("the token has no expiry (`exp`)".to_owned())),
            Some(exp) if now >= exp + LEEWAY_SECS => {
                return Err(bad(format!("the token expired {} s ago", now - exp)));
            }
            Some(_) => {}
        }
        if let Some(nbf) = time("nbf")
            && nbf > now + LEEWAY_SECS
        {
            return Err(bad(format!("the token is not valid for another {} s (`nbf`)", nbf - now)));
        }
        if let Some(iat) = time("iat")
            && iat > now + LEEWAY_SECS
        {
            return Err(bad("the token was issued in the future (`iat`)".to_owned()));
        }
        let subject = claims.get("sub").and_then(Value::as_str).unwrap_or_default();
        if subject.is_empty() {
            return Err(bad("the token names no subject (`sub`)".to_owned()));
        }
        let granted = scopes_of(claims);
        let missing: Vec<&str> =
            self.config.scopes.iter().map(String::as_str).filter(|s| !granted.contains(s)).collect();
        if !missing.is_empty() {
            return Err(Rejected::Scope(format!("the token lacks scope {}", missing.join(" "))));
        }
        let profile = self.profile_of(subject, claims)?;
        Ok(Identity { issuer: issuer.to_owned(), subject: subject.to_owned(), profile })
    }

    /// The profile `claims` give: exactly one of `[oauth.profiles]` or `gateway_claims`, or
    /// `default_profile` when none matches. Two that match are refused, not guessed between.
    fn profile_of(&self, subject: &str, claims: &Map<String, Value>) -> Result<Option<String>, Rejected> {
        let matches = |rules: &[String]| rules.iter().any(|r| claim_holds(claims, r));
        let mut found: Vec<Option<String>> = self
            .config
            .profiles
            .iter()
            .filter(|(_, rules)| matches(rules))
            .map(|(name, _)| Some(name.clone()))
            .collect();
        if matches(&self.config.gateway_claims) {
            found.push(None);
        }
        match found.as_slice() {
            [one] => Ok(one.clone()),
            [] => match &self.config.default_profile {
                Some(p) => Ok(Some(p.clone())),
                None => Err(Rejected::Unmapped(format!(
                    "`{subject}` is known to the issuer, but no claim of its token maps to a profile \
                     of this gateway ([oauth.profiles], gateway_claims) and there is no default_profile"
                ))),
            },
            many => {
                let names: Vec<String> =
                    many.iter().map(|p| p.clone().unwrap_or_else(|| "the gateway's own".into())).collect();
                Err(Rejected::Unmapped(format!(
                    "the claims of `{subject}` map to more than one profile ({}); the configuration must \
                     give each identity one",
                    names.join(", ")
                )))
            }
        }
    }
}

fn unknown_key(issuer: &str, jwt: &jwt::Jwt<'_>) -> String {
    format!(
        "the token is signed with key `{}` ({}), which `{issuer}` does not publish",
        shown(jwt.kid.as_deref().unwrap_or("without a kid")),
        jwt.alg
    )
}

/// A value of an unverified token as an error may quote it: at most 200 characters, control
/// characters escaped.
fn shown(value: &str) -> String {
    let mut out: String = value.chars().take(200).flat_map(char::escape_debug).collect();
    if value.chars().count() > 200 {
        out.push('…');
    }
    out
}

/// Two URLs the same up to a trailing slash.
fn same_url(a: &str, b: &str) -> bool {
    !a.is_empty() && a.trim_end_matches('/') == b.trim_end_matches('/')
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default()
}

/// The scopes a token carries: `scope` (space-separated, RFC 9068) or `scp` (an array or a
/// string, as some issuers write it).
fn scopes_of(claims: &Map<String, Value>) -> Vec<&str> {
    let mut out = Vec::new();
    for name in ["scope", "scp"] {
        match claims.get(name) {
            Some(Value::String(s)) => out.extend(s.split_whitespace()),
            Some(Value::Array(list)) => out.extend(list.iter().filter_map(Value::as_str)),
            _ => {}
        }
    }
    out
}

/// Whether `rule` (`NAME=VALUE`, `NAME` a dotted path into nested claims) holds of `claims`.
fn claim_holds(claims: &Map<String, Value>, rule: &str) -> bool {
    let Some((path, wanted)) = rule.split_once('=') else { return false };
    let mut value = None;
    let mut map = Some(claims);
    for part in path.trim().split('.') {
        value = map.and_then(|m| m.get(part));
        map = value.and_then(Value::as_object);
    }
    let is = |v: &Value| match v {
        Value::String(s) => s == wanted,
        Value::Bool(_) | Value::Number(_) => v.to_string().as_str() == wanted,
        _ => false,
    };
    match value {
        Some(Value::Array(list)) => list.iter().any(is),
        Some(Value::String(s)) if matches!(path.trim(), "scope" | "scp") => {
            s.split_whitespace().any(|x| x == wanted)
        }
        Some(v) => is(v),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn resource(default_profile: Option<&str>) -> Resource {
        let mut profiles = BTreeMap::new();
        profiles.insert("reader".to_owned(), vec!["groups=readers".to_owned()]);
        profiles.insert("writer".to_owned(), vec!["groups=writers".to_owned(), "realm.roles=w".to_owned()]);
        Resource::new(OAuthConfig {
            resource: "http://127.0.0.1:8765/mcp".into(),
            issuers: vec!["http://id.test".into()],
            scopes: vec!["mcp".into()],
            profiles,
            gateway_claims: vec!["groups=admins".into()],
            default_profile: default_profile.map(str::to_owned),
        })
    }

    fn claims(extra: Value) -> Map<String, Value> {
        let mut base = serde_json::json!({
            "iss": "http://id.test", "sub": "alice", "aud": "http://127.0.0.1:8765/mcp",
            "exp": 2_000, "iat": 900, "scope": "openid mcp", "groups": ["readers"]});
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                base.as_object_mut().unwrap().remove(k);
            } else {
                base[k] = v.clone();
            }
        }
        base.as_object().unwrap().clone()
    }

    #[test]
    fn audience_time_subject_and_scope_are_checked() {
        let r = resource(None);
        let ok = r.check_claims("http://id.test", &claims(serde_json::json!({})), 1_000).unwrap();
        assert_eq!(ok.profile.as_deref(), Some("reader"));
        assert_eq!(ok.key(), "http://id.test alice");
        let refused =
            |extra: Value, now: u64| r.check_claims("http://id.test", &claims(extra), now).unwrap_err();
        let aud = refused(serde_json::json!({"aud": "http://127.0.0.1:9999/mcp"}), 1_000);
        assert!(aud.to_string().contains("not for this gateway"), "{aud}");
        assert!(matches!(refused(serde_json::json!({"aud": null}), 1_000), Rejected::Token(_)));
        let ok_list = serde_json::json!({"aud": ["other", "http://127.0.0.1:8765/mcp/"]});
        assert!(r.check_claims("http://id.test", &claims(ok_list), 1_000).is_ok());
        assert!(refused(serde_json::json!({}), 2_030).to_string().contains("expired"));
        assert!(r.check_claims("http://id.test", &claims(serde_json::json!({})), 2_029).is_ok(), "leeway");
        assert!(refused(serde_json::json!({"exp": null}), 1_000).to_string().contains("no expiry"));
        assert!(refused(serde_json::json!({"nbf": 1_100}), 1_000).to_string().contains("nbf"));
        assert!(refused(serde_json::json!({"sub": ""}), 1_000).to_string().contains("subject"));
        assert!(matches!(refused(serde_json::json!({"scope": "openid"}), 1_000), Rejected::Scope(_)));
        let scp = serde_json::json!({"scope": null, "scp": ["mcp"]});
        assert!(r.check_claims("http://id.test", &claims(scp), 1_000).is_ok());
    }

    #[test]
    fn claims_map_to_one_profile_or_are_refused() {
        let r = resource(None);
        let profile = |extra: Value| r.check_claims("http://id.test", &claims(extra), 1_000);
        assert_eq!(
            profile(serde_json::json!({"groups": ["writers"]})).unwrap().profile.as_deref(),
            Some("writer")
        );
        let nested = serde_json::json!({"groups": [], "realm": {"roles": ["w"]}});
        assert_eq!(profile(nested).unwrap().profile.as_deref(), Some("writer"));
        assert_eq!(profile(serde_json::json!({"groups": "admins"})).unwrap().profile, None);
        assert!(matches!(profile(serde_json::json!({"groups": []})), Err(Rejected::Unmapped(_))));
        let both = profile(serde_json::json!({"groups": ["readers", "admins"]})).unwrap_err();
        assert!(both.to_string().contains("more than one profile"), "{both}");
        let with_default = resource(Some("reader"));
        let nobody =
            with_default.check_claims("http://id.test", &claims(serde_json::json!({"groups": []})), 1_000);
        assert_eq!(nobody.unwrap().profile.as_deref(), Some("reader"));
    }

    #[test]
    fn the_challenge_points_to_the_metadata_and_quotes_safely() {
        let r = resource(None);
        assert_eq!(r.metadata_url(), "http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp");
        let plain = r.challenge(None);
        assert_eq!(
            plain,
            "Bearer resource_metadata=\"http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\""
        );
        let with = r.challenge(Some(&Rejected::Token("bad \"quote\" \\ here\n".into())));
        assert!(
            with.ends_with("error=\"invalid_token\", error_description=\"bad 'quote' ' here'\""),
            "{with}"
        );
        assert_eq!(r.metadata()["authorization_servers"][0], "http://id.test");
    }

    #[tokio::test]
    async fn an_unknown_issuer_is_refused_without_a_request() {
        let r = resource(None);
        let b64 = |v: Value| {
            use base64::Engine;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
        };
        let token = format!(
            "{}.{}.{}",
            b64(serde_json::json!({"alg": "RS256", "kid": "k"})),
            b64(serde_json::json!({"iss": "http://evil.test", "sub": "x"})),
            b64(serde_json::json!("sig"))
        );
        let refused = r.verify(&token).await.unwrap_err();
        assert!(refused.to_string().contains("issuer `http://evil.test` are not accepted"), "{refused}");
        assert!(r.keys.iter().all(|k| k.set.lock().unwrap().reads == 0), "nothing was fetched");
    }
}
