//! Pages: tera Markdown → pulldown-cmark HTML, self-contained (CSS and SVG
//! charts inline). The engine, its filters and escaping, Markdown safety,
//! the charts a template asks for, and the writing of a page with its
//! charts; what a page says is the report's ([`crate::report`]) or the
//! site's ([`crate::site`]). Built-in page templates are embedded from
//! `templates/`; a same-named file in a user's template folder overrides
//! one (mdBook's model).

pub mod charts;
mod filters;
pub mod markdown;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::archive::store::write_atomic;
use crate::error::{Error, Result};
use crate::plot::{self, Chart};

/// The page templates (name, content): the HTML page and its style.
pub const PAGE_TEMPLATES: &[(&str, &str)] = &[
    ("page.html", include_str!("../../templates/page.html")),
    ("style.css", include_str!("../../templates/style.css")),
];

/// The pages' style sheet, inlined in every page.
pub fn css() -> &'static str {
    PAGE_TEMPLATES.iter().find(|(n, _)| *n == "style.css").map(|(_, t)| *t).unwrap_or_default()
}

/// Which files a report writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Format {
    Md,
    Html,
    #[default]
    Both,
}

/// A tera engine over `templates` (name, built-in text), each replaced by
/// a same-named file in `overrides` where there is one, with benchbook's
/// filters and Markdown escaping: in `.md` templates every `{{ value }}` is
/// escaped for Markdown unless a template says `| safe`.
pub fn engine(templates: Vec<(String, String)>, overrides: Option<&Path>) -> Result<tera::Tera> {
    let mut t = tera::Tera::default();
    let mut sources: Vec<(String, String)> = Vec::new();
    for (name, builtin) in templates {
        let text = match overrides.map(|d| d.join(&name)).filter(|p| p.exists()) {
            Some(p) => std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?,
            None => builtin,
        };
        sources.push((name, text));
    }
    t.add_raw_templates(sources)
        .map_err(|e| Error::Template { name: "templates".into(), message: tera_message(&e) })?;
    t.autoescape_on(vec![".md"]);
    t.set_escape_fn(markdown::escape_markdown);
    filters::register(&mut t);
    Ok(t)
}

fn tera_message(e: &tera::Error) -> String {
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg += &format!(": {s}");
        src = s.source();
    }
    msg
}

/// Render Markdown template `name` with `ctx`.
pub fn render_template(engine: &tera::Tera, name: &str, ctx: &impl serde::Serialize) -> Result<String> {
    let c = tera::Context::from_serialize(ctx)
        .map_err(|e| Error::Template { name: name.into(), message: tera_message(&e) })?;
    engine.render(name, &c).map_err(|e| Error::Template { name: name.into(), message: tera_message(&e) })
}

/// Wrap rendered Markdown into a self-contained HTML page.
pub fn render_html(
    engine: &tera::Tera,
    title: &str,
    markdown: &str,
    svgs: &BTreeMap<String, String>,
) -> Result<String> {
    let body = markdown::to_html(markdown, svgs);
    let mut c = tera::Context::new();
    c.insert("title", title);
    c.insert("body", &body);
    c.insert("css", css());
    engine.render("page.html", &c).map_err(|e| Error::Template { name: "page.html".into(), message: tera_message(&e) })
}

/// Write a page into `out`: its Markdown, its HTML with the charts it
/// asked for inline, and those charts as SVG (and PNG with `png`).
/// Returns the paths written.
#[allow(clippy::too_many_arguments)]
pub fn write_page(
    engine: &tera::Tera,
    title: &str,
    md: &str,
    charts: &[Box<dyn Chart>],
    asked: &[String],
    out: &Path,
    format: Format,
    png: bool,
) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let mut svgs = BTreeMap::new();
    let mut written = Vec::new();
    // A chart the templates did not ask for (its section is not in this
    // kind) is not written.
    for chart in charts.iter().filter(|c| asked.iter().any(|a| a == c.name())) {
        let svg = plot::to_svg(chart.as_ref())?;
        let name = format!("{}.svg", chart.name());
        if format != Format::Html {
            let p = out.join(&name);
            write_atomic(&p, svg.as_bytes())?;
            written.push(p);
        }
        if png {
            let p = out.join(format!("{}.png", chart.name()));
            write_atomic(&p, &plot::svg_to_png(chart.name(), &svg, plot::PNG_SCALE, plot::PNG_DPI)?)?;
            written.push(p);
        }
        svgs.insert(name, plot::to_page_svg(chart.as_ref(), &svg)?);
    }
    if format != Format::Html {
        let p = out.join("report.md");
        write_atomic(&p, md.as_bytes())?;
        written.push(p);
    }
    if format != Format::Md {
        let html = render_html(engine, title, md, &svgs)?;
        let p = out.join("report.html");
        write_atomic(&p, html.as_bytes())?;
        written.push(p);
    }
    Ok(written)
}
