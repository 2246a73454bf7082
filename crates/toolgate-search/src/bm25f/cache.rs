//! A built lexical index saved to a file ([`crate::sealed`]), and read back instead of
//! analysing the catalog again.
//!
//! The file is named by a key: the SHA-256 of the index's parameters, toolgate's version and
//! this format's, and every tool in catalog order (qualified name, server, definition hash,
//! search hint): whatever the postings are made from. A catalog that changed in any of these
//! has another key, so a file is never read for a catalog it was not built from. The key that
//! authenticates files is the data directory's `index-cache.key`, readable by its owner only;
//! a file that is not opened is built again and written again.

use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;
use sha2::Digest;

use super::{Bm25Index, Bm25Params};
use crate::sealed::{self, Kind, Out};
use toolgate_catalog::Catalog;

/// The lexical index's files (`FORMAT` is bumped whenever the layout below, or the way text
/// becomes terms, changes).
const KIND: Kind = Kind { magic: MAGIC, format: FORMAT, extension: "tgix" };
const FORMAT: u32 = 3;
const MAGIC: &[u8; 4] = b"TGIX";

/// The key of `catalog` indexed with `params`.
pub(crate) fn key(catalog: &Catalog, params: &Bm25Params) -> [u8; 32] {
    KIND.key(&format!("{params:?}"), catalog, |h, tool| match tool.search_hint() {
        Some(hint) => {
            h.update([1]);
            h.update((hint.len() as u64).to_le_bytes());
            h.update(hint.as_bytes());
        }
        None => h.update([0]),
    })
}

/// The cache file of `key` in `dir`.
pub(crate) fn path(dir: &Path, key: &[u8; 32]) -> PathBuf {
    KIND.path(dir, key)
}

/// Where the key that authenticates cache files is kept by default: `index-cache.key` in
/// toolgate's data directory ([`toolgate_catalog::files::data_dir`]).
pub(crate) fn default_key_file() -> Option<PathBuf> {
    Some(toolgate_catalog::files::data_dir()?.join("index-cache.key"))
}

impl Bm25Index {
    /// The index of a catalog of `n_docs` tools saved at `path` for `key`, if the file is
    /// there, whole, consistent and authenticated by `mac`.
    pub(crate) fn read_cache(
        path: &Path,
        key: &[u8; 32],
        mac: &[u8; 32],
        n_docs: usize,
        params: Bm25Params,
    ) -> Option<Bm25Index> {
        let bytes = KIND.read(path, most_bytes(n_docs)).ok()?;
        decode(KIND.open(&bytes, key, mac)?, n_docs, params)
    }

    /// Saves the index at `path` for `key`, authenticated by `mac`, and removes the oldest
    /// cache files of its directory past the newest [`KEPT`]. Failures are ignored: the cache
    /// is an optimisation.
    pub(crate) fn write_cache(&self, path: &Path, key: &[u8; 32], mac: &[u8; 32]) {
        KIND.save(path, key, mac, |out| self.encode(out));
    }

    /// The index's bytes, as [`decode`] reads them.
    fn encode(&self, out: &mut Out<'_>) {
        out.u64(self.n_docs as u64);
        out.floats(&self.avg_len);
        out.u64(self.terms.len() as u64);
        out.u64(self.docs.len() as u64);
        let mut by_id: Vec<&str> = vec![""; self.terms.len()];
        for (term, &id) in &self.terms {
            by_id[id as usize] = term;
        }
        for term in by_id {
            out.u32(term.len() as u32);
            out.put(term.as_bytes());
        }
        out.u32s(&self.offsets);
        out.u32s(&self.docs);
        out.floats(&self.scores);
        out.floats(&self.idf);
    }
}

/// The most a cache file of a catalog of `tools` tools is taken to hold: far more than any
/// index of it, so that only a file nobody wrote for it is refused.
fn most_bytes(tools: usize) -> u64 {
    (64 << 20) + (tools as u64) * (64 << 10)
}

