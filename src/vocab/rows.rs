//! The row: one timed sample (or one skipped/failed point) in long format.
//! This is the vocabulary every stage shares: benchmarks and importers make
//! rows, the archive stores them (see `archive::schema` for the Parquet
//! mapping and its version), analysis reads them back.
//!
//! Accounting is *per operation*: `bytes_copied`, `bytes_moved` and `flops`
//! describe one operation, `iterations` how many ran in the sample and
//! `seconds` how long the whole sample took. Rates are derived, never stored.

use serde::{Deserialize, Serialize};

use crate::vocab::kinds::StopReason;

/// Whether a row holds a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// A timed sample.
    Measured,
    /// The point could not run here; `note` says why.
    Skipped,
    /// The point ran and failed (e.g. the copied data did not validate).
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Measured => "measured",
            Status::Skipped => "skipped",
            Status::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "measured" => Some(Status::Measured),
            "skipped" => Some(Status::Skipped),
            "failed" => Some(Status::Failed),
            _ => None,
        }
    }
}

/// The parameters and per-operation accounting of one benchmark point.
/// Fields that do not apply stay `None` (null in Parquet).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Benchmark name: `memcpy`, `stream`, `gemm`, ...
    pub bench: String,
    /// Operation: `copy`, `scale`, `add`, `triad`, `gemm`, `all_reduce`, ...
    pub op: String,
    /// Mode, e.g. `warm`, `cold`, `in-place`.
    pub variant: Option<String>,
    pub dtype: Option<String>,
    pub size_bytes: Option<u64>,
    pub m: Option<u64>,
    pub n: Option<u64>,
    pub k: Option<u64>,
    pub threads: Option<u32>,
    pub ranks: Option<u32>,
    pub peer: Option<String>,
    /// Bytes one operation copies, counted once (the payload).
    pub bytes_copied: Option<u64>,
    /// Bytes one operation moves through memory: read + written.
    pub bytes_moved: Option<u64>,
    /// Floating-point operations of one operation.
    pub flops: Option<f64>,
    /// nccl-tests' bus-bandwidth factor for collectives.
    pub bw_factor: Option<f64>,
    /// How the operation was performed: `libc_memcpy`, `copy_engine`,
    /// `sm_kernel`, `cublas_gemm_ex`, `gemm_crate`, ... (schema v2).
    pub method: Option<String>,
    /// A named metric's name (schema v4): `tokens_per_s`, `ttft_ms_p99`, ...;
    /// null on timed rows, whose measurement is `seconds`.
    #[serde(default)]
    pub metric: Option<String>,
    /// The point's named parameters as canonical JSON (`{"gpus":8,"model":"7b"}`,
    /// keys sorted; see [`crate::vocab::metrics`]); schema v4.
    #[serde(default)]
    pub axes: Option<String>,
    /// The metric's unit: `tokens/s`, `ms`, `GB`, `1` (schema v4).
    #[serde(default)]
    pub unit: Option<String>,
    /// Which way the metric improves: `higher` or `lower` (schema v4).
    #[serde(default)]
    pub better: Option<String>,
}

impl Point {
    /// A short label for progress output and tables: `memcpy copy 64 MiB 2T`.
    pub fn label(&self) -> String {
        self.label_with(true)
    }

    /// [`Point::label`], with or without an op that repeats the bench's
    /// name (`gemm gemm bf16 …` or `gemm bf16 …`).
    pub(crate) fn label_with(&self, repeated_op: bool) -> String {
        if let Some(metric) = &self.metric {
            let axes = crate::vocab::metrics::params_label(&crate::vocab::metrics::parse_params(self.axes.as_deref()));
            return if axes.is_empty() { metric.clone() } else { format!("{metric} {axes}") };
        }
        let mut s = if repeated_op || self.op != self.bench {
            format!("{} {}", self.bench, self.op)
        } else {
            self.bench.clone()
        };
        if let Some(d) = &self.dtype {
            s += &format!(" {d}");
        }
        if let (Some(m), Some(n), Some(k)) = (self.m, self.n, self.k) {
            s += &format!(" {}", crate::vocab::gemm::shape(m, n, k));
        } else if let Some(b) = self.size_bytes {
            s += &format!(" {}", crate::vocab::units::format_bytes(b));
        }
        if let Some(t) = self.threads {
            s += &format!(" {t}T");
        }
        s
    }

