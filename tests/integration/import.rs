//! Importers: one fixture per format and variant, golden rows for each,
//! unit conversions checked by hand, bad input rejected clearly, nothing
//! written for a failing file, and no panic on arbitrary input.

use std::path::{Path, PathBuf};

use benchbook::import::{self, Parsed};
use benchbook::prelude::*;
use benchbook::vocab::progress::Silent;
use proptest::prelude::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import").join(name)
}

fn parse(name: &str) -> Parsed {
    let path = fixture(name);
    let text = std::fs::read_to_string(&path).unwrap();
    import::parse(&path, &text, None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Rows as stable text, for golden files.
pub fn render(p: &Parsed) -> String {
    let mut out = format!("tool {} backend {} version {:?}\n", p.tool, p.backend, p.tool_version);
    for r in &p.records {
        let q = &r.params;
        out += &format!(
            "line {:>3} | {} {} {:?} {:?} | size {:?} copied {:?} moved {:?} factor {:?} ranks {:?} peer {:?} | {:.6e} s/op x {:?} | {:?} | {:?} {:?}\n",
            r.line, q.bench, q.op, q.variant, q.dtype, q.size_bytes, q.bytes_copied, q.bytes_moved,
            q.bw_factor.map(|f| (f * 1e4).round() / 1e4), q.ranks, q.peer, r.seconds_per_op, r.iterations,
            r.status, r.device, r.host
        );
        out += &format!("          note: {}\n", r.note);
    }
    for w in &p.warnings {
        out += &format!("warning: {w}\n");
    }
    out
}

const FIXTURES: [(&str, &str); 19] = [
    ("nccl_all_reduce_new.txt", "nccl-tests"),
    ("all_gather_perf_old.log", "nccl-tests"),
    ("nccl_tagged_two_collectives.txt", "nccl-tests"),
    ("nccl_truncated.txt", "nccl-tests"),
    ("rccl_all_reduce.json", "rccl-tests-json"),
    ("ib_write_bw_gbits.txt", "perftest"),
    ("ib_read_bw_mb.txt", "perftest"),
    ("ib_send_bw_bidir_mib.txt", "perftest"),
    ("ib_write_lat.txt", "perftest"),
    ("osu_bw.txt", "osu"),
    ("osu_bibw_device.txt", "osu"),
    ("osu_latency.txt", "osu"),
    ("osu_allreduce.txt", "osu"),
    ("nvbandwidth.txt", "nvbandwidth"),
    ("nvbandwidth.json", "nvbandwidth-json"),
    ("babelstream.txt", "babelstream"),
    ("babelstream.csv", "babelstream-csv"),
    ("seed_memcpy.json", "seed-json"),
    ("torch_gemm.json", "seed-json"),
];

#[test]
fn every_fixture_is_detected_and_matches_its_golden_rows() {
    let bless = std::env::var("BENCHBOOK_BLESS").is_ok();
    let mut failures = Vec::new();
    for (name, tool) in FIXTURES {
        let p = parse(name);
        assert_eq!(p.tool, tool, "{name} detected as {}", p.tool);
        let got = render(&p);
        let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/import").join(format!("{name}.rows"));
        if bless {
            std::fs::write(&golden, &got).unwrap();
        } else if std::fs::read_to_string(&golden).ok().as_deref() != Some(got.as_str()) {
            failures.push(name);
        }
    }
    assert!(
        failures.is_empty(),
        "rows differ from tests/golden/import for {failures:?} (BENCHBOOK_BLESS=1 rewrites; review the diff)"
    );
}

fn gbps(r: &import::Record) -> f64 {
    r.params.bytes_copied.unwrap() as f64 / r.seconds_per_op / 1e9
}

#[test]
fn units_are_converted_not_relabelled() {
    // perftest Gb/sec: 392 Gb/s = 49 GB/s.
    let p = parse("ib_write_bw_gbits.txt");
    let last = p.records.last().unwrap();
    assert!((gbps(last) - 49.0).abs() < 1e-9, "{}", gbps(last));
    assert_eq!(last.iterations, Some(5000));
    assert_eq!(last.device.as_deref(), Some("mlx5_0"));
    // perftest's MB/sec is 2^20 bytes/s (its format_factor 0x100000).
    assert!((gbps(&parse("ib_read_bw_mb.txt").records[0]) - 23750.0 * 1048576.0 / 1e9).abs() < 1e-9);
    // MiB/sec = 2^20 bytes/s, and a bidirectional run counts both directions.
    let bi = &parse("ib_send_bw_bidir_mib.txt").records[0];
    assert_eq!(bi.params.bytes_copied, Some(2 * 1048576));
    assert!((gbps(bi) - 45000.0 * 1048576.0 / 1e9).abs() < 1e-6);
    // Latency: t_typical µs → s.
    assert!((parse("ib_write_lat.txt").records[0].seconds_per_op - 1.01e-6).abs() < 1e-15);
    // OSU MB/s = 10^6; bibw counts both directions.
    assert!((gbps(parse("osu_bw.txt").records.last().unwrap()) - 12.25).abs() < 1e-9);
    let bibw = &parse("osu_bibw_device.txt").records[0];
    assert_eq!(bibw.params.bytes_copied, Some(2 * 1048576));
    assert_eq!(bibw.params.variant.as_deref(), Some("device buffers"));
    // nccl-tests: algbw = size / time, busbw = algbw × 2(n−1)/n over 8 ranks.
    let ar = parse("nccl_all_reduce_new.txt");
    let big = ar.records.iter().find(|r| r.params.size_bytes == Some(134217728)).unwrap();
    assert!((gbps(big) - 187.5).abs() < 0.01, "{}", gbps(big));
    assert_eq!(big.params.bw_factor, Some(1.75));
    assert_eq!(big.params.ranks, Some(8));
    assert_eq!(big.iterations, Some(20));
    assert_eq!(big.device.as_deref(), Some("NVIDIA H100 80GB HBM3"));
    assert!(ar.warnings.is_empty(), "{:?}", ar.warnings);
    // BabelStream text and CSV agree, and match its printed MBytes/sec.
    let (t, c) = (parse("babelstream.txt"), parse("babelstream.csv"));
    for (a, b) in t.records.iter().zip(&c.records) {
        let ga = a.params.bytes_moved.unwrap() as f64 / a.seconds_per_op;
        let gb = b.params.bytes_moved.unwrap() as f64 / b.seconds_per_op;
        assert!((ga / gb - 1.0).abs() < 1e-4, "{} vs {}", ga, gb);
    }
    assert_eq!(c.records[3].params.bytes_moved, Some(3 * 33554432 * 8), "Triad moves 3 arrays");
    // Seed JSON counts bytes once; a copy moves twice that.
    let s = parse("seed_memcpy.json");
    assert_eq!(s.records[1].params.bytes_moved, Some(2 * 1048576));
    assert!((gbps(&s.records[1]) - 131.072).abs() < 1e-9);
}

#[test]
fn layouts_and_sections_are_read_by_their_headers() {
    let old = parse("all_gather_perf_old.log");
    assert!(old.records.iter().all(|r| r.params.op == "all_gather" && r.params.bw_factor == Some(0.75)));
    assert_eq!(old.backend, "rccl");
    let two = parse("nccl_tagged_two_collectives.txt");
    let ops: Vec<&str> = two.records.iter().map(|r| r.params.op.as_str()).collect();
    assert_eq!(ops.iter().filter(|o| **o == "broadcast").count(), 4);
    assert_eq!(ops.iter().filter(|o| **o == "reduce_scatter").count(), 4);
    assert!(two.records[0].note.contains("not checked"), "N/A noted: {}", two.records[0].note);
    assert!(two.warnings.is_empty(), "per-table footers check out: {:?}", two.warnings);
    let cut = parse("nccl_truncated.txt");
    assert_eq!(cut.records.len(), 4, "two complete lines kept");
    assert!(cut.warnings.iter().any(|w| w.contains("incomplete last line")));
    assert!(cut.warnings.iter().any(|w| w.contains("footer")));
    let nv = parse("nvbandwidth.txt");
    assert_eq!(nv.records.len(), 4, "N/A cells skipped");
    assert!(nv.warnings.iter().any(|w| w.contains("normalized")));
}

#[test]
fn a_wrong_footer_and_wrong_results_are_reported() {
    let path = fixture("nccl_all_reduce_new.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let bad = text.replace("# Avg bus bandwidth    : 69.8386", "# Avg bus bandwidth    : 99.0").replace(
        "   134217728      33554432     float     sum      -1   715.83  187.50  328.12      0",
        "   134217728      33554432     float     sum      -1   715.83  187.50  328.12      3",
    );
    let p = import::parse(&path, &bad, None).unwrap();
    assert!(p.warnings.iter().any(|w| w.contains("footer says average bus bandwidth 99")), "{:?}", p.warnings);
    let wrong = p.records.iter().find(|r| r.status == Status::Failed).expect("a failed row");
    assert!(wrong.note.contains("3 wrong"));
}

#[test]
fn malformed_files_name_file_line_and_expectation() {
    let path = fixture("nccl_all_reduce_new.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let bad = text.replace(
        "        2048           512     float     sum      -1    25.60",
        "        2048           512     float     sum",
    );
    let e = import::parse(&path, &bad, None).unwrap_err().to_string();
    assert!(e.contains("nccl_all_reduce_new.txt:21:") && e.contains("expected 13 columns"), "{e}");

    let e = import::parse(Path::new("notes.txt"), "hello\nworld\n", None).unwrap_err().to_string();
    assert!(
        e.contains("notes.txt") && e.contains("tried: ") && e.contains("nccl-tests") && e.contains("--tool"),
        "{e}"
    );

    let e = import::parse(Path::new("x.txt"), "hello", Some("nope")).unwrap_err().to_string();
    assert!(e.starts_with("--tool") && e.contains("perftest"), "{e}");

    let e = import::parse(Path::new("x.log"), "# OSU MPI Frobnicate Test v7.3\n1 2\n", None).unwrap_err().to_string();
    assert!(e.contains("x.log:1:") && e.contains("unknown OSU test"), "{e}");
}

#[test]
fn nothing_is_written_when_any_file_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.txt");
    std::fs::write(&bad, "not a benchmark log\n").unwrap();
    let archive = Archive::new(tmp.path().join("archive"));
    let e = benchbook::session::import(&archive, &[fixture("osu_bw.txt"), bad], None, None, &Silent).unwrap_err();
    assert!(e.to_string().contains("bad.txt"), "{e}");
    assert!(archive.runs().unwrap().is_empty(), "a run was written");
}

#[test]
fn an_imported_run_keeps_its_source_verifies_and_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let files = [fixture("nccl_all_reduce_new.txt"), fixture("ib_write_bw_gbits.txt")];
    let (result, parsed) = benchbook::session::import(&archive, &files, None, Some("imported"), &Silent).unwrap();
    let run = result.run;
    assert_eq!(parsed.len(), 2);
    let m = run.manifest().unwrap();
    assert_eq!(m.source.to_string(), "import:nccl-tests,perftest");
    let names: Vec<&str> = m.files.iter().map(|f| f.path.as_str()).collect();
    assert!(names.contains(&"source-1-nccl_all_reduce_new.txt") && names.contains(&"source-2-ib_write_bw_gbits.txt"));
    let kept = std::fs::read(run.path.join("source-1-nccl_all_reduce_new.txt")).unwrap();
    assert_eq!(kept, std::fs::read(&files[0]).unwrap(), "the original is kept byte for byte");
    assert!(verify_run(&run).findings.is_empty());
    let rows = run.rows().unwrap();
    assert_eq!(rows.len(), 14 + 5);
    assert!(rows.iter().all(|r| r.source.starts_with("import:")));
    // Left to itself, report picks the network write-up for these rows:
    // perftest's transfer in Gb/s, as the tool printed it.
    let rep = benchbook::report::build(&run, &archive.root, &ReportOptions::default()).unwrap();
    assert_eq!(rep.kind, benchbook::report::Kind::Network);
    let net = tmp.path().join("network");
    benchbook::report::write(&rep, &net, &ReportOptions::default()).unwrap();
    let md = std::fs::read_to_string(net.join("report.md")).unwrap();
    assert!(md.contains("## Network transfers") && md.contains("| 392 |"), "{md}");
    // The generic report keeps every row in a table with both units.
    let opts = ReportOptions { kind: Some(benchbook::report::Kind::Run), ..ReportOptions::default() };
    let rep = benchbook::report::build(&run, &archive.root, &opts).unwrap();
    let out = tmp.path().join("report");
    benchbook::report::write(&rep, &out, &opts).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Collectives") && md.contains("## Other measurements"), "{md}");
    assert!(md.contains("measured by other tools and imported"));
    // Every imported rate carries its unit; a perftest row also in Gb/s,
    // as the tool printed it (392 Gb/sec in the log).
    assert!(md.contains("49.0 GB/s = 392 Gb/s"), "{md}");
    assert!(!md.contains("Backend cpu"), "an import must not describe the importing machine as the measured one");
    assert!(out.join("collective.svg").exists());
    // The provenance appendix names each imported number's source file and its hash.
    let prov = &md[md.find("## Provenance").expect("a provenance appendix")..];
    for f in m.files.iter().filter(|f| f.path.starts_with("source-")) {
        assert!(prov.contains(&f.sha256), "{} not in {prov}", f.path);
    }
    assert!(prov.contains("| Collectives |") && prov.contains("not re-runnable by benchbook"), "{prov}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC*") {
        let _ = import::parse(Path::new("fuzz.txt"), &text, None);
        for f in import::formats() {
            let _ = f.parse(&text, "fuzz.txt");
        }
    }

    #[test]
    fn mutated_fixtures_never_panic(which in 0usize..18, cut in 0usize..4000, junk in "[ -~\\n]{0,40}") {
        let text = std::fs::read_to_string(fixture(FIXTURES[which].0)).unwrap();
        let at = text.char_indices().map(|(i, _)| i).take_while(|i| *i <= cut).last().unwrap_or(0);
        let mutated = format!("{}{}{}", &text[..at], junk, &text[at..]);
        for f in import::formats() {
            let _ = f.parse(&mutated, FIXTURES[which].0);
        }
        let _ = import::parse(Path::new(FIXTURES[which].0), &mutated[..at], None);
    }
}

