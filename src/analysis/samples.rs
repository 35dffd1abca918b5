//! Each point's samples, gathered from rows a slice at a time.
//!
//! A report of 10^6 rows needs, per point, only its seconds per operation
//! sorted and the round of each: 12 bytes a sample. Grouping the whole
//! frame in one polars query first decodes every column it names for every
//! row, then copies them through the filter and the group-by: about 100 MB
//! at 10^6 rows, for 12 MB of result. Here polars decodes [`CHUNK_ROWS`]
//! rows at a time on each CPU (the slice is pushed down into the Parquet
//! reader, which decodes only the pages it covers), each slice's samples
//! are added to their point, and each point's samples are sorted on every
//! CPU. The result is what [`super::summary::samples_lazy`]
//! computes, which a test checks on random rows, chunk edges included.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use polars::prelude::*;

use crate::archive::schema::columns::{f64s, strings, u64s};
use crate::error::{Error, Result};

/// Rows decoded at once: a row group of the files benchbook writes.
pub const CHUNK_ROWS: usize = crate::archive::schema::ROW_GROUP_ROWS;
/// The most slices a frame is read in. Each slice is a query of its own,
/// and over a scan of 10^4 files each paid about a second to find its rows
/// (77 slices of 10^7 rows took 70 s where one query took 20 s).
pub const MAX_SLICES: usize = 8;

/// One point's samples: seconds per operation, sorted (ties kept in row
/// order), the round of each in the same order, operations in all, and how
/// many ranks reported (a sample's time is its slowest rank's).
#[derive(Debug, Clone, PartialEq)]
pub struct PointSamples {
    pub run_id: String,
    pub point: u32,
    pub sorted_seconds: Vec<f64>,
    pub rounds: Vec<u32>,
    pub iterations: u64,
    pub ranks_reporting: u32,
}

/// One sample of a point as rows add up to it: the slowest rank's seconds,
/// the first row's operations and round, the ranks seen.
#[derive(Default)]
struct Sample {
    seconds: Option<f64>,
    iterations: Option<u64>,
    round: Option<u32>,
    ranks: BTreeSet<u32>,
}

/// A point's samples so far: in row order, or by sample number when ranks
/// are collapsed.
#[derive(Default)]
struct Gathered {
    rows: Vec<(f64, u32)>,
    iterations: u64,
    by_sample: BTreeMap<u32, Sample>,
}

/// Each point's samples of the measured timed rows of `rows` (any number
/// of runs), sorted by run and point. A sample's time is its slowest
/// rank's, as nccl-tests and OSU report; runs with no rank above 0 skip
/// that collapse.
pub fn point_samples(rows: &LazyFrame) -> Result<Vec<PointSamples>> {
    point_samples_in(rows, 0)
}

/// [`point_samples`], decoding `chunk_rows` rows at a time (0: at least
/// [`CHUNK_ROWS`], in at most [`MAX_SLICES`] slices).
fn point_samples_in(rows: &LazyFrame, chunk_rows: usize) -> Result<Vec<PointSamples>> {
    let total = rows.clone().select([len()]).collect().map_err(Error::analysis)?;
    let total = u64s(&total, "len")?.first().copied().flatten().unwrap_or(0) as usize;
    let chunk_rows = match chunk_rows {
        0 => CHUNK_ROWS.max(total.div_ceil(MAX_SLICES)),
        n => n,
    };
    let starts: Vec<usize> = (0..total).step_by(chunk_rows.max(1)).collect();
    let slice = |at: usize| super::summary::timed(rows.clone().slice(at as i64, chunk_rows as IdxSize));
    // The slices on every CPU (each CPU a run of consecutive slices),
    // then their points joined in slice order, which keeps each point's
    // rows in row order. The slice's columns are decoded and each row is
    // added to its point in Rust: rows of a point come in runs, so most
    // rows need no lookup. (A polars group_by of the same slice row-encodes
    // every key and builds a list per point: slower, and one CPU.)
    let per_slice = super::on_every_cpu(&starts, |&at| -> Result<Option<Points>> {
        let spo = (col("seconds") / col("iterations").cast(DataType::Float64)).alias("spo");
        let chunk = slice(at)
            .select([
                col("run_id").cast(DataType::String),
                col("point").cast(DataType::UInt32),
                col("round").fill_null(lit(0u32)).cast(DataType::UInt32),
                col("rank").cast(DataType::UInt32),
                col("iterations").cast(DataType::UInt64),
                spo.cast(DataType::Float64),
            ])
            .collect()
            .map_err(Error::analysis)?;
        let mut points = Points::default();
        Ok(points.add_rows(&chunk)?.then_some(points))
    });
    let mut points = Points::default();
    let mut ranked = false;
    for part in per_slice {
        match part? {
            Some(part) => points.join(part),
            None => ranked = true,
        }
    }
    if ranked {
        points = Points::default();
        for &at in &starts {
            let chunk = slice(at)
                .select([
                    col("run_id"),
                    col("point"),
                    col("sample"),
                    col("round"),
                    col("rank"),
                    col("seconds"),
                    col("iterations"),
                ])
                .collect()
                .map_err(Error::analysis)?;
            points.add_ranked(&chunk)?;
        }
    }
    // Each point's sort, on every CPU.
    let mut out: Vec<PointSamples> =
        super::on_every_cpu_owned(points.gathered, |(run_id, point, g)| finish(run_id, point, g));
    out.sort_by(|a, b| (&a.run_id, a.point).cmp(&(&b.run_id, b.point)));
    Ok(out)
}

