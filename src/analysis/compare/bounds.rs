//! How much B changes a whole family of benchmarks, with a bound: the
//! answer a write-up's conclusion gives ("the container costs between 0.4
//! and 2.1 % on memory bandwidth"), where point verdicts only say which
//! points cleared a threshold.
//!
//! The unit of independence is the run, not the point: every point of one
//! run shares that run's conditions (the machine's state, what else ran),
//! so points of one run are not independent repeats and an interval over
//! points would be far too narrow. Each run gets one score per family, the
//! mean over the family's points of its log figure against the baseline's
//! mean log figure there, oriented so that above zero is better. The
//! change is the difference of the two groups' mean scores. Where the two
//! groups' runs alternate in time (A B A B …, as `scripts/seed-004.sh`
//! runs them), run j of A and run j of B shared the machine's state, and
//! the interval is the paired t interval of their differences: a drift
//! that slows both (this VM's runs swing by 35 % from one repetition to
//! the next) cancels. Otherwise it is Welch's t interval over runs. It is
//! a geometric mean change over the family's points: the bound holds for
//! that average, not for every point.

use std::collections::BTreeMap;

use serde::Serialize;

pub use super::control::ControlReading;
use super::RunPoints;
use crate::vocab::benches::CompareFamily;
use crate::vocab::interval::t975;

/// One family's change, B over A.
#[derive(Debug, Clone, Serialize)]
pub struct FamilyBound {
    #[serde(skip)]
    pub family: CompareFamily,
    /// What it averages over: the family's title ([`CompareFamily::title`]),
    /// or for a workload one named metric (a served rate and a latency do
    /// not average into one figure).
    pub title: String,
    /// Whether `title` names one workload metric rather than a family.
    pub metric: bool,
    /// Points the family's scores average over.
    pub points: usize,
    /// Runs with a score on each side.
    pub runs_a: usize,
    pub runs_b: usize,
    /// Whether the runs alternated in time and were paired.
    pub paired: bool,
    /// Whether lower is better for every point it averages (a latency):
    /// its change then reads lower or higher.
    pub lower_better: bool,
    /// The geometric mean ratio over the points (above 1: B is better),
    /// and its 95 % interval over runs.
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
}

/// What a family's bound lets a conclusion say at a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// The whole interval within ±threshold: no change beyond it.
    Within,
    /// The whole interval beyond +threshold.
    Better,
    /// The whole interval beyond −threshold.
    Worse,
    /// Neither: the runs cannot tell.
    Unresolved,
}

impl FamilyBound {
    /// The call at `threshold` (0.02: ±2 %), as point verdicts are called.
    pub fn call(&self, threshold: f64) -> Call {
        if self.low >= 1.0 - threshold && self.high <= 1.0 + threshold {
            Call::Within
        } else if self.low > 1.0 + threshold {
            Call::Better
        } else if self.high < 1.0 - threshold {
            Call::Worse
        } else {
            Call::Unresolved
        }
    }

    /// Of the points it averages (`points`, its comparison's), how many
    /// are called the way `up` says (above 1: better) on their own, and
    /// how many moved the other way: an average can be called where no
    /// point is, and can hold points that went against it.
    pub fn point_split(&self, points: &[super::PointComparison], up: bool) -> (usize, usize) {
        let ours = points.iter().filter(|p| {
            CompareFamily::of(&p.bench) == self.family
                && (!self.metric || p.metric.as_deref() == Some(self.title.as_str()))
        });
        ours.fold((0, 0), |(with, against), p| {
            let called = match p.verdict {
                super::Verdict::Faster => up,
                super::Verdict::Slower => !up,
                _ => false,
            };
            (with + called as usize, against + ((p.ratio > 1.0) != up && p.ratio != 1.0) as usize)
        })
    }

    /// What `control` (the same comparison without what was varied) says
    /// of this change.
    pub fn against_control(&self, control: &FamilyBound, threshold: f64) -> ControlReading {
        ControlReading::of((self.ratio, self.low, self.high), (control.ratio, control.low, control.high), threshold)
    }
}

/// What one bound averages over: a family, and for workloads a metric.
type Group = (CompareFamily, String);

