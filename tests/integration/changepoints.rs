//! benchbook's change-point scoring against the Turing Change Point
//! Detection Benchmark's own: for three of its methods (binseg, pelt and
//! zero, default experiment), the change points TCPDBench recorded on each
//! of its 32 univariate series score, by `analysis::changepoints::score`,
//! exactly the F1 and cover TCPDBench published for them. Data nobody here
//! wrote: annotations from TCPD, runs and scores from TCPDBench (both MIT,
//! sources in the fixture).

use benchbook::analysis::changepoints::{change_points, score, ChangeRule};

#[derive(serde::Deserialize)]
struct Fixture {
    series: std::collections::BTreeMap<String, Series>,
}

#[derive(serde::Deserialize)]
struct Series {
    n_obs: usize,
    annotations: Vec<Vec<usize>>,
    methods: std::collections::BTreeMap<String, Scored>,
}

#[derive(serde::Deserialize)]
struct Scored {
    cps: Vec<usize>,
    f1: f64,
    cover: f64,
}

#[test]
fn f1_and_cover_reproduce_tcpdbench_per_series_scores() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tcpd/default-scores.json");
    let fixture: Fixture = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(fixture.series.len(), 32, "the benchmark's univariate table");
    let mut checked = 0;
    for (name, s) in &fixture.series {
        for (method, m) in &s.methods {
            let f1 = score::f1(&s.annotations, &m.cps, s.n_obs);
            let cover = score::cover(&s.annotations, &m.cps, s.n_obs);
            assert!((f1 - m.f1).abs() < 1e-12, "{name} {method}: F1 {f1} against TCPDBench's {}", m.f1);
            assert!((cover - m.cover).abs() < 1e-12, "{name} {method}: cover {cover} against TCPDBench's {}", m.cover);
            checked += 1;
        }
    }
    assert_eq!(checked, 96, "three methods on every series");
}

/// The detector's defaults on the two TCPD series whose licences let them
/// be committed (bank: MIT; brent_spot: public domain), scored against
/// their 5 annotators: a golden check of what `examples/tcpd_score.rs`
/// prints for them (`docs/changepoints.md` has the whole table).
#[test]
fn the_default_detector_on_committed_tcpd_series() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tcpd");
    let annotations: std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<usize>>> =
        serde_json::from_str(&std::fs::read_to_string(root.join("annotations.json")).unwrap()).unwrap();
    for (name, found_at, f1, cover) in
        [("bank", vec![20], 0.667, 0.966), ("brent_spot", vec![133, 280, 379], 0.483, 0.618)]
    {
        let path = root.join(format!("datasets/{name}/{name}.json"));
        let d: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let values: Vec<f64> = d["series"][0]["raw"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(values.len() as u64, d["n_obs"].as_u64().unwrap(), "{name}");
        let at: Vec<usize> = change_points(&values, &ChangeRule::default()).iter().map(|c| c.at).collect();
        assert_eq!(at, found_at, "{name}");
        let a: Vec<Vec<usize>> = annotations[name].values().cloned().collect();
        assert!((score::f1(&a, &at, values.len()) - f1).abs() < 5e-4, "{name} F1");
        assert!((score::cover(&a, &at, values.len()) - cover).abs() < 5e-4, "{name} cover");
    }
}
