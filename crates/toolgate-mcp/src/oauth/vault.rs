//! vault: the upstream tokens `toolgate login` got, kept encrypted at rest. Each server's
//! tokens are one file, `$XDG_DATA_HOME/toolgate/oauth/NAME.token`, sealed with AES-256-GCM
//! under a key kept apart from them: the environment variable `TOOLGATE_OAUTH_KEY` (64 hex
//! digits), else `$XDG_CONFIG_HOME/toolgate/oauth.key`, made on first use and readable by its
//! owner only. A file is bound to its server's name and resource URL, so one cannot be moved
//! to stand for another server, and one that was edited is not read.

use std::path::PathBuf;

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

/// The first line of a token file.
const MAGIC: &str = "toolgate-oauth 1";

/// The variable that holds the vault's key, when it is not kept in a file.
pub const KEY_VARIABLE: &str = "TOOLGATE_OAUTH_KEY";

/// What is kept for one server.
#[derive(Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Stored {
    /// The authorization server.
    pub issuer: String,
    /// Its token endpoint.
    pub token_endpoint: String,
    /// The client the tokens were issued to (configured, or registered by `toolgate login`).
    pub client_id: String,
    /// That client's secret, if registration gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The access token.
    pub access_token: String,
    /// When it expires (seconds since the epoch), if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// The scopes granted.
    #[serde(default)]
    pub scope: String,
}

impl std::fmt::Debug for Stored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stored")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("expires_at", &self.expires_at)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "***"))
            .finish_non_exhaustive()
    }
}

/// The directory of token files and the key that seals them.
#[derive(Clone)]
pub struct Vault {
    dir: PathBuf,
    key: [u8; 32],
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vault").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl Vault {
    /// The default vault: [`KEY_VARIABLE`] or the key file, and the data directory's `oauth`.
    pub fn open_default() -> Result<Vault, String> {
        let dir = toolgate::files::data_dir()
            .ok_or("neither XDG_DATA_HOME nor HOME is set: there is nowhere to keep upstream tokens")?
            .join("oauth");
        let key = match std::env::var(KEY_VARIABLE) {
            Ok(hex) => parse_hex_key(&hex)?,
            Err(_) => {
                let file = toolgate::files::config_dir()
                    .ok_or("neither XDG_CONFIG_HOME nor HOME is set: there is nowhere to keep the token key")?
                    .join("oauth.key");
                toolgate::files::key_file(&file).ok_or_else(|| {
                    format!("cannot read or make the token key {} (32 bytes)", file.display())
                })?
            }
        };
        Ok(Vault::new(dir, key))
    }

    /// A vault in `dir` sealed with `key`.
    pub fn new(dir: PathBuf, key: [u8; 32]) -> Vault {
        Vault { dir, key }
    }

