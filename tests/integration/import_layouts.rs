//! Layouts of the tools benchbook reads for which no published log was
//! found, rebuilt from each tool's own printing code at a tag
//! (`tests/fixtures/import/layouts/`, with invented values; SOURCES.md
//! quotes every print statement): each is claimed by its importer and gives
//! the rows and values read by hand from the file, or is refused with its
//! reason. Also: what `import` says about a file that names a tool but fits
//! no layout, about tools it has no importer for, and `import --explain`
//! through the real binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use benchbook::import::{self, Parsed};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Layouts {
    layout: Vec<Layout>,
}

#[derive(Debug, Deserialize)]
struct Layout {
    file: String,
    tool: String,
    version: String,
    source: String,
    format: Option<String>,
    /// The file name to parse under (default: a neutral one).
    name: Option<String>,
    records: Option<usize>,
    max_gbps: Option<f64>,
    /// The lowest latency printed, in µs.
    min_us: Option<f64>,
    #[serde(default)]
    busbw: bool,
    #[serde(default)]
    moved: bool,
    method: Option<String>,
    /// The variants the rows must carry (`in-place` for an in-place-only
    /// table).
    variants: Option<Vec<String>>,
    values: Option<BTreeMap<String, f64>>,
    #[serde(default)]
    refuse: bool,
    reason: Option<String>,
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/layouts")
}

fn layouts() -> Vec<Layout> {
    let text = std::fs::read_to_string(dir().join("layouts.toml")).unwrap();
    toml::from_str::<Layouts>(&text).unwrap().layout
}

/// Parse under a neutral name (the fixture's name says what it holds), or
/// the entry's `name`.
fn parse(file: &str, name: Option<&str>) -> Result<Parsed, String> {
    let text = std::fs::read_to_string(dir().join(file)).unwrap();
    import::parse(Path::new(name.unwrap_or("output.log")), &text, None).map_err(|e| e.to_string())
}

#[test]
fn every_layout_is_listed_with_its_source() {
    let listed: Vec<String> = layouts().into_iter().map(|l| l.file).collect();
    let sources = std::fs::read_to_string(dir().join("SOURCES.md")).unwrap();
    for entry in std::fs::read_dir(dir()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".txt") {
            assert!(listed.contains(&name), "{name} is not in layouts.toml");
            assert!(sources.contains(&format!("## `{name}`")), "{name} has no entry in SOURCES.md");
        }
    }
    for l in layouts() {
        assert!(!l.tool.is_empty() && !l.version.is_empty() && l.source.contains(' '), "{}", l.file);
        assert!(l.refuse || l.format.is_some(), "{}: no format", l.file);
    }
}

