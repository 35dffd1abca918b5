//! OSU titles: which test a `# OSU ...` banner names and how its rows are
//! read, the `#Using NCCL` lines `osu_xccl_*` ranks print before it, and
//! the titles of the `-G tty` plots printed after it.

use super::num;

/// How a test's rows are read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Class {
    /// MB/s of one pair (`osu_bw`, `osu_put_bw`); `bibw`-style tests count
    /// both directions.
    Bandwidth,
    /// MB/s summed over `pairs` pairs sending at once (`osu_mbw_mr`), with
    /// a message rate column.
    MultiPair,
    /// µs per message between a pair (`osu_latency`, `osu_multi_lat`,
    /// one-sided `osu_put_latency` ...).
    Latency,
    /// µs per collective call, averaged over ranks.
    Collective,
}

/// What a title names: the op, how its rows are read, and for collectives
/// the call style (`non-blocking`, `persistent`), which is the variant's.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Kind {
    pub op: String,
    pub class: Class,
    pub style: Option<&'static str>,
}

/// The test an OSU title names, e.g. "# OSU MPI Bandwidth Test v7.3",
/// "# OSU MPI-CUDA Bi-Directional Bandwidth Test v7.3", "# OSU MPI_Put
/// Latency Test v5.8", "# OSU MPI Multiple Bandwidth / Message Rate Test
/// v7.1", "# OSU MPI Non-blocking Allreduce Latency Test v5.6.3",
/// "# OSU MPI-CUDA Allreduce Persistent Latency Test v7.4". Ops are OSU's
/// program names without `osu_` for point-to-point tests (`bw`, `mbw_mr`,
/// `put_latency`), benchbook's collective names for collectives.
pub(super) fn test_kind(title: &str) -> Option<Kind> {
    let t = title.trim_start_matches('#').trim();
    let body = t.strip_prefix("OSU")?.trim();
    // "MPI", "MPI-CUDA", ... or a one-sided call: "MPI_Put", "MPI_Get".
    let (api, rest) = body.split_once(' ')?;
    let rest = rest.split(" v").next().unwrap_or(rest).trim().to_ascii_lowercase();
    let rest = rest.strip_suffix(" test").unwrap_or(&rest).trim();
    let p2p = |op: String, class| Some(Kind { op, class, style: None });
    let measure = if rest.starts_with("bi-directional bandwidth") || rest.starts_with("bidirectional bandwidth") {
        Some(("bibw", Class::Bandwidth))
    } else if rest.starts_with("multiple bandwidth") {
        Some(("mbw_mr", Class::MultiPair))
    } else if rest.starts_with("bandwidth") {
        Some(("bw", Class::Bandwidth))
    } else if rest == "latency" {
        Some(("latency", Class::Latency))
    } else if rest.starts_with("multi latency") || rest.starts_with("multiple latency") {
        Some(("multi_lat", Class::Latency))
    } else if rest.starts_with("latency multi-threaded") {
        Some(("latency_mt", Class::Latency))
    } else {
        None
    };
    if let Some(call) = api.strip_prefix("MPI_") {
        // One-sided: OSU's program names, osu_put_bw, osu_acc_latency ...
        let short = match call.to_ascii_lowercase().as_str() {
            "put" => "put",
            "get" => "get",
            "accumulate" => "acc",
            "get_accumulate" => "get_acc",
            "fetch_and_op" => "fop",
            "compare_and_swap" => "cas",
            _ => return None,
        };
        let (what, class) = measure?;
        return p2p(format!("{short}_{what}"), class);
    }
    if let Some((op, class)) = measure {
        return p2p(op.to_string(), class);
    }
    let coll = rest.strip_suffix("latency")?.trim().replace(['-', ' '], "");
    let (coll, style) = if let Some(c) = coll.strip_prefix("nonblocking") {
        (c.to_string(), Some("non-blocking"))
    } else if let Some(c) = coll.strip_suffix("persistent") {
        (c.to_string(), Some("persistent"))
    } else {
        (coll, None)
    };
    // Longest names first: "allreduce" before "reduce".
    let known = [
        ("alltoall", "all_to_all"),
        ("allreduce", "all_reduce"),
        ("allgather", "all_gather"),
        ("reducescatter", "reduce_scatter"),
        ("broadcast", "broadcast"),
        ("bcast", "broadcast"),
        ("barrier", "barrier"),
        ("gather", "gather"),
        ("scatter", "scatter"),
        ("reduce", "reduce"),
    ];
    let op = known.iter().find(|(k, _)| coll.starts_with(k)).map(|(_, op)| op.to_string()).unwrap_or(coll);
    Some(Kind { op, class: Class::Collective, style })
}