    /// What may set this point apart from others of the same [`Point::label`]:
    /// (what, value) pairs, in the order a label names them.
    pub(crate) fn qualifiers(&self) -> Vec<(&'static str, String)> {
        let mut q = Vec::new();
        if let Some(m) = &self.method {
            q.push(("method", m.clone()));
        }
        if let Some(v) = &self.variant {
            q.push(("variant", v.clone()));
        }
        if let Some(p) = &self.peer {
            q.push(("peer", format!("GPU {p}")));
        }
        let gemm = (self.bench == crate::vocab::benches::Bench::Gemm.name())
            .then(|| crate::vocab::gemm::GemmSetting::recorded(self))
            .flatten();
        if let Some(setting) = gemm {
            q.push(("layout", setting.label()));
        } else if let Some(a) = &self.axes {
            let p = crate::vocab::metrics::params_label(&crate::vocab::metrics::parse_params(Some(a)));
            if !p.is_empty() {
                q.push(("axes", p));
            }
        }
        q
    }

    /// The curve the point lies on (every parameter but its size) and its
    /// place along it (bytes, or m·n·k): neighbours on a curve lend each
    /// other their spread between rounds ([`crate::vocab::interval::prior_spreads`]).
    pub fn curve(&self) -> (String, u64) {
        let key = format!(
            "{}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
            self.bench,
            self.op,
            self.variant,
            self.dtype,
            self.threads,
            self.ranks,
            self.peer,
            self.method,
            self.metric,
            self.axes
        );
        let place = match (self.m, self.n, self.k) {
            (Some(m), Some(n), Some(k)) => m.saturating_mul(n).saturating_mul(k),
            _ => self.size_bytes.unwrap_or(0),
        };
        (key, place)
    }

    /// [`Point::curve`] on one backend's device: a run's curves, as its
    /// points lend each other their spread (the report and `compare` both
    /// key the priors this way).
    pub fn curve_on(&self, backend: &str, device: &str) -> (String, u64) {
        let (key, place) = self.curve();
        (format!("{backend}|{device}|{key}"), place)
    }
}

/// The `device` of a GPU row: `GPU <ordinal>: <name>`, as nvidia-smi -L
/// writes it.
pub fn gpu_device_name(ordinal: usize, name: &str) -> String {
    format!("GPU {ordinal}: {name}")
}

/// The ordinal of a GPU row's `device` ([`gpu_device_name`]'s inverse):
/// 1 for `GPU 1: NVIDIA H200`; `None` for any other device.
pub fn gpu_ordinal(device: &str) -> Option<usize> {
    device.strip_prefix("GPU ")?.split(':').next()?.trim().parse().ok()
}

/// The short form of a device for labels: `GPU 0` for `GPU 0: NVIDIA H200`
/// (other devices are returned whole).
pub fn short_device(device: &str) -> &str {
    device.split(':').next().unwrap_or(device)
}

