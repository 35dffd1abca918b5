//! vLLM's serving benchmark before its `Serving Benchmark Result` block
//! (`benchmarks/benchmark_serving.py`, June 2023 to February 2024, and the
//! copies other projects ship, such as KServe's `benchmark.py`): after the
//! run it prints five lines,
//!
//! ```text
//! Total time: 216.81 s
//! Throughput: 4.61 requests/s
//! Average latency: 7.96 s
//! Average latency per token: 0.02 s
//! Average latency per output token: 0.04 s
//! ```
//!
//! read as `vllm-serve` metrics: `duration_s`, `requests_per_s`,
//! `e2el_ms_mean` (the mean request latency, send to last token, as later
//! versions' E2EL: printed in s, recorded in ms) and two means of its own,
//! kept in the seconds it prints them in: `latency_per_token_s_mean`
//! (latency / (prompt + output tokens)) and
//! `latency_per_output_token_s_mean` (latency / output tokens; it counts
//! the wait for the first token, so it is not TPOT). Its offline sibling,
//! `benchmark_throughput.py`, always printed tokens/s on its `Throughput:`
//! line ([`super::vllm_throughput`]). A file may hold several runs: a
//! repeated line starts the next, and the `Namespace(...)` or command
//! before each gives its parameters.

use super::vllm::{all_distinct, block_records, context_params, Block};
use super::{lines, num, Claim, ClaimIf, Format, ParseError, Parsed, Record};
use crate::vocab::benches::Family;
use crate::vocab::metrics::{params_text, Better};

const TOOL: &str = "vllm-serve";

pub struct VllmServe2023;

/// A line's metric, unit, direction and the factor to its unit.
fn metric_of(line: &str) -> Option<(&'static str, &'static str, Better, f64, &str)> {
    let t = line.trim();
    let (name, unit, better, factor, rest) = [
        ("Total time:", "duration_s", "s", Better::Lower, 1.0),
        ("Throughput:", "requests_per_s", "req/s", Better::Higher, 1.0),
        ("Average latency:", "e2el_ms_mean", "ms", Better::Lower, 1e3),
        ("Average latency per token:", "latency_per_token_s_mean", "s", Better::Lower, 1.0),
        ("Average latency per output token:", "latency_per_output_token_s_mean", "s", Better::Lower, 1.0),
    ]
    .into_iter()
    .find_map(|(label, name, unit, better, factor)| {
        t.strip_prefix(label).map(|rest| (name, unit, better, factor, rest.trim()))
    })?;
    let printed_unit = if name == "requests_per_s" { "requests/s" } else { "s" };
    let value = rest.strip_suffix(printed_unit)?.trim();
    Some((name, unit, better, factor, value))
}

/// `Throughput: 4.61 requests/s` and nothing after it.
fn serving_throughput(line: &str) -> bool {
    metric_of(line).is_some_and(|(name, ..)| name == "requests_per_s")
}

impl Format for VllmServe2023 {
    fn name(&self) -> &'static str {
        "vllm-serve-2023"
    }

    fn describe(&self) -> &'static str {
        "vLLM serving benchmark before 2024-02 (benchmark_serving.py's `Total time`, `Throughput: X requests/s`, `Average latency` lines)"
    }

    fn family(&self) -> Option<Family> {
        None
    }

    fn markers(&self) -> &'static [&'static str] {
        &[]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        text.lines().any(|l| l.trim_start().starts_with("Average latency:")).claim(
            text,
            "a `Throughput: X requests/s` line with no tokens/s, and `Average latency:` (benchmark_serving.py before 2024-02)",
            serving_throughput,
        )
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let all = lines(text);
        // Read twice, as `vllm::summary` does: once for whether the blocks'
        // parameters tell them apart, once to hand out each block's records
        // as it ends, so no file is held as records.
        let mut keys: Vec<Option<String>> = Vec::new();
        let mut throughput = false;
        blocks(&all, &mut |b| {
            throughput |= b.values.iter().any(|m| m.0 == "requests_per_s");
            keys.push(params_text(&b.params));
        })?;
        if !throughput {
            return Err(ParseError::new(all.len().max(1), "no `Throughput: X requests/s` line"));
        }
        let distinct = all_distinct(keys);
        let mut warnings = Vec::new();
        let mut k = 0;
        blocks(&all, &mut |b| {
            block_records(TOOL, k, b, distinct, &mut warnings, &mut *each);
            k += 1;
        })?;
        Ok(Parsed {
            tool: self.name().into(),
            backend: "vllm".into(),
            command: text.lines().find_map(|l| {
                super::command_line(l, |t| t.ends_with("benchmark_serving.py") || t.ends_with("benchmark.py"))
                    .map(|c| c.text())
            }),
            warnings,
            ..Parsed::default()
        })
    }
}

/// Each run's lines as a block, in order: a line already in the current
/// block starts the next one, and the lines before a block give its
/// parameters.
fn blocks(all: &[(usize, &str)], on_block: &mut dyn FnMut(Block)) -> Result<(), ParseError> {
    let mut current: Option<Block> = None;
    let mut context_start = 0;
    for (i, &(no, line)) in all.iter().enumerate() {
        let Some((name, unit, better, factor, value)) = metric_of(line) else { continue };
        let Some(v) = num(value) else {
            return Err(ParseError::new(no, format!("`{}`: `{value}` is not a number", line.trim())));
        };
        if current.as_ref().is_some_and(|b| b.values.iter().any(|m| m.0 == name)) {
            current.take().into_iter().for_each(&mut *on_block);
        }
        let block = current.get_or_insert_with(|| {
            let before: Vec<&str> = all[context_start..i].iter().map(|(_, l)| *l).collect();
            Block { params: context_params(&before), values: Vec::new(), settings: Vec::new() }
        });
        block.values.push((name.to_string(), unit, better, v * factor, no));
        context_start = i + 1;
    }
    current.into_iter().for_each(on_block);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_names_its_metric_and_unit() {
        assert_eq!(
            metric_of("   Average latency: 7.96 s").map(|m| (m.0, m.3, m.4)),
            Some(("e2el_ms_mean", 1e3, "7.96"))
        );
        assert_eq!(metric_of("Throughput: 4.61 requests/s").map(|m| m.0), Some("requests_per_s"));
        // The offline benchmark's line and vLLM 0.6.3+'s are not this one.
        assert!(!serving_throughput("Throughput: 4.61 requests/s, 2000.1 tokens/s"));
        assert!(!serving_throughput("Throughput: 4.64 requests/s, 2000.51 total tokens/s, 1010.54 output tokens/s"));
    }
}
