//! Megatron-LM training logs (also Megatron-DeepSpeed and AMD's Primus):
//! one `iteration N/ TOTAL | name: value | ...` line per logging interval,
//! whatever prefix a launcher or logger puts before it (ANSI colours are
//! removed), as `name: value` or a logger's `name_with_underscores=value`. Each line gives, at parameter `iteration` = N:
//!
//! - `ms_per_iteration` (ms; Megatron-DeepSpeed's seconds × 1000), lower is
//!   better; Primus prints `instant/average` pairs: the instant value is
//!   imported and the note says so;
//! - `tflops_per_gpu` (TFLOP/s/GPU: Megatron's `throughput per GPU`, and
//!   Megatron-DeepSpeed's `TFLOPs`, which is also per GPU);
//! - `ds_tflops_per_gpu`: Megatron-DeepSpeed's `[DS]-TFLOPs`, DeepSpeed's
//!   own count, printed beside Megatron's `[LM]-TFLOPs`;
//! - `tokens_per_s_per_gpu` (tokens/s/GPU: Megatron's `tokens per GPU`,
//!   Megatron-DeepSpeed's `tokens per gpu per second (tgs)`),
//!   `samples_per_s` (samples/s);
//! - `lm_loss` (dimensionless, lower is better): the loss curve.
//!
//! `global_batch_size` is a parameter too, so that a ramped batch size is
//! never averaged with the full one.

use super::{metric_record, num, strip_ansi, Claim, Format, MetricValue, ParseError, Parsed, Record};
use crate::vocab::benches::Family;
use crate::vocab::metrics::{Better, Params};

const TOOL: &str = "megatron";

pub struct Megatron;

/// `iteration 10/ 500` (or `iteration=  10/ 500`) at the start of `s` →
/// (10, 500).
fn iteration_of(s: &str) -> Option<(u64, u64)> {
    let rest = s.strip_prefix("iteration")?.trim_start();
    let rest = rest.strip_prefix(['=', ':']).unwrap_or(rest).trim_start();
    let (n, rest) = rest.split_once('/')?;
    let total: String = rest.trim_start().chars().take_while(|c| c.is_ascii_digit()).collect();
    Some((n.trim().parse().ok()?, total.parse().ok()?))
}

/// A field name in one spelling: lower case, `_` as spaces, single spaces
/// (`tokens_per_gpu_per_second_tgs`, `tokens per gpu per second (tgs)`).
fn key_words(key: &str) -> String {
    key.to_ascii_lowercase().replace('_', " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a line is one of Megatron's iteration lines.
fn is_iteration_line(line: &str) -> bool {
    line.contains("iteration")
        && (line.contains("elapsed time per iteration") || line.contains("elapsed_time_per_iteration"))
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
    fn markers(&self) -> &'static [&'static str] {
        &["elapsed time per iteration", "pretrain_gpt", "Megatron"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        Claim::find(text, "an iteration line with `elapsed time per iteration`", is_iteration_line)
    }
    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// A record per value as each iteration line is read.
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let clean = strip_ansi(text);
        let mut records = 0usize;
        let mut warnings = Vec::new();
        let mut total_iters = None;
        let mut averaged = false;
        for (n, line) in super::lines(&clean) {
            let Some(pos) = line.find("iteration") else { continue };
            let Some((iter, total)) = iteration_of(&line[pos..]) else { continue };
            if !is_iteration_line(line) {
                continue;
            }
            total_iters = Some(total);
            // `name: value`, or `name=value` where a logger wrote keys
            // with underscores (Megatron-DeepSpeed through ezpz).
            let fields: Vec<(&str, &str)> = line[pos..]
                .split('|')
                .skip(1)
                .filter_map(|f| f.rsplit_once(':').or_else(|| f.split_once('=')))
                .map(|(k, v)| (k.trim(), v.trim()))
                .collect();
            let mut params = Params::new();
            params.insert("iteration".into(), iter.into());
            if let Some(b) = fields.iter().find(|(k, _)| key_words(k) == "global batch size").and_then(|(_, v)| num(v))
            {
                params.insert("global_batch_size".into(), (b as u64).into());
            }
            for (key, value) in &fields {
                // Primus: `instant/average`.
                let (first, pair) = match value.split_once('/') {
                    Some((a, _)) if !key.contains("usage") => (a, true),
                    _ => (*value, false),
                };
                let words = key_words(key);
                let mapped = match words.as_str() {
                    "elapsed time per iteration (ms)" | "elapsed time per iteration ms" => {
                        Some(("ms_per_iteration", "ms", Better::Lower, 1.0))
                    }
                    "elapsed time per iteration (s)" | "elapsed time per iteration s" => {
                        Some(("ms_per_iteration", "ms", Better::Lower, 1000.0))
                    }
                    // Megatron's formula; Megatron-DeepSpeed prints it as
                    // `TFLOPs` (per GPU) or `[LM]-TFLOPs`.
                    "throughput per gpu (tflop/s/gpu)" | "tflops" | "[lm]-tflops" => {
                        Some(("tflops_per_gpu", "TFLOP/s/GPU", Better::Higher, 1.0))
                    }
                    // DeepSpeed's own FLOP count, next to Megatron's.
                    "[ds]-tflops" => Some(("ds_tflops_per_gpu", "TFLOP/s/GPU", Better::Higher, 1.0)),
                    w if w == "tokens per gpu (tokens/s/gpu)" || w.starts_with("tokens per gpu per second") => {
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
                records += 1;
                each(metric_record(
                    TOOL,
                    MetricValue { name: metric, value: v * scale, unit, better },
                    &params,
                    n,
                    note,
                ));
            }
        }
        if records == 0 {
            return Err(ParseError::new(1, "no `iteration N/ TOTAL | ... | elapsed time per iteration` lines"));
        }
        if averaged {
            warnings.push("values printed as instant/average: the instant value of each interval is imported".into());
        }
        Ok(Parsed {
            tool: TOOL.into(),
            record_count: 0,
            backend: "megatron".into(),
            tool_version: None,
            command: text.lines().find_map(|l| {
                super::command_line(l, |t| {
                    t.rsplit('/').next().is_some_and(|b| b.starts_with("pretrain_") && b.ends_with(".py"))
                })
                .map(|c| c.text())
            }),
            settings: total_iters.map(|t| format!("train iterations: {t}")),
            link: None,
            records: Vec::new(),
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
        assert_eq!(iteration_of("iteration=       1/  317892 | x"), Some((1, 317892)));
        assert_eq!(key_words("tokens_per_gpu_per_second_tgs"), "tokens per gpu per second tgs");
        assert_eq!(key_words(" global  batch size"), "global batch size");
    }
}
