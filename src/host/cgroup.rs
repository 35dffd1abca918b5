//! What the cgroups over this process allow: the tightest memory limit
//! and CPU quota on the path from its own cgroup up to each hierarchy's
//! root (v1 and v2), read from `/proc/self/cgroup` and `/sys/fs/cgroup`.

use super::read;

/// A cgroup memory limit over this process: the tightest one on the path
/// from its cgroup up to the hierarchy's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupMemory {
    pub limit_bytes: u64,
    /// What the cgroup already uses (page cache included), when readable.
    pub usage_bytes: Option<u64>,
    /// The file the limit was read from.
    pub file: std::path::PathBuf,
}

impl CgroupMemory {
    /// Room left under the limit.
    pub fn room_bytes(&self) -> u64 {
        self.limit_bytes.saturating_sub(self.usage_bytes.unwrap_or(0))
    }
}

/// The cgroup memory limit over this process (v1 or v2), if any.
pub fn cgroup_memory() -> Option<CgroupMemory> {
    let text = read("/proc/self/cgroup")?;
    cgroup_memory_in(&text, std::path::Path::new("/sys/fs/cgroup"))
}

/// [`cgroup_memory`] from a `/proc/self/cgroup` text and a cgroup mount
/// root, so a stand-in tree can be tested. v2 (`0::/path`) reads
/// `memory.max` and `memory.current`; v1 (`N:memory:/path`, or with other
/// controllers) reads `memory/…/memory.limit_in_bytes` and
/// `memory.usage_in_bytes`, where a value of 2^62 or more means no limit.
/// Where the process's own cgroup folder is not visible (a container
/// without a cgroup namespace), the walk starts at the deepest folder that
/// is.
pub fn cgroup_memory_in(proc_self_cgroup: &str, root: &std::path::Path) -> Option<CgroupMemory> {
    let mut best: Option<CgroupMemory> = None;
    for (v2, dirs) in cgroup_chains(proc_self_cgroup, root, "memory") {
        let (limit_file, usage_file) =
            if v2 { ("memory.max", "memory.current") } else { ("memory.limit_in_bytes", "memory.usage_in_bytes") };
        for dir in dirs {
            let file = dir.join(limit_file);
            let limit = read(&file.to_string_lossy()).and_then(|t| t.trim().parse::<u64>().ok());
            if let Some(limit) = limit.filter(|l| *l < 1 << 62) {
                let usage_bytes =
                    read(&dir.join(usage_file).to_string_lossy()).and_then(|t| t.trim().parse::<u64>().ok());
                let found = CgroupMemory { limit_bytes: limit, usage_bytes, file };
                if best.as_ref().is_none_or(|b| found.room_bytes() < b.room_bytes()) {
                    best = Some(found);
                }
            }
        }
    }
    best
}

/// The tightest cgroup CPU quota over this process, in CPUs (a
/// container's `--cpus 1.5`, a Slurm job's limit), if one is set.
pub fn cgroup_cpu_quota() -> Option<f64> {
    let text = read("/proc/self/cgroup")?;
    cgroup_cpu_quota_in(&text, std::path::Path::new("/sys/fs/cgroup"))
}

/// [`cgroup_cpu_quota`] from a `/proc/self/cgroup` text and a cgroup mount
/// root: v2 reads `cpu.max` (`QUOTA PERIOD`, or `max PERIOD`), v1
/// `cpu.cfs_quota_us` (−1: none) over `cpu.cfs_period_us`.
pub fn cgroup_cpu_quota_in(proc_self_cgroup: &str, root: &std::path::Path) -> Option<f64> {
    let num = |dir: &std::path::Path, f: &str| read(&dir.join(f).to_string_lossy());
    let mut best: Option<f64> = None;
    for (v2, dirs) in cgroup_chains(proc_self_cgroup, root, "cpu") {
        for dir in dirs {
            let cores = if v2 {
                num(&dir, "cpu.max").and_then(|t| {
                    let mut it = t.split_whitespace();
                    let (q, p) = (it.next()?.parse::<f64>().ok()?, it.next()?.parse::<f64>().ok()?);
                    (p > 0.0).then(|| q / p)
                })
            } else {
                let q = num(&dir, "cpu.cfs_quota_us").and_then(|t| t.trim().parse::<f64>().ok());
                let p = num(&dir, "cpu.cfs_period_us").and_then(|t| t.trim().parse::<f64>().ok());
                q.zip(p).filter(|(q, p)| *q > 0.0 && *p > 0.0).map(|(q, p)| q / p)
            };
            if let Some(c) = cores.filter(|c| c.is_finite() && *c > 0.0) {
                best = Some(best.map_or(c, |b: f64| b.min(c)));
            }
        }
    }
    best
}

/// For each hierarchy in a `/proc/self/cgroup` text that carries
/// `controller` (v1, `N:cpu,cpuacct:/path`) or is the unified one (v2,
/// `0::/path`): whether it is v2, and its folders from the process's own
/// up to the mount base. Where the process's own folder is not visible (a
/// container without a cgroup namespace), the walk starts at the deepest
/// folder that is.
fn cgroup_chains(
    proc_self_cgroup: &str,
    root: &std::path::Path,
    controller: &str,
) -> Vec<(bool, Vec<std::path::PathBuf>)> {
    let mut out = Vec::new();
    for line in proc_self_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let (v2, base) = if id == "0" && controllers.is_empty() {
            (true, if root.join("cgroup.controllers").exists() { root.to_path_buf() } else { root.join("unified") })
        } else if controllers.split(',').any(|c| c == controller) {
            (false, root.join(controllers))
        } else {
            continue;
        };
        let mut dir = base.join(path.trim_start_matches('/'));
        while !dir.exists() && dir.starts_with(&base) && dir != base {
            dir.pop();
        }
        let mut dirs = Vec::new();
        loop {
            dirs.push(dir.clone());
            if dir == base || !dir.pop() || !dir.starts_with(&base) {
                break;
            }
        }
        out.push((v2, dirs));
    }
    out
}