/// The index read by `r` (an opened file's body), if it is whole and of a catalog of `tools`
/// tools (every posting then names one of them).
fn decode(mut r: sealed::Reader<'_>, tools: usize, params: Bm25Params) -> Option<Bm25Index> {
    let n_docs = usize::try_from(r.u64()?).ok()?;
    if n_docs != tools {
        return None;
    }
    let avg_len: [f32; 5] = std::array::from_fn(|_| r.f32().unwrap_or(f32::NAN));
    let n_terms = usize::try_from(r.u64()?).ok()?;
    let n_postings = usize::try_from(r.u64()?).ok()?;
    // Every count is bounded by the bytes that would hold it, before anything is allocated.
    if avg_len.iter().any(|a| !a.is_finite()) || n_terms > r.0.len() / 8 || n_postings > r.0.len() / 8 {
        return None;
    }
    let mut terms: FxHashMap<Box<str>, u32> = FxHashMap::default();
    terms.reserve(n_terms);
    for id in 0..n_terms {
        let len = r.u32()? as usize;
        let term = std::str::from_utf8(r.take(len)?).ok()?;
        if terms.insert(term.into(), id as u32).is_some() {
            return None;
        }
    }
    let offsets: Vec<u32> = (0..=n_terms).map(|_| r.u32()).collect::<Option<_>>()?;
    let docs: Vec<u32> = (0..n_postings).map(|_| r.u32()).collect::<Option<_>>()?;
    let scores: Vec<f32> = (0..n_postings).map(|_| r.f32()).collect::<Option<_>>()?;
    let idf: Vec<f32> = (0..n_terms).map(|_| r.f32()).collect::<Option<_>>()?;
    if !r.0.is_empty()
        || offsets.first() != Some(&0)
        || offsets.last().map(|&o| o as usize) != Some(n_postings)
    {
        return None;
    }
    for w in offsets.windows(2) {
        let list = docs.get(w[0] as usize..w[1] as usize)?;
        if list.windows(2).any(|p| p[0] >= p[1]) || list.last().is_some_and(|&d| d as usize >= n_docs) {
            return None;
        }
    }
    let vocab = super::super::vocab::vocabulary().clone();
    Some(Bm25Index { params, terms, offsets, docs, scores, idf, avg_len, n_docs, vocab })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::scratch;
    use crate::{Index, Request};
    use toolgate_catalog::ToolSpec;

    /// The index in a whole file's `bytes`, if it opens for `key` under `mac`.
    fn decode_file(
        bytes: &[u8],
        key: &[u8; 32],
        mac: &[u8; 32],
        tools: usize,
        params: Bm25Params,
    ) -> Option<Bm25Index> {
        decode(KIND.open(bytes, key, mac)?, tools, params)
    }

    /// A builder caching in `dir`, with its key file beside it (outside it).
    fn cached(dir: &Path) -> crate::IndexBuilder {
        Index::builder().cache_dir(dir).cache_key_file(dir.with_extension("key"))
    }

    fn answers(index: &Index) -> Vec<(String, u32)> {
        let queries = include_str!("../../../../bench/livemcpbench/queries.jsonl");
        let mut out = Vec::new();
        for line in queries.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            for hit in index.search(Request::new(v["query"].as_str().unwrap(), 10)).hits {
                out.push((index.catalog().tool(hit.tool).qualified_name().to_owned(), hit.score.to_bits()));
            }
        }
        out
    }

    #[test]
    fn an_index_read_back_answers_as_the_one_built_and_a_changed_catalog_is_built_again() {
        let dir = scratch("read-back");
        let catalog = Catalog::embedded();
        let built = cached(&dir).build(&catalog);
        assert!(!built.from_cache());
        let read = cached(&dir).build(&catalog);
        assert!(read.from_cache());
        assert_eq!(answers(&read), answers(&built));
        assert_eq!(answers(&read), answers(&Index::builder().build(&catalog)));

        // One description changed: another key, so a build.
        let mut specs: Vec<ToolSpec> = catalog.tools().iter().map(|t| t.spec().as_ref().clone()).collect();
        specs[3].description.push_str(" Also reads calendars.");
        let changed = specs.into_iter().fold(Catalog::builder(), |b, s| b.tool(s)).build().unwrap();
        assert!(!cached(&dir).build(&changed).from_cache());
        assert!(cached(&dir).build(&changed).from_cache());
        // The first catalog's file is still there.
        assert!(cached(&dir).build(&catalog).from_cache());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_catalog_below_the_fewest_tools_asked_is_built_every_time_and_leaves_no_file() {
        let dir = scratch("fewest");
        let catalog = Catalog::embedded();
        let n = catalog.len();
        for _ in 0..2 {
            assert!(!cached(&dir).cache_min_tools(n + 1).build(&catalog).from_cache());
        }
        assert!(!dir.exists(), "nothing written below the minimum");
        assert!(!cached(&dir).cache_min_tools(n).build(&catalog).from_cache());
        assert!(cached(&dir).cache_min_tools(n).build(&catalog).from_cache());
        // A file there is not read for a catalog below the minimum either.
        assert!(!cached(&dir).cache_min_tools(n + 1).build(&catalog).from_cache());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_large_catalog_built_or_read_back_names_and_ranks_alike() {
        // From `SIDE_BY_SIDE_TOOLS` tools on, with a cache, the name tables are made on a
        // thread of their own: beside a read, or finished before a build.
        let dir = scratch("large");
        let catalog = crate::tests::embedded_copies(crate::SIDE_BY_SIDE_TOOLS);
        assert!(catalog.len() >= crate::SIDE_BY_SIDE_TOOLS);
        let plain = Index::builder().build(&catalog);
        let built = cached(&dir).build(&catalog);
        let read = cached(&dir).build(&catalog);
        assert!(!built.from_cache() && read.from_cache());
        let last = catalog.tools().last().unwrap().qualified_name().to_owned();
        for index in [&built, &read] {
            assert_eq!(answers(index), answers(&plain));
            assert_eq!(index.named(&last), plain.named(&last), "{last}");
            assert_eq!(index.name_rank, plain.name_rank);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_damaged_or_foreign_file_is_never_read() {
        let dir = scratch("damaged");
        let catalog = Catalog::embedded();
        let params = Bm25Params::lexical();
        let key = key(&catalog, &params);
        let file = path(&dir, &key);
        cached(&dir).build(&catalog);
        let mac = toolgate_catalog::files::key_file(&dir.with_extension("key")).unwrap();
        let good = std::fs::read(&file).unwrap();
        assert!(decode_file(&good, &key, &mac, catalog.len(), params.clone()).is_some());
        let mut other = key;
        other[0] ^= 1;
        assert!(
            decode_file(&good, &other, &mac, catalog.len(), params.clone()).is_none(),
            "another catalog's key"
        );
        assert!(
            decode_file(&good, &key, &mac, catalog.len() + 1, params.clone()).is_none(),
            "another catalog's size"
        );
        for at in [0, 5, 40, good.len() / 2, good.len() - 33, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x40;
            assert!(
                decode_file(&bad, &key, &mac, catalog.len(), params.clone()).is_none(),
                "byte {at} flipped"
            );
        }
        for len in [0, 7, 32, 60, good.len() / 3, good.len() - 1] {
            assert!(
                decode_file(&good[..len], &key, &mac, catalog.len(), params.clone()).is_none(),
                "cut to {len} bytes"
            );
        }
        // A damaged file on disk: built again, and written whole again.
        std::fs::write(&file, &good[..good.len() / 2]).unwrap();
        assert!(!cached(&dir).build(&catalog).from_cache());
        assert_eq!(std::fs::read(&file).unwrap(), good);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_link_or_a_fifo_at_the_files_name_is_not_read_and_the_index_is_built() {
        let dir = scratch("planted");
        let catalog = Catalog::embedded();
        let file = path(&dir, &key(&catalog, &Bm25Params::lexical()));
        cached(&dir).build(&catalog);
        let good = std::fs::read(&file).unwrap();
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
        let started = std::time::Instant::now();
        let index = cached(&dir).build(&catalog);
        assert!(!index.from_cache() && !index.search(Request::new("weather forecast", 5)).hits.is_empty());
        // Written whole again in place of the link, which is not followed.
        assert_eq!(std::fs::read(&file).unwrap(), good);
        std::fs::remove_file(&file).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(&file).status().unwrap().success());
        assert!(!cached(&dir).build(&catalog).from_cache(), "a FIFO is not waited on");
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        // A regular file longer than its header says is not read either.
        let mut longer = good.clone();
        longer.extend_from_slice(b"appended");
        std::fs::write(&file, &longer).unwrap();
        assert!(!cached(&dir).build(&catalog).from_cache());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_directory_only_means_no_cache() {
        let dir = scratch("unwritable");
        std::fs::write(&dir, "a file where the directory would be").unwrap();
        let catalog = Catalog::embedded();
        let index = cached(&dir.join("sub")).build(&catalog);
        assert!(!index.from_cache());
        assert!(!index.search(Request::new("weather forecast", 5)).hits.is_empty());
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn an_edited_file_or_one_written_with_another_key_is_never_read() {
        let dir = scratch("forged");
        let catalog = Catalog::embedded();
        let params = Bm25Params::lexical();
        let key = key(&catalog, &params);
        cached(&dir).build(&catalog);
        let mac = toolgate_catalog::files::key_file(&dir.with_extension("key")).unwrap();
        let good = std::fs::read(path(&dir, &key)).unwrap();
        // Postings edited, and the file sealed again the only way someone without the key can.
        let mut body = good[..good.len() - sealed::MAC_BYTES].to_vec();
        let at = body.len() / 2;
        body[at] ^= 1;
        let other = [9u8; 32];
        let mut forged = body.clone();
        forged.extend_from_slice(&toolgate_catalog::secret::hmac_sha256(&other, &body));
        assert!(KIND.open(&forged, &key, &mac).is_none());
        assert!(
            KIND.open(&good, &key, &mac).and_then(|r| decode(r, catalog.len(), params.clone())).is_some()
        );
        std::fs::write(path(&dir, &key), &forged).unwrap();
        assert!(!cached(&dir).build(&catalog).from_cache(), "the forged file was read");
        // The key file is the owner's alone.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.with_extension("key")).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "the key file is readable by others: {mode:o}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_link_is_never_followed() {
        let dir = scratch("links");
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.with_extension("victim");
        std::fs::write(&victim, "the operator's file").unwrap();
        // At a temporary name: the write fails, the link's target is untouched.
        let planted = dir.join("planted.tmp");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        assert!(toolgate_catalog::files::create_new(&planted, b"index bytes", 0o644).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the operator's file");
        // At the cache file's own name: the link itself is replaced, never its target.
        let catalog = Catalog::embedded();
        let file = path(&dir, &key(&catalog, &Bm25Params::lexical()));
        std::os::unix::fs::symlink(&victim, &file).unwrap();
        cached(&dir).build(&catalog);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the operator's file");
        assert!(!std::fs::symlink_metadata(&file).unwrap().file_type().is_symlink());
        assert!(cached(&dir).build(&catalog).from_cache());
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_file(&victim).unwrap();
        let _ = std::fs::remove_file(dir.with_extension("key"));
    }
}
