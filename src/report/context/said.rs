//! What a report says, as typed values. Each variant is one sentence: the
//! analysis decides *which* sentence holds and fills in its numbers; the
//! words live in `templates/sentences/<id>.md`, a tera partial that formats
//! those numbers with the report's filters (`sig3`, `bytes`, `pct`,
//! `ci_pct`, `seconds`). A user rewords a report by putting a same-named
//! file in `--templates DIR/sentences/`; tests assert on the values here,
//! not on the words.
//!
//! The file is longer than 400 lines because every sentence's values are
//! declared here, and its tests render one sample of each through its
//! partial.

use serde::Serialize;

use crate::analysis::Saturation;
use crate::vocab::stats::Crossing;

/// One sentence of a report: its id (`kebab-case`, the partial's name)
/// and the values it states. Rates are GB/s, sizes bytes, times seconds,
/// fractions 0–1.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "id", rename_all = "kebab-case")]
pub enum Said {
    /// The curve with the highest plateau: its peak, both byte counts, and,
    /// when the peak exceeds the memory roofline, that roofline and the
    /// working set (bytes one operation moves) that a cache must be serving.
    BandwidthPeak {
        what: String,
        peak_gbps: f64,
        copied_gbps: Option<f64>,
        size_bytes: u64,
        label: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        above_roof: Option<(f64, u64)>,
        /// Whether that curve settled on a plateau (else it is the highest
        /// level among curves none of which settled).
        settled: bool,
    },
    /// Its plateau, the sizes it spans and how far they may differ from it.
    Plateau { plateau_gbps: f64, sizes: Vec<u64>, tolerance: f64, flags: PlateauFlags },
    /// Too few largest sizes agree: the largest size's rate stands in.
    /// `rule`: what a plateau needs ([`crate::vocab::stats::plateau_rule`]).
    Unsettled { largest: Vec<u64>, level_gbps: f64, rule: String, flags: PlateauFlags },
    /// A peak above the plateau from a cache-resident working set.
    CachePeak { size_bytes: u64, ratio: f64, working_set_bytes: u64 },
    /// One size: no saturation.
    OneSize,
    /// More than one size, but no level held.
    NoLevel,
    /// Every size already at half the plateau or more.
    AboveRamp { smallest: Option<u64>, cached: bool },
    /// Where the curve stays at or above 50/80/90 % of its plateau.
    Saturation { p50: Crossing, p80: Crossing, p90: Crossing },
    /// The smallest size below half the plateau: a fixed cost.
    FixedCost { size_bytes: u64, time_s: f64 },
    /// A latency curve whose smaller message takes longer than a larger
    /// one (the largest such ratio): `overlap` whether their rerun
    /// intervals overlap (then it is within the noise).
    LatencyInversion {
        curve: String,
        small_bytes: u64,
        small_s: f64,
        large_bytes: u64,
        large_s: f64,
        ratio: f64,
        overlap: bool,
    },
    /// Points measured in rounds whose interval is wider than ±1 %.
    /// `one_round`: how many of the `of` points rest on a single round.
    WideIntervals { wide: usize, of: usize, widest: f64, one_round: usize },
    /// Points that stopped before the noise target, and why.
    NoiseTarget { met: usize, of: usize, reasons: Vec<String> },
    /// The plateau with the most threads against one thread.
    Threads { threads: u32, most_gbps: f64, one_gbps: f64 },
    /// The plateau as a share of the memory roofline, and where 90 % of
    /// the roofline is reached (`None`: never).
    Roofline { fraction: f64, name: String, roofline_gbps: String, reach_90: Option<Crossing> },
    /// No roofline for the device, and how to give one.
    NoRoofline { device: String },
    /// A STREAM kernel's best curve.
    /// `sizes`: how many sizes the curve has; `settled`: whether it holds a
    /// plateau ([`crate::analysis::Level`]).
    StreamKernel {
        op: String,
        plateau_gbps: f64,
        peak_gbps: f64,
        size_bytes: u64,
        label: String,
        sizes: usize,
        settled: bool,
    },
    /// A link curve (collective, p2p, peer or host↔device copy): its peak,
    /// its plateau when it settled, and where it ramps to it.
    Link {
        label: String,
        ranks: Option<u32>,
        /// Bus bandwidth (collectives) rather than bandwidth.
        bus: bool,
        peak_gbps: f64,
        size_bytes: u64,
        plateau_gbps: f64,
        /// The size the unsettled level is read at (its largest trusted
        /// size), and the curve's largest size.
        level_at: u64,
        largest: u64,
        sizes: usize,
        settled: bool,
        p80: Crossing,
        p90: Crossing,
        /// peak / plateau, when the peak exceeds the plateau by > 25 %.
        hump: Option<f64>,
        /// The peak is at the smallest size measured (small messages, not
        /// mid-size ones, run fastest).
        hump_at_smallest: bool,
        flags: PlateauFlags,
    },
    /// A GEMM dtype's best point, in `unit` (GFLOP/s or TFLOP/s).
    GemmPeak {
        dtype: String,
        rate: f64,
        unit: String,
        shape: String,
        threads: Option<u32>,
        method: Option<String>,
        points: usize,
    },
    /// A workload metric with one point (`from`: the file or run, when a
    /// metric comes from several).
    MetricSingle {
        metric: String,
        from: Option<String>,
        median: f64,
        unit: String,
        samples: usize,
        ci: Option<(f64, f64)>,
    },
    /// A workload metric's best point (`higher`: higher is better) and the
    /// level it holds; `at` names the point's parameters.
    MetricBest { metric: String, from: Option<String>, higher: bool, best: f64, unit: String, at: String, level: Level },
    /// One-sided against two-sided one-way transfers, like for like: the
    /// table's ratio when it is beyond the plateaus' flatness (`resolved`).
    OneSided { one_sided: String, two_sided: String, resolved: bool, ratio: String, flat_to: String, same_file: bool },
    /// No like-for-like pair settles on a plateau.
    OneSidedNotCompared,
    /// Transfers crossed a link nobody named: the link types the logs
    /// name, and the ids `--link` takes.
    UnnamedLink { named: Vec<String>, known: Vec<String> },
    /// A run whose ranks all ran on one host.
    SharedMemory { run_id: String, host: String },
    /// A peer-write launch sweep whose fewest threads in flight were best.
    LaunchBest { least: String },
    /// A launch sweep's best launch against the one with the fewest threads.
    LaunchPeak {
        best: String,
        best_gbps: f64,
        ratio: f64,
        least: String,
        least_gbps: f64,
        best_threads: u64,
        least_threads: u64,
    },
    /// The peer charts draw `shown` of the `measured` GPU pairs (`chosen`:
    /// by `--pairs`, else those from the lowest GPU).
    PairsShown { shown: usize, measured: usize, chosen: bool, pairs: Vec<String> },
    /// A run with no timed points of its own.
    NoTimedPoints,
    /// How many points reached the interval `target` (±, 0–1), the widest
    /// of those that did not (`more`: how many are not listed), how many
    /// rest on one round, and the median interval.
    Precision {
        met: usize,
        of: usize,
        target: f64,
        widest_missed: Vec<Missed>,
        more: usize,
        one_round: usize,
        /// The median within-run half-width over points.
        median_width: Option<f64>,
        /// The median rerun half-width over points (what the tables state).
        median_rerun: Option<f64>,
    },
}

