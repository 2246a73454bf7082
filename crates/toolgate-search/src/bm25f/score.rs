//! Adding a request's groups up: the scorer of [`Bm25Index`], which only adds the
//! contributions the index precomputed, in the request's order, so that a tool's total is the
//! same bits whichever way the tools are found again (listed as they are reached, or every
//! total read back in order).

use std::cell::RefCell;

use super::{Alternative, Bm25Index};
use crate::Hit;
use toolgate_catalog::Brand;

thread_local! {
    /// The working memory of [`Bm25Index::score_groups`], kept from call to call.
    static GROUP_SCRATCH: RefCell<GroupScratch> = RefCell::new(GroupScratch::default());
}

/// The accumulators (all zeros between calls) and tool lists of [`Bm25Index::score_groups`].
#[derive(Debug, Default)]
struct GroupScratch {
    /// Each tool's total over the groups so far.
    acc: Vec<f32>,
    /// Each tool's best alternative in the current group.
    grp: Vec<f32>,
    /// Each tool's sum over the terms of the current alternative.
    alt: Vec<f32>,
    /// The tools with a slot in `acc`, `grp` and `alt` that may be non-zero.
    touched: DocList,
    in_group: DocList,
    in_alt: DocList,
}

/// A list of tools that grows without a branch per posting: room is made once per postings
/// list, every tool is written at the end, and the end moves on only when the tool is new, so
/// that "is it new", which no branch predictor can guess, costs no mispredicted branch.
#[derive(Debug, Default)]
struct DocList {
    /// The tools are `ids[..len]`; the rest is room.
    ids: Vec<u32>,
    len: usize,
}

impl DocList {
    fn clear(&mut self) {
        self.len = 0;
    }

    /// Makes room for `more` tools past the end.
    fn reserve(&mut self, more: usize) {
        let need = self.len + more;
        if self.ids.len() < need {
            self.ids.resize(need.max(self.ids.len() * 2), 0);
        }
    }

    /// For each posting `(d, s)`, sets `slots[d]` to `combine(slots[d], s)`, and lists `d`
    /// if its slot was zero.
    #[inline(always)]
    fn gather(&mut self, docs: &[u32], scores: &[f32], slots: &mut [f32], combine: impl Fn(f32, f32) -> f32) {
        self.reserve(docs.len());
        // The end is kept in a local, not in `self`, so that it stays in a register.
        let ids = &mut self.ids[..];
        let mut len = self.len;
        for (&d, &s) in docs.iter().zip(scores) {
            let slot = &mut slots[d as usize];
            ids[len] = d;
            len += usize::from(*slot == 0.0);
            *slot = combine(*slot, s);
        }
        self.len = len;
    }

    /// Moves the slots of `from`'s tools (`from_slots`, taken back to zero) into `slots`, as
    /// [`DocList::gather`] does, and empties `from`.
    #[inline(always)]
    fn drain_into(
        &mut self,
        from: &mut DocList,
        from_slots: &mut [f32],
        slots: &mut [f32],
        combine: impl Fn(f32, f32) -> f32,
    ) {
        self.reserve(from.len);
        let ids = &mut self.ids[..];
        let mut len = self.len;
        for &d in from.as_slice() {
            let s = std::mem::take(&mut from_slots[d as usize]);
            let slot = &mut slots[d as usize];
            ids[len] = d;
            len += usize::from(*slot == 0.0);
            *slot = combine(*slot, s);
        }
        self.len = len;
        from.clear();
    }

    fn as_slice(&self) -> &[u32] {
        &self.ids[..self.len]
    }
}

/// A request whose postings number at least one in `DENSE_SHARE` of the tools has its totals
/// read back in order ([`Bm25Index::score_groups`]) rather than listed as they are reached:
/// listing costs a store and a comparison a posting, reading in order a pass over the tools.
/// Measured with `cargo bench -p toolgate-search --bench search -- tasks/lexical`, two builds
/// in turn: one in 4 is faster than one in 2 or all of them.
const DENSE_SHARE: usize = 4;

/// Catalogs smaller than this always list: their totals stay in the first-level cache, where
/// reading them back from a list costs little (1,000 tools: 22.9 µs listed, 24.7 µs in order).
const DENSE_FROM: usize = 4096;

/// Totals read at a time when they are read in order.
const DENSE_BLOCK: usize = 16;

/// The larger of two scores, neither of them NaN: one instruction, where `f32::max`, which
/// must return the other operand when one is NaN, takes three.
#[inline(always)]
fn larger(a: f32, b: f32) -> f32 {
    if b > a { b } else { a }
}

