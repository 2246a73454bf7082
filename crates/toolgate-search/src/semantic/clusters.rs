//! The clusters of a large dense index (an inverted file): a search compares the query with
//! each cluster's mean, reads the rows of the closest clusters only, and says whether what it
//! found is provably the exact answer.
//!
//! A catalog's tool vectors fall into groups (a server's tools, a domain's), so the best rows
//! for a query are nearly always in the few clusters whose means it is closest to. Each cluster
//! keeps its mean `μ` and its radius `r`, the greatest distance from `μ` to a member as stored
//! (dequantised). For a query `q` and any member `x`, `q·x = q·μ + q·(x − μ) ≤ q·μ + |q|·r`:
//! a cluster whose bound is below the `k`-th best score found can hold none of the best `k`.
//! When every cluster left unread is bounded so, the answer equals a scan of every row, and
//! [`Clusters::nearest`] says it is exact; otherwise it is the best of what was read.

use super::kernel::{Kernel, MEAN_BLOCK, dot_f32};
use super::{best_first, better};
use crate::cores::on_cores;

/// The clusters of an index's rows, which the index stores grouped by cluster.
#[derive(Debug, Clone, Default)]
pub(crate) struct Clusters {
    /// The dimensions of a row.
    dim: usize,
    /// `count × dim`: each cluster's mean row (dequantised).
    means: Vec<f32>,
    /// Per cluster: the greatest distance from its mean to one of its rows, dequantised, with a
    /// margin for the rounding of the scores it bounds.
    radii: Vec<f32>,
    /// Per cluster and one more: where its rows begin among the index's rows.
    starts: Vec<u32>,
}

/// What [`Clusters::nearest`] read and found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Nearest {
    /// Row positions and scores, best first (ties to the lower position), at most `k`.
    pub(crate) hits: Vec<(u32, f32)>,
    /// True when no row left unread could be among `hits`: they are what a scan of every row
    /// gives.
    pub(crate) exact: bool,
    /// How many rows were compared.
    pub(crate) read: usize,
}

/// Added to every bound, for the rounding of `f32` sums (a score and its bound are sums of a
/// few hundred products of numbers below 1).
const SLACK: f32 = 1e-3;

impl Clusters {
    /// Clusters `n` vectors (unit length, `dim` long) into about `√n` groups by k-means, and
    /// returns the clusters' order of the vectors: `order[p]` is the vector stored at position
    /// `p`. `head(i)` gives vector `i`'s first `dim.min(ASSIGN_DIMS)` dimensions, the only ones
    /// compared, made when asked for (an index's rows, not a copy of them). The means and radii
    /// are filled in by [`fit`](Clusters::fit) once the rows are quantised.
    pub(crate) fn group(
        n: usize,
        dim: usize,
        kernel: Kernel,
        head: impl Fn(usize) -> Vec<f32> + Sync,
    ) -> (Clusters, Vec<u32>) {
        let count = ((n as f64).sqrt().round() as usize).clamp(1, n.max(1));
        // Clustering compares only the first dimensions (the strongest components): the
        // assignment need not be the best one for the bounds to hold, only the radii true.
        let d = dim.min(ASSIGN_DIMS);
        // One vector from each stretch of the catalog, at a place in it that varies (a fixed
        // stride could line up with a pattern in the catalog's order).
        let sample: Vec<Vec<f32>> = spread(n, count * SAMPLE_PER_CLUSTER).map(&head).collect();
        let mut means = seeds(&sample, count);
        let count = means.len();
        for _ in 0..ROUNDS {
            let (flat, halves) = flatten(&means);
            let of = on_cores(&sample, |v| kernel.nearest_mean(&flat, &halves, v));
            let mut sums = vec![vec![0.0f32; d]; count];
            let mut sizes = vec![0usize; count];
            for (&o, v) in of.iter().zip(&sample) {
                sums[o as usize].iter_mut().zip(v).for_each(|(s, x)| *s += x);
                sizes[o as usize] += 1;
            }
            for ((m, s), &size) in means.iter_mut().zip(sums).zip(&sizes) {
                if size > 0 {
                    *m = s.into_iter().map(|x| x / size as f32).collect();
                }
            }
        }
        let (flat, halves) = flatten(&means);
        let all: Vec<u32> = (0..n as u32).collect();
        let nearest = on_cores(&all, |&i| kernel.nearest_mean(&flat, &halves, &head(i as usize)[..d]));
        let mut keyed: Vec<(u32, u32)> = nearest.into_iter().zip(0..).collect();
        keyed.sort_unstable();
        let mut starts = vec![0u32; count + 1];
        for &(c, _) in &keyed {
            starts[c as usize + 1] += 1;
        }
        for c in 0..count {
            starts[c + 1] += starts[c];
        }
        let order = keyed.into_iter().map(|(_, i)| i).collect();
        (Clusters { dim, means: Vec::new(), radii: Vec::new(), starts }, order)
    }

