//! Writes `o200k_base`, the BPE vocabulary `src/tokens.rs` counts with, as one compact file
//! compiled into the crate: each token's rank and bytes, and the pattern that splits text into
//! pieces. `tiktoken-rs` ships the vocabulary; loaded the way it loads it, every token is held
//! three times over in maps of small allocations (about 35 MB of a gateway's memory), where
//! counting needs each token's bytes once and its rank.

use std::io::Write;
use std::path::PathBuf;

/// Past the last rank of `o200k_base` (199,997 ordinary tokens; its special tokens are above).
const RANKS: u32 = 201_000;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let bpe = tiktoken_rs::o200k_base().expect("tiktoken-rs ships o200k_base");
    let specials = [tiktoken_rs::ENDOFTEXT.as_bytes(), tiktoken_rs::ENDOFPROMPT.as_bytes()];
    let mut vocabulary = Vec::with_capacity(3 << 20);
    let mut tokens = 0u32;
    for rank in 0..RANKS {
        let Ok(bytes) = bpe.decode_bytes(&[rank]) else { continue };
        if specials.contains(&bytes.as_slice()) {
            continue;
        }
        let len = u8::try_from(bytes.len()).expect("an o200k_base token is under 256 bytes");
        vocabulary.extend_from_slice(&rank.to_le_bytes());
        vocabulary.push(len);
        vocabulary.extend_from_slice(&bytes);
        tokens += 1;
    }
    assert!(tokens > 199_000, "o200k_base has 199,998 ordinary tokens, read {tokens}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut file = std::fs::File::create(out.join("o200k_base.bin")).expect("OUT_DIR is writable");
    file.write_all(&vocabulary).expect("OUT_DIR is writable");
    std::fs::write(out.join("o200k_base.pattern"), tiktoken_rs::O200K_BASE_PAT_STR)
        .expect("OUT_DIR is writable");
}
