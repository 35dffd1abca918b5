//! nccl-tests / rccl-tests text output, in every layout people publish:
//! with or without the leading `#` on comment lines, with launcher
//! prefixes, with the device list elided or missing, with the old
//! `error` column or the newer `#wrong`, and with or without `redop`/`root`.
//!
//! Each table is read by its header: the first `time algbw busbw` group is
//! out-of-place, the second in-place; a table of one group is the one the
//! line above its header names (rccl-tests prints in-place-only tables). `size` is the byte count the tool
//! divides by, so it becomes `bytes_copied`, and the row's time is the
//! printed one. Three things are decided per table, each from every source
//! the log offers, and a disagreement is a warning, never a silent choice:
//! - **the collective**: the `# Collective test starting:` line, else the
//!   binary on the command line (`mpirun … ./build/all_reduce_perf`), else
//!   the file name; checked against what the table itself says (a `redop`,
//!   a `root`, and busbw / (size / time)). When they disagree the table wins.
//! - **the rank count**: the highest `Rank` index + 1 (published logs elide
//!   the list with `...`), else `-np`/`-n`/`--ntasks` before the binary
//!   times nThread × nGpus, else the busbw ratio, which fixes n for
//!   all_reduce, all_gather, reduce_scatter and alltoall.
//! - **the bus factor** (busbw = size / time × factor): the collective's
//!   formula over n ranks when both are known and fit the table; otherwise
//!   the table's own busbw / (size / time), and the note says so. An
//!   unknown factor is never guessed.
//!
//! This file is longer than 400 lines: the evidence scan, the table reader
//! and the decision that combines them share their types and are checked
//! together against the real-log corpus.

use super::{
    bus_factor, command_line, dtype, last_line_incomplete, lines, num, record, Claim, Format, ParseError, Parsed,
    Record,
};
use crate::vocab::benches::Bench;
use crate::vocab::benches::Family;
use crate::vocab::rows::{Point, Status};

pub struct NcclTests;

const COLLECTIVES: [&str; 11] = [
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "alltoall",
    "broadcast",
    "reduce",
    "sendrecv",
    "gather",
    "scatter",
    "hypercube",
    "alltoallv",
];

pub(crate) fn normalize_op(name: &str) -> String {
    let n = name.trim().trim_end_matches("_perf").to_ascii_lowercase().replace('-', "_");
    match n.as_str() {
        "allreduce" => "all_reduce".into(),
        "allgather" => "all_gather".into(),
        "reducescatter" => "reduce_scatter".into(),
        "alltoall" | "all_to_all" => "all_to_all".into(),
        "sendrecv" => "send_recv".into(),
        "alltoallv" => "all_to_allv".into(),
        _ => n,
    }
}

/// The collective a binary such as `./build/all_reduce_perf` or
/// `all_reduce_perf_mpi` runs.
fn op_of_binary(token: &str) -> Option<String> {
    let base = token.rsplit('/').next()?;
    let (stem, _) = base.split_once("_perf")?;
    COLLECTIVES.iter().find(|c| **c == stem).map(|c| normalize_op(c))
}

/// A collective named anywhere in `text` (the file name).
fn op_in_name(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    COLLECTIVES.iter().find(|c| lower.contains(*c)).map(|c| normalize_op(c))
}

/// What the log says outside its tables.
#[derive(Default)]
struct Evidence {
    command: Option<String>,
    binary_op: Option<String>,
    launcher_ranks: Option<u32>,
    threads: Option<u32>,
    gpus: Option<u32>,
    rank_max: Option<u32>,
    device: Option<(String, String)>,
    settings: Option<String>,
    iters: Option<u64>,
    tests_version: Option<String>,
    tests_name: Option<String>,
    library_version: Option<String>,
}

fn value_after<T: std::str::FromStr>(toks: &[&str], key: &str) -> Option<T> {
    toks.iter().position(|t| *t == key).and_then(|p| toks.get(p + 1)).and_then(|v| v.parse().ok())
}