/// The points seen so far, in order of first sight. Rows of a point come
/// in runs (a point's samples are measured one after another), so the
/// last point's place is kept and most rows need no lookup.
#[derive(Default)]
struct Points {
    at: HashMap<(String, u32), usize>,
    gathered: Vec<(String, u32, Gathered)>,
    last: Option<usize>,
}

impl Points {
    fn place(&mut self, run: &str, point: u32) -> usize {
        if let Some(i) = self.last {
            let (r, p, _) = &self.gathered[i];
            if *p == point && r == run {
                return i;
            }
        }
        let i = match self.at.get(&(run.to_string(), point)) {
            Some(&i) => i,
            None => {
                self.gathered.push((run.to_string(), point, Gathered::default()));
                self.at.insert((run.to_string(), point), self.gathered.len() - 1);
                self.gathered.len() - 1
            }
        };
        self.last = Some(i);
        i
    }

    /// Add the points of the rows that follow this one's.
    fn join(&mut self, later: Points) {
        for (run, point, g) in later.gathered {
            let i = self.place(&run, point);
            let mine = &mut self.gathered[i].2;
            mine.iterations += g.iterations;
            if mine.rows.is_empty() {
                mine.rows = g.rows;
            } else {
                mine.rows.extend(g.rows);
            }
        }
    }

    /// Add one slice's rows (run, point, round, rank, operations and
    /// seconds per operation) to their points: each point's seconds and
    /// rounds in row order, operations summed. False, adding nothing, when
    /// a rank above 0 reported: those rows need [`Self::add_ranked`].
    fn add_rows(&mut self, chunk: &DataFrame) -> Result<bool> {
        let column = |name: &str| chunk.column(name).map_err(Error::analysis);
        let numbers = |name: &str| column(name)?.u32().map_err(Error::analysis);
        if numbers("rank")?.max().unwrap_or(0) > 0 {
            return Ok(false);
        }
        let run = column("run_id")?.str().map_err(Error::analysis)?;
        // Plain slices, so that the loop below indexes them rather than
        // stepping five chunked iterators (a missing number reads as 0, a
        // missing seconds-per-operation as NaN and is skipped).
        let (point, round) = (plain(numbers("point")?, 0), plain(numbers("round")?, 0));
        let iterations = plain(column("iterations")?.u64().map_err(Error::analysis)?, 0);
        let spo = column("spo")?.f64().map_err(Error::analysis)?;
        let seconds = plain(spo, f64::NAN);
        let missing = spo.null_count() > 0;
        for (j, run) in run.iter().enumerate() {
            let i = self.place(run.unwrap_or_default(), point[j]);
            let g = &mut self.gathered[i].2;
            g.iterations += iterations[j];
            if !missing || spo.get(j).is_some() {
                g.rows.push((seconds[j], round[j]));
            }
        }
        Ok(true)
    }

