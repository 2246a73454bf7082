//! top: the best `k` hits of a search, in rank order (score descending, then name).

use super::{Hit, Index};

impl Index {
    /// Sorts the best `k` of `hits` to the front (score descending, then name) and drops the rest.
    ///
    /// The order is total (no two tools share a name), so the best `k` are the same however
    /// they are found. Many hits for few places (a search of a large catalog: thousands of
    /// tools touched, ten wanted) go through one pass that keeps the best `k` sorted, where
    /// nearly every hit costs one comparison of scores with the worst kept; otherwise a
    /// selection (faster below a few thousand hits; measured with `cargo bench -p toolgate
    /// --bench search -- query/lexical`: 100,000 tools 186 → 159 µs).
    pub(super) fn top(&self, hits: &mut Vec<Hit>, k: usize) {
        let cmp = |a: &Hit, b: &Hit| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| self.name_rank[a.tool.index()].cmp(&self.name_rank[b.tool.index()]))
        };
        if k >= hits.len() {
            hits.sort_unstable_by(cmp);
            return;
        }
        if k == 0 {
            hits.clear();
            return;
        }
        if hits.len() >= 4096 && hits.len() >= 16 * k {
            let mut best: Vec<Hit> = Vec::with_capacity(k + 1);
            for &hit in hits.iter() {
                if best.len() == k {
                    let worst = &best[k - 1];
                    // Below the worst kept on score alone: out, without looking at names.
                    if hit.score < worst.score || cmp(&hit, worst).is_ge() {
                        continue;
                    }
                    best.pop();
                }
                let at = best.partition_point(|kept| cmp(kept, &hit).is_lt());
                best.insert(at, hit);
            }
            *hits = best;
            return;
        }
        hits.select_nth_unstable_by(k - 1, cmp);
        hits.truncate(k);
        hits.sort_unstable_by(cmp);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::{ProptestConfig, prop_assert_eq, proptest};

    use super::*;
    use toolgate_catalog::Catalog;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// The best `k` by one pass (many hits, few places) or by selection are the first `k`
        /// of the whole list sorted, ties on score broken by name alike.
        #[test]
        fn top_keeps_the_first_k_of_the_sorted_hits(
            scores in proptest::collection::vec(0u8..6, 0..6000),
            k in 0usize..40,
        ) {
            let index = Index::builder().build(&Catalog::embedded());
            let hits: Vec<Hit> = scores
                .iter()
                .enumerate()
                // More hits than tools: a tool comes back with another score (or the same
                // one, an identical hit), so both ways of choosing are exercised.
                .map(|(i, &s)| Hit { tool: index.catalog().id(i % 527), score: f32::from(s) / 2.0 })
                .collect();
            let rank = |h: &Hit| index.name_rank[h.tool.index()];
            let mut sorted = hits.clone();
            sorted.sort_by(|a, b| b.score.total_cmp(&a.score).then(rank(a).cmp(&rank(b))));
            sorted.truncate(k);
            let mut top = hits;
            index.top(&mut top, k);
            prop_assert_eq!(top, sorted);
        }
    }
}
