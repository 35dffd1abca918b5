//! The one table of columns. Each archive column is declared once, here,
//! with its type, its role and how it is read from and written to a
//! [`Row`]; the Parquet schema, both Row ↔ DataFrame conversions, the list
//! of per-point parameters the analysis carries and the key that matches a
//! point across runs are all generated from it. `docs/schema.md` explains
//! each column's meaning.

use std::sync::LazyLock;

use polars::prelude::*;

use crate::error::{Error, Result};
use crate::vocab::kinds::StopReason;
use crate::vocab::rows::{Row, Status};

/// What a column says about a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Identifies the point: two runs' points match when every key column
    /// is equal (method and device included).
    Key,
    /// Constant within a point, but not part of its identity (accounting,
    /// provenance, the note).
    PerPoint,
    /// Differs per row: which run, rank, sample, and the measurement.
    PerRow,
}

/// How a column is read from and written to a [`Row`].
#[derive(Clone, Copy)]
pub enum Access {
    Str(fn(&Row) -> &str, fn(&mut Row, String)),
    OptStr(fn(&Row) -> Option<&str>, fn(&mut Row, Option<String>)),
    U32(fn(&Row) -> u32, fn(&mut Row, u32)),
    OptU32(fn(&Row) -> Option<u32>, fn(&mut Row, Option<u32>)),
    OptU64(fn(&Row) -> Option<u64>, fn(&mut Row, Option<u64>)),
    OptF64(fn(&Row) -> Option<f64>, fn(&mut Row, Option<f64>)),
}

impl Access {
    /// The Parquet/polars type of the column.
    pub fn dtype(&self) -> DataType {
        match self {
            Access::Str(..) | Access::OptStr(..) => DataType::String,
            Access::U32(..) | Access::OptU32(..) => DataType::UInt32,
            Access::OptU64(..) => DataType::UInt64,
            Access::OptF64(..) => DataType::Float64,
        }
    }
}

/// One column of the archive.
#[derive(Clone, Copy)]
pub struct ColumnDef {
    pub name: &'static str,
    pub role: Role,
    pub access: Access,
    /// The schema version that added the column (older files read it as
    /// null, or as the migration derives it).
    pub since: u32,
}

fn def(name: &'static str, role: Role, access: Access, since: u32) -> ColumnDef {
    ColumnDef { name, role, access, since }
}

