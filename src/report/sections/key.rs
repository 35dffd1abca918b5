//! Key results: the report's headline numbers at its top, as the seeds'
//! conclusions give them. One per run and benchmark (at most
//! [`MAX_KEY_RESULTS`]): the best trusted median, its 95 % interval (or
//! why there is none), and its share of the device's or link's published
//! figure, or why no share is given. Below half of that figure the block
//! warns. The values are typed; the sentences are in
//! `templates/sections/key-results.md`.
//!
//! What each headline is held against is decided in
//! [`crate::analysis::findings::share`].

use serde::Serialize;

use super::{Input, Section};
use crate::analysis::curves::TRUSTED_HALF_WIDTH;
use crate::analysis::findings::share::{FromCache, NoShare, Share};
use crate::analysis::findings::share::{counted_once, curve_share, from_cache, share, Figures};
use crate::analysis::specs::Spec;
use crate::analysis::{PointStat, Series};
use crate::report::context::Conditions;
use crate::vocab::benches::Bench;
use crate::vocab::units::{format_bytes, format_sig3};

/// The most headline numbers the block holds.
pub const MAX_KEY_RESULTS: usize = 6;

/// One headline number.
#[derive(Debug, Clone, Serialize)]
pub struct KeyResult {
    /// The curve or GEMM it is of.
    pub subject: String,
    /// The run's label (or id).
    pub run: String,
    /// Whether the subject (its catalog name) already names the run.
    pub names_run: bool,
    /// A higher median the curve has but its peak passed over: (value,
    /// size, why).
    pub passed_over: Option<(String, String, crate::analysis::curves::Distrust)>,
    /// Whether the headline point rests on one round: its interval then
    /// holds that round's samples, not how far a rerun lands.
    pub one_round: bool,
    /// A peak well above the level the curve settles at ([`crate::analysis::Saturation::hump`]):
    /// a size the caches hold, whose figure is not the memory's.
    pub hump: bool,
    /// Whether another tool measured it (imported) rather than benchbook.
    pub imported: bool,
    pub value: String,
    /// The unit, naming the bytes or operations it counts.
    pub unit: String,
    /// The unit alone (`GB/s`).
    pub short_unit: String,
    /// The size it was reached at, for a sweep.
    pub at: Option<String>,
    /// The 95 % interval's bounds in the value's unit ([`crate::vocab::interval::RateInterval::bounds`]).
    pub ci: Option<String>,
    /// The level a sweep holds at its largest sizes, and those sizes, when
    /// it settled ([`crate::analysis::Saturation`]).
    pub plateau: Option<(String, String)>,
    /// Whether the plateau's sizes still rise, each at or above the one
    /// before and the last over 2 % above the first: its level is a lower
    /// bound.
    pub rising: bool,
    /// What the share is of: `plateau` when the sweep settled, else `peak`.
    pub share_of: &'static str,
    pub share: Option<Share>,
    /// Why no share is given (no published figure known, no link named);
    /// its words are `templates/sentences/no-share.md`.
    pub no_share: Option<NoShare>,
    /// The clock and power it was measured at, when its rows carry
    /// telemetry.
    pub conditions: Option<Conditions>,
    /// A memcpy peak above the memory roofline, and the cache that holds
    /// its working set.
    pub from_cache: Option<FromCache>,
    /// A copy whose rate counts bytes read + written, counted once (each
    /// byte copied, as PyTorch's `copy_` and the seed 001 scripts count
    /// it): the same level in GB/s and its share of the same figure, so
    /// the two conventions are never set side by side unlabelled.
    pub once: Option<(String, Option<String>)>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct KeyResults {
    /// Peer matrices, first: a GPU write-up leads with its GPUs.
    pub matrices: Vec<super::matrix::MatrixKey>,
    pub items: Vec<KeyResult>,
    /// The subjects below half of their published figure.
    pub below_half: Vec<String>,
}

/// What the figures are looked up in, and how runs are named.
pub struct Facts<'a> {
    /// The published figures a series is held against.
    pub figures: Figures<'a>,
    /// A run's name.
    pub run_name: &'a dyn Fn(&str) -> String,
    /// Whether curve names carry their run ([`crate::analysis::Catalog::names_runs`]).
    pub names_runs: bool,
    /// Whether a point's clock readings are a constant figure (not a
    /// reading) in its run: its key result then states no clock.
    pub nominal_clock: &'a dyn Fn(&PointStat) -> bool,
}

/// Which headline a candidate competes for: one per run and benchmark (a
/// network transfer's semantics apart: one-sided write, one-sided read and
/// two-sided send each answer seed 003), and one per device model and GEMM
/// dtype; the best kept.
#[derive(Debug, Clone, PartialEq)]
struct Slot {
    /// A curve's run id, or a GEMM dtype's device model (`device …`).
    scope: String,
    bench: String,
    of: Option<String>,
}

