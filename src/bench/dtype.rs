//! GEMM element types, shared by the CPU GEMM ([`super::gemm`]) and the GPU
//! GEMM ([`super::gpu`]): built on [`Dtype`] (parsed once per point), with
//! the element encodings (f16/bf16 through `half`, FP8 E4M3 by hand), the
//! unit roundoffs the result checks use, and the one seeded generator of
//! random-normal inputs (never zeros: some hardware is faster on zeros, and a
//! zero result validates nothing).

use rand::rngs::StdRng;
use rand_distr::{Distribution, StandardNormal};

pub use crate::vocab::kinds::Dtype;

/// Parse a point's dtype name once; the error is the vocabulary's message
/// (unknown dtype `x`; choose from: ...). Callers that keep an older
/// skip/fail wording map it themselves.
pub fn parse(name: &str) -> Result<Dtype, String> {
    Dtype::parse(name).map_err(|e| e.to_string())
}

/// Unit roundoff of a dtype's significand.
pub fn eps(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::F64 => f64::EPSILON,
        Dtype::F32 => f32::EPSILON as f64,
        Dtype::Tf32 | Dtype::F16 => 2f64.powi(-10),
        Dtype::Bf16 => 2f64.powi(-7),
        Dtype::Fp8 => 2f64.powi(-3),
    }
}

/// Relative tolerance (per √k, of Σ|a·b|) of a k-long dot product computed
/// on the host in `dtype`, against an f64 reference: the CPU GEMM's check
/// (1e-5 for f32, 1e-13 for f64; narrower types scale with their roundoff).
pub fn host_dot_tolerance(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::F64 => 1e-13,
        other => 1e-5 * (eps(other) / eps(Dtype::F32)).max(1.0),
    }
}

/// The one seeded generator of the crate (see [`crate::vocab::stats::seeded_rng`]).
pub use crate::vocab::stats::seeded_rng;

/// One N(0, 1) value.
pub fn normal(rng: &mut StdRng) -> f64 {
    Distribution::<f64>::sample(&StandardNormal, rng)
}

/// Deterministic N(0, 1) values from [`seeded_rng`].
pub fn normal_values(count: u64, seed: u64) -> Vec<f32> {
    let mut rng = seeded_rng(seed);
    let mut out = Vec::with_capacity(count as usize);
    for _ in 0..count {
        out.push(Distribution::<f32>::sample(&StandardNormal, &mut rng));
    }
    out
}

/// Host values → little-endian device bytes of `dtype`, and the values the
/// device sees (the inputs rounded to `dtype`; `tf32` is stored as f32).
pub fn encode(dtype: Dtype, v: &[f32]) -> (Vec<u8>, Vec<f32>) {
    match dtype {
        Dtype::F64 => (v.iter().flat_map(|&x| (x as f64).to_le_bytes()).collect(), v.to_vec()),
        Dtype::F32 | Dtype::Tf32 => (v.iter().flat_map(|x| x.to_le_bytes()).collect(), v.to_vec()),
        Dtype::F16 => {
            let h: Vec<half::f16> = v.iter().map(|&x| half::f16::from_f32(x)).collect();
            (h.iter().flat_map(|x| x.to_le_bytes()).collect(), h.iter().map(|x| x.to_f32()).collect())
        }
        Dtype::Bf16 => {
            let h: Vec<half::bf16> = v.iter().map(|&x| half::bf16::from_f32(x)).collect();
            (h.iter().flat_map(|x| x.to_le_bytes()).collect(), h.iter().map(|x| x.to_f32()).collect())
        }
        Dtype::Fp8 => {
            let q: Vec<u8> = v.iter().map(|&x| f32_to_e4m3(x)).collect();
            let vals = q.iter().map(|&b| e4m3_to_f32(b)).collect();
            (q, vals)
        }
    }
}

/// Element `i` of little-endian bytes of `dtype`.
pub fn decode(dtype: Dtype, bytes: &[u8], i: usize) -> f64 {
    match dtype {
        Dtype::F64 => f64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().expect("8 bytes")),
        Dtype::F32 | Dtype::Tf32 => f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes")) as f64,
        Dtype::F16 => half::f16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]).to_f64(),
        Dtype::Bf16 => half::bf16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]).to_f64(),
        Dtype::Fp8 => e4m3_to_f32(bytes[i]) as f64,
    }
}

