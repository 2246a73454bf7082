//! login: `toolgate login SERVER`, a person signing the gateway in to an upstream's
//! authorization server once: the authorization code flow with PKCE (S256) and a loopback
//! redirect (RFC 8252), the server's metadata found as [`client::discover`] finds it, a client
//! registered on the fly (RFC 7591) when none is configured, and the tokens sealed in the
//! [`Vault`] for the gateway to use and refresh.

use std::time::Duration;

use crate::config::ServerOAuth;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::client::{self, ClientAuth, urlencode};
use super::fetch;
use super::vault::{Stored, Vault};

/// What `toolgate login` needs besides the server.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
}

/// Signs in to the authorization server of server `name` at `url`, and seals the tokens in
/// `vault`. A client secret goes only to an authorization server `settings` or `trust` names
/// ([`client::discover`]). `show` is given the authorization URL to open (a browser, or the terminal).
pub async fn login(
    name: &str,
    url: &str,
    settings: &ServerOAuth,
    trust: &client::Trust,
    vault: &Vault,
    options: &Options,
    show: impl Fn(&str),
) -> Result<Stored, String> {
    let http = fetch::client();
    let sends = match settings.client_secret {
        Some(_) => client::Sends::Credential("the gateway's client secret"),
        None => client::Sends::Public,
    };
    let found = client::discover(&http, name, url, settings, trust, sends).await?;
    let resource = client::resource_of(url, settings);
    let authorize = found.endpoint("authorization_endpoint")?;
    let token_endpoint = found.endpoint("token_endpoint")?;
    let methods = found.metadata.get("code_challenge_methods_supported").and_then(Value::as_array);
    if !methods.is_some_and(|m| m.iter().any(|x| x == "S256")) {
        return Err(format!(
            "the authorization server `{}` does not say it supports PKCE with S256 \
             (code_challenge_methods_supported); toolgate will not sign in without it",
            found.issuer
        ));
    }
    let listener = TcpListener::bind(("127.0.0.1", settings.redirect_port)).await.map_err(|e| {
        format!("cannot listen on 127.0.0.1:{} for the redirect: {e}", settings.redirect_port)
    })?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let (client_id, client_secret) = match &settings.client_id {
        Some(id) => (id.clone(), settings.client_secret.as_ref().map(|s| s.0.clone())),
        None => register(&http, &found, &redirect_uri).await?,
    };
    let verifier = URL_SAFE_NO_PAD.encode(toolgate::secret::random_secret());
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let state = URL_SAFE_NO_PAD.encode(&toolgate::secret::random_secret()[..16]);
    let mut query = vec![
        ("response_type", "code".to_owned()),
        ("client_id", client_id.clone()),
        ("redirect_uri", redirect_uri.clone()),
        ("state", state.clone()),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256".to_owned()),
        ("resource", resource.clone()),
    ];
    if !settings.scopes.is_empty() {
        query.push(("scope", settings.scopes.join(" ")));
    }
    let query: Vec<String> = query.iter().map(|(k, v)| format!("{k}={}", urlencode(v))).collect();
    let separator = if authorize.contains('?') { '&' } else { '?' };
    show(&format!("{authorize}{separator}{}", query.join("&")));
    let code =
        tokio::time::timeout(options.timeout, callback(&listener, &state, &found.issuer)).await.map_err(
            |_| format!("nobody came back to {redirect_uri} within {} s", options.timeout.as_secs()),
        )??;
    let form = vec![
        ("grant_type", "authorization_code".to_owned()),
        ("code", code),
        ("redirect_uri", redirect_uri),
        ("code_verifier", verifier),
        ("resource", resource.clone()),
    ];
    let auth = ClientAuth::of(&found.metadata, &client_id, client_secret.as_deref());
    let mut stored = client::token_request(&http, &token_endpoint, &auth, form).await?;
    stored.issuer = found.issuer.clone();
    stored.client_id = client_id;
    stored.client_secret = client_secret;
    vault.save(name, &resource, &stored)?;
    Ok(stored)
}

