//! The CPU's sensors, as the OS offers them: the clock of each CPU this
//! process may use (cpufreq's `scaling_cur_freq` where the kernel has
//! cpufreq, else `/proc/cpuinfo`'s `cpu MHz`, which on a VM is often a
//! constant), and package energy from RAPL under `/sys/class/powercap`
//! when it is readable. What is missing is said once, in the manifest.

use std::path::{Path, PathBuf};

use crate::vocab::telemetry::{Reading, Sensor};

/// The CPU sensor of this process's CPUs.
pub struct CpuSensor {
    cpus: Vec<usize>,
    /// cpufreq's current-frequency files, when the kernel has cpufreq.
    freq: Vec<PathBuf>,
    /// RAPL package domains: (energy_uj file, its wrap-around range, last
    /// raw value, joules so far).
    rapl: Vec<(PathBuf, f64, Option<f64>, f64)>,
    lacks: Vec<String>,
}

/// The CPUs this process may run on (its affinity mask).
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the set we own; CPU_ISSET reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect();
            if !cpus.is_empty() {
                return cpus;
            }
        }
    }
    (0..super::usable_cpus()).collect()
}

impl CpuSensor {
    /// The sensor of `cpus`, looking under `root` (`/` on a real system).
    pub fn at(root: &Path, cpus: Vec<usize>) -> CpuSensor {
        let sys = root.join("sys");
        let freq: Vec<PathBuf> = cpus
            .iter()
            .map(|c| sys.join(format!("devices/system/cpu/cpu{c}/cpufreq/scaling_cur_freq")))
            .filter(|p| p.exists())
            .collect();
        let mut lacks = Vec::new();
        if freq.is_empty() {
            lacks.push(
                "no cpufreq on this system: the CPU clock is /proc/cpuinfo's `cpu MHz`, which a VM often reports as a \
                 fixed nominal figure"
                    .to_string(),
            );
        }
        let powercap = sys.join("class/powercap");
        let mut rapl = Vec::new();
        match std::fs::read_dir(&powercap) {
            Err(_) => {
                lacks.push(format!("no energy readings: {} is absent (no RAPL on this system)", powercap.display()))
            }
            Ok(dir) => {
                let mut domains: Vec<PathBuf> = dir
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        // Package domains only (`intel-rapl:0`, not `intel-rapl:0:1`).
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.contains("rapl:") && n.matches(':').count() == 1)
                    })
                    .collect();
                domains.sort();
                for d in &domains {
                    let range = read_f64(&d.join("max_energy_range_uj")).unwrap_or(f64::MAX);
                    if read_f64(&d.join("energy_uj")).is_some() {
                        rapl.push((d.join("energy_uj"), range, None, 0.0));
                    }
                }
                if rapl.is_empty() {
                    lacks.push(if domains.is_empty() {
                        format!("no energy readings: {} has no RAPL package domain", powercap.display())
                    } else {
                        format!(
                            "no energy readings: RAPL's energy_uj under {} is not readable by this user (root only \
                             since Linux 5.10)",
                            powercap.display()
                        )
                    });
                }
            }
        }
        CpuSensor { cpus, freq, rapl, lacks }
    }

    fn cpuinfo_mhz(&self) -> Option<f64> {
        let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
        let mut cpu = None;
        let mut mhz = Vec::new();
        for line in text.lines() {
            let Some((k, v)) = line.split_once(':') else { continue };
            match k.trim() {
                "processor" => cpu = v.trim().parse::<usize>().ok(),
                "cpu MHz" if cpu.is_some_and(|c| self.cpus.contains(&c)) => mhz.extend(v.trim().parse::<f64>().ok()),
                _ => {}
            }
        }
        (!mhz.is_empty()).then(|| crate::vocab::stats::median_unsorted(&mut mhz))
    }
}

fn read_f64(p: &Path) -> Option<f64> {
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

impl Sensor for CpuSensor {
    fn read(&mut self) -> Result<Reading, String> {
        let clock = if self.freq.is_empty() {
            self.cpuinfo_mhz()
        } else {
            let mut khz: Vec<f64> = self.freq.iter().filter_map(|p| read_f64(p)).collect();
            (!khz.is_empty()).then(|| crate::vocab::stats::median_unsorted(&mut khz) / 1000.0)
        };
        let mut energy = None;
        for (file, range, last, total) in &mut self.rapl {
            if let Some(raw) = read_f64(file) {
                if let Some(prev) = *last {
                    // The counter wraps at max_energy_range_uj.
                    *total += if raw >= prev { raw - prev } else { raw + *range - prev } / 1e6;
                }
                *last = Some(raw);
                energy = Some(energy.unwrap_or(0.0) + *total);
            }
        }
        Ok(Reading { clock_mhz: clock, energy_j: energy, ..Reading::default() })
    }

    fn describe(&self) -> String {
        let clock = if self.freq.is_empty() { "/proc/cpuinfo cpu MHz" } else { "cpufreq scaling_cur_freq" };
        let energy = if self.rapl.is_empty() { "" } else { ", RAPL package energy" };
        format!("{clock} of CPUs {}{energy}", crate::vocab::partition::cpu_list(&self.cpus))
    }

    fn lacks(&self) -> Vec<String> {
        self.lacks.clone()
    }

    fn clock_may_be_nominal(&self) -> bool {
        self.freq.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpufreq_and_rapl_are_read_where_they_exist() {
        let root = tempfile::tempdir().unwrap();
        let cpu = root.path().join("sys/devices/system/cpu/cpu0/cpufreq");
        std::fs::create_dir_all(&cpu).unwrap();
        std::fs::write(cpu.join("scaling_cur_freq"), "2450000\n").unwrap();
        let pkg = root.path().join("sys/class/powercap/intel-rapl:0");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::create_dir_all(root.path().join("sys/class/powercap/intel-rapl:0:0")).unwrap();
        std::fs::write(pkg.join("max_energy_range_uj"), "1000000000").unwrap();
        std::fs::write(pkg.join("energy_uj"), "999000000").unwrap();
        let mut s = CpuSensor::at(root.path(), vec![0]);
        assert!(s.lacks().is_empty(), "{:?}", s.lacks());
        let a = s.read().unwrap();
        assert_eq!(a.clock_mhz, Some(2450.0));
        assert_eq!(a.energy_j, Some(0.0));
        // 1 kJ range; the counter wraps from 999 J to 1 J: 2 J more.
        std::fs::write(pkg.join("energy_uj"), "1000000").unwrap();
        assert_eq!(s.read().unwrap().energy_j, Some(2.0));
        assert!(s.describe().contains("scaling_cur_freq") && s.describe().contains("RAPL"), "{}", s.describe());
    }

    #[test]
    fn without_cpufreq_or_powercap_it_says_so() {
        let root = tempfile::tempdir().unwrap();
        let s = CpuSensor::at(root.path(), vec![0]);
        let lacks = s.lacks().join("\n");
        assert!(lacks.contains("no cpufreq") && lacks.contains("no RAPL"), "{lacks}");
        assert!(s.describe().starts_with("/proc/cpuinfo"), "{}", s.describe());
    }
}
