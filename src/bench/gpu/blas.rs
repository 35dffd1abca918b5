//! The one mapping from a GPU GEMM point to the column-major BLAS call that
//! computes it, shared by cuBLASLt, hipBLAS and the emulated device, and the
//! one way its inputs are laid out and read back.
//!
//! Every GPU GEMM computes the row-major C = A·B (A m×k, B k×n, C m×n), as a
//! framework on row-major tensors does. A column-major library computes it as
//! Cᵀ (n×m) = op(X)·op(Y) with X the buffer holding B and Y the buffer holding
//! A; the layout ([`GemmLayout`]) names the two ops:
//!
//! | layout | A buffer | B buffer | call | who runs it |
//! |---|---|---|---|---|
//! | `nn` | m×k row-major | k×n row-major | N, N | `torch.matmul` |
//! | `tn` | m×k row-major | n×k row-major (Bᵀ) | T, N | `F.linear`, `torch._scaled_mm`, every FP8 GEMM |
//! | `nt` | k×m row-major (Aᵀ) | k×n row-major | N, T | |
//!
//! C is always m×n row-major (n×m column-major, leading dimension n).

use crate::bench::dtype::{self, Dtype};
use crate::vocab::kinds::GemmLayout;

/// The column-major call: C' (rows × cols, leading dimension `ldc`) =
/// op(X)·op(Y), X rows × depth after its op, Y depth × cols after its op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlasCall {
    pub trans_x: bool,
    pub trans_y: bool,
    /// Rows of C' (n of the row-major product).
    pub rows: u64,
    /// Columns of C' (m).
    pub cols: u64,
    pub depth: u64,
    /// X as stored: rows, columns, leading dimension (column-major).
    pub x: (u64, u64, u64),
    /// Y as stored.
    pub y: (u64, u64, u64),
    pub ldc: u64,
}

impl BlasCall {
    /// The call that computes the row-major m×n product in `layout`.
    pub fn of(layout: GemmLayout, m: u64, n: u64, k: u64) -> BlasCall {
        let (trans_x, trans_y) = match layout {
            GemmLayout::Nn => (false, false),
            GemmLayout::Tn => (true, false),
            GemmLayout::Nt => (false, true),
        };
        // X is n×k after its op; stored k×n when transposed.
        let x = if trans_x { (k, n, k) } else { (n, k, n) };
        // Y is k×m after its op; stored m×k when transposed.
        let y = if trans_y { (m, k, m) } else { (k, m, k) };
        BlasCall { trans_x, trans_y, rows: n, cols: m, depth: k, x, y, ldc: n }
    }
}

/// Where logical A(i, l) sits in the A buffer (elements).
pub fn a_index(layout: GemmLayout, m: u64, k: u64, i: u64, l: u64) -> u64 {
    match layout {
        GemmLayout::Nt => l * m + i,
        GemmLayout::Nn | GemmLayout::Tn => i * k + l,
    }
}

/// Where logical B(l, j) sits in the B buffer (elements).
pub fn b_index(layout: GemmLayout, n: u64, k: u64, l: u64, j: u64) -> u64 {
    match layout {
        GemmLayout::Tn => j * k + l,
        GemmLayout::Nn | GemmLayout::Nt => l * n + j,
    }
}

/// Where C(i, j) sits in the C buffer.
pub fn c_index(n: u64, i: u64, j: u64) -> u64 {
    i * n + j
}

/// Distinct random-normal values in a pool: a matrix element takes the
/// pool's value at its logical row-major index modulo the pool's length (a
/// prime, so rows and columns of power-of-two sizes never line up). Drawing
/// 2²⁰ normals once per point instead of m·k + k·n keeps input generation
/// of a 16384³ GEMM under a second (it took most of a budget before).
pub const POOL: usize = 1_048_573;

/// A pool of N(0, 1) values rounded to a dtype: the device bytes of each
/// value and the value the device sees.
pub struct Pool {
    pub dtype: Dtype,
    pub bytes: Vec<u8>,
    pub values: Vec<f32>,
}

impl Pool {
    pub fn new(dtype: Dtype, seed: u64) -> Pool {
        let (bytes, values) = dtype::encode(dtype, &dtype::normal_values(POOL as u64, seed));
        Pool { dtype, bytes, values }
    }

