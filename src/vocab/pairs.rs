//! Which pairs of nodes measure their link at once, and who is to blame
//! for a slow one.
//!
//! - [`round_robin`]: the circle method. With n nodes (n even), n − 1
//!   rounds of n/2 disjoint pairs cover every pair exactly once, so a
//!   round's pairs run at the same time without sharing an endpoint. With
//!   n odd, a "bye" makes it n rounds of (n − 1)/2 pairs, one node resting
//!   each round.
//! - [`second_pass`]: a link below the fleet is only a suspect. Each of its
//!   endpoints is measured again against a mostly good node (fewer than
//!   half of its links suspect; as cluster-health-scanner does), and the
//!   link itself again, so that one bad endpoint is not blamed on every
//!   pair it joins, a bad cable is told from a bad node, and a dip that
//!   does not come back is cleared.

use std::collections::{BTreeMap, BTreeSet};

/// A link sweep's first-pass op (one point per round) and second-pass op
/// (one point per retest), as rows name them.
pub const ROUND_OP: &str = "round_robin";
pub const RETEST_OP: &str = "retest";

/// A link is a suspect more than this margin under the median link
/// (below 90 % of it), and then retested against a mostly good node.
/// Links of one fabric differ more than nodes' memory does; a tenth keeps
/// ordinary spread out of the second pass.
pub const SUSPECT_BELOW: f64 = 0.10;

/// A round's pairs as a point's `peer` names them: `0<->3 1<->2`.
pub fn label(pairs: &[(usize, usize)]) -> String {
    pairs.iter().map(|(a, b)| format!("{a}<->{b}")).collect::<Vec<_>>().join(" ")
}

