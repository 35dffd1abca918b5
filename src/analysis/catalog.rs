//! The catalog of a report: built once over every point the report holds,
//! it owns **whose** rows a curve holds (its [`System`]: the run, native or
//! imported and by which tool, the device or "not named in the log", and
//! the spec that applies to that device) and **what it is called** (one
//! name per series, unique across the whole report).
//!
//! Charts, tables, sentences, Key results and compare take names from it:
//! [`Catalog::name_of`] names a point's series, [`Catalog::series`] builds
//! every series of a report once, named ([`super::series::Series`]), and
//! [`Catalog::title`] computes a chart's title from the systems its curves
//! hold. Nothing parses a label.
//!
//! To rename a curve everywhere, change `SeriesKey::base_name` (the base
//! name, in `series.rs`) or [`Catalog::name_of`] (how a name carries
//! its system).
//!
//! The file is longer than 400 lines because the tests of its naming,
//! card and spec rules sit beside them.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::specs::{Spec, SpecBook};
use super::summary::PointStat;
use crate::archive::manifest::Manifest;
use crate::vocab::source::RowOrigin;

/// What a report says for a device its rows do not name.
pub const UNNAMED_DEVICE: &str = "device not named in the log";

/// Where a curve's rows come from: a run on one device.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct System {
    pub run_id: String,
    /// The run's label, else its id.
    pub run_name: String,
    /// `None`: benchbook measured it; else the tool whose output was read.
    pub tool: Option<String>,
    /// The device as the rows name it (`unknown` when the log did not).
    pub device: String,
    /// The published spec that applies to this device, when one does.
    pub spec: Option<String>,
    /// The physical card: the GPU's UUID as its run's manifest recorded it
    /// (`GPU-eece32e0-78ca-…`); `None` for a host, or where the run did
    /// not record one (an imported log that does not print it).
    pub card: Option<String>,
}

impl System {
    /// The device as a reader sees it: [`UNNAMED_DEVICE`] for a log that
    /// did not name it, `GPU 0` for `GPU 0: NVIDIA H200`.
    pub fn device_shown(&self) -> String {
        if unnamed(&self.device) {
            UNNAMED_DEVICE.to_string()
        } else {
            crate::vocab::rows::short_device(&self.device).to_string()
        }
    }

    /// The card as a reader sees it: `NVIDIA H200 GPU-eece32e0` (the
    /// UUID's first group, which tells cards of one fleet apart), or the
    /// device where no card was recorded.
    pub fn card_shown(&self) -> String {
        match (&self.card, self.model()) {
            (Some(uuid), Some(model)) => format!("{model} {}", short_uuid(uuid)),
            (Some(uuid), None) => short_uuid(uuid).to_string(),
            _ => self.device_shown(),
        }
    }

    /// The device's model: `NVIDIA H200` for `GPU 0: NVIDIA H200`.
    fn model(&self) -> Option<&str> {
        (!unnamed(&self.device)).then(|| self.device.split_once(": ").map_or(self.device.as_str(), |(_, m)| m.trim()))
    }
}

/// A GPU UUID's first group, `GPU-eece32e0` for
/// `GPU-eece32e0-78ca-bbba-7c9b-aaaff290d068`.
pub fn short_uuid(uuid: &str) -> &str {
    match uuid.match_indices('-').nth(1) {
        Some((at, _)) => &uuid[..at],
        None => uuid,
    }
}

/// The facts its run's manifest recorded of the GPU a point ran on: the
/// backend's device at the ordinal its device names (`GPU 1: …`).
pub fn gpu_facts(p: &PointStat, manifest: Option<&Manifest>) -> Option<crate::vocab::facts::GpuFacts> {
    if !crate::vocab::kinds::backend_is_gpu(&p.backend) {
        return None;
    }
    let ordinal = crate::vocab::rows::gpu_ordinal(&p.device)?;
    let info = manifest?.backends.iter().find(|b| b.name == p.backend)?;
    let facts: crate::vocab::facts::GpuBackendFacts = serde_json::from_value(info.facts.clone()?).ok()?;
    let at = facts.devices.iter().position(|d| d.ordinal == ordinal).unwrap_or(ordinal);
    facts.devices.into_iter().nth(at)
}

