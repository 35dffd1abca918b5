//! torchtitan training logs: one line per logged step,
//! `step: 10  loss: 7.1  grad_norm: 1.2  memory: 41.2GiB(43.3%)  tps: 6,344
//! tflops: 367.4  mfu: 37.1%`, behind whatever a launcher or logger puts
//! before it (`[rank0]:[titan] <time> - root - INFO - `, ezpz's
//! `[time][I][metrics:437:log] `, `srun -l` labels, ANSI colours). Each step
//! gives, at parameter `step` = N:
//!
//! - `loss` and `grad_norm` (dimensionless), lower is better;
//! - `memory_gib` (GiB, the peak reserved memory torchtitan prints) and
//!   `memory_pct` (% of the device's), lower is better;
//! - `tokens_per_s_per_gpu` (torchtitan's `tps`, tokens per second per
//!   device; older logs print `wps`), higher is better;
//! - `tflops_per_gpu` (TFLOP/s per device) and `mfu_pct` (%), higher is better.
//!
//! Thousands separators (`6,344`) are read. A step several ranks printed
//! is one point: the first line is kept, and duplicates that disagree are
//! named in a warning. `model` (from `Model <name> size: ...`) and
//! `parallelism` (the mesh's dimensions above 1) are parameters where the
//! log prints them.

use super::{metric_record, strip_ansi, Claim, Format, MetricValue, ParseError, Parsed, Record};
use crate::vocab::benches::Family;
use crate::vocab::metrics::{Better, Params};

const TOOL: &str = "torchtitan";

pub struct Torchtitan;

/// A number as torchtitan prints it: `6,344`, `37.15%`, `3.18GiB`.
fn number(tok: &str) -> Option<f64> {
    let t = tok.trim().trim_end_matches('%').trim_end_matches("GiB").replace(',', "");
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The `name: value` fields after `step:` on a line, or `None` when the
/// line is not a step line.
fn fields(line: &str) -> Option<(u64, Vec<(&str, &str)>)> {
    let at = line.find("step:")?;
    // `step:` must start a field, not end one (`global_step:`).
    if at > 0 && !line[..at].ends_with([' ', '-', ']', '\t']) {
        return None;
    }
    let toks: Vec<&str> = line[at..].split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < toks.len() {
        match toks[i].strip_suffix(':') {
            Some(key) => {
                out.push((key, toks[i + 1]));
                i += 2;
            }
            None => i += 1,
        }
    }
    let step = out.first().filter(|(k, _)| *k == "step").and_then(|(_, v)| v.parse().ok())?;
    out.iter().any(|(k, _)| *k == "loss").then_some((step, out))
}

/// `Building device mesh with parallelism: pp=1, dp_shard=8, tp=1` →
/// `dp_shard=8`; `Building 1-D device mesh with ['dp_shard'], [24]` →
/// `dp_shard=24`.
fn parallelism(line: &str) -> Option<String> {
    if let Some((_, dims)) = line.split_once("mesh with parallelism:") {
        let above_one: Vec<&str> = dims.split(',').map(str::trim).filter(|d| !d.ends_with("=1")).collect();
        return Some(if above_one.is_empty() { "none".into() } else { above_one.join(", ") });
    }
    let (_, rest) = line.split_once("device mesh with [")?;
    let (names, sizes) = rest.split_once("], [")?;
    let sizes = sizes.trim_end().trim_end_matches(']');
    let pairs: Vec<String> = names
        .split(',')
        .zip(sizes.split(','))
        .map(|(n, s)| format!("{}={}", n.trim().trim_matches('\''), s.trim()))
        .collect();
    (!pairs.is_empty()).then(|| pairs.join(", "))
}

impl Format for Torchtitan {
    fn name(&self) -> &'static str {
        TOOL
    }

    fn describe(&self) -> &'static str {
        "torchtitan training log: loss, tokens/s/GPU, TFLOP/s, MFU and peak memory per step"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Gemm)
    }

    fn markers(&self) -> &'static [&'static str] {
        &["torchtitan"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        Claim::find(text, "a step line with `step:`, `loss:` and `tps:`, `wps:` or `mfu:`", |l| {
            l.contains("step:")
                && l.contains("loss:")
                && (l.contains("tps:") || l.contains("wps:") || l.contains("mfu:"))
        })
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// A record per value as each step line is read.
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let clean = strip_ansi(text);
        let mut records = 0usize;
        let mut out = Parsed { tool: TOOL.into(), backend: "torchtitan".into(), ..Parsed::default() };
        let mut context = Params::new();
        // Each step's first line and a hash of what it printed, to compare
        // duplicates.
        let mut seen: std::collections::HashMap<u64, (usize, u64)> = std::collections::HashMap::new();
        let mut repeats = 0usize;
        for (n, line) in super::lines(&clean) {
            if let Some(rest) = line
                .split_once(" - INFO - Model ")
                .map(|(_, r)| r)
                .or_else(|| line.split_once("] Model ").map(|(_, r)| r).filter(|r| r.contains(" size: ")))
            {
                if let Some((model, _)) = rest.split_once(" size:") {
                    context.insert("model".into(), model.trim().into());
                }
                continue;
            }
            if let Some(p) = parallelism(line) {
                context.insert("parallelism".into(), p.into());
                continue;
            }
            if out.tool_version.is_none() {
                if let Some((_, v)) = line.split_once("torchtitan version: ") {
                    out.tool_version = Some(format!("torchtitan {}", v.trim()));
                }
            }
            let Some((step, fields)) = fields(line) else { continue };
            let printed = {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                fields.hash(&mut h);
                h.finish()
            };
            if let Some(&(first, before)) = seen.get(&step) {
                repeats += 1;
                if before != printed {
                    out.warnings.push(format!(
                        "line {n}: step {step} printed again with other values (first at line {first}); the first is kept"
                    ));
                }
                continue;
            }
            seen.insert(step, (n, printed));
            let mut params = context.clone();
            params.insert("step".into(), step.into());
            for (key, value) in fields.iter().skip(1) {
                for r in metrics_of(key, value, &params, n)? {
                    records += 1;
                    each(r);
                }
            }
        }
        if records == 0 {
            return Err(ParseError::new(1, "no torchtitan `step: N  loss: ...` lines"));
        }
        if repeats > 0 {
            out.warnings.push(format!("{repeats} step lines repeat a step already read (several ranks print it)"));
        }
        Ok(out)
    }
}

