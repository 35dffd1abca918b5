//! The launch shape of a copy kernel (grid × block), for the peer-write
//! sweep that mirrors the NVLink IPC write-up: a kernel on GPU a writing
//! GPU b's memory, where bandwidth follows the number of blocks in flight.
//! Stored in a row's `axes` as canonical JSON and in its variant label;
//! the GPU benchmarks read it to launch, the report to tabulate.

use serde_json::Value;

use crate::vocab::metrics::{self, Params};
use crate::vocab::rows::Point;

/// The most threads a block may have on every CUDA and HIP GPU.
pub const MAX_BLOCK: u32 = 1024;

/// A kernel launch: `grid` blocks of `block` threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Launch {
    pub grid: u32,
    pub block: u32,
}

impl Launch {
    /// The canonical JSON of the row's `axes` ([`metrics::params_text`]).
    pub fn axes(&self) -> String {
        let p: Params = [("block", Value::from(self.block)), ("grid", Value::from(self.grid))]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        metrics::params_text(&p).expect("two parameters")
    }

    /// The launch a point asks for, if its `axes` name both dimensions
    /// (points without one let the backend size the grid).
    pub fn of(point: &Point) -> Option<Launch> {
        let v = metrics::parse_params(point.axes.as_deref());
        let num = |k: &str| v.get(k).and_then(|x| x.as_u64()).and_then(|x| u32::try_from(x).ok());
        Some(Launch { grid: num("grid")?, block: num("block")? })
    }

    /// `grid 128 × block 256`: the variant label of the point.
    pub fn label(&self) -> String {
        format!("grid {} × block {}", self.grid, self.block)
    }

    /// Threads in flight: grid × block.
    pub fn threads(&self) -> u64 {
        self.grid as u64 * self.block as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn launches_round_trip_through_axes_and_labels() {
        let l = Launch { grid: 128, block: 256 };
        assert_eq!(l.axes(), r#"{"block":256,"grid":128}"#);
        let p = Point { axes: Some(l.axes()), ..Point::default() };
        assert_eq!(Launch::of(&p), Some(l));
        assert_eq!(Launch::of(&Point::default()), None);
        let half = Point { axes: Some(r#"{"grid":4}"#.into()), ..Point::default() };
        assert_eq!(Launch::of(&half), None, "a launch needs both dimensions");
        assert_eq!(l.label(), "grid 128 × block 256");
        assert_eq!(l.threads(), 32_768);
    }

    proptest! {
        #[test]
        fn any_launch_reads_back(grid in 1u32.., block in 1u32..=MAX_BLOCK) {
            let l = Launch { grid, block };
            let p = Point { axes: Some(l.axes()), ..Point::default() };
            prop_assert_eq!(Launch::of(&p), Some(l));
        }
    }
}
