//! The serving and training importers (vLLM serving text and JSON, vLLM's
//! offline throughput line, Megatron and torchtitan logs) against real
//! outputs their users published (`tests/fixtures/import/real/{vllm,
//! vllm-throughput,megatron,torchtitan}/`, sources in each folder's
//! `expected.toml`). Every value the file prints and the expected file
//! lists (read by hand, never from benchbook's output) must come back
//! exactly; the rows match golden files; every file goes through the
//! archive and reads back as metric points; documentation templates of
//! placeholders are refused; mutated files never archive an impossible
//! value.

/// The folders of this test, one per tool.
const TOOLS: [&str; 6] = ["vllm", "vllm-throughput", "megatron", "torchtitan", "sglang", "trtllm-bench"];

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use benchbook::import::{self, Parsed, Record};
use benchbook::prelude::*;
use benchbook::vocab::progress::Silent;
use proptest::prelude::*;

fn real(tool: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/real").join(tool)
}

/// Each `[[log]]` of a folder's expected.toml that holds measurements: the
/// file and its hand-read values.
fn logs(tool: &str) -> Vec<(String, BTreeMap<String, toml::Value>)> {
    entries(tool).into_iter().filter(|(_, e)| e.get("refuse").and_then(|r| r.as_bool()) != Some(true)).collect()
}

/// Every `[[log]]` of a folder's expected.toml, templates (`refuse = true`)
/// included.
fn entries(tool: &str) -> Vec<(String, BTreeMap<String, toml::Value>)> {
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
        "successful_requests"
        | "failed_requests"
        | "duration_s"
        | "latency_per_token_s_mean"
        | "latency_per_output_token_s_mean" => key,
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
fn sglang_outputs_import_as_sglang_with_every_published_value() {
    let all = logs("sglang");
    assert!(all.len() >= 4, "the corpus holds {} SGLang outputs", all.len());
    for (file, e) in all {
        let p = parse("sglang", &file);
        assert_eq!(p.tool, "sglang-serve", "{file}: read as {}", p.tool);
        let mut checked = 0;
        for (key, want) in &e {
            let Some(metric) = vllm_metric(key) else { continue };
            let got = of(&p, &metric);
            let first = got.first().unwrap_or_else(|| panic!("{file}: no `{metric}` row for `{key}`"));
            assert_eq!(first.value, Some(num(want)), "{file}: {key} → {metric}");
            checked += 1;
        }
        assert!(checked >= 3, "{file}: only {checked} values checked");
        let blocks = e.get("blocks").map_or(1, |b| b.as_integer().unwrap() as usize);
        assert_eq!(of(&p, "requests_per_s").len(), blocks, "{file}: one result per block");
    }
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
            ("last_ds_tflops_per_gpu", "ds_tflops_per_gpu"),
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
    for tool in TOOLS {
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
    for tool in TOOLS {
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
            let whole = parse(tool, &file);
            assert_eq!(parsed[0].record_count, whole.records.len(), "{file}");
            let measured = whole.records.iter().filter(|r| r.status == Status::Measured).count();
            assert_eq!(stats.len(), measured, "{file}: one metric point per measured record");
            assert!(stats.iter().all(|s| s.samples == 1 && s.ci.is_none()), "{file}: one sample, no interval");
            assert!(benchbook::analysis::point_stats(df.lazy()).unwrap().is_empty(), "{file}: no timed points");
        }
    }
}

/// A hand-read value as the file printed it (`"6,344"`, `"39.51%"`).
fn printed(v: &toml::Value) -> f64 {
    match v.as_str() {
        Some(s) => s.trim_end_matches('%').replace(',', "").parse().unwrap(),
        None => num(v),
    }
}

#[test]
fn torchtitan_logs_import_every_published_value() {
    let all = logs("torchtitan");
    assert!(all.len() >= 6);
    for (file, e) in all {
        let p = parse("torchtitan", &file);
        assert_eq!(p.tool, "torchtitan", "{file}");
        let step = |r: &Record| benchbook::vocab::metrics::parse_params(r.params.axes.as_deref())["step"].as_u64();
        let losses = of(&p, "loss");
        // A step several ranks printed is one point.
        let steps = e.get("distinct_steps").unwrap_or(&e["steps"]).as_integer().unwrap();
        assert_eq!(losses.len() as i64, steps, "{file}: one loss per step");
        assert_eq!(step(losses[0]), e["first_step"].as_integer().map(|s| s as u64), "{file}");
        assert_eq!(step(losses.last().unwrap()), e["last_step"].as_integer().map(|s| s as u64), "{file}");
        let last = |metric: &str| of(&p, metric).last().and_then(|r| r.value);
        let (gib, pct) = e["last_memory"].as_str().unwrap().split_once("GiB(").unwrap();
        for (key, metric, want) in [
            ("last_loss", "loss", e.get("last_loss").map(printed)),
            ("last_grad_norm", "grad_norm", e.get("last_grad_norm").map(printed)),
            // Logs from 2024 print `wps` for what is now `tps`.
            ("last_tps", "tokens_per_s_per_gpu", e.get("last_tps").or(e.get("last_wps")).map(printed)),
            ("last_tflops", "tflops_per_gpu", e.get("last_tflops").map(printed)),
            ("last_mfu", "mfu_pct", e.get("last_mfu").map(printed)),
            ("last_memory", "memory_gib", Some(gib.parse().unwrap())),
            ("last_memory", "memory_pct", Some(pct.trim_end_matches("%)").parse().unwrap())),
        ] {
            match want {
                Some(w) => assert_eq!(last(metric), Some(w), "{file}: {key} → {metric}"),
                None => assert!(of(&p, metric).is_empty(), "{file}: {metric} without {key} in the log"),
            }
        }
        assert!(of(&p, "tokens_per_s_per_gpu").iter().all(|r| r.params.unit.as_deref() == Some("tokens/s/GPU")));
        assert!(of(&p, "mfu_pct").iter().all(|r| r.params.better.as_deref() == Some("higher")));
    }
    // The model and the parallelism, where the log prints them.
    let p = parse("torchtitan", "qwen3_14b_8xb200_fsdp8_whole_run_log_set_x_trace_10steps.log");
    let axes = benchbook::vocab::metrics::parse_params(of(&p, "loss")[0].params.axes.as_deref());
    assert_eq!(axes["model"].as_str(), Some("qwen3 14B"));
    assert_eq!(axes["parallelism"].as_str(), Some("dp_shard=8"));
}

/// The rows of vLLM's offline `Throughput:` lines, also where a serving
/// summary shares the file.
fn offline<'a>(p: &'a Parsed, metric: &str) -> Vec<&'a Record> {
    of(p, metric).into_iter().filter(|r| r.params.bench == "vllm-throughput").collect()
}

