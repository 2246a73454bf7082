//! A built dense index saved to a file ([`crate::sealed`]), and read back instead of embedding
//! the catalog again.
//!
//! The file is named by a key: the SHA-256 of the model's checksum, the [`DenseConfig`],
//! toolgate's version and this format's, and every tool in catalog order (qualified name,
//! server, definition hash): whatever the vectors are made from. It holds the token weights
//! (the catalog's IDF is in them), the catalog's mean vector, the rows and their scales, and
//! for a large catalog the order of the rows and their clusters. Everything read is checked
//! against the catalog and the model before it is used: a file that is not opened, or does
//! not fit, is built again and written again.

use std::ops::Range;

use super::{Clusters, DenseConfig, DenseIndex, Kernel};
use crate::sealed::{self, Kind, Out, Site};
use crate::semantic::StaticModel;
use toolgate_catalog::Catalog;

/// The dense index's files (`FORMAT` is bumped whenever the layout below, or the way tools
/// become vectors, changes).
const KIND: Kind = Kind { magic: b"TGDX", format: 1, extension: "tgdx" };

/// The most a file of a catalog of `tools` tools is taken to hold: far more than its index
/// (a row is at most a few KB), so that only a file nobody wrote for it is refused.
fn most_bytes(tools: usize) -> u64 {
    (64 << 20) + (tools as u64) * (16 << 10)
}

/// The key of `catalog` embedded with `model` as `config` says.
fn key(catalog: &Catalog, model: &StaticModel, config: &DenseConfig) -> [u8; 32] {
    KIND.key(&format!("{}\0{config:?}", model.checksum()), catalog, |_, _| {})
}

impl DenseIndex {
    /// [`build`](DenseIndex::build), or the index saved for this catalog and model in
    /// `cache`'s directory (authenticated with the key in its key file), and whether it was
    /// read rather than built. A built index is saved there for the next time.
    pub(crate) fn build_cached(
        catalog: &Catalog,
        model: &StaticModel,
        cache: Option<Site<'_>>,
    ) -> (DenseIndex, bool) {
        let config = DenseConfig::default();
        let Some((site, mac)) = cache.and_then(|site| Some((site, site.mac()?))) else {
            return (DenseIndex::build_with(catalog, model, &config), false);
        };
        let key = key(catalog, model, &config);
        let path = KIND.path(site.dir, &key);
        if let Ok(file) = KIND.read(&path, most_bytes(catalog.len())) {
            let opened =
                KIND.open(&file, &key, &mac).and_then(|r| DenseIndex::decode(r, &file, catalog, model));
            if let Some((mut index, rows)) = opened {
                index.rows = rows_in(file, rows);
                return (index, true);
            }
        }
        (site.before_build)();
        let index = DenseIndex::build_with(catalog, model, &config);
        KIND.save(&path, &key, &mac, |out| index.encode(out));
        (index, false)
    }

    /// The index's bytes, as [`decode`](DenseIndex::decode) reads them.
    fn encode(&self, out: &mut Out<'_>) {
        out.u64(self.len() as u64);
        out.u64(self.dim as u64);
        out.u64(self.token_weights.len() as u64);
        out.floats(&self.token_weights);
        out.u64(self.mean.len() as u64);
        out.floats(&self.mean);
        out.floats(&self.scales);
        let mut bytes = [0u8; 4096];
        for chunk in self.rows.chunks(bytes.len()) {
            for (b, &x) in bytes.iter_mut().zip(chunk) {
                *b = x as u8;
            }
            out.put(&bytes[..chunk.len()]);
        }
        match &self.clusters {
            None => out.u8(0),
            Some(clusters) => {
                out.u8(1);
                out.u32s(&self.tools);
                clusters.encode(out);
            }
        }
    }

