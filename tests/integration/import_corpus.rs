//! The importers against real logs that users of each tool published
//! (`tests/fixtures/import/real/`, sources in each folder's
//! `expected.toml`): every log imports with its published headline value
//! within 1 % and its number of points, its rows match golden files, it
//! goes through the archive and reads back, and mutated copies never
//! archive an impossible number.
//!
//! The expected values were read by hand from the logs, never from what
//! benchbook prints. Units are converted here with each tool's own
//! definition (perftest's MB/sec is 2^20 bytes/s, OSU's and BabelStream's
//! 10^6), independently of the importers' code.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use benchbook::import::{self, Parsed, Record};
use benchbook::prelude::*;
use benchbook::vocab::progress::Silent;
use proptest::prelude::*;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Expected {
    log: Vec<Log>,
}

#[derive(Debug, Clone, Deserialize)]
struct Log {
    file: String,
    source: String,
    commit: Option<String>,
    collective: Option<String>,
    /// False where only the page around the log names the collective.
    collective_in_log: Option<bool>,
    test: Option<String>,
    ranks: Option<u32>,
    points: usize,
    max_metric: String,
    max_value: f64,
    unit: String,
    buffers: Option<String>,
    array_size_bytes: Option<u64>,
    /// A documentation template with placeholders: no measurement, refused.
    #[serde(default)]
    refuse: bool,
    /// `osu_mbw_mr`: the best message rate (messages/s over all pairs).
    max_msg_rate: Option<f64>,
    /// nccl-tests `-d all`: the datatypes of the tables, in order.
    datatypes: Option<Vec<String>>,
    /// The device name the log's own device line prints, on every record.
    device: Option<String>,
}

const TOOLS: [&str; 6] = ["nccl-tests", "rccl-tests", "osu", "perftest", "nvbandwidth", "babelstream"];

fn real() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/real")
}

impl Log {
    fn path(&self, tool: &str) -> PathBuf {
        real().join(tool).join(&self.file)
    }
}

fn corpus() -> Vec<(&'static str, Log)> {
    let mut all = Vec::new();
    for tool in TOOLS {
        let text = std::fs::read_to_string(real().join(tool).join("expected.toml")).unwrap();
        let e: Expected = toml::from_str(&text).unwrap_or_else(|e| panic!("{tool}/expected.toml: {e}"));
        all.extend(e.log.into_iter().map(|l| (tool, l)));
    }
    all
}

/// Bytes per second of one unit as the tool defines it.
fn bytes_per_sec(tool: &str, unit: &str) -> f64 {
    match (tool, unit) {
        (_, "GB/s") => 1e9,
        (_, "Gb/s") => 1e9 / 8.0,
        ("perftest", "MB/sec") => 1048576.0, // perftest: format_factor 0x100000
        ("osu", "MB/s") => 1e6,
        ("babelstream", "MBytes/sec") => 1e6,
        other => panic!("no unit rule for {other:?}"),
    }
}

/// The benchbook op of a published test or collective name: nccl-tests'
/// `all_reduce_perf`, OSU's `osu_allreduce`, its non-blocking
/// `osu_iallreduce` and `osu_allreduce_persistent` (their call style is
/// the variant's, the op is the collective's).
fn norm_op(name: &str) -> String {
    let n = name.trim().trim_start_matches("osu_").trim_end_matches("_perf").trim_end_matches("_persistent");
    let n = n.replace('-', "_");
    let collectives = ["allreduce", "allgather", "alltoall", "bcast", "reduce", "gather", "scatter", "barrier"];
    let n = match n.strip_prefix('i') {
        Some(rest) if collectives.iter().any(|c| rest.starts_with(c)) => rest.to_string(),
        _ => n,
    };
    match n.as_str() {
        "alltoall" => "all_to_all".into(),
        "allreduce" => "all_reduce".into(),
        "allgather" => "all_gather".into(),
        "bcast" => "broadcast".into(),
        "reduce_scatter" | "reducescatter" => "reduce_scatter".into(),
        _ => n,
    }
}

fn is_latency(r: &Record) -> bool {
    r.params.op.contains("latency") || r.params.variant.as_deref().is_some_and(|v| v.contains("latency"))
}