/// The pairs a `peer` label names (the inverse of [`label`]); malformed
/// entries are left out.
pub fn parse(peer: &str) -> Vec<(usize, usize)> {
    peer.split_whitespace()
        .filter_map(|p| {
            let (a, b) = p.split_once("<->")?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect()
}

/// `rank`'s partner in the pairs `peer` names, if it has one.
pub fn partner(peer: &str, rank: usize) -> Option<usize> {
    parse(peer).into_iter().find_map(|(a, b)| match rank {
        r if r == a => Some(b),
        r if r == b => Some(a),
        _ => None,
    })
}

/// A link's figure from its two endpoints' own median times for the same
/// exchanges: `bytes` over the slower of the two (an exchange is done when
/// both ends are).
pub fn link_speed(bytes: f64, seconds_a: f64, seconds_b: f64) -> f64 {
    bytes / seconds_a.max(seconds_b)
}

/// The first pass's link matrix, as the run and its report both build it:
/// `own` holds (rank, partner, that rank's median seconds per exchange),
/// and a link's figure is `bytes` over the slower end's time (NaN where an
/// end is missing).
pub fn link_matrix(own: impl IntoIterator<Item = (usize, usize, f64)>, bytes: f64) -> BTreeMap<(usize, usize), f64> {
    let mut times: BTreeMap<(usize, usize), (f64, f64)> = BTreeMap::new();
    for (r, p, t) in own {
        let e = times.entry((r.min(p), r.max(p))).or_insert((f64::NAN, f64::NAN));
        if r < p {
            e.0 = t;
        } else {
            e.1 = t;
        }
    }
    times.into_iter().map(|(k, (a, b))| (k, link_speed(bytes, a, b))).collect()
}

/// Every pair of `0..n` exactly once, as rounds of disjoint pairs
/// (smaller index first): n − 1 rounds for even n, n for odd n.
pub fn round_robin(n: usize) -> Vec<Vec<(usize, usize)>> {
    if n < 2 {
        return Vec::new();
    }
    // An odd count gets a bye (index n): whoever meets it rests.
    let m = if n.is_multiple_of(2) { n } else { n + 1 };
    let fixed = m - 1;
    (0..m - 1)
        .map(|r| {
            let mut round = vec![(r, fixed)];
            for k in 1..m / 2 {
                round.push(((r + k) % (m - 1), (r + m - 1 - k) % (m - 1)));
            }
            round.into_iter().filter(|&(a, b)| a < n && b < n).map(|(a, b)| (a.min(b), a.max(b))).collect()
        })
        .collect()
}

/// Who a slow link is blamed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(tag = "blame", rename_all = "lowercase")]
pub enum Blame {
    /// Both endpoints are fine with a good node: the link itself (cable,
    /// switch port, route) is slow.
    Link { a: usize, b: usize },
    /// This endpoint is slow with a good node too.
    Node { node: usize },
}

/// What the second pass did and concluded.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SecondPass {
    /// The fleet's link figure: the median of every first-pass link, and
    /// the floor below which a link is slow, (1 − threshold) × centre.
    pub centre: f64,
    pub floor: f64,
    /// Links below (1 − threshold) × centre in the first pass.
    pub suspects: Vec<(usize, usize)>,
    /// The retests: (suspect endpoint, good node, figure), and each
    /// suspect link itself again: (a, b, figure).
    pub retests: Vec<(usize, usize, f64)>,
    pub blamed: Vec<Blame>,
    /// Suspects that could not be resolved: no mostly good node to retest
    /// against, or a retest that gave no number.
    pub unresolved: Vec<(usize, usize)>,
    /// Suspects the second pass cleared: both ends fine with a good node,
    /// and the link itself fine when measured again (the first pass's dip
    /// did not come back).
    pub cleared: Vec<(usize, usize)>,
}

/// Judge a link matrix (`first[(a, b)]`, a < b, higher is better): retest
/// each suspect's endpoints against a good node with `measure(endpoint,
/// good)`, and the suspect link itself with `measure(a, b)` (collective
/// calls in an MPI job: every rank must make the same calls, which they
/// do, given the same `first`; the calls never depend on what they return).
pub fn second_pass(
    first: &BTreeMap<(usize, usize), f64>,
    threshold: f64,
    mut measure: impl FnMut(usize, usize) -> f64,
) -> SecondPass {
    let mut all: Vec<f64> = first.values().copied().filter(|v| v.is_finite()).collect();
    all.sort_by(f64::total_cmp);
    let centre = if all.is_empty() { f64::NAN } else { crate::vocab::stats::quantile_sorted(&all, 0.5) };
    let floor = (1.0 - threshold) * centre;
    let slow = |v: f64| v.is_nan() || v < floor;
    let suspects: Vec<(usize, usize)> = first.iter().filter(|(_, v)| slow(**v)).map(|(k, _)| *k).collect();
    // Each node's (suspect links, links).
    let mut tally: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    for (&(a, b), &v) in first {
        for n in [a, b] {
            let t = tally.entry(n).or_default();
            t.0 += usize::from(slow(v));
            t.1 += 1;
        }
    }
    // The node to retest a suspect's ends against: not one of them, fewer
    // than half of its own links suspect (a bad node touches every other
    // node, so "no suspect link at all" would leave nobody), the fewest
    // suspects first.
    let good_for = |a: usize, b: usize| {
        tally
            .iter()
            .filter(|(n, t)| **n != a && **n != b && 2 * t.0 < t.1)
            .min_by_key(|(n, t)| (t.0, **n))
            .map(|(n, _)| *n)
    };
    let (mut retests, mut blamed, mut unresolved, mut cleared) = (Vec::new(), BTreeSet::new(), Vec::new(), Vec::new());
    // Each endpoint's verdict, once: slow, fine, or unknown (its retest
    // gave no number: it failed, or these rows never measured it).
    let mut verdict: BTreeMap<usize, Option<bool>> = BTreeMap::new();
    for &(a, b) in &suspects {
        let Some(g) = good_for(a, b) else {
            unresolved.push((a, b));
            continue;
        };
        let mut endpoint_slow = |x: usize| {
            *verdict.entry(x).or_insert_with(|| {
                let v = measure(x, g);
                retests.push((x, g, v));
                v.is_finite().then(|| slow(v))
            })
        };
        let (sa, sb) = (endpoint_slow(a), endpoint_slow(b));
        // The link itself again: a cable is blamed only when its dip comes back.
        let again = measure(a, b);
        retests.push((a, b, again));
        match (sa, sb) {
            (Some(false), Some(false)) if again.is_finite() && slow(again) => {
                blamed.insert(Blame::Link { a, b });
            }
            (Some(false), Some(false)) if again.is_finite() => cleared.push((a, b)),
            _ if sa == Some(true) || sb == Some(true) => {
                for (x, s) in [(a, sa), (b, sb)] {
                    if s == Some(true) {
                        blamed.insert(Blame::Node { node: x });
                    }
                }
            }
            _ => unresolved.push((a, b)),
        }
    }
    SecondPass { centre, floor, suspects, retests, blamed: blamed.into_iter().collect(), unresolved, cleared }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_round_label_reads_back_and_names_each_partner() {
        let round = round_robin(5)[2].clone();
        let l = label(&round);
        assert_eq!(parse(&l), round);
        for &(a, b) in &round {
            assert_eq!((partner(&l, a), partner(&l, b)), (Some(b), Some(a)));
        }
        let resting = (0..5).find(|r| round.iter().all(|&(a, b)| a != *r && b != *r)).unwrap();
        assert_eq!(partner(&l, resting), None);
        assert_eq!(parse("0<->x 1<->2 junk"), vec![(1, 2)]);
    }

    proptest! {
        /// Every pair exactly once, every round disjoint, n − 1 rounds
        /// (n even) or n (n odd).
        #[test]
        fn round_robin_covers_every_pair_once(n in 2usize..=64) {
            let rounds = round_robin(n);
            prop_assert_eq!(rounds.len(), if n % 2 == 0 { n - 1 } else { n });
            let mut seen = BTreeSet::new();
            for round in &rounds {
                let mut busy = BTreeSet::new();
                prop_assert_eq!(round.len(), n / 2);
                for &(a, b) in round {
                    prop_assert!(a < b && b < n);
                    prop_assert!(busy.insert(a) && busy.insert(b), "a node twice in one round");
                    prop_assert!(seen.insert((a, b)), "pair {:?} twice", (a, b));
                }
            }
            prop_assert_eq!(seen.len(), n * (n - 1) / 2);
        }
    }

    /// A fleet of `n` nodes with 100 GB/s links, except where `slow` says.
    fn links(slow: impl Fn(usize, usize) -> bool) -> impl Fn(usize, usize) -> f64 {
        move |a, b| if slow(a, b) { 60.0 } else { 100.0 + ((a * 7 + b * 3) % 5) as f64 }
    }

    fn first_pass(n: usize, f: &impl Fn(usize, usize) -> f64) -> BTreeMap<(usize, usize), f64> {
        round_robin(n).into_iter().flatten().map(|(a, b)| ((a, b), f(a, b))).collect()
    }

    #[test]
    fn a_bad_cable_is_blamed_on_the_link_not_its_endpoints() {
        let f = links(|a, b| (a, b) == (2, 5));
        let mut calls = 0;
        let p = second_pass(&first_pass(8, &f), 0.05, |x, g| {
            calls += 1;
            f(x.min(g), x.max(g))
        });
        assert_eq!(p.suspects, vec![(2, 5)]);
        assert_eq!(p.blamed, vec![Blame::Link { a: 2, b: 5 }]);
        // Each endpoint retested once against a good node, then the link.
        assert_eq!(calls, 3);
        assert!(
            p.retests[..2].iter().all(|&(x, g, v)| [2, 5].contains(&x) && ![2, 5].contains(&g) && v > 95.0),
            "{p:?}"
        );
        assert_eq!((p.retests[2].0, p.retests[2].1), (2, 5));
    }

    #[test]
    fn a_bad_node_is_blamed_once_not_on_every_pair_it_joins() {
        // Node 3's NIC is slow: all 7 of its links are slow in the first pass.
        let f = links(|a, b| a == 3 || b == 3);
        let mut calls = 0;
        let p = second_pass(&first_pass(8, &f), 0.05, |x, g| {
            calls += 1;
            f(x.min(g), x.max(g))
        });
        assert_eq!(p.suspects.len(), 7);
        assert_eq!(p.blamed, vec![Blame::Node { node: 3 }]);
        // Node 3 once, each of its 7 partners once, and each link again.
        assert_eq!(calls, 15);
        assert!(p.unresolved.is_empty());
    }

    #[test]
    fn a_clean_fleet_has_no_suspects_and_no_retests() {
        let f = links(|_, _| false);
        let p = second_pass(&first_pass(6, &f), 0.05, |_, _| panic!("no retest in a clean fleet"));
        assert!(p.suspects.is_empty() && p.blamed.is_empty() && p.retests.is_empty());
    }

    #[test]
    fn two_bad_cables_that_touch_every_node_are_still_told_apart() {
        // 4 nodes, links 0–1 and 2–3 slow: every node has one suspect link
        // of three, and is still good enough to retest the other cable.
        let f = links(|a, b| (a, b) == (0, 1) || (a, b) == (2, 3));
        let p = second_pass(&first_pass(4, &f), 0.05, |x, g| f(x.min(g), x.max(g)));
        assert_eq!(p.blamed, vec![Blame::Link { a: 0, b: 1 }, Blame::Link { a: 2, b: 3 }]);
        assert!(p.unresolved.is_empty());
    }

    #[test]
    fn a_dip_that_does_not_come_back_is_cleared_not_blamed() {
        // Link 2–5 was slow once (a noisy round); measured again, it is fine.
        let first = first_pass(8, &links(|a, b| (a, b) == (2, 5)));
        let fine = links(|_, _| false);
        let p = second_pass(&first, 0.05, |x, g| fine(x.min(g), x.max(g)));
        assert_eq!((p.blamed.len(), p.cleared.as_slice()), (0, &[(2, 5)][..]));
    }

    #[test]
    fn a_retest_with_no_number_blames_nobody() {
        // The bad cable again, but its retests gave nothing (failed, or
        // rows from a run that retested other pairs): unresolved, not slow.
        let f = links(|a, b| (a, b) == (2, 5));
        let p = second_pass(&first_pass(8, &f), 0.05, |_, _| f64::NAN);
        assert_eq!((p.blamed.len(), p.unresolved.as_slice()), (0, &[(2, 5)][..]));
    }

    #[test]
    fn a_suspect_with_no_mostly_good_node_to_retest_against_stays_unresolved() {
        // 6 nodes: 0–1 slow, and every link among 2, 3, 4 and 5 slow (7 of
        // 15 links, the median still good). For 0–1 each other node has 3
        // of its 5 links suspect: nobody to retest against.
        let slow = |a: usize, b: usize| (a, b) == (0, 1) || (a >= 2 && b >= 2);
        let f = links(slow);
        let p = second_pass(&first_pass(6, &f), 0.05, |x, g| f(x.min(g), x.max(g)));
        assert_eq!(p.suspects.len(), 7);
        assert_eq!(p.unresolved, vec![(0, 1)]);
        // The others are retested against node 0 or 1 (1 suspect of 5).
        // (or the suspect link itself, measured again).
        let ok = |&(x, g, _): &(usize, usize, f64)| (x >= 2 && g <= 1) || p.suspects.contains(&(x.min(g), x.max(g)));
        assert!(p.retests.iter().all(ok), "{p:?}");
    }
}
