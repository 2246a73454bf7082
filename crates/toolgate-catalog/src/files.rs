//! files: where toolgate keeps its own files, and how it writes the ones an attacker with
//! write access to the directory must not be able to redirect.

use std::path::{Path, PathBuf};

/// toolgate's data directory: `$XDG_DATA_HOME/toolgate`, else `~/.local/share/toolgate`.
pub fn data_dir() -> Option<PathBuf> {
    base_dir("XDG_DATA_HOME", ".local/share")
}

/// toolgate's configuration directory: `$XDG_CONFIG_HOME/toolgate`, else `~/.config/toolgate`.
pub fn config_dir() -> Option<PathBuf> {
    base_dir("XDG_CONFIG_HOME", ".config")
}

/// toolgate's cache directory, for what may be deleted at any time and made again:
/// `$XDG_CACHE_HOME/toolgate`, else `~/.cache/toolgate`.
pub fn cache_dir() -> Option<PathBuf> {
    base_dir("XDG_CACHE_HOME", ".cache")
}

/// `toolgate` in the directory the XDG variable `var` names, else in `home` under `$HOME`
/// (neither counted when empty).
fn base_dir(var: &str, home: &str) -> Option<PathBuf> {
    let base = std::env::var_os(var).filter(|d| !d.is_empty()).map(PathBuf::from).or_else(|| {
        std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(home))
    })?;
    Some(base.join("toolgate"))
}

/// Writes `bytes` to a new file at `path` with permissions `mode` (on Unix): fails when
/// anything is there, a link included (which is never followed).
pub fn create_new(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    create_new_with(path, mode, |file| std::io::Write::write_all(file, bytes))
}

/// [`create_new`], the file's bytes written by `write` (unbuffered: it buffers what it needs).
pub fn create_new_with(
    path: &Path,
    mode: u32,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(path)?;
    write(&mut file)?;
    file.sync_all()
}

/// Replaces the file at `path` with `bytes`: written to a new file of an unguessable name
/// beside it ([`create_new`]), then renamed over it, so a reader sees the old file or the new
/// one and a link planted at the temporary name is never written through.
pub fn replace(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    replace_with(path, mode, |file| std::io::Write::write_all(file, bytes))
}

/// [`replace`], the new file's bytes written by `write` as they come, not held whole first.
/// A failed `write` leaves the old file in place.
pub fn replace_with(
    path: &Path,
    mode: u32,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let nonce: String = crate::secret::random_secret()[..8].iter().map(|b| format!("{b:02x}")).collect();
    let temporary = path.with_extension(format!("tmp-{}-{nonce}", std::process::id()));
    let written = create_new_with(&temporary, mode, write).and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// The 32-byte key in `file`, made (random, readable by its owner only) when there is none.
/// `None` when it cannot be read or made, or is not a key.
pub fn key_file(file: &Path) -> Option<[u8; 32]> {
    if let Ok(bytes) = read_regular(file, 32) {
        return bytes.try_into().ok();
    }
    std::fs::create_dir_all(file.parent()?).ok()?;
    let key = crate::secret::random_secret();
    match create_new(file, &key, 0o600) {
        Ok(()) => Some(key),
        // Another process made it first: its key is the one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            read_regular(file, 32).ok()?.try_into().ok()
        }
        Err(_) => None,
    }
}

/// Opens the file at `path` for reading only if it is a regular file: a link is not followed
/// (on Unix), and a FIFO, a device or a directory is refused without waiting on it. Returns the
/// open file and its length.
///
/// For files toolgate wrote itself into a directory others may write to (caches, keys): a
/// link planted at the name (to `/dev/zero`, say) or a FIFO would otherwise make a read grow
/// without end or block for good.
pub fn open_regular(path: &Path) -> std::io::Result<(std::fs::File, u64)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
    );
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok((file, meta.len()))
}

/// The whole regular file at `path` ([`open_regular`]) if it holds at most `max` bytes; a
/// longer one is an error, read no further than one byte past `max`.
pub fn read_regular(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let (file, len) = open_regular(path)?;
    let too_long = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} holds more than the {max} bytes expected", path.display()),
        )
    };
    if len > max {
        return Err(too_long());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_long());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_within_its_bound_is_read() {
        let dir = std::env::temp_dir().join(format!("toolgate-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("plain");
        std::fs::write(&file, b"0123456789").unwrap();
        assert_eq!(read_regular(&file, 10).unwrap(), b"0123456789");
        let long = read_regular(&file, 9).unwrap_err();
        assert!(long.to_string().contains("more than the 9 bytes"), "{long}");
        assert!(read_regular(&dir, 10).unwrap_err().to_string().contains("not a regular file"));
        #[cfg(unix)]
        {
            let link = dir.join("link");
            std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
            assert!(read_regular(&link, 1 << 40).is_err(), "a link is not followed");
            let fifo = dir.join("fifo");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            if made.is_ok_and(|s| s.success()) {
                let refused = read_regular(&fifo, 10).unwrap_err();
                assert!(refused.to_string().contains("not a regular file"), "{refused}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