    /// Computes each cluster's mean and radius from the rows as stored: `rows` (`dim` wide, in
    /// the order [`group`](Clusters::group) gave) times their `scales`.
    pub(crate) fn fit(&mut self, rows: &[i8], scales: &[f32]) {
        let dim = self.dim;
        let row = |p: usize| rows[p * dim..(p + 1) * dim].iter().map(move |&x| f32::from(x) * scales[p]);
        self.means = vec![0.0; self.count() * dim];
        self.radii = vec![0.0; self.count()];
        for c in 0..self.count() {
            let (start, end) = (self.starts[c] as usize, self.starts[c + 1] as usize);
            let mean = &mut self.means[c * dim..(c + 1) * dim];
            for p in start..end {
                mean.iter_mut().zip(row(p)).for_each(|(m, x)| *m += x);
            }
            let size = (end - start).max(1) as f32;
            mean.iter_mut().for_each(|m| *m /= size);
            let far = (start..end)
                .map(|p| row(p).zip(mean.iter()).map(|(x, m)| (x - m) * (x - m)).sum::<f32>())
                .fold(0.0f32, f32::max);
            self.radii[c] = far.sqrt() * (1.0 + SLACK) + SLACK;
        }
    }

    /// The number of clusters.
    pub(crate) fn count(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// The best `k` rows for the query `qi` (int8, with its scale `q_scale`) by
    /// `dot × scales[row] × q_scale`: the rows of the clusters whose means are closest are read
    /// until at least `least` rows have been, then any other cluster whose bound reaches the
    /// `k`-th score so far while fewer than `most` rows have been read; `exact` says whether
    /// every cluster left could hold none of the best `k`.
    #[allow(clippy::too_many_arguments, reason = "the index's parts, lent for one search")]
    pub(crate) fn nearest(
        &self,
        kernel: Kernel,
        rows: &[i8],
        scales: &[f32],
        qi: &[i8],
        q_scale: f32,
        k: usize,
        (least, most): (usize, usize),
    ) -> Nearest {
        let dim = self.dim;
        let q: Vec<f32> = qi.iter().map(|&x| f32::from(x) * q_scale).collect();
        let q_norm = q.iter().map(|x| x * x).sum::<f32>().sqrt();
        let near: Vec<f32> = self.means.chunks_exact(dim).map(|m| dot_f32(m, &q)).collect();
        let mut order: Vec<u32> = (0..self.count() as u32).collect();
        order.sort_unstable_by(|&a, &b| near[b as usize].total_cmp(&near[a as usize]).then(a.cmp(&b)));
        let (mut hits, mut dots) = (Vec::new(), Vec::new());
        let mut read = 0;
        let mut read_cluster = |c: usize, hits: &mut Vec<(u32, f32)>| {
            let (start, end) = (self.starts[c] as usize, self.starts[c + 1] as usize);
            dots.clear();
            kernel.dots_all(&rows[start * dim..end * dim], qi, &mut dots);
            for (p, &d) in (start..end).zip(&dots) {
                hits.push((p as u32, d as f32 * scales[p] * q_scale));
            }
            end - start
        };
        let mut rest = order.len();
        for (i, &c) in order.iter().enumerate() {
            if read >= least {
                rest = i;
                break;
            }
            read += read_cluster(c as usize, &mut hits);
        }
        let mut exact = true;
        let mut kth = kth_score(&mut hits, k);
        for &c in &order[rest..] {
            let c = c as usize;
            if near[c] + q_norm * self.radii[c] < kth {
                continue;
            }
            let size = (self.starts[c + 1] - self.starts[c]) as usize;
            if read + size > most {
                exact = false;
                continue;
            }
            read += read_cluster(c, &mut hits);
            kth = kth_score(&mut hits, k);
        }
        best_first(&mut hits, k);
        Nearest { hits, exact, read }
    }
}

impl Clusters {
    /// Appends the clusters to `out` for [`decode`](Clusters::decode).
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    pub(crate) fn encode(&self, out: &mut crate::sealed::Out<'_>) {
        out.u64(self.count() as u64);
        out.floats(&self.means);
        out.floats(&self.radii);
        out.u32s(&self.starts);
    }

