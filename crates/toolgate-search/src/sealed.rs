//! sealed: the file a built index is saved in, to be read back instead of built again.
//!
//! A file is a header (a magic of four bytes naming the kind of index, the kind's format, the
//! whole file's length), the key it was written for (a SHA-256 of whatever the index is made
//! from, which also names the file), the index's own bytes, and an HMAC-SHA-256 of all of that
//! under a key kept outside the cache directory. A file that is short, of another kind or
//! format, for another key, edited, or written by anyone without the key is not opened.
//! Writing is best effort, to a new temporary file of a name nobody can guess, created without
//! following a link, then renamed into place, so a reader never sees half a file; reading opens
//! only a regular file, never through a link, and reads no more than the length its header
//! states, which must be the file's own. Each kind keeps its newest [`KEPT`] files in a directory.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use toolgate_catalog::{Catalog, Tool};

/// A kind of index file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Kind {
    /// The first four bytes of every file of the kind.
    pub(crate) magic: &'static [u8; 4],
    /// Bumped whenever the kind's layout, or what its index is made from, changes.
    pub(crate) format: u32,
    /// The file name's extension.
    pub(crate) extension: &'static str,
}

/// Where an index is cached: the directory of its files, the file of the key that
/// authenticates them, and what to do first when the index must be built rather than read
/// back (a build's peak of memory is best met alone).
#[derive(Clone, Copy)]
pub(crate) struct Site<'a> {
    pub(crate) dir: &'a Path,
    pub(crate) key_file: &'a Path,
    pub(crate) before_build: &'a dyn Fn(),
}

impl<'a> Site<'a> {
    /// The cache in `dir`, its files authenticated by the key in `key_file`.
    #[cfg(test)]
    pub(crate) fn new(dir: &'a Path, key_file: &'a Path) -> Site<'a> {
        Site { dir, key_file, before_build: &|| () }
    }

    /// The cache in `dir`, if there is one and a key file, with `before_build`.
    pub(crate) fn at(
        dir: Option<&'a Path>,
        key_file: Option<&'a Path>,
        before_build: &'a dyn Fn(),
    ) -> Option<Site<'a>> {
        Some(Site { dir: dir?, key_file: key_file?, before_build })
    }

    /// The key in the key file (made if there is none), or `None`: then nothing is cached.
    pub(crate) fn mac(&self) -> Option<[u8; 32]> {
        toolgate_catalog::files::key_file(self.key_file)
    }
}

/// The header: the magic, the format and the whole file's length.
pub(crate) const HEADER_BYTES: usize = 16;
/// The bytes of the MAC that ends every file.
pub(crate) const MAC_BYTES: usize = 32;
/// Files of one kind kept in a directory (the newest), for several profiles' catalogs.
const KEPT: usize = 8;

impl Kind {
    /// The file of `key` in `dir`.
    pub(crate) fn path(self, dir: &Path, key: &[u8; 32]) -> PathBuf {
        let hex: String = key[..16].iter().map(|b| format!("{b:02x}")).collect();
        dir.join(format!("index-{hex}.{}", self.extension))
    }

