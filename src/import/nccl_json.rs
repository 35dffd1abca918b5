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

use super::{record, Format, ParseError, Parsed};
use crate::vocab::accounting::bus_factor;
use crate::vocab::benches::{Bench, Family};
use crate::vocab::rows::{Point, Status};

pub struct NcclTestsJson3;

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

    fn sniff(&self, text: &str) -> bool {
        let t = text.trim_start();
        // A run that failed before measuring still writes `nccl_version`
        // and `config`: it is refused by name, not taken for another tool.
        t.starts_with('{') && t.contains("\"nccl_version\"") && t.contains("\"config\"")
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        let doc: Value =
            serde_json::from_str(text).map_err(|e| ParseError::new(e.line().max(1), format!("not valid JSON: {e}")))?;
        let mut out = Parsed { tool: self.name().into(), backend: "nccl".into(), ..Parsed::default() };
        if let Some(v) = doc.get("nccl_version").and_then(Value::as_u64) {
            out.tool_version = Some(format!("NCCL {}.{}.{}", v / 10000, (v / 100) % 100, v % 100));
        }
        let args: Vec<&str> = doc
            .get("args")
            .and_then(Value::as_array)
            .map_or(Vec::new(), |a| a.iter().filter_map(Value::as_str).collect());
        out.command = (!args.is_empty()).then(|| args.join(" "));
        let binary = args.first().and_then(|a| a.rsplit('/').next()).and_then(|b| b.strip_suffix("_perf"));
        let config = doc.get("config").cloned().unwrap_or(Value::Null);
        let count = |k: &str| config.get(k).and_then(number).map(|v| v as u32);
        let processes = config
            .get("devices")
            .and_then(Value::as_array)
            .map(|d| {
                let pids: std::collections::BTreeSet<String> = d
                    .iter()
                    .map(|e| {
                        format!(
                            "{}:{}",
                            e.get("hostname").unwrap_or(&Value::Null),
                            e.get("pid").unwrap_or(&Value::Null)
                        )
                    })
                    .collect();
                pids.len().max(1) as u32
            })
            .unwrap_or(1);
        let ranks = count("nthreads").zip(count("ngpus")).map(|(t, g)| t * g * processes);
        let results = doc.get("results").and_then(Value::as_array).filter(|r| !r.is_empty()).ok_or_else(|| {
            ParseError::new(1, "nccl-tests JSON with no `results`: the run wrote none (it failed before measuring)")
        })?;
        let device: Option<String> =
            config.get("devices").and_then(Value::as_array).and_then(|d| d.first()).and_then(|d| {
                let name = d.get("device_info").or_else(|| d.get("device")).and_then(Value::as_str)?.trim();
                (!name.is_empty()).then(|| name.to_string())
            });
        for (i, r) in results.iter().enumerate() {
            let size = r
                .get("size")
                .and_then(Value::as_u64)
                .ok_or_else(|| ParseError::new(1, format!("results[{i}]: no integer `size`")))?;
            let op = binary
                .map(str::to_string)
                .or_else(|| {
                    r.get("experiment_name").and_then(Value::as_str).filter(|s| !s.is_empty()).map(String::from)
                })
                .unwrap_or_else(|| "unknown_collective".into());
            for (key, variant) in [("out_of_place", "out-of-place"), ("in_place", "in-place")] {
                let Some(cell) = r.get(key) else { continue };
                let Some(time_us) = cell.get("time").or_else(|| cell.get("cpu_time")).and_then(number) else {
                    continue;
                };
                let (alg, bus) = (cell.get("alg_bw").and_then(number), cell.get("bus_bw").and_then(number));
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
                let wrong = cell.get("nwrong").and_then(number).unwrap_or(0.0);
                let mut rec = record(
                    Point {
                        bench: Bench::Collective.name().into(),
                        op: op.clone(),
                        variant: Some(variant.into()),
                        dtype: r.get("type").and_then(Value::as_str).map(super::dtype),
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
