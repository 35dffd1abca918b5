//! Help texts generated from the library's tables, and the value parsers
//! of flags that take more than a number.

/// `run --help` for PRESET|BENCH: the benchmarks, generated from the
/// benchmark table.
pub(super) fn what_help() -> String {
    format!(
        "A preset (`quick`, `full`) and/or benchmarks. A preset sets sizes and stopping rules; naming \
benchmarks runs only those. Default: `quick`. GPU benchmarks without a usable GPU are recorded as \
skipped, with the reason (see `benchbook backends`).\n\n{}",
        crate::vocab::benches::Bench::help_list()
    )
}

/// `import --help`: the fixed text, then one line per format, generated
/// from [`crate::import::formats`] so a new importer is listed by
/// registering it.
pub(crate) fn import_help() -> String {
    let formats: Vec<String> =
        crate::import::formats().iter().map(|f| format!("  {:<17} {}", f.name(), f.describe())).collect();
    format!(
        "\
Import other tools' output as one run in the archive: rows in the same schema
as native runs, a manifest naming the tool, version and command line where the
log carries them, and each original file kept inside the run with its sha256.

Every file is parsed before anything is written: a file that fails leaves the
archive untouched. Each row's note says how its numbers were read and
converted. GB/s = 10^9 bytes/s, MB/s = 10^6, MiB/s = 2^20, Gb/s = 10^9 bits/s.

The tool is detected from the content unless --tool names it:
{}",
        formats.join("\n")
    )
}

pub(super) fn parse_fleet(text: &str) -> std::result::Result<String, String> {
    crate::host::placement::check_fleet_name(text).map(|()| text.to_string())
}

/// Run the CLI; returns the process exit code.
/// `2%` or `0.02`: a fraction between 0 and 1.
pub(crate) fn parse_fraction(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("`{text}` is not a fraction; write e.g. 2% or 0.02"))?;
    if (0.0..1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("`{text}` must be at least 0 and below 100 %"))
    }
}
