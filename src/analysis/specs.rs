//! Hardware specs: published rooflines with their sources, as TOML. The
//! built-in set (`data/specs/*.toml`, embedded in the binary) is overridden
//! or extended by any `*.toml` in the archive's `specs/` folder, so a user
//! adds their own machine by dropping a file there (same `id` = override).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemorySpec {
    pub kind: Option<String>,
    pub capacity_gb: Option<f64>,
    /// Read + write bandwidth, GB/s (10^9 bytes/s): compare with bytes moved.
    pub bandwidth_gbps: f64,
    pub source: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LinkSpec {
    pub name: String,
    pub count: u32,
    /// All links, both directions together, GB/s.
    pub total_gbps: f64,
    /// One link, in the convention its `note` states (GB/s).
    #[serde(default)]
    pub per_link_gbps: Option<f64>,
    /// All links, one direction (GB/s): what one GPU can send at once.
    #[serde(default)]
    pub per_direction_gbps: Option<f64>,
    pub note: Option<String>,
    pub source: String,
}

impl LinkSpec {
    /// The lines a peer-copy chart draws: one link, and all links in one
    /// direction, each labelled with what it is.
    pub fn lines(&self) -> Vec<LinkLine> {
        let mut v = Vec::new();
        if let Some(g) = self.per_link_gbps {
            v.push(LinkLine {
                label: format!("{}, one link: {} GB/s", self.name, crate::vocab::units::format_sig3(g)),
                gbps: g,
                source: self.source.clone(),
            });
        }
        if let Some(g) = self.per_direction_gbps {
            v.push(LinkLine {
                label: format!(
                    "{}, {} links one way: {} GB/s",
                    self.name,
                    self.count,
                    crate::vocab::units::format_sig3(g)
                ),
                gbps: g,
                source: self.source.clone(),
            });
        }
        v
    }

    /// The line a copy between two GPUs of this part crosses: one link
    /// where the spec gives a per-link figure (a fully connected mesh such
    /// as Infinity Fabric gives each pair one link), else all links one
    /// way (NVLink through NVSwitch gives a pair the GPU's whole port).
    pub fn pair_line(&self) -> Option<LinkLine> {
        // `lines` puts the per-link figure first.
        self.lines().into_iter().next()
    }
}

/// A GPU's host interface: an interconnect id (`pcie-gen5-x16`) and the
/// datasheet line that names it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostSpec {
    pub link: String,
    pub source: String,
}

/// A link or network port drawn as a dashed line on a bandwidth chart.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LinkLine {
    /// What the line is, with its figure: `EFA, one device: 100 Gb/s`.
    pub label: String,
    /// GB/s (10^9 bytes/s), the unit charts convert from.
    pub gbps: f64,
    pub source: String,
}

/// A published interconnect not tied to one GPU: PCIe, EFA, RoCE.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Interconnect {
    pub id: String,
    pub name: String,
    /// GB/s (10^9 bytes/s), one direction.
    pub gbps: f64,
    /// Where it bounds a measurement: `network` (NIC to NIC) or `host`
    /// (GPU to host, and peer copies staged through it).
    pub applies: Vec<String>,
    pub note: String,
    pub source: String,
}

impl Interconnect {
    pub fn line(&self) -> LinkLine {
        LinkLine { label: self.note.clone(), gbps: self.gbps, source: self.source.clone() }
    }
}

#[derive(Deserialize)]
struct InterconnectFile {
    interconnect: Vec<Interconnect>,
}

const INTERCONNECTS: &str = include_str!("../../data/specs/interconnects.toml");

/// One device's published peaks.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Spec {
    pub id: String,
    pub name: String,
    pub vendor: String,
    /// Substrings of a device name that identify this device.
    #[serde(rename = "match", default)]
    pub patterns: Vec<String>,
    pub memory: Option<MemorySpec>,
    pub link: Option<LinkSpec>,
    /// The GPU's link to its host (what h2d/d2h copies cross).
    #[serde(default)]
    pub host: Option<HostSpec>,
    /// [`Self::host`]'s interconnect, resolved when the book is loaded.
    #[serde(skip)]
    pub host_line: Option<LinkLine>,
    /// Dense peak TFLOP/s per dtype, plus a `source` entry.
    #[serde(default)]
    pub peak_tflops: BTreeMap<String, toml::Value>,
}

