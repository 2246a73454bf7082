//! matmul: the matrix product the encoder runs, `C = A · B (+ C)`, on the `gemm` crate's
//! kernels, with every shape and stride checked here so that the call below it cannot read or
//! write outside the slices it is given.
//!
//! Calling `gemm::gemm` is `unsafe` because it takes raw pointers and strides. The checks in
//! [`Mat::last`] bound the last element each matrix is read or written at, which is the only
//! condition the kernels need.

use gemm::Parallelism;

/// A view of `rows × cols` numbers inside a slice: element `(i, j)` is at `i · row_stride + j ·
/// col_stride`. A row-major matrix has a column stride of 1; its transpose swaps the two.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mat<'a> {
    data: &'a [f32],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a> Mat<'a> {
    /// Row-major `rows × cols` inside `data`, rows `stride` apart (a block of columns of a wider
    /// matrix has a stride larger than its width).
    pub(crate) fn rows(data: &'a [f32], rows: usize, cols: usize, stride: usize) -> Mat<'a> {
        Mat { data, rows, cols, row_stride: stride, col_stride: 1 }
    }

    /// The transpose, reading the same numbers.
    pub(crate) fn t(self) -> Mat<'a> {
        Mat {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// The index of the last element of a `rows × cols` matrix at these strides, or `None` for
    /// an empty one; panics when it does not fit `len` numbers.
    fn last(rows: usize, cols: usize, row_stride: usize, col_stride: usize, len: usize) -> Option<usize> {
        if rows == 0 || cols == 0 {
            return None;
        }
        let last = (rows - 1) * row_stride + (cols - 1) * col_stride;
        assert!(
            last < len,
            "a {rows}×{cols} matrix with strides {row_stride}, {col_stride} does not fit {len} numbers"
        );
        Some(last)
    }
}

/// Products smaller than this many multiply-adds run on the calling thread: below it, handing
/// blocks to other threads costs more than it saves.
const PARALLEL_FROM: usize = 1 << 21;

/// `out[i][j] = Σ_k a[i][k] · b[k][j]`, added to what `out` holds when `accumulate`. `out` is
/// row-major `a.rows × b.cols`, rows `out_stride` apart.
pub(crate) fn product(out: &mut [f32], out_stride: usize, a: Mat<'_>, b: Mat<'_>, accumulate: bool) {
    assert_eq!(a.cols, b.rows, "the inner dimensions differ");
    let (m, n, k) = (a.rows, b.cols, a.cols);
    assert!(n <= out_stride || m <= 1, "a row of {n} does not fit a stride of {out_stride}");
    if Mat::last(m, n, out_stride, 1, out.len()).is_none() {
        return;
    }
    if k == 0 {
        if !accumulate {
            for row in out.chunks_mut(out_stride).take(m) {
                row[..n].fill(0.0);
            }
        }
        return;
    }
    Mat::last(a.rows, a.cols, a.row_stride, a.col_stride, a.data.len());
    Mat::last(b.rows, b.cols, b.row_stride, b.col_stride, b.data.len());
    let stride = |s: usize| isize::try_from(s).expect("a stride fits an isize");
    let parallelism = if m * n * k >= PARALLEL_FROM {
        Parallelism::Rayon(rayon::current_num_threads())
    } else {
        Parallelism::None
    };
    #[allow(unsafe_code)]
    // SAFETY: `Mat::last` checked that the last element of each matrix, at its shape and
    // strides, lies inside its slice, and all strides are non-negative, so every element the
    // kernel reads (`a`, `b`) or writes (`out`, which no other reference aliases: it is a
    // `&mut`) is inside its slice.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            1,
            stride(out_stride),
            accumulate,
            a.data.as_ptr(),
            stride(a.col_stride),
            stride(a.row_stride),
            b.data.as_ptr(),
            stride(b.col_stride),
            stride(b.row_stride),
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_product_is_the_textbook_one_at_every_size_and_stride() {
        for (m, n, k) in [(1, 1, 1), (3, 5, 7), (17, 33, 64), (70, 40, 384), (300, 96, 128)] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7 % 13) as f32 - 6.0) / 8.0).collect();
            // b is stored n × k, so the product reads its transpose.
            let b: Vec<f32> = (0..n * k).map(|i| ((i * 5 % 11) as f32 - 5.0) / 4.0).collect();
            let want: Vec<f32> =
                (0..m * n).map(|x| (0..k).map(|i| a[x / n * k + i] * b[x % n * k + i]).sum()).collect();
            let close = |got: f32, want: f32| (got - want).abs() <= 1e-4 * want.abs().max(1.0);
            // Written into the middle columns of a wider matrix: the columns around stay.
            let stride = n + 3;
            let mut out = vec![9.0; m * stride];
            let (am, bt) = (Mat::rows(&a, m, k, k), Mat::rows(&b, n, k, k).t());
            product(&mut out, stride, am, bt, false);
            for i in 0..m {
                for j in 0..n {
                    assert!(close(out[i * stride + j], want[i * n + j]), "{m}×{n}×{k} at {i},{j}");
                }
                assert_eq!(&out[i * stride + n..(i + 1) * stride], &[9.0; 3]);
            }
            // Accumulating adds the product once more.
            product(&mut out, stride, am, bt, true);
            assert!(close(out[0], 2.0 * want[0]));
            // The transpose stored row-major gives the same.
            let stored: Vec<f32> = (0..k * n).map(|x| b[x % n * k + x / n]).collect();
            let mut plain = vec![0.0; m * n];
            product(&mut plain, n, am, Mat::rows(&stored, k, n, n), false);
            assert!(plain.iter().zip(&want).all(|(&g, &w)| close(g, w)));
        }
    }

    #[test]
    #[should_panic(expected = "does not fit")]
    fn a_shape_larger_than_its_slice_is_refused_before_any_read() {
        let a = [1.0; 6];
        let mut out = [0.0; 4];
        product(&mut out, 2, Mat::rows(&a, 2, 4, 4), Mat::rows(&a, 2, 4, 4).t(), false);
    }
}