    /// Add one slice's rows to their points, sample by sample: each
    /// sample's slowest rank.
    fn add_ranked(&mut self, chunk: &DataFrame) -> Result<()> {
        let (run, point, sample) = (strings(chunk, "run_id")?, u64s(chunk, "point")?, u64s(chunk, "sample")?);
        let (round, rank, iterations) = (u64s(chunk, "round")?, u64s(chunk, "rank")?, u64s(chunk, "iterations")?);
        let seconds = f64s(chunk, "seconds")?;
        for j in 0..chunk.height() {
            let i = self.place(run[j].as_deref().unwrap_or_default(), point[j].unwrap_or(0) as u32);
            let x = self.gathered[i].2.by_sample.entry(sample[j].unwrap_or(0) as u32).or_default();
            if let Some(s) = seconds[j] {
                x.seconds = Some(x.seconds.map_or(s, |m: f64| m.max(s)));
            }
            x.iterations = x.iterations.or(iterations[j]);
            x.round = x.round.or(round[j].map(|r| r as u32));
            x.ranks.extend(rank[j].map(|r| r as u32));
        }
        Ok(())
    }
}

/// A column's values as one slice: borrowed where it is one chunk with
/// no nulls (a slice of a Parquet file usually is), else copied with
/// `missing` for a null.
fn plain<T: PolarsNumericType>(ca: &ChunkedArray<T>, missing: T::Native) -> std::borrow::Cow<'_, [T::Native]> {
    match ca.cont_slice() {
        Ok(values) => std::borrow::Cow::Borrowed(values),
        Err(_) => std::borrow::Cow::Owned(ca.iter().map(|v| v.unwrap_or(missing)).collect()),
    }
}

fn finish(run_id: String, point: u32, g: Gathered) -> PointSamples {
    let (sorted_seconds, rounds) = if g.by_sample.is_empty() {
        sort_by_seconds(&g.rows)
    } else {
        let rows: Vec<(f64, u32)> = g
            .by_sample
            .values()
            .filter_map(|s| Some((s.seconds? / s.iterations? as f64, s.round.unwrap_or(0))))
            .collect();
        sort_by_seconds(&rows)
    };
    let (iterations, ranks_reporting) = if g.by_sample.is_empty() {
        (g.iterations, 1)
    } else {
        let ranks = g.by_sample.values().map(|s| s.ranks.len() as u32).max().unwrap_or(0);
        (g.by_sample.values().filter_map(|s| s.iterations).sum(), ranks)
    };
    PointSamples { run_id, point, sorted_seconds, rounds, iterations, ranks_reporting }
}