/// The UUID of the card a GPU point ran on ([`gpu_facts`]).
pub fn card_of(p: &PointStat, manifest: Option<&Manifest>) -> Option<String> {
    gpu_facts(p, manifest)?.uuid
}

/// Whether the rows name no device (`unknown`, or empty).
pub fn unnamed(device: &str) -> bool {
    device.is_empty() || device == "unknown"
}

/// The catalog of one report ([`Catalog::build`]).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Catalog {
    /// Every system, by run then device.
    pub systems: Vec<System>,
    /// The specs its systems name ([`System::spec`]), by name.
    #[serde(skip)]
    pub specs: BTreeMap<String, Spec>,
    /// Every series of the report ([`Catalog::hold_series`]): what every
    /// section, chart and sentence reads.
    #[serde(skip)]
    pub series: Vec<super::series::Series>,
    /// Every GPU of the report's spec book (built-ins and the archive's own)
    /// with its dense 16-bit peak, TFLOP/s: what a figure from a GPU no log
    /// names is set against ([`super::findings::plausibility`]).
    #[serde(skip)]
    pub gpu_peaks: Vec<(String, f64)>,
}

/// The base name of a point's series ([`super::series::SeriesKey::base_name`],
/// the one place it is spelled).
pub fn series_name(p: &PointStat) -> String {
    super::series::SeriesKey::of(p).base_name()
}

impl Catalog {
    /// The catalog of `stats`: one system per (run, device), with the spec
    /// of that device (`explicit`, from --spec, applies to GPUs only, as a
    /// GPU report's roofline; a host is matched by its name).
    pub fn build(stats: &[PointStat], manifests: &[Manifest], book: &SpecBook, explicit: Option<&Spec>) -> Catalog {
        let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
        let mut systems = Vec::new();
        let mut specs = BTreeMap::new();
        for p in stats {
            if !seen.insert((p.run_id.clone(), p.device.clone())) {
                continue;
            }
            let m = manifests.iter().find(|m| m.run_id == p.run_id);
            let tool = match RowOrigin::parse(p.source.as_deref()) {
                RowOrigin::Native => None,
                RowOrigin::Import { tool, .. } => Some(tool.to_string()),
            };
            let spec = Self::spec_for(p, book, explicit).map(|s| {
                specs.entry(s.name.clone()).or_insert_with(|| s.clone());
                s.name.clone()
            });
            systems.push(System {
                run_id: p.run_id.clone(),
                run_name: m.and_then(|m| m.label.clone()).unwrap_or_else(|| p.run_id.clone()),
                tool,
                device: p.device.clone(),
                spec,
                card: card_of(p, m),
            });
        }
        systems.sort();
        let gpu_peaks = book
            .specs
            .values()
            .filter_map(|s| Some((s.name.clone(), s.peak_tflops("bf16").or_else(|| s.peak_tflops("fp16"))?)))
            .collect();
        Catalog { systems, specs, series: Vec::new(), gpu_peaks }
    }

    /// The spec that applies to point `p`'s device: its own by name, else
    /// the explicit one (`--spec`) where it is of the device's kind (a
    /// GPU's for a GPU point, a host's for a host); never a GPU's for a
    /// host.
    pub fn spec_for<'a>(p: &PointStat, book: &'a SpecBook, explicit: Option<&'a Spec>) -> Option<&'a Spec> {
        let gpu = crate::vocab::kinds::backend_is_gpu(&p.backend);
        let explicit = explicit.filter(|e| e.is_gpu() == gpu);
        if unnamed(&p.device) {
            return explicit;
        }
        book.find(&p.device).or(explicit)
    }

    /// The spec that applies to a system, when one does: the one rule every
    /// share of a peak, roofline and System table reads.
    pub fn spec_of(&self, system: &System) -> Option<&Spec> {
        self.specs.get(system.spec.as_deref()?)
    }

