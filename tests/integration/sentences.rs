//! Every finding (`analysis::findings::Said`) rendered through its
//! sentence partial (`templates/sentences/<id>.md`): one line each, its
//! values escaped and formatted by the partial, and a user's partial
//! rewording it (`--templates DIR/sentences/`).

use benchbook::analysis::findings::{MetricLevel, Missed, PlateauFlags, Said};
use benchbook::report::context::said::PARTIALS;
use benchbook::vocab::stats::Crossing;

fn crossing() -> [Crossing; 3] {
    [Crossing::At(1 << 20), Crossing::FromStart, Crossing::Never]
}

/// One of every sentence, so each partial is rendered at least once.
fn every() -> Vec<Said> {
    let flags = PlateauFlags {
        jump: Some((1 << 30, 12.5)),
        left_out: vec![4096, 8192],
        held_out: vec![],
        trusted_half_width: 0.25,
    };
    let [at, start, never] = crossing();
    let mut v = vec![
        Said::BandwidthPeak {
            what: "memcpy".into(),
            peak_gbps: 12.345,
            copied_gbps: None,
            size_bytes: 4096,
            label: "a_b".into(),
            above_roof: None,
            settled: true,
        },
        Said::Plateau {
            plateau_gbps: 10.0,
            sizes: vec![1 << 20, 1 << 21, 1 << 22],
            tolerance: 0.1,
            flags: flags.clone(),
        },
        Said::Unsettled {
            largest: vec![1 << 22],
            level_gbps: 3.0,
            rule: benchbook::vocab::stats::plateau_rule(),
            flags: PlateauFlags::default(),
        },
        Said::CachePeak { size_bytes: 4096, ratio: 2.5, working_set_bytes: 8192 },
        Said::OneSize,
        Said::NoLevel,
        Said::AboveRamp { smallest: None, cached: true },
        Said::Saturation { p50: start, p80: at, p90: never },
        Said::FixedCost { size_bytes: 8, time_s: 1.5e-6 },
        Said::LatencyInversion {
            curve: "p2p latency".into(),
            small_bytes: 8,
            small_s: 3.8e-7,
            large_bytes: 64,
            large_s: 1.9e-7,
            ratio: 2.0,
            overlap: false,
            also: vec![16, 32],
        },
        Said::LatencyStep {
            curve: "p2p latency".into(),
            small_bytes: 2048,
            small_s: 4e-7,
            large_bytes: 4096,
            large_s: 3.07e-6,
        },
        Said::WideIntervals { wide: 2, of: 9, widest: 0.0312, one_round: 3 },
        Said::NoiseTarget { met: 1, of: 3, reasons: vec!["stopped at max time".into()] },
        Said::Threads { threads: 8, most_gbps: 40.0, one_gbps: 9.0 },
        Said::Roofline { fraction: 0.5, name: "x".into(), roofline_gbps: "100".into(), reach_90: None },
        Said::NoRoofline { device: "<cpu>".into() },
        Said::StreamKernel {
            op: "Triad".into(),
            plateau_gbps: 1.0,
            peak_gbps: 2.0,
            size_bytes: 1024,
            label: "l".into(),
            sizes: 4,
            settled: true,
        },
    ];
    v.extend(every_else(flags, at));
    v
}

