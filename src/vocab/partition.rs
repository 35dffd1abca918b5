//! How a row says which partition of `run --partitions N` measured it: the
//! keys `partition` and `partition_cpus` in its `axes`, and its variant led
//! by `partition K, CPUs L`. Written when the instances' rows are gathered
//! (`session::partitions`) and read back when they are added up
//! (`analysis::partitions`), here in one place.

use std::collections::BTreeMap;

/// The axes keys a partition adds.
pub const PARTITION: &str = "partition";
pub const PARTITION_CPUS: &str = "partition_cpus";
pub const PARTITION_DEVICE: &str = "partition_device";

/// A CPU set as `taskset -c` writes it: `0-3,8`.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    parts.join(",")
}

fn axes_map(axes: Option<&str>) -> BTreeMap<String, serde_json::Value> {
    axes.and_then(|a| serde_json::from_str(a).ok()).unwrap_or_default()
}

/// `axes` with partition `k` on `cpus` (and its GPU `device`) added
/// (canonical JSON: keys sorted).
pub fn with_partition(axes: Option<&str>, k: usize, cpus: &[usize], device: Option<&str>) -> String {
    let mut map = axes_map(axes);
    map.insert(PARTITION.into(), k.into());
    map.insert(PARTITION_CPUS.into(), cpu_list(cpus).into());
    if let Some(d) = device {
        map.insert(PARTITION_DEVICE.into(), d.into());
    }
    serde_json::to_string(&map).unwrap_or_default()
}

/// The partition `axes` name, if any.
pub fn partition_of(axes: Option<&str>) -> Option<u64> {
    axes_map(axes).get(PARTITION)?.as_u64()
}

/// `axes` without the partition's keys (`None` when nothing else is left).
pub fn without_partition(axes: Option<&str>) -> Option<String> {
    let mut map = axes_map(axes);
    map.remove(PARTITION);
    map.remove(PARTITION_CPUS);
    map.remove(PARTITION_DEVICE);
    (!map.is_empty()).then(|| serde_json::to_string(&map).unwrap_or_default())
}

/// The variant's leading tag: `partition 1, CPUs 2-3` (`, GPU MIG-…`).
fn tag(k: u64, cpus: &str, device: Option<&str>) -> String {
    match device {
        Some(d) => format!("partition {k}, CPUs {cpus}, GPU {d}"),
        None => format!("partition {k}, CPUs {cpus}"),
    }
}

/// `variant` led by partition `k`'s tag, so tables and curves tell the
/// partitions apart.
pub fn tagged_variant(variant: Option<String>, k: usize, cpus: &[usize], device: Option<&str>) -> String {
    let tag = tag(k as u64, &cpu_list(cpus), device);
    match variant {
        Some(v) => format!("{tag}, {v}"),
        None => tag,
    }
}

/// The variant without the tag `axes` names (the inverse of [`tagged_variant`]).
pub fn untagged_variant(variant: Option<&str>, axes: Option<&str>) -> Option<String> {
    let map = axes_map(axes);
    let (Some(k), Some(cpus)) = (map.get(PARTITION).and_then(|v| v.as_u64()), map.get(PARTITION_CPUS)) else {
        return variant.map(String::from);
    };
    let tag = tag(k, cpus.as_str().unwrap_or_default(), map.get(PARTITION_DEVICE).and_then(|d| d.as_str()));
    match variant?.strip_prefix(tag.as_str()) {
        Some("") => None,
        Some(rest) => Some(rest.strip_prefix(", ").unwrap_or(rest).to_string()),
        None => variant.map(String::from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_is_written_and_read_back_the_same_way() {
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        let axes = with_partition(Some(r#"{"channels":4}"#), 1, &[2, 3], None);
        assert_eq!(axes, r#"{"channels":4,"partition":1,"partition_cpus":"2-3"}"#);
        assert_eq!(partition_of(Some(&axes)), Some(1));
        assert_eq!(without_partition(Some(&axes)).as_deref(), Some(r#"{"channels":4}"#));
        assert_eq!(without_partition(Some(&with_partition(None, 0, &[0], None))), None);
        // CPU lists hold commas; the tag is read back whole.
        let a = with_partition(None, 0, &[0, 1, 2, 5], None);
        let v = tagged_variant(Some("copy, warm".into()), 0, &[0, 1, 2, 5], None);
        assert_eq!(v, "partition 0, CPUs 0-2,5, copy, warm");
        assert_eq!(untagged_variant(Some(&v), Some(&a)).as_deref(), Some("copy, warm"));
        assert_eq!(untagged_variant(Some(&tagged_variant(None, 0, &[0, 1, 2, 5], None)), Some(&a)), None);
        assert_eq!(untagged_variant(Some("plain"), None).as_deref(), Some("plain"));
        // A GPU partition (a MIG instance) is in the axes and the tag, and
        // leaves with them.
        let g = with_partition(None, 1, &[4, 5], Some("MIG-5c1e"));
        assert_eq!(g, r#"{"partition":1,"partition_cpus":"4-5","partition_device":"MIG-5c1e"}"#);
        let v = tagged_variant(Some("copy".into()), 1, &[4, 5], Some("MIG-5c1e"));
        assert_eq!(v, "partition 1, CPUs 4-5, GPU MIG-5c1e, copy");
        assert_eq!(untagged_variant(Some(&v), Some(&g)).as_deref(), Some("copy"));
        assert_eq!(without_partition(Some(&g)), None);
    }
}