    /// The file of server `name`.
    pub fn path(&self, name: &str) -> PathBuf {
        // The file name is made safe whatever the name is, and stays one name's alone: any
        // byte but a letter, a digit, `-` and `_` is written `~XX`.
        let mut safe = String::with_capacity(name.len());
        for b in name.bytes() {
            if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
                safe.push(b as char);
            } else {
                safe.push_str(&format!("~{b:02x}"));
            }
        }
        self.dir.join(format!("{safe}.token"))
    }

    fn sealing_key(&self) -> LessSafeKey {
        LessSafeKey::new(UnboundKey::new(&AES_256_GCM, &self.key).expect("a 32-byte key"))
    }

    /// Seals and saves the tokens of server `name` for `resource`.
    pub fn save(&self, name: &str, resource: &str, stored: &Stored) -> Result<(), String> {
        let mut plain = serde_json::to_vec(stored).map_err(|e| e.to_string())?;
        let nonce_bytes: [u8; NONCE_LEN] =
            toolgate::secret::random_secret()[..NONCE_LEN].try_into().expect("12 of 32 bytes");
        self.sealing_key()
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce_bytes),
                aad(name, resource),
                &mut plain,
            )
            .map_err(|_| "the tokens could not be sealed".to_owned())?;
        let mut sealed = nonce_bytes.to_vec();
        sealed.extend(plain);
        let text = format!("{MAGIC}\n{}\n", STANDARD.encode(sealed));
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        let path = self.path(name);
        toolgate::files::replace(&path, text.as_bytes(), 0o600)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// The tokens of server `name` for `resource`: `Ok(None)` when none were saved, an error
    /// when the file is there but cannot be opened with this key for this server.
    pub fn load(&self, name: &str, resource: &str) -> Result<Option<Stored>, String> {
        let path = self.path(name);
        // A sealed file is a few KiB; a link, a FIFO or anything longer is not read.
        let text = match toolgate::files::read_regular(&path, 1 << 20) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        open_sealed(&self.sealing_key(), &text, name, resource)
            .map(Some)
            .ok_or_else(|| {
                format!(
                    "{} cannot be opened: it was written for another server or with another key \
                     ({KEY_VARIABLE} or the oauth.key file), or it was changed; run `toolgate login {name}` again",
                    path.display()
                )
            })
    }

    /// Forgets the tokens of server `name`.
    pub fn remove(&self, name: &str) -> std::io::Result<()> {
        match std::fs::remove_file(self.path(name)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

fn aad(name: &str, resource: &str) -> Aad<Vec<u8>> {
    Aad::from(format!("{MAGIC}\n{name}\n{resource}").into_bytes())
}

fn open_sealed(key: &LessSafeKey, text: &str, name: &str, resource: &str) -> Option<Stored> {
    let body = text.strip_prefix(MAGIC)?.trim();
    let mut sealed = STANDARD.decode(body).ok()?;
    if sealed.len() < NONCE_LEN {
        return None;
    }
    let nonce = Nonce::try_assume_unique_for_key(&sealed[..NONCE_LEN]).ok()?;
    let plain = key.open_within(nonce, aad(name, resource), &mut sealed, NONCE_LEN..).ok()?;
    serde_json::from_slice(plain).ok()
}

/// A key written as 64 hex digits.
fn parse_hex_key(hex: &str) -> Result<[u8; 32], String> {
    let hex = hex.trim();
    let bad = || {
        format!("{KEY_VARIABLE} must be 64 hex digits (32 bytes), like the output of `openssl rand -hex 32`")
    };
    if hex.len() != 64 {
        return Err(bad());
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored() -> Stored {
        Stored {
            issuer: "http://id.test".into(),
            token_endpoint: "http://id.test/token".into(),
            client_id: "c".into(),
            access_token: "ACCESS-SECRET-123".into(),
            refresh_token: Some("REFRESH-SECRET-456".into()),
            expires_at: Some(99),
            ..Stored::default()
        }
    }

    #[test]
    fn tokens_are_sealed_bound_to_their_server_and_key() {
        let dir = std::env::temp_dir().join(format!("toolgate-vault-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let vault = Vault::new(dir.clone(), [7; 32]);
        assert_eq!(vault.load("github", "https://a/mcp").unwrap(), None);
        vault.save("github", "https://a/mcp", &stored()).unwrap();
        let text = std::fs::read_to_string(vault.path("github")).unwrap();
        assert!(!text.contains("SECRET") && text.starts_with(MAGIC), "sealed at rest: {text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(vault.path("github")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(vault.load("github", "https://a/mcp").unwrap(), Some(stored()));
        // Another resource, another key, a file moved to another server's name, an edit.
        assert!(vault.load("github", "https://b/mcp").unwrap_err().contains("cannot be opened"));
        assert!(Vault::new(dir.clone(), [8; 32]).load("github", "https://a/mcp").is_err());
        std::fs::copy(vault.path("github"), vault.path("linear")).unwrap();
        assert!(vault.load("linear", "https://a/mcp").is_err());
        let mut bytes = STANDARD.decode(text.lines().nth(1).unwrap()).unwrap();
        let last = bytes.len() - 20;
        bytes[last] ^= 1;
        std::fs::write(vault.path("github"), format!("{MAGIC}\n{}\n", STANDARD.encode(bytes))).unwrap();
        assert!(vault.load("github", "https://a/mcp").is_err());
        assert!(!format!("{:?} {:?}", stored(), vault).contains("SECRET"));
        vault.remove("github").unwrap();
        vault.remove("github").unwrap();
        assert_eq!(vault.path("../x"), dir.join("~2e~2e~2fx.token"));
        assert_ne!(vault.path("a.b"), vault.path("a_b"), "two names, two files");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_key_from_the_environment_is_64_hex_digits() {
        assert_eq!(parse_hex_key(&"0f".repeat(32)).unwrap(), [15; 32]);
        assert!(parse_hex_key("abc").is_err());
        assert!(parse_hex_key(&"zz".repeat(32)).is_err());
    }
}