    /// The index `r` reads (the body of `file`, opened), if it is whole and fits `catalog` and
    /// `model`: a row per tool, the model's dimensions and vocabulary, finite numbers, and the
    /// rows' order a permutation of the tools. Its rows are left where `file` holds them, at the
    /// range returned ([`rows_in`]).
    fn decode(
        mut r: sealed::Reader<'_>,
        file: &[u8],
        catalog: &Catalog,
        model: &StaticModel,
    ) -> Option<(DenseIndex, Range<usize>)> {
        let n = r.count(1)?;
        let dim = r.count(1)?;
        if n != catalog.len() || dim == 0 || dim > model.dim() {
            return None;
        }
        let vocab = r.count(4)?;
        if vocab != model.vocab_len() {
            return None;
        }
        let token_weights = r.floats(vocab)?;
        let mean_len = r.count(4)?;
        if mean_len != 0 && mean_len != dim {
            return None;
        }
        let mean = r.floats(mean_len)?;
        let scales = r.floats(n)?;
        let rows = r.take(n.checked_mul(dim)?)?;
        let at = (rows.as_ptr() as usize).checked_sub(file.as_ptr() as usize)?;
        let rows = at..at + rows.len();
        let (clusters, tools, places) = match r.u8()? {
            0 => (None, Vec::new(), Vec::new()),
            1 => {
                let tools = r.u32s(n)?;
                let mut places = vec![u32::MAX; n];
                for (p, &t) in tools.iter().enumerate() {
                    let slot = places.get_mut(t as usize)?;
                    if *slot != u32::MAX {
                        return None;
                    }
                    *slot = p as u32;
                }
                (Some(Clusters::decode(&mut r, dim, n)?), tools, places)
            }
            _ => return None,
        };
        if !r.0.is_empty() {
            return None;
        }
        let index = DenseIndex {
            model: model.clone(),
            dim,
            token_weights,
            rows: Vec::new(),
            scales,
            clusters,
            tools,
            places,
            kernel: Kernel::detect(),
            mean,
            brand: catalog.brand(),
        };
        Some((index, rows))
    }
}

