//! Whether a `running` run is still going. On the host that runs it, its
//! pid says (and the pid's start time, so a reused pid is not taken for
//! it); read from a bucket, where no pid can be checked, its node's
//! heartbeat says ([`super::remote`]).

use super::manifest::{Manifest, RunStatus};

/// Start time of process `pid` in clock ticks since boot, from
/// `/proc/<pid>/stat` (field 22, counted after the parenthesised name).
pub fn process_start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    // Fields from 3 (state) on; starttime is field 22.
    after_name.split_whitespace().nth(19)?.parse().ok()
}

impl Manifest {
    /// The status to show: a `running` manifest whose process is gone (on
    /// this host) was killed, so it reads as interrupted. A pid that now
    /// belongs to a process started at another time was reused: also gone.
    pub fn effective_status(&self) -> RunStatus {
        if let (RunStatus::Running, Some(seen)) = (self.status, &self.seen_alive) {
            // From a bucket: no pid to check, only the node's heartbeat.
            return if seen.gone || seen.is_stale(chrono::Utc::now()) {
                RunStatus::Interrupted
            } else {
                RunStatus::Running
            };
        }
        if self.status != RunStatus::Running
            || self.host.hostname != crate::host::hostname()
            || !std::path::Path::new("/proc/self").exists()
        {
            return self.status;
        }
        let alive = match (process_start_ticks(self.pid), self.pid_start_ticks) {
            (None, _) => false,
            (Some(now), Some(recorded)) => now == recorded,
            (Some(_), None) => true,
        };
        if alive {
            RunStatus::Running
        } else {
            RunStatus::Interrupted
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::remote::SeenAlive;

    fn manifest() -> Manifest {
        Manifest::begin(
            "20261121T000000Z-t-0000",
            super::super::manifest::RunOrigin::Native,
            crate::vocab::config::RunConfig::Import { import: Vec::new() },
            Vec::new(),
        )
    }

    #[test]
    fn a_reused_pid_does_not_keep_a_run_running() {
        let mut m = manifest();
        assert_eq!(m.effective_status(), RunStatus::Running, "this process is alive");
        m.pid_start_ticks = m.pid_start_ticks.map(|t| t + 1);
        assert_eq!(m.effective_status(), RunStatus::Interrupted, "same pid, another start time");
        m.pid_start_ticks = None;
        assert_eq!(m.effective_status(), RunStatus::Running, "v1 manifests: the pid alone");
        m.status = RunStatus::Complete;
        assert_eq!(m.effective_status(), RunStatus::Complete);
    }

    #[test]
    fn from_a_bucket_only_the_heartbeat_keeps_a_run_running() {
        let mut m = manifest();
        let ago = |minutes: i64| (chrono::Utc::now() - chrono::Duration::minutes(minutes)).to_rfc3339();
        // This process is alive, but a run read from a bucket is judged by its node's word.
        m.seen_alive = Some(SeenAlive { seen_at: ago(1), gone: false });
        assert_eq!(m.effective_status(), RunStatus::Running, "heard from a minute ago");
        m.seen_alive = Some(SeenAlive { seen_at: ago(11), gone: false });
        assert_eq!(m.effective_status(), RunStatus::Interrupted, "silent for longer than 10 minutes");
        m.seen_alive = Some(SeenAlive { seen_at: ago(0), gone: true });
        assert_eq!(m.effective_status(), RunStatus::Interrupted, "its node said the process is gone");
        m.seen_alive = Some(SeenAlive { seen_at: "not a time".into(), gone: false });
        assert_eq!(m.effective_status(), RunStatus::Interrupted);
        m.status = RunStatus::Complete;
        assert_eq!(m.effective_status(), RunStatus::Complete, "a finished run stays finished");
    }
}