    /// The key of an index of this kind made with `settings` from `catalog`: the SHA-256 of the
    /// kind's magic and format, toolgate's version, `settings`, and every tool in catalog
    /// order (qualified name, server, definition hash, then what `more` adds of it).
    pub(crate) fn key(
        self,
        settings: &str,
        catalog: &Catalog,
        more: impl Fn(&mut Sha256, &Tool),
    ) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(self.magic);
        h.update(self.format.to_le_bytes());
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        h.update(format!("\0{settings}\0").as_bytes());
        h.update((catalog.len() as u64).to_le_bytes());
        for tool in catalog.tools() {
            for part in [tool.qualified_name(), tool.server()] {
                h.update((part.len() as u64).to_le_bytes());
                h.update(part.as_bytes());
            }
            h.update(tool.hash().as_bytes());
            more(&mut h, tool);
        }
        h.finalize().into()
    }

    /// Saves at `path` the file of `key` whose index's bytes `body` gives to an [`Out`],
    /// authenticated by `mac`, and removes the kind's oldest files of its directory past the
    /// newest [`KEPT`]. `body` runs twice, first to count the bytes for the header: the file
    /// is written as it is made, never held whole in memory beside the index. Failures are
    /// ignored: the cache is an optimisation.
    pub(crate) fn save(self, path: &Path, key: &[u8; 32], mac: &[u8; 32], body: impl Fn(&mut Out<'_>)) {
        let Some(dir) = path.parent() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let mut counted = Out::counting();
        body(&mut counted);
        let whole = (HEADER_BYTES + 32 + MAC_BYTES) as u64 + counted.bytes;
        let written = toolgate_catalog::files::replace_with(path, 0o644, |file| {
            let mut out = Out::writing(file, mac);
            out.put(self.magic);
            out.put(&self.format.to_le_bytes());
            out.u64(whole);
            out.put(key);
            body(&mut out);
            out.finish(whole)
        });
        if written.is_ok() {
            self.prune(dir);
        }
    }

    /// Writes the whole length into the header of `out` (a file's bytes but its MAC) and
    /// appends the MAC under `mac`.
    #[cfg(test)]
    pub(crate) fn seal(self, out: &mut Vec<u8>, mac: &[u8; 32]) {
        let whole = (out.len() + MAC_BYTES) as u64;
        out[8..HEADER_BYTES].copy_from_slice(&whole.to_le_bytes());
        let sum = toolgate_catalog::secret::hmac_sha256(mac, out);
        out.extend_from_slice(&sum);
    }

    /// The bytes of the file at `path`: a regular file of this kind whose header states its own
    /// length, no more than `most`, read up to that length and no further.
    pub(crate) fn read(self, path: &Path, most: u64) -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        let invalid = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_owned());
        let (file, len) = toolgate_catalog::files::open_regular(path)?;
        let mut file = file.take(len.min(most));
        let mut header = [0u8; HEADER_BYTES];
        file.read_exact(&mut header)?;
        if &header[..4] != self.magic || header[4..8] != self.format.to_le_bytes() {
            return Err(invalid("not a cache file of this kind and format"));
        }
        let stated = u64::from_le_bytes(header[8..].try_into().expect("8 bytes"));
        if stated != len || stated > most {
            return Err(invalid("the header's length is not the file's"));
        }
        let mut bytes = Vec::with_capacity(stated as usize);
        bytes.extend_from_slice(&header);
        file.take(stated - HEADER_BYTES as u64).read_to_end(&mut bytes)?;
        if bytes.len() as u64 != stated {
            return Err(invalid("the file is shorter than its header says"));
        }
        Ok(bytes)
    }

    /// The index's bytes of a whole file of this kind for `key`, authenticated by `mac`.
    pub(crate) fn open<'a>(self, bytes: &'a [u8], key: &[u8; 32], mac: &[u8; 32]) -> Option<Reader<'a>> {
        let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(MAC_BYTES)?)?;
        let expected = toolgate_catalog::secret::hmac_sha256(mac, body);
        if !toolgate_catalog::secret::constant_time_eq(&expected, sum) {
            return None;
        }
        let mut r = Reader(body);
        let header_ok = r.take(4)? == self.magic && r.u32()? == self.format;
        if !header_ok || r.u64()? != bytes.len() as u64 || r.take(32)? != key {
            return None;
        }
        Some(r)
    }

    /// Removes the kind's oldest files of `dir` past the newest [`KEPT`].
    fn prune(self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == self.extension))
            .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
            .collect();
        files.sort_by_key(|f| std::cmp::Reverse(f.0));
        for (_, old) in files.into_iter().skip(KEPT) {
            let _ = std::fs::remove_file(old);
        }
    }
}

/// Little-endian values off the front of a byte slice.
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    pub(crate) fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub(crate) fn f32(&mut self) -> Option<f32> {
        Some(f32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    /// A count written as a `u64`, if the bytes left could hold that many items of `size`
    /// bytes (checked before anything is allocated for them).
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    pub(crate) fn count(&mut self, size: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n <= self.0.len() / size.max(1)).then_some(n)
    }
    /// `n` finite floats.
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    pub(crate) fn floats(&mut self, n: usize) -> Option<Vec<f32>> {
        let bytes = self.take(n.checked_mul(4)?)?;
        let out: Vec<f32> =
            bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4"))).collect();
        out.iter().all(|x| x.is_finite()).then_some(out)
    }
    /// `n` `u32`s.
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    pub(crate) fn u32s(&mut self, n: usize) -> Option<Vec<u32>> {
        let bytes = self.take(n.checked_mul(4)?)?;
        Some(bytes.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().expect("4"))).collect())
    }
}

/// Where a file's bytes go as [`Kind::save`] makes them: counted only, or written to the file
/// and its MAC through a buffer of [`OUT_BUFFER`] bytes.
pub(crate) struct Out<'f> {
    bytes: u64,
    to: Option<Writing<'f>>,
}