/// The key results of a report's curves and GEMM points.
pub fn key_results(cs: &[&Series], stats: &[PointStat], facts: &Facts) -> Option<KeyResults> {
    let mut items: Vec<Candidate> = Vec::new();
    curve_candidates(cs, facts, &mut items);
    gemm_candidates(stats, facts, &mut items);
    rank(items)
}

/// A headline in the running: its slot, the rate it competes with, itself.
type Candidate = (Slot, f64, KeyResult);

/// Per run and benchmark, the bandwidth curve with the highest trusted median.
fn curve_candidates(cs: &[&Series], facts: &Facts, items: &mut Vec<Candidate>) {
    for c in cs.iter().copied().filter(|c| c.is_bandwidth()) {
        let Some((size, rate, ci, p)) = c.peak() else { continue };
        let of = c.is_transfer().then(|| c.semantics().to_string());
        let key = Slot { scope: c.run_id.clone(), bench: c.bench.clone(), of };
        if items.iter().any(|(k, r, _)| *k == key && *r >= rate) {
            continue;
        }
        items.retain(|(k, ..)| *k != key);
        let sat = c.settled();
        let level = sat.as_ref().map_or(rate, |s| s.plateau_gbps);
        let (share, no_share) = curve_share(c, p, level, &facts.figures);
        // Held against the figure the share is of (the device's memory).
        let memory = (facts.figures.spec_of)(p).and_then(|s| s.memory.as_ref()).map(|m| m.bandwidth_gbps);
        let once = counted_once(c, level, memory);
        // RDMA curves appear in the network section only, in Gb/s as
        // perftest and link specs give them.
        let (k, short_unit) = if Bench::of(&c.bench) == Some(Bench::Rdma) { (8.0, "Gb/s") } else { (1.0, "GB/s") };
        let plateau = sat.as_ref().map(|s| {
            let sizes: Vec<String> = s.plateau_sizes.iter().map(|b| format_bytes(*b)).collect();
            let span = match sizes.as_slice() {
                [a] => a.clone(),
                [a, .., b] => format!("{a}–{b}"),
                [] => String::new(),
            };
            (format_sig3(s.plateau_gbps * k), span)
        });
        let rising = sat.is_some() && c.plateau_rising();
        items.push((
            key,
            rate,
            KeyResult {
                subject: c.name().to_string(),
                run: (facts.run_name)(&c.run_id),
                names_run: facts.names_runs,
                passed_over: c.passed_over().map(|(s, r, why)| (format_sig3(r * k), format_bytes(s), why)),
                one_round: p.rounds == 1 && p.native(),
                hump: sat.as_ref().is_some_and(|s| s.hump().is_some()),
                imported: !p.native(),
                value: format_sig3(rate * k),
                // A bidirectional test's rate sums both directions.
                unit: match c.meaning.direction {
                    crate::vocab::ops::Direction::Both => c.rate_axis().replacen(')', ", both directions summed)", 1),
                    _ => c.rate_axis().to_string(),
                }
                .replacen("GB/s", short_unit, 1),
                short_unit: short_unit.into(),
                at: Some(format_bytes(size)),
                ci: ci.bounds(|x| format_sig3(x * k)),
                share_of: if plateau.is_some() { "plateau" } else { "peak" },
                plateau,
                rising,
                share,
                no_share,
                conditions: Conditions::of(p, (facts.nominal_clock)(p)),
                from_cache: from_cache(c, p, rate, &facts.figures),
                once,
            },
        ));
    }
}

