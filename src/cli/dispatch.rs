//! From parsed flags to a command's run: the archive opened (a folder, or
//! a bucket through its mirror, [`commands::sync`]), the command called,
//! its value printed, and what it made sent to the bucket.

use super::*;
use crate::archive::Archive;
use crate::cli::print::{emit, Form};
use crate::error::Result;

pub fn main_with(cli: Cli) -> Result<u8> {
    use commands::sync::Need;
    let quiet = cli.quiet;
    let need = match &cli.command {
        Command::Sync(a) => {
            emit(&commands::sync::sync(&cli.archive, a)?, Form::json(a.json), quiet);
            return Ok(0);
        }
        // No archive read: the folder as given, never a bucket's mirror.
        Command::Backends { .. } | Command::Import(ImportArgs { explain: true, .. }) => {
            let archive = Archive::new(&cli.archive);
            return dispatch(cli, &archive);
        }
        Command::Run(_) | Command::Import(_) | Command::Unbundle { .. } => Need::MAKES_RUN,
        Command::Fleet { command: commands::fleet::FleetCommand::Health { .. } } => Need::SPECS,
        Command::Rerun { .. } | Command::Fleet { command: commands::fleet::FleetCommand::Gate(_) } => Need::BOTH,
        _ => Need::RUNS,
    };
    let opened = commands::sync::open(&cli.archive, need, quiet)?;
    let archive = opened.archive.clone();
    let result = dispatch(cli, &archive);
    opened.finish(quiet);
    result
}

/// Run the command on `archive` (a folder, or a bucket's mirror).
fn dispatch(cli: Cli, archive: &Archive) -> Result<u8> {
    let archive = archive.clone();
    let quiet = cli.quiet;
    // `--fleet` on `run` or `run exec`: the manifest reads it from the environment.
    if let Command::Run(a) = &cli.command {
        match &a.sub {
            Some(RunCommand::Exec(e)) => e.out.join_fleet(),
            _ => a.out.join_fleet(),
        }
    }
    if let Command::Import(ImportArgs { fleet: Some(f), .. }) = &cli.command {
        std::env::set_var(crate::host::placement::FLEET_ENV, f);
    }
    match cli.command {
        Command::Run(a) if matches!(a.sub, Some(RunCommand::Exec(_))) => {
            let Some(RunCommand::Exec(e)) = a.sub else { unreachable!("matched above") };
            let out = commands::run::exec(&archive, &e, quiet)?;
            emit(&out, Form::json(e.out.json), quiet);
            Ok(out.exit_code())
        }
        Command::Run(a) => match commands::run::run(&archive, &a, quiet)? {
            Some(out) => {
                emit(&out, Form::json(a.out.json), quiet);
                Ok(out.exit_code())
            }
            // Ranks other than 0 measure, hand their rows to rank 0, and exit quietly.
            None => Ok(0),
        },
        Command::List { filter, json } => {
            emit(&commands::list::list(&archive, &filter.into())?, Form::json(json), quiet);
            Ok(0)
        }
        Command::History { filter, bench, point, alpha, min_effect, changed, chart, json } => {
            let filter = filter.into();
            let rule = crate::analysis::changepoints::ChangeRule { alpha, min_effect, ..Default::default() };
            let out =
                commands::history::history(&archive, &filter, bench.as_deref(), point.as_deref(), &rule, changed)?;
            if let Some(path) = chart {
                commands::history::write_chart(&out, &path)?;
            }
            emit(&out, Form::json(json), quiet);
            Ok(0)
        }
        Command::Site { out, filter, reports, json } => {
            emit(&commands::site::site(&archive, &filter.into(), out, reports)?, Form::json(json), quiet);
            Ok(0)
        }
        Command::Show { run, json, no_verify } => {
            emit(&commands::show::show(&archive, &run, no_verify)?, Form::json(json), quiet);
            Ok(0)
        }
        Command::Report(a) => {
            let out = commands::report::report(&archive, &a)?;
            emit(&out, Form::Text, quiet);
            Ok(out.exit_code())
        }
        Command::Fleet { command: commands::fleet::FleetCommand::Check { fleet, threshold, fail_on, json } } => {
            let out = commands::fleet::check(&archive, &fleet, threshold, fail_on)?;
            emit(&out, Form::json(json), quiet);
            Ok(out.exit_code())
        }
        Command::Fleet { command: commands::fleet::FleetCommand::Health { json, checks, textfile } } => {
            let specs = crate::analysis::SpecBook::load(&archive.root)?;
            let out = commands::health::health(&specs, &checks)?;
            emit(&out, Form::json(json), quiet);
            if let Some(dir) = textfile {
                let text = commands::textfile::health_metrics(&crate::gate::this_node(), out.health.as_ref());
                commands::textfile::write(&dir, "benchbook_health.prom", &text)?;
            }
            Ok(out.exit_code())
        }
        Command::Fleet { command: commands::fleet::FleetCommand::Gate(a) } => {
            let out = commands::gate::gate(&archive, &a, quiet);
            emit(&out, Form::json(a.json), quiet);
            Ok(out.exit_code())
        }
        Command::Fleet {
            command: commands::fleet::FleetCommand::Report { fleet, threshold, out, format, png, templates },
        } => {
            let opts = crate::report::ReportOptions { format, png, templates, ..Default::default() };
            emit(&commands::fleet::report(&archive, &fleet, threshold, out, &opts)?, Form::Text, quiet);
            Ok(0)
        }
        Command::Verify { runs, all, json } => {
            let runs = if all { archive.runs()?.into_iter().map(|r| r.id).collect() } else { runs };
            let out = commands::verify::verify(&archive, &runs);
            emit(&out, Form::json(json), quiet);
            Ok(out.exit_code())
        }
        Command::Import(a) if a.explain => {
            let out = commands::import::explain(&a)?;
            emit(&out, Form::json(a.json), quiet);
            Ok(out.exit_code())
        }
        Command::Import(a) => {
            emit(&commands::import::import(&archive, &a, quiet)?, Form::json(a.json), quiet);
            Ok(0)
        }
        Command::Rerun { run, threshold, json } => {
            let out = commands::rerun::rerun(&archive, &run, threshold, quiet || json)?;
            emit(&out, Form::json(json), quiet);
            Ok(out.exit_code())
        }
        Command::Compare { base_pos, new_pos, base, new, threshold, fail_on, json } => {
            let groups = commands::compare::groups(base_pos, new_pos, base, new)?;
            let out = commands::compare::compare(&archive, &groups[0], &groups[1], threshold, fail_on)?;
            emit(&out, Form::json(json), quiet);
            Ok(out.exit_code())
        }
        Command::Bundle { runs, out, reports_dir, json } => {
            emit(&commands::bundle::bundle(&archive, &runs, &reports_dir, &out)?, Form::json(json), quiet);
            Ok(0)
        }
        Command::Unbundle { file, reports_dir, json } => {
            emit(&commands::bundle::unbundle(&archive, &file, &reports_dir)?, Form::json(json), quiet);
            Ok(0)
        }
        Command::Specs => {
            emit(&commands::specs::specs(&archive)?, Form::Text, quiet);
            Ok(0)
        }
        Command::Sync(_) => unreachable!("handled before the archive is opened"),
        Command::Backends { json } => {
            // `backends --json` has always been pretty-printed.
            emit(&commands::backends::backends(), if json { Form::PrettyJson } else { Form::Text }, quiet);
            Ok(0)
        }
    }
}