/// The bytes of `file` at `range`, as rows, in the file's own allocation: the bytes around them
/// are dropped and the rest taken as `i8` in place, so that an index read back does not hold its
/// rows twice for a moment (26 MB at 100,000 tools).
fn rows_in(mut file: Vec<u8>, range: Range<usize>) -> Vec<i8> {
    file.truncate(range.end);
    file.drain(..range.start);
    file.into_iter().map(|b| b as i8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::StaticModel;
    use toolgate_catalog::{ToolId, ToolSpec};

    /// A fresh directory for the cache and its key file beside it.
    fn scratch(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
        let dir = crate::tests::scratch(name);
        let key = dir.with_extension("key");
        (dir, key)
    }

    /// The answers of `index` to a few requests, scores to the bit.
    fn answers(index: &DenseIndex, catalog: &Catalog) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        for q in
            ["read a file", "weather forecast for tomorrow", "git commit history, then open a pull request"]
        {
            for (id, score) in index.search(q, 10) {
                out.push((catalog.tool(id).qualified_name().to_owned(), score.to_bits()));
            }
            let tools: Vec<_> = (0..catalog.len().min(13)).map(|i| catalog.id(i)).collect();
            for (id, score) in index.rerank(q, &tools) {
                out.push((catalog.tool(id).qualified_name().to_owned(), score.to_bits()));
            }
        }
        out
    }

    /// A catalog of more than `EXACT_MAX_TOOLS` tools (the embedded one, repeated under other
    /// server names), so that its index is clustered.
    fn large() -> Catalog {
        crate::tests::embedded_copies(super::super::EXACT_MAX_TOOLS)
    }

    #[test]
    fn rows_are_taken_from_the_file_where_it_holds_them() {
        let file: Vec<u8> = (0..=255).collect();
        let at = file.as_ptr();
        let rows = rows_in(file, 250..254);
        assert_eq!(rows, [-6, -5, -4, -3]);
        assert_eq!(rows.as_ptr().cast::<u8>(), at, "the rows were copied");
    }

    #[test]
    fn a_dense_index_read_back_answers_as_the_one_built() {
        let model = StaticModel::embedded();
        for (name, catalog) in [("small", Catalog::embedded()), ("large", large())] {
            let (dir, key_file) = scratch(name);
            // What comes before a build (the name tables' thread waited for) comes only then.
            let builds = std::cell::Cell::new(0);
            let count = || builds.set(builds.get() + 1);
            let cache = Some(Site { before_build: &count, ..Site::new(&dir, &key_file) });
            let (built, cached) = DenseIndex::build_cached(&catalog, model, cache);
            assert!(!cached, "{name}");
            assert_eq!(builds.get(), 1, "{name}");
            assert_eq!(built.clusters.is_some(), name == "large");
            let (read, cached) = DenseIndex::build_cached(&catalog, model, cache);
            assert!(cached, "{name}: the file was not read");
            assert_eq!(builds.get(), 1, "{name}: read back, yet called as for a build");
            assert_eq!(answers(&read, &catalog), answers(&built, &catalog), "{name}");
            assert_eq!(read.tools, built.tools);
            // One description changed: another key, so a build.
            let mut specs: Vec<ToolSpec> =
                catalog.tools().iter().map(|t| t.spec().as_ref().clone()).collect();
            specs[1].description.push_str(" Also reads calendars.");
            let changed = specs.into_iter().fold(Catalog::builder(), |b, s| b.tool(s)).build().unwrap();
            assert!(!DenseIndex::build_cached(&changed, model, cache).1, "{name}");
            std::fs::remove_dir_all(&dir).unwrap();
            let _ = std::fs::remove_file(&key_file);
        }
    }

    #[test]
    fn the_semantic_strategy_reads_both_of_its_sides_back() {
        use crate::{Index, Request, Strategy};
        let (dir, key_file) = scratch("strategy");
        let catalog = Catalog::embedded();
        let builder =
            || Index::builder().strategy(Strategy::Semantic).cache_dir(&dir).cache_key_file(&key_file);
        let built = builder().build(&catalog);
        assert!(!built.from_cache());
        let read = builder().build(&catalog);
        assert!(read.from_cache());
        let extensions: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path().extension().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(
            extensions.contains(&"tgix".to_owned()) && extensions.contains(&"tgdx".to_owned()),
            "{extensions:?}"
        );
        for q in ["read a file", "what will the weather be tomorrow, and is it going to rain"] {
            let answer = |index: &Index| -> Vec<(ToolId, u32)> {
                index.search(Request::new(q, 10)).hits.iter().map(|h| (h.tool, h.score.to_bits())).collect()
            };
            assert_eq!(answer(&read), answer(&built), "{q}");
        }
        // The dense file alone gone: built again, so the index is not all from the cache.
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "tgdx") {
                std::fs::remove_file(path).unwrap();
            }
        }
        assert!(!builder().build(&catalog).from_cache());
        assert!(builder().build(&catalog).from_cache());
        std::fs::remove_dir_all(&dir).unwrap();
        let _ = std::fs::remove_file(&key_file);
    }

    #[test]
    fn a_damaged_dense_file_is_never_read_and_is_written_again() {
        let model = StaticModel::embedded();
        let catalog = large();
        let (dir, key_file) = scratch("damaged");
        let cache = Some(Site::new(&dir, &key_file));
        DenseIndex::build_cached(&catalog, model, cache);
        let key = key(&catalog, model, &DenseConfig::default());
        let file = KIND.path(&dir, &key);
        let good = std::fs::read(&file).unwrap();
        let mac = toolgate_catalog::files::key_file(&key_file).unwrap();
        let opened = |bytes: &[u8], catalog: &Catalog| {
            KIND.open(bytes, &key, &mac).and_then(|r| DenseIndex::decode(r, bytes, catalog, model)).is_some()
        };
        assert!(opened(&good, &catalog));
        assert!(!opened(&good, &Catalog::embedded()), "another catalog");
        for at in [0, 5, 40, good.len() / 2, good.len() - 40, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x40;
            assert!(!opened(&bad, &catalog), "byte {at} flipped");
        }
        for len in [0, 7, 60, good.len() / 3, good.len() - 1] {
            assert!(!opened(&good[..len], &catalog), "cut to {len} bytes");
        }
        // Sealed under the right key but inconsistent: a row's place given twice.
        let (body, _) = good.split_at(good.len() - sealed::MAC_BYTES);
        let (index, rows) =
            DenseIndex::decode(KIND.open(&good, &key, &mac).unwrap(), &good, &catalog, model).unwrap();
        // The header and key, four counts, the weights and mean, the scales, the rows, the flag.
        let before_rows = sealed::HEADER_BYTES
            + 32
            + 8 * 4
            + 4 * (index.token_weights.len() + index.mean.len() + index.scales.len());
        assert_eq!(rows, before_rows..before_rows + catalog.len() * index.dim);
        let before_tools = rows.end + 1;
        let mut twice = body.to_vec();
        assert_eq!(
            twice[before_tools..before_tools + 4],
            index.tools[0].to_le_bytes(),
            "the first row's tool"
        );
        twice[before_tools..before_tools + 4].copy_from_slice(&index.tools[1].to_le_bytes());
        KIND.seal(&mut twice, &mac);
        assert!(!opened(&twice, &catalog), "a permutation with a tool twice");
        // A damaged file on disk: built again, and written whole again.
        std::fs::write(&file, &good[..good.len() / 2]).unwrap();
        assert!(!DenseIndex::build_cached(&catalog, model, cache).1);
        assert_eq!(std::fs::read(&file).unwrap(), good);
        std::fs::remove_dir_all(&dir).unwrap();
        let _ = std::fs::remove_file(&key_file);
    }
}