#[test]
fn byte_order_marks_utf16_and_crlf_are_read_or_refused_by_name() {
    let path = fixture("osu_bw.txt");
    let data = std::fs::read(&path).unwrap();
    let plain = import::parse(&path, std::str::from_utf8(&data).unwrap(), None).unwrap();
    let same = |bytes: Vec<u8>, what: &str| {
        let (text, note) = import::decode(&path, &bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        let p = import::parse(&path, &text, None).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(p.records, plain.records, "{what}");
        note
    };
    assert_eq!(same([&[0xEF, 0xBB, 0xBF][..], &data].concat(), "UTF-8 BOM"), None);
    let crlf = String::from_utf8(data.clone()).unwrap().replace('\n', "\r\n");
    same(crlf.into_bytes(), "CRLF");
    let text = std::str::from_utf8(&data).unwrap();
    let le: Vec<u8> = [0xFF, 0xFE].into_iter().chain(text.encode_utf16().flat_map(|u| u.to_le_bytes())).collect();
    assert!(same(le.clone(), "UTF-16LE").unwrap().contains("UTF-16LE"));
    let be: Vec<u8> = [0xFE, 0xFF].into_iter().chain(text.encode_utf16().flat_map(|u| u.to_be_bytes())).collect();
    same(be, "UTF-16BE");
    let e = import::decode(&path, &le[2..]).unwrap_err().to_string();
    assert!(e.contains("osu_bw.txt:1:") && e.contains("UTF-16 without a byte-order mark"), "{e}");
    let (_, note) = import::decode(&path, &[&b"ab\ncd\xff\n"[..], &data[..]].concat()).unwrap();
    assert!(note.unwrap().contains("line 2"));
}

#[test]
fn impossible_numbers_are_dropped_with_the_line_named() {
    let path = fixture("osu_bw.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let last = text.lines().rev().find(|l| l.starts_with(char::is_numeric)).unwrap().to_string();
    let size = last.split_whitespace().next().unwrap();
    for bad in ["0.00", "-197.5", "1e26"] {
        let p = import::parse(&path, &text.replace(&last, &format!("{size}  {bad}")), None).unwrap();
        assert_eq!(p.records.len(), plain_len(&text) - 1, "{bad}");
        assert!(
            p.warnings.iter().any(|w| w.contains("row dropped") && w.starts_with("line ")),
            "{bad}: {:?}",
            p.warnings
        );
    }
}

fn plain_len(text: &str) -> usize {
    import::parse(Path::new("osu_bw.txt"), text, None).unwrap().records.len()
}

#[test]
fn imported_gpu_tool_rows_are_all_reported_and_no_benchbook_gpu_method_is_claimed() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/real/nvbandwidth");
    let log = real.join("v0.8_full_run_rtx3050_laptop_latency.txt");
    let (result, parsed) = benchbook::session::import(&archive, &[log], None, None, &Silent).unwrap();
    let opts = ReportOptions::default();
    let rep = benchbook::report::build(&result.run, &archive.root, &opts).unwrap();
    let out = tmp.path().join("report");
    benchbook::report::write(&rep, &out, &opts).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let shown = md.lines().filter(|l| l.starts_with("| nvbandwidth |")).count();
    assert_eq!(shown, parsed[0].record_count, "every imported cell is a row of the report");
    // The tool printed rates only, with no buffer size: no time is shown
    // that would rest on the assumed 10^9 bytes, and no CV of one sample.
    for row in md.lines().filter(|l| l.starts_with("| nvbandwidth |") && l.contains("GB/s")) {
        assert!(row.contains("n/a (the tool printed a rate)") && !row.contains(" ms |"), "{row}");
    }
    assert!(!md.contains("| 0 % |") && !md.contains("| 0.00 % |"), "a CV of one sample");
    assert!(md.contains("host\\_device\\_latency\\_sm") && md.contains("613.2 ns"), "the latency test case as a time");
    assert!(!md.contains("## GPUs"), "an import must not describe benchbook's GPU timing");
}

#[test]
fn import_device_and_host_name_what_the_file_does_not_and_reports_say_whose_timing_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(crate::common::bin())
        .args(["--archive", tmp.path().to_str().unwrap(), "-q", "import"])
        .arg(fixture("seed_memcpy.json"))
        .args(["--device", "MI300X <gpu0>", "--host", "node-7", "--label", "seed"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let archive = Archive::new(tmp.path());
    let run = archive.resolve("seed").unwrap();
    let rows = run.rows().unwrap();
    assert!(rows.iter().all(|r| r.device == "MI300X <gpu0>" && r.host == "node-7"), "{:?}", rows[0]);
    let opts = ReportOptions { kind: Some(benchbook::report::Kind::Run), ..ReportOptions::default() };
    let rep = benchbook::report::build(&run, tmp.path(), &opts).unwrap();
    let md = benchbook::report::render_markdown(&mut benchbook::report::engine(None).unwrap(), &rep).unwrap().0;
    assert!(md.contains("Points imported from seed-json output were timed by the tool"), "{md}");
    assert!(!md.contains("Every GPU sample benchbook measured"), "no native claims on imported rows: {md}");
    let titles: Vec<String> = rep.charts.iter().map(|c| benchbook::plot::to_svg(c.as_ref()).unwrap()).collect();
    assert!(titles.iter().any(|svg| svg.contains("on MI300X &lt;gpu0&gt;")), "the chart names the device");
    assert!(titles.iter().all(|svg| !svg.contains("on unknown")));
}

/// Links come from facts: a perftest log names its link's type (not its
/// rate), so a report gives no share of a link until `--link` names one;
/// a log that names none says so; an unknown id is an error naming them.
#[test]
fn a_network_share_needs_a_named_link_and_the_report_says_how_to_name_it() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/real");
    let ib = real.join("perftest/ib_write_bw_mlx4_mb_sec_a_sweep_wrapped_cmd.txt");
    let osu = real.join("osu/osu_bw_D_D_v7.5_gh200_internode_validation.txt");
    let report = |file: &Path, link: Option<&str>| -> benchbook::Result<String> {
        let (r, _) = benchbook::session::import(&archive, &[file.to_path_buf()], None, None, &Silent).unwrap();
        let opts = ReportOptions {
            kind: Some(benchbook::report::Kind::Network),
            link: link.map(String::from),
            ..ReportOptions::default()
        };
        let rep = benchbook::report::build(&r.run, &archive.root, &opts)?;
        let out = tmp.path().join(format!("out-{}", r.run.id));
        benchbook::report::write(&rep, &out, &opts)?;
        Ok(std::fs::read_to_string(out.join("report.md")).unwrap())
    };
    // The log names its link's type: said, and no percentage.
    let md = report(&ib, None).unwrap();
    assert!(md.contains("IB (mlx4\\_0)") && md.contains("--link ID"), "{md}");
    assert!(!md.contains("% of InfiniBand") && !md.contains("% of EFA"), "{md}");
    // Named: the share of that link, and its line in the links table.
    let md = report(&ib, Some("ib-qdr")).unwrap();
    assert!(md.contains("InfiniBand QDR 4x: 32 Gb/s of data"), "{md}");
    assert!(!md.contains("--link ID"), "{md}");
    // A log that names no link.
    let md = report(&osu, None).unwrap();
    assert!(md.contains("No log or manifest here names the network link"), "{md}");
    assert!(!md.contains("% of EFA") && !md.contains("% of 400GbE"), "{md}");
    // An unknown id is refused with the known ones.
    let e = report(&ib, Some("ib-zdr")).unwrap_err().to_string();
    assert!(e.contains("--link") && e.contains("ib-zdr") && e.contains("ib-qdr"), "{e}");
}