static COLUMNS: LazyLock<Vec<ColumnDef>> = LazyLock::new(|| {
    use Access::*;
    use Role::*;
    vec![
        def("run_id", PerRow, Str(|r| &r.run_id, |r, v| r.run_id = v), 1),
        def("bench", Key, Str(|r| &r.params.bench, |r, v| r.params.bench = v), 1),
        def("backend", Key, Str(|r| &r.backend, |r, v| r.backend = v), 1),
        def("device", Key, Str(|r| &r.device, |r, v| r.device = v), 1),
        def("host", PerPoint, Str(|r| &r.host, |r, v| r.host = v), 1),
        def("rank", PerRow, U32(|r| r.rank, |r, v| r.rank = v), 1),
        def("point", PerRow, U32(|r| r.point, |r, v| r.point = v), 1),
        def("op", Key, Str(|r| &r.params.op, |r, v| r.params.op = v), 1),
        def("variant", Key, OptStr(|r| r.params.variant.as_deref(), |r, v| r.params.variant = v), 1),
        def("dtype", Key, OptStr(|r| r.params.dtype.as_deref(), |r, v| r.params.dtype = v), 1),
        def("size_bytes", Key, OptU64(|r| r.params.size_bytes, |r, v| r.params.size_bytes = v), 1),
        def("m", Key, OptU64(|r| r.params.m, |r, v| r.params.m = v), 1),
        def("n", Key, OptU64(|r| r.params.n, |r, v| r.params.n = v), 1),
        def("k", Key, OptU64(|r| r.params.k, |r, v| r.params.k = v), 1),
        def("threads", Key, OptU32(|r| r.params.threads, |r, v| r.params.threads = v), 1),
        def("ranks", Key, OptU32(|r| r.params.ranks, |r, v| r.params.ranks = v), 1),
        def("peer", Key, OptStr(|r| r.params.peer.as_deref(), |r, v| r.params.peer = v), 1),
        def("sample", PerRow, OptU32(|r| r.sample, |r, v| r.sample = v), 1),
        def("round", PerRow, OptU32(|r| r.round, |r, v| r.round = v), 5),
        def("iterations", PerRow, OptU64(|r| r.iterations, |r, v| r.iterations = v), 1),
        def("seconds", PerRow, OptF64(|r| r.seconds, |r, v| r.seconds = v), 1),
        def("bytes_copied", PerPoint, OptU64(|r| r.params.bytes_copied, |r, v| r.params.bytes_copied = v), 1),
        def("bytes_moved", PerPoint, OptU64(|r| r.params.bytes_moved, |r, v| r.params.bytes_moved = v), 1),
        def("flops", PerPoint, OptF64(|r| r.params.flops, |r, v| r.params.flops = v), 1),
        def("bw_factor", PerPoint, OptF64(|r| r.params.bw_factor, |r, v| r.params.bw_factor = v), 1),
        def("method", Key, OptStr(|r| r.params.method.as_deref(), |r, v| r.params.method = v), 2),
        def("timer", PerPoint, OptStr(|r| r.timer.as_deref(), |r, v| r.timer = v), 1),
        def("status", PerRow, Str(|r| r.status.as_str(), set_status), 1),
        def("note", PerPoint, OptStr(|r| r.note.as_deref(), |r, v| r.note = v), 1),
        def("stop", PerPoint, OptStr(|r| r.stop.map(StopReason::name), set_stop), 3),
        def("source", PerPoint, Str(|r| &r.source, |r, v| r.source = v), 1),
        def("metric", Key, OptStr(|r| r.params.metric.as_deref(), |r, v| r.params.metric = v), 4),
        def("axes", Key, OptStr(|r| r.params.axes.as_deref(), |r, v| r.params.axes = v), 4),
        def("value", PerRow, OptF64(|r| r.value, |r, v| r.value = v), 4),
        def("unit", PerPoint, OptStr(|r| r.params.unit.as_deref(), |r, v| r.params.unit = v), 4),
        def("better", PerPoint, OptStr(|r| r.params.better.as_deref(), |r, v| r.params.better = v), 4),
        def("clock_mhz", PerRow, OptF64(|r| r.telemetry?.clock_mhz, |r, v| tele(r, v, |t, v| t.clock_mhz = v)), 7),
        def(
            "mem_clock_mhz",
            PerRow,
            OptF64(|r| r.telemetry?.mem_clock_mhz, |r, v| tele(r, v, |t, v| t.mem_clock_mhz = v)),
            7,
        ),
        def("power_w", PerRow, OptF64(|r| r.telemetry?.power_w, |r, v| tele(r, v, |t, v| t.power_w = v)), 7),
        def(
            "temperature_c",
            PerRow,
            OptF64(|r| r.telemetry?.temperature_c, |r, v| tele(r, v, |t, v| t.temperature_c = v)),
            7,
        ),
        def("throttle", PerRow, OptU64(|r| r.telemetry?.throttle, |r, v| tele(r, v, |t, v| t.throttle = v)), 7),
        def(
            "sensor_readings",
            PerRow,
            OptU32(|r| r.telemetry.map(|t| t.readings), |r, v| tele(r, v, |t, v| t.readings = v.unwrap_or(0))),
            7,
        ),
    ]
});

/// Set one telemetry value of a row, creating its telemetry only when
/// there is a value (a row without any reading keeps `None`).
fn tele<T>(r: &mut Row, v: Option<T>, set: fn(&mut crate::vocab::telemetry::StepTelemetry, Option<T>)) {
    if v.is_some() {
        set(r.telemetry.get_or_insert_with(Default::default), v);
    }
}

// A status outside the vocabulary is refused by `from_dataframe` before
// any setter runs, so these setters never see one.
fn set_status(r: &mut Row, v: String) {
    r.status = Status::parse(&v).unwrap_or(Status::Failed);
}

fn set_stop(r: &mut Row, v: Option<String>) {
    r.stop = v.and_then(|s| StopReason::parse(&s).ok());
}

/// Every column, in file order.
pub fn columns() -> &'static [ColumnDef] {
    &COLUMNS
}

/// The columns constant within a point (key and per-point), which the
/// per-point summary carries through.
pub fn point_columns() -> Vec<&'static str> {
    COLUMNS.iter().filter(|c| c.role != Role::PerRow).map(|c| c.name).collect()
}

/// A point's identity across runs: every key column's value, as text.
pub fn point_key(row: &Row) -> Vec<Option<String>> {
    COLUMNS
        .iter()
        .filter(|c| c.role == Role::Key)
        .map(|c| match c.access {
            Access::Str(get, _) => Some(get(row).to_string()),
            Access::OptStr(get, _) => get(row).map(String::from),
            Access::U32(get, _) => Some(get(row).to_string()),
            Access::OptU32(get, _) => get(row).map(|v| v.to_string()),
            Access::OptU64(get, _) => get(row).map(|v| v.to_string()),
            Access::OptF64(get, _) => get(row).map(|v| v.to_string()),
        })
        .collect()
}

/// The Parquet schema: names and types in file order.
pub fn schema() -> Schema {
    Schema::from_iter(COLUMNS.iter().map(|c| Field::new(c.name.into(), c.access.dtype())))
}