impl Spec {
    /// Whether it describes a GPU (it names the GPU's own links or its
    /// link to a host): a host is never held against it.
    pub fn is_gpu(&self) -> bool {
        self.link.is_some() || self.host.is_some()
    }

    /// Peak TFLOP/s for a dtype name (`bf16`, `f32` = `fp32`, ...).
    pub fn peak_tflops(&self, dtype: &str) -> Option<f64> {
        let key = match dtype {
            "f64" => "fp64",
            "f32" => "fp32",
            "f16" => "fp16",
            other => other,
        };
        match self.peak_tflops.get(key)? {
            toml::Value::Float(f) => Some(*f),
            toml::Value::Integer(i) => Some(*i as f64),
            _ => None,
        }
    }

    pub fn compute_source(&self) -> Option<&str> {
        self.peak_tflops.get("source").and_then(|v| v.as_str())
    }
}

const BUILTIN: [(&str, &str); 9] = [
    ("h100-sxm.toml", include_str!("../../data/specs/h100-sxm.toml")),
    ("h200.toml", include_str!("../../data/specs/h200.toml")),
    ("a100-sxm.toml", include_str!("../../data/specs/a100-sxm.toml")),
    ("b200.toml", include_str!("../../data/specs/b200.toml")),
    ("mi300x.toml", include_str!("../../data/specs/mi300x.toml")),
    ("mi300a.toml", include_str!("../../data/specs/mi300a.toml")),
    ("mi325x.toml", include_str!("../../data/specs/mi325x.toml")),
    ("mi350x.toml", include_str!("../../data/specs/mi350x.toml")),
    ("mi355x.toml", include_str!("../../data/specs/mi355x.toml")),
];

/// Parse one spec file; errors name the file and line.
pub fn parse_spec(path: &Path, text: &str) -> Result<Spec> {
    toml::from_str(text).map_err(|e| toml_error(path, text, &e))
}

/// A TOML error as an error naming the file and the line it points at.
pub(crate) fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> Error {
    let line = e.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1)).unwrap_or(0);
    Error::Spec { path: path.to_path_buf(), line, message: e.message().to_string() }
}

/// All known specs by id.
#[derive(Debug, Clone, Default)]
pub struct SpecBook {
    pub specs: BTreeMap<String, Spec>,
    /// PCIe, EFA and RoCE figures (`data/specs/interconnects.toml`).
    pub interconnects: Vec<Interconnect>,
}

impl SpecBook {
    /// The built-in specs only.
    pub fn builtin() -> Self {
        let mut book = SpecBook::default();
        for (name, text) in BUILTIN {
            let spec = parse_spec(Path::new(name), text).expect("built-in specs parse (tested)");
            book.specs.insert(spec.id.clone(), spec);
        }
        let file: InterconnectFile = toml::from_str(INTERCONNECTS).expect("built-in interconnects parse (tested)");
        book.interconnects = file.interconnect;
        book.resolve_host_links();
        book
    }

    /// Each spec's host link, looked up among the interconnects (a spec
    /// naming an unknown one keeps none).
    fn resolve_host_links(&mut self) {
        for spec in self.specs.values_mut() {
            spec.host_line = spec.host.as_ref().and_then(|h| {
                let i = self.interconnects.iter().find(|i| i.id == h.link)?;
                Some(LinkLine { source: format!("{}; {}", h.source, i.source), ..i.line() })
            });
        }
    }

    /// The interconnect lines that bound measurements of kind `applies`.
    pub fn interconnect_lines(&self, applies: &str) -> Vec<LinkLine> {
        self.interconnects.iter().filter(|i| i.applies.iter().any(|a| a == applies)).map(Interconnect::line).collect()
    }

    /// The interconnect `id`; else an error for `flag` naming the known ones.
    pub fn interconnect(&self, flag: &str, id: &str) -> Result<&Interconnect> {
        self.interconnects.iter().find(|i| i.id == id).ok_or_else(|| {
            let known: Vec<&str> = self.interconnects.iter().map(|i| i.id.as_str()).collect();
            Error::config(flag, format!("no link `{id}`; known: {}", known.join(", ")))
        })
    }

