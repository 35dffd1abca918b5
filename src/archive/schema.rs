//! The archive's one stable output: the row schema in Parquet. Any change
//! to a column's name, type or meaning bumps [`SCHEMA_VERSION`], which is
//! written into every file's key-value metadata (`benchbook.schema_version`)
//! and into every manifest. Readers refuse versions they do not know rather
//! than guess. The columns are documented in `docs/schema.md`.

use std::fs::File;
use std::path::Path;

use polars::prelude::*;

use crate::error::{Error, Result};
use crate::rows::{Point, Row, Status};

/// The current row-schema version.
pub const SCHEMA_VERSION: u32 = 2;
/// Versions this build can read. Version 1 lacks `method`; it reads as null.
pub const READABLE_VERSIONS: [u32; 2] = [1, 2];
/// Parquet key-value metadata key holding the schema version.
pub const VERSION_KEY: &str = "benchbook.schema_version";

/// Column names and types, in file order. `docs/schema.md` explains each.
pub fn schema() -> Schema {
    use DataType::*;
    Schema::from_iter(
        [
            ("run_id", String),
            ("bench", String),
            ("backend", String),
            ("device", String),
            ("host", String),
            ("rank", UInt32),
            ("point", UInt32),
            ("op", String),
            ("variant", String),
            ("dtype", String),
            ("size_bytes", UInt64),
            ("m", UInt64),
            ("n", UInt64),
            ("k", UInt64),
            ("threads", UInt32),
            ("ranks", UInt32),
            ("peer", String),
            ("sample", UInt32),
            ("iterations", UInt64),
            ("seconds", Float64),
            ("bytes_copied", UInt64),
            ("bytes_moved", UInt64),
            ("flops", Float64),
            ("bw_factor", Float64),
            ("method", String),
            ("timer", String),
            ("status", String),
            ("note", String),
            ("source", String),
        ]
        .into_iter()
        .map(|(n, t)| Field::new(n.into(), t)),
    )
}

fn col<T>(name: &str, v: Vec<T>) -> Column
where
    Series: NamedFrom<Vec<T>, [T]>,
{
    Series::new(name.into(), v).into_column()
}

/// Rows → a DataFrame with exactly [`schema`]'s columns and types.
pub fn to_dataframe(rows: &[Row]) -> Result<DataFrame> {
    let s = |f: fn(&Row) -> &str| rows.iter().map(f).collect::<Vec<&str>>();
    let os = |f: fn(&Row) -> Option<&str>| rows.iter().map(f).collect::<Vec<Option<&str>>>();
    let u64s = |f: fn(&Row) -> Option<u64>| rows.iter().map(f).collect::<Vec<Option<u64>>>();
    let u32s = |f: fn(&Row) -> Option<u32>| rows.iter().map(f).collect::<Vec<Option<u32>>>();
    let f64s = |f: fn(&Row) -> Option<f64>| rows.iter().map(f).collect::<Vec<Option<f64>>>();
    let columns = vec![
        col("run_id", s(|r| &r.run_id)),
        col("bench", s(|r| &r.params.bench)),
        col("backend", s(|r| &r.backend)),
        col("device", s(|r| &r.device)),
        col("host", s(|r| &r.host)),
        col("rank", rows.iter().map(|r| r.rank).collect::<Vec<u32>>()),
        col("point", rows.iter().map(|r| r.point).collect::<Vec<u32>>()),
        col("op", s(|r| &r.params.op)),
        col("variant", os(|r| r.params.variant.as_deref())),
        col("dtype", os(|r| r.params.dtype.as_deref())),
        col("size_bytes", u64s(|r| r.params.size_bytes)),
        col("m", u64s(|r| r.params.m)),
        col("n", u64s(|r| r.params.n)),
        col("k", u64s(|r| r.params.k)),
        col("threads", u32s(|r| r.params.threads)),
        col("ranks", u32s(|r| r.params.ranks)),
        col("peer", os(|r| r.params.peer.as_deref())),
        col("sample", u32s(|r| r.sample)),
        col("iterations", u64s(|r| r.iterations)),
        col("seconds", f64s(|r| r.seconds)),
        col("bytes_copied", u64s(|r| r.params.bytes_copied)),
        col("bytes_moved", u64s(|r| r.params.bytes_moved)),
        col("flops", f64s(|r| r.params.flops)),
        col("bw_factor", f64s(|r| r.params.bw_factor)),
        col("method", os(|r| r.params.method.as_deref())),
        col("timer", os(|r| r.timer.as_deref())),
        col("status", s(|r| r.status.as_str())),
        col("note", os(|r| r.note.as_deref())),
        col("source", s(|r| &r.source)),
    ];
    let df = DataFrame::new(rows.len(), columns).map_err(Error::analysis)?;
    // The null-only columns of an empty frame would otherwise be untyped.
    df.lazy()
        .select(
            schema()
                .iter_fields()
                .map(|f| polars::prelude::col(f.name().clone()).cast(f.dtype().clone()))
                .collect::<Vec<_>>(),
        )
        .collect()
        .map_err(Error::analysis)
}

