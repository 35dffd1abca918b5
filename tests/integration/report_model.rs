//! What every report says about a curve agrees with the one model that owns
//! it ([`benchbook::analysis::Catalog`], [`benchbook::analysis::Level`],
//! [`benchbook::vocab::interval::RateInterval`]), checked over every golden
//! report and every example under `reports/`:
//! - every plateau spans at least `PLATEAU_MIN_SIZES` sizes within
//!   `PLATEAU_TOLERANCE` (the library's own constants), and a curve's
//!   largest size is never left out without saying so;
//! - no printed rate interval reaches past 10× its value, and one that
//!   would says it has no upper bound;
//! - a curve's peak is the same number in Key results and in the
//!   observations;
//! - a chart title names no device count it cannot back, and a run's spec
//!   applies to that run's devices;
//! - every Markdown table has as many cells in each row as its header
//!   (a short separator line makes the whole table plain text in HTML);
//! - no verdict or headline rests on what the report distrusts: a key
//!   result's own interval is within the trusted half-width;
//! - a word never contradicts the numbers beside it: a summary's `same`
//!   lies inside the threshold, a conclusion's call matches its bounds.

use std::collections::BTreeMap;

use regex::Regex;

use super::report_numbers::reports;

use benchbook::analysis::stats::{PLATEAU_MIN_SIZES, PLATEAU_TOLERANCE};

/// The rule's bounds as reports print them (sizes, per cent).
fn rule() -> (f64, f64) {
    (PLATEAU_MIN_SIZES as f64, PLATEAU_TOLERANCE * 100.0 + 1e-9)
}

fn num(s: &str) -> f64 {
    s.replace(',', "").parse().unwrap()
}

/// Findings of the plateau rule in one report.
fn plateau_findings(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    // Tables: `26.1 (32 MiB to 256 MiB, 4 sizes within ±10.0 %)`.
    let cell = Regex::new(r"\(([^(),]+?) (?:to|and) ([^(),]+?), (\d+) sizes within ±([\d.]+) %\)").unwrap();
    let (min_sizes, tolerance) = rule();
    for c in cell.captures_iter(md) {
        if num(&c[3]) < min_sizes || num(&c[4]) > tolerance {
            out.push(format!("plateau cell {}", &c[0]));
        }
    }
    // Sentences: `the median of A to B: N sizes that each agree ... within ±T %`.
    let sentence =
        Regex::new(r"plateau of [\d.,]+ GB/s[^:]*: (\d+) sizes that each agree with that level within ±([\d.]+) %")
            .unwrap();
    for c in sentence.captures_iter(md) {
        if num(&c[1]) < min_sizes || num(&c[2]) > tolerance {
            out.push(format!("plateau sentence {}", &c[0]));
        }
    }
    // The old forms: a tolerance from the noise, or a pair called a plateau.
    let old = Regex::new(r"\([^()]+ and [^()]+, ±[\d.]+ %\)|twice their noise").unwrap();
    out.extend(old.find_iter(md).map(|m| format!("old plateau form {}", m.as_str())));
    // A plateau cell whose curve has larger sizes in the point table than
    // the plateau's largest must say what happened to them.
    let row = Regex::new(r"(?m)^\| ([^|]+) \| [^|]+ \| [^|]+ \| ([\d.,]+) \(([^(),]+?) to ([^(),]+?), \d+ sizes within ±[\d.]+ %\)([^|]*)\|").unwrap();
    for c in row.captures_iter(md) {
        let (curve, top, flags) = (c[1].trim(), c[4].trim(), &c[5]);
        let sizes = Regex::new(&format!(r"(?m)^\| {} \| ([^|]+) \|", regex::escape(curve))).unwrap();
        let largest = sizes.captures_iter(md).map(|s| s[1].trim().to_string()).last();
        if let Some(l) = largest.filter(|l| l != top && l.ends_with('B')) {
            if !flags.contains(&l) {
                out.push(format!("{curve}: largest size {l} left out of the plateau ending at {top} without a word"));
            }
        }
    }
    out
}

