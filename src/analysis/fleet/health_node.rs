//! The node-level passive checks, against what the operator says the node
//! must have ([`Expected`]): its GPU count (NHC's `check_gpu_count`), its
//! InfiniBand ports' state and rate (NHC's `check_hw_ib`), its online CPUs
//! (`check_hw_cpuinfo`: CPUs, sockets, cores), its memory and swap
//! (`check_hw_physmem`, `check_hw_swap`), its network interfaces
//! (`check_hw_eth`), its PCI devices on their NUMA nodes (Azure's
//! `check_hw_topology`) and its ports' link losses (Azure's
//! `check_ib_link_flapping`).

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
    /// Sockets and physical cores of the online CPUs.
    pub sockets_cores: Option<(usize, usize)>,
    pub swap_bytes: Option<u64>,
    /// The interfaces asked for that the kernel does not list.
    pub missing_interfaces: Vec<String>,
    /// Each device of the topology file: its bus id, the NUMA node the
    /// file puts it on, and the one the kernel does (`None`: not listed).
    pub placed: Vec<(String, i64, Option<i64>)>,
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
    host_findings(health, expected, node);
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
    if let Some(most) = expected.ib_flaps {
        health.unread.retain(|c| *c != Check::IbFlap);
        for p in ports.iter().filter(|p| p.link_layer.as_deref() != Some("Ethernet")) {
            match p.link_downed {
                Some(n) if n > most => health.findings.push(finding(
                    Check::IbFlap,
                    format!(
                        "port {}'s link went down {n} times since its counters were reset (more than {most})",
                        p.port
                    ),
                )),
                Some(n) if n > 0 => health.findings.push(Finding {
                    action: Action::Warn,
                    ..finding(
                        Check::IbFlap,
                        format!("port {}'s link went down {n} time(s) since its counters were reset", p.port),
                    )
                }),
                _ => {}
            }
        }
    }
    health.findings.sort_by_key(|f| f.action);
}

/// Sockets and cores, swap, interfaces and the PCI topology.
fn host_findings(health: &mut Health, expected: &Expected, node: &NodeFacts) {
    if expected.sockets.is_some() || expected.cores.is_some() {
        if let Some((sockets, cores)) = node.sockets_cores {
            health.unread.retain(|c| *c != Check::CpuTopology);
            if let Some(want) = expected.sockets.filter(|w| sockets < *w as usize) {
                health
                    .findings
                    .push(finding(Check::CpuTopology, format!("{sockets} CPU sockets online, {want} expected")));
            }
            if let Some(want) = expected.cores.filter(|w| cores < *w as usize) {
                health
                    .findings
                    .push(finding(Check::CpuTopology, format!("{cores} physical cores online, {want} expected")));
            }
        }
    }
    if let (Some(want), Some(bytes)) = (expected.swap_gib, node.swap_bytes) {
        health.unread.retain(|c| *c != Check::Swap);
        let gib = bytes as f64 / (1u64 << 30) as f64;
        if (gib - want).abs() > 0.03 * want {
            let expect =
                if want == 0.0 { "none expected".to_string() } else { format!("{want} GiB expected, within 3 %") };
            health.findings.push(finding(Check::Swap, format!("{gib:.2} GiB of swap, {expect}")));
        }
    }
    if !expected.interfaces.is_empty() {
        health.unread.retain(|c| *c != Check::NetInterface);
        for name in &node.missing_interfaces {
            health.findings.push(finding(Check::NetInterface, format!("no network interface {name}")));
        }
    }
    if let Some((file, _)) = &expected.topology {
        health.unread.retain(|c| *c != Check::Topology);
        for (bus, want, seen) in &node.placed {
            let what = match seen {
                None => format!("PCI device {bus} of {file} is missing (NUMA node {want} expected)"),
                Some(n) if n != want => format!("PCI device {bus} is on NUMA node {n}, {file} puts it on {want}"),
                Some(_) => continue,
            };
            health.findings.push(finding(Check::Topology, what));
        }
    }
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
            link_downed: Some(0),
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

    #[test]
    fn sockets_swap_interfaces_topology_and_link_losses_are_judged_when_asked() {
        let expected = Expected {
            sockets: Some(2),
            cores: Some(96),
            swap_gib: Some(0.0),
            interfaces: vec!["eth0".into(), "ib7".into()],
            topology: Some(("ndv5-topo.xml".into(), vec![("0001:00:00.0".into(), 0), ("0009:00:00.0".into(), 1)])),
            ib_flaps: Some(2),
            ..Expected::default()
        };
        let flapping = |n| IbPort { link_downed: Some(n), ..port("mlx5_ib0:1", "ACTIVE", 400.0) };
        let healthy = NodeFacts {
            ports: vec![flapping(0)],
            sockets_cores: Some((2, 96)),
            swap_bytes: Some(0),
            placed: vec![("0001:00:00.0".into(), 0, Some(0)), ("0009:00:00.0".into(), 1, Some(1))],
            ..NodeFacts::default()
        };
        let all = [Check::CpuTopology, Check::Swap, Check::NetInterface, Check::Topology, Check::IbFlap];
        let mut h = Health { unread: all.to_vec(), ..Health::default() };
        node_findings(&mut h, &expected, &healthy);
        assert!(h.findings.is_empty() && h.unread.is_empty(), "{h:?}");
        let sick = NodeFacts {
            ports: vec![flapping(3), IbPort { port: "mlx5_ib1:1".into(), ..flapping(1) }],
            sockets_cores: Some((1, 48)),
            swap_bytes: Some(8 << 30),
            missing_interfaces: vec!["ib7".into()],
            placed: vec![("0001:00:00.0".into(), 0, None), ("0009:00:00.0".into(), 1, Some(0))],
            ..NodeFacts::default()
        };
        let mut h = Health::default();
        node_findings(&mut h, &expected, &sick);
        let lines: Vec<String> = h.findings.iter().map(Finding::line).collect();
        assert_eq!(
            lines,
            [
                "drain: node cpu-topology: 1 CPU sockets online, 2 expected",
                "drain: node cpu-topology: 48 physical cores online, 96 expected",
                "drain: node swap: 8.00 GiB of swap, none expected",
                "drain: node net-interface: no network interface ib7",
                "drain: node topology: PCI device 0001:00:00.0 of ndv5-topo.xml is missing (NUMA node 0 expected)",
                "drain: node topology: PCI device 0009:00:00.0 is on NUMA node 0, ndv5-topo.xml puts it on 1",
                "drain: node ib-flap: port mlx5_ib0:1's link went down 3 times since its counters were reset (more than 2)",
                "warn: node ib-flap: port mlx5_ib1:1's link went down 1 time(s) since its counters were reset",
            ]
        );
        // Swap within 3 % of what is asked holds.
        let mut h = Health::default();
        let swap =
            |gib: f64| NodeFacts { swap_bytes: Some((gib * (1u64 << 30) as f64) as u64), ..NodeFacts::default() };
        node_findings(&mut h, &Expected { swap_gib: Some(64.0), ..Expected::default() }, &swap(63.0));
        assert!(h.findings.is_empty(), "{h:?}");
        node_findings(&mut h, &Expected { swap_gib: Some(64.0), ..Expected::default() }, &swap(60.0));
        assert_eq!(h.findings[0].what, "60.00 GiB of swap, 64 GiB expected, within 3 %");
    }
}