/// The per-family change of `new` against `base`, from each run's points
/// and the time it started, for families with two runs or more on each
/// side (one run a side shows no run-to-run spread to bound a change with).
pub(super) fn family_bounds(
    base_started: &[String],
    base: &[RunPoints],
    new_started: &[String],
    new: &[RunPoints],
) -> Vec<FamilyBound> {
    type Figures = (String, BTreeMap<super::Key, (f64, bool, Group)>);
    let figures = |started: &[String], g: &[RunPoints]| -> Vec<Figures> {
        started
            .iter()
            .zip(g)
            .map(|(start, run)| {
                let points = run
                    .iter()
                    .filter(|(_, (_, p))| p.figure.is_finite() && p.figure > 0.0)
                    .map(|(k, (row, p))| {
                        let higher = row.params.better.as_deref() == Some("higher");
                        let family = CompareFamily::of(&row.params.bench);
                        let metric = match family {
                            CompareFamily::Workloads => row.params.metric.clone().unwrap_or_default(),
                            _ => String::new(),
                        };
                        (k.clone(), (p.figure.ln(), higher, (family, metric)))
                    })
                    .collect();
                (start.clone(), points)
            })
            .collect()
    };
    let (fa, fb) = (figures(base_started, base), figures(new_started, new));
    // The baseline's mean log figure at each point both sides measured.
    let mut reference: BTreeMap<&super::Key, Vec<f64>> = BTreeMap::new();
    for (_, run) in &fa {
        for (k, (x, ..)) in run {
            if fb.iter().any(|(_, r)| r.contains_key(k)) {
                reference.entry(k).or_default().push(*x);
            }
        }
    }
    let reference: BTreeMap<&super::Key, f64> =
        reference.into_iter().map(|(k, xs)| (k, xs.iter().sum::<f64>() / xs.len() as f64)).collect();
    // Per family, each run's (start, score), in the order runs started.
    let scores = |runs: &[Figures]| {
        let mut out: BTreeMap<Group, Vec<(String, f64)>> = BTreeMap::new();
        for (start, run) in runs {
            let mut sums: BTreeMap<Group, (f64, usize)> = BTreeMap::new();
            for (k, (x, higher, family)) in run {
                let Some(c) = reference.get(k) else { continue };
                let d = if *higher { x - c } else { c - x };
                let e = sums.entry(family.clone()).or_default();
                e.0 += d;
                e.1 += 1;
            }
            for (f, (s, n)) in sums {
                out.entry(f).or_default().push((start.clone(), s / n as f64));
            }
        }
        for v in out.values_mut() {
            v.sort_by(|x, y| x.0.cmp(&y.0));
        }
        out
    };
    let (sa, sb) = (scores(&fa), scores(&fb));
    let mut points: BTreeMap<Group, usize> = BTreeMap::new();
    let mut higher_any: BTreeMap<Group, bool> = BTreeMap::new();
    for k in reference.keys() {
        if let Some((_, higher, g)) = fa.iter().find_map(|(_, r)| r.get(*k)) {
            *points.entry(g.clone()).or_default() += 1;
            *higher_any.entry(g.clone()).or_default() |= *higher;
        }
    }
    // Families in their report order, a workload's metrics by name.
    let mut groups: Vec<&Group> = sa.keys().collect();
    groups.sort_by_key(|(f, m)| (CompareFamily::ALL.iter().position(|x| x == f), m.clone()));
    groups
        .into_iter()
        .filter_map(|g| {
            let (a, b) = (sa.get(g)?, sb.get(g)?);
            let paired = alternate(a, b);
            let (xa, xb): (Vec<f64>, Vec<f64>) = (a.iter().map(|x| x.1).collect(), b.iter().map(|x| x.1).collect());
            let (low, ratio, high) = if paired { paired_t(&xa, &xb)? } else { welch(&xa, &xb)? };
            Some(FamilyBound {
                family: g.0,
                title: if g.1.is_empty() { g.0.title().to_string() } else { g.1.clone() },
                metric: !g.1.is_empty(),
                points: points.get(g).copied().unwrap_or(0),
                runs_a: a.len(),
                runs_b: b.len(),
                paired,
                // Times read faster or slower; only a named metric reads lower.
                lower_better: !g.1.is_empty() && !higher_any.get(g).copied().unwrap_or(true),
                ratio,
                low,
                high,
            })
        })
        .collect()
}

/// Whether two groups' runs (sorted by start) alternate: as many a side,
/// and each pair started before the next pair.
fn alternate(a: &[(String, f64)], b: &[(String, f64)]) -> bool {
    a.len() == b.len()
        && a.len() >= 2
        && (0..a.len() - 1).all(|j| (&a[j].0).max(&b[j].0) < (&a[j + 1].0).min(&b[j + 1].0))
}

/// exp of the mean paired difference b − a with its t 95 % interval.
fn paired_t(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    if d.len() < 2 {
        return None;
    }
    let (m, v) = mean_var(&d);
    let half = t975(d.len() as u32 - 1) * (v / d.len() as f64).sqrt();
    Some(((m - half).exp(), m.exp(), (m + half).exp()))
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    (m, xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0))
}

