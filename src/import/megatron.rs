//! Megatron-LM training logs (also Megatron-DeepSpeed and AMD's Primus):
//! one `iteration N/ TOTAL | name: value | ...` line per logging interval,
//! whatever prefix a launcher or logger puts before it (ANSI colours are
//! removed). Each line gives, at parameter `iteration` = N:
//!
//! - `ms_per_iteration` (ms; Megatron-DeepSpeed's seconds × 1000), lower is
//!   better; Primus prints `instant/average` pairs: the instant value is
//!   imported and the note says so;
//! - `tflops_per_gpu` (TFLOP/s/GPU: Megatron's `throughput per GPU`, and
//!   Megatron-DeepSpeed's `TFLOPs`, which is also per GPU);
//! - `tokens_per_s_per_gpu` (tokens/s/GPU), `samples_per_s` (samples/s);
//! - `lm_loss` (dimensionless, lower is better): the loss curve.
//!
//! `global_batch_size` is a parameter too, so that a ramped batch size is
//! never averaged with the full one.

use super::{metric_record, num, Format, MetricValue, ParseError, Parsed};
use crate::vocab::benches::Family;
use crate::vocab::metrics::{Better, Params};

const TOOL: &str = "megatron";

pub struct Megatron;

/// `text` without ANSI escape sequences (`ESC [ ... letter`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `iteration 10/ 500` at the start of `s` → (10, 500).
fn iteration_of(s: &str) -> Option<(u64, u64)> {
    let rest = s.strip_prefix("iteration")?.trim_start();
    let (n, rest) = rest.split_once('/')?;
    let total: String = rest.trim_start().chars().take_while(|c| c.is_ascii_digit()).collect();
    Some((n.trim().parse().ok()?, total.parse().ok()?))
}

impl Format for Megatron {
    fn name(&self) -> &'static str {
        TOOL
    }
    fn describe(&self) -> &'static str {
        "Megatron-LM / Megatron-DeepSpeed / Primus training log: ms per iteration, TFLOP/s/GPU, tokens/s/GPU, loss"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Gemm)
    }
    fn sniff(&self, text: &str) -> bool {
        text.contains("elapsed time per iteration") && text.contains(" iteration ")
    }
    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        let clean = strip_ansi(text);
        let mut records = Vec::new();
        let mut warnings = Vec::new();
        let mut total_iters = None;
        let mut averaged = false;
        for (n, line) in super::lines(&clean) {
            let Some(pos) = line.find("iteration") else { continue };
            let Some((iter, total)) = iteration_of(&line[pos..]) else { continue };
            if !line.contains("elapsed time per iteration") {
                continue;
            }
            total_iters = Some(total);
            let fields: Vec<(&str, &str)> = line[pos..]
                .split('|')
                .skip(1)
                .filter_map(|f| f.rsplit_once(':'))
                .map(|(k, v)| (k.trim(), v.trim()))
                .collect();
            let mut params = Params::new();
            params.insert("iteration".into(), iter.into());
            if let Some(b) = fields.iter().find(|(k, _)| *k == "global batch size").and_then(|(_, v)| num(v)) {
                params.insert("global_batch_size".into(), (b as u64).into());
            }
            for (key, value) in &fields {
                // Primus: `instant/average`.
                let (first, pair) = match value.split_once('/') {
                    Some((a, _)) if !key.contains("usage") => (a, true),
                    _ => (*value, false),
                };
                let mapped = match *key {
                    "elapsed time per iteration (ms)" => Some(("ms_per_iteration", "ms", Better::Lower, 1.0)),
                    "elapsed time per iteration (s)" => Some(("ms_per_iteration", "ms", Better::Lower, 1000.0)),
                    "throughput per GPU (TFLOP/s/GPU)" | "TFLOPs" => {
                        Some(("tflops_per_gpu", "TFLOP/s/GPU", Better::Higher, 1.0))
                    }
                    "tokens per GPU (tokens/s/GPU)" => {
                        Some(("tokens_per_s_per_gpu", "tokens/s/GPU", Better::Higher, 1.0))
                    }
                    "samples per second" => Some(("samples_per_s", "samples/s", Better::Higher, 1.0)),
                    "lm loss" => Some(("lm_loss", "1", Better::Lower, 1.0)),
                    _ => None,
                };
                let Some((metric, unit, better, scale)) = mapped else { continue };
                let Some(v) = num(first.split_whitespace().next().unwrap_or("")) else {
                    return Err(ParseError::new(n, format!("`{key}` is not a number: `{value}`")));
                };
                averaged |= pair;
                let note = match (scale != 1.0, pair) {
                    (true, _) => format!("Megatron's `{key}` × {scale}"),
                    (false, true) => format!("Megatron's `{key}`, the instant value of `instant/average`"),
                    _ => format!("Megatron's `{key}`, as printed"),
                };
                records.push(metric_record(
                    TOOL,
                    MetricValue { name: metric, value: v * scale, unit, better },
                    &params,
                    n,
                    note,
                ));
            }
        }
        if records.is_empty() {
            return Err(ParseError::new(1, "no `iteration N/ TOTAL | ... | elapsed time per iteration` lines"));
        }
        if averaged {
            warnings.push("values printed as instant/average: the instant value of each interval is imported".into());
        }
        Ok(Parsed {
            tool: TOOL.into(),
            backend: "megatron".into(),
            tool_version: None,
            command: text.lines().find_map(|l| {
                super::command_line(l, |t| {
                    t.rsplit('/').next().is_some_and(|b| b.starts_with("pretrain_") && b.ends_with(".py"))
                })
                .map(|c| c.text())
            }),
            settings: total_iters.map(|t| format!("train iterations: {t}")),
            records,
            warnings,
            family: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_and_iterations() {
        assert_eq!(strip_ansi("\u{1b}[32mok\u{1b}[0m"), "ok");
        assert_eq!(iteration_of("iteration       10/  500000 | x"), Some((10, 500000)));
        assert_eq!(iteration_of("iteration time"), None);
    }
}
