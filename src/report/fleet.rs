//! The fleet report (`benchbook fleet report NAME`): every node of a fleet
//! judged against its peers ([`crate::analysis::fleet`]), as a ranked
//! table, one sentence per slow node, a chart per point of each node's
//! ratio with its interval, and the drain list, in `templates/fleet.md`.

use serde::Serialize;

use super::compare::ChartRef;
use super::{engine, ReportOptions};
use crate::analysis::fleet::links::LinkSweep;
use crate::analysis::fleet::{Fleet, NodeJudgement, NodeVerdict, RUNS_ADVISED, Z_SLOW};
use crate::error::Result;
use crate::plot::heatmap::HeatmapChart;
use crate::plot::ratio::{RatioChart, MAX_ROWS};
use crate::plot::Chart;
use crate::render::{render_template, write_page};

/// The most points charted; the table has them all.
pub const MAX_CHARTS: usize = 8;
/// Rows of the ranked node table, beyond which only slow nodes are added
/// (a 1,000-node table is for `fleet check --json`, not for reading).
pub const TABLE_NODES: usize = 50;

/// One node's row of the ranked table: its verdict and how many runs it has.
#[derive(Debug, Clone, Serialize)]
pub struct NodeRow {
    #[serde(flatten)]
    pub verdict: NodeVerdict,
    pub runs: usize,
}

/// One point: every node's judgement on it, slowest first.
#[derive(Debug, Clone, Serialize)]
pub struct PointSection {
    pub point: String,
    /// The slowest [`MAX_ROWS`] nodes, and any slow node beyond them.
    pub nodes: Vec<NodeJudgement>,
    /// How many more nodes the point judged (all in `fleet check --json`).
    pub left_out: usize,
    pub chart: Option<ChartRef>,
}

/// One link sweep: its heatmap and the second pass.
#[derive(Debug, Clone, Serialize)]
pub struct LinkSection {
    pub sweep: LinkSweep,
    pub chart: ChartRef,
}

/// Everything `fleet.md` can use.
#[derive(Debug, Clone, Serialize)]
pub struct FleetContext {
    pub title: String,
    pub generated_at: String,
    pub benchbook_version: String,
    pub fleet: Fleet,
    pub nodes: Vec<NodeRow>,
    /// How many of `nodes` the ranked table shows (slowest first).
    pub nodes_shown: usize,
    pub points: Vec<PointSection>,
    /// The link sweeps, each with its heatmap.
    pub links: Vec<LinkSection>,
    /// The points not charted (beyond [`MAX_CHARTS`]).
    pub uncharted: usize,
    pub z_slow: f64,
    /// Judgements whose interval is a 95 % one (large fleets: nodes that
    /// could not be slow), and the size above which that happens.
    pub screened: usize,
    pub large_fleet: usize,
    /// Each interval's confidence (95 % Bonferroni-corrected over the
    /// tests) and δ, as every sentence, caption and table prints them.
    pub confidence_pct: String,
    pub threshold_pct: String,
    pub runs_advised: usize,
    /// The drain list as JSON, for a scheduler, and as Slurm commands.
    pub drain_json: String,
    pub drain_commands: String,
    pub reproduce: String,
}

/// A fleet report before it is written.
pub struct FleetReport {
    pub context: FleetContext,
    pub charts: Vec<Box<dyn Chart>>,
}

