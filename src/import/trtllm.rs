//! TensorRT-LLM's `trtllm-bench throughput` report: its `PERFORMANCE
//! OVERVIEW` lines and per-request breakdowns (`[TTFT] P50 : …`), with the
//! model, dtype, TP/PP sizes and request count as parameters.
//!
//! Metrics in the tool's units: `requests_per_s` (req/sec),
//! `output_tokens_per_s` (`Total Output Throughput`, or the old `Token
//! Throughput`, which counts output tokens too), `total_tokens_per_s`
//! (input + output), `per_user_output_tokens_per_s`,
//! `per_gpu_output_tokens_per_s`, `total_latency_ms`, `e2el_ms_mean`,
//! `ttft_ms_mean`, `tpot_ms_mean` (with `--streaming`), and from the
//! breakdowns `{ttft,tpot,e2el}_ms_{p50,p90,p95,p99,min,max}`. Older
//! layouts: 0.12's `STATISTICS` block (its `Total Latency (seconds)` read
//! as ms, × 1000), and 0.13–0.16's `STREAMING STATISTICS` block
//! (`ttft_ms_mean`, `e2el_ms_mean`, `itl_ms_mean`). A report of
//! `<value>` placeholders is a documentation template and is refused as
//! one; a run that ended before its report is refused by name.

use super::{metric_record, num, Claim, ClaimIf, Format, MetricValue, ParseError, Parsed};
use crate::vocab::benches::Family;
use crate::vocab::metrics::{scalar, Better, Params};

pub struct TrtllmBench;

const TOOL: &str = "trtllm-bench";

/// The metric an overview label names.
fn overview(label: &str) -> Option<(&'static str, &'static str, Better)> {
    let l = label.trim().to_ascii_lowercase();
    Some(match l.as_str() {
        "request throughput (req/sec)" => ("requests_per_s", "req/s", Better::Higher),
        "total output throughput (tokens/sec)" | "token throughput (tokens/sec)" => {
            ("output_tokens_per_s", "tokens/s", Better::Higher)
        }
        "total token throughput (tokens/sec)" => ("total_tokens_per_s", "tokens/s", Better::Higher),
        "total latency (ms)" => ("total_latency_ms", "ms", Better::Lower),
        // 0.12–0.16's `STATISTICS` block: seconds, read as ms (× 1000).
        "total latency (seconds)" => ("total_latency_ms", "s", Better::Lower),
        "average request latency (ms)" => ("e2el_ms_mean", "ms", Better::Lower),
        "average time-to-first-token [ttft] (ms)" | "average time-to-first-token (ms)" => {
            ("ttft_ms_mean", "ms", Better::Lower)
        }
        // 0.13–0.16's `STREAMING STATISTICS` block.
        "average inter-token latency (ms)" => ("itl_ms_mean", "ms", Better::Lower),
        "average time-per-output-token [tpot] (ms)" => ("tpot_ms_mean", "ms", Better::Lower),
        "per gpu output throughput (tps/gpu)" | "per gpu output throughput (tokens/sec/gpu)" => {
            ("per_gpu_output_tokens_per_s", "tokens/s/GPU", Better::Higher)
        }
        _ if l.starts_with("per user output throughput") => {
            ("per_user_output_tokens_per_s", "tokens/s/user", Better::Higher)
        }
        _ => return None,
    })
}

/// `[TTFT] P50    : 159.7857` → (`ttft_ms_p50`, value).
fn breakdown(t: &str) -> Option<(String, &str)> {
    let (tag, rest) = t.strip_prefix('[')?.split_once(']')?;
    let (stat, value) = rest.split_once(':')?;
    let kind = match tag {
        "TTFT" => "ttft",
        "TPOT" => "tpot",
        "Latency" => "e2el",
        _ => return None,
    };
    let stat = match stat.trim() {
        "MINIMUM" => "min".to_string(),
        "MAXIMUM" => "max".to_string(),
        "AVERAGE" => return None, // the overview's mean, already read
        s if s.starts_with('P') && s[1..].parse::<u32>().is_ok() => s.to_ascii_lowercase(),
        _ => return None,
    };
    Some((format!("{kind}_ms_{stat}"), value.trim()))
}

