//! Reference data: the numbers the seed write-ups publish (GEMM tables,
//! comparisons with other GPUs, specs, bandwidth figures), each with its
//! document, table, row, unit and kind (`published` measurement or quoted
//! `spec`). They are *published, not measured here*: reports set runs
//! beside them and say so.
//!
//! The source is hand-transcribed TOML (`data/reference/src/*.toml`, one
//! file per document); `data/reference/published.parquet` is built from it
//! ([`build_frame`]) and embedded, and a test checks the two agree.

use std::io::Cursor;

use polars::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The Parquet benchbook ships (built from the TOML sources).
pub const PARQUET: &[u8] = include_bytes!("../../data/reference/published.parquet");

/// The TOML sources, embedded (name, text).
pub const SOURCES: [(&str, &str); 5] = [
    ("000_mi300x_memcpy_peer.toml", include_str!("../../data/reference/src/000_mi300x_memcpy_peer.toml")),
    ("001_mi300x_memcpy.toml", include_str!("../../data/reference/src/001_mi300x_memcpy.toml")),
    ("002_mi350x_gemm_training.toml", include_str!("../../data/reference/src/002_mi350x_gemm_training.toml")),
    ("003_aws_efa_nvlink.toml", include_str!("../../data/reference/src/003_aws_efa_nvlink.toml")),
    (
        "004_amd_baremetal_containers_partitions.toml",
        include_str!("../../data/reference/src/004_amd_baremetal_containers_partitions.toml"),
    ),
];

/// One published number.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RefRow {
    pub document: String,
    pub title: String,
    pub table: String,
    pub row: u32,
    pub quantity: String,
    pub device: String,
    pub dtype: Option<String>,
    pub m: Option<u64>,
    pub n: Option<u64>,
    pub k: Option<u64>,
    pub size_bytes: Option<u64>,
    /// The GPUs the number was measured on, where a table varies them (a
    /// DDP scaling table).
    pub gpus: Option<u32>,
    /// As printed (`1,019`, `~40`, `10-15`).
    pub value_text: String,
    /// The number, where the printed value is one (thousands separators
    /// removed); `None` for ranges and the like.
    pub value: Option<f64>,
    pub unit: String,
    /// `published` (a measurement the document reports) or `spec`.
    pub kind: String,
    pub note: Option<String>,
}

#[derive(Deserialize)]
struct SourceFile {
    document: Doc,
    row: Vec<SourceRow>,
}

#[derive(Deserialize)]
struct Doc {
    id: String,
    title: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceRow {
    table: String,
    row: u32,
    quantity: String,
    #[serde(default)]
    device: String,
    dtype: Option<String>,
    m: Option<u64>,
    n: Option<u64>,
    k: Option<u64>,
    size_bytes: Option<u64>,
    gpus: Option<u32>,
    value: String,
    unit: String,
    kind: String,
    note: Option<String>,
}

/// A printed value as a number: `1,019` → 1019; `10-15`, `950K` → none.
pub fn parse_value(text: &str) -> Option<f64> {
    let t = text.trim().replace(',', "");
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Parse one TOML source; errors name the file and line.
pub fn parse_source(name: &str, text: &str) -> Result<Vec<RefRow>> {
    let f: SourceFile =
        toml::from_str(text).map_err(|e| crate::analysis::specs::toml_error(std::path::Path::new(name), text, &e))?;
    Ok(f.row
        .into_iter()
        .map(|r| RefRow {
            document: f.document.id.clone(),
            title: f.document.title.clone(),
            table: r.table,
            row: r.row,
            quantity: r.quantity,
            device: r.device,
            dtype: r.dtype,
            m: r.m,
            n: r.n,
            k: r.k,
            size_bytes: r.size_bytes,
            gpus: r.gpus,
            value: parse_value(&r.value),
            value_text: r.value,
            unit: r.unit,
            kind: r.kind,
            note: r.note,
        })
        .collect())
}

/// Every row of the embedded TOML sources.
pub fn from_sources() -> Result<Vec<RefRow>> {
    let mut v = Vec::new();
    for (name, text) in SOURCES {
        v.extend(parse_source(name, text)?);
    }
    Ok(v)
}

/// The rows as a DataFrame (the Parquet's layout).
pub fn build_frame(rows: &[RefRow]) -> Result<DataFrame> {
    let s = |name: &str, f: &dyn Fn(&RefRow) -> String| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<String>>())
    };
    let o = |name: &str, f: &dyn Fn(&RefRow) -> Option<String>| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<Option<String>>>())
    };
    let u = |name: &str, f: &dyn Fn(&RefRow) -> Option<u64>| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<Option<u64>>>())
    };
    DataFrame::new(
        rows.len(),
        vec![
            s("document", &|r| r.document.clone()),
            s("title", &|r| r.title.clone()),
            s("table", &|r| r.table.clone()),
            Column::new("row".into(), rows.iter().map(|r| r.row).collect::<Vec<u32>>()),
            s("quantity", &|r| r.quantity.clone()),
            s("device", &|r| r.device.clone()),
            o("dtype", &|r| r.dtype.clone()),
            u("m", &|r| r.m),
            u("n", &|r| r.n),
            u("k", &|r| r.k),
            u("size_bytes", &|r| r.size_bytes),
            Column::new("gpus".into(), rows.iter().map(|r| r.gpus).collect::<Vec<Option<u32>>>()),
            s("value_text", &|r| r.value_text.clone()),
            Column::new("value".into(), rows.iter().map(|r| r.value).collect::<Vec<Option<f64>>>()),
            s("unit", &|r| r.unit.clone()),
            s("kind", &|r| r.kind.clone()),
            o("note", &|r| r.note.clone()),
        ],
    )
    .map_err(Error::analysis)
}