/// A point whose interval missed the target: its width (`None`: no
/// interval) and why it is wide, when known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Missed {
    pub label: String,
    pub width: Option<f64>,
    pub why: Option<String>,
}

/// The level a workload metric holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Level {
    /// Along a step axis: the median after the warm-up steps.
    Steady { axis: String, first: String, last: String, points: usize, warmup: usize, median: f64 },
    /// Along a step axis, still moving after the warm-up: the median of
    /// its first and last halves differ by more than the plateau tolerance,
    /// so no steady state is claimed (a loss that still falls).
    Moving { axis: String, first: String, last: String, early: f64, late: f64, direction: String },
    /// Without one: points of different settings, which no one level
    /// describes; the range of their medians.
    Points { points: usize, low: f64, high: f64 },
}

/// What a plateau left out: a jump at the largest size, and sizes too
/// uncertain to set a level.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct PlateauFlags {
    /// The largest size and its rate (GB/s), when it jumps off the level.
    pub jump: Option<(u64, f64)>,
    pub left_out: Vec<u64>,
    /// Sizes measured while throttled, held out.
    pub held_out: Vec<u64>,
    /// The half-width above which a point is too uncertain (0–1).
    pub trusted_half_width: f64,
}

impl PlateauFlags {
    pub fn of(s: &Saturation) -> PlateauFlags {
        PlateauFlags {
            jump: s.plateau_jump,
            left_out: s.plateau_left_out.clone(),
            held_out: s.plateau_held_out.clone(),
            trusted_half_width: crate::analysis::curves::TRUSTED_HALF_WIDTH,
        }
    }
}

/// The sentence partials, embedded (name under `templates/`, text).
macro_rules! partials {
    ($($name:literal),* $(,)?) => {
        &[$((concat!("sentences/", $name, ".md"), include_str!(concat!("../../../templates/sentences/", $name, ".md")))),*]
    };
}