/// What an [`Out`] writing holds: the file, the MAC so far, the bytes not yet written, and the
/// first error (after which nothing more is written).
struct Writing<'f> {
    file: &'f mut std::fs::File,
    mac: toolgate_catalog::secret::Hmac,
    buffer: Vec<u8>,
    failed: Option<std::io::Error>,
}

/// The bytes an [`Out`] gathers before it writes them.
const OUT_BUFFER: usize = 1 << 16;

impl<'f> Out<'f> {
    fn counting() -> Out<'f> {
        Out { bytes: 0, to: None }
    }

    fn writing(file: &'f mut std::fs::File, mac: &[u8; 32]) -> Out<'f> {
        let mac = toolgate_catalog::secret::Hmac::new(mac);
        Out {
            bytes: 0,
            to: Some(Writing { file, mac, buffer: Vec::with_capacity(OUT_BUFFER), failed: None }),
        }
    }

    /// Appends `bytes`.
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len() as u64;
        if let Some(to) = &mut self.to {
            to.buffer.extend_from_slice(bytes);
            if to.buffer.len() >= OUT_BUFFER {
                to.flush();
            }
        }
    }

    /// Appends one byte.
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    pub(crate) fn u8(&mut self, value: u8) {
        self.put(&[value]);
    }

    /// Appends `value`, little-endian.
    pub(crate) fn u32(&mut self, value: u32) {
        self.put(&value.to_le_bytes());
    }

    /// Appends `value`, little-endian.
    pub(crate) fn u64(&mut self, value: u64) {
        self.put(&value.to_le_bytes());
    }

    /// Appends `values`, little-endian.
    pub(crate) fn floats(&mut self, values: &[f32]) {
        for v in values {
            self.put(&v.to_le_bytes());
        }
    }

    /// Appends `values`, little-endian.
    pub(crate) fn u32s(&mut self, values: &[u32]) {
        for &v in values {
            self.u32(v);
        }
    }

    /// Writes what is left and the MAC; fails if anything could not be written, or if the
    /// bytes were not the `whole` the header states (`body` gave other bytes the second time).
    fn finish(mut self, whole: u64) -> std::io::Result<()> {
        let Some(mut to) = self.to.take() else { return Ok(()) };
        to.flush();
        if let Some(e) = to.failed {
            return Err(e);
        }
        if self.bytes + MAC_BYTES as u64 != whole {
            return Err(std::io::Error::other("the index's bytes changed between counting and writing"));
        }
        std::io::Write::write_all(to.file, &to.mac.finish())
    }
}

impl Writing<'_> {
    fn flush(&mut self) {
        if self.failed.is_none() {
            self.mac.update(&self.buffer);
            if let Err(e) = std::io::Write::write_all(self.file, &self.buffer) {
                self.failed = Some(e);
            }
        }
        self.buffer.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::scratch;

    const TEST: Kind = Kind { magic: b"TEST", format: 1, extension: "test" };

    #[test]
    fn a_file_saved_as_it_is_made_opens_with_its_key_and_mac_only() {
        let dir = scratch("saved");
        let (key, mac) = ([7u8; 32], [9u8; 32]);
        let path = TEST.path(&dir, &key);
        // More than the buffer, so that it is written in several parts.
        let body: Vec<u8> = (0..3 * OUT_BUFFER + 5).map(|i| (i % 251) as u8).collect();
        TEST.save(&path, &key, &mac, |out| {
            out.u32(body.len() as u32);
            out.put(&body);
        });
        let bytes = TEST.read(&path, u64::MAX).unwrap();
        let mut r = TEST.open(&bytes, &key, &mac).unwrap();
        assert_eq!(r.u32(), Some(body.len() as u32));
        assert_eq!(r.take(body.len()), Some(&body[..]));
        assert_eq!(r.0, &[] as &[u8]);
        assert!(TEST.open(&bytes, &key, &[8u8; 32]).is_none(), "another MAC key");
        assert!(TEST.open(&bytes, &[6u8; 32], &mac).is_none(), "another key");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_body_that_gives_other_bytes_the_second_time_leaves_no_file() {
        let dir = scratch("changing");
        let (key, mac) = ([7u8; 32], [9u8; 32]);
        let path = TEST.path(&dir, &key);
        let calls = std::cell::Cell::new(0);
        TEST.save(&path, &key, &mac, |out| {
            calls.set(calls.get() + 1);
            out.put(&vec![1; calls.get()]);
        });
        assert_eq!(calls.get(), 2);
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