/// The records the headline counts, and the headline (best value) itself.
fn headline(tool: &str, log: &Log, p: &Parsed) -> (usize, f64) {
    let rate = |r: &Record, bytes: u64| bytes as f64 / r.seconds_per_op / bytes_per_sec(tool, &log.unit);
    let measured = |r: &Record| r.status == Status::Measured;
    match tool {
        "nccl-tests" | "rccl-tests" => {
            let oop: Vec<&Record> =
                p.records.iter().filter(|r| r.params.variant.as_deref() == Some("out-of-place")).collect();
            let best = oop
                .iter()
                .filter(|r| measured(r))
                .map(|r| rate(r, r.params.bytes_copied.unwrap()) * r.params.bw_factor.unwrap_or(f64::NAN))
                .fold(f64::NAN, f64::max);
            (oop.len(), best)
        }
        "babelstream" => {
            let kernel = log.max_metric.rsplit(' ').next().unwrap().to_ascii_lowercase();
            let kernel = if kernel == "mul" { "scale".to_string() } else { kernel };
            let best = p
                .records
                .iter()
                .filter(|r| r.params.op == kernel)
                .map(|r| rate(r, r.params.bytes_moved.unwrap()))
                .fold(f64::NAN, f64::max);
            (p.records.len(), best)
        }
        "nvbandwidth" => {
            // Points count every test case's cells, latency ones included;
            // the headline is the best bandwidth.
            let best = p
                .records
                .iter()
                .filter(|r| measured(r) && !is_latency(r))
                .map(|r| rate(r, r.params.bytes_copied.unwrap()))
                .fold(f64::NAN, f64::max);
            (p.records.len(), best)
        }
        _ if matches!(log.unit.as_str(), "us" | "usec") => {
            let best =
                p.records.iter().filter(|r| measured(r)).map(|r| r.seconds_per_op * 1e6).fold(f64::NAN, f64::min);
            (p.records.len(), best)
        }
        _ => {
            let best = p
                .records
                .iter()
                .filter(|r| measured(r))
                .map(|r| rate(r, r.params.bytes_copied.unwrap()))
                .fold(f64::NAN, f64::max);
            (p.records.len(), best)
        }
    }
}

/// Parse a log under a neutral name: the fixture names were chosen here
/// and say what the log holds, which a user's file name need not.
fn parse_log(tool: &str, log: &Log) -> Result<Parsed, String> {
    let text = std::fs::read_to_string(log.path(tool)).unwrap();
    import::parse(Path::new("published.log"), &text, None).map_err(|e| format!("{e}"))
}

#[test]
fn the_corpus_is_big_enough_and_sourced() {
    let all = corpus();
    assert!(all.len() >= 80, "only {} real logs", all.len());
    for (tool, log) in &all {
        assert!(log.source.starts_with("https://"), "{tool}/{}: no source URL", log.file);
        assert!(
            log.commit.as_ref().is_some_and(|c| c.len() == 40)
                || log.source.contains("/issues/")
                || log.source.contains("/pull/")
                || log.source.contains("/discussions/"),
            "{tool}/{}: no commit",
            log.file
        );
        assert!(log.path(tool).exists(), "{tool}/{} missing", log.file);
    }
    let tools: BTreeSet<&str> = all.iter().map(|(t, _)| *t).collect();
    assert_eq!(tools.len(), TOOLS.len());
}

