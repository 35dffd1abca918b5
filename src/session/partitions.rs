//! `run --partitions N`: N instances of the same suite at once, each pinned
//! to its own disjoint CPU set (as seed 004 runs one instance per GPU
//! partition), gathered into one run whose rows carry their partition in
//! `axes` (`{"partition":0,"partition_cpus":"0"}`).
//!
//! With `--partition-devices 0,1` (or MIG UUIDs) each instance also sees
//! only its own GPU: `CUDA_VISIBLE_DEVICES` and `HIP_VISIBLE_DEVICES` name
//! it (as MIG instances and MI300X CPX partitions are used), and its rows
//! carry it as `partition_device`.
//!
//! `run exec --partitions N` does the same for any command; each copy sees
//! `BENCHBOOK_PARTITION` (0..N), `BENCHBOOK_PARTITIONS` (N) and
//! `BENCHBOOK_PARTITION_CPUS`.
//!
//! Each instance is this same binary, started with the configuration (its
//! partitions cleared) and its CPU affinity set before it runs, writing a
//! run of its own into a scratch archive; its rows are then read back,
//! renumbered and tagged. An instance that fails or is interrupted leaves
//! what it measured; the run says how many instances finished.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::archive::Archive;
use crate::bench::BenchConfig;
use crate::error::{Error, Result};
use crate::vocab::partition::{cpu_list, tagged_variant, with_partition};
use crate::vocab::progress::Progress;
use crate::vocab::rows::{Row, RowSink, RunOutcome, Status};
use crate::vocab::source::{Source, SourceInfo};

/// The CPUs this process may run on (its affinity mask), in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity
    // fills at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return (0..crate::host::usable_cpus()).collect();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// `cpus` cut into `n` disjoint, contiguous sets of near-equal size.
pub fn split_cpus(cpus: &[usize], n: usize) -> Result<Vec<Vec<usize>>> {
    if n == 0 || cpus.len() < n {
        return Err(Error::config(
            "--partitions",
            format!("{n} partitions need at least {n} CPUs, and this process may use {}", cpus.len()),
        ));
    }
    let (base, extra) = (cpus.len() / n, cpus.len() % n);
    let mut out = Vec::with_capacity(n);
    let mut at = 0;
    for k in 0..n {
        let len = base + usize::from(k < extra);
        out.push(cpus[at..at + len].to_vec());
        at += len;
    }
    Ok(out)
}

/// What each instance runs: a sweep, or a command (`run exec`).
enum Job {
    Sweep(Box<BenchConfig>, Box<super::LocalSource>),
    Exec(Box<crate::vocab::facts::ExecSpec>, Box<super::ExecSource>),
}

/// N pinned instances of one configuration, as one run.
pub struct PartitionSource {
    job: Job,
    partitions: Vec<Vec<usize>>,
    /// Each instance's GPU (empty: CPU sets only).
    devices: Vec<String>,
    scratch: PathBuf,
}

fn scratch() -> PathBuf {
    std::env::temp_dir().join(format!("benchbook-partitions-{}", std::process::id()))
}

impl PartitionSource {
    /// Instances of a sweep, one per `cfg.partitions` entry.
    pub fn new(cfg: BenchConfig) -> Self {
        let mut one = cfg.clone();
        let partitions = std::mem::take(&mut one.partitions);
        let devices = std::mem::take(&mut one.partition_devices);
        PartitionSource {
            job: Job::Sweep(Box::new(cfg), Box::new(super::LocalSource::new(one))),
            partitions,
            devices,
            scratch: scratch(),
        }
    }

    /// Instances of a command, one per `spec.partitions` entry.
    pub fn exec(spec: crate::vocab::facts::ExecSpec) -> Self {
        let mut one = spec.clone();
        let partitions = std::mem::take(&mut one.partitions);
        let devices = std::mem::take(&mut one.partition_devices);
        PartitionSource {
            job: Job::Exec(Box::new(spec), Box::new(super::ExecSource::new(one))),
            partitions,
            devices,
            scratch: scratch(),
        }
    }

    /// The job as one instance runs it (its partitions cleared), as JSON.
    fn instance_json(&self) -> Result<Vec<u8>> {
        let text = match &self.job {
            Job::Sweep(cfg, _) => serde_json::to_vec_pretty(&BenchConfig {
                partitions: Vec::new(),
                partition_devices: Vec::new(),
                ..(**cfg).clone()
            }),
            Job::Exec(spec, _) => serde_json::to_vec_pretty(&crate::vocab::facts::ExecSpec {
                partitions: Vec::new(),
                partition_devices: Vec::new(),
                ..(**spec).clone()
            }),
        };
        text.map_err(|e| Error::config("--partitions", e.to_string()))
    }