#[test]
fn vllm_throughput_outputs_import_every_published_value() {
    let all = logs("vllm-throughput");
    assert!(all.len() >= 7);
    for (file, e) in all {
        let p = parse("vllm-throughput", &file);
        assert!(p.tool == "vllm-throughput" || p.tool == "vllm-serve", "{file}: read as {}", p.tool);
        let results = e["results"].as_integer().unwrap() as usize;
        assert_eq!(offline(&p, "requests_per_s").len(), results, "{file}: one result per Throughput line");
        // Several runs list their values; one run's are the entry's own.
        let whole: toml::Table = e.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let runs: Vec<toml::Table> = match e.get("runs") {
            Some(r) => r.as_array().unwrap().iter().map(|t| t.as_table().unwrap().clone()).collect(),
            None => vec![whole],
        };
        for key in ["requests_per_s", "total_tokens_per_s", "output_tokens_per_s"] {
            let want: Vec<f64> = runs
                .iter()
                .filter_map(|r| r[key].as_str().filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()))
                .collect();
            let got: Vec<f64> = offline(&p, key).iter().filter_map(|r| r.value).collect();
            assert_eq!(got, want, "{file}: {key}");
        }
        for (key, metric) in [("total_prompt_tokens", "prompt_tokens"), ("total_output_tokens", "output_tokens")] {
            let want = e.get(key).map(printed);
            assert_eq!(offline(&p, metric).last().and_then(|r| r.value), want, "{file}: {key}");
        }
    }
}

#[test]
fn documentation_templates_are_refused_as_templates() {
    let templates: Vec<(String, String)> = TOOLS
        .iter()
        .flat_map(|t| entries(t).into_iter().map(move |(f, e)| (t.to_string(), f, e)))
        .filter(|(_, _, e)| e.get("refuse").and_then(|r| r.as_bool()) == Some(true))
        .map(|(t, f, _)| (t, f))
        .collect();
    assert!(templates.len() >= 2);
    for (tool, file) in templates {
        let path = real(&tool).join(&file);
        let text = std::fs::read_to_string(&path).unwrap();
        let err = import::parse(&path, &text, None).map(|p| p.records.len()).expect_err(&file);
        // A template says so; a run that never printed its report says that.
        let err = err.to_string();
        assert!(err.contains("placeholder") || err.contains("ended before its report"), "{file}: {err}");
    }
}

