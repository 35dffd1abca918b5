//! Point labels that tell the points of a table apart: [`Point::label`]
//! plus whatever sets a point apart from the others of the same label
//! (method, cache or memory variant, peer, GEMM layout), named once here
//! for `show`, failed points and any table that lists points.

use crate::vocab::rows::Point;

/// Labels for `points` that tell every one apart: each [`Point::label`],
/// followed by whatever qualifiers (method, cache or memory variant, peer,
/// GEMM layout, axes) differ among the points that share it, as in
/// `memcpy copy 4 KiB (sm_kernel, cold)`. A GEMM's repeated op is dropped
/// (`gemm bf16 …`, not `gemm gemm bf16 …`). Points that differ in nothing
/// keep the same label.
pub fn distinct_labels(points: &[&Point]) -> Vec<String> {
    use std::collections::BTreeMap;
    let base: Vec<String> = points.iter().map(|p| p.label_with(false)).collect();
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, b) in base.iter().enumerate() {
        groups.entry(b.as_str()).or_default().push(i);
    }
    let mut out = base.clone();
    for members in groups.values().filter(|m| m.len() > 1) {
        let quals: Vec<Vec<(&str, String)>> = members.iter().map(|&i| points[i].qualifiers()).collect();
        // A qualifier is named where it is not the same for the whole group.
        let mut names: Vec<&str> = Vec::new();
        for q in quals.iter().flatten() {
            if !names.contains(&q.0) {
                names.push(q.0);
            }
        }
        let varies: Vec<&str> = names
            .into_iter()
            .filter(|n| {
                let vals: Vec<Option<&String>> =
                    quals.iter().map(|q| q.iter().find(|(k, _)| k == n).map(|(_, v)| v)).collect();
                vals.iter().any(|v| *v != vals[0])
            })
            .collect();
        for (&i, q) in members.iter().zip(&quals) {
            let tags: Vec<&str> = q.iter().filter(|(k, _)| varies.contains(k)).map(|(_, v)| v.as_str()).collect();
            if !tags.is_empty() {
                out[i] = format!("{} ({})", base[i], tags.join(", "));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_what_sets_points_apart() {
        let copy = |method: &str, variant: &str| Point {
            bench: "memcpy".into(),
            op: "copy".into(),
            size_bytes: Some(4096),
            method: Some(method.into()),
            variant: Some(variant.into()),
            ..Point::default()
        };
        let pts = [copy("copy_engine", "warm"), copy("sm_kernel", "warm"), copy("copy_engine", "cold")];
        let refs: Vec<&Point> = pts.iter().collect();
        assert_eq!(
            distinct_labels(&refs),
            [
                "memcpy copy 4 KiB (copy_engine, warm)",
                "memcpy copy 4 KiB (sm_kernel, warm)",
                "memcpy copy 4 KiB (copy_engine, cold)"
            ]
        );
        // A lone point keeps its plain label.
        assert_eq!(distinct_labels(&refs[..1]), ["memcpy copy 4 KiB"]);
        let gemm = |axes: &str| Point {
            bench: "gemm".into(),
            op: "gemm".into(),
            dtype: Some("bf16".into()),
            m: Some(8),
            n: Some(8),
            k: Some(8),
            method: Some("cublaslt".into()),
            axes: Some(axes.into()),
            ..Point::default()
        };
        let g = [gemm(r#"{"layout":"nn"}"#), gemm(r#"{"layout":"tn"}"#)];
        let refs: Vec<&Point> = g.iter().collect();
        assert_eq!(distinct_labels(&refs), ["gemm bf16 8×8×8 (nn)", "gemm bf16 8×8×8 (tn)"]);
    }
}
