//! The serving and training importers (vLLM text and JSON, Megatron logs)
//! against real outputs their users published
//! (`tests/fixtures/import/real/{vllm,megatron}/`, sources in each
//! folder's `expected.toml`). Every value the file prints and the
//! expected file lists (read by hand, never from benchbook's output) must
//! come back exactly; the rows match golden files; every file goes through
//! the archive and reads back as metric points.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use benchbook::import::{self, Parsed, Record};
use benchbook::prelude::*;
use benchbook::vocab::progress::Silent;

fn real(tool: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/real").join(tool)
}

/// Each `[[log]]` of a folder's expected.toml: the file and its hand-read values.
fn logs(tool: &str) -> Vec<(String, BTreeMap<String, toml::Value>)> {
    let text = std::fs::read_to_string(real(tool).join("expected.toml")).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    doc["log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let t = l.as_table().unwrap();
            (t["file"].as_str().unwrap().to_string(), t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        })
        .collect()
}

fn parse(tool: &str, file: &str) -> Parsed {
    let path = real(tool).join(file);
    let data = std::fs::read(&path).unwrap();
    let (text, _) = import::decode(&path, &data).unwrap();
    import::parse(&path, &text, None).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn of<'a>(p: &'a Parsed, metric: &str) -> Vec<&'a Record> {
    p.records.iter().filter(|r| r.params.metric.as_deref() == Some(metric)).collect()
}

fn num(v: &toml::Value) -> f64 {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).unwrap()
}

/// expected.toml key → benchbook metric.
fn vllm_metric(key: &str) -> Option<String> {
    let fixed = match key {
        "successful_requests" | "failed_requests" | "duration_s" => key,
        "request_throughput_req_per_s" => "requests_per_s",
        "output_token_throughput_tok_per_s" => "output_tokens_per_s",
        "total_token_throughput_tok_per_s" => "total_tokens_per_s",
        "peak_output_token_throughput_tok_per_s" => "peak_output_tokens_per_s",
        _ => "",
    };
    if !fixed.is_empty() {
        return Some(fixed.into());
    }
    let (stat, rest) = key.split_once('_')?;
    let kind = rest.strip_suffix("_ms")?;
    ["ttft", "tpot", "itl", "e2el"].contains(&kind).then(|| format!("{kind}_ms_{stat}"))
}

#[test]
fn vllm_outputs_import_every_published_value() {
    let all = logs("vllm");
    assert!(all.len() >= 10, "the corpus holds {} vLLM outputs", all.len());
    for (file, e) in all {
        let p = parse("vllm", &file);
        assert!(p.tool.starts_with("vllm-serve"), "{file}: read as {}", p.tool);
        let mut checked = 0;
        for (key, want) in &e {
            let Some(metric) = vllm_metric(key) else { continue };
            let got = of(&p, &metric);
            let first = got.first().unwrap_or_else(|| panic!("{file}: no `{metric}` row for `{key}`"));
            assert_eq!(first.value, Some(num(want)), "{file}: {key} → {metric}");
            assert!(first.params.unit.is_some());
            checked += 1;
        }
        assert!(checked >= 3, "{file}: only {checked} values checked");
        let blocks = e.get("blocks").map_or(1, |b| b.as_integer().unwrap() as usize);
        assert_eq!(of(&p, "requests_per_s").len(), blocks, "{file}: one result per block");
        if let Some(last) = e.get("last_request_throughput_req_per_s") {
            assert_eq!(of(&p, "requests_per_s").last().unwrap().value, Some(num(last)), "{file}: last block");
        }
        // Blocks are told apart by their parameters, so no two points of a
        // file share a key.
        let mut keys: Vec<(String, Option<String>)> =
            p.records.iter().map(|r| (r.params.metric.clone().unwrap(), r.params.axes.clone())).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "{file}: two points with one metric and one parameter set");
        // No request succeeded: its zeros are not latencies.
        if e.get("successful_requests").map(num) == Some(0.0) {
            assert!(of(&p, "ttft_ms_mean").iter().all(|r| r.status == Status::Skipped), "{file}");
            assert!(!p.warnings.is_empty());
        } else {
            assert!(p.records.iter().all(|r| r.status == Status::Measured), "{file}");
        }
        assert!(of(&p, "ttft_ms_p99").iter().all(|r| r.params.better.as_deref() == Some("lower")));
        assert!(of(&p, "requests_per_s").iter().all(|r| r.params.unit.as_deref() == Some("req/s")));
    }
}