    /// The clusters `r` reads, if they are clusters of `rows` rows of `dim` dimensions: each
    /// cluster a mean, a radius that is a length, and a run of rows, the runs in order and
    /// covering every row.
    #[cfg_attr(not(feature = "semantic"), allow(dead_code))]
    pub(crate) fn decode(r: &mut crate::sealed::Reader<'_>, dim: usize, rows: usize) -> Option<Clusters> {
        let count = r.count(4 * (dim + 2))?;
        let means = r.floats(count.checked_mul(dim)?)?;
        let radii = r.floats(count)?;
        let starts = r.u32s(count + 1)?;
        let runs = starts.first() == Some(&0)
            && starts.last().map(|&s| s as usize) == Some(rows)
            && starts.windows(2).all(|w| w[0] <= w[1]);
        (runs && radii.iter().all(|&x| x >= 0.0)).then_some(Clusters { dim, means, radii, starts })
    }
}

/// The dimensions k-means compares.
pub(crate) const ASSIGN_DIMS: usize = 64;

/// Vectors sampled per cluster for k-means' rounds.
const SAMPLE_PER_CLUSTER: usize = 24;

/// k-means' rounds over the sample.
const ROUNDS: usize = 6;

/// `count` first means for k-means, chosen from `sample` by k-means++: each next one with a
/// chance in proportion to its squared distance from the nearest chosen so far, so that every
/// group of the sample gets one (the draws are from a fixed sequence: the same catalog clusters
/// the same way every time).
fn seeds(sample: &[Vec<f32>], count: usize) -> Vec<Vec<f32>> {
    let Some(first) = sample.first() else { return Vec::new() };
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut draw = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    // Squared distances as |v|² − 2 v·c + |c|², the lengths found once.
    let lengths: Vec<f32> = sample.iter().map(|v| dot_f32(v, v)).collect();
    let distances = |c: &[f32]| -> Vec<f32> {
        let length = dot_f32(c, c);
        sample.iter().zip(&lengths).map(|(v, &l)| (l - 2.0 * dot_f32(v, c) + length).max(0.0)).collect()
    };
    let mut means = vec![first.clone()];
    let mut near = distances(first);
    while means.len() < count {
        let total: f64 = near.iter().map(|&d| f64::from(d)).sum();
        if total <= 0.0 {
            break;
        }
        let mut at = draw() * total;
        let mut pick = near.len() - 1;
        for (i, &d) in near.iter().enumerate() {
            at -= f64::from(d);
            if at < 0.0 {
                pick = i;
                break;
            }
        }
        let chosen = sample[pick].clone();
        for (n, d) in near.iter_mut().zip(distances(&chosen)) {
            *n = n.min(d);
        }
        means.push(chosen);
    }
    means
}

/// About `most` of the positions `0..n` (all of them when `n < 2 × most`), spread over it: one
/// from each stretch of `n / most` positions, at a place in the stretch that varies from one to
/// the next (a fixed stride could line up with a pattern in the catalog's order). The same
/// positions for the same `n` and `most`.
pub(super) fn spread(n: usize, most: usize) -> impl Iterator<Item = usize> {
    let stretch = (n / most.max(1)).max(1);
    (0..n / stretch).map(move |i| i * stretch + (mix(i as u64) % stretch as u64) as usize)
}

/// SplitMix64's output function: `i` scrambled.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `means` (each as long as the first) laid out for [`Kernel::nearest_mean`]: in blocks of
/// [`MEAN_BLOCK`], each block dimension by dimension, the last filled up with zeros; and half
/// the squared length of each (`+∞` for the filling, which is never nearest).
fn flatten(means: &[Vec<f32>]) -> (Vec<f32>, Vec<f32>) {
    let d = means.first().map_or(0, Vec::len);
    let blocks = means.len().div_ceil(MEAN_BLOCK);
    let mut flat = vec![0.0f32; blocks * MEAN_BLOCK * d];
    let mut halves = vec![f32::INFINITY; blocks * MEAN_BLOCK];
    for (c, m) in means.iter().enumerate() {
        let (b, l) = (c / MEAN_BLOCK, c % MEAN_BLOCK);
        for (j, &x) in m.iter().enumerate().take(d) {
            flat[(b * d + j) * MEAN_BLOCK + l] = x;
        }
        halves[c] = 0.5 * dot_f32(m, m);
    }
    (flat, halves)
}

/// The `k`-th best score of `hits` (`-∞` when there are fewer), keeping only the hits that could
/// still be among the best `k` when `hits` has grown large.
fn kth_score(hits: &mut Vec<(u32, f32)>, k: usize) -> f32 {
    if k == 0 || hits.len() < k {
        return f32::NEG_INFINITY;
    }
    hits.select_nth_unstable_by(k - 1, better);
    hits.truncate(k);
    hits[k - 1].1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::index::quantize;
    use crate::semantic::normalize;
    use proptest::prelude::*;

    /// `n` unit vectors of `dim` dimensions around `groups` random centres (`spread` the noise
    /// around each), from `seed`.
    fn points(seed: u64, n: usize, dim: usize, groups: usize, spread: f32) -> Vec<Vec<f32>> {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        };
        let centres: Vec<Vec<f32>> = (0..groups).map(|_| (0..dim).map(|_| next()).collect()).collect();
        (0..n)
            .map(|i| {
                let c = &centres[i % groups];
                let mut v: Vec<f32> = c.iter().map(|&m| m + spread * next()).collect();
                normalize(&mut v);
                v
            })
            .collect()
    }

