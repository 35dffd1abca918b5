//! Charts as handles a template asks for: `{{ chart(id=..., alt=...) | safe }}`
//! gives the Markdown image of one of the report's charts, an unknown id is
//! an error naming the ones there are, and only the charts asked for are
//! written beside the report.

use crate::plot::Chart;
use crate::render::markdown;

/// The charts a template asks for, in order, as it renders.
pub struct Asked(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Asked {
    pub fn take(self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Register the tera function `chart(id=..., alt=...)`: a template asks
/// for one of the report's charts by its id and gets its Markdown image;
/// an id the report has no chart for is an error that names it and the
/// ones there are (a misspelt chart never drops silently). Only the charts
/// asked for are written.
pub fn ask_for_charts(engine: &mut tera::Tera, charts: &[Box<dyn Chart>]) -> Asked {
    let known: std::collections::BTreeSet<String> = charts.iter().map(|c| c.name().to_string()).collect();
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = asked.clone();
    engine.register_function("chart", move |args: &std::collections::HashMap<String, tera::Value>| {
        let id =
            args.get("id").and_then(|v| v.as_str()).ok_or("chart(): give the chart's id, e.g. chart(id=\"memcpy\")")?;
        if !known.contains(id) {
            let have = known.iter().cloned().collect::<Vec<_>>().join(", ");
            return Err(format!("chart(): this report has no chart `{id}`; it has: {have}").into());
        }
        let alt = args.get("alt").and_then(|v| v.as_str()).unwrap_or(id);
        let mut l = log.lock().unwrap_or_else(|e| e.into_inner());
        if !l.iter().any(|n| n == id) {
            l.push(id.to_string());
        }
        let esc = markdown::escape_markdown;
        Ok(tera::Value::String(format!("![{}]({}.svg)", esc(alt), esc(id))))
    });
    Asked(asked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_gets_the_charts_it_asks_for_and_a_misspelt_one_is_an_error() {
        let charts: Vec<Box<dyn Chart>> = vec![Box::new(crate::plot::bar_chart("gemm", "t", "GFLOP/s", vec![]))];
        let mut t = tera::Tera::default();
        t.add_raw_template("ok.md", "{{ chart(id=\"gemm\", alt=\"GEMM *x*\") | safe }}").unwrap();
        t.add_raw_template("typo.md", "{{ chart(id=\"gemmm\") | safe }}").unwrap();
        let asked = ask_for_charts(&mut t, &charts);
        let md = t.render("ok.md", &tera::Context::new()).unwrap();
        assert_eq!(md, "![GEMM \\*x\\*](gemm.svg)");
        assert_eq!(asked.take(), vec!["gemm".to_string()]);
        let asked = ask_for_charts(&mut t, &charts);
        let e = t.render("typo.md", &tera::Context::new()).unwrap_err();
        let mut msg = e.to_string();
        let mut src = std::error::Error::source(&e);
        while let Some(s) = src {
            msg += &s.to_string();
            src = s.source();
        }
        assert!(msg.contains("no chart `gemmm`; it has: gemm"), "{msg}");
        assert!(asked.take().is_empty());
    }
}
