//! nccl-tests' `-J FILE` JSON (JSON_FILE_VERSION 3): one object with
//! `args`, `nccl_version`, `config` (threads, GPUs, devices) and `results`,
//! each result a size with its `out_of_place` and `in_place` time (µs),
//! `alg_bw` and `bus_bw` (GB/s), as the text table prints them.
//!
//! Rows are the text importer's: `collective` rows, op from the binary in
//! `args[0]` (`…/all_reduce_perf` → `all_reduce`; `experiment_name` when the
//! binary is not named), variant `out-of-place` / `in-place`, ranks =
//! threads × GPUs per thread × processes (distinct `pid`s in `devices`,
//! which may list one entry per process), and the bus factor checked
//! against the file's own `bus_bw / alg_bw`. A run that wrote no results
//! (it failed before measuring) is refused by name.

use serde_json::Value;

use super::{record, Claim, ClaimIf, Format, ParseError, Parsed};
use crate::vocab::accounting::bus_factor;
use crate::vocab::benches::{Bench, Family};
use crate::vocab::rows::{Point, Status};

pub struct NcclTestsJson3;

/// The fields read; everything else (per-iteration times, env) is skipped.
#[derive(serde::Deserialize)]
struct Doc {
    nccl_version: Option<u64>,
    #[serde(default)]
    args: Vec<Value>,
    #[serde(default)]
    config: Config,
    #[serde(default)]
    results: Vec<Res>,
}

#[derive(serde::Deserialize, Default)]
struct Config {
    nthreads: Option<Value>,
    ngpus: Option<Value>,
    #[serde(default)]
    devices: Vec<Dev>,
}

#[derive(serde::Deserialize)]
struct Dev {
    hostname: Option<Value>,
    pid: Option<Value>,
    device_info: Option<String>,
}

#[derive(serde::Deserialize)]
struct Res {
    size: Option<u64>,
    #[serde(rename = "type")]
    dtype: Option<String>,
    experiment_name: Option<String>,
    out_of_place: Option<Cell>,
    in_place: Option<Cell>,
}

#[derive(serde::Deserialize)]
struct Cell {
    time: Option<Value>,
    cpu_time: Option<Value>,
    alg_bw: Option<Value>,
    bus_bw: Option<Value>,
    nwrong: Option<Value>,
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|x: &f64| x.is_finite())
}

