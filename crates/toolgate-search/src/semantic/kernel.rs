//! The int8 dot products of the dense scan and the encoder's few-row matrix product
//! (`Kernel::skinny`, feature `bert`), and an AVX2 build of the same loops chosen at run
//! time (for the few-row product, an AVX-512 build too, on a CPU that has it).
//!
//! The loops are plain Rust written so that they vectorise. Built for baseline x86-64 they get
//! SSE2 only, which has no instruction that widens `i8` to `i16`; the scan of a 10,000-tool
//! catalog then spends most of its time unpacking bytes. [`Kernel::detect`] asks the CPU once,
//! when a dense index is built, whether it has AVX2; if so, the index's scans run the same loops
//! compiled with AVX2 enabled. Other CPUs and other architectures run the portable build; both
//! give the same integers.
//!
//! Calling a function compiled for a CPU feature is `unsafe` in Rust, because running it on a
//! CPU without the feature is undefined; so are the raw loads, stores and prefetches of the
//! intrinsics. They are this crate's only `unsafe` code but one call (`super::matmul`'s
//! matrix product), all in this file: the calls only on a
//! [`HasAvx2`] proof, the memory accesses inside the slices they were given.

/// Which build of the loops a scan runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// Compiled for the build's target (SSE2 on baseline x86-64).
    Portable,
    /// Compiled with AVX2 enabled; only ever chosen on a CPU that has it.
    #[cfg(target_arch = "x86_64")]
    Avx2(HasAvx2),
}

/// Proof that the CPU has AVX2 and FMA: its field is private, so only [`Kernel::detect`]
/// makes one, and only after asking the CPU.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HasAvx2(());