    /// Clusters `vectors` as an index does, and returns them with its rows and scales.
    fn clustered(vectors: &[Vec<f32>], dim: usize) -> (Clusters, Vec<i8>, Vec<f32>) {
        let d = dim.min(ASSIGN_DIMS);
        let (mut clusters, order) =
            Clusters::group(vectors.len(), dim, Kernel::detect(), |i| vectors[i][..d].to_vec());
        let (mut rows, mut scales) = (Vec::new(), Vec::new());
        for &i in &order {
            scales.push(quantize(Kernel::detect(), &vectors[i as usize], &mut rows));
        }
        clusters.fit(&rows, &scales);
        (clusters, rows, scales)
    }

    /// Every row compared: the best `k`, ties to the lower position.
    fn scan(rows: &[i8], scales: &[f32], qi: &[i8], q_scale: f32, k: usize) -> Vec<(u32, f32)> {
        let mut all: Vec<(u32, f32)> = rows
            .chunks_exact(qi.len())
            .enumerate()
            .map(|(p, r)| (p as u32, super::super::kernel::dot(r, qi) as f32 * scales[p] * q_scale))
            .collect();
        best_first(&mut all, k);
        all
    }

    /// The assignment in blocks of eight means picks the mean a plain comparison of each picks
    /// (up to the rounding of a near tie), for any number of means, a last block filled up or
    /// not, on either build of the loops.
    #[test]
    fn the_nearest_mean_is_the_one_a_plain_comparison_picks() {
        for (seed, count, d) in [(1, 1, 64), (2, 7, 64), (3, 8, 64), (4, 13, 64), (5, 316, 64), (6, 9, 5)] {
            let means = points(seed, count, d, count.min(4), 0.5);
            let (flat, halves) = flatten(&means);
            assert_eq!(halves.len() % MEAN_BLOCK, 0);
            let score = |v: &[f32], c: usize| {
                let m = &means[c];
                v.iter().zip(m).map(|(&x, &y)| f64::from(x) * f64::from(y)).sum::<f64>()
                    - 0.5 * m.iter().map(|&y| f64::from(y) * f64::from(y)).sum::<f64>()
            };
            for v in points(seed ^ 0xff, 200, d, 6, 0.8) {
                let best = (0..count).map(|c| score(&v, c)).fold(f64::NEG_INFINITY, f64::max);
                let got = Kernel::Portable.nearest_mean(&flat, &halves, &v);
                assert!((got as usize) < count, "a filling mean won: {got} of {count}");
                assert!(best - score(&v, got as usize) < 1e-5, "{count} means: {got} is not the nearest");
                assert_eq!(Kernel::detect().nearest_mean(&flat, &halves, &v), got, "the builds agree");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn a_search_that_says_it_is_exact_is_the_full_scan(
            seed in any::<u64>(),
            n in 20usize..1500,
            dim in prop::sample::select(vec![8usize, 16, 48, 96]),
            groups in 1usize..40,
            spread in 0.05f32..1.5,
            k in 1usize..30,
            least in 0usize..600,
            more in 0usize..1500,
            query in any::<u64>(),
        ) {
            let vectors = points(seed, n, dim, groups, spread);
            let (clusters, rows, scales) = clustered(&vectors, dim);
            prop_assert_eq!(clusters.starts.last().copied(), Some(n as u32));
            // A query near one of the points, or anywhere.
            let mut q = points(query, 1, dim, 1, 1.0).remove(0);
            if query % 2 == 0 {
                q.iter_mut().zip(&vectors[query as usize % n]).for_each(|(a, b)| *a = 0.3 * *a + b);
                normalize(&mut q);
            }
            let mut qi = Vec::new();
            let q_scale = quantize(Kernel::detect(), &q, &mut qi);
            let found = clusters.nearest(Kernel::detect(), &rows, &scales, &qi, q_scale, k, (least, least + more));
            let full = scan(&rows, &scales, &qi, q_scale, k);
            prop_assert!(found.hits.len() <= k);
            if found.exact {
                prop_assert_eq!(&found.hits, &full);
            } else {
                prop_assert!(found.read < n);
            }
            if found.read >= n {
                prop_assert!(found.exact);
            }
        }
    }

    #[test]
    fn tight_clusters_are_often_exact_and_a_small_budget_over_noise_is_not() {
        let exact_share = |spread: f32, reads: (usize, usize)| {
            let vectors = points(11, 4000, 48, 60, spread);
            let (clusters, rows, scales) = clustered(&vectors, 48);
            let mut exact = 0;
            for i in 0..50 {
                let mut qi = Vec::new();
                let q_scale = quantize(Kernel::detect(), &vectors[i * 37], &mut qi);
                let found = clusters.nearest(Kernel::detect(), &rows, &scales, &qi, q_scale, 5, reads);
                exact += usize::from(found.exact);
                if found.exact {
                    assert_eq!(found.hits, scan(&rows, &scales, &qi, q_scale, 5));
                }
            }
            exact
        };
        assert!(exact_share(0.1, (256, 1024)) >= 40, "tight clusters");
        assert!(exact_share(3.0, (64, 128)) <= 5, "noise");
    }
}
