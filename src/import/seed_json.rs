//! The seed write-ups' own JSON (ScalarLM's PyTorch memcpy scripts): a
//! mapping from size to `{bytes, time, iterations, "GB/s", ...}` where `time`
//! is seconds per copy and `bytes` the size copied, counted once (their
//! GB/s = bytes / time / 10^9). A copy reads and writes, so `bytes_moved` =
//! 2 × bytes. An optional top-level `"benchmark"` / `"bench"` string names it.
//!
//! `scripts/torch_reference.py` writes the same shape, and for GEMMs entries
//! with `m`, `n`, `k`, `dtype` and `time` (seconds per `torch.matmul`),
//! which become `gemm` rows with FLOPs = 2·m·n·k.

use super::{record, Claim, ClaimIf, Format, ParseError, Parsed};
use crate::vocab::benches::Bench;
use crate::vocab::benches::Family;
use crate::vocab::rows::Point;

pub struct SeedJson;

impl Format for SeedJson {
    fn name(&self) -> &'static str {
        "seed-json"
    }

    fn describe(&self) -> &'static str {
        "the seed scripts' JSON: {size: {bytes, time, iterations, GB/s}}, bytes counted once"
    }

    fn family(&self) -> Option<Family> {
        None
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        (text.trim_start().starts_with('{') && (text.contains("\"bytes\"") || text.contains("\"m\""))).claim(
            text,
            "a JSON object of sizes with `time` (the seed scripts')",
            |l| l.contains("\"time\""),
        )
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| ParseError::new(e.line(), format!("expected a JSON object of sizes: {e}")))?;
        let obj = v.as_object().ok_or_else(|| ParseError::new(1, "expected a JSON object mapping sizes to results"))?;
        let peer = file_name.contains("peer");
        let mut out = Parsed { tool: self.name().into(), backend: "torch".into(), ..Parsed::default() };
        // `torch_reference.py` names the GPU it ran on (`torch.cuda.get_device_name`).
        let device = obj.get("device").and_then(|d| d.as_str()).map(str::trim).filter(|d| !d.is_empty());
        // Line numbers: where each key first appears in the text.
        let line_of =
            |key: &str| text.find(&format!("\"{key}\"")).map(|p| text[..p].lines().count().max(1)).unwrap_or(1);
        for (key, entry) in obj {
            let Some(e) = entry.as_object() else { continue };
            let line = line_of(key);
            let get = |k: &str| e.get(k).and_then(|x| x.as_f64());
            if let (Some(m), Some(n), Some(k), Some(time)) = (get("m"), get("n"), get("k"), get("time")) {
                if time <= 0.0 || m < 1.0 || n < 1.0 || k < 1.0 {
                    out.warnings.push(format!("line {line}: entry `{key}` has time {time} or an empty shape; skipped"));
                    continue;
                }
                let dtype = e.get("dtype").and_then(|d| d.as_str()).unwrap_or("unknown").to_string();
                let library = e.get("library").and_then(|l| l.as_str());
                // `torch.matmul` keeps the variant older files were read with;
                // `F.linear` and `torch._scaled_mm` are variants of their own.
                let variant = match library {
                    None | Some("torch.matmul") => "torch matmul".to_string(),
                    Some(l) => l.to_string(),
                };
                // The operand layout and FP8 accumulation, where the file
                // says them (`nn`, `tn`; `promoted`, `fast`).
                let text = |k: &str| e.get(k).and_then(|v| v.as_str());
                let accum = text("accum").and_then(|a| crate::vocab::kinds::Fp8Accum::parse(a).ok());
                let axes = text("layout")
                    .and_then(|l| crate::vocab::kinds::GemmLayout::parse(l).ok())
                    .map(|layout| crate::vocab::gemm::GemmSetting { layout, accum }.axes());
                let mut r = record(
                    Point {
                        bench: Bench::Gemm.name().into(),
                        op: Bench::Gemm.name().into(),
                        variant: Some(variant),
                        dtype: Some(dtype),
                        axes,
                        m: Some(m as u64),
                        n: Some(n as u64),
                        k: Some(k as u64),
                        flops: Some(2.0 * m * n * k),
                        method: library.map(String::from),
                        ..Point::default()
                    },
                    time,
                    line,
                    format!(
                        "torch_reference.py `time` (s per {}, CUDA events over `iterations`); FLOPs = 2·m·n·k",
                        library.unwrap_or("torch.matmul")
                    ),
                );
                r.iterations = get("iterations").map(|i| i as u64);
                r.device = device.map(String::from);
                out.records.push(r);
                continue;
            }
            let (Some(bytes), Some(time)) = (get("bytes"), get("time")) else {
                return Err(ParseError::new(line, format!("entry `{key}`: expected numeric `bytes` and `time`")));
            };
            if time <= 0.0 {
                out.warnings.push(format!("line {line}: entry `{key}` has time {time}; skipped"));
                continue;
            }
            if let Some(g) = get("GB/s") {
                let ours = bytes / time / 1e9;
                if (ours - g).abs() > 0.01 * g.abs() + 1e-9 {
                    out.warnings.push(format!("line {line}: entry `{key}`: GB/s {g} but bytes / time = {ours:.4}"));
                }
            }
            let bytes = bytes as u64;
            let mut r = record(
                Point {
                    bench: if peer { Bench::MemcpyPeer } else { Bench::Memcpy }.name().into(),
                    op: "copy".into(),
                    variant: Some("torch copy_".into()),
                    dtype: Some("f32".into()),
                    size_bytes: Some(bytes),
                    bytes_copied: Some(bytes),
                    bytes_moved: bytes.checked_mul(2),
                    ..Point::default()
                },
                time,
                line,
                "seed JSON `time` (s per copy, averaged over `iterations`); its GB/s counts bytes once",
            );
            r.iterations = get("iterations").map(|i| i as u64);
            r.device = device.map(String::from);
            out.records.push(r);
        }
        out.records.sort_by_key(|r| r.params.size_bytes);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_entries_keep_their_library_layout_and_accumulation() {
        let text = r#"{"4096x4096x4096-fp8-scaled_mm-fast": {"m": 4096, "n": 4096, "k": 4096, "dtype": "fp8",
            "time": 1e-4, "iterations": 100, "library": "torch._scaled_mm+fast_accum", "layout": "tn",
            "accum": "fast"},
            "4096x4096x4096-bf16": {"m": 4096, "n": 4096, "k": 4096, "dtype": "bf16", "time": 2e-4,
            "iterations": 100, "library": "torch.matmul", "layout": "nn"},
            "1024x1024x1024-bf16": {"m": 1024, "n": 1024, "k": 1024, "dtype": "bf16", "time": 1e-5}}"#;
        let parsed = SeedJson.parse(text, "torch_gemm.json").unwrap();
        let by_dtype = |d: &str, m: u64| {
            parsed.records.iter().find(|r| r.params.dtype.as_deref() == Some(d) && r.params.m == Some(m)).unwrap()
        };
        let fp8 = &by_dtype("fp8", 4096).params;
        assert_eq!(fp8.variant.as_deref(), Some("torch._scaled_mm+fast_accum"));
        assert_eq!(fp8.axes.as_deref(), Some(r#"{"accum":"fast","layout":"tn"}"#));
        let bf16 = &by_dtype("bf16", 4096).params;
        assert_eq!((bf16.variant.as_deref(), bf16.axes.as_deref()), (Some("torch matmul"), Some(r#"{"layout":"nn"}"#)));
        // Older files name no layout: no axes, as before.
        assert_eq!(by_dtype("bf16", 1024).params.axes, None);
        // No `device` key: no device (the import's --device may give one).
        assert!(parsed.records.iter().all(|r| r.device.is_none()));
    }

    #[test]
    fn the_device_the_reference_script_names_is_read() {
        // The PyTorch pass archived with the H200 GEMM write-up (its source file as stored).
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/data/runs/20261126T152545Z-gpu-acceptance-torch-e1a1/source-2-torch_gemm.json"
        );
        let parsed = SeedJson.parse(&std::fs::read_to_string(path).unwrap(), "torch_gemm.json").unwrap();
        assert!(!parsed.records.is_empty());
        assert!(parsed.records.iter().all(|r| r.device.as_deref() == Some("NVIDIA H200")));
    }
}