/// Write rows to `path` as Parquet with the schema version in its metadata.
/// Not atomic by itself; [`crate::archive::store`] writes to a temporary
/// name and renames.
pub fn write_parquet(path: &Path, rows: &[Row]) -> Result<()> {
    let mut df = to_dataframe(rows)?;
    let file = File::create(path).map_err(|e| Error::io(path, e))?;
    ParquetWriter::new(file)
        .with_compression(ParquetCompression::Zstd(None))
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(vec![
            (VERSION_KEY.to_string(), SCHEMA_VERSION.to_string()),
            ("benchbook.version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ])))
        .finish(&mut df)
        .map_err(|e| Error::Parquet { path: path.to_path_buf(), message: e.to_string() })?;
    Ok(())
}

fn parquet_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Parquet { path: path.to_path_buf(), message: e.to_string() }
}

/// Read the schema version from a file's metadata, refusing unknown ones.
pub fn check_version(path: &Path) -> Result<u32> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = ParquetReader::new(file);
    let meta = reader.get_metadata().map_err(|e| parquet_err(path, e))?;
    let found = meta
        .key_value_metadata()
        .as_ref()
        .and_then(|kv| kv.iter().find(|k| k.key == VERSION_KEY))
        .and_then(|k| k.value.clone());
    let supported = READABLE_VERSIONS.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ");
    match found {
        None => Err(Error::SchemaVersion {
            path: path.to_path_buf(),
            found: "none (this Parquet file was not written by benchbook)".into(),
            supported,
        }),
        Some(v) => match v.parse::<u32>() {
            Ok(n) if READABLE_VERSIONS.contains(&n) => Ok(n),
            _ => Err(Error::SchemaVersion { path: path.to_path_buf(), found: v, supported }),
        },
    }
}

/// Read a run's Parquet file eagerly, after checking its version.
pub fn read_parquet(path: &Path) -> Result<DataFrame> {
    let version = check_version(path)?;
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut df = ParquetReader::new(file).finish().map_err(|e| parquet_err(path, e))?;
    if version == 1 {
        // v1 → v2: `method` did not exist; it reads as unknown (null).
        df = df
            .lazy()
            .with_column(lit(NULL).cast(DataType::String).alias("method"))
            .select(schema().iter_names().map(|n| polars::prelude::col(n.clone())).collect::<Vec<_>>())
            .collect()
            .map_err(|e| parquet_err(path, e))?;
    }
    let want = schema();
    for f in want.iter_fields() {
        match df.schema().get(f.name()) {
            Some(t) if t == f.dtype() => {}
            Some(t) => return Err(parquet_err(path, format!("column `{}` is {t}, expected {}", f.name(), f.dtype()))),
            None => return Err(parquet_err(path, format!("column `{}` is missing", f.name()))),
        }
    }
    Ok(df)
}

/// DataFrame (of [`schema`]) → rows. Used by tests, `show` and importers'
/// round trips; analysis stays in polars.
pub fn from_dataframe(df: &DataFrame) -> Result<Vec<Row>> {
    use columns::{f64s as f64_col, strings as str_col, u32s as u32_col, u64s as u64_col};
    let (str_col, u64_col, u32_col, f64_col) =
        (|n| str_col(df, n), |n| u64_col(df, n), |n| u32_col(df, n), |n| f64_col(df, n));
    let (run_id, bench, backend, device, host) =
        (str_col("run_id")?, str_col("bench")?, str_col("backend")?, str_col("device")?, str_col("host")?);
    let (rank, point) = (u32_col("rank")?, u32_col("point")?);
    let (op, variant, dtype, peer) = (str_col("op")?, str_col("variant")?, str_col("dtype")?, str_col("peer")?);
    let (size, m, n, k) = (u64_col("size_bytes")?, u64_col("m")?, u64_col("n")?, u64_col("k")?);
    let (threads, ranks, sample) = (u32_col("threads")?, u32_col("ranks")?, u32_col("sample")?);
    let (iterations, copied, moved) = (u64_col("iterations")?, u64_col("bytes_copied")?, u64_col("bytes_moved")?);
    let (seconds, flops, bw, method) =
        (f64_col("seconds")?, f64_col("flops")?, f64_col("bw_factor")?, str_col("method")?);
    let (timer, status, note, source) = (str_col("timer")?, str_col("status")?, str_col("note")?, str_col("source")?);
    let need = |v: &Option<String>, name: &str, i: usize| -> Result<String> {
        v.clone().ok_or_else(|| Error::analysis(format!("row {i}: `{name}` is null")))
    };
    (0..df.height())
        .map(|i| {
            let status_text = need(&status[i], "status", i)?;
            Ok(Row {
                run_id: need(&run_id[i], "run_id", i)?,
                backend: need(&backend[i], "backend", i)?,
                device: need(&device[i], "device", i)?,
                host: need(&host[i], "host", i)?,
                rank: rank[i].unwrap_or(0),
                point: point[i].unwrap_or(0),
                params: Point {
                    bench: need(&bench[i], "bench", i)?,
                    op: need(&op[i], "op", i)?,
                    variant: variant[i].clone(),
                    dtype: dtype[i].clone(),
                    size_bytes: size[i],
                    m: m[i],
                    n: n[i],
                    k: k[i],
                    threads: threads[i],
                    ranks: ranks[i],
                    peer: peer[i].clone(),
                    bytes_copied: copied[i],
                    bytes_moved: moved[i],
                    flops: flops[i],
                    bw_factor: bw[i],
                    method: method[i].clone(),
                },
                sample: sample[i],
                iterations: iterations[i],
                seconds: seconds[i],
                timer: timer[i].clone(),
                status: Status::parse(&status_text)
                    .ok_or_else(|| Error::analysis(format!("row {i}: unknown status `{status_text}`")))?,
                note: note[i].clone(),
                source: need(&source[i], "source", i)?,
            })
        })
        .collect()
}

/// Typed readers of one DataFrame column, shared by every DataFrame → Rust
/// conversion. Numeric readers cast, so a u32 column reads as u64 and so on.
pub mod columns {
    use polars::prelude::*;

    use crate::error::{Error, Result};

    fn column(df: &DataFrame, name: &str, dtype: &DataType) -> Result<Column> {
        df.column(name).map_err(Error::analysis)?.cast(dtype).map_err(Error::analysis)
    }

    pub fn strings(df: &DataFrame, name: &str) -> Result<Vec<Option<String>>> {
        let c = column(df, name, &DataType::String)?;
        Ok(c.str().map_err(Error::analysis)?.iter().map(|o| o.map(String::from)).collect())
    }

    pub fn u64s(df: &DataFrame, name: &str) -> Result<Vec<Option<u64>>> {
        let c = column(df, name, &DataType::UInt64)?;
        Ok(c.u64().map_err(Error::analysis)?.iter().collect())
    }

    pub fn u32s(df: &DataFrame, name: &str) -> Result<Vec<Option<u32>>> {
        let c = column(df, name, &DataType::UInt32)?;
        Ok(c.u32().map_err(Error::analysis)?.iter().collect())
    }

    pub fn f64s(df: &DataFrame, name: &str) -> Result<Vec<Option<f64>>> {
        let c = column(df, name, &DataType::Float64)?;
        Ok(c.f64().map_err(Error::analysis)?.iter().collect())
    }
}