/// Registers toolgate as a public native client (RFC 7591) redirecting to `redirect_uri`.
async fn register(
    http: &reqwest::Client,
    found: &client::Discovered,
    redirect_uri: &str,
) -> Result<(String, Option<String>), String> {
    let endpoint = found.endpoint("registration_endpoint").map_err(|_| {
        format!(
            "the authorization server `{}` offers no dynamic client registration; register a client \
             there and set `client_id` in [servers.NAME.oauth]",
            found.issuer
        )
    })?;
    let metadata = serde_json::json!({
        "client_name": "toolgate",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    });
    let answer = fetch::send(http.post(&endpoint).json(&metadata), &endpoint).await?;
    if !(200..300).contains(&answer.status) {
        let why = answer.body.get("error_description").or(answer.body.get("error")).and_then(Value::as_str);
        return Err(format!(
            "{endpoint} refused to register toolgate ({}): {}",
            answer.status,
            why.unwrap_or("no reason given")
        ));
    }
    let id = answer
        .body
        .get("client_id")
        .and_then(Value::as_str)
        .ok_or(format!("{endpoint} answered no client_id"))?;
    let secret = answer.body.get("client_secret").and_then(Value::as_str).map(str::to_owned);
    Ok((id.to_owned(), secret))
}

/// Waits for the browser's redirect to `/callback` with this `state`, answers it, and returns
/// the code. Other requests (a favicon, a stray page) get 404; a redirect with another state
/// gets 400 and is otherwise ignored, so a page cannot end the login with its own code.
async fn callback(listener: &TcpListener, state: &str, issuer: &str) -> Result<String, String> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let mut head = Vec::new();
        let mut buffer = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer)).await {
                Ok(Ok(n)) if n > 0 => head.extend_from_slice(&buffer[..n]),
                _ => break,
            }
        }
        let text = String::from_utf8_lossy(&head);
        let target = text.lines().next().and_then(|l| l.split(' ').nth(1)).unwrap_or_default().to_owned();
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        let params: Vec<(String, String)> = query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .map(|(k, v)| (decode(k), decode(v)))
            .collect();
        let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let answer = |status: &str, body: &str| {
            format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
                 connection: close\r\ncache-control: no-store\r\n\r\n{body}",
                body.len()
            )
        };
        if path != "/callback" {
            let _ = stream.write_all(answer("404 Not Found", "not here").as_bytes()).await;
            continue;
        }
        if param("state").as_deref() != Some(state) {
            let _ = stream
                .write_all(
                    answer(
                        "400 Bad Request",
                        "<p>This sign-in was not started here (the state does not match).</p>",
                    )
                    .as_bytes(),
                )
                .await;
            continue;
        }
        // RFC 9207: an authorization server that names itself must be the one asked.
        if let Some(iss) = param("iss")
            && iss.trim_end_matches('/') != issuer.trim_end_matches('/')
        {
            let _ = stream
                .write_all(
                    answer("400 Bad Request", "<p>The answer came from another authorization server.</p>")
                        .as_bytes(),
                )
                .await;
            return Err(format!("the redirect came from issuer `{iss}`, not `{issuer}`"));
        }
        if let Some(error) = param("error") {
            let description = param("error_description").unwrap_or_default();
            let _ = stream
                .write_all(answer("400 Bad Request", "<p>Sign-in failed; see the terminal.</p>").as_bytes())
                .await;
            return Err(format!("the authorization server refused: {error} {description}").trim().to_owned());
        }
        let Some(code) = param("code") else {
            let _ = stream.write_all(answer("400 Bad Request", "<p>No code came back.</p>").as_bytes()).await;
            continue;
        };
        let _ = stream
            .write_all(answer("200 OK", "<p>toolgate is signed in. You can close this tab.</p>").as_bytes())
            .await;
        return Ok(code);
    }
}

/// Decodes one `application/x-www-form-urlencoded` value.
fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(high), Some(low)) => {
                        out.push((high * 16 + low) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_decode() {
        assert_eq!(decode("a+b%3Ac%2fd"), "a b:c/d");
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz"), "%zz");
        assert_eq!(decode("%é"), "%é");
        assert_eq!(decode(&urlencode("é x/?")), "é x/?");
    }
}
