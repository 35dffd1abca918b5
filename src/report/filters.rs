//! The filters benchbook's templates use, one place for all of them.

use super::markdown;

/// The filters templates use: `html_escape`, `fenced` (a code block its
/// text cannot close), and the number formats of sentences: `sig3` (three
/// significant digits), `bytes` (`64 MiB`), `pct` (a fraction as `12.5 %`),
/// `ci_pct` (a relative half-width), `seconds` (`1.23 ms`) and
/// `fixed(digits=N)` (N decimals).
pub fn register(t: &mut tera::Tera) {
    use crate::vocab::units::{format_bytes, format_seconds, format_sig3};
    fn number(v: &tera::Value, filter: &str) -> tera::Result<f64> {
        v.as_f64().ok_or_else(|| tera::Error::msg(format!("filter {filter} expects a number, got {v}")))
    }
    type Args = std::collections::HashMap<String, tera::Value>;
    let text = |v: &tera::Value| v.as_str().map(String::from).unwrap_or_else(|| v.to_string());
    t.register_filter("html_escape", move |v: &tera::Value, _: &Args| Ok(markdown::escape_html(&text(v)).into()));
    t.register_filter("fenced", move |v: &tera::Value, _: &Args| Ok(markdown::fenced(&text(v)).into()));
    t.register_filter("sig3", |v: &tera::Value, _: &Args| Ok(format_sig3(number(v, "sig3")?).into()));
    t.register_filter("pct", |v: &tera::Value, _: &Args| {
        Ok(crate::report::context::prose::pct(number(v, "pct")?).into())
    });
    t.register_filter("ci_pct", |v: &tera::Value, _: &Args| {
        Ok(crate::report::context::prose::ci_pct(number(v, "ci_pct")?).into())
    });
    t.register_filter("seconds", |v: &tera::Value, _: &Args| Ok(format_seconds(number(v, "seconds")?).into()));
    t.register_filter("fixed", |v: &tera::Value, args: &Args| {
        let digits = args.get("digits").and_then(|d| d.as_u64()).unwrap_or(1) as usize;
        Ok(format!("{:.*}", digits, number(v, "fixed")?).into())
    });
    t.register_filter("bytes", |v: &tera::Value, _: &Args| {
        let b = v.as_u64().ok_or_else(|| tera::Error::msg(format!("filter bytes expects a byte count, got {v}")))?;
        Ok(format_bytes(b).into())
    });
}
