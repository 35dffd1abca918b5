//! Every rate, time, percentage or ratio a sentence of a report states also
//! appears in a table or a chart label of the same report, so a reader can
//! find it beside its interval and provenance, and prose cannot invent a
//! figure (an average over systems, a ratio of two unlike things).
//!
//! Checked over every golden report and every example under `reports/`.
//! What is not a finding is left out, each for a stated reason:
//! - the Methodology, Reproducibility and Provenance sections describe how
//!   numbers were made, not what they are;
//! - a number the built-in templates write literally ("95 % CI", "100 % is
//!   linear scaling") is a definition;
//! - benchbook's own rule constants (a plateau leaves out points wider than
//!   ±25 %) are rules, stated where they apply.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

const UNITS: &str = r"GB/s|Gb/s|TB/s|MB/s|TFLOP/s|GFLOP/s|tokens/s|%|×|ms|µs|ns|s\b";

fn stated() -> Regex {
    Regex::new(&format!(r"(?:^|[^\w.])(\d[\d,]*(?:\.\d+)?)\s?({UNITS})")).unwrap()
}

fn any_number() -> Regex {
    Regex::new(r"(?:^|[^\w.])(\d[\d,]*(?:\.\d+)?)").unwrap()
}

fn norm(n: &str) -> String {
    n.replace(',', "")
}

/// Sections whose numbers are procedure, not findings.
const PROCEDURE: [&str; 3] = ["## Methodology", "## Reproducibility", "## Provenance"];

/// (sentences, table and chart text) of a Markdown report.
fn split(md: &str, charts: &str) -> (Vec<String>, String) {
    let (mut sentences, mut tables) = (Vec::new(), String::from(charts));
    let (mut code, mut procedure) = (false, false);
    for line in md.lines() {
        if line.starts_with("```") {
            code = !code;
            continue;
        }
        if line.starts_with("## ") {
            procedure = PROCEDURE.iter().any(|p| line.starts_with(p));
        }
        if code || procedure || line.starts_with('#') || line.starts_with("![") || line.starts_with('<') {
            continue;
        }
        if line.starts_with('|') {
            tables.push_str(line);
            tables.push('\n');
        } else if !line.trim().is_empty() {
            sentences.push(line.to_string());
        }
    }
    (sentences, tables)
}

/// The text of every `<text>` element of the SVG charts in `dir`.
fn chart_text(dir: &Path) -> String {
    let text = Regex::new(r"<text[^>]*>([^<]*)</text>").unwrap();
    let mut out = String::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for e in entries.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "svg")) {
        let svg = std::fs::read_to_string(e.path()).unwrap();
        for c in text.captures_iter(&svg) {
            out.push_str(&c[1].replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"));
            out.push(' ');
        }
    }
    out
}

/// (number, unit) pairs the built-in templates write themselves.
fn template_constants() -> BTreeSet<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    let mut files = vec![root.join("fleet.md")];
    for dir in ["sections", "sentences"] {
        files.extend(std::fs::read_dir(root.join(dir)).unwrap().flatten().map(|e| e.path()));
    }
    let re = stated();
    files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            re.captures_iter(&text).map(|c| (norm(&c[1]), c[2].to_string())).collect::<Vec<_>>()
        })
        .collect()
}

/// benchbook's rule constants, as reports print them.
fn rule_constants() -> BTreeSet<(String, String)> {
    let half = benchbook::analysis::curves::TRUSTED_HALF_WIDTH * 100.0;
    [format!("{half:.1}"), format!("{half:.0}")].into_iter().map(|n| (n, "%".to_string())).collect()
}

/// Every stated figure of one report that no table or chart label holds.
fn unbacked(md: &str, charts: &str, exempt: &BTreeSet<(String, String)>) -> Vec<String> {
    let (sentences, tables) = split(md, charts);
    let shown: BTreeSet<String> = any_number().captures_iter(&tables).map(|c| norm(&c[1])).collect();
    let re = stated();
    let mut missing = Vec::new();
    for s in &sentences {
        for c in re.captures_iter(s) {
            let (n, unit) = (norm(&c[1]), c[2].to_string());
            // `32×32×32` is a shape, not a ratio.
            if unit == "×" && s[c.get(2).unwrap().end()..].starts_with(|ch: char| ch.is_ascii_digit()) {
                continue;
            }
            if !shown.contains(&n) && !exempt.contains(&(n.clone(), unit.clone())) {
                let cut: String = s.chars().take(160).collect();
                missing.push(format!("{n} {unit} in: {cut}"));
            }
        }
    }
    missing
}

/// Every golden report and every example (path, its charts' text).
pub(crate) fn reports() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for e in std::fs::read_dir(root.join("tests/golden")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "md") {
            out.push((e.path(), String::new()));
        }
    }
    for e in std::fs::read_dir(root.join("reports")).unwrap().flatten() {
        let md = e.path().join("report.md");
        if md.exists() {
            out.push((md, chart_text(&e.path())));
        }
    }
    out.sort();
    out
}

#[test]
fn every_figure_a_sentence_states_is_in_a_table_or_chart_of_its_report() {
    let mut exempt = template_constants();
    exempt.extend(rule_constants());
    let all = reports();
    assert!(all.len() >= 15, "goldens and examples found: {}", all.len());
    let mut failures = Vec::new();
    for (path, charts) in &all {
        let md = std::fs::read_to_string(path).unwrap();
        for m in unbacked(&md, charts, &exempt) {
            failures.push(format!("{}: {m}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{} figures stated only in prose:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_check_catches_a_figure_only_prose_states() {
    let md = "## Results\n\n- The plateau is 26.1 GB/s and 1.53× the other.\n\n| curve | plateau |\n|---|---:|\n| a | 26.1 |\n\n## Methodology\n\n- Samples within ±0.50 %.\n";
    let missing = unbacked(md, "", &BTreeSet::new());
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(missing[0].starts_with("1.53 ×"), "{missing:?}");
    // A chart label backs a figure too.
    assert!(unbacked(md, "1.53×", &BTreeSet::new()).is_empty());
}