/// Printed rate intervals `X (lo–hi)` whose high end passes 10× X.
fn interval_findings(md: &str) -> Vec<String> {
    let ci = Regex::new(r"(?:^|[^\w.])(\d[\d,]*(?:\.\d+)?) \((?:(?:rerun )?95 % (?:CI|interval) )?(\d[\d,]*(?:\.\d+)?)–(\d[\d,]*(?:\.\d+)?)\)")
        .unwrap();
    ci.captures_iter(md)
        .filter(|c| {
            let (v, lo, hi) = (num(&c[1]), num(&c[2]), num(&c[3]));
            v > 0.0 && lo <= v && hi > 10.0 * v
        })
        .map(|c| format!("interval {}", c[0].trim()))
        .collect()
}

/// A curve's peak, as Key results and the observations state it.
fn peak_findings(md: &str) -> Vec<String> {
    let key =
        Regex::new(r"(?m)^- \*\*(.+?)\*\*(?: \([^)]*\))?: best median ([\d.,]+) [^ ]+ .*? at (\d+ [KMG]?i?B)").unwrap();
    let obs = Regex::new(r"(?m)^- (.+?) over \d+ ranks: (?:bus )?bandwidth peaks at ([\d.,]+) GB/s at (\d+ [KMG]?i?B)")
        .unwrap();
    let mut said: BTreeMap<String, (String, String)> = BTreeMap::new();
    for c in key.captures_iter(md) {
        said.insert(c[1].replace('\\', ""), (c[2].to_string(), c[3].to_string()));
    }
    let mut out = Vec::new();
    for c in obs.captures_iter(md) {
        let name = c[1].replace('\\', "");
        if let Some((v, at)) = said.get(&name) {
            if *v != c[2] || *at != c[3] {
                out.push(format!(
                    "{name}: peak {v} at {at} in Key results, {} at {} in the observations",
                    &c[2], &c[3]
                ));
            }
        }
    }
    out
}

/// A key result above the figure it is held against (a share over 100 %)
/// says so, or says why it can be (a working set a cache serves): a figure
/// above a physical limit is never stated without comment.
fn limit_findings(md: &str) -> Vec<String> {
    let share = Regex::new(r"(?m)^- \*\*(.+?)\*\*.*? is ([\d.]+) % of ([^.;]+?)(?:[.;:]|$)").unwrap();
    share
        .captures_iter(md)
        .filter(|c| num(&c[2]) > 100.0)
        .filter(|c| {
            let start = c.get(0).map_or(0, |m| m.start());
            let full = md[start..].lines().next().unwrap_or("");
            !full.contains("above the figure itself") && !full.contains("memory roofline because")
        })
        .map(|c| format!("{}: {} % of {} stated without comment", c[1].replace('\\', ""), &c[2], &c[3]))
        .collect()
}

/// In a report of several runs, each curve a saturation table names must
/// name its run (its label, or its id where labels repeat).
fn naming_findings(md: &str) -> Vec<String> {
    let runs: Vec<(String, String)> = md
        .lines()
        .skip_while(|l| !l.starts_with("## Runs"))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| run |") && !l.starts_with("|---"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            Some((cells.first()?.trim_start_matches("| ").replace('\\', ""), cells.get(1)?.replace('\\', "")))
        })
        .collect();
    if runs.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut in_table = false;
    for line in md.lines() {
        if line.starts_with("### Saturation") {
            in_table = true;
            continue;
        }
        if line.starts_with('#') {
            in_table = false;
        }
        if !in_table || !line.starts_with("| ") || line.starts_with("| curve") || line.starts_with("|---") {
            continue;
        }
        let curve = line.split(" | ").next().unwrap_or("").trim_start_matches("| ").replace('\\', "");
        if !runs.iter().any(|(id, label)| curve.contains(id.as_str()) || curve.contains(label.as_str())) {
            out.push(format!("curve `{curve}` does not name its run"));
        }
    }
    out
}