impl Kernel {
    /// The fastest build this CPU can run.
    pub(crate) fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            return Kernel::Avx2(HasAvx2(()));
        }
        Kernel::Portable
    }

    /// Appends to `out` the dot product of `q` with each `q.len()`-long row of `rows`.
    pub(crate) fn dots_all(self, rows: &[i8], q: &[i8], out: &mut Vec<i32>) {
        match self {
            Kernel::Portable => dots_all(rows, q, out),
            #[cfg(target_arch = "x86_64")]
            #[allow(unsafe_code)]
            // SAFETY: a `HasAvx2` is only made by `detect`, after the CPU said it has AVX2.
            Kernel::Avx2(_) => unsafe { dots_all_avx2(rows, q, out) },
        }
    }

    #[cfg(feature = "bert")]
    /// Adds `x · wt` to `out` for a few rows of `x` (a short text's tokens, each `k` long),
    /// `wt` being `k × n` and `out` `rows × n`, and returns `true`; or returns `false` having
    /// done nothing, when this CPU has no kernel for it (the caller then runs a general
    /// product). A product this skinny spends most of a general product's time copying the
    /// weights into blocks; here each strip of sixteen columns of `wt` is read from memory once
    /// and stays in the first-level cache while every row goes through it, strips spread over
    /// the cores.
    pub(crate) fn skinny(self, out: &mut [f32], x: &[f32], strips: &[f32], n: usize) -> bool {
        match self {
            Kernel::Portable => false,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(_) => {
                use rayon::prelude::*;
                let count = n.div_ceil(SKINNY_COLS);
                let k = strips.len() / (count * SKINNY_COLS).max(1);
                assert!(
                    k > 0
                        && strips.len() == count * k * SKINNY_COLS
                        && x.len().is_multiple_of(k)
                        && out.len() == x.len() / k * n
                );
                let rows = x.len() / k;
                if rows == 0 {
                    return true;
                }
                // The sums strip by strip.
                let mut sums = vec![0.0f32; count * rows * SKINNY_COLS];
                let per_task = STRIPS_PER_TASK * rows * SKINNY_COLS;
                // With AVX-512 a strip's row of sixteen is one register, not two: half the
                // multiplications (the same ones, in the same order, so the same sums).
                let wide = std::arch::is_x86_feature_detected!("avx512f");
                sums.par_chunks_mut(per_task).enumerate().for_each(|(task, sums)| {
                    let first = task * STRIPS_PER_TASK;
                    for (i, sums) in sums.chunks_mut(rows * SKINNY_COLS).enumerate() {
                        let strip = &strips[(first + i) * k * SKINNY_COLS..][..k * SKINNY_COLS];
                        #[allow(unsafe_code)]
                        // SAFETY: a `HasAvx2` is only made by `detect`, after the CPU said it
                        // has AVX2 and FMA; `wide` only after it said it has AVX-512F.
                        unsafe {
                            if wide { strip_avx512(sums, x, strip, k) } else { strip_avx2(sums, x, strip, k) }
                        }
                    }
                });
                for (strip, sums) in sums.chunks_exact(rows * SKINNY_COLS).enumerate() {
                    let j0 = strip * SKINNY_COLS;
                    let width = SKINNY_COLS.min(n - j0);
                    for (t, row) in sums.chunks_exact(SKINNY_COLS).take(rows).enumerate() {
                        for (o, v) in out[t * n + j0..t * n + j0 + width].iter_mut().zip(row) {
                            *o += v;
                        }
                    }
                }
                true
            }
        }
    }

    /// Which of `means` is nearest to `v`: the one with the largest `v·m − halves[i]`, `halves`
    /// holding half the squared length of each (ties to the first). k-means' assignment, where
    /// building a large index spends its time. `means` are in blocks of eight ([`MEAN_BLOCK`]),
    /// each block dimension by dimension (the eight means' first values, then their second …),
    /// so that one vector of eight sums takes a value of `v` at a time, with no sum across
    /// lanes per mean; a last block filled up with means whose half is `+∞` never wins.
    pub(crate) fn nearest_mean(self, means: &[f32], halves: &[f32], v: &[f32]) -> u32 {
        match self {
            Kernel::Portable => nearest_mean(means, halves, v),
            #[cfg(target_arch = "x86_64")]
            #[allow(unsafe_code)]
            // SAFETY: as in `dots_all`.
            Kernel::Avx2(_) => unsafe { nearest_mean_avx2(means, halves, v) },
        }
    }

    /// Adds `factor` times `row` (int8) to `acc`, over their common length: a token's vector
    /// into a pooled embedding.
    pub(crate) fn add_scaled(self, acc: &mut [f32], row: &[i8], factor: f32) {
        match self {
            Kernel::Portable => add_scaled(acc, row, factor),
            #[cfg(target_arch = "x86_64")]
            #[allow(unsafe_code)]
            // SAFETY: as in `dots_all`.
            Kernel::Avx2(_) => unsafe { add_scaled_avx2(acc, row, factor) },
        }
    }

    /// Writes `v` quantised to int8 into `out` (as long as `v`): symmetric, by its largest
    /// magnitude, each value rounded half away from zero; returns the scale that turns the
    /// int8 values back into `v`. Every build writes the same bytes.
    pub(crate) fn quantize_into(self, v: &[f32], out: &mut [i8]) -> f32 {
        match self {
            Kernel::Portable => quantize_into(v, out),
            #[cfg(target_arch = "x86_64")]
            #[allow(unsafe_code)]
            // SAFETY: as in `dots_all`.
            Kernel::Avx2(_) => unsafe { quantize_into_avx2(v, out) },
        }
    }

    /// Appends to `out` the dot product of `q` with row `id` of `rows` (rows `q.len()` long), for
    /// each of `ids` in order.
    pub(crate) fn dots_some(self, rows: &[i8], q: &[i8], ids: &[u32], out: &mut Vec<i32>) {
        match self {
            Kernel::Portable => dots_some(rows, q, ids, out),
            #[cfg(target_arch = "x86_64")]
            #[allow(unsafe_code)]
            // SAFETY: as in `dots_all`.
            Kernel::Avx2(_) => unsafe { dots_some_avx2(rows, q, ids, out) },
        }
    }
}

// The loops below are plain index loops on purpose: an iterator adapter's `fold` is a separate
// generic function that the compiler may decline to inline, and then it runs without the
// caller's AVX2.

#[inline(always)]
fn dots_all(rows: &[i8], q: &[i8], out: &mut Vec<i32>) {
    let d = q.len();
    if d == 0 {
        return;
    }
    let n = rows.len() / d;
    out.reserve(n);
    for i in 0..n {
        out.push(dot(&rows[i * d..(i + 1) * d], q));
    }
}

#[inline(always)]
fn dots_some(rows: &[i8], q: &[i8], ids: &[u32], out: &mut Vec<i32>) {
    let d = q.len();
    out.reserve(ids.len());
    for &id in ids {
        let at = id as usize * d;
        out.push(dot(&rows[at..at + d], q));
    }
}

#[cfg(feature = "bert")]
/// Rows of `x` per group of [`Kernel::skinny`]: with two vectors of eight columns each, four
/// rows keep eight sums in registers.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const SKINNY_ROWS: usize = 4;

