//! vLLM's serving benchmark (`benchmarks/benchmark_serving.py`, `vllm bench
//! serve`): the text summary between `==== Serving Benchmark Result ====`
//! and a rule of `=`, and the JSON that `--save-result` writes (one object,
//! or one per line with `--append-result`). Every number becomes a named
//! metric in the tool's own unit:
//!
//! - `requests_per_s` (req/s), `output_tokens_per_s`, `total_tokens_per_s`,
//!   `input_tokens_per_s`, `peak_output_tokens_per_s` (tokens/s), higher is
//!   better; `goodput_requests_per_s` where the tool measured goodput;
//! - `{ttft,tpot,itl,e2el}_ms_{mean,median,std,p<q>}` (ms), lower is better;
//! - `successful_requests`, `failed_requests`, `duration_s`.
//!
//! Parameters: `model`, `request_rate` (`inf` = all at once),
//! `max_concurrency` and `burstiness` where the output or the command
//! printed before it says them; `block` numbers the results of one file
//! when nothing else tells them apart. A block in which no request
//! succeeded prints zeros: they are recorded as skipped, never as a 0 ms
//! latency. Token totals and other lines are kept as the file's settings.
//!
//! The file is longer than 400 lines because the text summary (also
//! SGLang's, [`super::sglang`]) and the JSON share one metric table and one
//! record builder, here.

use crate::vocab::benches::Family;
use serde_json::Value;

use super::{lines, metric_record, num, Claim, ClaimIf, Format, MetricValue, ParseError, Parsed, Record};
use crate::vocab::metrics::{scalar, Better, Params};
use crate::vocab::rows::Status;

const TOOL: &str = "vllm-serve";
const JSON_TOOL: &str = "vllm-serve-json";

/// The text summary.
pub struct VllmServe;
/// The `--save-result` JSON.
pub struct VllmServeJson;

/// One metric a line or key maps to: name, unit, direction.
fn metric_of(label: &str) -> Option<(String, &'static str, Better)> {
    let l = label.trim().to_ascii_lowercase();
    let l = l.split_whitespace().collect::<Vec<_>>().join(" ");
    let fixed = match l.as_str() {
        "successful requests" | "completed" => Some(("successful_requests", "requests", Better::Higher)),
        "failed requests" | "failed" => Some(("failed_requests", "requests", Better::Lower)),
        "benchmark duration (s)" | "duration" => Some(("duration_s", "s", Better::Lower)),
        "request throughput (req/s)" | "request_throughput" => Some(("requests_per_s", "req/s", Better::Higher)),
        "request goodput (req/s)" | "request_goodput" | "request_goodput:" => {
            Some(("goodput_requests_per_s", "req/s", Better::Higher))
        }
        "output token throughput (tok/s)" | "output_throughput" => {
            Some(("output_tokens_per_s", "tokens/s", Better::Higher))
        }
        "input token throughput (tok/s)" | "input_throughput" => {
            Some(("input_tokens_per_s", "tokens/s", Better::Higher))
        }
        "total token throughput (tok/s)" | "total_token_throughput" => {
            Some(("total_tokens_per_s", "tokens/s", Better::Higher))
        }
        "peak output token throughput (tok/s)" | "max_output_tokens_per_s" => {
            Some(("peak_output_tokens_per_s", "tokens/s", Better::Higher))
        }
        _ => None,
    };
    if let Some((m, u, b)) = fixed {
        return Some((m.to_string(), u, b));
    }
    latency_metric(&l)
}

/// `Mean TTFT (ms)` / `p99_ttft_ms` → `ttft_ms_p99`.
fn latency_metric(l: &str) -> Option<(String, &'static str, Better)> {
    let (stat, kind) = if let Some(text) = l.strip_suffix(" (ms)") {
        let (stat, kind) = text.split_once(' ')?;
        (stat.to_string(), kind.to_string())
    } else {
        let key = l.strip_suffix("_ms")?;
        let (stat, kind) = key.split_once('_')?;
        (stat.to_string(), kind.to_string())
    };
    // SGLang prints `Mean E2E Latency (ms)` for vLLM's `Mean E2EL (ms)`.
    let kind = if kind == "e2e latency" { "e2el".to_string() } else { kind };
    if !matches!(kind.as_str(), "ttft" | "tpot" | "itl" | "e2el") {
        return None;
    }
    let ok_stat = matches!(stat.as_str(), "mean" | "median" | "std")
        || stat.strip_prefix('p').is_some_and(|q| !q.is_empty() && q.parse::<f64>().is_ok());
    ok_stat.then(|| (format!("{kind}_ms_{stat}"), "ms", Better::Lower))
}

