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

/// How many of `n` items each core's share holds: all of them when there are few items or one
/// core.
pub(crate) fn share_len(n: usize) -> usize {
    let threads = threads();
    if threads < 2 || n < 2048 { n.max(1) } else { n.div_ceil(threads) }
}

/// How many threads [`on_cores`] and [`in_turn`] share work between: the machine's cores, at
/// most [`BUILD_THREADS`].
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(BUILD_THREADS)
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

/// `f` of each of `parts`, in order, on as many threads as [`on_cores`] starts: each thread
/// takes the next part when it is done with one, so that what a part holds is let go of part by
/// part while the work goes on (a part is moved into `f`, and dropped when `f` is done with it).
pub(crate) fn in_turn<P: Send, U: Send>(parts: Vec<P>, f: impl Fn(P) -> U + Sync) -> Vec<U> {
    let threads = threads();
    if threads < 2 || parts.len() < 2 {
        return parts.into_iter().map(f).collect();
    }
    let queue = std::sync::Mutex::new(parts.into_iter().enumerate());
    let (f, queue) = (&f, &queue);
    let mut done: Vec<(usize, U)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(move || {
                    let mut out = Vec::new();
                    loop {
                        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                        let Some((k, part)) = next else { return out };
                        out.push((k, f(part)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    done.sort_unstable_by_key(|&(k, _)| k);
    done.into_iter().map(|(_, u)| u).collect()
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
    fn parts_taken_in_turn_come_back_in_order_and_each_is_let_go_of() {
        let dropped = std::sync::atomic::AtomicUsize::new(0);
        struct Part<'a>(u64, &'a std::sync::atomic::AtomicUsize);
        impl Drop for Part<'_> {
            fn drop(&mut self) {
                self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let parts: Vec<Part<'_>> = (0..40).map(|k| Part(k, &dropped)).collect();
        let got = in_turn(parts, |part| {
            std::thread::sleep(std::time::Duration::from_micros(200 * (part.0 % 3)));
            part.0 * part.0
        });
        assert_eq!(got, (0..40u64).map(|k| k * k).collect::<Vec<_>>());
        assert_eq!(dropped.load(std::sync::atomic::Ordering::Relaxed), 40);
        let caught =
            std::panic::catch_unwind(|| in_turn((0..9).collect(), |k: u32| assert!(k != 7, "part 7")));
        assert!(caught.is_err(), "a panic on another thread reaches the caller");
    }
}
