//! secret: the few primitives every key of toolgate rests on: random bytes nobody can guess,
//! HMAC-SHA-256, and a comparison that takes as long whatever it finds. Grants, signed
//! approval links, the index cache's seal and the token vault use them; they depend on nothing
//! else of the library.

use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// HMAC-SHA-256 (RFC 2104) with a key of at most one block (64 bytes; a longer key is cut).
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut mac = Hmac::new(key);
    mac.update(message);
    mac.finish()
}

/// HMAC-SHA-256 of a message given in parts, as [`hmac_sha256`] computes it whole: for a
/// file authenticated as it is written.
#[derive(Clone)]
pub struct Hmac {
    inner: Sha256,
    outer_key: [u8; 64],
}

impl std::fmt::Debug for Hmac {
    /// Shows nothing of the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hmac").finish_non_exhaustive()
    }
}

impl Hmac {
    /// A MAC under `key` (at most one block, 64 bytes; a longer key is cut), of nothing yet.
    pub fn new(key: &[u8]) -> Hmac {
        let mut inner_key = [0x36u8; 64];
        let mut outer_key = [0x5cu8; 64];
        for (i, b) in key.iter().take(64).enumerate() {
            inner_key[i] ^= b;
            outer_key[i] ^= b;
        }
        Hmac { inner: Sha256::new().chain_update(inner_key), outer_key }
    }

    /// Appends `bytes` to the message.
    pub fn update(&mut self, bytes: &[u8]) {
        self.inner.update(bytes);
    }

    /// The MAC of the message given.
    pub fn finish(self) -> [u8; 32] {
        let inner = self.inner.finalize();
        Sha256::new().chain_update(self.outer_key).chain_update(inner).finalize().into()
    }
}

/// 32 bytes no other process has: from the system's random source, or, failing that, from the
/// standard library's randomly seeded hasher. For keys (grants, pages, cache files) and names
/// nobody may guess.
pub fn random_secret() -> [u8; 32] {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).is_ok() {
        return bytes;
    }
    use std::hash::{BuildHasher, Hasher};
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_usize(i);
        hasher.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos());
        chunk.copy_from_slice(&hasher.finish().to_be_bytes());
    }
    bytes
}

/// Whether `a` and `b` are equal, compared without stopping at the first difference.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mac_is_hmac_sha256() {
        // RFC 4231, test case 2.
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    #[test]
    fn a_message_given_in_parts_has_the_mac_of_the_whole() {
        let message: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
        for cut in [0, 1, 63, 64, 65, 299, 300] {
            let mut mac = Hmac::new(b"Jefe");
            mac.update(&message[..cut]);
            mac.update(&message[cut..]);
            assert_eq!(mac.finish(), hmac_sha256(b"Jefe", &message), "cut at {cut}");
        }
    }

    #[test]
    fn equal_is_equal_and_nothing_else_is() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert_ne!(random_secret(), random_secret());
    }
}