#[test]
fn vllm_parameters_come_from_the_output_and_its_command() {
    let p = parse("vllm", "serve_llama3.3_70b_tp8_8xA100_v0.8.3_qps_sweep_console_llm-k8s.txt");
    let rates: Vec<String> = of(&p, "requests_per_s")
        .iter()
        .map(|r| benchbook::vocab::metrics::parse_params(r.params.axes.as_deref())["request_rate"].to_string())
        .collect();
    assert_eq!(rates.len(), 4);
    let mut distinct = rates.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "each block at its own request rate: {rates:?}");
}

#[test]
fn megatron_logs_import_every_published_value() {
    let all = logs("megatron");
    assert!(all.len() >= 4);
    for (file, e) in all {
        let p = parse("megatron", &file);
        assert_eq!(p.tool, "megatron", "{file}");
        let iteration = |r: &Record| {
            benchbook::vocab::metrics::parse_params(r.params.axes.as_deref())["iteration"].as_u64().unwrap()
        };
        let times = of(&p, "ms_per_iteration");
        assert_eq!(times.len() as i64, e["iterations"].as_integer().unwrap(), "{file}: one time per iteration line");
        assert_eq!(iteration(times[0]) as i64, e["first_iteration"].as_integer().unwrap(), "{file}");
        assert_eq!(iteration(times.last().unwrap()) as i64, e["last_iteration"].as_integer().unwrap(), "{file}");
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        let last = |metric: &str| of(&p, metric).last().and_then(|r| r.value);
        assert!(close(last("ms_per_iteration").unwrap(), num(&e["last_ms_per_iteration"])), "{file}");
        assert!(close(last("lm_loss").unwrap(), num(&e["last_lm_loss"])), "{file}");
        for (key, metric) in [
            ("last_tflops_per_gpu", "tflops_per_gpu"),
            ("last_tokens_per_gpu_per_s", "tokens_per_s_per_gpu"),
            ("last_samples_per_s", "samples_per_s"),
        ] {
            if let Some(want) = e.get(key) {
                assert!(close(last(metric).unwrap(), num(want)), "{file}: {key}");
            }
        }
        let batch = benchbook::vocab::metrics::parse_params(times.last().unwrap().params.axes.as_deref());
        assert_eq!(batch["global_batch_size"].as_i64(), e["global_batch_size"].as_integer(), "{file}");
        assert_eq!(
            p.settings.as_deref(),
            Some(format!("train iterations: {}", e["train_iters"].as_integer().unwrap()).as_str())
        );
    }
}

/// A row as the golden file shows it.
fn row_line(r: &Record) -> String {
    format!(
        "{} | {} | {} | {:?} {} | better {} | {}{}",
        r.line,
        r.params.metric.as_deref().unwrap_or("-"),
        r.params.axes.as_deref().unwrap_or("{}"),
        r.value,
        r.params.unit.as_deref().unwrap_or("-"),
        r.params.better.as_deref().unwrap_or("-"),
        r.status.as_str(),
        r.device.as_deref().map(|d| format!(" | {d}")).unwrap_or_default()
    )
}

#[test]
fn serving_and_training_rows_match_their_golden_files() {
    let bless = std::env::var("BENCHBOOK_BLESS").is_ok();
    let mut failures = Vec::new();
    for tool in ["vllm", "megatron"] {
        for (file, _) in logs(tool) {
            let p = parse(tool, &file);
            let mut got = format!("# {} rows of {file} as {}\n", p.records.len(), p.tool);
            for w in &p.warnings {
                got += &format!("# warning: {w}\n");
            }
            for r in &p.records {
                got += &row_line(r);
                got += "\n";
            }
            let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/golden/import/real")
                .join(tool)
                .join(format!("{file}.rows"));
            if bless {
                std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
                std::fs::write(&golden, &got).unwrap();
            } else if std::fs::read_to_string(&golden).ok().as_deref() != Some(got.as_str()) {
                failures.push(file);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "rows differ from tests/golden/import/real for {failures:?} (BENCHBOOK_BLESS=1 rewrites)"
    );
}

#[test]
fn every_file_goes_through_the_archive_as_metric_points() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    for tool in ["vllm", "megatron"] {
        for (file, _) in logs(tool) {
            let (result, parsed) = benchbook::session::import(
                &archive,
                &[real(tool).join(&file)],
                None,
                Some(&format!("{tool}-x")),
                &Silent,
            )
            .unwrap_or_else(|e| panic!("{file}: {e}"));
            let (_, df) = result.run.read(false).unwrap();
            let stats = benchbook::analysis::workload::metric_stats(&df).unwrap();
            let measured = parsed[0].records.iter().filter(|r| r.status == Status::Measured).count();
            assert_eq!(stats.len(), measured, "{file}: one metric point per measured record");
            assert!(stats.iter().all(|s| s.samples == 1 && s.ci.is_none()), "{file}: one sample, no interval");
            assert!(benchbook::analysis::point_stats(df.lazy()).unwrap().is_empty(), "{file}: no timed points");
        }
    }
}