/// GEMM: per device model and dtype, the fastest shape over the runs of
/// that model (not measured throttled, its interval within the trusted
/// half-width), against the dtype's peak. Another tool's figure heads a
/// dtype only where benchbook measured none (it is a comparison,
/// tabulated as one).
fn gemm_candidates(stats: &[PointStat], facts: &Facts, items: &mut Vec<Candidate>) {
    let gemm = || stats.iter().filter(|p| p.bench == Bench::Gemm.name());
    for p in gemm() {
        let (Some(g), Some(dtype)) = (p.gflops, p.dtype.as_deref()) else { continue };
        if p.held_out() || (!p.native() && gemm().any(|q| q.native() && q.dtype.as_deref() == Some(dtype))) {
            continue;
        }
        let ci = p.rate_interval(g);
        if !ci.within(g, TRUSTED_HALF_WIDTH) {
            continue;
        }
        // By rate alone, as the GEMM observations name each dtype's peak.
        let key = Slot { scope: format!("device {}", p.device), bench: p.bench.clone(), of: Some(dtype.to_string()) };
        if items.iter().any(|(k, r, _)| *k == key && *r >= g) {
            continue;
        }
        items.retain(|(k, ..)| *k != key);
        let tflops = g / 1e3;
        // The unit of the section that tabulates it: GPUs in TFLOP/s (as
        // seed 002), CPUs in GFLOP/s.
        let (per, flop_unit) =
            if crate::vocab::kinds::backend_is_gpu(&p.backend) { (1e3, "TFLOP/s") } else { (1.0, "GFLOP/s") };
        let peak = (facts.figures.spec_of)(p).and_then(|s| Some((s.name.clone(), s.peak_tflops(dtype)?)));
        let (share, no_share) = match peak {
            Some((name, t)) => {
                (Some(share(tflops, t, format!("{name} dense {dtype} {} TFLOP/s", format_sig3(t)))), None)
            }
            None => (None, Some(NoShare::NoDtypePeak { dtype: dtype.to_string(), device: p.device.clone() })),
        };
        let shape = match (p.m, p.n, p.k) {
            (Some(m), Some(n), Some(k)) => format!("GEMM {dtype} {}", crate::vocab::gemm::shape(m, n, k)),
            _ => format!("GEMM {dtype}"),
        };
        items.push((
            key,
            g,
            KeyResult {
                subject: shape,
                run: (facts.run_name)(&p.run_id),
                names_run: false,
                passed_over: None,
                one_round: p.rounds == 1 && p.native(),
                hump: false,
                imported: !p.native(),
                value: format_sig3(g / per),
                unit: flop_unit.into(),
                short_unit: flop_unit.into(),
                at: None,
                ci: ci.bounds(|x| format_sig3(x / per)),
                plateau: None,
                rising: false,
                share_of: "peak",
                share,
                no_share,
                conditions: Conditions::of(p, (facts.nominal_clock)(p)),
                from_cache: None,
                once: None,
            },
        ));
    }
}

/// The benchmark most runs measured is what the report is about: its
/// results first, then the rest, each in curve order; then the first six.
fn rank(items: Vec<Candidate>) -> Option<KeyResults> {
    // The benchmark most runs measured is what the report is about: its
    // results first (a memcpy write-up's copies before its host-link
    // copies), then the rest, each in curve order (those held against a
    // published figure first); then the first six.
    let mut runs_of: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> = Default::default();
    for (k, ..) in &items {
        runs_of.entry(k.bench.as_str()).or_default().insert(k.scope.as_str());
    }
    let runs_of: std::collections::BTreeMap<String, usize> =
        runs_of.into_iter().map(|(b, r)| (b.to_string(), r.len())).collect();
    let first_seen: Vec<String> = items.iter().map(|(k, ..)| k.bench.clone()).collect();
    let mut ranked: Vec<(usize, usize, KeyResult)> = items
        .into_iter()
        .map(|(k, _, r)| {
            (usize::MAX - runs_of[&k.bench], first_seen.iter().position(|x| *x == k.bench).unwrap_or(0), r)
        })
        .collect();
    // Within a benchmark, results held against a published figure first:
    // a GPU transfer against its link before host MPI over shared memory.
    ranked.sort_by_key(|(most, first, r)| (*most, *first, r.share.is_none()));
    let items: Vec<KeyResult> = ranked.into_iter().map(|(.., k)| k).take(MAX_KEY_RESULTS).collect();
    let below_half = items.iter().filter(|k| k.share.as_ref().is_some_and(|s| s.below_half)).map(|k| k.subject.clone());
    let below_half = below_half.collect();
    (!items.is_empty()).then_some(KeyResults { matrices: Vec::new(), items, below_half })
}

/// The report's key results: only curves and GEMM points a section of
/// this report tabulates, so every key figure is one the report shows.
pub(super) fn for_report(input: &Input, sections: &[Section], cs: &[&Series]) -> Option<KeyResults> {
    let shown: Vec<&Series> =
        cs.iter().copied().filter(|c| c.points.first().is_some_and(|p| tabulated(sections, p))).collect();
    let gemm: Vec<PointStat> = input.stats.iter().filter(|p| tabulated(sections, p)).cloned().collect();
    of_curves(input, &shown, &gemm)
}

/// Whether one of `sections` tabulates point `p` with its rate: the GPU
/// section holds what [`PointStat::is_gpu`] sends there.
fn tabulated(sections: &[Section], p: &PointStat) -> bool {
    use Section::*;
    let any = |want: &[Section]| want.iter().any(|x| sections.contains(x));
    if p.is_gpu() {
        return any(&[Gpu]);
    }
    match Bench::of(&p.bench) {
        Some(Bench::Memcpy) => any(&[HostMemcpy]),
        Some(Bench::Stream) => any(&[Stream]),
        Some(Bench::Gemm) => any(&[Gemm]),
        Some(Bench::Collective) => any(&[Collective]),
        Some(Bench::P2p) => any(&[P2p, Network]),
        Some(Bench::Rdma) => any(&[Network]),
        Some(Bench::MemcpyPeer | Bench::H2d) => any(&[Gpu, Links]),
        // Listed, so a new benchmark is a compile error until it has a
        // section (or is decided to have none).
        Some(Bench::D2h | Bench::Links | Bench::Nvbandwidth | Bench::Megatron | Bench::Exec) | None => false,
    }
}

