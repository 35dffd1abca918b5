//! Tests of the bandwidth chart: its y span and its panels.

mod y_span {
    use super::super::y_span;

    #[test]
    fn one_wide_bar_does_not_stretch_the_axis() {
        // Data 10-100 GB/s; one interval runs to 10^4: the axis stops at 2x.
        assert_eq!(y_span(&[10.0, 50.0, 100.0], &[(40.0, 10_000.0)]), (10.0, 200.0));
        // Bars within reach count in full.
        assert_eq!(y_span(&[10.0, 100.0], &[(8.0, 120.0)]), (8.0, 120.0));
        assert_eq!(y_span(&[10.0, 100.0], &[(0.001, 100.0)]), (5.0, 100.0));
    }
}

mod panels {
    use super::super::*;

    fn line(label: &str, system: &str, op: &str) -> Line {
        Line::with_errors(label.into(), [(1024.0, 1.0, None), (4096.0, 2.0, None)]).of(system, op)
    }

    /// (colours per panel) of a chart.
    fn colours(c: &BandwidthChart) -> Vec<Vec<usize>> {
        c.panels().iter().map(|p| p.iter().map(|x| x.1).collect()).collect()
    }

    #[test]
    fn past_eight_curves_a_chart_becomes_panels_of_at_most_eight_with_no_colour_twice() {
        // One system, 11 curves over 5 operations (the one-sided example).
        let ops =
            ["bidirectional", "get", "get", "put", "put", "put", "put", "put", "put", "put_round_trip", "send_recv"];
        let lines = ops.iter().enumerate().map(|(i, op)| line(&format!("{op} {i}"), "run", op)).collect();
        let c = bandwidth_chart("n", "t", "Gb/s", lines, None);
        let panels = c.panels();
        assert!(panels.len() >= 2, "{panels:?}");
        let mut seen: Vec<usize> = panels.iter().flatten().map(|p| p.0).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..11).collect::<Vec<_>>(), "every curve drawn once");
        for p in colours(&c) {
            let mut d = p.clone();
            d.sort_unstable();
            d.dedup();
            assert!(p.len() <= MAX_CURVES && d.len() == p.len(), "{p:?}");
        }
        // An operation's curves stay in one panel.
        let put_panels: std::collections::BTreeSet<usize> =
            panels.iter().enumerate().filter(|(_, p)| p.iter().any(|x| ops[x.0] == "put")).map(|(k, _)| k).collect();
        assert_eq!(put_panels.len(), 1);
        // The chart is as tall as its panels.
        assert!(c.size().1 > SIZE.1);
    }

    #[test]
    fn a_system_keeps_its_colour_and_an_operation_its_marker_across_a_reports_charts() {
        let a = bandwidth_chart("a", "t", "GB/s", vec![line("x", "A", "copy"), line("y", "B", "copy")], None);
        let b = bandwidth_chart("b", "t", "GB/s", vec![line("z", "B", "scale"), line("w", "A", "scale")], None);
        let mut charts: Vec<Box<dyn Chart>> = vec![Box::new(a), Box::new(b)];
        crate::plot::share_palette(&mut charts);
        let keys: Vec<(String, String)> = charts.iter().flat_map(|c| c.style_keys()).collect();
        let p = Palette::of(&keys);
        assert_eq!(p.colour("A"), 0);
        assert_eq!(p.colour("B"), 1);
        assert_ne!(p.marker("copy"), p.marker("scale"));
        // The second chart draws B in B's colour although it comes first there.
        let b = bandwidth_chart("b", "t", "GB/s", vec![line("z", "B", "scale"), line("w", "A", "scale")], None);
        let mut b = b;
        b.palette = Some(p);
        assert_eq!(colours(&b), vec![vec![1, 0]]);
        // One system alone: its curves take a colour each.
        let one = bandwidth_chart("o", "t", "GB/s", vec![line("x", "A", "copy"), line("y", "A", "scale")], None);
        assert_eq!(colours(&one), vec![vec![0, 1]]);
    }

    #[test]
    fn a_system_with_several_operations_in_one_panel_still_shows_no_colour_twice() {
        let lines = vec![line("x", "A", "copy"), line("y", "A", "scale"), line("z", "B", "copy")];
        let c = bandwidth_chart("c", "t", "GB/s", lines, None);
        assert_eq!(colours(&c), vec![vec![0, 2, 1]]);
    }
}
