//! The node-level passive checks, against what the operator says the node
//! must have ([`Expected`]): its GPU count (NHC's `check_gpu_count`), its
//! InfiniBand ports' state and rate (NHC's `check_hw_ib`), its online CPUs
//! (`check_hw_cpuinfo`) and its memory (`check_hw_physmem`).

use super::health::{Action, Check, Finding, Health};
use crate::vocab::health::{Expected, IbPort};

fn finding(check: Check, what: String) -> Finding {
    Finding { device: "node".into(), check, action: Action::Drain, what, source: check.source() }
}

/// What the node was read to have; `None`: not read.
#[derive(Debug, Clone, Default)]
pub struct NodeFacts {
    /// GPUs NVML saw.
    pub gpus: Option<usize>,
    pub ports: Vec<IbPort>,
    /// Logical CPUs online, and memory in bytes, as the host reports them.
    pub cpus: Option<usize>,
    pub memory_bytes: Option<u64>,
}

/// Add the node-level checks `expected` asks for to `health`, against
/// what was read (`node`).
pub fn node_findings(health: &mut Health, expected: &Expected, node: &NodeFacts) {
    let (gpus, ports, cpus, memory_bytes) = (node.gpus, &node.ports[..], node.cpus, node.memory_bytes);
    if let (Some(want), Some(seen)) = (expected.cpus, cpus) {
        health.unread.retain(|c| *c != Check::CpuCount);
        if seen < want as usize {
            health.findings.push(finding(Check::CpuCount, format!("{seen} logical CPUs online, {want} expected")));
        }
    }
    if let (Some(want), Some(bytes)) = (expected.memory_gib, memory_bytes) {
        health.unread.retain(|c| *c != Check::Memory);
        let gib = bytes as f64 / (1u64 << 30) as f64;
        if gib < 0.95 * want {
            health.findings.push(finding(
                Check::Memory,
                format!("{gib:.1} GiB of memory, more than 5 % below the {want} GiB expected"),
            ));
        }
    }
    if let (Some(want), Some(seen)) = (expected.gpus, gpus) {
        health.unread.retain(|c| *c != Check::GpuCount);
        if seen < want as usize {
            health.findings.push(finding(Check::GpuCount, format!("{seen} GPUs visible, {want} expected")));
        }
    }
    if let Some(rate) = expected.ib_rate_gbps {
        health.unread.retain(|c| *c != Check::IbPort);
        let ib: Vec<&IbPort> = ports.iter().filter(|p| p.link_layer.as_deref() != Some("Ethernet")).collect();
        if ib.is_empty() {
            health.findings.push(finding(Check::IbPort, format!("no InfiniBand port found; {rate} Gb/s expected")));
        }
        for p in ib {
            let state = p.state.as_deref().unwrap_or("unreadable");
            if state != "ACTIVE" {
                health.findings.push(finding(Check::IbPort, format!("port {} is {state}", p.port)));
            } else if p.rate_gbps.is_none_or(|r| r < rate) {
                let at = p.rate_gbps.map_or("an unreadable rate".into(), |r| format!("{r} Gb/s"));
                health
                    .findings
                    .push(finding(Check::IbPort, format!("port {} active at {at}, below {rate} Gb/s", p.port)));
            }
        }
    }
    health.findings.sort_by_key(|f| f.action);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(name: &str, state: &str, rate: f64) -> IbPort {
        IbPort {
            port: name.into(),
            state: Some(state.into()),
            rate_gbps: Some(rate),
            link_layer: Some("InfiniBand".into()),
        }
    }

    #[test]
    fn missing_gpus_and_ports_down_or_slow_drain_and_unasked_checks_are_not_made() {
        let ports =
            [port("mlx5_0:1", "ACTIVE", 400.0), port("mlx5_1:1", "DOWN", 400.0), port("mlx5_2:1", "ACTIVE", 200.0)];
        let node = |gpus, ports: &[IbPort]| NodeFacts { gpus, ports: ports.to_vec(), ..NodeFacts::default() };
        let mut h = Health { unread: vec![Check::GpuCount, Check::IbPort], ..Health::default() };
        node_findings(&mut h, &Expected::default(), &node(Some(2), &ports));
        assert!(h.findings.is_empty() && h.unread.len() == 2);
        node_findings(
            &mut h,
            &Expected { gpus: Some(8), ib_rate_gbps: Some(400.0), ..Expected::default() },
            &node(Some(7), &ports),
        );
        let lines: Vec<String> = h.findings.iter().map(Finding::line).collect();
        assert_eq!(
            lines,
            [
                "drain: node gpu-count: 7 GPUs visible, 8 expected",
                "drain: node ib-port: port mlx5_1:1 is DOWN",
                "drain: node ib-port: port mlx5_2:1 active at 200 Gb/s, below 400 Gb/s",
            ]
        );
        assert!(h.unread.is_empty());
        let mut h = Health::default();
        node_findings(&mut h, &Expected { ib_rate_gbps: Some(400.0), ..Expected::default() }, &node(None, &[]));
        assert_eq!(h.findings[0].what, "no InfiniBand port found; 400 Gb/s expected");
    }
}