#[cfg(feature = "bert")]
/// Columns of `wt` per strip of [`Kernel::skinny`]: two AVX vectors.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const SKINNY_COLS: usize = 16;

#[cfg(feature = "bert")]
/// Strips one task of [`Kernel::skinny`] takes.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const STRIPS_PER_TASK: usize = 8;

#[cfg(feature = "bert")]
/// Lays `wt` (`k × n`, row-major) out in strips of [`SKINNY_COLS`] columns for
/// [`Kernel::skinny`]: strip after strip, each `k` rows of sixteen, the last padded with zeros.
pub(crate) fn strips(wt: &[f32], n: usize) -> Vec<f32> {
    let k = wt.len() / n.max(1);
    let count = n.div_ceil(SKINNY_COLS);
    let mut out = vec![0.0; count * k * SKINNY_COLS];
    for (strip, block) in out.chunks_exact_mut(k * SKINNY_COLS).enumerate() {
        let j0 = strip * SKINNY_COLS;
        let width = SKINNY_COLS.min(n - j0);
        for (kk, row) in block.chunks_exact_mut(SKINNY_COLS).enumerate() {
            row[..width].copy_from_slice(&wt[kk * n + j0..kk * n + j0 + width]);
        }
    }
    out
}

#[cfg(feature = "bert")]
/// The sums of one strip (`k` rows of sixteen, [`strips`]) times every row of `xs` (each `k`
/// long), into `sums` (a row of sixteen per row of `xs`), in groups of [`SKINNY_ROWS`] rows and
/// one last smaller group: the strip is read in order and stays in the first-level cache from
/// one group to the next.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn strip_avx2(sums: &mut [f32], xs: &[f32], strip: &[f32], k: usize) {
    strip_groups(sums, xs, strip, k);
}

#[cfg(feature = "bert")]
/// [`strip_avx2`] compiled with AVX-512 enabled.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
fn strip_avx512(sums: &mut [f32], xs: &[f32], strip: &[f32], k: usize) {
    strip_groups(sums, xs, strip, k);
}

#[cfg(feature = "bert")]
/// The body of [`strip_avx2`] and [`strip_avx512`], compiled into each.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn strip_groups(sums: &mut [f32], xs: &[f32], strip: &[f32], k: usize) {
    let rows = xs.len() / k;
    let whole = rows / SKINNY_ROWS * SKINNY_ROWS;
    let (head, tail) = sums.split_at_mut(whole * SKINNY_COLS);
    for (sums, x) in head.chunks_exact_mut(SKINNY_ROWS * SKINNY_COLS).zip(xs.chunks_exact(SKINNY_ROWS * k)) {
        strip_rows::<SKINNY_ROWS>(sums, x, strip, k);
    }
    let x = &xs[whole * k..];
    match rows - whole {
        1 => strip_rows::<1>(tail, x, strip, k),
        2 => strip_rows::<2>(tail, x, strip, k),
        3 => strip_rows::<3>(tail, x, strip, k),
        _ => {}
    }
}

#[cfg(feature = "bert")]
/// [`strip_avx2`] for one group of `T` rows: every `k` adds the strip's row times each row's
/// value, with FMA, into sums the compiler keeps in registers.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn strip_rows<const T: usize>(sums: &mut [f32], x: &[f32], strip: &[f32], k: usize) {
    const J: usize = SKINNY_COLS;
    let mut acc = [[0f32; J]; T];
    let x: [&[f32]; T] = std::array::from_fn(|t| &x[t * k..(t + 1) * k]);
    for (kk, w) in strip.chunks_exact(J).enumerate().take(k) {
        let w: &[f32; J] = w.try_into().expect("sixteen columns");
        for t in 0..T {
            let xv = x[t][kk];
            for jj in 0..J {
                acc[t][jj] = xv.mul_add(w[jj], acc[t][jj]);
            }
        }
    }
    for (row, a) in sums.chunks_exact_mut(J).zip(&acc) {
        row.copy_from_slice(a);
    }
}

/// How many means [`Kernel::nearest_mean`] compares side by side.
pub(crate) const MEAN_BLOCK: usize = 8;

