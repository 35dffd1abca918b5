//! `benchbook specs`: the hardware specs (rooflines) this archive knows.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::analysis::SpecBook;
use crate::archive::Archive;
use crate::cli::print::{cell, safe_path, table, write_table, Render, Term};
use crate::error::Result;
use crate::vocab::units::format_sig3;

/// The specs, by id.
#[derive(Debug, Serialize)]
pub struct SpecsOutput {
    pub specs: Vec<SpecRow>,
    /// The archive root, for where to add one.
    #[serde(skip)]
    pub archive_root: PathBuf,
}

/// One spec's headline numbers.
#[derive(Debug, Serialize)]
pub struct SpecRow {
    pub id: String,
    pub name: String,
    pub hbm_gbps: Option<f64>,
    pub bf16_tflops: Option<f64>,
    pub link_gbps: Option<f64>,
}

pub fn specs(archive: &Archive) -> Result<SpecsOutput> {
    let book = SpecBook::load(&archive.root)?;
    let specs = book
        .specs
        .values()
        .map(|s| SpecRow {
            id: s.id.clone(),
            name: s.name.clone(),
            hbm_gbps: s.memory.as_ref().map(|m| m.bandwidth_gbps),
            bf16_tflops: s.peak_tflops("bf16"),
            link_gbps: s.link.as_ref().map(|l| l.total_gbps),
        })
        .collect();
    Ok(SpecsOutput { specs, archive_root: archive.root.clone() })
}

impl Render for SpecsOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        let mut tab = table(&["ID", "NAME", "HBM GB/s", "BF16 TF/s", "LINK GB/s"], &[2, 3, 4]);
        let num = |v: Option<f64>| v.map(format_sig3).unwrap_or_else(|| "-".into());
        for s in &self.specs {
            tab.add_row(vec![cell(&s.id), cell(&s.name), num(s.hbm_gbps), num(s.bf16_tflops), num(s.link_gbps)]);
        }
        write_table(&mut *t.out, &tab)?;
        writeln!(
            t.out,
            "\nAdd your own: a TOML file in {}/specs/ (same layout as data/specs/h100-sxm.toml).",
            safe_path(&self.archive_root)
        )
    }
}
