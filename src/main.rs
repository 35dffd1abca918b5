//! The `benchbook` binary: parse flags, install the Ctrl-C handler, hand
//! over to the library, print errors, exit with a meaningful code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = benchbook::cli::Cli::parse();
    // First Ctrl-C (or SIGTERM): a measurement finishes the current sample,
    // archives what is done and marks the run interrupted; an import is
    // cancelled and leaves nothing. A second one exits at once; the files on
    // disk are complete either way (replaced atomically, imports staged).
    let _ = ctrlc::set_handler(|| {
        if benchbook::vocab::interrupt::requested() {
            std::process::exit(130);
        }
        benchbook::vocab::interrupt::request();
        eprintln!("\n{}", benchbook::vocab::interrupt::message());
    });
    match benchbook::cli::main_with(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let code = e.exit_code();
            let e = anyhow::Error::from(e);
            // Errors quote what they were given (run ids, file contents):
            // shown terminal-safe, a line at a time.
            let text = format!("{e:#}");
            let lines: Vec<_> = text.split('\n').map(benchbook::cli::terminal_safe).collect();
            eprintln!("error: {}", lines.join("\n"));
            ExitCode::from(code)
        }
    }
}