#[inline(always)]
fn nearest_mean(means: &[f32], halves: &[f32], v: &[f32]) -> u32 {
    let width = MEAN_BLOCK * v.len().max(1);
    let mut best = (f32::NEG_INFINITY, 0u32);
    for (b, (block, halves)) in means.chunks_exact(width).zip(halves.chunks_exact(MEAN_BLOCK)).enumerate() {
        let mut sums = [0.0f32; MEAN_BLOCK];
        for (&x, lanes) in v.iter().zip(block.chunks_exact(MEAN_BLOCK)) {
            for (s, &m) in sums.iter_mut().zip(lanes) {
                *s += x * m;
            }
        }
        for (l, (&s, &half)) in sums.iter().zip(halves).enumerate() {
            if s - half > best.0 {
                best = (s - half, (b * MEAN_BLOCK + l) as u32);
            }
        }
    }
    best.1
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn nearest_mean_avx2(means: &[f32], halves: &[f32], v: &[f32]) -> u32 {
    nearest_mean(means, halves, v)
}

/// The dot product of two `f32` slices over their common length, in eight lanes so that it
/// vectorises (one running sum would wait on each addition in turn).
#[inline(always)]
pub(crate) fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let mut acc = [0.0f32; 8];
    let whole = n / 8 * 8;
    for (x, y) in a[..whole].chunks_exact(8).zip(b[..whole].chunks_exact(8)) {
        for j in 0..8 {
            acc[j] += x[j] * y[j];
        }
    }
    let tail: f32 = a[whole..n].iter().zip(&b[whole..n]).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

#[inline(always)]
fn quantize_into(v: &[f32], out: &mut [i8]) -> f32 {
    // Eight maxima side by side, as `normalize` sums.
    let mut lanes = [0.0f32; 8];
    let whole = v.len() / 8 * 8;
    for chunk in v[..whole].chunks_exact(8) {
        for (l, x) in lanes.iter_mut().zip(chunk) {
            *l = if x.abs() > *l { x.abs() } else { *l };
        }
    }
    let max = v[whole..].iter().chain(&lanes).fold(0.0f32, |m, x| if x.abs() > m { x.abs() } else { m });
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    // Half away from zero, as `f32::round`, but without its library call (baseline x86-64 has
    // no rounding instruction): the conversion to an integer truncates. Each value is worked
    // out alone, so a build that does eight at once writes the same bytes.
    let inverse = 1.0 / scale;
    for (o, x) in out.iter_mut().zip(v) {
        let r = (x * inverse).clamp(-127.0, 127.0);
        *o = (r + 0.5f32.copysign(r)) as i32 as i8;
    }
    scale
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn quantize_into_avx2(v: &[f32], out: &mut [i8]) -> f32 {
    quantize_into(v, out)
}

#[inline(always)]
fn add_scaled(acc: &mut [f32], row: &[i8], factor: f32) {
    for (a, &x) in acc.iter_mut().zip(row) {
        *a += factor * f32::from(x);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_scaled_avx2(acc: &mut [f32], row: &[i8], factor: f32) {
    add_scaled(acc, row, factor);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_all_avx2(rows: &[i8], q: &[i8], out: &mut Vec<i32>) {
    dots_all(rows, q, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_some_avx2(rows: &[i8], q: &[i8], ids: &[u32], out: &mut Vec<i32>) {
    use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
    // The rows asked for are scattered over megabytes: ask for a few rows ahead while this one
    // is multiplied, so that their cache misses overlap.
    const AHEAD: usize = 4;
    let d = q.len();
    out.reserve(ids.len());
    for (i, &id) in ids.iter().enumerate() {
        if let Some(&next) = ids.get(i + AHEAD) {
            let at = next as usize * d;
            for line in (at..(at + d).min(rows.len())).step_by(64) {
                #[allow(unsafe_code)]
                // SAFETY: a prefetch only hints the cache; `line` is inside `rows` anyway.
                unsafe {
                    _mm_prefetch::<_MM_HINT_T0>(rows.as_ptr().add(line));
                }
            }
        }
        let at = id as usize * d;
        out.push(dot(&rows[at..at + d], q));
    }
}

/// The int8 dot product of `a` and `b` over their common length, in 16 independent `i32` lanes
/// so that it vectorises.
#[inline(always)]
pub(crate) fn dot(a: &[i8], b: &[i8]) -> i32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let whole = n / 16 * 16;
    let mut acc = [0i32; 16];
    let mut i = 0;
    while i < whole {
        let x: &[i8; 16] = a[i..i + 16].try_into().expect("16 bytes");
        let y: &[i8; 16] = b[i..i + 16].try_into().expect("16 bytes");
        for j in 0..16 {
            acc[j] += i32::from(x[j]) * i32::from(y[j]);
        }
        i += 16;
    }
    let mut sum = 0;
    for lane in acc {
        sum += lane;
    }
    for j in whole..n {
        sum += i32::from(a[j]) * i32::from(b[j]);
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(feature = "bert")]
    fn the_skinny_product_is_the_textbook_one_for_every_row_count_and_a_narrow_last_strip() {
        let kernel = Kernel::detect();
        for (k, n) in [(1, 1), (17, 40), (384, 48)] {
            let wt: Vec<f32> = (0..k * n).map(|i| ((i * 7 % 13) as f32 - 6.0) / 8.0).collect();
            let laid = strips(&wt, n);
            for rows in 0..10 {
                let x: Vec<f32> = (0..rows * k).map(|i| ((i * 5 % 11) as f32 - 5.0) / 4.0).collect();
                let mut out: Vec<f32> = (0..rows * n).map(|i| i as f32).collect();
                if !kernel.skinny(&mut out, &x, &laid, n) {
                    assert_eq!(kernel, Kernel::Portable, "only the portable build declines");
                    return;
                }
                for t in 0..rows {
                    for j in 0..n {
                        let want =
                            (t * n + j) as f32 + (0..k).map(|i| x[t * k + i] * wt[i * n + j]).sum::<f32>();
                        let got = out[t * n + j];
                        assert!(
                            (got - want).abs() <= 1e-3 * want.abs().max(1.0),
                            "{rows}×{k}×{n} at {t},{j}: {got} {want}"
                        );
                    }
                }
            }
        }
    }

    /// Rows of every length from 0 to 70 (full chunks, remainders, both), values over the whole
    /// `i8` range including -128.
    fn cases() -> Vec<(Vec<i8>, Vec<i8>)> {
        let mut state = 0x2545_f491_u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as i8
        };
        (0..=70).map(|d| ((0..d * 9).map(|_| next()).collect(), (0..d).map(|_| next()).collect())).collect()
    }

    fn plain(a: &[i8], b: &[i8]) -> i32 {
        a.iter().zip(b).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum()
    }

    #[test]
    fn every_build_gives_the_plain_dot_products() {
        let kernels = [Kernel::Portable, Kernel::detect()];
        for (rows, q) in cases() {
            let want: Vec<i32> = if q.is_empty() {
                Vec::new()
            } else {
                rows.chunks_exact(q.len()).map(|r| plain(r, &q)).collect()
            };
            let ids: Vec<u32> = (0..want.len() as u32).rev().step_by(2).collect();
            let want_some: Vec<i32> = ids.iter().map(|&i| want[i as usize]).collect();
            for kernel in kernels {
                let mut got = Vec::new();
                kernel.dots_all(&rows, &q, &mut got);
                assert_eq!(got, want, "{kernel:?}, rows of {}", q.len());
                got.clear();
                kernel.dots_some(&rows, &q, &ids, &mut got);
                assert_eq!(got, want_some, "{kernel:?}, some rows of {}", q.len());
            }
        }
    }

    #[test]
    fn every_build_quantises_to_the_same_bytes() {
        let mut vectors: Vec<Vec<f32>> = vec![
            Vec::new(),
            vec![0.0; 19],
            vec![0.5, -0.5, 1.5, -1.5, 126.5, -126.5],
            vec![f32::MIN_POSITIVE, -3.0e-39, 1.0e30, -1.0e-30],
        ];
        // Values that land on halves after scaling, and mixed signs and magnitudes.
        vectors.push((0..256).map(|i| (i as f32 - 127.5) / 127.0).collect());
        vectors.push((0..301).map(|i| ((i * 7919 % 1013) as f32 - 506.0) * 1e-3).collect());
        for v in &vectors {
            let mut want = vec![0i8; v.len()];
            let want_scale = quantize_into(v, &mut want);
            let mut got = vec![0i8; v.len()];
            let got_scale = Kernel::detect().quantize_into(v, &mut got);
            assert_eq!((got, got_scale.to_bits()), (want.clone(), want_scale.to_bits()), "{v:?}");
            // Rounded half away from zero, within one step of the value.
            for (&q, &x) in want.iter().zip(v) {
                let exact = x / want_scale;
                assert!((f32::from(q) - exact).abs() <= 0.5 + 1e-3, "{x} as {q} at scale {want_scale}");
            }
        }
    }

    #[test]
    fn the_extremes_do_not_overflow() {
        let a = vec![-128i8; 256];
        let b = vec![-128i8; 256];
        let mut got = Vec::new();
        Kernel::detect().dots_all(&a, &b, &mut got);
        assert_eq!(got, vec![256 * 128 * 128]);
    }
}