impl Evidence {
    fn scan(all: &[(usize, &str)]) -> Evidence {
        let mut ev = Evidence::default();
        let mut joined = String::new();
        for &(_, line) in all {
            let t = line.trim();
            // Shell continuation lines make one command.
            if let Some(part) = t.strip_suffix('\\') {
                joined += part;
                joined.push(' ');
                continue;
            }
            let whole = if joined.is_empty() { t.to_string() } else { std::mem::take(&mut joined) + t };
            ev.command_line(&whole);
            let rest = whole.trim_start_matches('#').trim();
            let toks: Vec<&str> = rest.split_whitespace().collect();
            if rest.starts_with("nThread") {
                ev.threads = value_after(&toks, "nThread");
                ev.gpus = value_after(&toks, "nGpus");
                // The plain `iters:`, not `warmup iters:` or `agg iters:`.
                let pos = (1..toks.len()).find(|&p| toks[p] == "iters:" && !["warmup", "agg"].contains(&toks[p - 1]));
                ev.iters = pos.and_then(|p| toks.get(p + 1)).and_then(|v| v.parse().ok());
                ev.settings.get_or_insert_with(|| rest.to_string());
            } else if toks.first() == Some(&"Rank") && toks.contains(&"device") {
                // "Rank  0 Group  0 Pid 1234 on host1 device  0 [0x07] NVIDIA H100 80GB HBM3"
                if let Some(r) = toks.get(1).and_then(|r| r.parse::<u32>().ok()) {
                    ev.rank_max = Some(ev.rank_max.map_or(r, |m| m.max(r)));
                }
                if ev.device.is_none() {
                    let host = value_after::<String>(&toks, "on").unwrap_or_default();
                    let name = rest.rsplit_once(']').map(|(_, n)| n.trim().to_string()).unwrap_or_default();
                    ev.device = Some((host, name));
                }
            } else if let Some(v) =
                rest.strip_prefix("nccl-tests version").or_else(|| rest.strip_prefix("rccl-tests version"))
            {
                ev.tests_version.get_or_insert_with(|| v.trim().to_string());
            } else if let Some((name, v)) = rest.split_once("-tests: Version") {
                // "rccl-tests: Version develop:448c4c7" (and a published "rcccl-tests: ...")
                ev.tests_name = Some(format!("{name}-tests"));
                ev.tests_version.get_or_insert_with(|| v.trim().to_string());
            } else if let Some(v) = rest.strip_prefix("NCCL version").or_else(|| rest.strip_prefix("RCCL version")) {
                ev.library_version.get_or_insert_with(|| v.trim_start_matches([' ', ':']).trim().to_string());
            }
        }
        ev
    }

    /// The first command line that runs a `*_perf` binary (else the
    /// first launcher line, which a published log may have cut short).
    fn command_line(&mut self, line: &str) {
        if self.binary_op.is_some() {
            return;
        }
        let Some(c) = command_line(line, |t| op_of_binary(t).is_some()) else { return };
        if let Some(b) = c.binary {
            self.binary_op = op_of_binary(c.tokens[b]);
            // `-g` and `-t` of the binary itself.
            self.gpus = self.gpus.or_else(|| value_after(c.args(), "-g"));
            self.threads = self.threads.or_else(|| value_after(c.args(), "-t"));
        }
        self.launcher_ranks = c.ranks.or(self.launcher_ranks);
        if self.command.is_none() || c.binary.is_some() {
            self.command = Some(c.text());
        }
    }
}

#[derive(Clone)]
struct Cell {
    time_us: f64,
    busbw: Option<f64>,
    check: Option<String>,
}

struct TableRow {
    line: usize,
    size: u64,
    count: Option<u64>,
    dtype: Option<String>,
    redop: Option<String>,
    root: Option<i64>,
    cells: [Option<Cell>; 2],
}

/// A table as read: its header, and each row's line number and text,
/// checked for its column count and parsed when the table is emitted (a
/// row's text is smaller than its parsed form, and a table of a million
/// rows is held until its end decides its collective and bus factor).
struct Table<'a> {
    tag_op: Option<String>,
    cols: Vec<String>,
    line: usize,
    rows: Vec<(usize, &'a str)>,
    footer: Option<(usize, f64)>,
    /// What its first `time` group holds: out-of-place, unless the line
    /// above the header says `in-place` only.
    first: &'static str,
}