/// The key results of the report's curves and GEMM points, against the
/// specs and link the report knows.
fn of_curves(input: &Input, cs: &[&Series], stats: &[PointStat]) -> Option<KeyResults> {
    // The spec that applies to the point's device: the catalog's rule.
    let spec_of = |p: &PointStat| -> Option<&Spec> { input.catalog.spec_of_point(p) };
    let one_host = |run: &str| input.manifests.iter().any(|m| m.run_id == run && super::one_host(m));
    let run_name = |run: &str| crate::report::context::run_name(input.manifests, run);
    let nominal_clock = |p: &PointStat| crate::report::context::nominal_clock(input.manifests, p);
    let l2_of = |p: &PointStat| crate::report::context::l2_of(input.manifests, p);
    let facts = Facts {
        figures: Figures { l2_of: &l2_of, spec_of: &spec_of, link: &|run| input.links.line(run), one_host: &one_host },
        run_name: &run_name,
        names_runs: input.catalog.names_runs(),
        nominal_clock: &nominal_clock,
    };
    key_results(cs, stats, &facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(device: &str, backend: &str, rates: &[(u64, f64)]) -> Series {
        let points = rates
            .iter()
            .map(|&(s, g)| PointStat {
                run_id: "r".into(),
                bench: "memcpy".into(),
                backend: backend.into(),
                device: device.into(),
                op: "copy".into(),
                size_bytes: Some(s),
                gbps_moved: Some(g),
                rounds: 3,
                ..PointStat::default()
            })
            .collect::<Vec<_>>();
        crate::analysis::series::series_of(&points, |_| None).remove(0)
    }

    fn facts<'a>(spec_of: &'a dyn Fn(&PointStat) -> Option<&'a Spec>, name: &'a dyn Fn(&str) -> String) -> Facts<'a> {
        Facts {
            figures: Figures { spec_of, link: &|_| None, one_host: &|_| false, l2_of: &|_| None },
            run_name: name,
            names_runs: false,
            nominal_clock: &|_| false,
        }
    }

    #[test]
    fn a_headline_gives_its_share_of_the_published_peak_and_warns_below_half() {
        let book = crate::analysis::SpecBook::builtin();
        let spec_of = |p: &PointStat| book.find(&p.device);
        let name = |r: &str| r.to_string();
        // An MI300X sweep that settles at 2000 GB/s: 37.7 % of 5300 GB/s.
        let flat = crate::vocab::stats::fixtures::flat_tail;
        let sweep = [vec![(1 << 20, 900.0)], flat(1 << 26, 2000.0)].concat();
        let c = curve("AMD Instinct MI300X", "hip", &sweep);
        let k = key_results(&[&c], &[], &facts(&spec_of, &name)).unwrap();
        let s = k.items[0].share.as_ref().unwrap();
        assert_eq!((s.pct.as_str(), k.items[0].share_of), ("37.7", "plateau"));
        assert!(s.of.contains("5300 GB/s") && s.below_half, "{s:?}");
        assert_eq!(k.below_half, vec![k.items[0].subject.clone()]);
        // At 3000 GB/s it is 56.6 %: no warning.
        let c = curve("AMD Instinct MI300X", "hip", &flat(1 << 26, 3000.0));
        let k = key_results(&[&c], &[], &facts(&spec_of, &name)).unwrap();
        assert!(k.below_half.is_empty() && k.items[0].share.as_ref().unwrap().pct == "56.6");
        // Counted once, as PyTorch's copy_ counts it: half, and half the share.
        assert_eq!(k.items[0].once, Some(("1500".into(), Some("28.3".into()))));
        assert!(!k.items[0].share.as_ref().unwrap().above);
        // A plateau above the figure itself (no cache explains a plateau):
        // flagged, for the sentence that says so.
        let c = curve("AMD Instinct MI300X", "hip", &flat(1 << 26, 6000.0));
        let k = key_results(&[&c], &[], &facts(&spec_of, &name)).unwrap();
        let s = k.items[0].share.as_ref().unwrap();
        assert!(s.above && s.pct == "113.2", "{s:?}");
        // A device with no published peak: no share, and the reason says how to give one.
        let c = curve("Some CPU", "cpu", &[(1 << 26, 20.0), (1 << 27, 20.0)]);
        let k = key_results(&[&c], &[], &facts(&spec_of, &name)).unwrap();
        assert!(k.items[0].share.is_none(), "{:?}", k.items[0]);
        assert_eq!(k.items[0].no_share, Some(NoShare::NoPeak { device: "Some CPU".into() }));
    }
}
