//! approval: the status page's approval form, made so that it cannot be turned against the
//! operator. The page is rendered with a token of its own (valid for an hour, signed with a
//! secret of this process), and each form names the definition hash it showed; the form is
//! accepted only with that token, from the gateway's own origin, and approves exactly the
//! definitions that were shown (one changed since is refused). An approval that matches nothing
//! is an error, never a success.

use std::time::{SystemTime, UNIX_EPOCH};

use toolgate::grant::hmac_sha256;

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
    let same = expected.len() == given.len()
        && expected.bytes().zip(given.bytes()).fold(0u8, |a, (x, y)| a | (x ^ y)) == 0;
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

fn mac(secret: &[u8; 32], made: u64) -> String {
    let digest = hmac_sha256(secret, format!("toolgate-status-page\0{made}").as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
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
    fn only_the_gateways_own_origin_may_post() {
        assert_eq!(check_origin(Some("http://127.0.0.1:8765"), Some("127.0.0.1:8765")), Ok(()));
        assert!(check_origin(Some("http://localhost:3000"), Some("127.0.0.1:8765")).is_err());
        assert!(check_origin(Some("http://127.0.0.1:3000"), Some("127.0.0.1:8765")).is_err());
        assert!(check_origin(Some("null"), Some("127.0.0.1:8765")).is_err());
        assert_eq!(check_origin(None, Some("127.0.0.1:8765")), Ok(()));
    }
}