impl Table<'_> {
    /// The rows, parsed.
    fn parsed(&self) -> impl Iterator<Item = TableRow> + '_ {
        self.rows.iter().map(|&(no, text)| self.row(no, text))
    }

    /// One row, whose column count was checked when it was read.
    fn row(&self, no: usize, text: &str) -> TableRow {
        let toks = self.tokens(text);
        let col = |name: &str| self.index(name, 0).map(|i| toks[i]);
        let cell = |nth: usize| -> Option<Cell> {
            let time_us = num(toks[self.index("time", nth).or_else(|| self.index("cputime", nth))?])?;
            let check = self.index("#wrong", nth).or_else(|| self.index("error", nth)).map(|i| toks[i].to_string());
            Some(Cell { time_us, busbw: self.index("busbw", nth).and_then(|i| num(toks[i])), check })
        };
        TableRow {
            line: no,
            size: toks[0].parse().unwrap_or(0),
            count: col("count").and_then(|c| c.parse().ok()),
            dtype: col("type").map(dtype),
            redop: col("redop").filter(|o| !o.is_empty()).map(String::from),
            root: col("root").and_then(|r| r.parse().ok()),
            cells: [cell(0), cell(1)],
        }
    }

    /// A row's tokens, one per header column. nccl-tests up to 2.11 prints
    /// an empty `redop` for collectives without one (alltoall: six blanks),
    /// so such a row is one token short, with a number where the header
    /// says `redop`: the blank is put back. `None` when the count does not
    /// fit the header.
    fn fit<'t>(&self, text: &'t str) -> Option<Vec<&'t str>> {
        let mut toks: Vec<&str> = text.split_whitespace().collect();
        // `-S 1` (2.17.6+): a `timestamp` column printed as date and time.
        if self.cols.last().is_some_and(|c| c == "timestamp") && toks.len() == self.cols.len() + 1 {
            toks.pop();
        }
        if toks.len() + 1 == self.cols.len() {
            let at = self.index("redop", 0)?;
            toks.get(at).and_then(|t| num(t))?;
            toks.insert(at, "");
        }
        (toks.len() == self.cols.len()).then_some(toks)
    }

    /// [`Table::fit`] of a row that was checked when it was read.
    fn tokens<'t>(&self, text: &'t str) -> Vec<&'t str> {
        self.fit(text).unwrap_or_else(|| text.split_whitespace().collect())
    }

    fn index(&self, name: &str, nth: usize) -> Option<usize> {
        self.cols.iter().enumerate().filter(|(_, c)| c.as_str() == name).map(|(i, _)| i).nth(nth)
    }

    /// busbw / (size / time) of the row with the largest busbw: the bus
    /// factor the table itself used.
    fn table_factor(&self) -> Option<f64> {
        let best = self
            .parsed()
            .filter_map(|r| r.cells[0].clone().or(r.cells[1].clone()).map(|c| (r.size, c)))
            .filter(|(s, c)| *s > 0 && c.time_us > 0.0 && c.busbw.is_some_and(|b| b > 0.0))
            .max_by(|a, b| a.1.busbw.partial_cmp(&b.1.busbw).unwrap_or(std::cmp::Ordering::Equal))?;
        let rate_gbs = best.0 as f64 / (best.1.time_us * 1e-6) / 1e9;
        Some(best.1.busbw? / rate_gbs).filter(|f| f.is_finite() && *f > 0.0)
    }
}

/// The collective a table's own columns and factor point to, when they
/// point to exactly one.
fn infer_op(has_redop: Option<bool>, rooted: Option<bool>, f: f64) -> Option<&'static str> {
    if f > 1.02 && f < 2.0 {
        Some("all_reduce")
    } else if (f - 1.0).abs() <= 0.02 {
        match (rooted, has_redop) {
            (Some(true), Some(false)) => Some("broadcast"),
            (Some(true), Some(true)) => Some("reduce"),
            _ => None,
        }
    } else if (0.45..0.98).contains(&f) && has_redop == Some(true) {
        Some("reduce_scatter")
    } else {
        None // all_gather and alltoall share (n-1)/n
    }
}