/// exp of the difference of means b − a with Welch's 95 % interval, as
/// (low, estimate, high); `None` with fewer than two values a side.
fn welch(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_var(a), mean_var(b));
    let (qa, qb) = (va / a.len() as f64, vb / b.len() as f64);
    let se = (qa + qb).sqrt();
    // Welch–Satterthwaite degrees of freedom, rounded down (conservative).
    let df = if se > 0.0 {
        (qa + qb).powi(2) / (qa * qa / (a.len() as f64 - 1.0) + qb * qb / (b.len() as f64 - 1.0))
    } else {
        (a.len() + b.len() - 2) as f64
    };
    let half = t975(df.floor().max(1.0) as u32) * se;
    let d = mb - ma;
    Some(((d - half).exp(), d.exp(), (d + half).exp()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_called_average_says_how_many_points_went_with_it_and_against_it() {
        use super::super::summary::tests::point;
        use super::super::Verdict;
        let b = FamilyBound {
            family: CompareFamily::Memory,
            title: "Memory bandwidth".into(),
            metric: false,
            points: 4,
            runs_a: 3,
            runs_b: 3,
            paired: true,
            lower_better: false,
            ratio: 1.2,
            low: 1.1,
            high: 1.3,
        };
        let pts = [
            point("a", 1.5, Some((1.3, 1.7)), Verdict::Faster),
            point("a", 1.1, Some((0.9, 1.3)), Verdict::Inconclusive),
            point("a", 0.95, Some((0.8, 1.1)), Verdict::Inconclusive),
            point("b", 0.7, Some((0.6, 0.8)), Verdict::Slower),
        ];
        // One called its way, two below 1 (one of them called slower).
        assert_eq!(b.point_split(&pts, true), (1, 2));
        // Read the other way round, the slower point is the one called.
        assert_eq!(b.point_split(&pts, false), (1, 2));
        // Another family's points are not counted.
        let mut other = point("c", 0.5, None, Verdict::Slower);
        other.bench = "collective".into();
        assert_eq!(b.point_split(&[other], true), (0, 0));
    }

    #[test]
    fn welch_bounds_a_shift_of_runs_and_widens_with_their_spread() {
        // B's runs 5 % better, each side's runs within ±1 %.
        let a = [0.0, 0.01, -0.01];
        let b: Vec<f64> = a.iter().map(|x| x + 0.05f64.ln_1p()).collect();
        let (lo, mid, hi) = welch(&a, &b).unwrap();
        assert!((mid - 1.05).abs() < 1e-12, "{mid}");
        // df 4: t = 2.776, se = 0.01 · √(2/3).
        let half = 2.776 * 0.01 * (2.0f64 / 3.0).sqrt();
        assert!((lo - 1.05 * (-half).exp()).abs() < 1e-9 && (hi - 1.05 * half.exp()).abs() < 1e-9);
        // Ten times the spread, ten times the half-width: no longer clear of 1.
        let wide: Vec<f64> = a.iter().map(|x| x * 10.0).collect();
        let b: Vec<f64> = wide.iter().map(|x| x + 0.05f64.ln_1p()).collect();
        let (lo, _, hi) = welch(&wide, &b).unwrap();
        assert!(lo < 1.0 && hi > 1.1, "{lo} {hi}");
        // One run a side bounds nothing.
        assert!(welch(&[0.0], &[0.1, 0.2]).is_none());
    }

    #[test]
    fn a_bound_is_called_as_a_point_verdict_is() {
        let b = |low, high| FamilyBound {
            family: CompareFamily::Memory,
            title: String::new(),
            metric: false,
            points: 1,
            runs_a: 3,
            runs_b: 3,
            paired: true,
            lower_better: false,
            ratio: 1.0,
            low,
            high,
        };
        assert_eq!(b(0.99, 1.015).call(0.02), Call::Within);
        assert_eq!(b(1.03, 1.2).call(0.02), Call::Better);
        assert_eq!(b(0.7, 0.97).call(0.02), Call::Worse);
        assert_eq!(b(0.99, 1.2).call(0.02), Call::Unresolved);
        // Only disjoint intervals clear a control.
        assert_ne!(b(0.9, 1.0).against_control(&b(0.99, 1.2), 0.02), ControlReading::Clears);
        assert_eq!(b(0.9, 0.95).against_control(&b(0.99, 1.2), 0.02), ControlReading::Clears);
    }

    #[test]
    fn alternating_runs_are_paired_and_a_shared_drift_cancels() {
        // seed-004's collectives: every group's second repetition ran 35 %
        // slower; B is 3 % slower than A in each repetition.
        let a = [0.215, -0.419, 0.204];
        let b: Vec<f64> = a.iter().map(|x| x + 0.97f64.ln()).collect();
        let at = |xs: &[f64], t: &[&str]| -> Vec<(String, f64)> {
            t.iter().zip(xs).map(|(t, x)| (t.to_string(), *x)).collect()
        };
        let (ta, tb) = (at(&a, &["1", "4", "7"]), at(&b, &["2", "5", "8"]));
        assert!(alternate(&ta, &tb));
        let (lo, mid, hi) = paired_t(&a, &b).unwrap();
        assert!((mid - 0.97).abs() < 1e-9 && (hi - lo) < 1e-9, "{lo} {mid} {hi}");
        // Unpaired, the drift swamps it.
        let (lo, _, hi) = welch(&a, &b).unwrap();
        assert!(lo < 0.6 && hi > 1.5, "{lo} {hi}");
        // A's runs all before B's: not paired.
        assert!(!alternate(&ta, &at(&b, &["8", "9", "10"])));
        assert!(!alternate(&ta, &tb[..2]));
    }
}