impl Format for TrtllmBench {
    fn name(&self) -> &'static str {
        TOOL
    }

    fn describe(&self) -> &'static str {
        "TensorRT-LLM trtllm-bench throughput report: request and token throughput, TTFT/TPOT/latency"
    }

    fn family(&self) -> Option<Family> {
        None
    }

    fn markers(&self) -> &'static [&'static str] {
        &["trtllm-bench", "TensorRT-LLM", "[TRT-LLM]"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        // A run that ended before its report printed only its start.
        Claim::find(text, "a `PERFORMANCE OVERVIEW` block", |l| l.contains("= PERFORMANCE OVERVIEW"))
            .or_else(|| {
                text.contains("Request Throughput (req/sec)").claim(
                    text,
                    "a `STATISTICS` block (trtllm-bench 0.12–0.16)",
                    |l| l.trim() == "= STATISTICS",
                )
            })
            .or_else(|| {
                text.contains("trtllm-bench").claim(
                    text,
                    "a `WORLD + RUNTIME INFORMATION` block of trtllm-bench",
                    |l| l.contains("= WORLD + RUNTIME INFORMATION"),
                )
            })
            .or_else(|| {
                text.contains("[TRT-LLM]").claim(text, "`Preparing to run throughput benchmark` ([TRT-LLM])", |l| {
                    l.contains("Preparing to run throughput benchmark")
                })
            })
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: TOOL.into(), backend: "tensorrt-llm".into(), ..Parsed::default() };
        let mut params = Params::new();
        let mut values: Vec<(String, &'static str, Better, f64, usize)> = Vec::new();
        let mut in_overview = false;
        // Lines whose value was printed in seconds.
        let mut in_seconds = Vec::new();
        for (no, line) in super::lines(text) {
            let t = line.trim();
            if t.starts_with("= ") {
                // `STATISTICS` until 0.16, `PERFORMANCE OVERVIEW` since.
                in_overview = ["= PERFORMANCE OVERVIEW", "= STATISTICS", "= STREAMING STATISTICS"].contains(&t);
                continue;
            }
            if let Some((name, v)) = breakdown(t) {
                let v = num(v).ok_or_else(|| ParseError::new(no, format!("`{t}`: not a number")))?;
                values.push((name, "ms", Better::Lower, v, no));
                continue;
            }
            let Some((label, value)) = t.split_once(':') else { continue };
            let value = value.trim();
            let token = value.split_whitespace().next().unwrap_or("");
            match label.trim() {
                "Model" => {
                    params.insert("model".into(), scalar(token));
                }
                "Dtype" => {
                    params.insert("dtype".into(), scalar(token));
                }
                "TP Size" => {
                    params.insert("tp".into(), scalar(token));
                }
                "PP Size" => {
                    params.insert("pp".into(), scalar(token));
                }
                "Number of requests" => {
                    params.insert("requests".into(), scalar(token));
                }
                "TensorRT-LLM Version" => out.tool_version = Some(format!("TensorRT-LLM {token}")),
                _ if in_overview => {
                    if let Some((m, unit, better)) = overview(label) {
                        let v = num(token).ok_or_else(|| {
                            let hint = if token.starts_with('<') && token.ends_with('>') {
                                " (a placeholder: the file is a documentation template, with no measurement in it)"
                            } else {
                                super::placeholder_hint(token)
                            };
                            ParseError::new(no, format!("`{}` is not a number: `{token}`{hint}", label.trim()))
                        })?;
                        // The one value printed in seconds becomes ms.
                        let (unit, v) = if unit == "s" {
                            in_seconds.push(no);
                            ("ms", v * 1e3)
                        } else {
                            (unit, v)
                        };
                        values.push((m.to_string(), unit, better, v, no));
                    }
                }
                _ => {}
            }
        }
        if values.is_empty() {
            return Err(ParseError::new(
                1,
                "no trtllm-bench `PERFORMANCE OVERVIEW` numbers: the run ended before its report",
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut again = None;
        for (name, unit, better, value, no) in values {
            // A second report in the file: the first is imported, and the
            // warning names where the next began.
            if !seen.insert(name.clone()) {
                again.get_or_insert(no);
                continue;
            }
            out.records.push(metric_record(
                TOOL,
                MetricValue { name: &name, value, unit, better },
                &params,
                no,
                if in_seconds.contains(&no) {
                    format!("trtllm-bench `{name}`: printed in seconds (`Total Latency (seconds)`), × 1000")
                } else {
                    format!("trtllm-bench `{name}` as printed ({unit})")
                },
            ));
        }
        if let Some(no) = again {
            out.warnings.push(format!(
                "line {no}: a second report in the file; only the first is imported (split the file to import each)"
            ));
        }
        Ok(out)
    }
}