/// The records one `key: value` field gives.
fn metrics_of(key: &str, value: &str, params: &Params, n: usize) -> Result<Vec<Record>, ParseError> {
    let bad = || ParseError::new(n, format!("`{key}` is not a number: `{value}`"));
    let rec = |name: &'static str, v: f64, unit: &'static str, better, note: String| {
        metric_record(TOOL, MetricValue { name, value: v, unit, better }, params, n, note)
    };
    Ok(match key {
        "loss" => vec![rec("loss", number(value).ok_or_else(bad)?, "1", Better::Lower, "torchtitan's loss".into())],
        "grad_norm" => {
            vec![rec("grad_norm", number(value).ok_or_else(bad)?, "1", Better::Lower, "torchtitan's grad_norm".into())]
        }
        "memory" => {
            // `41.2GiB(43.3%)`
            let (gib, pct) = value.split_once('(').unwrap_or((value, ""));
            let mut v = vec![rec(
                "memory_gib",
                number(gib).ok_or_else(bad)?,
                "GiB",
                Better::Lower,
                "torchtitan's peak memory (GiB = 2^30 bytes)".into(),
            )];
            if let Some(p) = number(pct.trim_end_matches(')')) {
                v.push(rec("memory_pct", p, "%", Better::Lower, "torchtitan's peak memory, % of the device".into()));
            }
            v
        }
        "tps" | "wps" => vec![rec(
            "tokens_per_s_per_gpu",
            number(value).ok_or_else(bad)?,
            "tokens/s/GPU",
            Better::Higher,
            format!("torchtitan's `{key}`: tokens per second per device"),
        )],
        "tflops" => vec![rec(
            "tflops_per_gpu",
            number(value).ok_or_else(bad)?,
            "TFLOP/s/GPU",
            Better::Higher,
            "torchtitan's tflops: TFLOP/s per device".into(),
        )],
        "mfu" => vec![rec(
            "mfu_pct",
            number(value).ok_or_else(bad)?,
            "%",
            Better::Higher,
            "torchtitan's mfu: % of the device's peak FLOP/s".into(),
        )],
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_lines_and_config_lines() {
        let (step, f) = fields("[rank0]:[titan] 2025 - root - INFO - step: 10  loss: 10.4260  tps: 6,344").unwrap();
        assert_eq!(step, 10);
        assert_eq!(f, vec![("step", "10"), ("loss", "10.4260"), ("tps", "6,344")]);
        assert_eq!(number("6,344"), Some(6344.0));
        assert_eq!(number("37.15%"), Some(37.15));
        assert!(fields("global_step: 3  loss: 1").is_none());
        assert!(fields("step: 3  lr: 1").is_none(), "a step line has a loss");
        assert_eq!(
            parallelism("INFO - Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=8, cp=1, tp=2"),
            Some("dp_shard=8, tp=2".into())
        );
        assert_eq!(parallelism("Building 1-D device mesh with ['dp_shard'], [24]"), Some("dp_shard=24".into()));
    }
}
