//! `benchbook import`: other tools' output as one run in the archive.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::archive::Archive;
use crate::cli::print::{safe_path, terminal_safe, Render, Term};
use crate::cli::progress::{listener, Bar};
use crate::cli::ImportArgs;
use crate::error::Result;

/// The run the files became.
#[derive(Debug, Serialize)]
pub struct ImportOutput {
    pub run_id: String,
    pub run_dir: PathBuf,
    pub files: Vec<ImportedFile>,
}

/// One imported file: the format it was read as, its rows, what was odd.
#[derive(Debug, Serialize)]
pub struct ImportedFile {
    pub file: PathBuf,
    pub tool: String,
    pub rows: usize,
    pub warnings: Vec<String>,
}

pub fn import(archive: &Archive, a: &ImportArgs, quiet: bool) -> Result<ImportOutput> {
    let bar = Bar::unless(quiet);
    let source =
        crate::import::ImportSource::new(a.files.clone(), a.tool.clone()).with_origin(a.device.clone(), a.host.clone());
    let result = crate::session::import_from(archive, source, a.label.as_deref(), listener(&bar));
    if let Some(b) = &bar {
        b.finish();
    }
    let (run, parsed) = result?;
    let files = parsed
        .into_iter()
        .zip(&a.files)
        .map(|(p, f)| ImportedFile { file: f.clone(), tool: p.tool, rows: p.record_count, warnings: p.warnings })
        .collect();
    Ok(ImportOutput { run_id: run.run.id, run_dir: run.run.path, files })
}

impl Render for ImportOutput {
    /// On stderr; warnings even with `--quiet`.
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        for f in &self.files {
            let file = safe_path(&f.file);
            if !t.quiet {
                writeln!(t.err, "{file}: {} rows as {}", f.rows, terminal_safe(&f.tool))?;
            }
            for w in &f.warnings {
                writeln!(t.err, "warning: {file}: {}", terminal_safe(w))?;
            }
        }
        if !t.quiet {
            writeln!(t.err, "imported run {} ({})", terminal_safe(&self.run_id), safe_path(&self.run_dir))?;
        }
        Ok(())
    }
}

/// `import --explain`: how each file would be read, writing nothing.
#[derive(Debug, Serialize)]
pub struct ExplainOutput {
    pub files: Vec<crate::import::Explanation>,
}

impl ExplainOutput {
    /// 0 when every file would import, 1 when any is refused.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.files.iter().any(|f| f.error.is_some()))
    }
}

pub fn explain(a: &ImportArgs) -> Result<ExplainOutput> {
    let mut files = Vec::new();
    for path in &a.files {
        // A file that cannot be read is explained as refused, and the
        // others still are.
        let read = std::fs::read(path).map_err(|e| format!("cannot read it: {e}")).and_then(|data| {
            crate::import::decode(path, &data).map(|(t, n)| (t.into_owned(), n)).map_err(|e| e.to_string())
        });
        files.push(match read {
            Ok((text, note)) => {
                let mut e = crate::import::explain(path, &text, a.tool.as_deref());
                e.warnings.extend(note);
                e
            }
            Err(why) => crate::import::Explanation::refused(path, why),
        });
    }
    Ok(ExplainOutput { files })
}

impl Render for ExplainOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        for f in &self.files {
            writeln!(t.out, "{}: {} lines", safe_path(&f.file), f.lines)?;
            if f.answers.is_empty() {
                // Not read at all.
                writeln!(t.out, "  refused: {}", terminal_safe(f.error.as_deref().unwrap_or("")))?;
                continue;
            }
            writeln!(t.out, "  detection (formats in order; the first claim wins):")?;
            let silent = f.answers.iter().filter(|a| a.claim.is_none() && a.named.is_none()).count();
            for a in &f.answers {
                if let Some(c) = &a.claim {
                    writeln!(t.out, "    {:<17} claims it at line {}: {}", a.format, c.line, c.why)?;
                } else if let Some(n) = &a.named {
                    writeln!(
                        t.out,
                        "    {:<17} no layout claims it, but line {} names the tool (`{}`)",
                        a.format,
                        n.line,
                        terminal_safe(n.marker)
                    )?;
                }
                if let Some(q) = &a.quote {
                    writeln!(t.out, "    {:<17} `{}`", "", terminal_safe(q))?;
                }
            }
            writeln!(t.out, "    {silent} other formats: no claim")?;
            match &f.read_as {
                Some(tool) => {
                    let version = match &f.version {
                        Some(v) => match v.line {
                            Some(line) => format!(", version {} (line {line})", terminal_safe(&v.text)),
                            None => format!(", version {}", terminal_safe(&v.text)),
                        },
                        None => ", no version stated".into(),
                    };
                    writeln!(t.out, "  read as {}{version}", terminal_safe(tool))?;
                }
                None => writeln!(t.out, "  read as: no format")?,
            }
            for b in &f.blocks {
                let lines = if b.first_line == b.last_line {
                    format!("line {}", b.first_line)
                } else {
                    format!("lines {}-{}", b.first_line, b.last_line)
                };
                let rows = if b.records == 1 { "record " } else { "records" };
                writeln!(t.out, "    {lines:<16} {:>6} {rows}  {}", b.records, terminal_safe(&b.what))?;
            }
            for w in &f.warnings {
                writeln!(t.out, "  warning: {}", terminal_safe(w))?;
            }
            if let Some(e) = &f.error {
                writeln!(t.out, "  refused: {}", terminal_safe(e))?;
            }
        }
        Ok(())
    }
}
