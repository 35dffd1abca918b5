//! One lazy scan over many runs ([`Archive::scan`]): the runs a filter
//! selects from the catalog ([`super::catalog`]), their `results.parquet`
//! files read as one polars frame, each file's hash checked once and
//! remembered, damaged runs named and left out.

use polars::prelude::*;

use super::catalog::{Catalog, CatalogEntry};
use super::store::Archive;
use crate::error::{Error, Result};

/// Runs left out of a read: (run id, why).
pub type LeftOut = Vec<(String, String)>;

/// Which runs [`Archive::scan`] reads (every field optional; all must hold).
#[derive(Debug, Clone, Default)]
pub struct ScanFilter {
    pub node: Option<String>,
    pub fleet: Option<String>,
    pub label: Option<String>,
    /// Runs started at or after this RFC 3339 time (string order).
    pub since: Option<String>,
    /// Only these runs (a static site's update reads only what changed).
    pub runs: Option<std::collections::BTreeSet<String>>,
}

impl ScanFilter {
    /// Whether run `e` passes.
    pub fn keeps(&self, e: &CatalogEntry) -> bool {
        let eq = |want: &Option<String>, have: &Option<String>| want.as_ref().is_none_or(|w| have.as_ref() == Some(w));
        eq(&self.node, &e.node)
            && eq(&self.fleet, &e.fleet)
            && eq(&self.label, &e.label)
            && self.since.as_ref().is_none_or(|s| e.started_at.as_ref().is_some_and(|t| t >= s))
            && self.runs.as_ref().is_none_or(|r| r.contains(&e.run_id))
    }
}

/// The rows of many runs as one lazy frame, with each run's facts.
pub struct Scan {
    /// Every row of the selected runs, with the catalog's `label`, `node`,
    /// `fleet`, `job_id`, `started_at` and `git_commit` joined on `run_id`.
    pub rows: LazyFrame,
    /// The selected runs that were read, one row each (the catalog's columns).
    pub runs: DataFrame,
    /// Selected runs left out, with why (damaged, changed since written).
    pub damaged: LeftOut,
}

impl Archive {
    /// The catalog entries of the runs `filter` selects whose results file
    /// matches its manifest's hash (checked once, and remembered in the
    /// catalog), and the selected runs left out, with why.
    pub fn verified(&self, filter: &ScanFilter) -> Result<(Vec<CatalogEntry>, LeftOut)> {
        let mut catalog = Catalog::open(self)?;
        let ids: Vec<String> = catalog.entries.iter().filter(|e| filter.keeps(e)).map(|e| e.run_id.clone()).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let damaged = catalog.verify(self, &refs);
        catalog.save(self)?;
        let good =
            catalog.entries.into_iter().filter(|e| filter.keeps(e) && e.damaged.is_none() && e.verified).collect();
        Ok((good, damaged))
    }

    /// One lazy scan over every run `filter` selects: their
    /// `results.parquet` files read as one frame (a query decodes only the
    /// columns and row groups it needs), each file's hash checked once and
    /// remembered in the catalog. Damaged runs are listed and left out;
    /// they never stop the scan.
    pub fn scan(&self, filter: &ScanFilter) -> Result<Scan> {
        let (good, damaged) = self.verified(filter)?;
        let mut scan = self.scan_verified(&good)?;
        scan.damaged = damaged;
        Ok(scan)
    }

    /// [`Archive::scan`] of runs already verified ([`Archive::verified`]):
    /// a caller that reads an archive a slice of runs at a time verifies
    /// once, not once per slice.
    pub fn scan_verified(&self, good: &[CatalogEntry]) -> Result<Scan> {
        let damaged = LeftOut::new();
        let good: Vec<&CatalogEntry> = good.iter().collect();
        let current = super::schema::SCHEMA_VERSION;
        let path = |e: &CatalogEntry| self.runs_dir().join(&e.run_id).join(super::RESULTS_FILE);
        let paths: Vec<std::path::PathBuf> =
            good.iter().filter(|e| e.schema_version == Some(current)).map(|e| path(e)).collect();
        let mut frames = Vec::new();
        if !paths.is_empty() {
            let args = ScanArgsParquet { hive_options: HiveOptions::new_disabled(), ..ScanArgsParquet::default() };
            let paths = paths.into_iter().map(PlRefPath::try_from_pathbuf).collect::<PolarsResult<Vec<_>>>();
            let sources = ScanSources::Paths(paths.map_err(Error::analysis)?.into_iter().collect());
            frames.push(LazyFrame::scan_parquet_sources(sources, args).map_err(Error::analysis)?);
        }
        // Older schema versions are read whole and migrated (they predate
        // archives of this size).
        for e in good.iter().filter(|e| e.schema_version != Some(current)) {
            frames.push(super::schema::read_parquet(&path(e))?.lazy());
        }
        let rows = match frames.len() {
            0 => crate::vocab::columns::to_dataframe(&[])?.lazy(),
            1 => frames.pop().unwrap_or_default(),
            _ => concat(frames, UnionArgs::default()).map_err(Error::analysis)?,
        };
        let runs = Catalog::of(good.into_iter().cloned().collect()).dataframe()?;
        let facts = runs.clone().lazy().select([
            col("run_id"),
            col("label"),
            col("node"),
            col("fleet"),
            col("job_id"),
            col("started_at"),
            col("git_commit"),
        ]);
        let rows = rows.join(facts, [col("run_id")], [col("run_id")], JoinArgs::new(JoinType::Left));
        Ok(Scan { rows, runs, damaged })
    }
}