/// A chart title that counts devices, or a host run given a GPU's spec.
fn system_findings(md: &str, charts: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(m) = Regex::new(r"on \d+ devices").unwrap().find(charts) {
        out.push(format!("chart title counts devices: {}", m.as_str()));
    }
    // The System table: a run column with a CPU and no GPU backend holds
    // no GPU's spec.
    let rows: Vec<Vec<String>> = md
        .lines()
        .skip_while(|l| !l.starts_with("## System"))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| ") && !l.starts_with("|---"))
        .map(|l| l.split(" | ").map(|c| c.trim_matches(|x| x == '|' || x == ' ').to_string()).collect())
        .collect();
    let get = |key: &str| rows.iter().find(|r| r[0].starts_with(key));
    if let (Some(specs), Some(cpu)) = (get("Published spec"), get("CPU")) {
        for (i, s) in specs.iter().enumerate().skip(1) {
            let gpu = rows.iter().any(|r| {
                (r[0] == "Backend cuda" || r[0] == "Backend hip")
                    && r.get(i).is_some_and(|v| v.starts_with("available"))
            });
            let host = cpu.get(i).is_some_and(|v| !v.is_empty() && v != "-");
            if host && !gpu && ["H100", "H200", "MI300", "MI350", "A100", "B200"].iter().any(|g| s.contains(g)) {
                out.push(format!("a host run's column names a GPU spec: {s}"));
            }
        }
    }
    out
}

/// Cells of one Markdown table line: split on `|` not escaped as `\|`.
fn cells(line: &str) -> usize {
    let t = line.trim();
    let (mut n, mut escaped) = (0, false);
    for ch in t.trim_start_matches('|').trim_end_matches('|').chars() {
        if ch == '|' && !escaped {
            n += 1;
        }
        escaped = ch == '\\' && !escaped;
    }
    n + 1
}