/// Build the report of a judged fleet.
pub fn build_fleet(fleet: &Fleet) -> FleetReport {
    let j = &fleet.judgement;
    let nodes: Vec<NodeRow> = j
        .nodes
        .iter()
        .map(|n| NodeRow { verdict: n.clone(), runs: fleet.nodes_seen.get(&n.node).copied().unwrap_or(0) })
        .collect();
    let mut charts: Vec<Box<dyn Chart>> = Vec::new();
    let sections = j
        .by_point()
        .into_iter()
        .enumerate()
        .map(|(i, (point, mut ns))| {
            let chart = (i < MAX_CHARTS).then(|| {
                let id = format!("fleet-{}", i + 1);
                // A large fleet gives the corrected interval only to nodes
                // that could be slow.
                let screened = ns.iter().any(|n| n.screened);
                let interval = if screened {
                    format!("95 % interval (the {} one for a node whose z is below −{Z_SLOW})", confidence_pct(j.confidence()))
                } else {
                    confidence_pct(j.confidence())
                };
                charts.push(Box::new(RatioChart {
                    name: id.clone(),
                    title: point.to_string(),
                    y_label: "ratio to the median of its peers".into(),
                    threshold: fleet.threshold,
                    series: Vec::new(),
                    rows: ns.iter().map(|n| (n.node.clone(), n.ratio, Some((n.ratio_low, n.ratio_high)))).collect(),
                }));
                let shown = if ns.len() > MAX_ROWS {
                    format!("the {MAX_ROWS} slowest of {} nodes", ns.len())
                } else {
                    "each node".to_string()
                };
                ChartRef {
                    id,
                    alt: format!("{point}: each node's ratio to its peers with its interval"),
                    caption: format!(
                        "{point}: {shown}, as its speed over the median of the other nodes; the bar is the {interval} interval (hierarchical bootstrap{}); the grey lines mark 1 and ±{}.",
                        if screened { "" } else { ", Bonferroni-corrected" },
                        threshold_pct(fleet.threshold)
                    ),
                }
            });
            let judged = ns.len();
            let mut shown = 0;
            ns.retain(|n| {
                shown += 1;
                shown <= MAX_ROWS || n.slow
            });
            PointSection { point: point.to_string(), left_out: judged - ns.len(), nodes: ns, chart }
        })
        .collect::<Vec<_>>();
    let uncharted = sections.iter().filter(|s| s.chart.is_none()).count();
    let links = fleet.links.iter().enumerate().map(|(i, l)| link_section(i, l, &mut charts)).collect();
    crate::plot::share_palette(&mut charts);
    let context = FleetContext {
        title: format!("Fleet {}: which node is slower than its peers", fleet.fleet),
        generated_at: crate::archive::manifest::now_rfc3339(),
        benchbook_version: env!("CARGO_PKG_VERSION").into(),
        fleet: fleet.clone(),
        nodes_shown: TABLE_NODES.max(j.nodes.iter().filter(|n| n.slow).count()),
        nodes,
        points: sections,
        links,
        uncharted,
        z_slow: Z_SLOW,
        screened: fleet.judgement.points.iter().filter(|p| p.screened).count(),
        large_fleet: crate::analysis::fleet::large::LARGE_FLEET,
        confidence_pct: confidence_pct(j.confidence()),
        threshold_pct: threshold_pct(fleet.threshold),
        runs_advised: RUNS_ADVISED,
        drain_json: serde_json::to_string(&fleet.drain).unwrap_or_default(),
        drain_commands: fleet
            .drain
            .iter()
            .map(|d| {
                crate::vocab::units::shell_join(&[
                    "scontrol".into(),
                    "update".into(),
                    format!("NodeName={d}"),
                    "State=DRAIN".into(),
                    format!("Reason=benchbook fleet {}: slower than its peers", fleet.fleet),
                ])
            })
            .collect::<Vec<_>>()
            .join("\n"),
        reproduce: crate::vocab::units::shell_join(&[
            "benchbook".into(),
            "fleet".into(),
            "report".into(),
            fleet.fleet.clone(),
            "--threshold".into(),
            threshold_pct(fleet.threshold).replace(' ', ""),
        ]),
    };
    FleetReport { context, charts }
}

/// A confidence as the report prints it: `99.38 %`.
fn confidence_pct(c: f64) -> String {
    crate::vocab::units::format_confidence(c)
}

/// δ as the report prints it: `5 %`, `2.5 %`.
fn threshold_pct(t: f64) -> String {
    let p = 100.0 * t;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0} %")
    } else {
        format!("{} %", crate::vocab::units::format_sig3(p))
    }
}

/// A sweep's node × node heatmap (GB/s both ways; the diagonal empty).
fn link_section(i: usize, l: &LinkSweep, charts: &mut Vec<Box<dyn Chart>>) -> LinkSection {
    let id = format!("links-{}", i + 1);
    let at =
        |a: &str, b: &str| l.links.iter().find(|x| (x.a == a && x.b == b) || (x.a == b && x.b == a)).map(|x| x.gbps);
    let cells =
        l.nodes.iter().map(|a| l.nodes.iter().map(|b| if a == b { None } else { at(a, b) }).collect()).collect();
    let size = crate::vocab::units::format_bytes(l.size_bytes);
    charts.push(Box::new(HeatmapChart {
        name: id.clone(),
        title: format!("links at {size}, every pair once (round robin)"),
        unit: "GB/s (both directions at once)".into(),
        row_label: "node".into(),
        col_label: "node".into(),
        rows: l.nodes.clone(),
        cols: l.nodes.clone(),
        cells,
        link: None,
    }));
    LinkSection {
        sweep: l.clone(),
        chart: ChartRef {
            id,
            alt: format!("link bandwidth between every pair of nodes at {size}"),
            caption: format!(
                "Each pair's exchange of {size} both ways at once, n/2 pairs at a time; the slower end's median time. A link under {:.3} GB/s ({} % of the median link, {:.3} GB/s) is retested from each end against a mostly good node (fewer than half of its links suspect).",
                l.floor_gbps,
                crate::vocab::units::format_sig3(100.0 * (1.0 - crate::vocab::pairs::SUSPECT_BELOW)),
                l.centre_gbps
            ),
        },
    }
}

/// Render the Markdown of a fleet report, asking for its charts.
pub fn render_fleet_markdown(engine: &mut tera::Tera, report: &FleetReport) -> Result<(String, Vec<String>)> {
    let asked = crate::render::charts::ask_for_charts(engine, &report.charts);
    let md = render_template(engine, "fleet.md", &report.context)?;
    Ok((md, asked.take()))
}

/// Write a fleet report into `out`, as [`super::write`] does a run report.
pub fn write_fleet(
    report: &FleetReport,
    out: &std::path::Path,
    opts: &ReportOptions,
) -> Result<Vec<std::path::PathBuf>> {
    let mut engine = engine(opts.templates.as_deref())?;
    let (md, asked) = render_fleet_markdown(&mut engine, report)?;
    write_page(&engine, &report.context.title, &md, &report.charts, &asked, out, opts.format, opts.png)
}