    /// The spec of the system a point ran on.
    pub fn spec_of_point(&self, p: &PointStat) -> Option<&Spec> {
        self.spec_of(self.system(&p.run_id, &p.device)?)
    }

    /// The memory roofline (GB/s, bytes read + written) of the system a
    /// point ran on: its own spec's, never another system's.
    pub fn memory_gbps(&self, p: &PointStat) -> Option<f64> {
        self.spec_of_point(p)?.memory.as_ref().map(|m| m.bandwidth_gbps)
    }

    /// The spec whose memory roofline `series` are held against, where
    /// their systems share one; `None` where none is held against a
    /// roofline, or they are held against different ones.
    pub fn roofline_spec(&self, series: &[&super::series::Series]) -> Option<&Spec> {
        let mut specs: Vec<&Spec> = Vec::new();
        for s in series.iter().filter(|s| s.roofline_gbps.is_some()) {
            if let Some(spec) = self.spec_of_point(&s.points[0]) {
                if !specs.iter().any(|x| x.name == spec.name) {
                    specs.push(spec);
                }
            }
        }
        match specs.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

    /// Build and keep the report's series from `stats` (the points it
    /// shows): once per report.
    pub fn hold_series(&mut self, stats: &[PointStat]) {
        self.series = self.series(stats);
    }

    /// Every series of `stats`, named ([`Self::name_of`]), each with its
    /// summary against its own system's memory roofline: built once per
    /// report, and read by every section.
    pub fn series(&self, stats: &[PointStat]) -> Vec<super::series::Series> {
        super::series::named(stats, |p| self.name_of(p), |p| self.memory_gbps(p))
    }

    /// The system of a run and device.
    pub fn system(&self, run_id: &str, device: &str) -> Option<&System> {
        self.systems.iter().find(|s| s.run_id == run_id && s.device == device)
    }

    /// A point in prose: a sized point by its series' name
    /// ([`Self::name_of`]) and its size (`p2p put host buffers, 2 channels
    /// split, flush every 64 at 16 MiB`); any other (a GEMM shape, a
    /// metric) by its own label, which names its shape and dtype.
    pub fn point_name(&self, p: &PointStat) -> String {
        match p.size_bytes {
            Some(size) => format!("{} at {}", self.name_of(p), crate::vocab::units::format_bytes(size)),
            None => p.params().label_with(false),
        }
    }

    /// The name of a point's series, unique across the report, naming its
    /// system wherever the report holds more than one: the base name
    /// ([`series_name`]), then, in parentheses, its device (where the
    /// report holds several device models, or a device not named) and its
    /// run's name (where it holds several runs; the id where two runs share
    /// a name).
    pub fn name_of(&self, p: &PointStat) -> String {
        let models: BTreeSet<Option<&str>> = self.systems.iter().map(System::model).collect();
        let several_runs = self.names_runs();
        let mut run_names: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for s in &self.systems {
            run_names.entry(s.run_name.as_str()).or_default().insert(s.run_id.as_str());
        }
        let qualifier = |s: &System| {
            let mut q = Vec::new();
            if models.len() > 1 {
                q.push(s.device_shown());
            }
            if several_runs {
                let shared = run_names.get(s.run_name.as_str()).is_some_and(|ids| ids.len() > 1);
                q.push(if shared { s.run_id.clone() } else { s.run_name.clone() });
            }
            q
        };
        let base = series_name(p);
        let q = self.system(&p.run_id, &p.device).map(qualifier).unwrap_or_default();
        if q.is_empty() {
            base
        } else {
            format!("{base} ({})", q.join(", "))
        }
    }

    /// A chart's title: `what` and the devices its curves hold, each
    /// unnamed device with its run (so no curve's system goes unsaid).
    pub fn title<'a>(&self, what: &str, curves: impl Iterator<Item = (&'a str, &'a str)>) -> String {
        let mut shown: Vec<String> = Vec::new();
        let mut models: BTreeSet<Option<String>> = BTreeSet::new();
        let mut ordinals: BTreeSet<&str> = BTreeSet::new();
        let mut cards: BTreeSet<String> = BTreeSet::new();
        for (run, device) in curves {
            let Some(s) = self.system(run, device) else { continue };
            if s.card.is_some() {
                cards.insert(s.card_shown());
            }
            models.insert(s.model().map(str::to_string));
            if device.contains(": ") {
                ordinals.insert(device);
            }
            let d = match s.model() {
                Some(_) => s.device_shown(),
                None => format!("a {UNNAMED_DEVICE} ({})", s.run_name),
            };
            if !shown.contains(&d) {
                shown.push(d);
            }
        }
        // Curves from several recorded cards name each card: two H200s are
        // not "one H200".
        if cards.len() > 1 {
            let cards: Vec<String> = cards.into_iter().collect();
            let (last, rest) = cards.split_last().expect("more than one");
            return format!("{what} on {} and {last}", rest.join(", "));
        }
        // One GPU measured by benchbook (`GPU 0: NVIDIA H200`) and another
        // tool's log naming its model (`NVIDIA H200`) are one device.
        if let [Some(model)] = models.iter().collect::<Vec<_>>().as_slice() {
            if ordinals.len() <= 1 {
                return format!("{what} on {model}");
            }
        }
        match shown.as_slice() {
            [] => what.to_string(),
            [one] => format!("{what} on {one}"),
            [rest @ .., last] => format!("{what} on {} and {last}", rest.join(", ")),
        }
    }

