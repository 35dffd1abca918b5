//! `benchbook site OUT/`: the archive as a static site
//! ([`crate::site`]), and what the build did.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::archive::{Archive, ScanFilter};
use crate::cli::print::{safe_path, terminal_safe, Render, Term};
use crate::error::Result;
use crate::site::SiteSummary;

#[derive(Debug, Serialize)]
pub struct SiteOutput {
    pub out: PathBuf,
    #[serde(flatten)]
    pub summary: SiteSummary,
    pub seconds: f64,
}

pub fn site(archive: &Archive, filter: &ScanFilter, out: PathBuf, reports: Option<PathBuf>) -> Result<SiteOutput> {
    let t = std::time::Instant::now();
    let reports = reports.or_else(|| Some(PathBuf::from("reports")).filter(|p| p.is_dir()));
    let summary = crate::site::build(archive, filter, &out, reports.as_deref())?;
    Ok(SiteOutput { out, summary, seconds: t.elapsed().as_secs_f64() })
}

impl Render for SiteOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        let s = &self.summary;
        for (id, why) in &s.left_out {
            writeln!(t.err, "warning: left out {}: {}", terminal_safe(id), terminal_safe(why))?;
        }
        writeln!(
            t.out,
            "{}: {} runs ({} read this time), {} nodes, {} points, {} reports; {} pages written, {} unchanged, in {:.1} s",
            safe_path(&self.out.join("index.html")),
            s.runs,
            s.runs_read,
            s.nodes,
            s.points,
            s.reports,
            s.written,
            s.unchanged,
            self.seconds
        )
    }
}
