//! `benchbook site`: a static site over an archive. Built over the
//! committed `data/` archive, every kind of page opens in headless
//! Chromium at a desktop's and a phone's width with no error and nothing
//! outside its box; the sorting script runs under the page's own CSP; a
//! hostile label stays text; and a second build after one new run reads
//! only that run and rewrites only the pages it touches.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

fn site(archive: &Path, out: &Path, extra: &[&str]) -> serde_json::Value {
    let o = Command::new(common::bin())
        .args(["--archive"])
        .arg(archive)
        .arg("site")
        .arg(out)
        .args(extra)
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "site failed: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn quick_run(archive: &Path, label: &str) {
    let o = Command::new(common::bin())
        .args(["-q", "--archive"])
        .arg(archive)
        .args(["run", "memcpy", "--sizes", "4K..16K", "--threads", "1", "--max-time", "0.03", "--warmup", "0"])
        .args(["--min-time", "0", "--label", label])
        .output()
        .unwrap();
    assert!(o.status.success(), "run failed: {}", String::from_utf8_lossy(&o.stderr));
}

fn pages_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(pages_under(&p));
        } else if p.extension().is_some_and(|x| x == "html") {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn the_committed_archive_becomes_a_site_that_renders_in_chromium() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    let s = site(&root.join("data"), &out, &["--reports", root.join("reports").to_str().unwrap()]);
    let runs = std::fs::read_dir(root.join("data/runs")).unwrap().count() as u64;
    assert_eq!(s["runs"].as_u64().unwrap() + s["left_out"].as_array().unwrap().len() as u64, runs);
    // Every committed run and report has a page, and the index links each.
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    for e in std::fs::read_dir(root.join("data/runs")).unwrap() {
        let id = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(out.join(format!("runs/{id}.html")).exists(), "no page for run {id}");
        assert!(index.contains(&format!("runs/{id}.html")), "the index does not link run {id}");
    }
    for e in std::fs::read_dir(root.join("reports")).unwrap() {
        let p = e.unwrap().path();
        if p.join("report.html").exists() {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            assert!(out.join(format!("reports/{name}/report.html")).exists(), "report {name} not copied");
            assert!(index.contains(&format!("reports/{name}/report.html")), "the index does not link {name}");
        }
    }
    // A run with a report of its own links it from its page.
    let id = "20261121T084143Z-repeat-6eda";
    let page = std::fs::read_to_string(out.join(format!("runs/{id}.html"))).unwrap();
    assert!(page.contains(&format!("../reports/{id}/report.html")), "run {id}'s page links its report");
    // The script is pinned by its hash: the CSP names the sha256 of the
    // inline script exactly.
    use base64::Engine;
    use sha2::Digest;
    let script = index.split_once("<script>").unwrap().1.split_once("</script>").unwrap().0;
    let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(script.as_bytes()));
    assert!(index.contains(&format!("script-src 'sha256-{hash}'")), "the CSP pins the script");
    // Labels that measured the same points are compared, each against the
    // next one recorded; the index links the page, which states every point.
    let compare = out.join("compare/memcpy-rounds-a+memcpy-rounds-b.html");
    assert!(index.contains("compare/memcpy-rounds-a+memcpy-rounds-b.html"), "the index does not link the comparison");
    let text = std::fs::read_to_string(&compare).unwrap();
    assert!(text.contains("memcpy-rounds-b against memcpy-rounds-a") && text.contains("95 % interval"), "{text}");
    assert!(text.contains("label:memcpy-rounds-a label:memcpy-rounds-b"));
    assert!(s["compares"].as_u64().unwrap() >= 1, "{s}");
    // One page of each kind, probed at 1280 and 400 px.
    let pages = pages_under(&out);
    let pick = |dir: &str| pages.iter().find(|p| p.parent().unwrap().ends_with(dir)).cloned().unwrap();
    let node = pick("nodes");
    let chosen = [out.join("index.html"), pick("runs"), node.clone(), pick("points"), compare];
    for page in &chosen {
        for width in [1280, 400] {
            let Some(p) = common::chromium_probe(page, width) else { return };
            assert!(p.errors.is_empty(), "{}: {:?}", page.display(), p.errors);
            assert!(p.scroll_width <= p.width && p.wide.is_empty(), "{} at {width} px: {p:?}", page.display());
            assert!(p.text_out.is_empty(), "{} at {width} px: cut chart text {:?}", page.display(), p.text_out);
        }
    }
    // Under its own CSP the script runs: the index gains its filter box.
    let browser = common::chromium().unwrap();
    let o = common::chromium_dump_dom(browser, &out.join("index.html"), 1280, &tmp.path().join("profile"));
    let dom = String::from_utf8_lossy(&o.stdout);
    assert!(dom.contains("class=\"filter\""), "the sorting script did not run under the page's CSP");
    // The node page charts its history.
    assert!(std::fs::read_to_string(&node).unwrap().contains("<svg"), "the node page has its chart");
}