/// The rank count a bus factor implies, for the collectives whose factor
/// depends on it.
fn ranks_from_factor(f: f64) -> Option<u32> {
    let n = if f > 1.02 && f < 2.0 {
        2.0 / (2.0 - f)
    } else if (0.45..0.98).contains(&f) {
        1.0 / (1.0 - f)
    } else {
        return None;
    };
    (2.0..1e6).contains(&n).then(|| n.round() as u32)
}

fn fits(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() <= 0.02
}

impl Format for NcclTests {
    fn name(&self) -> &'static str {
        "nccl-tests"
    }

    fn describe(&self) -> &'static str {
        "nccl-tests / rccl-tests text output (*_perf), any collective, old and new column layouts"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Network)
    }

    fn markers(&self) -> &'static [&'static str] {
        &[
            "# nThread",
            "# Avg bus bandwidth",
            "nccl-tests",
            "rccl-tests",
            "all_reduce_perf",
            "all_gather_perf",
            "alltoall_perf",
            "broadcast_perf",
            "reduce_scatter_perf",
            "reduce_perf",
            "sendrecv_perf",
            "gather_perf",
            "scatter_perf",
            "hypercube_perf",
        ]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        lines(text)
            .iter()
            .find(|(_, l)| is_header(l))
            .map(|&(line, _)| Claim { line, why: "a table header with `size`, `time`, `algbw` and `busbw`" })
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// Each table's records as soon as the table ends (at the next header
    /// or the end of the file): a log of many tables holds one at a time.
    fn parse_each(&self, text: &str, file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let all = lines(text);
        let ev = Evidence::scan(&all);
        let amd = ["rccl", "RCCL", "AMD Instinct", "ROCm"].iter().any(|w| text.contains(w));
        let backend = if amd { "rccl" } else { "nccl" };
        let tests = ev.tests_name.clone().unwrap_or_else(|| format!("{backend}-tests"));
        let library = backend.to_uppercase();
        let mut out = Parsed {
            tool: self.name().into(),
            backend: backend.into(),
            command: ev.command.clone(),
            settings: ev.settings.clone(),
            tool_version: match (&ev.tests_version, &ev.library_version) {
                (Some(t), Some(l)) => Some(format!("{tests} {t}; {library} {l}")),
                (Some(t), None) => Some(format!("{tests} {t}")),
                (None, Some(l)) => Some(format!("{library} {l}")),
                (None, None) => None,
            },
            ..Parsed::default()
        };
        read_tables(&all, last_line_incomplete(text), &mut out, &mut |table, out| {
            emit(&table, &ev, file_name, out, each)
        })?;
        Ok(out)
    }
}

fn is_header(line: &str) -> bool {
    let t: Vec<&str> = line.trim_start_matches('#').split_whitespace().collect();
    // `-C 1` (2.13.4+) prints CPU time as `cputime`.
    ["size", "algbw", "busbw"].iter().all(|c| t.contains(c)) && (t.contains(&"time") || t.contains(&"cputime"))
}