/// Tables whose separator or rows have a different number of cells than
/// their header: pulldown-cmark renders such a table as a paragraph.
fn table_findings(md: &str) -> Vec<String> {
    let lines: Vec<&str> = md.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < lines.len() {
        let (head, sep) = (lines[i], lines[i + 1]);
        if head.starts_with('|') && (sep.starts_with("|--") || sep.starts_with("|:-")) {
            let want = cells(head);
            for (j, row) in lines[i + 1..].iter().take_while(|l| l.starts_with('|')).enumerate() {
                if cells(row) != want {
                    out.push(format!("table `{head}`: line {} has {} cells, the header {want}", i + 2 + j, cells(row)));
                }
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    out
}

/// A key result whose own rerun interval is wider than the trusted
/// half-width: a headline the report itself should not trust.
fn distrust_findings(md: &str) -> Vec<String> {
    let key = Regex::new(r"(?m)^- \*\*(.+?)\*\*.*?best median ([\d.]+) .*?\(rerun 95 % interval ([\d.]+)–([\d.]+)\)")
        .unwrap();
    let half = benchbook::analysis::curves::TRUSTED_HALF_WIDTH;
    key.captures_iter(md)
        .filter(|c| {
            let (v, lo, hi) = (num(&c[2]), num(&c[3]), num(&c[4]));
            // The rule holds the time interval to ±half: rates v/(1 ± h).
            v / lo - 1.0 > half + 0.005 || 1.0 - v / hi > half + 0.005
        })
        .map(|c| {
            format!(
                "{}: headline {} with interval {}–{}, wider than ±{:.0} %",
                &c[1],
                &c[2],
                &c[3],
                &c[4],
                half * 100.0
            )
        })
        .collect()
}

/// A change as the conclusion prints it (`3.9 % better`): signed, as a
/// fraction.
fn signed(pct: &str, word: &str) -> f64 {
    let v = num(pct) / 100.0;
    // As a ratio's distance from 1 (above: better), the scale a call is
    // made on: a latency's change is its own (1 − 1/r lower), not r − 1.
    match word {
        "lower" => 1.0 / (1.0 - v) - 1.0,
        "higher" => 1.0 / (1.0 + v) - 1.0,
        "slower" | "worse" => -v,
        _ => v,
    }
}

/// Words that contradict their numbers: a Summary row `same` whose
/// intervals leave the threshold, or a Conclusion call its bounds do not
/// give.
fn word_findings(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let threshold = Regex::new(r"±([\d.]+) %").unwrap().captures(md).map_or(0.02, |c| num(&c[1]) / 100.0);
    for line in md.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        if cells.len() == 10 && cells[3].starts_with("same (") {
            if let Some((lo, hi)) = cells[7].split_once('–') {
                if num(lo) < 1.0 - threshold - 1e-3 || num(hi) > 1.0 + threshold + 1e-3 {
                    out.push(format!("`same` with intervals {} beyond ±{:.1} %", cells[7], threshold * 100.0));
                }
            }
        }
    }
    let clause = Regex::new(
        r"(\w[\w ]*?) (faster|slower|better|worse|lower|higher|no change beyond ±[\d.]+ %|not resolved at ±[\d.]+ %) \(between ([\d.]+) % (\w+) and ([\d.]+) % (\w+),",
    )
    .unwrap();
    for l in md.lines().skip_while(|l| !l.starts_with("## Conclusion")).skip(1).take_while(|l| !l.starts_with("## ")) {
        for c in clause.captures_iter(l) {
            let (lo, hi) = (signed(&c[3], &c[4]), signed(&c[5], &c[6]));
            let call = &c[2];
            let ok = match call {
                "faster" | "better" | "lower" => lo > threshold,
                "slower" | "worse" | "higher" => hi < -threshold,
                x if x.starts_with("no change") => lo >= -threshold && hi <= threshold,
                _ => !(lo > threshold || hi < -threshold || (lo >= -threshold && hi <= threshold)),
            };
            if !ok {
                out.push(format!("{}: `{call}` from bounds {lo:+.3}…{hi:+.3}", &c[1]));
            }
        }
    }
    out
}

#[test]
fn every_report_states_curves_as_the_model_has_them() {
    let all = reports();
    assert!(all.len() >= 15, "goldens and examples found: {}", all.len());
    let mut findings = Vec::new();
    for (path, charts) in &all {
        let md = std::fs::read_to_string(path).unwrap();
        for f in plateau_findings(&md)
            .into_iter()
            .chain(interval_findings(&md))
            .chain(peak_findings(&md))
            .chain(system_findings(&md, charts))
            .chain(naming_findings(&md))
            .chain(limit_findings(&md))
            .chain(table_findings(&md))
            .chain(distrust_findings(&md))
            .chain(word_findings(&md))
        {
            findings.push(format!("{}: {f}", path.display()));
        }
    }
    assert!(findings.is_empty(), "{} findings:\n{}", findings.len(), findings.join("\n"));
}

/// Each check finds what it is for, on the defects the reports once had.
#[test]
fn the_checks_catch_the_defects_they_are_for() {
    // Cells stated through the rule's owner: `n` sizes within ±`t` %.
    let (n, t) = (PLATEAU_MIN_SIZES, format!("{:.1}", PLATEAU_TOLERANCE * 100.0));
    let too_few = format!("| a | 1 | 2 KiB | 17.1 (32 MiB to 128 MiB, {} sizes within ±{t} %) |", n - 1);
    assert_eq!(plateau_findings(&too_few).len(), 1);
    let too_loose =
        format!("| a | 1 | 2 KiB | 8.89 (16 MiB to 64 MiB, {n} sizes within ±{:.1} %) |", PLATEAU_TOLERANCE * 380.0);
    assert_eq!(plateau_findings(&too_loose).len(), 1);
    assert_eq!(plateau_findings("2.98 (32 MiB and 64 MiB, ±22.3 %)").len(), 1);
    let silent =
        format!("| c | 1 | 4 KiB | 17.1 (32 MiB to 128 MiB, {n} sizes within ±{t} %) | x |\n| c | 256 MiB | 1 ns |");
    assert_eq!(plateau_findings(&silent).len(), 1, "{:?}", plateau_findings(&silent));
    let flagged = format!("| c | 1 | 4 KiB | 17.1 (32 MiB to 128 MiB, {n} sizes within ±{t} %); 256 MiB jumps to 26.9, left out | x |\n| c | 256 MiB | 1 ns |");
    assert!(plateau_findings(&flagged).is_empty());
    assert_eq!(interval_findings("| 71.7 (35.9–83045) |").len(), 1);
    assert!(interval_findings("| 71.7 (≥ 35.9, no upper bound: the time interval reaches zero) |").is_empty());
    let peaks = "- **p2p bi**: best median 40.7 GB/s (bytes copied once) at 256 KiB (95 % CI 40.4–41.1)\n- p2p bi over 2 ranks: bandwidth peaks at 48.1 GB/s at 512 KiB";
    assert_eq!(peak_findings(peaks).len(), 1);
    assert_eq!(system_findings("", "network bandwidth on 3 devices: A, B, C").len(), 1);
    let spec = "## System\n\n| property | mpi |\n|---|---|\n| CPU | AMD EPYC |\n| Backend cpu | available |\n| Published spec | NVIDIA H100 SXM5 80GB |\n";
    assert_eq!(system_findings(spec, "").len(), 1);
    let runs = "## Runs\n\n| run | label | source |\n|---|---|---|\n| r1 | a | native |\n| r2 | b | native |\n\n## X\n\n### Saturation\n\n| curve | peak |\n|---|---:|\n| memcpy copy (a) | 1 |\n| memcpy copy | 2 |\n";
    assert_eq!(naming_findings(runs), vec!["curve `memcpy copy` does not name its run".to_string()]);
    let above =
        "- **GEMM bf16 8192×8192×8192**: best median 1104 TFLOP/s. Its peak is 111.6 % of H100 dense bf16 989 TFLOP/s.";
    assert_eq!(limit_findings(above).len(), 1, "{:?}", limit_findings(above));
    let said = "- **GEMM bf16 8192×8192×8192**: best median 1104 TFLOP/s. Its peak is 111.6 % of H100 dense bf16 989 TFLOP/s: above the figure itself, which a measurement cannot pass.";
    assert!(limit_findings(said).is_empty());
    assert!(limit_findings("- **memcpy**: best median 9 GB/s. Its plateau is 87.4 % of HBM 4800 GB/s.").is_empty());
    // The small-message latency table once had 5 header cells over 4.
    let short = "| curve | size | latency | counts | source |\n|---|---:|---:|---|\n| a | 2 B | 1 µs | one way | x |";
    assert_eq!(table_findings(short).len(), 1, "{:?}", table_findings(short));
    assert!(table_findings("| a | b \\| c |\n|---|---|\n| 1 | 2 |").is_empty());
    let wide =
        "- **memcpy copy**: best median 10.0 GB/s (bytes copied once) at 1 MiB (rerun 95 % interval 6.00–14.0); x";
    assert_eq!(distrust_findings(wide).len(), 1);
    assert!(distrust_findings(&wide.replace("6.00–14.0", "9.00–11.0")).is_empty());
    let same =
        "verdicts clear ±2.0 %\n| c | Memory | m | same (7 same) | 1.000 | - | 0.99–1.01 | 0.950–1.010 | ±5.0 % | - |";
    assert_eq!(word_findings(same).len(), 1, "{:?}", word_findings(same));
    assert!(word_findings(&same.replace("0.950", "0.985")).is_empty());
    let concl = "## Conclusion\n\n**b against a**: memory bandwidth faster (between 1.0 % slower and 5.0 % faster, over 3 points); workloads and serving no change beyond ±2.0 % (between 1.0 % worse and 1.5 % better, over 4 points).\n";
    assert_eq!(word_findings(concl).len(), 1, "{:?}", word_findings(concl));
    assert!(word_findings(&concl.replace("faster (", "not resolved at ±2.0 % (")).is_empty());
}
