//! files: where toolgate keeps its own files, and how it writes the ones an attacker with
//! write access to the directory must not be able to redirect.

use std::path::{Path, PathBuf};

/// toolgate's data directory: `$XDG_DATA_HOME/toolgate`, else `~/.local/share/toolgate`.
pub fn data_dir() -> Option<PathBuf> {
    let data =
        std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()).map(PathBuf::from).or_else(|| {
            std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(data.join("toolgate"))
}

/// toolgate's configuration directory: `$XDG_CONFIG_HOME/toolgate`, else `~/.config/toolgate`.
pub fn config_dir() -> Option<PathBuf> {
    let config =
        std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()).map(PathBuf::from).or_else(|| {
            std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(config.join("toolgate"))
}

/// Writes `bytes` to a new file at `path` with permissions `mode` (on Unix): fails when
/// anything is there, a link included (which is never followed).
pub fn create_new(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Replaces the file at `path` with `bytes`: written to a new file of an unguessable name
/// beside it ([`create_new`]), then renamed over it, so a reader sees the old file or the new
/// one and a link planted at the temporary name is never written through.
pub fn replace(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let nonce: String = crate::secret::random_secret()[..8].iter().map(|b| format!("{b:02x}")).collect();
    let temporary = path.with_extension(format!("tmp-{}-{nonce}", std::process::id()));
    let written = create_new(&temporary, bytes, mode).and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// The 32-byte key in `file`, made (random, readable by its owner only) when there is none.
/// `None` when it cannot be read or made, or is not a key.
pub fn key_file(file: &Path) -> Option<[u8; 32]> {
    if let Ok(bytes) = std::fs::read(file) {
        return bytes.try_into().ok();
    }
    std::fs::create_dir_all(file.parent()?).ok()?;
    let key = crate::secret::random_secret();
    match create_new(file, &key, 0o600) {
        Ok(()) => Some(key),
        // Another process made it first: its key is the one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => std::fs::read(file).ok()?.try_into().ok(),
        Err(_) => None,
    }
}
