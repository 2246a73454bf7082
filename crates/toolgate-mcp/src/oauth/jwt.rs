//! jwt: JSON Web Tokens (RFC 7519) signed with a key of a JSON Web Key Set (RFC 7517): RSA
//! (PKCS #1 v1.5 and PSS), ECDSA on P-256 and P-384, and Ed25519. Unsigned tokens (`none`) and
//! shared-secret ones (`HS*`) are never accepted: a resource server holds no issuer's secret.

use aws_lc_rs::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey, VerificationAlgorithm};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};

/// The longest token read (bytes): access tokens are a few KiB at most.
pub(crate) const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// The signature algorithms accepted (`alg`).
pub(crate) const ALGORITHMS: &[&str] =
    &["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];

/// A token read but not yet verified.
#[derive(Debug)]
pub(crate) struct Jwt<'a> {
    /// The header's `alg`.
    pub(crate) alg: String,
    /// The header's `kid`, if it names one.
    pub(crate) kid: Option<String>,
    /// The claims.
    pub(crate) claims: Map<String, Value>,
    /// What the signature covers: `header.payload` as sent.
    signed: &'a str,
    signature: Vec<u8>,
}

/// Reads a compact JWS: three base64url parts, a JSON header with an accepted `alg` and no
/// `crit` extension, and a JSON object of claims. Nothing here is trusted until
/// [`Key::verify`] says so.
pub(crate) fn parse(token: &str) -> Result<Jwt<'_>, String> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(format!("the token is {} bytes, over the {MAX_TOKEN_BYTES} read", token.len()));
    }
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("the token is not a JWT (three base64url parts separated by dots)".to_owned());
    };
    let decode = |part: &str, what: &str| {
        URL_SAFE_NO_PAD.decode(part).map_err(|_| format!("the token's {what} is not base64url"))
    };
    let object = |bytes: Vec<u8>, what: &str| match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(format!("the token's {what} is not a JSON object")),
    };
    let head = object(decode(header, "header")?, "header")?;
    let alg = head.get("alg").and_then(Value::as_str).unwrap_or_default().to_owned();
    if !ALGORITHMS.contains(&alg.as_str()) {
        return Err(format!("the token is signed with `{alg}`; accepted are {}", ALGORITHMS.join(", ")));
    }
    if head.contains_key("crit") {
        return Err("the token's header has `crit` extensions, which are not understood here".to_owned());
    }
    let kid = head.get("kid").and_then(Value::as_str).map(str::to_owned);
    let claims = object(decode(payload, "payload")?, "payload")?;
    let signed = &token[..header.len() + 1 + payload.len()];
    Ok(Jwt { alg, kid, claims, signed, signature: decode(signature, "signature")? })
}

/// A public key of a key set.
#[derive(Debug, Clone)]
pub(crate) struct Key {
    /// Its `kid`.
    pub(crate) kid: Option<String>,
    /// The one algorithm it is for, if the set says (`alg`).
    alg: Option<String>,
    material: Material,
}

#[derive(Debug, Clone)]
enum Material {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// An uncompressed point (`04 || x || y`) on `crv`.
    Ec {
        crv: String,
        point: Vec<u8>,
    },
    Ed25519(Vec<u8>),
}

/// The signing keys of a JWKS document: keys for encryption (`use = "enc"`), of an unknown
/// type or with missing parts are left out.
pub(crate) fn keys_of(jwks: &Value) -> Vec<Key> {
    let b64 = |key: &Map<String, Value>, name: &str| {
        key.get(name).and_then(Value::as_str).and_then(|s| URL_SAFE_NO_PAD.decode(s).ok())
    };
    let mut out = Vec::new();
    for key in jwks.get("keys").and_then(Value::as_array).into_iter().flatten() {
        let Some(key) = key.as_object() else { continue };
        if key.get("use").and_then(Value::as_str).is_some_and(|u| u != "sig") {
            continue;
        }
        let text = |name: &str| key.get(name).and_then(Value::as_str).map(str::to_owned);
        let material = match text("kty").as_deref() {
            Some("RSA") => match (b64(key, "n"), b64(key, "e")) {
                (Some(n), Some(e)) => Material::Rsa { n, e },
                _ => continue,
            },
            Some("EC") => match (text("crv"), b64(key, "x"), b64(key, "y")) {
                (Some(crv), Some(x), Some(y)) => {
                    let mut point = vec![4];
                    point.extend(x);
                    point.extend(y);
                    Material::Ec { crv, point }
                }
                _ => continue,
            },
            Some("OKP") if text("crv").as_deref() == Some("Ed25519") => match b64(key, "x") {
                Some(x) => Material::Ed25519(x),
                None => continue,
            },
            _ => continue,
        };
        out.push(Key { kid: text("kid"), alg: text("alg"), material });
    }
    out
}

impl Key {
    /// Whether this key may check a signature made with `alg`.
    pub(crate) fn fits(&self, alg: &str) -> bool {
        if self.alg.as_deref().is_some_and(|a| a != alg) {
            return false;
        }
        match &self.material {
            Material::Rsa { .. } => alg.starts_with("RS") || alg.starts_with("PS"),
            Material::Ec { crv, .. } => {
                (alg == "ES256" && crv == "P-256") || (alg == "ES384" && crv == "P-384")
            }
            Material::Ed25519(_) => alg == "EdDSA",
        }
    }