/// Parameters said by the lines before a block: the command's flags,
/// a `Namespace(...)` dump, or vLLM's own `Traffic request rate:` lines.
pub(super) fn context_params(text: &[&str]) -> Params {
    let mut p = Params::new();
    for line in text {
        let l = line.trim();
        for (key, names) in [
            ("model", &["--model", "model="][..]),
            ("request_rate", &["--request-rate", "request_rate="][..]),
            ("max_concurrency", &["--max-concurrency", "max_concurrency="][..]),
        ] {
            for name in names {
                if let Some(pos) = l.find(name) {
                    let rest = l[pos + name.len()..].trim_start_matches([' ', '=']);
                    let v: String = rest
                        .trim_start_matches(['\'', '"'])
                        .chars()
                        .take_while(|c| !matches!(c, ' ' | ',' | ')' | '\'' | '"' | '\\'))
                        .collect();
                    if !v.is_empty() && v != "None" {
                        p.insert(key.into(), scalar(&v));
                    }
                }
            }
        }
        for (label, key) in [
            ("Traffic request rate:", "request_rate"),
            ("Maximum request concurrency:", "max_concurrency"),
            ("Burstiness factor:", "burstiness"),
        ] {
            if let Some(v) = l.strip_prefix(label) {
                let v = v.split_whitespace().next().unwrap_or("");
                if !v.is_empty() && v != "None" {
                    p.insert(key.into(), scalar(v));
                }
            }
        }
    }
    p
}

/// One block's numbers before they become records.
pub(super) struct Block {
    pub(super) params: Params,
    /// (metric, unit, direction, value, line).
    pub(super) values: Vec<(String, &'static str, Better, f64, usize)>,
    pub(super) settings: Vec<String>,
}

/// Whether the blocks' parameter texts tell every block apart (else each
/// gets a `block` number).
pub(super) fn all_distinct(mut keys: Vec<Option<String>>) -> bool {
    let n = keys.len();
    keys.sort();
    keys.dedup();
    keys.len() == n
}

/// Each block's records, handed to `each` as they are made.
fn records_of(tool: &str, blocks: Vec<Block>, warnings: &mut Vec<String>, each: &mut dyn FnMut(Record)) {
    // Blocks nothing else tells apart get a number.
    let distinct = all_distinct(blocks.iter().map(|b| crate::vocab::metrics::params_text(&b.params)).collect());
    for (i, b) in blocks.into_iter().enumerate() {
        block_records(tool, i, b, distinct, warnings, each);
    }
}

/// The records of block `i` (numbered unless `distinct`).
pub(super) fn block_records(
    tool: &str,
    i: usize,
    b: Block,
    distinct: bool,
    warnings: &mut Vec<String>,
    each: &mut dyn FnMut(Record),
) {
    let mut params = b.params;
    if !distinct {
        params.insert("block".into(), Value::from(i as u64 + 1));
    }
    let none_succeeded = b.values.iter().any(|v| v.0 == "successful_requests" && v.3 == 0.0);
    if none_succeeded {
        warnings.push(format!(
            "result {}: no request succeeded; its throughputs and latencies (printed as 0) are recorded as skipped",
            i + 1
        ));
    }
    for (metric, unit, better, value, line) in b.values {
        let counts = matches!(metric.as_str(), "successful_requests" | "failed_requests" | "duration_s");
        let mut r = metric_record(
            tool,
            MetricValue { name: &metric, value, unit, better },
            &params,
            line,
            "vLLM's own figure, as printed",
        );
        if none_succeeded && !counts {
            r.status = Status::Skipped;
            r.note = "no request succeeded: the tool printed 0, which is not a measurement".into();
        }
        each(r);
    }
}

impl Format for VllmServe {
    fn name(&self) -> &'static str {
        TOOL
    }
    fn describe(&self) -> &'static str {
        "vLLM serving benchmark summary (benchmark_serving.py, vllm bench serve): throughput, TTFT/TPOT/ITL/E2EL"
    }

    fn family(&self) -> Option<Family> {
        None
    }
    fn markers(&self) -> &'static [&'static str] {
        &["benchmark_serving", "vllm bench serve"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        Claim::find(text, "a `Serving Benchmark Result` block", |l| l.contains("Serving Benchmark Result"))
    }
    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        summary(text, TOOL, "vllm", |t| t.ends_with("benchmark_serving.py") || t == "vllm", each)
    }
}

