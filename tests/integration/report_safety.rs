//! Hostile strings in a run (here its label) come out of a report as inert
//! text: escaped in Markdown, never markup in HTML. The HTML is opened in a
//! real headless Chromium and its live DOM inspected.

use crate::common;

use benchbook::prelude::*;
use benchbook::report;

const HOSTILE: &str = "<img src=x onerror=\"document.title='PWNED'\"><script>document.title='PWNED'</script> | *bold* [x](javascript:alert(1)) ``` </details>";

fn hostile_report() -> (tempfile::TempDir, std::path::PathBuf) {
    hostile_report_with(ReportOptions::default())
}

fn hostile_report_with(opts: ReportOptions) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let mut cfg = common::tiny_config();
    cfg.benches = vec![Bench::Memcpy];
    let r = run(&archive, &cfg, Some(HOSTILE), &benchbook::vocab::progress::Silent).unwrap();
    let out = tmp.path().join("report");
    let rep = report::build(&r.run, &archive.root, &opts).unwrap();
    report::write(&rep, &out, &opts).unwrap();
    (tmp, out)
}

#[test]
fn hostile_label_is_escaped_in_markdown_and_html() {
    let (_tmp, out) = hostile_report();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(!md.contains("<script>"), "raw tag in Markdown");
    assert!(md.contains("&lt;script&gt;"), "escaped tag in Markdown");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(!html.contains("<script"), "script tag in HTML");
    assert!(!html.contains("<img"), "img tag in HTML");
    assert!(!html.contains("href=\"javascript"), "javascript link in HTML");
    assert!(html.contains("&lt;script&gt;"), "the label is shown as text");
}

/// A user's sentence partial (`--templates DIR`) rewords a report: it gets
/// the same typed values the built-in one does, formatted by the same
/// filters. (Escaping of a partial's values: `report::context::said`.)
#[test]
fn a_user_sentence_partial_rewords_the_report_with_the_same_values() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let mut cfg = common::tiny_config();
    cfg.benches = vec![Bench::Memcpy];
    let r = run(&archive, &cfg, None, &benchbook::vocab::progress::Silent).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sentences")).unwrap();
    std::fs::write(
        dir.path().join("sentences/bandwidth-peak.md"),
        "Best copy: {{ peak_gbps | sig3 }} GB/s\nat {{ size_bytes | bytes }}.\n",
    )
    .unwrap();
    let md = |templates: Option<std::path::PathBuf>, name: &str| {
        let opts = ReportOptions { templates, ..ReportOptions::default() };
        let rep = report::build(&r.run, &archive.root, &opts).unwrap();
        report::write(&rep, &tmp.path().join(name), &opts).unwrap();
        std::fs::read_to_string(tmp.path().join(name).join("report.md")).unwrap()
    };
    let (plain, mine) = (md(None, "plain"), md(Some(dir.path().to_path_buf()), "mine"));
    let built_in = regex::Regex::new(
        r"(?s)(?:The curve with the highest plateau|the one with the highest level) \(.*?\) peaks at ([0-9.]+) GB/s .*?,\s+at ([0-9.]+ [KMG]?i?B);",
    )
    .unwrap();
    let c = built_in.captures(&plain).expect("the built-in sentence");
    assert!(mine.contains(&format!("Best copy: {} GB/s at {}.", &c[1], &c[2])), "{mine}");
    assert!(!mine.contains("with the highest"), "the built-in sentence is replaced");
}

#[test]
fn hostile_report_is_inert_in_headless_chromium() {
    let Some(browser) = crate::common::chromium() else {
        // CI installs Chromium and sets CI=true, so there this cannot skip.
        assert!(std::env::var("CI").is_err(), "Chromium is required in CI (apt-get install chromium)");
        eprintln!("SKIPPED: no chromium on PATH; install Debian's `chromium` to run this test");
        return;
    };
    let (tmp, out) = hostile_report();
    let profile = tmp.path().join("profile");
    let o = crate::common::chromium_dump_dom(browser, &out.join("report.html"), 1280, &profile);
    let dom = String::from_utf8_lossy(&o.stdout);
    assert!(dom.contains("<main>"), "Chromium rendered the page: {}", String::from_utf8_lossy(&o.stderr));
    // The label itself mentions PWNED as text; a script that ran would have
    // replaced the whole title with it.
    assert!(!dom.contains("<title>PWNED</title>"), "a script ran");
    assert!(dom.contains("<title>benchbook report: &lt;img"), "the title is the escaped label");
    assert!(!dom.contains("<img"), "an injected element exists in the DOM");
    assert!(!dom.contains("<script"), "an injected script exists in the DOM");
    assert!(dom.contains("<svg"), "the chart is inline");
    assert!(dom.contains("&lt;script&gt;"), "the label is visible as text");
}