#[test]
fn every_real_log_imports_with_its_published_headline() {
    let mut failures = Vec::new();
    for (tool, log) in corpus() {
        if log.refuse || log.points == 0 {
            // A template of placeholders, or a run that stopped before any
            // value: refused, never read as zeros or as an empty success.
            if let Ok(p) = parse_log(tool, &log) {
                failures.push(format!(
                    "{tool}/{}: imported as {} records, expected a refusal",
                    log.file,
                    p.records.len()
                ));
            }
            continue;
        }
        let p = match parse_log(tool, &log) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{tool}/{}: {e}", log.file));
                continue;
            }
        };
        let (points, best) = headline(tool, &log, &p);
        let mut why = Vec::new();
        if points != log.points {
            why.push(format!("{points} points, published {}", log.points));
        }
        if (best / log.max_value - 1.0).abs().is_nan() || (best / log.max_value - 1.0).abs() > 0.01 {
            why.push(format!("{} {best:.4} {}, published {}", log.max_metric, log.unit, log.max_value));
        }
        if let Some(d) = &log.device {
            let got: BTreeSet<Option<&str>> = p.records.iter().map(|r| r.device.as_deref()).collect();
            if got != BTreeSet::from([Some(d.as_str())]) {
                why.push(format!("devices {got:?}, the log names {d:?}"));
            }
        }
        if let Some(n) = log.ranks {
            let got: BTreeSet<Option<u32>> = p.records.iter().map(|r| r.params.ranks).collect();
            if tool.ends_with("tests") && got != BTreeSet::from([Some(n)]) {
                why.push(format!("ranks {got:?}, published {n}"));
            }
        }
        if let Some(c) = &log.collective {
            let ops: BTreeSet<&str> = p.records.iter().map(|r| r.params.op.as_str()).collect();
            if log.collective_in_log == Some(false) {
                // Only the page names it: the importer must say it cannot
                // tell, or name the one collective the table's own columns
                // fit (all_reduce's busbw ratio, 2(n-1)/n, is no other's)
                // and say that this is where it came from.
                let unknown = ops == BTreeSet::from(["unknown_collective"])
                    && p.warnings.iter().any(|w| w.contains("which collective"));
                let inferred = ops == BTreeSet::from([norm_op(c).as_str()])
                    && p.warnings.iter().any(|w| w.contains("does not name its collective"));
                if !(unknown || inferred) {
                    why.push(format!(
                        "ops {ops:?}: the log does not say {c}, so the importer must not claim it unsaid"
                    ));
                }
            } else if ops != BTreeSet::from([norm_op(c).as_str()]) {
                why.push(format!("ops {ops:?}, published {c}"));
            }
        }
        if tool == "osu" {
            if let Some(t) = &log.test {
                let want = norm_op(&t.replace("osu_", ""));
                let ops: BTreeSet<&str> = p.records.iter().map(|r| r.params.op.as_str()).collect();
                if ops != BTreeSet::from([want.as_str()]) {
                    why.push(format!("ops {ops:?}, published {t}"));
                }
            }
            if let Some(b) = &log.buffers {
                // "host buffers", or "host buffers, non-blocking".
                let want = format!("{b} buffers");
                let fits = |v: &str| v == want || v.strip_prefix(want.as_str()).is_some_and(|r| r.starts_with(", "));
                if !p.records.iter().all(|r| r.params.variant.as_deref().is_some_and(fits)) {
                    why.push(format!("variant {:?}, published {want}", p.records[0].params.variant));
                }
            }
        }
        if let Some(want) = log.max_msg_rate {
            // Messages per second over all pairs: pairs (bytes / size) per op.
            let best = p
                .records
                .iter()
                .filter_map(|r| Some(r.params.bytes_copied? as f64 / r.params.size_bytes? as f64 / r.seconds_per_op))
                .fold(f64::NAN, f64::max);
            if (best / want - 1.0).abs().is_nan() || (best / want - 1.0).abs() > 0.01 {
                why.push(format!("message rate {best:.2}/s, published {want}"));
            }
        }
        if let Some(want) = &log.datatypes {
            // nccl-tests' names in benchbook's words.
            let word = |d: &str| {
                match d {
                    "int8" => "i8",
                    "uint8" => "u8",
                    "int32" => "i32",
                    "uint32" => "u32",
                    "int64" => "i64",
                    "uint64" => "u64",
                    "half" => "f16",
                    "float" => "f32",
                    "double" => "f64",
                    "bfloat16" => "bf16",
                    other => other,
                }
                .to_string()
            };
            let want: Vec<String> = want.iter().map(|d| word(d)).collect();
            let mut got: Vec<&str> = Vec::new();
            for r in &p.records {
                let d = r.params.dtype.as_deref().unwrap_or("none");
                if got.last() != Some(&d) {
                    got.push(d);
                }
            }
            if got != want.iter().map(String::as_str).collect::<Vec<_>>() {
                why.push(format!("datatypes {got:?}, published {want:?}"));
            }
        }
        if let Some(a) = log.array_size_bytes.filter(|a| *a > 0) {
            if !p.records.iter().all(|r| r.params.size_bytes == Some(a)) {
                why.push(format!("array size {:?}, published {a}", p.records[0].params.size_bytes));
            }
        }
        if p.records.iter().any(|r| r.note.contains("Some(") || r.note.contains("None")) {
            why.push("a note holds Rust debug text".into());
        }
        if !why.is_empty() {
            failures.push(format!("{tool}/{}: {}", log.file, why.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{} logs wrong:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn real_logs_match_their_golden_rows() {
    let bless = std::env::var("BENCHBOOK_BLESS").is_ok();
    let mut failures = Vec::new();
    for (tool, log) in corpus() {
        let got = match parse_log(tool, &log) {
            Ok(p) => crate::import::render(&p),
            Err(e) => format!("error: {e}\n"),
        };
        let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden/import/real")
            .join(tool)
            .join(format!("{}.rows", log.file));
        if bless {
            std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
            std::fs::write(&golden, &got).unwrap();
        } else if std::fs::read_to_string(&golden).ok().as_deref() != Some(got.as_str()) {
            failures.push(format!("{tool}/{}", log.file));
        }
    }
    assert!(
        failures.is_empty(),
        "rows differ from tests/golden/import/real for {failures:?} (BENCHBOOK_BLESS=1 rewrites; review the diff)"
    );
}

#[test]
fn every_real_log_goes_through_the_archive_and_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    for tool in TOOLS {
        let files: Vec<PathBuf> = corpus().into_iter().filter(|(t, _)| *t == tool).map(|(t, l)| l.path(t)).collect();
        for f in files {
            if import::parse(&f, &std::fs::read_to_string(&f).unwrap(), None).is_err() {
                continue; // reported by every_real_log_imports_with_its_published_headline
            }
            let (result, parsed) = benchbook::session::import(&archive, std::slice::from_ref(&f), None, None, &Silent)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let rows = result.run.rows().unwrap();
            // The import streams its records to the archive and keeps their count.
            assert!(parsed[0].records.is_empty());
            let whole = import::parse(&f, &std::fs::read_to_string(&f).unwrap(), None).unwrap();
            assert_eq!(rows.len(), parsed[0].record_count, "{}", f.display());
            assert_eq!(rows.len(), whole.records.len(), "{}", f.display());
            assert!(rows.iter().zip(&whole.records).all(|(row, r)| row.params == r.params), "{}", f.display());
            assert!(verify_run(&result.run).findings.is_empty(), "{}", f.display());
            assert!(
                rows.iter().all(|r| r.seconds.is_none_or(|s| s.is_finite() && s > 0.0)),
                "{}: a non-positive time archived",
                f.display()
            );
            let m = result.run.manifest().unwrap();
            let command = m.config.imported()[0].command.as_deref().unwrap_or("");
            assert!(
                !command.trim_start_matches('#').trim().starts_with("nThread"),
                "{}: command {command:?}",
                f.display()
            );
        }
    }
}

fn all_logs() -> Vec<(String, String)> {
    let mut logs: Vec<(String, String)> = corpus()
        .into_iter()
        .map(|(t, l)| {
            let text = std::fs::read_to_string(l.path(t)).unwrap();
            (format!("{t}/{}", l.file), text)
        })
        .collect();
    // The formats of round four, whose expected values have their own shape.
    for tool in ["imb", "rocm-bandwidth-test", "transferbench", "nccl-tests-json", "torch-allreduce"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(real().join(tool))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt" || e == "log" || e == "json"))
            .collect();
        files.sort();
        for f in files {
            let name = format!("{tool}/{}", f.file_name().unwrap().to_string_lossy());
            logs.push((name, std::fs::read_to_string(&f).unwrap()));
        }
    }
    // Layouts rebuilt from the tools' printing code (issue 68).
    let layouts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/layouts");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&layouts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    for f in files {
        logs.push((
            format!("layouts/{}", f.file_name().unwrap().to_string_lossy()),
            std::fs::read_to_string(&f).unwrap(),
        ));
    }
    logs
}

/// Replace one number-looking token with a hostile value.
fn poison(text: &str, which: usize, value: &str) -> String {
    let spans: Vec<(usize, usize)> = text
        .char_indices()
        .filter(|(i, c)| {
            c.is_ascii_digit()
                && (*i == 0 || !text.as_bytes()[i - 1].is_ascii_alphanumeric() && text.as_bytes()[i - 1] != b'.')
        })
        .map(|(i, _)| {
            let end = text[i..].find(|c: char| !(c.is_ascii_digit() || c == '.')).map_or(text.len(), |e| i + e);
            (i, end)
        })
        .collect();
    if spans.is_empty() {
        return text.to_string();
    }
    let (a, b) = spans[which % spans.len()];
    format!("{}{}{}", &text[..a], value, &text[b..])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    /// Mutated real logs: nothing panics, and whatever is accepted holds
    /// only finite, positive times and rates below a physical bound.
    #[test]
    fn mutated_real_logs_never_archive_impossible_numbers(
        which in 0usize..128,
        token in 0usize..5000,
        value in prop::sample::select(vec![
            "0", "-1", "-197.5", "1e308", "1e26", "inf", "NaN", "99999999999999999999999",
            "0.000", "-0", "18446744073709551615", "1e-320",
        ]),
        cut in prop::option::of(0usize..20000),
    ) {
        let logs = all_logs();
        let (name, text) = &logs[which % logs.len()];
        let mut mutated = poison(text, token, value);
        if let Some(c) = cut {
            let at = mutated.char_indices().map(|(i, _)| i).take_while(|i| *i <= c).last().unwrap_or(0);
            mutated.truncate(at);
        }
        if let Ok(p) = import::parse(Path::new(name), &mutated, None) {
            for r in &p.records {
                if r.status != Status::Measured {
                    continue;
                }
                prop_assert!(r.seconds_per_op.is_finite() && r.seconds_per_op > 0.0,
                    "{name} ({value}): line {} has {} s", r.line, r.seconds_per_op);
                for bytes in [r.params.bytes_copied, r.params.bytes_moved].into_iter().flatten() {
                    let gbps = bytes as f64 / r.seconds_per_op / 1e9;
                    prop_assert!(gbps <= import::MAX_GB_PER_S, "{name} ({value}): line {} at {gbps} GB/s", r.line);
                }
                if let Some(f) = r.params.bw_factor {
                    prop_assert!(f.is_finite() && f > 0.0, "{name}: bus factor {f}");
                }
            }
        }
    }
}

/// One block of a real IMB-MPI1 log and its hand-read values
/// (`tests/fixtures/import/real/imb/expected.toml`).
#[derive(Debug, Deserialize)]
struct ImbBlock {
    file: String,
    source: String,
    commit: Option<String>,
    benchmark: String,
    processes: Option<u32>,
    rows: usize,
    max_mbytes_per_sec: Option<f64>,
    min_t_usec: Option<f64>,
    max_msg_per_sec: Option<f64>,
}

#[test]
fn every_real_imb_log_imports_with_its_hand_read_values() {
    #[derive(Deserialize)]
    struct Blocks {
        log: Vec<ImbBlock>,
    }
    let dir = real().join("imb");
    let e: Blocks = toml::from_str(&std::fs::read_to_string(dir.join("expected.toml")).unwrap()).unwrap();
    assert!(e.log.len() >= 10, "{} IMB blocks", e.log.len());
    let mut failures = Vec::new();
    for b in &e.log {
        assert!(b.source.starts_with("https://"), "{}", b.file);
        assert!(b.commit.as_ref().is_some_and(|c| c.len() == 40) || b.source.contains("/issues/"), "{}", b.file);
        let text = std::fs::read_to_string(dir.join(&b.file)).unwrap();
        let p = match import::parse(Path::new(&b.file), &text, None) {
            Ok(p) if p.tool == "imb" => p,
            Ok(p) => {
                failures.push(format!("{}: read as {}", b.file, p.tool));
                continue;
            }
            Err(err) => {
                failures.push(format!("{}: {err}", b.file));
                continue;
            }
        };
        let op = norm_op(&b.benchmark.to_ascii_lowercase());
        let rows: Vec<&Record> = p
            .records
            .iter()
            .filter(|r| r.params.op == op && (b.processes.is_none() || r.params.ranks == b.processes))
            .collect();
        let mut why = Vec::new();
        if rows.len() != b.rows {
            why.push(format!("{} rows, published {}", rows.len(), b.rows));
        }
        let near = |a: f64, b: f64| (a / b - 1.0).abs() <= 0.01;
        if let Some(max) = b.max_mbytes_per_sec {
            // Bytes per second, against the printed Mbytes/sec in either
            // unit: the importer reads each block's unit from its arithmetic.
            let best = rows
                .iter()
                .filter_map(|r| Some(r.params.bytes_copied? as f64 / r.seconds_per_op))
                .fold(f64::NAN, f64::max);
            if !near(best, max * 1e6) && !near(best, max * 1048576.0) {
                why.push(format!("best {best:.0} B/s, published {max} Mbytes/sec"));
            }
        }
        if let (Some(min), true) = (
            b.min_t_usec,
            ["pingpong", "pingping"].contains(&op.as_str()) || rows.iter().all(|r| r.params.bench == "collective"),
        ) {
            let got = rows.iter().map(|r| r.seconds_per_op * 1e6).fold(f64::NAN, f64::min);
            if !near(got, min) {
                why.push(format!("smallest time {got:.3} us, published {min}"));
            }
        }
        if let Some(rate) = b.max_msg_per_sec {
            let got = rows.iter().map(|r| 1.0 / r.seconds_per_op).fold(f64::NAN, f64::max);
            if !near(got, rate) {
                why.push(format!("{got:.0} messages/s, published {rate}"));
            }
        }
        if !why.is_empty() {
            failures.push(format!("{} {}: {}", b.file, b.benchmark, why.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A real rocm-bandwidth-test log and its hand-read values.
#[derive(Debug, Deserialize)]
struct RocmLog {
    file: String,
    source: String,
    commit: Option<String>,
    max_gbps: f64,
    min_gbps: f64,
    uni_max_gbps: Option<f64>,
    bidir_max_gbps: Option<f64>,
}

#[test]
fn every_real_rocm_bandwidth_test_log_imports_with_its_hand_read_values() {
    #[derive(Deserialize)]
    struct Logs {
        log: Vec<RocmLog>,
    }
    let dir = real().join("rocm-bandwidth-test");
    let e: Logs = toml::from_str(&std::fs::read_to_string(dir.join("expected.toml")).unwrap()).unwrap();
    assert!(e.log.len() >= 4, "{} logs", e.log.len());
    let mut failures = Vec::new();
    for l in &e.log {
        assert!(l.source.starts_with("https://"), "{}", l.file);
        assert!(l.commit.as_ref().is_some_and(|c| c.len() == 40) || l.source.contains("/issues/"), "{}", l.file);
        let text = std::fs::read_to_string(dir.join(&l.file)).unwrap();
        let p = match import::parse(Path::new(&l.file), &text, None) {
            Ok(p) if p.tool == "rocm-bandwidth-test" => p,
            Ok(p) => {
                failures.push(format!("{}: read as {}", l.file, p.tool));
                continue;
            }
            Err(err) => {
                failures.push(format!("{}: {err}", l.file));
                continue;
            }
        };
        let gbps = |r: &&Record| r.params.bytes_copied.unwrap() as f64 / r.seconds_per_op / 1e9;
        let of = |bidir: Option<bool>| -> Vec<f64> {
            p.records
                .iter()
                .filter(|r| bidir.is_none_or(|b| r.params.op.ends_with("_bidir") == b))
                .map(|r| gbps(&r))
                .collect()
        };
        let max = |v: Vec<f64>| v.into_iter().fold(f64::NAN, f64::max);
        let near = |a: f64, b: f64| (a / b - 1.0).abs() <= 0.01;
        let mut why = Vec::new();
        for (what, got, want) in [
            ("max", max(of(None)), Some(l.max_gbps)),
            ("min", of(None).into_iter().fold(f64::NAN, f64::min), Some(l.min_gbps)),
            ("unidirectional max", max(of(Some(false))), l.uni_max_gbps),
            ("bidirectional max", max(of(Some(true))), l.bidir_max_gbps),
        ] {
            if let Some(want) = want {
                if !near(got, want) {
                    why.push(format!("{what} {got:.3} GB/s, published {want}"));
                }
            }
        }
        if !why.is_empty() {
            failures.push(format!("{}: {}", l.file, why.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A real TransferBench log and its hand-read values.
#[derive(Debug, Deserialize)]
struct TransferBenchLog {
    file: String,
    source: String,
    commit: Option<String>,
    preset: String,
    max_gbps: f64,
    min_gbps: f64,
    max_gpu_gpu_gbps: Option<f64>,
    min_gpu_gpu_gbps: Option<f64>,
    transfers_gbps: Option<Vec<f64>>,
}

#[test]
fn every_real_transferbench_table_and_config_run_imports_with_its_published_rates() {
    #[derive(Deserialize)]
    struct Logs {
        log: Vec<TransferBenchLog>,
    }
    let dir = real().join("transferbench");
    let e: Logs = toml::from_str(&std::fs::read_to_string(dir.join("expected.toml")).unwrap()).unwrap();
    assert!(e.log.len() >= 6, "{} logs", e.log.len());
    let mut failures = Vec::new();
    for l in &e.log {
        assert!(l.source.starts_with("https://"), "{}", l.file);
        assert!(l.commit.as_ref().is_some_and(|c| c.len() == 40) || l.source.contains("/issues/"), "{}", l.file);
        let text = std::fs::read_to_string(dir.join(&l.file)).unwrap();
        let parsed = import::parse(Path::new(&l.file), &text, None);
        if l.preset.starts_with("config") {
            // A row per `Transfer NN` line, at its printed rate.
            match parsed {
                Ok(p) => {
                    let mut got: Vec<f64> = p
                        .records
                        .iter()
                        .map(|r| r.params.bytes_copied.unwrap() as f64 / r.seconds_per_op / 1e9)
                        .collect();
                    let mut want = l.transfers_gbps.clone().unwrap_or_default();
                    got.sort_by(f64::total_cmp);
                    want.sort_by(f64::total_cmp);
                    if got.len() != want.len() || got.iter().zip(&want).any(|(g, w)| (g / w - 1.0).abs() > 0.001) {
                        failures.push(format!("{}: transfers {got:?}, published {want:?}", l.file));
                    }
                }
                Err(err) => failures.push(format!("{}: {err}", l.file)),
            }
            continue;
        }
        let p = match parsed {
            Ok(p) if p.tool == "transferbench" => p,
            other => {
                failures.push(format!("{}: {:?}", l.file, other.map(|p| p.tool)));
                continue;
            }
        };
        // p2p: the unidirectional GPU → GPU block; a2a: its table.
        let want = if l.preset == "a2a" { "all-to-all" } else { "unidirectional" };
        let rates: Vec<f64> = p
            .records
            .iter()
            .filter(|r| r.params.bench == "memcpy-peer" && r.params.variant.as_deref() == Some(want))
            .map(|r| r.params.bytes_copied.unwrap() as f64 / r.seconds_per_op / 1e9)
            .collect();
        let (max, min) =
            (rates.iter().copied().fold(f64::NAN, f64::max), rates.iter().copied().fold(f64::NAN, f64::min));
        let (want_max, want_min) = (l.max_gpu_gpu_gbps.unwrap_or(l.max_gbps), l.min_gpu_gpu_gbps.unwrap_or(l.min_gbps));
        let near = |a: f64, b: f64| (a / b - 1.0).abs() <= 0.01;
        if !near(max, want_max) || !near(min, want_min) {
            failures.push(format!("{}: GPU → GPU {min:.3}–{max:.3} GB/s, published {want_min}–{want_max}", l.file));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn real_nccl_tests_json_imports_as_the_text_table_would_and_a_failed_run_is_refused() {
    #[derive(Deserialize)]
    struct Logs {
        log: Vec<toml::Table>,
    }
    let dir = real().join("nccl-tests-json");
    let e: Logs = toml::from_str(&std::fs::read_to_string(dir.join("expected.toml")).unwrap()).unwrap();
    assert!(e.log.len() >= 2);
    for l in &e.log {
        let file = l["file"].as_str().unwrap();
        assert!(l["source"].as_str().unwrap().starts_with("https://") && l["commit"].as_str().unwrap().len() == 40);
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let parsed = import::parse(Path::new(file), &text, None);
        if l.get("refuse").and_then(|r| r.as_bool()) == Some(true) {
            let err = parsed.expect_err(file).to_string();
            assert!(err.contains("nccl-tests JSON with no `results`"), "{file}: {err}");
            continue;
        }
        let p = parsed.unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(p.tool, "nccl-tests-json");
        let oop: Vec<&Record> =
            p.records.iter().filter(|r| r.params.variant.as_deref() == Some("out-of-place")).collect();
        assert_eq!(oop.len() as i64, l["points"].as_integer().unwrap(), "{file}");
        let r = oop.iter().max_by(|a, b| (a.params.size_bytes).cmp(&b.params.size_bytes)).unwrap();
        assert_eq!(r.params.op, l["collective"].as_str().unwrap(), "{file}");
        assert_eq!(r.params.ranks.map(i64::from), l["ranks"].as_integer(), "{file}");
        let algbw = r.params.bytes_copied.unwrap() as f64 / r.seconds_per_op / 1e9;
        let busbw = algbw * r.params.bw_factor.unwrap();
        for (got, key) in [(algbw, "max_algbw_gbps"), (busbw, "max_busbw_gbps")] {
            let want = l[key].as_float().unwrap();
            assert!((got / want - 1.0).abs() < 0.01, "{file}: {key} {got}, published {want}");
        }
    }
}

#[test]
fn real_all_reduce_bench_logs_import_with_their_printed_bandwidths() {
    #[derive(Deserialize)]
    struct Logs {
        log: Vec<toml::Table>,
    }
    let dir = real().join("torch-allreduce");
    let e: Logs = toml::from_str(&std::fs::read_to_string(dir.join("expected.toml")).unwrap()).unwrap();
    let ours: Vec<&toml::Table> = e.log.iter().filter(|l| l.get("tool").and_then(|t| t.as_str()).is_some()).collect();
    assert!(ours.len() >= 10, "{} logs", ours.len());
    let mut failures = Vec::new();
    for l in ours {
        let file = l["file"].as_str().unwrap();
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let p = match import::parse(Path::new(file), &text, None) {
            Ok(p) => p,
            Err(err) => {
                failures.push(format!("{file}: {err}"));
                continue;
            }
        };
        let rate = |r: &Record| r.params.bytes_copied.unwrap() as f64 / r.seconds_per_op / 1e9;
        let best = p
            .records
            .iter()
            .max_by(|a, b| (rate(a) * a.params.bw_factor.unwrap()).total_cmp(&(rate(b) * b.params.bw_factor.unwrap())))
            .unwrap();
        let (alg, bus) =
            (p.records.iter().map(rate).fold(f64::NAN, f64::max), rate(best) * best.params.bw_factor.unwrap());
        let near = |a: f64, b: f64| (a / b - 1.0).abs() <= 0.01;
        let mut why = Vec::new();
        if p.records.len() as i64 != l["points"].as_integer().unwrap() {
            why.push(format!("{} points, published {:?}", p.records.len(), l["points"]));
        }
        if !near(bus, l["max_busbw_gbps"].as_float().unwrap()) {
            why.push(format!("busbw {bus:.3}, published {:?}", l["max_busbw_gbps"]));
        }
        if !near(alg, l["max_algbw_gbps"].as_float().unwrap()) {
            why.push(format!("algbw {alg:.3}, published {:?}", l["max_algbw_gbps"]));
        }
        if best.params.size_bytes.map(|s| s as i64) != l["at_bytes"].as_integer() {
            why.push(format!("peak at {:?} bytes, published {:?}", best.params.size_bytes, l["at_bytes"]));
        }
        if l.get("ranks_in_log").and_then(|v| v.as_bool()) != Some(false) {
            if let Some(n) = l.get("ranks").and_then(|r| r.as_integer()) {
                if best.params.ranks.map(i64::from) != Some(n) {
                    why.push(format!("ranks {:?}, published {n}", best.params.ranks));
                }
            }
        }
        if !why.is_empty() {
            failures.push(format!("{file}: {}", why.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
