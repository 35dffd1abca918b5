//! The vocabulary layer, at the bottom of the flow
//! bench → rows → archive → analysis → plot/report. Every other module uses
//! it; it uses nothing above it (only [`crate::error`]).
//!
//! - [`rows`]: the row, the point, the sink rows go to, run counts;
//! - [`columns`]: the one table of columns (Parquet schema, both
//!   conversions, the per-point parameter list, the point key);
//! - [`units`]: sizes, rates and their formatting;
//! - [`accounting`]: byte and FLOP counting (bus factors, STREAM weights);
//! - [`benches`]: the one table of benchmarks (where each runs, its
//!   report family and section, byte counting, axis, help);
//! - [`kinds`]: the closed vocabularies as enums (backend, dtype, copy
//!   method, cache mode, stop reason);
//! - [`metrics`]: named metrics (tokens/s, TTFT, loss), their direction
//!   and parameters, and the `run exec` JSON-lines protocol;
//! - [`config`]: the typed run configuration a manifest records (a sweep,
//!   an MPI job, an import, a `run exec` command, a `fleet gate` verdict);
//! - [`gate`]: a gate verdict as its manifest records it;
//! - [`facts`]: typed manifest facts (probes, GPU facts, the stopping rule);
//! - [`stats`]: statistics as pure functions on slices;
//! - [`telemetry`]: sensor readings (clocks, power, throttle reasons,
//!   energy) and how a step's are summarized;
//! - [`progress`]: progress as events;
//! - [`source`]: where a run's rows come from (the session drives it).

/// Declares a closed vocabulary: the enum, its names, `parse`, `name`,
/// `ALL` and `Display`.
macro_rules! vocabulary {
    ($(#[$m:meta])* $ty:ident, $what:literal { $($(#[$vm:meta])* $var:ident = $name:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        pub enum $ty { $($(#[$vm])* #[serde(rename = $name)] $var),+ }

        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$var),+];

            /// The name stored in the archive and typed on the command line.
            pub fn name(self) -> &'static str {
                match self { $($ty::$var => $name),+ }
            }

            /// Parse a name; the error lists the choices.
            pub fn parse(value: &str) -> Result<Self, $crate::vocab::kinds::UnknownName> {
                match value.trim() {
                    $($name => Ok($ty::$var),)+
                    other => Err($crate::vocab::kinds::UnknownName {
                        what: $what,
                        value: other.to_string(),
                        choices: Self::ALL.iter().map(|v| v.name()).collect::<Vec<_>>().join(", "),
                    }),
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::vocab::kinds::UnknownName;
            fn from_str(s: &str) -> Result<Self, $crate::vocab::kinds::UnknownName> {
                Self::parse(s)
            }
        }
    };
}

pub mod accounting;
pub mod benches;
pub mod columns;
pub mod config;
pub mod facts;
pub mod gate;
pub mod gemm;
pub mod health;
pub mod interrupt;
pub mod interval;
pub mod kinds;
pub mod labels;
pub mod launch;
pub mod metrics;
pub mod one_sided;
pub mod ops;
pub mod pairs;
pub mod partition;
pub mod plateau;
pub mod progress;
pub mod rows;
pub mod source;
pub mod special;
pub mod stats;
pub mod telemetry;
pub mod units;
pub mod xid;