    /// The value of the element at logical row-major index `logical`.
    pub fn value(&self, logical: u64) -> f32 {
        self.values[(logical % POOL as u64) as usize]
    }

    /// The device bytes of a `rows × cols` logical matrix (row-major
    /// logical index `r * cols + c`) stored at `index(r, c)`.
    pub fn fill(&self, rows: u64, cols: u64, index: impl Fn(u64, u64) -> u64) -> Vec<u8> {
        let e = self.dtype.bytes() as usize;
        let mut out = vec![0u8; (rows * cols) as usize * e];
        let contiguous = rows < 2 || index(1, 0) == cols && index(0, 1) == 1;
        if contiguous {
            // Logical order is storage order: copy runs of the pool.
            let mut at = 0usize;
            let mut logical = 0u64;
            let total = rows * cols;
            while logical < total {
                let p = (logical % POOL as u64) as usize;
                let run = (POOL - p).min((total - logical) as usize);
                out[at..at + run * e].copy_from_slice(&self.bytes[p * e..(p + run) * e]);
                at += run * e;
                logical += run as u64;
            }
        } else {
            for r in 0..rows {
                for c in 0..cols {
                    let p = ((r * cols + c) % POOL as u64) as usize;
                    let s = index(r, c) as usize;
                    out[s * e..(s + 1) * e].copy_from_slice(&self.bytes[p * e..(p + 1) * e]);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column-major call, evaluated naively on f64 values.
    fn run(call: &BlasCall, x: &[f64], y: &[f64]) -> Vec<f64> {
        let xv =
            |r: u64, d: u64| if call.trans_x { x[(r * call.x.2 + d) as usize] } else { x[(d * call.x.2 + r) as usize] };
        let yv =
            |d: u64, c: u64| if call.trans_y { y[(d * call.y.2 + c) as usize] } else { y[(c * call.y.2 + d) as usize] };
        let mut out = vec![0.0; (call.rows * call.cols) as usize];
        for r in 0..call.rows {
            for c in 0..call.cols {
                out[(c * call.ldc + r) as usize] = (0..call.depth).map(|d| xv(r, d) * yv(d, c)).sum();
            }
        }
        out
    }

    #[test]
    fn every_layout_computes_the_row_major_product() {
        let (m, n, k) = (3u64, 5u64, 4u64);
        let a = |i: u64, l: u64| (i * 10 + l) as f64;
        let b = |l: u64, j: u64| (l as f64) - 2.0 * j as f64;
        for layout in GemmLayout::ALL.iter().copied() {
            let mut ab = vec![0.0; (m * k) as usize];
            let mut bb = vec![0.0; (k * n) as usize];
            for i in 0..m {
                for l in 0..k {
                    ab[a_index(layout, m, k, i, l) as usize] = a(i, l);
                }
            }
            for l in 0..k {
                for j in 0..n {
                    bb[b_index(layout, n, k, l, j) as usize] = b(l, j);
                }
            }
            let call = BlasCall::of(layout, m, n, k);
            assert_eq!(call.x.0 * call.x.1, k * n);
            let c = run(&call, &bb, &ab);
            for i in 0..m {
                for j in 0..n {
                    let want: f64 = (0..k).map(|l| a(i, l) * b(l, j)).sum();
                    assert_eq!(c[c_index(n, i, j) as usize], want, "{layout} C[{i},{j}]");
                }
            }
        }
    }

    #[test]
    fn pool_fills_match_their_values_in_any_layout() {
        let pool = Pool::new(Dtype::Bf16, 3);
        let (rows, cols) = (7u64, 5u64);
        let direct = pool.fill(rows, cols, |r, c| r * cols + c);
        let transposed = pool.fill(rows, cols, |r, c| c * rows + r);
        for r in 0..rows {
            for c in 0..cols {
                let v = pool.value(r * cols + c) as f64;
                assert_eq!(dtype::decode(Dtype::Bf16, &direct, (r * cols + c) as usize), v);
                assert_eq!(dtype::decode(Dtype::Bf16, &transposed, (c * rows + r) as usize), v);
            }
        }
        // Wrapping past the pool's end keeps the same values.
        assert_eq!(pool.value(POOL as u64 + 2), pool.value(2));
    }
}