/// The largest of some scores (at least zero), in eight lanes so that it needs no branch.
fn largest(slots: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let mut blocks = slots.chunks_exact(8);
    for block in &mut blocks {
        for (l, &s) in lanes.iter_mut().zip(block) {
            *l = larger(*l, s);
        }
    }
    let rest = blocks.remainder().iter().fold(0.0f32, |m, &s| larger(m, s));
    // Halved twice and then once, lane by lane, rather than folded one lane at a time: three
    // steps of a few instructions instead of eight dependent ones.
    let [a, b, c, d, e, f, g, h] = lanes;
    let quad = [larger(a, e), larger(b, f), larger(c, g), larger(d, h)];
    let pair = [larger(quad[0], quad[2]), larger(quad[1], quad[3])];
    larger(larger(pair[0], pair[1]), rest)
}

/// The best `k` scores kept so far, best first: a score below the worst of them cannot be
/// among the best `k` (a tie can, on its name).
#[derive(Debug)]
struct Cut {
    k: usize,
    kept: Vec<f32>,
}

impl Cut {
    fn new(k: usize) -> Cut {
        Cut { k, kept: Vec::with_capacity(k.saturating_add(1).min(1024)) }
    }

    /// Whether a tool scoring `s` may still be among the best `k`.
    fn admits(&self, s: f32) -> bool {
        self.kept.len() < self.k || (self.k > 0 && s >= self.kept[self.k - 1])
    }

    /// Keeps `s`, which [`Cut::admits`].
    fn add(&mut self, s: f32) {
        if self.kept.len() == self.k {
            self.kept.pop();
        }
        let at = self.kept.partition_point(|&b| b >= s);
        self.kept.insert(at, s);
    }
}

impl Bm25Index {
    /// Scores query groups: a tool gets, for each group, the best of the group's alternatives
    /// (weight × the sum of its terms' contributions), and the sum over groups. A word and its
    /// expansions form one group, so that a tool meeting a concept twice is not paid twice.
    ///
    /// Every tool that scores above zero and that `keep` accepts is appended to `hits`; with
    /// `best` = `Some(k)`, only those that may be among the best `k` of them: a tool is left
    /// out when `k` tools seen before it score above it (the `k` best are among those appended,
    /// with the same scores).
    ///
    /// The tools a request reaches are listed as they are reached, unless its postings are
    /// many beside the tools of a large catalog ([`DENSE_SHARE`], [`DENSE_FROM`]): then every
    /// total is read back in order.
    /// Either way a tool's total is the same additions in the same order.
    pub(crate) fn score_groups(
        &self,
        groups: &[Vec<Alternative>],
        brand: Brand,
        keep: impl Fn(u32) -> bool,
        best: Option<usize>,
        hits: &mut Vec<Hit>,
    ) {
        let postings: usize =
            groups.iter().flatten().flat_map(|a| &a.terms).map(|&t| self.postings(t).0.len()).sum();
        let dense = self.n_docs >= DENSE_FROM && postings.saturating_mul(DENSE_SHARE) >= self.n_docs;
        self.score_groups_as(dense, groups, brand, keep, best, hits);
    }

