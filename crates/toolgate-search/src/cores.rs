//! Work shared out between the machine's cores while an index is built: every tool is read on
//! its own, so each core takes a share of the tools, and the shares' results are put back in
//! order.

/// `f` of each of `items`, in order, the items shared out between the machine's cores (at
/// most [`BUILD_THREADS`]): a dense index of 100,000 tools spends most of its build tokenizing,
/// pooling and assigning tools, each on its own, and the search's table of names most of its
/// own making each tool's names. Few items are done on the caller's thread.
pub(crate) fn on_cores<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    let f = &f;
    let parts = on_parts(items.chunks(share_len(items.len())).collect(), |part| part.iter().map(f).collect());
    if parts.len() == 1 {
        return parts.into_iter().next().unwrap_or_default();
    }
    let mut out = Vec::with_capacity(items.len());
    parts.into_iter().for_each(|part: Vec<U>| out.extend(part));
    out
}

/// Fills `out`, `width` slots for each of `out.len() / width` items: `f(i, slots)` writes item
/// `i`'s and returns what is kept beside them, in order; the items shared out between the cores
/// as [`on_cores`] shares them. What the items make is written where it is kept, never
/// gathered from each core's own buffer (at 100,000 tools a second copy of the rows).
pub(crate) fn fill_on_cores<O: Send, U: Send>(
    out: &mut [O],
    width: usize,
    f: impl Fn(usize, &mut [O]) -> U + Sync,
) -> Vec<U> {
    let width = width.max(1);
    let share = share_len(out.len() / width);
    let f = &f;
    let parts: Vec<(usize, &mut [O])> =
        out.chunks_mut(share * width).enumerate().map(|(k, part)| (k * share, part)).collect();
    let kept = on_parts(parts, |(first, part)| {
        part.chunks_exact_mut(width).enumerate().map(|(j, slots)| f(first + j, slots)).collect::<Vec<U>>()
    });
    kept.into_iter().flatten().collect()
}

/// How many of `n` items each core's share holds: all of them when there are few items or one
/// core.
pub(crate) fn share_len(n: usize) -> usize {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(BUILD_THREADS);
    if threads < 2 || n < 2048 { n.max(1) } else { n.div_ceil(threads) }
}

/// `f` of each of `parts`, in order, each on a thread of its own (a single part on the
/// caller's); a panic on one reaches the caller.
pub(crate) fn on_parts<P: Send, U: Send>(parts: Vec<P>, f: impl Fn(P) -> U + Sync) -> Vec<U> {
    if parts.len() < 2 {
        return parts.into_iter().map(f).collect();
    }
    let f = &f;
    std::thread::scope(|scope| {
        let running: Vec<_> = parts.into_iter().map(|part| scope.spawn(move || f(part))).collect();
        running
            .into_iter()
            .map(|part| part.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    })
}

/// The most threads [`on_cores`] starts.
const BUILD_THREADS: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_shared_between_cores_comes_back_in_order() {
        let items: Vec<u64> = (0..10_000).collect();
        let square = |x: &u64| x * x;
        assert_eq!(on_cores(&items, square), items.iter().map(square).collect::<Vec<_>>());
        assert_eq!(on_cores(&items[..3], square), vec![0, 1, 4]);
        let caught = std::panic::catch_unwind(|| on_cores(&items, |&x| assert!(x != 9_999, "the last item")));
        assert!(caught.is_err(), "a panic on another thread reaches the caller");
    }

    #[test]
    fn work_filled_in_on_cores_lands_in_its_slots() {
        for n in [0usize, 3, 10_000] {
            let mut out = vec![0u64; n * 3];
            let kept = fill_on_cores(&mut out, 3, |i, slots| {
                slots.iter_mut().enumerate().for_each(|(j, s)| *s = (i * 3 + j) as u64 * 7);
                i as u64 + 1
            });
            assert_eq!(out, (0..n as u64 * 3).map(|x| x * 7).collect::<Vec<_>>());
            assert_eq!(kept, (1..=n as u64).collect::<Vec<_>>());
        }
    }
}