    /// Whether `jwt`'s signature is this key's.
    pub(crate) fn verify(&self, jwt: &Jwt<'_>) -> bool {
        if !self.fits(&jwt.alg) {
            return false;
        }
        let message = jwt.signed.as_bytes();
        let signature = jwt.signature.as_slice();
        match &self.material {
            Material::Rsa { n, e } => {
                let params = match jwt.alg.as_str() {
                    "RS256" => &signature::RSA_PKCS1_2048_8192_SHA256,
                    "RS384" => &signature::RSA_PKCS1_2048_8192_SHA384,
                    "RS512" => &signature::RSA_PKCS1_2048_8192_SHA512,
                    "PS256" => &signature::RSA_PSS_2048_8192_SHA256,
                    "PS384" => &signature::RSA_PSS_2048_8192_SHA384,
                    _ => &signature::RSA_PSS_2048_8192_SHA512,
                };
                RsaPublicKeyComponents { n: n.as_slice(), e: e.as_slice() }
                    .verify(params, message, signature)
                    .is_ok()
            }
            Material::Ec { point, .. } => {
                let algorithm: &dyn VerificationAlgorithm = if jwt.alg == "ES256" {
                    &signature::ECDSA_P256_SHA256_FIXED
                } else {
                    &signature::ECDSA_P384_SHA384_FIXED
                };
                UnparsedPublicKey::new(algorithm, point).verify(message, signature).is_ok()
            }
            Material::Ed25519(x) => {
                UnparsedPublicKey::new(&signature::ED25519, x).verify(message, signature).is_ok()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair};

    fn b64(bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }

    fn signed(alg: &str, kid: &str, claims: &Value, sign: impl Fn(&[u8]) -> Vec<u8>) -> String {
        let header = b64(serde_json::json!({"alg": alg, "kid": kid, "typ": "at+jwt"}).to_string().as_bytes());
        let payload = b64(claims.to_string().as_bytes());
        let input = format!("{header}.{payload}");
        let signature = sign(input.as_bytes());
        format!("{input}.{}", b64(&signature))
    }

    #[test]
    fn ec_and_ed25519_signatures_verify_and_tampering_does_not() {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let ec =
            EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap();
        let point = ec.public_key().as_ref().to_vec();
        let jwks = serde_json::json!({"keys": [
            {"kty": "EC", "crv": "P-256", "kid": "ec", "x": b64(&point[1..33]), "y": b64(&point[33..])},
            {"kty": "RSA", "use": "enc", "kid": "skipped", "n": "AQAB", "e": "AQAB"},
        ]});
        let keys = keys_of(&jwks);
        assert_eq!(keys.len(), 1, "an encryption key is not a signing key");
        let claims = serde_json::json!({"sub": "alice"});
        let token = signed("ES256", "ec", &claims, |m| ec.sign(&rng, m).unwrap().as_ref().to_vec());
        let jwt = parse(&token).unwrap();
        assert_eq!(jwt.kid.as_deref(), Some("ec"));
        assert!(keys[0].verify(&jwt));
        let (head, _) = token.rsplit_once('.').unwrap();
        let forged = format!(
            "{}.{}",
            head.replace(&b64(claims.to_string().as_bytes()), &b64(br#"{"sub":"admin"}"#)),
            token.rsplit('.').next().unwrap()
        );
        assert!(!keys[0].verify(&parse(&forged).unwrap()), "other claims, same signature");

        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        let ed = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let jwks = serde_json::json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": b64(ed.public_key().as_ref())}]});
        let token = signed("EdDSA", "ed", &claims, |m| ed.sign(m).as_ref().to_vec());
        let key = &keys_of(&jwks)[0];
        assert!(key.verify(&parse(&token).unwrap()));
        assert!(!keys[0].verify(&parse(&token).unwrap()), "an EC key does not check an EdDSA signature");
    }

    #[test]
    fn unsigned_shared_secret_and_malformed_tokens_are_refused() {
        let none = format!("{}.{}.", b64(br#"{"alg":"none"}"#), b64(br#"{"sub":"x"}"#));
        assert!(parse(&none).unwrap_err().contains("`none`"));
        let hs = format!("{}.{}.{}", b64(br#"{"alg":"HS256"}"#), b64(br#"{"sub":"x"}"#), b64(b"sig"));
        assert!(parse(&hs).unwrap_err().contains("`HS256`"));
        let crit = format!("{}.{}.{}", b64(br#"{"alg":"RS256","crit":["x"]}"#), b64(b"{}"), b64(b"s"));
        assert!(parse(&crit).unwrap_err().contains("crit"));
        assert!(parse("a.b").unwrap_err().contains("three"));
        assert!(parse(&"x".repeat(MAX_TOKEN_BYTES + 1)).unwrap_err().contains("bytes"));
        let array = format!("{}.{}.{}", b64(br#"{"alg":"RS256"}"#), b64(b"[1]"), b64(b"s"));
        assert!(parse(&array).unwrap_err().contains("payload"));
    }
}
