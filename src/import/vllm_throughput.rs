//! vLLM's offline throughput benchmark (`benchmarks/benchmark_throughput.py`,
//! `vllm bench throughput`): one summary line per run,
//! `Throughput: 4.64 requests/s, 2000.51 total tokens/s, 1010.54 output
//! tokens/s` (before vLLM 0.6.3: `Throughput: X requests/s, Y tokens/s`,
//! where Y counts prompt and output tokens), optionally followed by
//! `Total num prompt tokens:  N` and `Total num output tokens:  N`.
//!
//! Each line gives `requests_per_s` (req/s), `total_tokens_per_s` and
//! `output_tokens_per_s` (tokens/s), higher is better, and the token totals
//! (`prompt_tokens`, `output_tokens`, tokens) that follow it. A file with
//! several runs numbers them (`run`), and a label printed on the line
//! (`Before: Throughput: ...`, `... @ --num-scheduler-steps 10`) is the
//! run's `label`.

use super::{lines, metric_record, num, Claim, Format, MetricValue, ParseError, Parsed, Record};
use crate::vocab::benches::Family;
use crate::vocab::metrics::{Better, Params};

const TOOL: &str = "vllm-throughput";

pub struct VllmThroughput;

/// One `Throughput:` line: its label, if any, and (metric, unit, value).
struct Line {
    label: Option<String>,
    values: Vec<(&'static str, &'static str, f64)>,
}

/// The metric a `<number> <unit>` part names.
fn metric_of(unit: &str) -> Option<(&'static str, &'static str)> {
    match unit.split_whitespace().collect::<Vec<_>>().join(" ").as_str() {
        "requests/s" => Some(("requests_per_s", "req/s")),
        "total tokens/s" | "tokens/s" => Some(("total_tokens_per_s", "tokens/s")),
        "output tokens/s" => Some(("output_tokens_per_s", "tokens/s")),
        _ => None,
    }
}

/// Read a `Throughput:` line; `Err` names a part that is not a number.
fn read(line: &str) -> Option<Result<Line, String>> {
    let (before, rest) = line.split_once("Throughput:")?;
    let (rest, suffix) = rest.split_once(" @ ").map_or((rest, None), |(r, s)| (r, Some(s.trim())));
    let prefix = before.trim_matches(|c: char| c.is_whitespace() || matches!(c, '-' | '>' | '*' | ':' | '`'));
    let label = suffix.filter(|s| !s.is_empty()).or((!prefix.is_empty()).then_some(prefix)).map(String::from);
    let mut values = Vec::new();
    for part in rest.split(',') {
        let part = part.trim();
        let (value, unit) = part.split_once(' ').unwrap_or((part, ""));
        let Some((metric, unit)) = metric_of(unit) else { continue };
        match num(value) {
            Some(v) => values.push((metric, unit, v)),
            None => return Some(Err(format!("`{part}`: `{value}` is not a number{}", super::placeholder_hint(value)))),
        }
    }
    // "Throughput:" in prose, without a requests/s part, is not a result;
    // one without tokens/s is the serving benchmark's before 2024-02
    // (`super::vllm_serve_2023`): this one always printed both.
    let has = |want: &str| values.iter().any(|(m, _, _)| m.ends_with(want));
    (has("requests_per_s") && has("tokens_per_s")).then_some(Ok(Line { label, values }))
}

impl Format for VllmThroughput {
    fn name(&self) -> &'static str {
        TOOL
    }

    fn describe(&self) -> &'static str {
        "vLLM offline throughput benchmark (benchmark_throughput.py, vllm bench throughput): requests/s, tokens/s"
    }

    fn family(&self) -> Option<Family> {
        None
    }

    fn markers(&self) -> &'static [&'static str] {
        &["benchmark_throughput", "vllm bench throughput"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        Claim::find(text, "a `Throughput: X requests/s, Y total tokens/s` line", |l| read(l).is_some())
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: TOOL.into(), backend: "vllm".into(), ..Parsed::default() };
        out.records = records(text)?;
        if out.records.is_empty() {
            return Err(ParseError::new(1, "no `Throughput: X requests/s, Y total tokens/s, ...` line"));
        }
        out.command = text.lines().find_map(|l| {
            super::command_line(l, |t| t.ends_with("benchmark_throughput.py") || t == "vllm").map(|c| c.text())
        });
        Ok(out)
    }
}

/// The records of every `Throughput:` line in `text` (and the token totals
/// after each); the serving format adds them to its own.
pub(super) fn records(text: &str) -> Result<Vec<Record>, ParseError> {
    let all = lines(text);
    let runs = all.iter().filter(|(_, l)| read(l).is_some()).count();
    let mut out = Vec::new();
    let mut params: Option<Params> = None;
    let mut run = 0;
    for (n, line) in all {
        if let Some(read) = read(line) {
            let line = read.map_err(|e| ParseError::new(n, e))?;
            run += 1;
            let mut p = Params::new();
            if runs > 1 {
                p.insert("run".into(), run.into());
            }
            if let Some(l) = line.label {
                p.insert("label".into(), l.into());
            }
            for (metric, unit, value) in line.values {
                let m = MetricValue { name: metric, value, unit, better: Better::Higher };
                out.push(metric_record(TOOL, m, &p, n, format!("vLLM's offline throughput, {unit} as printed")));
            }
            params = Some(p);
            continue;
        }
        let Some(p) = &params else { continue };
        for (what, metric) in
            [("Total num prompt tokens:", "prompt_tokens"), ("Total num output tokens:", "output_tokens")]
        {
            if let Some(v) = line.trim().strip_prefix(what) {
                let v = num(v).ok_or_else(|| ParseError::new(n, format!("`{what}` is not followed by a number")))?;
                let m = MetricValue { name: metric, value: v, unit: "tokens", better: Better::Higher };
                out.push(metric_record(TOOL, m, p, n, "vLLM's token total for the run"));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_and_labels() {
        let l = read("Throughput: 4.64 requests/s, 2000.51 total tokens/s, 1010.54 output tokens/s").unwrap().unwrap();
        assert_eq!(l.values.len(), 3);
        assert_eq!(l.label, None);
        let l = read("Before: Throughput: 20.13 requests/s, 10308.29 tokens/s").unwrap().unwrap();
        assert_eq!(l.values[1], ("total_tokens_per_s", "tokens/s", 10308.29));
        assert_eq!(l.label.as_deref(), Some("Before"));
        let l = read("- > Throughput: 3.28 requests/s, 1414.42 total tokens/s @ --num-scheduler-steps 1").unwrap();
        assert_eq!(l.unwrap().label.as_deref(), Some("--num-scheduler-steps 1"));
        assert!(read("Throughput: xxx.xx requests/s, 1 tokens/s").unwrap().is_err());
        assert!(read("Throughput: is what we measure").is_none());
    }
}