/// Every summary block of `text`, in order, to `on_block`.
fn blocks_of(all: &[(usize, &str)], on_block: &mut dyn FnMut(Block)) -> Result<(), ParseError> {
    let mut context_start = 0;
    let mut i = 0;
    while i < all.len() {
        if !all[i].1.contains("Serving Benchmark Result") {
            i += 1;
            continue;
        }
        let before: Vec<&str> = all[context_start..i].iter().map(|(_, l)| *l).collect();
        let mut block = Block { params: context_params(&before), values: Vec::new(), settings: Vec::new() };
        i += 1;
        while i < all.len() {
            let (n, line) = all[i];
            let t = line.trim();
            if t.contains("Serving Benchmark Result") {
                break;
            }
            i += 1;
            if t.len() >= 10 && t.chars().all(|c| c == '=') {
                break;
            }
            if t.starts_with('-') {
                continue; // a section rule: `----Time to First Token----`
            }
            let Some((label, rest)) = t.rsplit_once(':') else { continue };
            let token = rest.split_whitespace().next().unwrap_or("");
            if token.is_empty() {
                continue;
            }
            let key = label.trim().to_ascii_lowercase();
            if key.starts_with("request rate configured") {
                block.params.insert("request_rate".into(), scalar(token));
                continue;
            }
            // SGLang 2024-25 printed `Max reqeuest concurrency` (sic).
            if key.starts_with("maximum request concurrency")
                || key == "max request concurrency"
                || key == "max reqeuest concurrency"
            {
                if token != "None" && token != "not" {
                    block.params.insert("max_concurrency".into(), scalar(token));
                }
                continue;
            }
            // SGLang's block names its rate and the backend it drove.
            if key == "traffic request rate" {
                block.params.insert("request_rate".into(), scalar(token));
                continue;
            }
            if key == "backend" {
                block.params.insert("backend".into(), scalar(token));
                continue;
            }
            match (metric_of(label), num(token)) {
                (Some((m, unit, better)), Some(v)) => {
                    block.values.push((m, unit, better, v, n));
                }
                (Some((m, ..)), None) => {
                    let hint = super::placeholder_hint(token);
                    return Err(ParseError::new(
                        n,
                        format!("`{}` ({m}) is not a number: `{token}`{hint}", label.trim()),
                    ));
                }
                (None, _) => block.settings.push(format!("{}: {token}", label.trim())),
            }
        }
        context_start = i;
        on_block(block);
    }
    Ok(())
}

/// Settings lines kept for the manifest: the first blocks' (a log of
/// thousands of blocks would otherwise carry them all).
const MAX_SETTINGS: usize = 64;

/// The summary blocks of a serving benchmark, as `tool`, read twice: once
/// for the blocks' parameters (whether they tell the blocks apart), once to
/// hand each block's records to `each` as it ends, so no file is held as
/// records.
pub(super) fn summary(
    text: &str,
    tool: &str,
    backend: &str,
    command: fn(&str) -> bool,
    each: &mut dyn FnMut(Record),
) -> Result<Parsed, ParseError> {
    let all = lines(text);
    let mut keys: Vec<Option<String>> = Vec::new();
    let mut any_values = false;
    blocks_of(&all, &mut |b| {
        any_values |= !b.values.is_empty();
        keys.push(crate::vocab::metrics::params_text(&b.params));
    })?;
    if !any_values {
        return Err(ParseError::new(all.len().max(1), "a `Serving Benchmark Result` header with no numbers after it"));
    }
    let distinct = all_distinct(keys);
    let mut warnings = Vec::new();
    let mut settings: Vec<String> = Vec::new();
    let mut more = 0usize;
    let mut k = 0usize;
    blocks_of(&all, &mut |mut b| {
        for s in b.settings.drain(..) {
            if settings.len() < MAX_SETTINGS {
                settings.push(s);
            } else {
                more += 1;
            }
        }
        block_records(tool, k, b, distinct, &mut warnings, &mut *each);
        k += 1;
    })?;
    if more > 0 {
        settings.push(format!("… and {more} more settings lines"));
    }
    // An offline `Throughput:` line in the same file.
    super::vllm_throughput::records(text)?.into_iter().for_each(&mut *each);
    Ok(Parsed {
        tool: tool.into(),
        record_count: 0,
        backend: backend.into(),
        command: text.lines().find_map(|l| super::command_line(l, command).map(|c| c.text())),
        settings: (!settings.is_empty()).then(|| settings.join("; ")),
        warnings,
        ..Parsed::default()
    })
}