/// Write the rows as Parquet (how `published.parquet` is made).
pub fn write_parquet(rows: &[RefRow], path: &std::path::Path) -> Result<()> {
    let mut df = build_frame(rows)?;
    let mut buf = Vec::new();
    ParquetWriter::new(&mut buf).finish(&mut df).map_err(Error::analysis)?;
    crate::archive::store::write_atomic(path, &buf)
}

/// The embedded Parquet, read back into rows.
pub fn load() -> Result<Vec<RefRow>> {
    let df = ParquetReader::new(Cursor::new(PARQUET)).finish().map_err(Error::analysis)?;
    frame_rows(&df)
}

fn frame_rows(df: &DataFrame) -> Result<Vec<RefRow>> {
    let col = |n: &str| df.column(n).map_err(Error::analysis);
    let st = |n: &str| -> Result<Vec<Option<String>>> {
        Ok(col(n)?.str().map_err(Error::analysis)?.iter().map(|v| v.map(String::from)).collect())
    };
    let u6 = |n: &str| -> Result<Vec<Option<u64>>> { Ok(col(n)?.u64().map_err(Error::analysis)?.iter().collect()) };
    let (document, title, table, quantity, device, dtype) =
        (st("document")?, st("title")?, st("table")?, st("quantity")?, st("device")?, st("dtype")?);
    let (value_text, unit, kind, note) = (st("value_text")?, st("unit")?, st("kind")?, st("note")?);
    let (m, n, k, size) = (u6("m")?, u6("n")?, u6("k")?, u6("size_bytes")?);
    let row: Vec<Option<u32>> = col("row")?.u32().map_err(Error::analysis)?.iter().collect();
    let gpus: Vec<Option<u32>> = col("gpus")?.u32().map_err(Error::analysis)?.iter().collect();
    let value: Vec<Option<f64>> = col("value")?.f64().map_err(Error::analysis)?.iter().collect();
    Ok((0..df.height())
        .map(|i| RefRow {
            document: document[i].clone().unwrap_or_default(),
            title: title[i].clone().unwrap_or_default(),
            table: table[i].clone().unwrap_or_default(),
            row: row[i].unwrap_or_default(),
            quantity: quantity[i].clone().unwrap_or_default(),
            device: device[i].clone().unwrap_or_default(),
            dtype: dtype[i].clone(),
            m: m[i],
            n: n[i],
            k: k[i],
            size_bytes: size[i],
            gpus: gpus[i],
            value_text: value_text[i].clone().unwrap_or_default(),
            value: value[i],
            unit: unit[i].clone().unwrap_or_default(),
            kind: kind[i].clone().unwrap_or_default(),
            note: note[i].clone(),
        })
        .collect())
}

/// One row of a scaling table recomputed from published throughputs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RefScaling {
    pub table: String,
    pub quantity: String,
    pub device: String,
    pub unit: String,
    pub gpus: u32,
    /// The throughput as printed, and as a number.
    pub value_text: String,
    pub value: f64,
    /// value / value at the fewest GPUs.
    pub speedup: f64,
    /// speedup / (N / N₀) for a total; value / value₀ for a per-GPU figure.
    pub efficiency: f64,
    /// The efficiency the document prints on the same table row, if any.
    pub published_efficiency_pct: Option<f64>,
}

/// Whether a published throughput is per GPU (then efficiency is its ratio
/// to the base) rather than a total over all GPUs.
fn per_gpu(r: &RefRow) -> bool {
    r.unit.contains("/GPU") || r.note.as_deref().is_some_and(|n| n.to_lowercase().contains("per gpu"))
}