impl Format for NcclTestsJson3 {
    fn name(&self) -> &'static str {
        "nccl-tests-json"
    }

    fn describe(&self) -> &'static str {
        "nccl-tests -J JSON (version 3): per-size out-of-place and in-place time, algbw and busbw"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Network)
    }

    fn markers(&self) -> &'static [&'static str] {
        &["\"nccl_version\""]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        let t = text.trim_start();
        // A run that failed before measuring still writes `nccl_version`
        // and `config`: it is refused by name, not taken for another tool.
        (t.starts_with('{') && t.contains("\"config\"")).claim(
            text,
            "a JSON document with `nccl_version` and `config` (`-J`)",
            |l| l.contains("\"nccl_version\""),
        )
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        // Typed, so that the per-iteration arrays (`*_per_iter`) are
        // skipped while reading, never held.
        let doc: Doc = serde_json::from_str(text)
            .map_err(|e| ParseError::new(e.line().max(1), format!("not valid nccl-tests JSON: {e}")))?;
        let mut out = Parsed { tool: self.name().into(), backend: "nccl".into(), ..Parsed::default() };
        if let Some(v) = doc.nccl_version {
            out.tool_version = Some(format!("NCCL {}.{}.{}", v / 10000, (v / 100) % 100, v % 100));
        }
        let args: Vec<&str> = doc.args.iter().filter_map(Value::as_str).collect();
        out.command = (!args.is_empty()).then(|| args.join(" "));
        let binary = args.first().and_then(|a| a.rsplit('/').next()).and_then(|b| b.strip_suffix("_perf"));
        let count = |v: &Option<Value>| v.as_ref().and_then(number).map(|v| v as u32);
        let processes = {
            let pids: std::collections::BTreeSet<String> =
                doc.config.devices.iter().map(|e| format!("{:?}:{:?}", e.hostname, e.pid)).collect();
            pids.len().max(1) as u32
        };
        // Counts past u32 (a mangled file) give no rank count, never a panic.
        let ranks = count(&doc.config.nthreads)
            .zip(count(&doc.config.ngpus))
            .and_then(|(t, g)| t.checked_mul(g)?.checked_mul(processes));
        if doc.results.is_empty() {
            return Err(ParseError::new(
                1,
                "nccl-tests JSON with no `results`: the run wrote none (it failed before measuring)",
            ));
        }
        let results = &doc.results;
        let device: Option<String> = doc.config.devices.first().and_then(|d| {
            let name = d.device_info.as_deref()?.trim();
            (!name.is_empty()).then(|| name.to_string())
        });
        for (i, r) in results.iter().enumerate() {
            let size = r.size.ok_or_else(|| ParseError::new(1, format!("results[{i}]: no integer `size`")))?;
            let op = binary
                .map(str::to_string)
                .or_else(|| r.experiment_name.clone().filter(|s| !s.is_empty()))
                .unwrap_or_else(|| "unknown_collective".into());
            for (key, variant, cell) in
                [("out_of_place", "out-of-place", &r.out_of_place), ("in_place", "in-place", &r.in_place)]
            {
                let Some(cell) = cell else { continue };
                let Some(time_us) = cell.time.as_ref().or(cell.cpu_time.as_ref()).and_then(number) else {
                    continue;
                };
                let (alg, bus) = (cell.alg_bw.as_ref().and_then(number), cell.bus_bw.as_ref().and_then(number));
                let own = alg.zip(bus).filter(|(a, _)| *a > 0.0).map(|(a, b)| b / a);
                let factor = ranks.and_then(|n| bus_factor(&op, n));
                let factor = match (factor, own) {
                    (Some(f), Some(o)) if (f - o).abs() > 0.01 * f.max(o) => {
                        out.warnings.push(format!(
                            "results[{i}] {variant}: the bus factor of {op} over {} ranks is {f:.4}, but the file's bus_bw / alg_bw is {o:.4}; rows use the file's",
                            ranks.unwrap_or(0)
                        ));
                        Some(o)
                    }
                    (f, o) => f.or(o),
                };
                let wrong = cell.nwrong.as_ref().and_then(number).unwrap_or(0.0);
                let mut rec = record(
                    Point {
                        bench: Bench::Collective.name().into(),
                        op: op.clone(),
                        variant: Some(variant.into()),
                        dtype: r.dtype.as_deref().map(super::dtype),
                        size_bytes: Some(size),
                        ranks,
                        bytes_copied: Some(size),
                        bw_factor: factor,
                        ..Point::default()
                    },
                    time_us * 1e-6,
                    1,
                    format!(
                        "nccl-tests JSON results[{i}].{key}: time {time_us} us → s; algbw = size / time (file: {} GB/s, busbw {} GB/s)",
                        alg.map_or("-".into(), |a| a.to_string()),
                        bus.map_or("-".into(), |b| b.to_string())
                    ),
                );
                rec.device = device.clone();
                if wrong > 0.0 {
                    rec.status = Status::Failed;
                    rec.note = format!("{wrong} wrong elements reported by nccl-tests");
                }
                out.records.push(rec);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mangled rank count (threads × GPUs × processes past u32, as a
    /// mutated real log had) gives no rank count, not a panic.
    #[test]
    fn counts_past_u32_are_no_rank_count() {
        let real = include_str!(
            "../../tests/fixtures/import/real/nccl-tests-json/all_reduce_half_2xT4_kaggle_nccl2.29.3_json_v3_per_iter_I1_single_size_devices_list_one_entry.json"
        );
        let mangled = real.replace("\"nthreads\":1,\"ngpus\":2", "\"nthreads\":4000000000,\"ngpus\":2");
        assert_ne!(mangled, real);
        let p = NcclTestsJson3.parse(&mangled, "x.json").unwrap();
        assert!(p.records.iter().all(|r| r.params.ranks.is_none()), "{:?}", p.records[0].params.ranks);
        let p = NcclTestsJson3.parse(real, "x.json").unwrap();
        assert!(p.records.iter().all(|r| r.params.ranks == Some(2)));
    }
}