/// The rest of [`every`].
fn every_else(flags: PlateauFlags, at: Crossing) -> Vec<Said> {
    vec![
        Said::Link {
            label: "l".into(),
            ranks: Some(2),
            bus: true,
            peak_gbps: 5.0,
            size_bytes: 1 << 20,
            plateau_gbps: 3.0,
            level_at: 1 << 24,
            largest: 1 << 24,
            sizes: 9,
            settled: true,
            p80: at,
            p90: at,
            hump: Some(1.67),
            hump_at_smallest: false,
            flags,
        },
        Said::GemmPeak {
            dtype: "f32".into(),
            rate: 1.0,
            unit: "GFLOP/s".into(),
            shape: "1×1×1".into(),
            threads: None,
            method: Some("m".into()),
            points: 3,
        },
        Said::MetricSingle {
            metric: "m".into(),
            from: None,
            median: 1.0,
            unit: "1".into(),
            samples: 1,
            ci: Some((0.5, 2.0)),
            at: "-".into(),
        },
        Said::LossAboveUniform {
            metric: "loss".into(),
            from: Some("model=large".into()),
            value: 55.5,
            at: "step=1".into(),
            bound: benchbook::vocab::metrics::LOSS_BOUND,
            vocab: None,
        },
        Said::MetricBest {
            metric: "m".into(),
            from: Some("a.log".into()),
            higher: false,
            best: 1.0,
            unit: "ms".into(),
            at: "rate=4".into(),
            level: MetricLevel::Points { points: 3, low: 1.0, high: 2.0 },
        },
        Said::OneSided {
            one_sided: "put".into(),
            two_sided: "send_recv".into(),
            resolved: true,
            ratio: "2.00×".into(),
            flat_to: "±10 %".into(),
            same_file: false,
            device: Some("mlx4_0".into()),
        },
        Said::OneSidedNotCompared { across_systems: true },
        Said::OneSidedNotCompared { across_systems: false },
        Said::UnnamedLink { named: vec!["IB".into()], known: vec!["ib-hdr".into(), "eth-100g".into()] },
        Said::SharedMemory { run_id: "r".into(), host: "h".into() },
        Said::LaunchBest { least: "grid 1 × block 32".into() },
        Said::LaunchPeak {
            best: "grid 8 × block 256".into(),
            best_gbps: 40.0,
            ratio: 4.0,
            least: "grid 1 × block 32".into(),
            least_gbps: 10.0,
            best_threads: 2048,
            least_threads: 32,
        },
        Said::PairsShown { shown: 7, measured: 56, chosen: false, pairs: vec!["0→1".into(), "0→2".into()] },
        Said::NoTimedPoints,
        Said::Precision {
            met: 3,
            of: 5,
            target: 0.01,
            widest_missed: vec![
                Missed { label: "a".into(), width: Some(0.2), why: Some("drift".into()) },
                Missed { label: "b".into(), width: None, why: None },
            ],
            more: 1,
            one_round: 1,
            median_width: Some(0.004),
            median_rerun: Some(0.009),
        },
    ]
}

fn say(s: &Said) -> String {
    let mut t = benchbook::report::engine(None).unwrap();
    t.add_raw_template("t.md", "{{ say(s=s) | safe }}").unwrap();
    let mut c = tera::Context::new();
    c.insert("s", s);
    t.render("t.md", &c).unwrap()
}

#[test]
fn every_sentence_has_a_partial_that_renders_one_line() {
    let ids: Vec<String> =
        every().iter().map(|s| serde_json::to_value(s).unwrap()["id"].as_str().unwrap().to_string()).collect();
    // Partials that are not a `Said`: the shared macros, and the clause
    // a key result gives for having no share (sections::key::NoShare).
    let not_said = ["sentences/macros.md", "sentences/no-share.md"];
    for (name, _) in PARTIALS.iter().filter(|(n, _)| !not_said.contains(n)) {
        assert!(ids.iter().any(|i| format!("sentences/{i}.md") == *name), "{name} has no sample in every()");
    }
    for s in every() {
        let text = say(&s);
        assert!(!text.is_empty() && !text.contains('\n'), "{s:?}: {text:?}");
        assert!(text.ends_with('.'), "{s:?} does not end a sentence: {text}");
    }
}

#[test]
fn values_are_escaped_and_formatted_by_the_partial() {
    let t = say(&Said::NoRoofline { device: "<script>".into() });
    assert!(t.contains("&lt;script&gt;") && !t.contains("<script>"), "{t}");
    let t = say(&every()[0]);
    assert!(t.contains("12.3 GB/s") && t.contains("4 KiB") && t.contains("a\\_b") && t.contains("n/a"), "{t}");
}

#[test]
fn a_user_partial_rewords_a_sentence() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("sentences")).unwrap();
    std::fs::write(dir.path().join("sentences/one-size.md"), "Just one size.\n").unwrap();
    let mut t = benchbook::report::engine(Some(dir.path())).unwrap();
    t.add_raw_template("t.md", "{{ say(s=s) | safe }}").unwrap();
    let mut c = tera::Context::new();
    c.insert("s", &Said::OneSize);
    assert_eq!(t.render("t.md", &c).unwrap(), "Just one size.");
}