/// Rows → a DataFrame with exactly [`schema`]'s columns and types.
pub fn to_dataframe(rows: &[Row]) -> Result<DataFrame> {
    let columns: Vec<Column> = COLUMNS
        .iter()
        .map(|c| {
            let name: PlSmallStr = c.name.into();
            let s = match c.access {
                Access::Str(get, _) => Series::new(name, rows.iter().map(get).collect::<Vec<&str>>()),
                Access::OptStr(get, _) => Series::new(name, rows.iter().map(get).collect::<Vec<Option<&str>>>()),
                Access::U32(get, _) => Series::new(name, rows.iter().map(get).collect::<Vec<u32>>()),
                Access::OptU32(get, _) => Series::new(name, rows.iter().map(get).collect::<Vec<Option<u32>>>()),
                Access::OptU64(get, _) => Series::new(name, rows.iter().map(get).collect::<Vec<Option<u64>>>()),
                Access::OptF64(get, _) => Series::new(name, rows.iter().map(get).collect::<Vec<Option<f64>>>()),
            };
            // All-null columns of an empty frame would otherwise be untyped.
            s.cast(&c.access.dtype()).map(|s| s.into_column())
        })
        .collect::<PolarsResult<_>>()
        .map_err(Error::analysis)?;
    DataFrame::new(rows.len(), columns).map_err(Error::analysis)
}

/// A DataFrame of [`schema`] → rows. Used by tests, `show`, comparisons and
/// round trips; analysis stays in polars.
pub fn from_dataframe(df: &DataFrame) -> Result<Vec<Row>> {
    let status = df.column("status").and_then(|c| c.cast(&DataType::String)).map_err(Error::analysis)?;
    for (i, v) in status.str().map_err(Error::analysis)?.iter().enumerate() {
        if let Some(v) = v.filter(|v| Status::parse(v).is_none()) {
            return Err(Error::analysis(format!("row {i}: unknown status `{v}`")));
        }
    }
    let mut rows: Vec<Row> = (0..df.height()).map(|_| Row::blank()).collect();
    for c in COLUMNS.iter() {
        let column = df.column(c.name).map_err(Error::analysis)?;
        let column = column.cast(&c.access.dtype()).map_err(Error::analysis)?;
        let required = |i: usize| Error::analysis(format!("row {i}: `{}` is null", c.name));
        match c.access {
            Access::Str(_, set) => {
                for (i, v) in column.str().map_err(Error::analysis)?.iter().enumerate() {
                    set(&mut rows[i], v.ok_or_else(|| required(i))?.to_string());
                }
            }
            Access::OptStr(_, set) => {
                for (i, v) in column.str().map_err(Error::analysis)?.iter().enumerate() {
                    set(&mut rows[i], v.map(String::from));
                }
            }
            Access::U32(_, set) => {
                for (i, v) in column.u32().map_err(Error::analysis)?.iter().enumerate() {
                    set(&mut rows[i], v.unwrap_or(0));
                }
            }
            Access::OptU32(_, set) => {
                for (i, v) in column.u32().map_err(Error::analysis)?.iter().enumerate() {
                    set(&mut rows[i], v);
                }
            }
            Access::OptU64(_, set) => {
                for (i, v) in column.u64().map_err(Error::analysis)?.iter().enumerate() {
                    set(&mut rows[i], v);
                }
            }
            Access::OptF64(_, set) => {
                for (i, v) in column.f64().map_err(Error::analysis)?.iter().enumerate() {
                    set(&mut rows[i], v);
                }
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::rows::Point;

    fn row(method: &str, device: &str) -> Row {
        Row {
            device: device.into(),
            params: Point {
                bench: "memcpy".into(),
                op: "copy".into(),
                method: Some(method.into()),
                ..Point::default()
            },
            ..Row::blank()
        }
    }

    #[test]
    fn the_key_tells_methods_and_devices_apart() {
        assert_ne!(point_key(&row("copy_engine", "GPU 0")), point_key(&row("sm_kernel", "GPU 0")));
        assert_ne!(point_key(&row("copy_engine", "GPU 0")), point_key(&row("copy_engine", "GPU 1")));
        assert_eq!(point_key(&row("copy_engine", "GPU 0")), point_key(&row("copy_engine", "GPU 0")));
    }

    #[test]
    fn rows_round_trip_through_a_dataframe() {
        let mut a = row("libc_memcpy", "cpu");
        a.stop = Some(StopReason::MaxTime);
        a.seconds = Some(0.5);
        let back = from_dataframe(&to_dataframe(&[a.clone()]).unwrap()).unwrap();
        assert_eq!(back, vec![a]);
        assert_eq!(to_dataframe(&[]).unwrap().schema().as_ref(), &schema());
    }
}