#[test]
fn every_reconstructed_layout_imports_with_its_hand_read_values() {
    let mut failures = Vec::new();
    for l in layouts() {
        let parsed = parse(&l.file, l.name.as_deref());
        if l.refuse {
            if let Ok(p) = parsed {
                failures.push(format!(
                    "{}: read as {} ({} rows); expected a refusal: {:?}",
                    l.file,
                    p.tool,
                    p.records.len(),
                    l.reason
                ));
            }
            continue;
        }
        let p = match parsed {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{}: {e}", l.file));
                continue;
            }
        };
        let mut why = Vec::new();
        if Some(&p.tool) != l.format.as_ref() {
            why.push(format!("read as {}, expected {:?}", p.tool, l.format));
        }
        if let Some(n) = l.records {
            if p.records.len() != n {
                why.push(format!("{} rows, expected {n}", p.records.len()));
            }
        }
        if let Some(want) = l.max_gbps {
            let best = p
                .records
                .iter()
                .filter(|r| r.value.is_none())
                .filter_map(|r| {
                    let bytes = if l.moved { r.params.bytes_moved? } else { r.params.bytes_copied? };
                    let factor = if l.busbw { r.params.bw_factor? } else { 1.0 };
                    Some(bytes as f64 / r.seconds_per_op / 1e9 * factor)
                })
                .fold(f64::NAN, f64::max);
            if (best / want - 1.0).abs().is_nan() || (best / want - 1.0).abs() > 0.005 {
                why.push(format!("best {best:.4} GB/s, printed {want}"));
            }
        }
        if let Some(want) = l.min_us {
            let best = p.records.iter().map(|r| r.seconds_per_op * 1e6).fold(f64::NAN, f64::min);
            if (best / want - 1.0).abs().is_nan() || (best / want - 1.0).abs() > 1e-9 {
                why.push(format!("lowest {best} us, printed {want}"));
            }
        }
        if let Some(m) = &l.method {
            if !p.records.iter().all(|r| r.params.method.as_deref() == Some(m.as_str())) {
                why.push(format!("method {:?}, expected {m}", p.records[0].params.method));
            }
        }
        if let Some(want) = &l.variants {
            let got: std::collections::BTreeSet<String> =
                p.records.iter().filter_map(|r| r.params.variant.clone()).collect();
            if got.iter().collect::<Vec<_>>() != want.iter().collect::<Vec<_>>() {
                why.push(format!("variants {got:?}, expected {want:?}"));
            }
        }
        for (metric, want) in l.values.iter().flatten() {
            let got: Vec<f64> = p
                .records
                .iter()
                .filter(|r| r.params.metric.as_deref() == Some(metric))
                .filter_map(|r| r.value)
                .collect();
            if got.is_empty() || got.iter().any(|g| (g / want - 1.0).abs() > 1e-9) {
                why.push(format!("{metric} {got:?}, printed {want}"));
            }
        }
        if !why.is_empty() {
            failures.push(format!("{}: {}", l.file, why.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_file_that_names_a_tool_but_fits_no_layout_is_refused_naming_tool_version_and_line() {
    // nccl-tests 2.19.6 output with its table header cut: only the
    // version line names the tool.
    let text = std::fs::read_to_string(dir().join("nccl-tests_v2.19.6_all_reduce_perf_per-iter-I1.txt")).unwrap();
    let cut: String = text.lines().filter(|l| !l.contains("algbw")).map(|l| format!("{l}\n")).collect();
    let err = import::parse(Path::new("cut.log"), &cut, None).unwrap_err().to_string();
    assert!(err.contains("looks like nccl-tests 2.19.6"), "{err}");
    assert!(err.contains("line 1 names it"), "{err}");
    assert!(err.contains("docs/importers.md"), "{err}");
    // A layout claimed by its header whose rows do not fit: the tool, its
    // version, and the line as printed.
    let osu = std::fs::read_to_string(dir().join("omb_7.4_osu_bw_validation.txt")).unwrap();
    let odd = osu.replace("Bandwidth Test", "Frobnicate Test");
    let err = import::parse(Path::new("odd.log"), &odd, None).unwrap_err().to_string();
    assert!(err.contains("as osu 7.4: unknown OSU test"), "{err}");
    assert!(err.contains("reads `# OSU MPI Frobnicate Test v7.4`"), "{err}");
}

#[test]
fn tools_without_an_importer_are_refused_by_name() {
    for (text, tool) in [
        ("[CUDA Bandwidth Test] - Starting...\nRunning on...\n", "bandwidthTest"),
        ("[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\nDevice: 0, NVIDIA H100\n", "p2pBandwidthLatencyTest"),
        (":::MLLOG {\"key\": \"run_start\"}\n", "mllog"),
        ("================\nHPLinpack 2.3  --  High-Performance Linpack benchmark\n", "HPL"),
    ] {
        let err = import::parse(Path::new("x.log"), text, None).unwrap_err().to_string();
        assert!(err.contains(tool) && err.contains("no importer"), "{tool}: {err}");
    }
    let err = import::parse(Path::new("x.log"), "hello\n", None).unwrap_err().to_string();
    assert!(err.contains("not a format benchbook can import"), "{err}");
    // A perftest table without its banner or command: refused, never
    // imported as an unknown test.
    let text = std::fs::read_to_string(dir().join("perftest_24.07.0-0.44_ib_write_bw_MiB.txt")).unwrap();
    let err = import::parse(Path::new("output.log"), &text, None).unwrap_err().to_string();
    assert!(err.contains("without its banner"), "{err}");
}

#[test]
fn import_explain_says_which_importer_claims_each_file_and_why() {
    let read = dir().join("transferbench_v1.67_box-table.txt");
    let refused = dir().join("trtllm-suite_0.10-0.11.txt");
    let out = Command::new(common_bin()).args(["import", "--explain"]).arg(&read).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("transferbench     claims it at line"), "{text}");
    assert!(text.contains("read as transferbench"), "{text}");
    assert!(text.contains("1 record   memcpy-peer copy (config test 1)"), "{text}");
    assert!(text.contains("`Transfer 0    │  56.309 GB/s"), "the claiming line is quoted: {text}");
    let out =
        Command::new(common_bin()).args(["import", "--explain", "--json"]).arg(&read).arg(&refused).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "a refused file makes --explain exit 1");
    // A file that cannot be read is one refused entry; the others are
    // still explained.
    let missing = Command::new(common_bin())
        .args(["import", "--explain", "--json", "no-such-file.log"])
        .arg(&read)
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    let m: serde_json::Value = serde_json::from_slice(&missing.stdout).unwrap();
    assert!(m["files"][0]["error"].as_str().unwrap().contains("cannot read it"), "{m}");
    assert_eq!(m["files"][1]["read_as"], "transferbench");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = v["files"].as_array().unwrap();
    assert_eq!(files[0]["read_as"], "transferbench");
    assert!(files[0]["error"].is_null());
    assert!(files[1]["error"].as_str().unwrap().contains("not a format"), "{}", files[1]);
    // Nothing was written: --explain takes no archive.
    assert!(!dir().join("runs").exists());
}

fn common_bin() -> &'static str {
    crate::common::bin()
}

#[test]
fn osu_derived_datatype_runs_and_nccl_tests_alltoallv_are_told_apart() {
    // OMB 6.1+ `-D`: a `Transmit Size` column; refused, not misread.
    let osu = std::fs::read_to_string(dir().join("omb_7.4_osu_bw_validation.txt")).unwrap();
    let ddt = osu.replace("# Size      Bandwidth (MB/s)", "# Size      Transmit Size     Bandwidth (MB/s)");
    let err = import::parse(Path::new("ddt.log"), &ddt, None).unwrap_err().to_string();
    assert!(err.contains("Transmit Size"), "{err}");
    // nccl-tests 2.19's alltoallv_perf: its op is all_to_allv.
    let text = std::fs::read_to_string(dir().join("nccl-tests_v2.19.6_all_reduce_perf_per-iter-I1.txt")).unwrap();
    let v = text.replace("all_reduce_perf", "alltoallv_perf").replace("     sum      -1", "    none      -1");
    let p = import::parse(Path::new("v.log"), &v, None).unwrap();
    assert!(p.records.iter().all(|r| r.params.op == "all_to_allv"), "{:?}", p.records[0].params.op);
}

#[test]
fn a_file_holding_two_tools_output_is_refused_not_half_read() {
    // An OSU run, then an nccl-tests run, pasted into one file: each
    // importer reads its own lines, so the file is refused naming both.
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/real");
    let osu = std::fs::read_to_string(real.join("osu/osu_latency_host_v5.6.2_alaska_size0.txt")).unwrap();
    let nccl =
        std::fs::read_to_string(real.join("nccl-tests/all_reduce_int8_8xGH200_olivia_v2.18.3_unalign.txt")).unwrap();
    let both = format!("{osu}\n{nccl}");
    let err = import::parse(Path::new("both.log"), &both, None).unwrap_err().to_string();
    assert!(err.contains("two tools") && err.contains("osu") && err.contains("nccl-tests"), "{err}");
    // --tool reads the one named.
    let p = import::parse(Path::new("both.log"), &both, Some("osu")).unwrap();
    assert_eq!(p.tool, "osu");
    // One tool's log that another importer also claims is not two tools:
    // IMB's table header has perftest's `#bytes` and `t_avg[`.
    let imb = std::fs::read_to_string(
        real.join("imb/allreduce_imb2018_144ranks_oci_openmpi_4space_indent_mixed_table_indent.txt"),
    )
    .unwrap();
    assert_eq!(import::parse(Path::new("imb.log"), &imb, None).unwrap().tool, "imb");
}

#[test]
fn versions_are_not_addresses_and_gpu_burn_progress_is_named() {
    let e = import::explain(Path::new("x.log"), "~# ib_read_lat 172.81.0.118\n #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]\n 2       1000          1.02           5.11         1.07\n", None);
    assert!(e.version.is_none(), "{:?}", e.version);
    let err = import::parse(
        Path::new("burn.log"),
        "Initialized device 0 with 81559 MB of memory\n10.0%  proc'd: 2534 (17432 Gflop/s)   errors: 0   temps: 45 C\n",
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("gpu-burn") && err.contains("no importer"), "{err}");
}

#[test]
fn imb_2021_3_banners_and_omb_tail_latency_columns() {
    // IMB-v2021.3+ (src_c/IMB_g_info.c:86-110 at IMB-v2021.11) prints its
    // banner without trailing blanks; the tables are 2021.2's.
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/real");
    let imb = std::fs::read_to_string(
        real.join("imb/pingpong_imb2021.2_2ranks_azurehpc_lustre_srun_prompts_no_trailing_spaces.txt"),
    )
    .unwrap()
    .replace("Intel(R) MPI Benchmarks 2021.2, MPI-1 part", "Intel(R) MPI Benchmarks 2021.11, MPI-1 part");
    let p = import::parse(Path::new("imb.log"), &imb, None).unwrap();
    assert_eq!((p.tool.as_str(), p.records.len()), ("imb", 24));
    let e = import::explain(Path::new("imb.log"), &imb, None);
    assert!(e.version.as_ref().is_some_and(|v| v.text.contains("2021.11")), "{:?}", e.version);
    // OMB 7.3+ `-t`: tail percentiles after the value (7.4
    // c/util/osu_util.c, `"%*sP%d Tail Lat(us)"`); the value column is read.
    let text = "# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n\
# Size          Latency (us)   P50 Tail Lat(us)   P90 Tail Lat(us)   P99 Tail Lat(us)\n\
1                       1.52               1.50               1.61               2.03\n\
8                       1.55               1.53               1.66               2.11\n";
    let p = import::parse(Path::new("lat.log"), text, None).unwrap();
    assert_eq!(p.records.len(), 2);
    assert!((p.records[0].seconds_per_op - 1.52e-6).abs() < 1e-15, "{}", p.records[0].note);
}

#[test]
fn rccl_tests_skip_rows_are_left_out_with_a_warning() {
    // A size that would send zero bytes: `  %7s  %6s  %6s  %5s` with
    // "SKIP", then "%8s  %8s  %10s" N/A (rccl-tests' common.cu).
    let text = std::fs::read_to_string(dir().join("rccl-tests_fe174e5_algo_proto_nchannels.txt")).unwrap();
    let skip = format!(
        "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>5}{:>8}  {:>8}  {:>10}",
        4, 0, "float", "none", -1, "SKIP", "0.00", "0.00", "N/A", "N/A", "N/A", "N/A"
    );
    let at = text.find("     1048576").unwrap();
    let with_skip = format!("{}{skip}\n{}", &text[..at], &text[at..]);
    let p = import::parse(Path::new("skip.log"), &with_skip, None).unwrap();
    assert_eq!(p.records.len(), 6);
    assert!(p.warnings.iter().any(|w| w.contains("SKIP")), "{:?}", p.warnings);
}