impl Format for VllmServeJson {
    fn name(&self) -> &'static str {
        JSON_TOOL
    }
    fn describe(&self) -> &'static str {
        "vLLM serving benchmark --save-result JSON (one object, or one per line with --append-result)"
    }

    fn family(&self) -> Option<Family> {
        None
    }
    fn markers(&self) -> &'static [&'static str] {
        &["\"request_throughput\""]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        let t = text.trim_start();
        (t.starts_with('{') && t.contains("_ms\"")).claim(
            text,
            "a JSON result with `request_throughput` and `*_ms` keys (`--save-result`)",
            |l| l.contains("\"request_throughput\""),
        )
    }
    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        let objects: Vec<(usize, Value)> = match serde_json::from_str::<Value>(text) {
            Ok(v) => vec![(1, v)],
            Err(_) => text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, l)| {
                    serde_json::from_str::<Value>(l)
                        .map(|v| (i + 1, v))
                        .map_err(|e| ParseError::new(i + 1, format!("not a JSON object: {e}")))
                })
                .collect::<Result<_, _>>()?,
        };
        let mut blocks = Vec::new();
        let mut settings = Vec::new();
        let mut device = None;
        for (line, v) in objects {
            let Value::Object(map) = v else {
                return Err(ParseError::new(line, "expected a JSON object of results"));
            };
            let mut block = Block { params: Params::new(), values: Vec::new(), settings: Vec::new() };
            for (k, v) in &map {
                match k.as_str() {
                    "model_id" => {
                        if let Some(m) = v.as_str() {
                            block.params.insert("model".into(), Value::from(m));
                        }
                    }
                    "request_rate" | "max_concurrency" | "burstiness" => match v {
                        Value::Number(_) => {
                            block.params.insert(k.clone(), v.clone());
                        }
                        Value::String(s) => {
                            block.params.insert(k.clone(), scalar(s));
                        }
                        _ => {}
                    },
                    "gpu" => device = v.as_str().map(String::from),
                    key if key.starts_with("percentiles_") => {
                        // Older files: [[99.0, value], ...].
                        let Some(base) = key.strip_prefix("percentiles_") else { continue };
                        for pair in v.as_array().into_iter().flatten() {
                            let (Some(q), Some(x)) =
                                (pair.get(0).and_then(Value::as_f64), pair.get(1).and_then(Value::as_f64))
                            else {
                                continue;
                            };
                            let q = if q.fract() == 0.0 { format!("{}", q as i64) } else { q.to_string() };
                            if let Some((m, unit, better)) = latency_metric(&format!("p{q}_{base}")) {
                                block.values.push((m, unit, better, x, line));
                            }
                        }
                    }
                    key => match (metric_of(key), v.as_f64()) {
                        (Some((m, unit, better)), Some(x)) => {
                            block.values.push((m, unit, better, x, line));
                        }
                        (_, _) if v.is_number() || v.is_string() => {
                            block.settings.push(format!("{key}: {}", crate::vocab::metrics::value_text(v)))
                        }
                        _ => {}
                    },
                }
            }
            if block.values.is_empty() {
                return Err(ParseError::new(
                    line,
                    "a JSON object with no vLLM serving results (no request_throughput, no *_ms)",
                ));
            }
            if blocks.is_empty() {
                settings.append(&mut block.settings);
            }
            blocks.push(block);
        }
        let mut warnings = Vec::new();
        let mut records = Vec::new();
        records_of(TOOL, blocks, &mut warnings, &mut |mut r| {
            r.device.clone_from(&device);
            records.push(r);
        });
        Ok(Parsed {
            tool: JSON_TOOL.into(),
            record_count: 0,
            backend: "vllm".into(),
            tool_version: None,
            command: None,
            settings: (!settings.is_empty()).then(|| settings.join("; ")),
            records,
            warnings,
            ..Parsed::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_map_to_metrics() {
        assert_eq!(metric_of("P99 TTFT (ms)").unwrap().0, "ttft_ms_p99");
        assert_eq!(metric_of("p99_ttft_ms").unwrap().0, "ttft_ms_p99");
        assert_eq!(metric_of("Total token throughput (tok/s)").unwrap().0, "total_tokens_per_s");
        assert_eq!(metric_of("Mean E2EL (ms)").unwrap().0, "e2el_ms_mean");
        assert_eq!(metric_of("p99.9_itl_ms").unwrap().0, "itl_ms_p99.9");
        assert!(metric_of("Total input tokens").is_none());
        assert!(metric_of("Acceptance rate (%)").is_none());
    }
}
