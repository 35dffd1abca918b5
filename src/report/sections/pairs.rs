//! Which GPU pairs a peer-copy chart draws (`report --pairs 0-1,0-2`). On
//! 8 GPUs there are 56 ordered pairs, 112 curves with both directions:
//! unreadable. Without `--pairs`, up to 8 pairs are all drawn; beyond, the
//! pairs from the lowest GPU, and the report says so (the peer matrix
//! still shows every pair). No template of its own: its sentence,
//! `templates/sentences/pairs-shown.md`, follows the peer chart in
//! `sections/gpu.md`.

use crate::analysis::PointStat;
use crate::error::{Error, Result};
use crate::analysis::findings::Said;
use crate::vocab::benches::Bench;

/// The most pairs drawn when `--pairs` is not given.
pub const MAX_AUTO: usize = 8;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pairs {
    chosen: Option<Vec<(String, String)>>,
}

fn key(peer: &str) -> Option<(String, String)> {
    let (a, b) = peer.split_once("->")?;
    Some((a.trim().to_string(), b.trim().to_string()))
}

impl Pairs {
    /// `0-1,0-2` or `0->1, 0->2`; `None` = the default choice.
    pub fn parse(text: Option<&str>) -> Result<Pairs> {
        let Some(text) = text else { return Ok(Pairs::default()) };
        let mut v = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let pair = item.split_once("->").or_else(|| item.split_once('-'));
            match pair {
                Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() => {
                    v.push((a.trim().to_string(), b.trim().to_string()))
                }
                _ => {
                    return Err(Error::config(
                        "--pairs",
                        format!(
                            "`{item}` is not a GPU pair; write FROM-TO pairs separated by commas, e.g. --pairs 0-1,0-2"
                        ),
                    ))
                }
            }
        }
        if v.is_empty() {
            return Err(Error::config("--pairs", "no pair given; write e.g. --pairs 0-1,0-2"));
        }
        Ok(Pairs { chosen: Some(v) })
    }

    /// The points the peer charts draw, and a sentence saying which pairs
    /// were left out (none when every pair is drawn). Only GPU peer copies
    /// are filtered; every other point passes.
    pub fn filter(&self, stats: &[PointStat]) -> (Vec<PointStat>, Option<Said>) {
        let peer = |p: &PointStat| (p.bench == Bench::MemcpyPeer).then(|| p.peer.as_deref().and_then(key)).flatten();
        let mut all: Vec<(String, String)> = stats.iter().filter_map(peer).collect();
        all.sort_by_key(|(a, b)| (super::matrix::gpu_key(a), super::matrix::gpu_key(b)));
        all.dedup();
        let keep: Vec<(String, String)> = match &self.chosen {
            Some(c) => c.clone(),
            None if all.len() <= MAX_AUTO => return (stats.to_vec(), None),
            None => {
                let first = all[0].0.clone();
                all.iter().filter(|(a, _)| *a == first).cloned().collect()
            }
        };
        let kept: Vec<PointStat> =
            stats.iter().filter(|p| peer(p).is_none_or(|k| keep.contains(&k))).cloned().collect();
        let shown = keep.iter().filter(|k| all.contains(k)).count();
        let note = (shown < all.len()).then(|| Said::PairsShown {
            shown,
            measured: all.len(),
            chosen: self.chosen.is_some(),
            pairs: keep.iter().map(|(a, b)| format!("{a}→{b}")).collect(),
        });
        (kept, note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(peer: &str) -> PointStat {
        PointStat { bench: Bench::MemcpyPeer.name().into(), peer: Some(peer.into()), ..PointStat::default() }
    }

    #[test]
    fn pairs_parse_and_filter() {
        let p = Pairs::parse(Some("0-1, 2->3")).unwrap();
        let (kept, note) = p.filter(&[pt("0->1"), pt("1->0"), pt("2->3"), PointStat::default()]);
        assert_eq!(kept.len(), 3, "the non-peer point passes");
        assert!(matches!(note, Some(Said::PairsShown { shown: 2, measured: 3, chosen: true, .. })), "{note:?}");
        assert!(Pairs::parse(Some("0")).unwrap_err().to_string().contains("--pairs"));
        assert!(Pairs::parse(Some(",")).is_err());
    }

    #[test]
    fn many_pairs_default_to_the_lowest_gpu() {
        let all: Vec<PointStat> =
            (0..8).flat_map(|a| (0..8).filter(move |b| *b != a).map(move |b| pt(&format!("{a}->{b}")))).collect();
        let (kept, note) = Pairs::default().filter(&all);
        assert_eq!(kept.len(), 7);
        assert!(matches!(note, Some(Said::PairsShown { shown: 7, measured: 56, chosen: false, .. })), "{note:?}");
        let few: Vec<PointStat> = all.into_iter().take(5).collect();
        assert_eq!(Pairs::default().filter(&few), (few.clone(), None));
    }
}