/// Every file of the workload corpus, as text.
fn workload_texts() -> Vec<(String, String)> {
    TOOLS
        .iter()
        .flat_map(|t| logs(t).into_iter().map(move |(f, _)| (t, f)))
        .map(|(t, f)| (f.clone(), std::fs::read_to_string(real(t).join(&f)).unwrap()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    /// Mutated serving and training outputs: nothing panics, and whatever
    /// is accepted holds only finite, non-negative values within each
    /// unit's physical bound.
    #[test]
    fn mutated_workload_files_never_archive_impossible_values(
        which in 0usize..64,
        token in 0usize..5000,
        value in prop::sample::select(vec![
            "-1", "-99999999999999", "1e308", "inf", "NaN", "18446744073709551615", "-2147483649",
            "99999999999999999999999", "-0.5", "1e-320", "xxx.xx",
        ]),
    ) {
        let texts = workload_texts();
        let (name, text) = &texts[which % texts.len()];
        // Replace one number with the hostile value.
        let starts: Vec<usize> = text
            .char_indices()
            .filter(|(i, c)| c.is_ascii_digit() && (*i == 0 || !text.as_bytes()[i - 1].is_ascii_alphanumeric()))
            .map(|(i, _)| i)
            .collect();
        prop_assume!(!starts.is_empty());
        let a = starts[token % starts.len()];
        let b = text[a..].find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')).map_or(text.len(), |e| a + e);
        let mutated = format!("{}{}{}", &text[..a], value, &text[b..]);
        if let Ok(p) = import::parse(Path::new(name), &mutated, None) {
            for r in p.records.iter().filter(|r| r.status == Status::Measured) {
                let v = r.value.unwrap();
                let unit = r.params.unit.as_deref().unwrap_or("");
                prop_assert!(v.is_finite() && v >= 0.0, "{name} ({value}): line {} has {v} {unit}", r.line);
                prop_assert!(v <= import::metric_bound(unit), "{name} ({value}): line {} has {v:e} {unit}", r.line);
            }
        }
    }
}

#[test]
fn trtllm_bench_reports_import_every_published_value_and_templates_are_refused() {
    let all = entries("trtllm-bench");
    assert!(all.len() >= 6, "{} reports", all.len());
    let keys = [
        ("request_throughput_req_per_s", "requests_per_s"),
        ("output_tokens_per_s", "output_tokens_per_s"),
        ("total_token_throughput_tokens_per_s", "total_tokens_per_s"),
        ("mean_ttft_ms", "ttft_ms_mean"),
        ("mean_tpot_ms", "tpot_ms_mean"),
        ("total_latency_ms", "total_latency_ms"),
    ];
    for (file, e) in all {
        let path = real("trtllm-bench").join(&file);
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = benchbook::import::parse(&path, &text, None);
        if e.get("refuse").and_then(|r| r.as_bool()) == Some(true) {
            let err = parsed.expect_err(&file).to_string();
            assert!(err.contains("template") || err.contains("before its report"), "{file}: {err}");
            continue;
        }
        let p = parsed.unwrap_or_else(|err| panic!("{file}: {err}"));
        assert_eq!(p.tool, "trtllm-bench", "{file}");
        let mut checked = 0;
        for (key, metric) in keys {
            let Some(want) = e.get(key) else { continue };
            let got = of(&p, metric).first().and_then(|r| r.value);
            assert_eq!(got, Some(num(want)), "{file}: {key} → {metric}");
            checked += 1;
        }
        // 0.12–0.16's STATISTICS block prints the total latency in seconds.
        if let Some(want) = e.get("total_latency_s") {
            let got = of(&p, "total_latency_ms").first().and_then(|r| r.value).unwrap_or(f64::NAN);
            assert!(
                (got / (num(want) * 1e3) - 1.0).abs() < 1e-12,
                "{file}: total latency {got} ms, printed {want:?} s"
            );
            checked += 1;
        }
        assert!(checked >= 2, "{file}: only {checked} values checked");
    }
}