/// Read the tables of a log, handing each to `done` when it ends.
fn read_tables<'a>(
    all: &[(usize, &'a str)],
    truncated: bool,
    out: &mut Parsed,
    done: &mut dyn FnMut(Table<'a>, &mut Parsed),
) -> Result<(), ParseError> {
    // The table being read, and how many came before it.
    let mut table: Option<Table> = None;
    let mut tables = 0;
    let mut tag: Option<String> = None;
    // The comment line before the header (`out-of-place   in-place`).
    let mut above = "";
    for &(no, line) in all {
        let rest = line.trim().trim_start_matches('#').trim();
        if rest.is_empty() {
            continue;
        }
        let before = std::mem::replace(&mut above, rest);
        if let Some(name) = rest.strip_prefix("Collective test starting:") {
            tag = Some(normalize_op(name));
            continue;
        }
        if is_header(rest) {
            if let Some(t) = table.take() {
                done(t, out);
            }
            let cols = rest.split_whitespace().map(String::from).collect();
            let first = if before.contains("in-place") && !before.contains("out-of-place") {
                "in-place"
            } else {
                "out-of-place"
            };
            table = Some(Table { tag_op: tag.clone(), cols, line: no, rows: Vec::new(), footer: None, first });
            tables += 1;
            continue;
        }
        if let Some(v) = rest.strip_prefix("Avg bus bandwidth") {
            if let (Some(t), Some(avg)) =
                (table.as_mut(), v.trim_start_matches([' ', ':']).split_whitespace().next().and_then(num))
            {
                t.footer = Some((no, avg));
            }
            continue;
        }
        if rest.starts_with("Out of bounds values") && rest.contains("FAILED") {
            out.warnings.push(format!("line {no}: nccl-tests reports `{rest}`"));
            continue;
        }
        let Some(table) = table.as_mut() else { continue };
        if line.trim_start().starts_with('#') {
            continue;
        }
        let toks: Vec<&str> = rest.split_whitespace().collect();
        if toks.first().and_then(|t| t.parse::<u64>().ok()).is_none() {
            continue; // NCCL INFO lines, <snip>, launcher chatter between rows
        }
        // rccl-tests prints `SKIP` for a size that would send zero bytes.
        if rest.split_whitespace().any(|t| t == "SKIP") {
            out.warnings.push(format!("line {no}: the tool skipped this size (`SKIP`); no row"));
            continue;
        }
        if table.fit(rest).is_none() {
            if truncated && no == all.len() {
                out.warnings.push(format!("line {no}: incomplete last line dropped (file truncated?)"));
                continue;
            }
            return Err(ParseError::new(
                no,
                format!(
                    "expected {} columns as in the header on line {} ({}), found {}",
                    table.cols.len(),
                    table.line,
                    table.cols.join(" "),
                    toks.len()
                ),
            ));
        }
        table.rows.push((no, rest));
    }
    if tables == 0 {
        return Err(ParseError::new(
            all.len().max(1),
            "expected a `#  size  count  type ... time  algbw  busbw` header line",
        ));
    }
    if let Some(t) = table.take() {
        done(t, out);
    }
    Ok(())
}

/// Decide collective, ranks and factor for one table and push its records.
fn emit(table: &Table, ev: &Evidence, file_name: &str, out: &mut Parsed, each: &mut dyn FnMut(Record)) {
    let at = table.line;
    let f_table = table.table_factor();
    let first = table.parsed().next();
    let first = first.as_ref();
    let has_redop =
        first.map(|r| r.redop.as_deref().is_some_and(|o| o != "none")).filter(|_| table.index("redop", 0).is_some());
    let rooted = first.and_then(|r| r.root).map(|r| r >= 0);
    let claimed = table.tag_op.clone().or_else(|| ev.binary_op.clone()).or_else(|| op_in_name(file_name));
    let inferred = f_table.and_then(|f| infer_op(has_redop, rooted, f)).map(String::from);
    let op = match (&claimed, &inferred) {
        (Some(c), Some(i)) if c != i => {
            out.warnings.push(format!(
                "table at line {at}: the log names {c}, but its redop/root columns and busbw fit {i}; rows use {i}"
            ));
            Some(i.clone())
        }
        (Some(c), _) => Some(c.clone()),
        (None, Some(i)) => {
            out.warnings.push(format!(
                "table at line {at}: the log does not name its collective; its redop and root columns and busbw / algbw fit only {i}, so rows use {i}"
            ));
            Some(i.clone())
        }
        (None, None) => None,
    };
    let per_proc = ev.threads.unwrap_or(1).saturating_mul(ev.gpus.unwrap_or(1));
    let from_list = ev.rank_max.map(|m| m + 1);
    let from_cmd = ev.launcher_ranks.and_then(|p| p.checked_mul(per_proc));
    let from_ratio = f_table.and_then(ranks_from_factor);
    let mut ranks = from_list.or(from_cmd).or(from_ratio);
    if let (Some(n), Some(r), Some(o), Some(f)) = (ranks, from_ratio, &op, f_table) {
        if n != r && bus_factor(o, n).is_some_and(|b| !fits(b, f)) && bus_factor(o, r).is_some_and(|b| fits(b, f)) {
            out.warnings.push(format!(
                "table at line {at}: the log implies {n} ranks, but busbw fits {o} over {r} ranks; rows use {r}"
            ));
            ranks = Some(r);
        }
    }
    let (factor, how) = match (op.as_deref().zip(ranks).and_then(|(o, n)| bus_factor(o, n)), f_table) {
        (Some(b), Some(f)) if !fits(b, f) => {
            out.warnings.push(format!(
                "table at line {at}: the bus factor of {} over {} ranks is {b:.4}, but the table's busbw / (size / time) is {f:.4}; rows use the table's",
                op.as_deref().unwrap_or("?"),
                ranks.unwrap_or(0)
            ));
            (Some(f), "busbw = size / time × the table's own busbw ratio")
        }
        (Some(b), _) => (Some(b), "busbw = size / time × bw_factor of the collective over its ranks"),
        (None, Some(f)) => {
            (Some(f), "busbw = size / time × the table's own busbw ratio (collective or rank count not in the log)")
        }
        (None, None) => (None, "bus factor unknown"),
    };
    if op.is_none() {
        out.warnings.push(format!(
            "table at line {at}: the log does not say which collective this is (no `Collective test starting` line, no *_perf command); rows use op `unknown_collective`"
        ));
    }
    if ranks.is_none() {
        out.warnings.push(format!("table at line {at}: the rank count is not in the log"));
    }
    check_footer(table, out);
    let op_name = op.unwrap_or_else(|| "unknown_collective".into());
    for row in table.parsed() {
        for (nth, variant) in [(0, table.first), (1, "in-place")] {
            let Some(cell) = &row.cells[nth] else { continue };
            let clock = if table.index("cputime", 0).is_some() { "CPU time (`-C 1`)" } else { "time" };
            let mut note = format!("nccl-tests {variant} {clock} {} us → s; algbw = size / time; {how}", cell.time_us);
            let mut status = Status::Measured;
            match (table.index("#wrong", nth).is_some(), cell.check.as_deref()) {
                (true, Some(c)) if num(c.trim_end_matches('*')).is_some_and(|w| w > 0.0) => {
                    status = Status::Failed;
                    note = format!("{c} wrong elements reported by nccl-tests");
                }
                (_, Some("N/A")) => note += "; results not checked (-c 0)",
                (false, Some(e)) => note += &format!("; max error {e}"),
                _ => {}
            }
            if let Some(rop) = &row.redop {
                note += &format!("; redop {rop}");
            }
            if let Some(c) = row.count {
                note += &format!("; count {c}");
            }
            let mut r = record(
                Point {
                    bench: Bench::Collective.name().into(),
                    op: op_name.clone(),
                    variant: Some(variant.into()),
                    dtype: row.dtype.clone(),
                    size_bytes: Some(row.size),
                    ranks,
                    peer: row.root.filter(|r| *r >= 0).map(|r| format!("root {r}")),
                    bytes_copied: Some(row.size),
                    bw_factor: factor,
                    ..Point::default()
                },
                cell.time_us * 1e-6,
                row.line,
                note,
            );
            r.iterations = ev.iters;
            r.status = status;
            if let Some((host, name)) = &ev.device {
                r.device = Some(name.clone()).filter(|n| !n.is_empty());
                r.host = Some(host.clone()).filter(|h| !h.is_empty());
            }
            each(r);
        }
    }
}

/// The `# Avg bus bandwidth` footer against the busbw the rows give.
fn check_footer(table: &Table, out: &mut Parsed) {
    let Some((no, avg)) = table.footer else {
        if !table.rows.is_empty() {
            out.warnings.push(format!(
                "table at line {}: no `# Avg bus bandwidth` footer: the run may have been cut short",
                table.line
            ));
        }
        return;
    };
    let (sum, n) = table
        .parsed()
        .flat_map(|r| r.cells.into_iter().flatten().filter_map(|c| c.busbw))
        .fold((0.0, 0usize), |(s, n), b| (s + b, n + 1));
    if n == 0 {
        return;
    }
    let ours = sum / n as f64;
    if (ours - avg).abs() > 0.02 * avg.abs() + 0.01 {
        out.warnings
            .push(format!("line {no}: footer says average bus bandwidth {avg}, the table's rows average {ours:.4}"));
    }
}