/// Samples sorted by seconds (`f64::total_cmp`), ties in row order, and
/// split. Each sample becomes one integer key (the seconds' bits in total
/// order, then the row's place, then its round), and integers sort
/// unstably with no comparator: 1.3× as fast as a stable sort of the
/// pairs here (10^6 samples in 1,000 points). The place keeps every key
/// distinct, so the order is the stable sort's.
fn sort_by_seconds(rows: &[(f64, u32)]) -> (Vec<f64>, Vec<u32>) {
    thread_local! {
        /// One key buffer a thread, reused point after point.
        static KEYS: std::cell::RefCell<Vec<u128>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    KEYS.with_borrow_mut(|keys| {
        keys.clear();
        keys.extend(rows.iter().enumerate().map(|(i, &(s, round))| {
            let bits = s.to_bits();
            // Negative values sort with every bit flipped, others with the
            // sign bit set: the order of `total_cmp`.
            let ordered = if bits >> 63 == 1 { !bits } else { bits | (1 << 63) };
            (u128::from(ordered) << 64) | ((i as u128) << 32) | u128::from(round)
        }));
        keys.sort_unstable();
        keys.iter()
            .map(|&k| {
                let ordered = (k >> 64) as u64;
                let bits = if ordered >> 63 == 1 { ordered & !(1 << 63) } else { !ordered };
                (f64::from_bits(bits), k as u32)
            })
            .unzip()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::rows::{Row, Status};
    use rand::RngExt;

    /// The whole-frame polars query's answer, as [`PointSamples`].
    fn reference(rows: &LazyFrame) -> Vec<PointSamples> {
        let collapse = crate::analysis::summary::has_ranks(rows).unwrap();
        let df = crate::analysis::summary::samples_lazy(rows.clone(), collapse).collect().unwrap();
        let (run, point, iters) =
            (strings(&df, "run_id").unwrap(), u64s(&df, "point").unwrap(), u64s(&df, "iterations").unwrap());
        let ranks = u64s(&df, "ranks_reporting").unwrap();
        let lists = |name: &str| df.column(name).unwrap().list().unwrap().clone();
        let (sorted, rounds) = (lists("sorted_seconds"), lists("rounds"));
        sorted
            .series_iter()
            .zip(rounds.series_iter())
            .enumerate()
            .map(|(j, (s, r))| PointSamples {
                run_id: run[j].clone().unwrap(),
                point: point[j].unwrap() as u32,
                sorted_seconds: s.unwrap().f64().unwrap().into_no_null_iter().collect(),
                rounds: r.unwrap().u32().unwrap().into_no_null_iter().collect(),
                iterations: iters[j].unwrap(),
                ranks_reporting: ranks[j].unwrap() as u32,
            })
            .collect()
    }

    /// Runs of points measured in rounds (each point's samples in turn),
    /// with failed and named-metric rows among them, and with `ranks`
    /// ranks reporting each sample.
    fn rows(seed: u64, ranks: u32) -> Vec<Row> {
        let mut rng = crate::vocab::stats::seeded_rng(seed);
        let mut out = Vec::new();
        for run in ["run-a", "run-b"] {
            for round in 0..3u32 {
                for point in 0..4u32 {
                    for sample in 0..rng.random_range(1..6u32) {
                        for rank in 0..ranks {
                            let mut r = Row::blank();
                            r.run_id = run.into();
                            r.params.bench = "memcpy".into();
                            (r.point, r.round, r.rank) = (point, Some(round), rank);
                            r.sample = Some(round * 10 + sample);
                            r.iterations = Some(rng.random_range(1..1000));
                            r.seconds = Some(rng.random_range(1e-6..1.0));
                            r.status = match rng.random_range(0..10) {
                                0 => Status::Failed,
                                _ => Status::Measured,
                            };
                            if rng.random_range(0..20) == 0 {
                                r.params.metric = Some("tokens_per_s".into());
                            }
                            out.push(r);
                        }
                    }
                }
            }
        }
        out
    }

    /// Slice by slice, edges anywhere, the answer is the whole frame's.
    #[test]
    fn slices_add_up_to_the_whole_frame() {
        for seed in 0..6 {
            for ranks in [1, 3] {
                let df = crate::vocab::columns::to_dataframe(&rows(seed, ranks)).unwrap();
                let lf = df.lazy();
                let want = reference(&lf);
                assert!(!want.is_empty());
                for chunk in [1, 7, 50, 1 << 20] {
                    let got = point_samples_in(&lf, chunk).unwrap();
                    assert_eq!(got, want, "seed {seed}, {ranks} ranks, slices of {chunk}");
                }
            }
        }
    }

    /// The integer-key sort is `total_cmp`'s stable sort: ties (many
    /// here), both zeros, negatives, infinities and NaN included.
    #[test]
    fn integer_key_sort_is_the_stable_sort() {
        let mut rng = crate::vocab::stats::seeded_rng(7);
        let pool =
            [0.0, -0.0, 1.5e-6, 1.5e-6, 2.0, -3.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::MIN_POSITIVE];
        for n in [0, 1, 2, 17, 500] {
            let rows: Vec<(f64, u32)> = (0..n)
                .map(|i| {
                    let s =
                        if rng.random_range(0..3) == 0 { rng.random_range(-1.0..1.0) } else { pool[i % pool.len()] };
                    (s, rng.random_range(0..5))
                })
                .collect();
            let mut want = rows.clone();
            want.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (seconds, rounds) = sort_by_seconds(&rows);
            let got: Vec<(u64, u32)> = seconds.iter().map(|s| s.to_bits()).zip(rounds).collect();
            let want: Vec<(u64, u32)> = want.iter().map(|(s, r)| (s.to_bits(), *r)).collect();
            assert_eq!(got, want, "{n} samples");
        }
    }
}