/// The OSU title on a line: from `# OSU` on. Every rank of an `osu_xccl_*`
/// test prints `#Using NCCL` first, and the title may follow one on the
/// same line when their output interleaves.
pub(super) fn title_at(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with("# OSU") {
        return Some(t);
    }
    let at = t.find("# OSU ")?;
    xccl_line(&t[..at]).then(|| &t[at..])
}

/// `#Using NCCL` / `#Using RCCL` lines (one per rank of an `osu_xccl_*`
/// test), possibly several glued together.
pub(super) fn xccl_line(t: &str) -> bool {
    let rest =
        t.replace("#Using NCCL", "").replace("#Using RCCL", "").replace("Using NCCL", "").replace("Using RCCL", "");
    rest.len() < t.len() && rest.trim().is_empty()
}

/// The title gnuplot centres over a `-G tty` plot: `Size: 4, Avg:1.57`
/// (OMB's `omb_graph_plot`, `set title "Size: %zu, Avg:%.*f"`).
pub(super) fn plot_title(t: &str) -> Option<u64> {
    let (size, avg) = t.strip_prefix("Size: ")?.split_once(", Avg:")?;
    num(avg)?;
    size.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(title: &str) -> Option<(String, Class, Option<&'static str>)> {
        test_kind(title).map(|k| (k.op, k.class, k.style))
    }

    #[test]
    fn titles_name_their_test() {
        let p2p = |op: &str, c| Some((op.to_string(), c, None));
        assert_eq!(kind("# OSU MPI-CUDA Bi-Directional Bandwidth Test v7.3"), p2p("bibw", Class::Bandwidth));
        assert_eq!(kind("# OSU MPI Multiple Bandwidth / Message Rate Test v5.6.2"), p2p("mbw_mr", Class::MultiPair));
        assert_eq!(kind("# OSU MPI Multi Latency Test v7.1"), p2p("multi_lat", Class::Latency));
        assert_eq!(kind("# OSU MPI_Put Bandwidth Test v5.6.3"), p2p("put_bw", Class::Bandwidth));
        assert_eq!(kind("# OSU MPI_Put Bi-directional Bandwidth Test v7.0"), p2p("put_bibw", Class::Bandwidth));
        assert_eq!(kind("# OSU MPI_Get latency Test v5.6.3"), p2p("get_latency", Class::Latency));
        assert_eq!(kind("# OSU MPI_Accumulate latency Test v5.6.3"), p2p("acc_latency", Class::Latency));
        assert_eq!(
            kind("# OSU MPI Non-blocking Allreduce Latency Test v5.6.3"),
            Some(("all_reduce".into(), Class::Collective, Some("non-blocking")))
        );
        assert_eq!(
            kind("# OSU MPI-CUDA Allreduce Persistent Latency Test v7.4"),
            Some(("all_reduce".into(), Class::Collective, Some("persistent")))
        );
        assert_eq!(kind("# OSU MPI Reduce Latency Test v7.4"), Some(("reduce".into(), Class::Collective, None)));
        assert_eq!(kind("# OSU MPI_Frobnicate latency Test v1"), None);
        assert_eq!(kind("# OSU"), None);
        assert_eq!(kind("# OSU NCCL-CUDA Bandwidth Test v7.4"), p2p("bw", Class::Bandwidth));
        assert_eq!(kind("# OSU RCCL-ROCM Bi-Directional Bandwidth Test v7.5"), p2p("bibw", Class::Bandwidth));
        assert_eq!(
            kind("# OSU NCCL-CUDA All-to-All Personalized Exchange Latency Test v7.5"),
            Some(("all_to_all".into(), Class::Collective, None))
        );
    }

    #[test]
    fn xccl_rank_lines_are_not_rows() {
        assert!(xccl_line("#Using NCCL"));
        assert!(xccl_line("#Using NCCL#Using NCCL"));
        assert!(!xccl_line("# Size  Bandwidth (MB/s)"));
        assert_eq!(
            title_at("#Using NCCL# OSU NCCL-CUDA Bandwidth Test v7.4"),
            Some("# OSU NCCL-CUDA Bandwidth Test v7.4")
        );
        assert_eq!(title_at("1024  # OSU"), None);
    }
}
