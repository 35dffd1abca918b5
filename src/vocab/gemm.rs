//! What sets a GPU GEMM point apart beyond dtype and shape: its operand
//! layout and, for FP8, how it accumulates. Stored in the row's `axes` as
//! canonical JSON (as [`crate::vocab::launch`] stores a kernel launch), read
//! back by the GPU benchmark to plan the GEMM and by labels and tables to
//! name it. Which library algorithm ran is a result, not a setting: it is in
//! the point's note (`algo …`).

use serde_json::Value;

use crate::vocab::kinds::{Dtype, Fp8Accum, GemmLayout};
use crate::vocab::metrics::{self, Params};
use crate::vocab::rows::Point;

/// The seed `002_*` Llama-70B training GEMM shapes (m, n, k) and what each
/// is in the model, as the seed's tables name them.
pub const LLAMA70B_ROLES: [([u64; 3], &str); 7] = [
    ([8192, 8192, 8192], "standard square (8K)"),
    ([16384, 8192, 7168], "FFN GEMM 1"),
    ([16384, 16384, 16384], "large square (16K)"),
    ([16384, 1024, 8192], "attention output"),
    ([16384, 3584, 8192], "FFN GEMM 2"),
    ([4096, 4096, 4096], "standard square (4K)"),
    ([16384, 8192, 1280], "fused QKV projection"),
];

/// A dtype's place in tables and charts: wider precision first, then any
/// other dtype.
/// A GEMM's shape as every table, chart and label writes it: `8192×8192×8192`
/// (M × N × K). The one place it is spelled.
pub fn shape(m: u64, n: u64, k: u64) -> String {
    format!("{m}×{n}×{k}")
}

pub fn dtype_rank(d: &str) -> usize {
    const ORDER: [&str; 6] = ["f64", "f32", "tf32", "f16", "bf16", "fp8"];
    ORDER.iter().position(|o| *o == d).unwrap_or(ORDER.len())
}

/// What a GEMM shape is: its Llama-70B role, else `square (NK)` for a
/// square, else nothing.
pub fn shape_role(m: u64, n: u64, k: u64) -> Option<String> {
    if let Some((_, role)) = LLAMA70B_ROLES.iter().find(|(s, _)| *s == [m, n, k]) {
        return Some(role.to_string());
    }
    (m == n && n == k).then(|| {
        if m >= 1024 && m.is_multiple_of(1024) {
            format!("square ({}K)", m / 1024)
        } else {
            format!("square ({m})")
        }
    })
}

/// The layout and accumulation of one GPU GEMM point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmSetting {
    pub layout: GemmLayout,
    /// FP8 only.
    pub accum: Option<Fp8Accum>,
}

impl GemmSetting {
    /// The setting a point of `dtype` gets from the requested layout and
    /// accumulation: FP8 runs `tn` whatever was asked (the only layout
    /// Hopper's FP8 tensor cores take), and only FP8 has an accumulation.
    pub fn for_dtype(dtype: Dtype, layout: GemmLayout, accum: Fp8Accum) -> GemmSetting {
        if dtype == Dtype::Fp8 {
            GemmSetting { layout: GemmLayout::Tn, accum: Some(accum) }
        } else {
            GemmSetting { layout, accum: None }
        }
    }

    /// The canonical JSON of the row's `axes`.
    pub fn axes(&self) -> String {
        let mut p = Params::new();
        p.insert("layout".into(), Value::from(self.layout.name()));
        if let Some(a) = self.accum {
            p.insert("accum".into(), Value::from(a.name()));
        }
        metrics::params_text(&p).expect("at least the layout")
    }

    /// The setting a point's `axes` record. Points written before layouts
    /// were recorded (no `layout`) ran `tn` (C = Aᵀ·B) with promoted FP8
    /// accumulation.
    pub fn of(point: &Point) -> GemmSetting {
        Self::recorded(point).unwrap_or(GemmSetting {
            layout: GemmLayout::Tn,
            accum: (point.dtype.as_deref() == Some(Dtype::Fp8.name())).then_some(Fp8Accum::Promoted),
        })
    }

    /// The setting a point's `axes` record, if they record a layout (GPU
    /// GEMM rows since v6, and imports whose file names one): what labels
    /// and tables show, where older rows show nothing.
    pub fn recorded(point: &Point) -> Option<GemmSetting> {
        let v = metrics::parse_params(point.axes.as_deref());
        let text = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
        let layout = GemmLayout::parse(&text("layout")?).ok()?;
        let fp8 = point.dtype.as_deref() == Some(Dtype::Fp8.name());
        let accum = text("accum").and_then(|t| Fp8Accum::parse(&t).ok()).or(fp8.then_some(Fp8Accum::Promoted));
        Some(GemmSetting { layout, accum })
    }

    /// `nn`, `tn fast accum`: what a label adds after dtype and shape.
    pub fn label(&self) -> String {
        match self.accum {
            Some(Fp8Accum::Fast) => format!("{} fast-accum", self.layout.name()),
            _ => self.layout.name().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_fp8_is_tn() {
        let s = GemmSetting::for_dtype(Dtype::Bf16, GemmLayout::Nn, Fp8Accum::Fast);
        assert_eq!(s, GemmSetting { layout: GemmLayout::Nn, accum: None });
        assert_eq!(s.axes(), r#"{"layout":"nn"}"#);
        let p = Point { dtype: Some("bf16".into()), axes: Some(s.axes()), ..Point::default() };
        assert_eq!(GemmSetting::of(&p), s);
        let f = GemmSetting::for_dtype(Dtype::Fp8, GemmLayout::Nn, Fp8Accum::Fast);
        assert_eq!(f.layout, GemmLayout::Tn);
        let p = Point { dtype: Some("fp8".into()), axes: Some(f.axes()), ..Point::default() };
        assert_eq!(GemmSetting::of(&p), f);
        assert_eq!(f.label(), "tn fast-accum");
        // Rows from before layouts were recorded ran TN, promoted.
        let old = Point { dtype: Some("fp8".into()), ..Point::default() };
        assert_eq!(GemmSetting::of(&old), GemmSetting { layout: GemmLayout::Tn, accum: Some(Fp8Accum::Promoted) });
        assert_eq!(GemmSetting::recorded(&old), None);
    }
}
