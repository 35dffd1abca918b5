//! The parameters of a one-sided (RMA) transfer point: channels, how they
//! share the bytes, and how often a flush completes them. Stored in a row's
//! `axes` as canonical JSON; the MPI backend reads them to measure, the
//! network report to tabulate.

use serde_json::Value;

use crate::vocab::metrics::{self, Params};
use crate::vocab::rows::Point;

/// One-sided parameters of a point, read back from its `axes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OneSided {
    pub channels: u32,
    /// `split` or `round_robin` (with one channel they are the same: `split`).
    pub round_robin: bool,
    pub sync_every: u32,
}

impl OneSided {
    /// The canonical JSON of the row's `axes` ([`metrics::params_text`]).
    pub fn axes(&self) -> String {
        let p: Params = [
            ("channels", Value::from(self.channels)),
            ("strategy", Value::from(self.strategy())),
            ("sync_every", Value::from(self.sync_every)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        metrics::params_text(&p).expect("three parameters")
    }

    pub fn strategy(&self) -> &'static str {
        if self.round_robin {
            "round_robin"
        } else {
            "split"
        }
    }

    /// Read the parameters from a point's `axes`; defaults for anything missing.
    pub fn of(point: &Point) -> OneSided {
        let v = metrics::parse_params(point.axes.as_deref());
        let num = |k: &str| v.get(k).and_then(|x| x.as_u64()).map(|x| x.clamp(1, u32::MAX as u64) as u32);
        OneSided {
            channels: num("channels").unwrap_or(1),
            round_robin: v.get("strategy").and_then(|s| s.as_str()) == Some("round_robin"),
            sync_every: num("sync_every").unwrap_or(1),
        }
    }

    /// What a table or chart label says after "host buffers".
    pub fn label(&self) -> String {
        let flush = format!("flush every {}", self.sync_every);
        if self.channels == 1 {
            flush
        } else {
            format!("{} channels {}, {flush}", self.channels, self.strategy())
        }
    }

    /// Bytes one operation delivers, for a message of `size` bytes.
    pub fn bytes(&self, size: u64) -> u64 {
        if self.round_robin {
            size * self.channels as u64
        } else {
            size
        }
    }
}