/// f32 → FP8 E4M3 (OCP "fn" variant: no infinities, max 448), round to
/// nearest even, saturating.
pub fn f32_to_e4m3(x: f32) -> u8 {
    let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
    let a = x.abs();
    if a.is_nan() {
        return 0x7f;
    }
    if a >= 448.0 {
        return sign | 0x7e;
    }
    // Smallest subnormal is 2^-9; values are multiples of 2^(e-3).
    let e = if a < 2f32.powi(-6) { -6 } else { a.log2().floor() as i32 };
    let quantum = 2f32.powi(e - 3);
    let q = (a / quantum).round_ties_even() * quantum;
    // Rounding may carry into the next binade; re-derive the fields.
    if q == 0.0 {
        return sign;
    }
    let e2 = if q < 2f32.powi(-6) { -7 } else { q.log2().floor() as i32 };
    if e2 < -6 {
        let mant = (q / 2f32.powi(-9)) as u8;
        sign | mant
    } else {
        let mant = ((q / 2f32.powi(e2) - 1.0) * 8.0).round() as u8;
        sign | (((e2 + 7) as u8) << 3) | (mant & 7)
    }
}

/// FP8 E4M3 → f32.
pub fn e4m3_to_f32(b: u8) -> f32 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((b >> 3) & 0xf) as i32;
    let m = (b & 7) as f32;
    if e == 0xf && b & 7 == 7 {
        return f32::NAN;
    }
    sign * if e == 0 { m / 8.0 * 2f32.powi(-6) } else { (1.0 + m / 8.0) * 2f32.powi(e - 7) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e4m3_round_trips_its_own_values() {
        for b in 0u8..=255 {
            let v = e4m3_to_f32(b);
            if v.is_nan() {
                continue;
            }
            let back = f32_to_e4m3(v);
            assert_eq!(e4m3_to_f32(back), v, "byte {b:#04x} → {v} → {back:#04x}");
        }
        assert_eq!(e4m3_to_f32(f32_to_e4m3(1000.0)), 448.0);
        // 0.3 lies between 0.28125 and 0.3125 (quantum 2^-5 in [0.25, 0.5)).
        assert_eq!(e4m3_to_f32(f32_to_e4m3(0.3)), 0.3125);
        // Below the smallest subnormal step (2^-9) rounds to it or to zero.
        assert_eq!(e4m3_to_f32(f32_to_e4m3(-0.001)), -0.001953125);
    }

    #[test]
    fn normal_values_look_normal_and_repeat() {
        let v = normal_values(100_000, 3);
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / v.len() as f64;
        assert!(mean.abs() < 0.02 && (var - 1.0).abs() < 0.03, "mean {mean} var {var}");
        assert!(v.iter().all(|x| *x != 0.0));
        assert_eq!(normal_values(16, 3), &v[..16]);
        assert_ne!(normal_values(16, 4), &v[..16]);
        let mut rng = seeded_rng(42);
        let xs: Vec<f64> = (0..20000).map(|_| normal(&mut rng)).collect();
        let (m, s) = (crate::vocab::stats::mean(&xs), crate::vocab::stats::std_dev(&xs));
        assert!(m.abs() < 0.05 && (s - 1.0).abs() < 0.05, "mean {m} std {s}");
    }

    #[test]
    fn encodings_round_trip_through_decode() {
        let v = normal_values(64, 9);
        for &d in Dtype::ALL {
            let (bytes, seen) = encode(d, &v);
            assert_eq!(bytes.len() as u64, v.len() as u64 * d.bytes(), "{d}");
            for (i, &x) in seen.iter().enumerate() {
                assert_eq!(decode(d, &bytes, i), x as f64, "{d} element {i}");
            }
        }
        assert_eq!(parse("bf16"), Ok(Dtype::Bf16));
        assert!(parse("fp4").unwrap_err().contains("choose from"));
        assert_eq!(host_dot_tolerance(Dtype::F32), 1e-5);
    }
}