#[test]
fn a_second_build_reads_only_the_new_run_and_hostile_labels_stay_text() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("data");
    let out = tmp.path().join("site");
    quick_run(&archive, "first");
    let a = site(&archive, &out, &[]);
    assert_eq!((a["runs"].as_u64(), a["runs_read"].as_u64()), (Some(1), Some(1)));
    let again = site(&archive, &out, &[]);
    assert_eq!(again["runs_read"].as_u64(), Some(0));
    assert_eq!(again["written"].as_u64(), Some(0), "nothing changed, nothing written: {again}");
    let first_page = pages_under(&out.join("runs")).remove(0);
    let before = std::fs::metadata(&first_page).unwrap().modified().unwrap();
    quick_run(&archive, "<script>alert(1)</script>");
    let b = site(&archive, &out, &[]);
    assert_eq!((b["runs"].as_u64(), b["runs_read"].as_u64()), (Some(2), Some(1)));
    // The new run's page, its node's page, the points it measured (3 sizes),
    // the index, and the compare page of the two labels (the same points);
    // the first run's page is left alone.
    assert_eq!(b["written"].as_u64(), Some(1 + 1 + 3 + 1 + 1), "{b}");
    let compares = pages_under(&out.join("compare"));
    assert_eq!(compares.len(), 1);
    let compare = std::fs::read_to_string(&compares[0]).unwrap();
    assert!(!compare.contains("<script>alert") && compare.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_eq!(std::fs::metadata(&first_page).unwrap().modified().unwrap(), before);
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!index.contains("<script>alert"), "a label is text, never markup");
    assert!(index.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the label is shown, escaped");
    // A run deleted from the archive loses its page, and the index and its
    // node's page no longer name it; the other run's page stays.
    let first_id = first_page.file_stem().unwrap().to_string_lossy().into_owned();
    let gone = std::fs::read_dir(archive.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| benchbook::site::file_name(&p.file_name().unwrap().to_string_lossy()) == first_id)
        .expect("the first run's folder");
    let gone_id = gone.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::remove_dir_all(&gone).unwrap();
    let c = site(&archive, &out, &[]);
    // Its run page and the compare page it was half of.
    assert_eq!(
        (c["runs"].as_u64(), c["runs_read"].as_u64(), c["removed"].as_u64()),
        (Some(1), Some(0), Some(2)),
        "{c}"
    );
    assert!(pages_under(&out.join("compare")).is_empty());
    assert!(!first_page.exists());
    assert_eq!(pages_under(&out.join("runs")).len(), 1);
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!index.contains(&gone_id), "the index still names {gone_id}");
    for node in pages_under(&out.join("nodes")) {
        assert!(
            !std::fs::read_to_string(&node).unwrap().contains(&gone_id),
            "{} still names {gone_id}",
            node.display()
        );
    }
    let Some(p) = common::chromium_probe(&out.join("index.html"), 400) else { return };
    assert!(p.errors.is_empty(), "{:?}", p.errors);
}