    /// The distinct cards the report's runs measured, each with the names
    /// of its runs, where runs recorded a card: more than one means its
    /// figures come from several physical GPUs, and the report says which.
    pub fn cards(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for s in self.systems.iter().filter(|s| s.card.is_some()) {
            let shown = s.card_shown();
            match out.iter_mut().find(|(c, _)| *c == shown) {
                Some((_, runs)) if !runs.contains(&s.run_name) => runs.push(s.run_name.clone()),
                Some(_) => {}
                None => out.push((shown, vec![s.run_name.clone()])),
            }
        }
        out
    }

    /// Whether the report's curve names carry their run ([`Self::name_of`]):
    /// it holds more than one run.
    pub fn names_runs(&self) -> bool {
        self.systems.iter().any(|s| s.run_id != self.systems[0].run_id)
    }

    /// The spec names that apply to a run's devices, each once.
    pub fn specs_of_run(&self, run_id: &str) -> Vec<String> {
        let mut v: Vec<String> =
            self.systems.iter().filter(|s| s.run_id == run_id).filter_map(|s| s.spec.clone()).collect();
        v.sort();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(run: &str, device: &str, op: &str, source: Option<&str>) -> PointStat {
        PointStat {
            run_id: run.into(),
            bench: "p2p".into(),
            backend: "mpi".into(),
            device: device.into(),
            op: op.into(),
            size_bytes: Some(1 << 20),
            source: source.map(str::to_string),
            ..PointStat::default()
        }
    }

    #[test]
    fn names_are_unique_and_name_their_system_only_where_needed() {
        let stats = vec![
            point("a", "AMD EPYC", "send_recv", None),
            point("b", "unknown", "send_recv", Some("import:osu")),
            point("a", "AMD EPYC", "bidirectional", None),
        ];
        let cat = Catalog::build(&stats, &[], &SpecBook::builtin(), None);
        let names: Vec<String> = stats.iter().map(|p| cat.name_of(p)).collect();
        // The base name (its owner's spelling), then the system.
        let base = |i: usize| series_name(&stats[i]);
        assert_eq!(
            names,
            [
                format!("{} (AMD EPYC, a)", base(0)),
                format!("{} ({UNNAMED_DEVICE}, b)", base(1)),
                format!("{} (AMD EPYC, a)", base(2)),
            ]
        );
        assert_ne!(names[0], names[2]);
        // One system: the base name alone (the title names the device).
        let one = vec![point("a", "AMD EPYC", "send_recv", None)];
        assert_eq!(Catalog::build(&one, &[], &SpecBook::builtin(), None).name_of(&one[0]), series_name(&one[0]));
        // The title names every system, the unnamed device with its run.
        let title = cat.title("p2p bandwidth", stats.iter().map(|p| (p.run_id.as_str(), p.device.as_str())));
        assert_eq!(title, format!("p2p bandwidth on AMD EPYC and a {UNNAMED_DEVICE} (b)"));
        // The imported system records its tool.
        assert_eq!(cat.system("b", "unknown").unwrap().tool.as_deref(), Some("osu"));
    }

    #[test]
    fn a_host_never_gets_a_gpu_spec() {
        let book = SpecBook::builtin();
        let h100 = book.find("NVIDIA H100 80GB HBM3").unwrap();
        let host = point("a", "AMD EPYC", "send_recv", None);
        assert!(Catalog::spec_for(&host, &book, Some(h100)).is_none());
        // A host's own spec given with --spec (no GPU links) applies to a
        // host that has none by name, and never to a GPU.
        let mut epyc = h100.clone();
        (epyc.id, epyc.name, epyc.link, epyc.host) = ("epyc".into(), "AMD EPYC 9654".into(), None, None);
        assert_eq!(Catalog::spec_for(&host, &book, Some(&epyc)).map(|s| s.id.as_str()), Some("epyc"));
        let gpu0 = PointStat { backend: "cuda".into(), ..point("a", "unknown", "copy", None) };
        assert!(Catalog::spec_for(&gpu0, &book, Some(&epyc)).is_none());
        let mut gpu = point("a", "GPU 0: NVIDIA H100 80GB HBM3", "copy", None);
        gpu.backend = "cuda".into();
        assert_eq!(Catalog::spec_for(&gpu, &book, None).map(|s| s.name.as_str()), Some(h100.name.as_str()));
    }

    #[test]
    fn two_cards_of_one_model_are_named_apart() {
        let gpu = |run: &str, uuid: &str| System {
            run_id: run.into(),
            run_name: run.into(),
            tool: None,
            device: "GPU 0: NVIDIA H200".into(),
            spec: None,
            card: Some(uuid.into()),
        };
        let cat = Catalog {
            specs: BTreeMap::new(),
            series: Vec::new(),
            gpu_peaks: Vec::new(),
            systems: vec![
                gpu("a", "GPU-f7e4e3c0-1111-2222-3333-444455556666"),
                gpu("b", "GPU-eece32e0-78ca-bbba-7c9b-aaaff290d068"),
                gpu("c", "GPU-eece32e0-78ca-bbba-7c9b-aaaff290d068"),
            ],
        };
        let curves = [("a", "GPU 0: NVIDIA H200"), ("b", "GPU 0: NVIDIA H200")];
        assert_eq!(
            cat.title("GEMM", curves.into_iter()),
            "GEMM on NVIDIA H200 GPU-eece32e0 and NVIDIA H200 GPU-f7e4e3c0"
        );
        assert_eq!(cat.title("GEMM", [("b", "GPU 0: NVIDIA H200")].into_iter()), "GEMM on NVIDIA H200");
        assert_eq!(
            cat.cards(),
            [
                ("NVIDIA H200 GPU-f7e4e3c0".to_string(), vec!["a".to_string()]),
                ("NVIDIA H200 GPU-eece32e0".to_string(), vec!["b".to_string(), "c".to_string()])
            ]
        );
    }

    #[test]
    fn one_model_is_one_device_in_a_title() {
        let stats = [point("a", "GPU 0: NVIDIA H200", "copy", None), point("b", "NVIDIA H200", "copy", None)];
        let cat = Catalog::build(&stats, &[], &SpecBook::builtin(), None);
        let t = cat.title("GPU memcpy bandwidth", stats.iter().map(|p| (p.run_id.as_str(), p.device.as_str())));
        assert_eq!(t, "GPU memcpy bandwidth on NVIDIA H200");
    }
}
