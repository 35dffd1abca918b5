//! Published health-check floors (`data/reference/floors.toml`): the fixed
//! lines other health checks drain a node at (DCGM's diagnostics, Azure's
//! node health checks), each with its tool, what it measures, which bytes
//! it counts and its source. `fleet gate` uses them as a second, absolute
//! line beside the node's fleet: a figure whose whole interval lies below
//! its device's floor is a fault. `--floors FILE` replaces the built-in set.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::analysis::specs::SpecBook;
use crate::error::{Error, Result};
use crate::vocab::rows::Row;

/// The built-in floors.
pub const BUILTIN: &str = include_str!("../../../../data/reference/floors.toml");

/// Which bytes a floor's GB/s counts: each byte once (`copied`), or read
/// plus written (`moved`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Bytes {
    Copied,
    Moved,
}

/// One published floor, as written in the file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FloorSpec {
    /// The health check that drains at it: `DCGM diag`, `Azure NHC`.
    pub tool: String,
    /// What it measures, in its own words.
    pub metric: String,
    /// A spec id of `data/specs` (its `match` names find the device).
    pub device: String,
    /// The benchbook point it applies to: bench, op, and the smallest size.
    pub bench: String,
    pub op: String,
    /// The point's variant where the floor's tool fixes one (`pinned` host memory).
    #[serde(default)]
    pub variant: Option<String>,
    pub min_size_bytes: u64,
    pub gbps: f64,
    pub bytes: Bytes,
    pub source: String,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FloorFile {
    #[serde(default)]
    floor: Vec<FloorSpec>,
}

/// A floor applied to one point: its spec and the operations per second it means there.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Floor {
    #[serde(flatten)]
    pub spec: FloorSpec,
    pub ops_per_second: f64,
}

/// Parse a floors file (`name` for errors).
pub fn parse(name: &str, text: &str) -> Result<Vec<FloorSpec>> {
    let f: FloorFile = toml::from_str(text).map_err(|e| Error::config("--floors", format!("{name}: {e}")))?;
    for s in &f.floor {
        if !(s.gbps.is_finite() && s.gbps > 0.0) {
            return Err(Error::config(
                "--floors",
                format!(
                    "{name}: the {} floor of {} has gbps {} (a positive number is needed)",
                    s.tool, s.device, s.gbps
                ),
            ));
        }
    }
    Ok(f.floor)
}

/// The built-in floors, or those of `path`.
pub fn load(path: Option<&Path>) -> Result<Vec<FloorSpec>> {
    match path {
        None => parse("data/reference/floors.toml", BUILTIN),
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| Error::io(p, e))?;
            parse(&p.display().to_string(), &text)
        }
    }
}

/// The floor that applies to the point of row `r` (its first row), if any:
/// a GPU point of the floor's bench and op, at its size or above, on a
/// device its spec matches. The highest such floor when several apply.
pub fn floor_for(floors: &[FloorSpec], specs: &SpecBook, r: &Row) -> Option<Floor> {
    if !crate::vocab::kinds::backend_is_gpu(&r.backend) {
        return None;
    }
    let spec = specs.find(&r.device)?;
    floors
        .iter()
        .filter(|f| f.device == spec.id && f.bench == r.params.bench && f.op == r.params.op)
        .filter(|f| f.variant.is_none() || f.variant == r.params.variant)
        .filter(|f| r.params.size_bytes.is_some_and(|s| s >= f.min_size_bytes))
        .filter_map(|f| {
            let bytes = match f.bytes {
                Bytes::Copied => r.params.bytes_copied,
                Bytes::Moved => r.params.bytes_moved,
            }? as f64;
            (bytes > 0.0).then(|| Floor { spec: f.clone(), ops_per_second: f.gbps * 1e9 / bytes })
        })
        .max_by(|a, b| a.spec.gbps.total_cmp(&b.spec.gbps))
}
