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
    pub note: Option<String>,
    pub source: String,
}

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
    /// Dense peak TFLOP/s per dtype, plus a `source` entry.
    #[serde(default)]
    pub peak_tflops: BTreeMap<String, toml::Value>,
}

impl Spec {
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

const BUILTIN: [(&str, &str); 7] = [
    ("h100-sxm.toml", include_str!("../../data/specs/h100-sxm.toml")),
    ("h200.toml", include_str!("../../data/specs/h200.toml")),
    ("a100-sxm.toml", include_str!("../../data/specs/a100-sxm.toml")),
    ("b200.toml", include_str!("../../data/specs/b200.toml")),
    ("mi300x.toml", include_str!("../../data/specs/mi300x.toml")),
    ("mi325x.toml", include_str!("../../data/specs/mi325x.toml")),
    ("mi350x.toml", include_str!("../../data/specs/mi350x.toml")),
];

/// Parse one spec file; errors name the file and line.
pub fn parse_spec(path: &Path, text: &str) -> Result<Spec> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1)).unwrap_or(0);
        Error::Spec { path: path.to_path_buf(), line, message: e.message().to_string() }
    })
}

/// All known specs by id.
#[derive(Debug, Clone, Default)]
pub struct SpecBook {
    pub specs: BTreeMap<String, Spec>,
}

impl SpecBook {
    /// The built-in specs only.
    pub fn builtin() -> Self {
        let mut book = SpecBook::default();
        for (name, text) in BUILTIN {
            let spec = parse_spec(Path::new(name), text).expect("built-in specs parse (tested)");
            book.specs.insert(spec.id.clone(), spec);
        }
        book
    }

    /// Built-ins plus `<archive>/specs/*.toml`.
    pub fn load(archive_root: &Path) -> Result<Self> {
        let mut book = Self::builtin();
        let dir = archive_root.join("specs");
        if let Ok(entries) = std::fs::read_dir(&dir) {
            let mut paths: Vec<_> =
                entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "toml")).collect();
            paths.sort();
            for p in paths {
                let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
                let spec = parse_spec(&p, &text)?;
                book.specs.insert(spec.id.clone(), spec);
            }
        }
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
    fn builtins_parse_and_carry_sources() {
        let book = SpecBook::builtin();
        assert_eq!(book.specs.len(), 7);
        for s in book.specs.values() {
            let m = s.memory.as_ref().expect("every built-in has memory");
            assert!(m.bandwidth_gbps > 1000.0 && m.source.contains("https://"), "{}", s.id);
            assert!(s.compute_source().is_some(), "{}", s.id);
            assert!(s.peak_tflops("bf16").unwrap() > 300.0, "{}", s.id);
        }
        assert_eq!(book.find("NVIDIA H100 80GB HBM3").unwrap().id, "h100-sxm");
        assert_eq!(book.find("mi300x").unwrap().memory.as_ref().unwrap().bandwidth_gbps, 5300.0);
        assert!(book.find("Intel Xeon").is_none());
    }

    #[test]
    fn a_bad_spec_names_file_and_line() {
        let e = parse_spec(Path::new("my.toml"), "id = \"x\"\nname = \"y\"\nvendor = 3\n").unwrap_err().to_string();
        assert!(e.starts_with("my.toml:3:"), "{e}");
    }
}