/// Every example report committed under `reports/` opens in headless
/// Chromium with no error, shows every chart its Markdown names, and has
/// nothing wider than the page, on a desktop and on a phone.
#[test]
fn every_example_report_renders_whole_in_headless_chromium() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports");
    let mut pages: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path().join("report.html"))
        .filter(|p| p.exists())
        .collect();
    pages.sort();
    assert!(pages.len() >= 10, "the examples are committed: {pages:?}");
    // Screenshots for a person to review, under the tests' scratch folder.
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    for page in &pages {
        let md = std::fs::read_to_string(page.with_file_name("report.md")).unwrap();
        let charts = md.matches(".svg)").count();
        for width in [1280, 400] {
            let Some(p) = crate::common::chromium_probe(page, width) else { return };
            assert!(p.errors.is_empty(), "{}: {:?}", page.display(), p.errors);
            assert_eq!(p.svgs, charts, "{}: every chart inline", page.display());
            assert!(p.scroll_width <= p.width && p.wide.is_empty(), "{} at {width} px: {p:?}", page.display());
            // Every chart shows whole (its phone rendering on a phone, never
            // a desktop chart scrolled or shrunk), every chart text lies
            // inside its chart and reads 9 px tall or more.
            assert!(p.charts_cut.is_empty(), "{} at {width} px: charts cut {:?}", page.display(), p.charts_cut);
            assert!(p.text_out.is_empty(), "{} at {width} px: cut chart text {:?}", page.display(), p.text_out);
            assert!(p.text_min_px >= 9.0, "{} at {width} px: chart text {} px tall", page.display(), p.text_min_px);
            let name = page.parent().and_then(|d| d.file_name()).unwrap().to_string_lossy().to_string();
            let png = shots.join(format!("{name}-{width}px.png"));
            let browser = crate::common::chromium().unwrap();
            assert!(crate::common::chromium_screenshot(browser, page, width, &png), "{}", png.display());
        }
        // On paper (A4's printable width, with the print rules): every
        // column of every table fits; nothing would be cut.
        let Some(p) = crate::common::chromium_probe_print(page, 700) else { return };
        assert!(
            p.scroll_width <= p.width && p.wide.is_empty() && p.clipped.is_empty(),
            "{} printed: {p:?}",
            page.display()
        );
    }
}

/// `report --all` rebuilds every example of reports/examples.toml from the
/// committed archive, and the examples cover every report kind.
#[test]
fn report_all_regenerates_every_example_and_covers_every_kind() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let examples = std::fs::read_to_string(repo.join("reports/examples.toml")).unwrap();
    std::fs::write(tmp.path().join("examples.toml"), &examples).unwrap();
    let o = report_all_into(tmp.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let listed: Vec<&str> =
        examples.lines().filter_map(|l| l.strip_prefix("out = \"")).map(|l| l.trim_end_matches('"')).collect();
    assert!(listed.len() >= 10, "{listed:?}");
    // Every report folder under reports/ is an example that this rebuilds
    // (notes/ holds their prose): nothing there goes stale unseen.
    for entry in std::fs::read_dir(repo.join("reports")).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().to_string();
        if entry.path().is_dir() && name != "notes" {
            assert!(listed.contains(&name.as_str()), "reports/{name} is not in reports/examples.toml");
        }
    }
    let mut titles = String::new();
    for out in &listed {
        let md = std::fs::read_to_string(tmp.path().join(out).join("report.md")).unwrap();
        titles += md.lines().next().unwrap();
        titles.push('\n');
        // Every line but the generation time: the committed example is
        // what `report --all` makes today.
        let committed = std::fs::read_to_string(repo.join("reports").join(out).join("report.md")).unwrap();
        let stable = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| {
                    !l.starts_with("| report generated |")
                        && !l.starts_with("_Generated by benchbook")
                        && !l.starts_with("_benchbook ")
                })
                .map(String::from)
                .collect()
        };
        let (got, want) = (stable(&md), stable(&committed));
        let first = got.iter().zip(&want).position(|(a, b)| a != b);
        assert!(
            got == want,
            "reports/{out} is not what `report --all` makes (first difference at line {first:?}: {:?}); run `benchbook report --all`",
            first.map(|i| (&got[i], &want[i]))
        );
    }
    for kind in benchbook::report::Kind::ALL {
        let said = match kind {
            benchbook::report::Kind::Run => continue,
            benchbook::report::Kind::Compare => "benchbook comparison",
            k => k.subject(),
        };
        assert!(titles.contains(said), "no example of {kind}: {titles}");
    }
    // A broken list names the file and line.
    std::fs::write(tmp.path().join("examples.toml"), "[[example]]\nout = 3\n").unwrap();
    let o = std::process::Command::new(crate::common::bin())
        .current_dir(repo)
        .args(["report", "--all", "--reports-dir"])
        .arg(tmp.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("examples.toml:2"), "{err}");
}

/// `report --all` of the repository's archive into `dir` (its examples.toml).
fn report_all_into(dir: &std::path::Path) -> std::process::Output {
    std::process::Command::new(crate::common::bin())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["-q", "report", "--all", "--format", "md", "--reports-dir"])
        .arg(dir)
        .output()
        .unwrap()
}

#[test]
fn an_example_that_measured_nothing_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    // A committed run whose every point was skipped (GPU benchmarks on a
    // machine without a GPU), listed next to one that measured.
    std::fs::write(
        tmp.path().join("examples.toml"),
        "[[example]]\nout = \"empty\"\nruns = [\"gpu-paths-14f5\"]\n\n[[example]]\nout = \"quick\"\nruns = [\"quick-62f0\"]\n",
    )
    .unwrap();
    let o = report_all_into(tmp.path());
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("empty") && err.contains("measured or imported nothing"), "{err}");
    assert!(!tmp.path().join("empty").exists());
    assert!(tmp.path().join("quick/report.md").exists(), "the other example is still made");
}