/// Scaling efficiency recomputed from every published throughput whose
/// table varies the GPU count (two or more values), beside the efficiency
/// the document prints on the same row, so a reader sees whether the
/// document's own arithmetic holds. Rates only: a `%` row is a result.
pub fn scaling(rows: &[RefRow]) -> Vec<RefScaling> {
    type Key = (String, String, String, String, Option<String>);
    let mut groups: std::collections::BTreeMap<Key, Vec<&RefRow>> = Default::default();
    for r in rows.iter().filter(|r| r.kind == "published" && r.gpus.is_some_and(|g| g > 0) && r.unit != "%") {
        if r.value.is_some_and(|v| v > 0.0) {
            let key = (r.document.clone(), r.table.clone(), r.quantity.clone(), r.device.clone(), r.dtype.clone());
            groups.entry(key).or_default().push(r);
        }
    }
    let mut out = Vec::new();
    for ((document, table, ..), mut g) in groups {
        g.sort_by_key(|r| r.gpus);
        let distinct: std::collections::BTreeSet<u32> = g.iter().filter_map(|r| r.gpus).collect();
        if distinct.len() < 2 {
            continue;
        }
        let (n0, v0) = (g[0].gpus.unwrap_or(1) as f64, g[0].value.unwrap_or(1.0));
        for r in g {
            let (n, v) = (r.gpus.unwrap_or(1), r.value.unwrap_or(0.0));
            let speedup = v / v0;
            let published_efficiency_pct = rows
                .iter()
                .find(|e| {
                    e.document == document && e.table == table && e.row == r.row && e.quantity == "scaling_efficiency"
                })
                .and_then(|e| e.value);
            out.push(RefScaling {
                table: table.clone(),
                quantity: r.quantity.clone(),
                device: r.device.clone(),
                unit: r.unit.clone(),
                gpus: n,
                value_text: r.value_text.clone(),
                value: v,
                speedup,
                efficiency: if per_gpu(r) { speedup } else { speedup / (n as f64 / n0) },
                published_efficiency_pct,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped Parquet is exactly what the TOML sources say; with
    /// BENCHBOOK_BLESS=1 it is rebuilt from them.
    #[test]
    fn reference_parquet_is_built_from_its_sources() {
        let rows = from_sources().unwrap();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/reference/published.parquet");
        if std::env::var_os("BENCHBOOK_BLESS").is_some() {
            write_parquet(&rows, &path).unwrap();
        }
        let shipped = frame_rows(&ParquetReader::new(std::fs::File::open(&path).unwrap()).finish().unwrap()).unwrap();
        assert_eq!(shipped, rows, "data/reference/published.parquet is stale: rebless it");
        assert!(rows.len() > 100);
        assert!(rows.iter().all(|r| r.kind == "published" || r.kind == "spec"), "kind is published or spec");
        assert!(rows.iter().any(|r| r.quantity == "gemm_throughput" && r.value.is_some()));
    }

    #[test]
    fn the_published_ddp_table_is_recomputed_and_agrees_with_its_printed_efficiency() {
        let rows = from_sources().unwrap();
        let sc = scaling(&rows);
        let tokens: Vec<&RefScaling> = sc.iter().filter(|r| r.quantity == "training_throughput").collect();
        assert_eq!(tokens.iter().map(|r| r.gpus).collect::<Vec<_>>(), [1, 2, 4, 8]);
        assert!((tokens[3].efficiency - 70763.0 / (8.0 * 18324.0)).abs() < 1e-12);
        for r in &tokens {
            let printed = r.published_efficiency_pct.unwrap();
            assert!((100.0 * r.efficiency - printed).abs() < 0.06, "{} GPUs: {printed}", r.gpus);
        }
        // A per-GPU figure scales by its own ratio; one GPU count is no table.
        let mut one = rows.iter().find(|r| r.quantity == "training_throughput" && r.gpus == Some(2)).unwrap().clone();
        let mut two = one.clone();
        (one.gpus, one.value, one.unit) = (Some(1), Some(100.0), "tokens/s/GPU".into());
        (two.value, two.unit) = (Some(90.0), "tokens/s/GPU".into());
        let s = scaling(&[one.clone(), two.clone()]);
        assert!((s[1].efficiency - 0.9).abs() < 1e-12);
        two.gpus = Some(1);
        assert!(scaling(&[one, two]).is_empty());
    }

    #[test]
    fn printed_values_parse_only_when_they_are_one_number() {
        assert_eq!(parse_value("1,019"), Some(1019.0));
        assert_eq!(parse_value("0.004"), Some(0.004));
        assert_eq!(parse_value("10-15"), None);
        assert_eq!(parse_value("950K"), None);
    }
}