    /// Start instance `k` on `cpus`; it writes into `scratch/part-k`.
    fn start(&self, k: usize, cpus: &[usize], config: &Path) -> Result<std::process::Child> {
        let exe = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
        let mut cmd = Command::new(exe);
        let archive = self.scratch.join(format!("part-{k}"));
        let stderr = self.scratch.join(format!("part-{k}.stderr"));
        match &self.job {
            Job::Sweep(..) => {
                cmd.args(["-q", "run", "--from-config"]).arg(config).arg("--archive").arg(&archive).arg("--json");
            }
            // The command last, after `--`.
            Job::Exec(spec, _) => {
                cmd.args(["-q", "run", "exec", "--from-spec"])
                    .arg(config)
                    .arg("--archive")
                    .arg(&archive)
                    .arg("--json")
                    .arg("--")
                    .args(&spec.command);
            }
        }
        cmd.env("BENCHBOOK_PARTITION", k.to_string())
            .env("BENCHBOOK_PARTITIONS", self.partitions.len().to_string())
            .env("BENCHBOOK_PARTITION_CPUS", cpu_list(cpus))
            .env_remove(crate::host::placement::FLEET_ENV)
            // Nothing is read while the instances run: a pipe left full
            // would pause one of them. Its stderr goes to a file, said on failure.
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(std::fs::File::create(&stderr).map_err(|e| Error::io(&stderr, e))?));
        if let Some(d) = self.devices.get(k) {
            // The one GPU (or MIG instance, or CPX partition) this instance sees.
            cmd.env("CUDA_VISIBLE_DEVICES", d).env("HIP_VISIBLE_DEVICES", d).env("BENCHBOOK_PARTITION_DEVICE", d);
        }
        let cpus = cpus.to_vec();
        // SAFETY: only async-signal-safe calls between fork and exec: a
        // stack cpu_set_t and sched_setaffinity.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(move || {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for &c in &cpus {
                    libc::CPU_SET(c, &mut set);
                }
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.spawn().map_err(|e| Error::io("a partition's instance", e))
    }
}

impl Source for PartitionSource {
    fn describe(&mut self) -> Result<SourceInfo> {
        let n = self.partitions.len();
        let mut info = match &mut self.job {
            Job::Sweep(cfg, local) => {
                let mut info = local.describe()?;
                info.config = crate::vocab::config::RunConfig::Sweep(cfg.clone());
                info
            }
            Job::Exec(spec, source) => {
                let mut info = source.describe()?;
                if let crate::vocab::config::RunConfig::Exec(e) = &mut info.config {
                    e.exec = (**spec).clone();
                }
                info
            }
        };
        info.default_label = format!("{}-partitions-{n}", info.default_label);
        Ok(info)
    }

    fn produce(&mut self, run_id: &str, sink: &mut dyn RowSink, progress: &dyn Progress) -> Result<RunOutcome> {
        let _ = progress;
        std::fs::create_dir_all(&self.scratch).map_err(|e| Error::io(&self.scratch, e))?;
        let config = self.scratch.join("config.json");
        std::fs::write(&config, self.instance_json()?).map_err(|e| Error::io(&config, e))?;
        // All at once: the point of partitions is what they do side by side.
        let children: Vec<_> =
            self.partitions.iter().enumerate().map(|(k, cpus)| self.start(k, cpus, &config)).collect();
        let mut outcome = RunOutcome::default();
        let mut next_point = 0u32;
        let mut failures = Vec::new();
        for (k, child) in children.into_iter().enumerate() {
            let status = child?.wait().map_err(|e| Error::io("a partition's instance", e))?;
            let stderr = std::fs::read_to_string(self.scratch.join(format!("part-{k}.stderr"))).unwrap_or_default();
            let cpus = &self.partitions[k];
            let archive = Archive::new(self.scratch.join(format!("part-{k}")));
            let Some(run) = archive.runs()?.into_iter().next() else {
                failures.push(format!("partition {k} (CPUs {}) wrote no run: {}", cpu_list(cpus), stderr.trim()));
                continue;
            };
            let rows: Vec<Row> = run.rows()?;
            let mut by_point: BTreeMap<u32, Vec<Row>> = BTreeMap::new();
            for mut r in rows {
                r.run_id = run_id.to_string();
                let device = self.devices.get(k).map(String::as_str);
                r.params.axes = Some(with_partition(r.params.axes.as_deref(), k, cpus, device));
                r.params.variant = Some(tagged_variant(r.params.variant.take(), k, cpus, device));
                by_point.entry(r.point).or_default().push(r);
            }
            for (_, mut rows) in by_point {
                for r in &mut rows {
                    r.point = next_point;
                }
                let status = rows.first().map_or(Status::Skipped, |r| r.status);
                sink.write_point(rows)?;
                outcome.count(status);
                next_point += 1;
            }
            if !status.success() {
                failures.push(format!("partition {k} (CPUs {}) exited with {status}", cpu_list(cpus)));
                outcome.interrupted |= status.code() == Some(130);
            }
        }
        let _ = std::fs::remove_dir_all(&self.scratch);
        if !failures.is_empty() && outcome.points == 0 {
            return Err(Error::config("--partitions", failures.join("; ")));
        }
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpus_split_into_disjoint_near_equal_sets() {
        let s = split_cpus(&[0, 1, 2, 3, 4], 2).unwrap();
        assert_eq!(s, vec![vec![0, 1, 2], vec![3, 4]]);
        let e = split_cpus(&[0, 1], 3).unwrap_err().to_string();
        assert!(e.contains("3 partitions need at least 3 CPUs") && e.contains("--partitions"), "{e}");
    }
}
