//! The archive's one stable output: the row schema in Parquet. Any change
//! to a column's name, type or meaning bumps [`SCHEMA_VERSION`], which is
//! written into every file's key-value metadata (`benchbook.schema_version`)
//! and into every manifest. Readers refuse versions they do not know rather
//! than guess. The columns are documented in `docs/schema.md`.

use crate::vocab::benches::Bench;
use std::fs::File;
use std::path::Path;

use polars::prelude::*;

use crate::error::{Error, Result};
use crate::vocab::rows::Row;

/// The current row-schema version.
pub const SCHEMA_VERSION: u32 = 7;
/// Versions this build can read: v1 lacks `method` (derived on read); v1
/// and v2 lack `stop`, which the migration reads back from the start of the
/// note; v1–v3 lack the named-metric columns (`metric`, `axes`, `value`,
/// `unit`, `better`), which read as null: every older row is a timed row;
/// v1–v4 lack `round`, which reads as null: every older run is one round.
/// v1–v5 counted an `h2d`/`d2h` copy's `bytes_moved` as read + written (2 ×
/// size); from v6 a copy across the host link moves each byte once, and
/// older rows read so.
pub const READABLE_VERSIONS: [u32; 7] = [1, 2, 3, 4, 5, 6, 7];
/// Parquet key-value metadata key holding the schema version.
pub const VERSION_KEY: &str = "benchbook.schema_version";

pub use crate::vocab::columns::{from_dataframe, schema, to_dataframe};

/// Write rows to `path` as Parquet with the schema version in its metadata.
/// Not atomic by itself; [`crate::archive::store`] writes to a temporary
/// name and renames.
pub fn write_parquet(path: &Path, rows: &[Row]) -> Result<()> {
    let mut w = ParquetRows::create(path)?;
    w.write(rows)?;
    w.finish()
}

/// The most rows in one row group. A reader can then decode a large run a
/// row group at a time (`analysis::samples` does): one row group of 10^6
/// rows has to be decoded whole, even for a slice of it.
pub const ROW_GROUP_ROWS: usize = 1 << 17;

/// A Parquet file of rows written a batch (one row group) at a time, so
/// that a run of millions of rows never holds them all: the file is
/// complete (readable) only after [`ParquetRows::finish`].
pub struct ParquetRows {
    writer: polars::io::parquet::write::BatchedWriter<File>,
    path: std::path::PathBuf,
}

impl ParquetRows {
    /// Start the file at `path`, with the row schema and its version.
    pub fn create(path: &Path) -> Result<ParquetRows> {
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        let schema = to_dataframe(&[])?.schema().as_ref().clone();
        let writer = ParquetWriter::new(file)
            .with_compression(ParquetCompression::Zstd(None))
            .with_key_value_metadata(Some(KeyValueMetadata::from_static(vec![
                (VERSION_KEY.to_string(), SCHEMA_VERSION.to_string()),
                ("benchbook.version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
            ])))
            .batched(&schema)
            .map_err(|e| parquet_err(path, e))?;
        Ok(ParquetRows { writer, path: path.to_path_buf() })
    }

    /// Append `rows` as one row group, or as several of at most
    /// [`ROW_GROUP_ROWS`] (nothing for none).
    pub fn write(&mut self, rows: &[Row]) -> Result<()> {
        for part in rows.chunks(ROW_GROUP_ROWS) {
            let mut df = to_dataframe(part)?;
            df.align_chunks();
            self.writer.write_batch(&df).map_err(|e| parquet_err(&self.path, e))?;
        }
        Ok(())
    }

    /// Write the footer: the file is whole.
    pub fn finish(self) -> Result<()> {
        self.writer.finish().map_err(|e| parquet_err(&self.path, e))?;
        Ok(())
    }
}

fn parquet_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Parquet { path: path.to_path_buf(), message: e.to_string() }
}

/// Read the schema version from a file's metadata, refusing unknown ones.
pub fn check_version(path: &Path) -> Result<u32> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    version_in(&mut ParquetReader::new(file), path)
}

fn version_in<R: polars::io::mmap::MmapBytesReader>(reader: &mut ParquetReader<R>, path: &Path) -> Result<u32> {
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
    read_parquet_bytes(path, std::fs::read(path).map_err(|e| Error::io(path, e))?)
}

