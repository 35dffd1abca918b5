//! Facts about the machine we run on, read from the OS (Linux `/proc` and
//! `/etc`; elsewhere the fields say `unknown`). Benchmarks use them to size
//! buffers; the manifest records them.

mod cgroup;
pub mod container;
pub mod placement;
pub mod telemetry;

pub use cgroup::{cgroup_cpu_quota, cgroup_cpu_quota_in, cgroup_memory, cgroup_memory_in, CgroupMemory};
pub use placement::Placement;

use serde::{Deserialize, Serialize};

/// The host part of a manifest.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub arch: String,
    pub cpu_model: String,
    /// Logical CPUs this process may use: its affinity mask, which a
    /// launcher's `--bind-to`, a cgroup cpuset or `taskset` narrows.
    pub logical_cpus: usize,
    /// Logical CPUs the machine has online (manifest v3 on; absent before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online_cpus: Option<usize>,
    pub memory_bytes: Option<u64>,
    /// The tightest cgroup (container, Slurm job) memory limit over this
    /// process, when one is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    /// The tightest cgroup CPU quota over this process, in CPUs, when one
    /// is set (manifest v5 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<f64>,
    /// Whether the run was inside a container (manifest v5 on; absent, so
    /// not recorded, before), and which one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_container: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<container::Container>,
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Swap configured on the machine, in bytes (`/proc/meminfo`'s SwapTotal).
pub fn swap_bytes() -> Option<u64> {
    meminfo_field("SwapTotal:")
}

fn meminfo_field(name: &str) -> Option<u64> {
    let text = read("/proc/meminfo")?;
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Memory this process can still allocate: what the kernel says is
/// available, or less where a cgroup limit leaves less room, in which case
/// that cgroup comes with it (so a message can name the limit).
pub fn available_memory() -> Option<(u64, Option<CgroupMemory>)> {
    let machine = meminfo_field("MemAvailable:");
    match (machine, cgroup_memory()) {
        (Some(m), Some(c)) if c.room_bytes() < m => Some((c.room_bytes(), Some(c))),
        (Some(m), _) => Some((m, None)),
        (None, c) => c.map(|c| (c.room_bytes(), Some(c))),
    }
}

/// Logical CPUs this process may use: its affinity mask (an MPI rank bound
/// to one core sees 1). Size thread pools by this.
pub fn usable_cpus() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Logical CPUs the machine has online, which is what a reader means by
/// "the host's CPUs"; never fewer than [`usable_cpus`].
pub fn online_cpus() -> usize {
    // SAFETY: sysconf reads a system constant and touches no memory of ours.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(0).max(usable_cpus())
}

/// The CPU's model name, e.g. `AMD EPYC 7763 64-Core Processor`.
pub fn cpu_model() -> String {
    read("/proc/cpuinfo")
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

pub fn hostname() -> String {
    read("/proc/sys/kernel/hostname")
        .or_else(|| read("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

impl HostInfo {
    /// `AMD EPYC 7763 (128 logical CPUs)`: the machine's count, with
    /// `, this process bound to 1` where a launcher or cpuset bound the
    /// process to fewer. A manifest from before v3 knows only the bound
    /// count and says so.
    pub fn cpu_summary(&self) -> String {
        let model = &self.cpu_model;
        let cpus = |n: usize| if n == 1 { "1 logical CPU".to_string() } else { format!("{n} logical CPUs") };
        match self.online_cpus {
            Some(n) if n > self.logical_cpus => {
                format!("{model} ({}, this process bound to {})", cpus(n), self.logical_cpus)
            }
            Some(n) => format!("{model} ({})", cpus(n)),
            None => format!(
                "{model} ({} usable by the process that recorded it, rank 0 under MPI; a manifest before v3 does not record the machine's count)",
                cpus(self.logical_cpus)
            ),
        }
    }

    pub fn detect() -> Self {
        let os = read("/etc/os-release")
            .and_then(|t| {
                t.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=")).map(|v| v.trim_matches('"').to_string())
            })
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        let container = container::detect();
        HostInfo {
            hostname: hostname(),
            os,
            kernel: read("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|| "unknown".into()),
            arch: std::env::consts::ARCH.into(),
            cpu_model: cpu_model(),
            logical_cpus: usable_cpus(),
            online_cpus: Some(online_cpus()),
            memory_bytes: meminfo_field("MemTotal:"),
            memory_limit_bytes: cgroup_memory().map(|c| c.limit_bytes),
            cpu_quota: cgroup_cpu_quota(),
            in_container: Some(container.is_some()),
            container,
        }
    }
}

/// Versions of the tools a workload usually depends on, where found: the
/// Python that runs it and its ML packages (read from package metadata,
/// without importing them), the NVIDIA driver, nvcc, ROCm and MPI.
pub fn tool_versions(program: &str) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let name = std::path::Path::new(program).file_name().and_then(|n| n.to_str()).unwrap_or("");
    // The interpreter that runs the command (`python3.11`, a venv's), else the default one.
    let python = if name.starts_with("python") { program } else { "python3" };
    if let Some(v) = output(python, &["--version"]) {
        out.insert("python".into(), v.trim_start_matches("Python ").to_string());
        let script = "import importlib.metadata as m\nfor p in ['torch','vllm','transformers','numpy','jax','deepspeed','megatron-core','triton']:\n  try: print(p, m.version(p))\n  except Exception: pass";
        if let Some(list) = output(python, &["-c", script]) {
            for l in list.lines() {
                if let Some((k, v)) = l.split_once(' ') {
                    out.insert(k.to_string(), v.to_string());
                }
            }
        }
    }
    if let Some(v) = output("nvidia-smi", &["--query-gpu=driver_version", "--format=csv,noheader"]) {
        out.insert("nvidia_driver".into(), v.lines().next().unwrap_or("").to_string());
    }
    if let Some(v) = output("nvcc", &["--version"]) {
        out.insert("nvcc".into(), v.lines().last().unwrap_or("").to_string());
    }
    if let Ok(v) = std::fs::read_to_string("/opt/rocm/.info/version") {
        out.insert("rocm".into(), v.trim().to_string());
    }
    if let Some(v) = output("mpirun", &["--version"]) {
        out.insert("mpirun".into(), v.lines().next().unwrap_or("").to_string());
    }
    out
}

/// A program's stdout when it runs and succeeds within 10 s.
fn output(program: &str, args: &[&str]) -> Option<String> {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let t = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) if s.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if t.elapsed() > std::time::Duration::from_secs(10) => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
    let mut s = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut()?, &mut s).ok()?;
    let s = s.trim().to_string();
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &std::path::Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    #[test]
    fn the_host_counts_the_machines_cpus_and_notes_a_binding() {
        let h = HostInfo::detect();
        assert_eq!(h.logical_cpus, usable_cpus());
        assert!(h.online_cpus.unwrap() >= h.logical_cpus);
        let mut bound = h.clone();
        (bound.online_cpus, bound.logical_cpus) = (Some(128), 1);
        assert!(bound.cpu_summary().ends_with("(128 logical CPUs, this process bound to 1)"));
        bound.online_cpus = None;
        assert!(bound
            .cpu_summary()
            .contains("(1 logical CPU usable by the process that recorded it, rank 0 under MPI; a manifest before v3 does not record"));
        // Under taskset the count stays the machine's (skipped where taskset is absent).
        let me = std::env::current_exe().unwrap();
        if let Ok(out) = std::process::Command::new("taskset")
            .args(["-c", "0"])
            .arg(&me)
            .args(["--exact", "host::tests::print_cpus", "--nocapture", "--include-ignored"])
            .output()
        {
            let text = String::from_utf8_lossy(&out.stdout);
            if online_cpus() > 1 {
                assert!(text.contains(&format!("cpus Some({}) bound Some(1)", online_cpus())), "{text}");
            }
        }
    }

    #[test]
    #[ignore = "run by the_host_counts_the_machines_cpus_and_notes_a_binding under taskset"]
    fn print_cpus() {
        let h = HostInfo::detect();
        println!("cpus {:?} bound Some({})", h.online_cpus, h.logical_cpus);
    }

    #[test]
    fn a_cgroup_v2_limit_is_read_from_a_stand_in_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(root, "cgroup.controllers", "cpu memory");
        // A 1 GiB job limit under a looser 4 GiB parent, 256 MiB used.
        write(root, "slurm/memory.max", "4294967296\n");
        write(root, "slurm/memory.current", "0\n");
        write(root, "slurm/job_7/memory.max", "1073741824\n");
        write(root, "slurm/job_7/memory.current", "268435456\n");
        write(root, "slurm/job_7/step_0/memory.max", "max\n");
        let c = cgroup_memory_in("0::/slurm/job_7/step_0\n", root).unwrap();
        assert_eq!(c.limit_bytes, 1 << 30);
        assert_eq!(c.room_bytes(), (1 << 30) - (256 << 20));
        assert!(c.file.ends_with("slurm/job_7/memory.max"));
        // No limit anywhere: none.
        write(root, "slurm/job_7/memory.max", "max\n");
        write(root, "slurm/memory.max", "max\n");
        assert_eq!(cgroup_memory_in("0::/slurm/job_7/step_0\n", root), None);
    }

    #[test]
    fn a_cgroup_v1_limit_is_read_and_the_unlimited_value_ignored() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        // The layout of this CI machine: v1 memory controller, plus an
        // empty unified hierarchy.
        write(root, "memory/memory.limit_in_bytes", "9223372036854771712\n");
        write(root, "memory/docker/abc/memory.limit_in_bytes", "2147483648\n");
        write(root, "memory/docker/abc/memory.usage_in_bytes", "1073741824\n");
        write(root, "unified/cgroup.procs", "");
        let text = "4:memory:/docker/abc\n1:cpu,cpuacct:/docker/abc\n0::/\n";
        let c = cgroup_memory_in(text, root).unwrap();
        assert_eq!((c.limit_bytes, c.room_bytes()), (2 << 30, 1 << 30));
        // Seen from inside the container, its own folder is not mounted:
        // the walk starts at the deepest folder that exists.
        write(root, "memory/memory.limit_in_bytes", "536870912\n");
        let c = cgroup_memory_in("4:memory:/docker/gone\n", root).unwrap();
        assert_eq!(c.limit_bytes, 512 << 20);
        // Garbage lines are skipped, never a panic.
        assert_eq!(cgroup_memory_in("nonsense\n::\n", root), None);
    }

    #[test]
    fn a_cpu_quota_is_read_in_cpus_from_v1_and_v2_and_none_is_none() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        // v1, as `podman run --cpus 1` shows it: the job's folder at 1.5, the
        // container's at 1: the tightest wins; -1 is no quota.
        write(root, "cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
        write(root, "cpu,cpuacct/cpu.cfs_period_us", "100000\n");
        write(root, "cpu,cpuacct/job/cpu.cfs_quota_us", "150000\n");
        write(root, "cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
        write(root, "cpu,cpuacct/job/ctr/cpu.cfs_quota_us", "100000\n");
        write(root, "cpu,cpuacct/job/ctr/cpu.cfs_period_us", "100000\n");
        assert_eq!(cgroup_cpu_quota_in("3:cpu,cpuacct:/job/ctr\n", root), Some(1.0));
        assert_eq!(cgroup_cpu_quota_in("3:cpu,cpuacct:/\n", root), None);
        // v2: `max` is no quota, `50000 100000` half a CPU.
        let v2 = tempfile::tempdir().unwrap();
        write(v2.path(), "cgroup.controllers", "cpu memory\n");
        write(v2.path(), "cpu.max", "max 100000\n");
        write(v2.path(), "a/cpu.max", "50000 100000\n");
        assert_eq!(cgroup_cpu_quota_in("0::/a\n", v2.path()), Some(0.5));
        assert_eq!(cgroup_cpu_quota_in("0::/\n", v2.path()), None);
    }
}