/// One row of the archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub run_id: String,
    pub backend: String,
    pub device: String,
    pub host: String,
    pub rank: u32,
    /// Index of the point within its run; all samples of a point share it.
    pub point: u32,
    #[serde(flatten)]
    pub params: Point,
    /// Index of the sample within its point; None for skipped/failed rows.
    pub sample: Option<u32>,
    /// The round the sample was taken in (schema v5): a sweep visits every
    /// point once per round, in a shuffled order; null for older rows,
    /// imports and skipped/failed rows (one round).
    #[serde(default)]
    pub round: Option<u32>,
    pub iterations: Option<u64>,
    /// Wall (or device-event) seconds for the whole sample.
    pub seconds: Option<f64>,
    /// A metric row's value, in the point's `unit` (schema v4).
    #[serde(default)]
    pub value: Option<f64>,
    /// The clock that timed the sample, e.g. `steady_clock`, `cuda_event`.
    pub timer: Option<String>,
    pub status: Status,
    pub note: Option<String>,
    /// Why sampling stopped (measured native rows; schema v3).
    #[serde(default)]
    pub stop: Option<StopReason>,
    /// `native`, or `import:<tool>:<file>`.
    pub source: String,
    /// What the device's sensors read over the step (point, round) this
    /// sample was taken in (schema v7); None where nothing was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<crate::vocab::telemetry::StepTelemetry>,
}

impl Row {
    /// A row with every column empty: for builders and readers that fill
    /// it in column by column.
    pub fn blank() -> Row {
        Row {
            run_id: String::new(),
            backend: String::new(),
            device: String::new(),
            host: String::new(),
            rank: 0,
            point: 0,
            params: Point::default(),
            sample: None,
            round: None,
            iterations: None,
            seconds: None,
            value: None,
            timer: None,
            status: Status::Measured,
            note: None,
            stop: None,
            source: String::new(),
            telemetry: None,
        }
    }

    /// Seconds per operation for a measured row.
    pub fn seconds_per_op(&self) -> Option<f64> {
        match (self.seconds, self.iterations) {
            (Some(s), Some(i)) if i > 0 => Some(s / i as f64),
            _ => None,
        }
    }
}

/// Where the rows of a run go: called once per finished point, so that an
/// interrupted run keeps every point that finished.
pub trait RowSink {
    fn write_point(&mut self, rows: Vec<Row>) -> crate::error::Result<()>;
    /// Keep a file with the run (an imported log, a command's output).
    fn add_file(&mut self, name: &str, data: &[u8]) -> crate::error::Result<()>;
}

/// A sink that keeps nothing: MPI ranks other than 0 measure, and rank 0
/// writes the rows they send it.
#[derive(Debug, Default)]
pub struct NullSink;

impl RowSink for NullSink {
    fn write_point(&mut self, _rows: Vec<Row>) -> crate::error::Result<()> {
        Ok(())
    }
    fn add_file(&mut self, _name: &str, _data: &[u8]) -> crate::error::Result<()> {
        Ok(())
    }
}

/// Counts after a run, whatever produced its rows.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunOutcome {
    pub points: u32,
    pub measured: u32,
    pub skipped: u32,
    pub failed: u32,
    pub interrupted: bool,
    /// Measured points a `--budget` left with fewer than their minimum rounds.
    #[serde(skip_serializing_if = "is_zero")]
    pub short_of_rounds: u32,
    /// Points a `--budget` skipped because it could not give them their
    /// minimum rounds beside the points it measured.
    #[serde(skip_serializing_if = "is_zero")]
    pub over_budget: u32,
    /// The budget (whole seconds) that would have given every point its
    /// minimum rounds, by what each round of theirs cost (and, for points
    /// skipped, what their rounds were expected to cost).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_wanted_s: Option<u32>,
    /// What each device's telemetry sampler gave.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub telemetry: Vec<crate::vocab::telemetry::TelemetryInfo>,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl RunOutcome {
    pub fn add(&mut self, o: RunOutcome) {
        self.points += o.points;
        self.measured += o.measured;
        self.skipped += o.skipped;
        self.failed += o.failed;
        self.interrupted |= o.interrupted;
        self.short_of_rounds += o.short_of_rounds;
        self.over_budget += o.over_budget;
        self.telemetry.extend(o.telemetry);
        self.budget_wanted_s = match (self.budget_wanted_s, o.budget_wanted_s) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// Count one point's status.
    pub fn count(&mut self, status: Status) {
        self.points += 1;
        match status {
            Status::Measured => self.measured += 1,
            Status::Skipped => self.skipped += 1,
            Status::Failed => self.failed += 1,
        }
    }
}