    /// [`Bm25Index::score_groups`], every total read back in order if `dense`.
    fn score_groups_as(
        &self,
        dense: bool,
        groups: &[Vec<Alternative>],
        brand: Brand,
        keep: impl Fn(u32) -> bool,
        best: Option<usize>,
        hits: &mut Vec<Hit>,
    ) {
        GROUP_SCRATCH.with(|cell| {
            let mut scratch = cell.borrow_mut();
            let GroupScratch { acc, grp, alt, touched, in_group, in_alt } = &mut *scratch;
            // The accumulators are all zeros between calls (every slot used is taken back to
            // zero), so only a change of size needs a fill.
            for buf in [&mut *acc, &mut *grp, &mut *alt] {
                if buf.len() != self.n_docs {
                    buf.clear();
                    buf.resize(self.n_docs, 0.0);
                }
            }
            touched.clear();
            for group in groups {
                if let [only] = group.as_slice()
                    && only.weight == 1.0
                {
                    // The common case: a plain word, added straight in.
                    for &t in &only.terms {
                        let (docs, scores) = self.postings(t);
                        if dense {
                            for (&d, &s) in docs.iter().zip(scores) {
                                acc[d as usize] += s;
                            }
                        } else {
                            touched.gather(docs, scores, acc, |slot, s| slot + s);
                        }
                    }
                    continue;
                }
                in_group.clear();
                for a in group {
                    let w = a.weight;
                    if let [t] = a.terms.as_slice() {
                        // One term: straight into the group's best.
                        let (docs, scores) = self.postings(*t);
                        in_group.gather(docs, scores, grp, |slot, s| larger(slot, s * w));
                        continue;
                    }
                    in_alt.clear();
                    for &t in &a.terms {
                        let (docs, scores) = self.postings(t);
                        in_alt.gather(docs, scores, alt, |slot, s| slot + s * w);
                    }
                    in_group.drain_into(in_alt, alt, grp, larger);
                }
                if dense {
                    for &d in in_group.as_slice() {
                        acc[d as usize] += std::mem::take(&mut grp[d as usize]);
                    }
                } else {
                    touched.drain_into(in_group, grp, acc, |slot, s| slot + s);
                }
            }
            let mut cut = best.map(Cut::new);
            let mut offer = |cut: &mut Option<Cut>, d: u32, s: f32| {
                if s > 0.0 && cut.as_ref().is_none_or(|c| c.admits(s)) && keep(d) {
                    if let Some(c) = cut {
                        c.add(s);
                    }
                    hits.push(Hit { tool: brand.id(d), score: s });
                }
            };
            if !dense {
                for &d in touched.as_slice() {
                    offer(&mut cut, d, std::mem::take(&mut acc[d as usize]));
                }
                return;
            }
            // Sixteen totals at a time: their largest, found without a branch, tells whether
            // any of them can be kept (most cannot).
            for (first, slots) in (0u32..).step_by(DENSE_BLOCK).zip(acc.chunks_mut(DENSE_BLOCK)) {
                let top = largest(slots);
                if top <= 0.0 {
                    continue;
                }
                if cut.as_ref().is_none_or(|c| c.admits(top)) {
                    for (d, &s) in (first..).zip(slots.iter()) {
                        offer(&mut cut, d, s);
                    }
                }
                slots.fill(0.0);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::{ProptestConfig, prop_assert_eq, proptest};

    use super::*;
    use crate::bm25f::Bm25Params;
    use toolgate_catalog::Catalog;

    /// The embedded catalog's index, built once.
    fn embedded() -> &'static (Catalog, Bm25Index) {
        static INDEX: std::sync::OnceLock<(Catalog, Bm25Index)> = std::sync::OnceLock::new();
        INDEX.get_or_init(|| {
            let catalog = Catalog::embedded();
            let index = Bm25Index::build(&catalog, Bm25Params::lexical());
            (catalog, index)
        })
    }

    /// The first `k` hits (all of them without `k`) by score, then tool, as `(tool, score
    /// bits)`.
    fn best_of(mut hits: Vec<Hit>, k: Option<usize>) -> Vec<(usize, u32)> {
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.tool.index().cmp(&b.tool.index())));
        hits.truncate(k.unwrap_or(usize::MAX));
        hits.iter().map(|h| (h.tool.index(), h.score.to_bits())).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Totals listed as they are reached and totals read back in order give the same best
        /// hits with the same scores, bit for bit, whatever the groups, weights and filter.
        #[test]
        fn dense_and_listed_scoring_agree_to_the_bit(
            groups in proptest::collection::vec(
                proptest::collection::vec(
                    (proptest::collection::vec(0u32..4000, 1..4), 0usize..4),
                    1..4,
                ),
                1..10,
            ),
            best in proptest::option::of(0usize..12),
            odd_only: bool,
        ) {
            let (catalog, index) = embedded();
            let weights = [1.0, 0.9, 0.6, 0.25];
            let terms = index.terms.len() as u32;
            let groups: Vec<Vec<Alternative>> = groups
                .into_iter()
                .map(|alts| {
                    alts.into_iter()
                        .map(|(mut ids, w)| {
                            ids.iter_mut().for_each(|t| *t %= terms);
                            ids.sort_unstable();
                            ids.dedup();
                            Alternative { terms: ids, weight: weights[w] }
                        })
                        .collect()
                })
                .collect();
            let keep = |d: u32| !odd_only || d % 2 == 1;
            let run = |dense: bool| {
                let mut hits = Vec::new();
                index.score_groups_as(dense, &groups, catalog.brand(), keep, best, &mut hits);
                best_of(hits, best)
            };
            prop_assert_eq!(run(true), run(false));
        }
    }
}