    /// Built-ins plus `<archive>/specs/*.toml`.
    pub fn load(archive_root: &Path) -> Result<Self> {
        let mut book = Self::builtin();
        let dir = archive_root.join("specs");
        if let Ok(entries) = std::fs::read_dir(&dir) {
            let mut paths: Vec<_> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml") && !p.ends_with("interconnects.toml"))
                .collect();
            paths.sort();
            for p in paths {
                let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
                let spec = parse_spec(&p, &text)?;
                book.specs.insert(spec.id.clone(), spec);
            }
        }
        book.resolve_host_links();
        Ok(book)
    }

    /// A spec by id, or the first whose pattern occurs in `device`.
    pub fn find(&self, id_or_device: &str) -> Option<&Spec> {
        self.specs
            .get(id_or_device)
            .or_else(|| self.specs.values().find(|s| s.patterns.iter().any(|p| id_or_device.contains(p.as_str()))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_pair_crosses_one_mesh_link_or_the_whole_switched_port() {
        let book = SpecBook::builtin();
        let pair = |id: &str| book.find(id).and_then(|s| s.link.as_ref()).and_then(|l| l.pair_line()).unwrap();
        // MI300X: a fully connected mesh, one link per pair, 64 GB/s one way.
        assert_eq!(pair("mi300x").gbps, 64.0);
        assert!(pair("mi300x").label.contains("one link"));
        // H100 SXM: NVSwitch gives a pair all 18 links, one way.
        assert_eq!(pair("h100-sxm").gbps, 450.0);
        assert!(pair("h100-sxm").label.contains("links one way"));
    }

    #[test]
    fn builtins_parse_and_carry_sources() {
        let book = SpecBook::builtin();
        assert_eq!(book.specs.len(), 9);
        for s in book.specs.values() {
            let m = s.memory.as_ref().expect("every built-in has memory");
            assert!(m.bandwidth_gbps > 1000.0 && m.source.contains("https://"), "{}", s.id);
            assert!(s.compute_source().is_some(), "{}", s.id);
            assert!(s.peak_tflops("bf16").unwrap() > 300.0, "{}", s.id);
        }
        assert_eq!(book.find("NVIDIA H100 80GB HBM3").unwrap().id, "h100-sxm");
        assert_eq!(book.find("mi300x").unwrap().memory.as_ref().unwrap().bandwidth_gbps, 5300.0);
        assert!(book.find("Intel Xeon").is_none());
        let h100 = book.find("h100-sxm").unwrap().link.as_ref().unwrap();
        assert_eq!(h100.lines().iter().map(|l| l.gbps).collect::<Vec<_>>(), [450.0]);
        let mi300x = book.find("mi300x").unwrap().link.as_ref().unwrap();
        // 128 GB/s a link, both directions together: 64 one way.
        assert_eq!(mi300x.per_link_gbps, Some(64.0));
        let net = book.interconnect_lines("network");
        assert!(net.len() >= 10, "{net:?}");
        // Each figure in GB/s is the Gb/s its label states, divided by 8.
        for l in &net {
            let words: Vec<&str> = l.label.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "Gb/s").unwrap_or_else(|| panic!("{}", l.label));
            let stated: f64 = words[at - 1].parse().unwrap();
            assert!((stated / 8.0 - l.gbps).abs() < 0.01 * l.gbps, "{}: {} GB/s", l.label, l.gbps);
        }
        let qdr = book.interconnects.iter().find(|i| i.id == "ib-qdr").unwrap();
        assert_eq!(qdr.gbps, 4.0, "QDR: 40 Gb/s signalling, 32 Gb/s of data");
        assert_eq!(book.interconnect_lines("host").len(), 2, "PCIe Gen5 and Gen4 x16");
        // A GPU's own host link, from its datasheet.
        assert_eq!(book.find("NVIDIA H200").unwrap().host_line.as_ref().unwrap().gbps, 63.0);
        assert_eq!(book.find("a100-sxm").unwrap().host_line.as_ref().unwrap().gbps, 31.5);
    }

    #[test]
    fn a_bad_spec_names_file_and_line() {
        let e = parse_spec(Path::new("my.toml"), "id = \"x\"\nname = \"y\"\nvendor = 3\n").unwrap_err().to_string();
        assert!(e.starts_with("my.toml:3:"), "{e}");
    }
}
