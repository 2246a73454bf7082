//! fetch: the few HTTP requests OAuth needs (metadata, key sets, token endpoints), each with a
//! timeout and a cap on what is read, and errors that name the URL.

use std::time::Duration;

use serde_json::Value;

/// The most read of one answer: metadata, key sets and tokens are a few KiB.
const MAX_BODY: usize = 1 << 20;

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The client every OAuth request goes through: no redirects followed (a metadata or token
/// endpoint that redirects is refused, not followed to wherever it points).
pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

/// An answer: its status and its body read as JSON (`Null` when it is not JSON).
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Value,
}

/// Sends `request` and reads at most [`MAX_BODY`] bytes of the answer.
pub(crate) async fn send(request: reqwest::RequestBuilder, url: &str) -> Result<Answer, String> {
    let mut response = request.send().await.map_err(|e| format!("{url} could not be reached: {e}"))?;
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("{url}: the answer broke off: {e}"))? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!("{url} answered more than {MAX_BODY} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Answer { status, body: serde_json::from_slice(&body).unwrap_or(Value::Null) })
}

/// GETs `url` and returns its JSON object; any other status or body is an error naming `url`.
pub(crate) async fn json(client: &reqwest::Client, url: &str) -> Result<Value, String> {
    let answer = send(client.get(url).header("accept", "application/json"), url).await?;
    if answer.status != 200 {
        return Err(format!("{url} answered HTTP {}", answer.status));
    }
    if !answer.body.is_object() {
        return Err(format!("{url} did not answer a JSON object"));
    }
    Ok(answer.body)
}

/// The URL of a well-known document for `base` (RFC 8615, with RFC 8414's and RFC 9728's
/// rule for a URL with a path: the well-known part goes between the origin and the path).
pub(crate) fn well_known(base: &str, name: &str) -> Option<String> {
    let (scheme, rest) = base.split_once("://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    Some(format!("{scheme}://{authority}/.well-known/{name}{path}"))
}

/// The authorization server metadata of `issuer`: OpenID discovery (`ISSUER/.well-known/
/// openid-configuration`) first, RFC 8414 (`/.well-known/oauth-authorization-server`) next.
/// The document must name `issuer` as its own (RFC 8414 §3.3), so that no other server's
/// metadata is taken for it.
pub(crate) async fn authorization_server(client: &reqwest::Client, issuer: &str) -> Result<Value, String> {
    let issuer = issuer.trim_end_matches('/');
    let candidates = [
        Some(format!("{issuer}/.well-known/openid-configuration")),
        well_known(issuer, "oauth-authorization-server"),
        well_known(issuer, "openid-configuration"),
    ];
    let mut failures = Vec::new();
    for url in candidates.into_iter().flatten() {
        if failures.iter().any(|(u, _): &(String, String)| *u == url) {
            continue;
        }
        match json(client, &url).await {
            Ok(doc) => {
                let named = doc.get("issuer").and_then(Value::as_str).unwrap_or_default();
                if named.trim_end_matches('/') != issuer {
                    return Err(format!("{url} names issuer `{named}`, not `{issuer}`; it is not taken"));
                }
                return Ok(doc);
            }
            Err(e) => failures.push((url, e)),
        }
    }
    let tried: Vec<String> = failures.into_iter().map(|(_, e)| e).collect();
    Err(format!("no authorization server metadata for `{issuer}`: {}", tried.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_urls_put_the_path_after_the_name() {
        assert_eq!(
            well_known("https://id.example", "oauth-authorization-server").unwrap(),
            "https://id.example/.well-known/oauth-authorization-server"
        );
        assert_eq!(
            well_known("http://127.0.0.1:8765/mcp/", "oauth-protected-resource").unwrap(),
            "http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            well_known("https://id.example/tenant/a?x=1", "openid-configuration").unwrap(),
            "https://id.example/.well-known/openid-configuration/tenant/a"
        );
        assert_eq!(well_known("no scheme", "x"), None);
    }
}