/// Every built-in sentence partial, and the macros they share.
pub const PARTIALS: &[(&str, &str)] = partials![
    "macros",
    "bandwidth-peak",
    "plateau",
    "unsettled",
    "cache-peak",
    "one-size",
    "no-level",
    "above-ramp",
    "saturation",
    "fixed-cost",
    "latency-inversion",
    "wide-intervals",
    "noise-target",
    "threads",
    "roofline",
    "no-roofline",
    "stream-kernel",
    "link",
    "gemm-peak",
    "metric-single",
    "metric-best",
    "one-sided",
    "one-sided-not-compared",
    "unnamed-link",
    "shared-memory",
    "no-share",
    "launch-best",
    "launch-peak",
    "pairs-shown",
    "no-timed-points",
    "precision",
];

/// Register `say(s=…)`: renders sentence `s` with its partial,
/// `sentences/<id>.md` (or `sentences/<t>.md` for `say(s=…, t=NAME)`, a
/// clause typed elsewhere), from a copy of `engine` as it stands (filters
/// and templates included). Newlines inside a partial become spaces, so a
/// partial may wrap its text; the result is already escaped.
pub fn register(engine: &mut tera::Tera) {
    let partials = engine.clone();
    engine.register_function("say", move |args: &std::collections::HashMap<String, tera::Value>| {
        let s = args.get("s").ok_or_else(|| tera::Error::msg("say() needs s=<sentence>"))?;
        let id = args
            .get("t")
            .or_else(|| s.get("id"))
            .and_then(|v| v.as_str())
            .ok_or_else(|| tera::Error::msg("say(): the sentence has no id (give t=NAME)"))?;
        let name = format!("sentences/{id}.md");
        let ctx = tera::Context::from_value(s.clone())?;
        let text = partials.render(&name, &ctx)?;
        Ok(tera::Value::String(text.split_whitespace().collect::<Vec<_>>().join(" ")))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crossing() -> [Crossing; 3] {
        [Crossing::At(1 << 20), Crossing::FromStart, Crossing::Never]
    }

    /// One of every sentence, so each partial is rendered at least once.
    fn every() -> Vec<Said> {
        let flags = PlateauFlags {
            jump: Some((1 << 30, 12.5)),
            left_out: vec![4096, 8192],
            held_out: vec![],
            trusted_half_width: 0.25,
        };
        let [at, start, never] = crossing();
        let mut v = vec![
            Said::BandwidthPeak {
                what: "memcpy".into(),
                peak_gbps: 12.345,
                copied_gbps: None,
                size_bytes: 4096,
                label: "a_b".into(),
                above_roof: None,
                settled: true,
            },
            Said::Plateau {
                plateau_gbps: 10.0,
                sizes: vec![1 << 20, 1 << 21, 1 << 22],
                tolerance: 0.1,
                flags: flags.clone(),
            },
            Said::Unsettled {
                largest: vec![1 << 22],
                level_gbps: 3.0,
                rule: crate::vocab::stats::plateau_rule(),
                flags: PlateauFlags::default(),
            },
            Said::CachePeak { size_bytes: 4096, ratio: 2.5, working_set_bytes: 8192 },
            Said::OneSize,
            Said::NoLevel,
            Said::AboveRamp { smallest: None, cached: true },
            Said::Saturation { p50: start, p80: at, p90: never },
            Said::FixedCost { size_bytes: 8, time_s: 1.5e-6 },
            Said::LatencyInversion {
                curve: "p2p latency".into(),
                small_bytes: 8,
                small_s: 3.8e-7,
                large_bytes: 64,
                large_s: 1.9e-7,
                ratio: 2.0,
                overlap: false,
            },
            Said::WideIntervals { wide: 2, of: 9, widest: 0.0312, one_round: 3 },
            Said::NoiseTarget { met: 1, of: 3, reasons: vec!["stopped at max time".into()] },
            Said::Threads { threads: 8, most_gbps: 40.0, one_gbps: 9.0 },
            Said::Roofline { fraction: 0.5, name: "x".into(), roofline_gbps: "100".into(), reach_90: None },
            Said::NoRoofline { device: "<cpu>".into() },
            Said::StreamKernel {
                op: "Triad".into(),
                plateau_gbps: 1.0,
                peak_gbps: 2.0,
                size_bytes: 1024,
                label: "l".into(),
                sizes: 4,
                settled: true,
            },
        ];
        v.extend(every_else(flags, at));
        v
    }

    /// The rest of [`every`].
    fn every_else(flags: PlateauFlags, at: Crossing) -> Vec<Said> {
        vec![
            Said::Link {
                label: "l".into(),
                ranks: Some(2),
                bus: true,
                peak_gbps: 5.0,
                size_bytes: 1 << 20,
                plateau_gbps: 3.0,
                level_at: 1 << 24,
                largest: 1 << 24,
                sizes: 9,
                settled: true,
                p80: at,
                p90: at,
                hump: Some(1.67),
                hump_at_smallest: false,
                flags,
            },
            Said::GemmPeak {
                dtype: "f32".into(),
                rate: 1.0,
                unit: "GFLOP/s".into(),
                shape: "1×1×1".into(),
                threads: None,
                method: Some("m".into()),
                points: 3,
            },
            Said::MetricSingle {
                metric: "m".into(),
                from: None,
                median: 1.0,
                unit: "1".into(),
                samples: 1,
                ci: Some((0.5, 2.0)),
            },
            Said::MetricBest {
                metric: "m".into(),
                from: Some("a.log".into()),
                higher: false,
                best: 1.0,
                unit: "ms".into(),
                at: "rate=4".into(),
                level: Level::Points { points: 3, low: 1.0, high: 2.0 },
            },
            Said::OneSided {
                one_sided: "put".into(),
                two_sided: "send_recv".into(),
                resolved: true,
                ratio: "2.00×".into(),
                flat_to: "±10 %".into(),
                same_file: false,
            },
            Said::OneSidedNotCompared,
            Said::UnnamedLink { named: vec!["IB".into()], known: vec!["ib-hdr".into(), "eth-100g".into()] },
            Said::SharedMemory { run_id: "r".into(), host: "h".into() },
            Said::LaunchBest { least: "grid 1 × block 32".into() },
            Said::LaunchPeak {
                best: "grid 8 × block 256".into(),
                best_gbps: 40.0,
                ratio: 4.0,
                least: "grid 1 × block 32".into(),
                least_gbps: 10.0,
                best_threads: 2048,
                least_threads: 32,
            },
            Said::PairsShown { shown: 7, measured: 56, chosen: false, pairs: vec!["0→1".into(), "0→2".into()] },
            Said::NoTimedPoints,
            Said::Precision {
                met: 3,
                of: 5,
                target: 0.01,
                widest_missed: vec![
                    Missed { label: "a".into(), width: Some(0.2), why: Some("drift".into()) },
                    Missed { label: "b".into(), width: None, why: None },
                ],
                more: 1,
                one_round: 1,
                median_width: Some(0.004),
                median_rerun: Some(0.009),
            },
        ]
    }

    fn say(s: &Said) -> String {
        let mut t = crate::report::engine(None).unwrap();
        t.add_raw_template("t.md", "{{ say(s=s) | safe }}").unwrap();
        let mut c = tera::Context::new();
        c.insert("s", s);
        t.render("t.md", &c).unwrap()
    }

    #[test]
    fn every_sentence_has_a_partial_that_renders_one_line() {
        let ids: Vec<String> =
            every().iter().map(|s| serde_json::to_value(s).unwrap()["id"].as_str().unwrap().to_string()).collect();
        // Partials that are not a `Said`: the shared macros, and the clause
        // a key result gives for having no share (sections::key::NoShare).
        let not_said = ["sentences/macros.md", "sentences/no-share.md"];
        for (name, _) in PARTIALS.iter().filter(|(n, _)| !not_said.contains(n)) {
            assert!(ids.iter().any(|i| format!("sentences/{i}.md") == *name), "{name} has no sample in every()");
        }
        for s in every() {
            let text = say(&s);
            assert!(!text.is_empty() && !text.contains('\n'), "{s:?}: {text:?}");
            assert!(text.ends_with('.'), "{s:?} does not end a sentence: {text}");
        }
    }

    #[test]
    fn values_are_escaped_and_formatted_by_the_partial() {
        let t = say(&Said::NoRoofline { device: "<script>".into() });
        assert!(t.contains("&lt;script&gt;") && !t.contains("<script>"), "{t}");
        let t = say(&every()[0]);
        assert!(t.contains("12.3 GB/s") && t.contains("4 KiB") && t.contains("a\\_b") && t.contains("n/a"), "{t}");
    }

    #[test]
    fn a_user_partial_rewords_a_sentence() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sentences")).unwrap();
        std::fs::write(dir.path().join("sentences/one-size.md"), "Just one size.\n").unwrap();
        let mut t = crate::report::engine(Some(dir.path())).unwrap();
        t.add_raw_template("t.md", "{{ say(s=s) | safe }}").unwrap();
        let mut c = tera::Context::new();
        c.insert("s", &Said::OneSize);
        assert_eq!(t.render("t.md", &c).unwrap(), "Just one size.");
    }
}