/// [`read_parquet`] of bytes already in memory (read once to hash them);
/// `path` names the file in errors.
pub fn read_parquet_bytes(path: &Path, data: Vec<u8>) -> Result<DataFrame> {
    let mut reader = ParquetReader::new(std::io::Cursor::new(data));
    let version = version_in(&mut reader, path)?;
    let mut df = reader.finish().map_err(|e| parquet_err(path, e))?;
    if version < SCHEMA_VERSION {
        df = migrate(df, version).map_err(|e| parquet_err(path, e))?;
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

/// The rows of a run's Parquet bytes as a lazy frame, after checking the
/// version: a query on it decodes only the columns it names (and, for
/// filters on them, only the rows it keeps). Older versions are read
/// eagerly and migrated first; they predate archives of that size.
pub fn scan_parquet_bytes(path: &Path, data: Vec<u8>) -> Result<LazyFrame> {
    let mut reader = ParquetReader::new(std::io::Cursor::new(&data[..]));
    let version = version_in(&mut reader, path)?;
    if version < SCHEMA_VERSION {
        return Ok(read_parquet_bytes(path, data)?.lazy());
    }
    let sources = ScanSources::Buffers(std::sync::Arc::from(vec![data.into()]));
    let args = ScanArgsParquet { hive_options: HiveOptions::new_disabled(), ..ScanArgsParquet::default() };
    let lf = LazyFrame::scan_parquet_sources(sources, args).map_err(|e| parquet_err(path, e))?;
    // The schema check, without reading any row.
    let found = lf.clone().collect_schema().map_err(|e| parquet_err(path, e))?;
    for f in schema().iter_fields() {
        match found.get(f.name()) {
            Some(t) if t == f.dtype() => {}
            Some(t) => return Err(parquet_err(path, format!("column `{}` is {t}, expected {}", f.name(), f.dtype()))),
            None => return Err(parquet_err(path, format!("column `{}` is missing", f.name()))),
        }
    }
    Ok(lf)
}

/// Bring a frame of an older schema `version` to the current one: `method`
/// (v2) follows from a v1 row's bench and op ([`v1_methods`]); `stop` (v3)
/// is read back from the first words of a measured row's note
/// ("converged; rsd …"); any other added column reads as null.
fn migrate(mut df: DataFrame, version: u32) -> PolarsResult<DataFrame> {
    use crate::vocab::kinds::StopReason;
    for c in crate::vocab::columns::columns().iter().filter(|c| c.since > version) {
        let values = if c.name == "method" {
            Series::new(c.name.into(), v1_methods(&df)?)
        } else if c.name == "stop" {
            let status = df.column("status")?.str()?.clone();
            let note = df.column("note")?.str()?.clone();
            let stop: Vec<Option<&str>> = status
                .iter()
                .zip(note.iter())
                .map(|(s, n)| match (s, n) {
                    (Some("measured"), Some(n)) => StopReason::from_note(n).map(StopReason::name),
                    _ => None,
                })
                .collect();
            Series::new(c.name.into(), stop)
        } else {
            Series::full_null(c.name.into(), df.height(), &c.access.dtype())
        };
        df.with_column(values.into_column())?;
    }
    if version < 6 {
        df = link_copies_move_once(df)?;
    }
    df.select(schema().iter_names().cloned())
}

/// v6: an `h2d`/`d2h` row's `bytes_moved` is its `bytes_copied` (the link
/// is crossed once), where older versions stored 2 × size.
fn link_copies_move_once(df: DataFrame) -> PolarsResult<DataFrame> {
    let link = col("bench").eq(lit(Bench::H2d.name())).or(col("bench").eq(lit(Bench::D2h.name())));
    df.lazy()
        .with_column(
            when(link.and(col("bytes_copied").is_not_null()))
                .then(col("bytes_copied"))
                .otherwise(col("bytes_moved"))
                .alias("bytes_moved"),
        )
        .collect()
}

/// The `method` of v1 rows. v1 was written by the CPU and MPI backends
/// only, and each of their benchmarks had exactly one method, so a native
/// row's method follows from its bench and op (as the v2 code sets it);
/// imported rows and whole-benchmark skip rows (`op` = `*`) stay null.
fn v1_methods(df: &DataFrame) -> PolarsResult<Vec<Option<String>>> {
    let text = |name: &str| -> PolarsResult<Vec<Option<String>>> {
        Ok(df.column(name)?.str()?.iter().map(|v| v.map(String::from)).collect())
    };
    let (source, bench, op) = (text("source")?, text("bench")?, text("op")?);
    Ok((0..df.height())
        .map(|i| {
            let (Some(source), Some(bench), Some(op)) = (&source[i], &bench[i], &op[i]) else { return None };
            if source != "native" || op == "*" {
                return None;
            }
            Some(match Bench::of(bench)? {
                Bench::Memcpy => "libc_memcpy".to_string(),
                Bench::Stream => "rust_loop".to_string(),
                Bench::Gemm => "gemm_crate".to_string(),
                Bench::P2p if op == "latency" => "mpi_ping_pong".to_string(),
                Bench::P2p => "mpi_send_recv".to_string(),
                Bench::Collective => format!("mpi_{}", op.replace('_', "")),
                _ => return None,
            })
        })
        .collect())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::rows::Point;

    #[test]
    fn v5_host_link_copies_read_with_each_byte_moved_once() {
        let row = |bench: &str, size: u64| Row {
            params: Point {
                bench: bench.into(),
                op: "copy".into(),
                size_bytes: Some(size),
                bytes_copied: Some(size),
                bytes_moved: Some(2 * size),
                ..Point::default()
            },
            ..Row::blank()
        };
        let rows = [row("h2d", 4096), row("d2h", 8192), row("memcpy", 4096)];
        let v5 = migrate(to_dataframe(&rows).unwrap(), 5).unwrap();
        let back = from_dataframe(&v5).unwrap();
        let moved: Vec<Option<u64>> = back.iter().map(|r| r.params.bytes_moved).collect();
        // The link is crossed once; a device copy still reads and writes.
        assert_eq!(moved, [Some(4096), Some(8192), Some(8192)]);
        // v6 files are read as they are.
        let v6 = migrate(to_dataframe(&rows).unwrap(), 6).unwrap();
        assert_eq!(from_dataframe(&v6).unwrap()[0].params.bytes_moved, Some(8192));
    }
}
