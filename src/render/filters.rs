//! The filters benchbook's templates use, one place for all of them.

use super::markdown;

/// The filters templates use: `html_escape`, `fenced` (a code block its
/// text cannot close), and the number formats of sentences: `sig3` (three
/// significant digits), `bytes` (`64 MiB`), `pct` (a fraction as `12.5 %`),
/// `ci_pct` (a relative half-width), `seconds` (`1.23 ms`) and
/// `fixed(digits=N)` (N decimals).
pub fn register(t: &mut tera::Tera) {
    use crate::vocab::units::{format_bytes, format_seconds, format_sig3};
    // A number's text, or `n/a` for null: a value that could not be
    // measured (serde writes a NaN as null) prints as such, never fails the page.
    fn number(v: &tera::Value, filter: &str, f: impl Fn(f64) -> String) -> tera::Result<tera::Value> {
        if v.is_null() {
            return Ok("n/a".into());
        }
        let x = v.as_f64().ok_or_else(|| tera::Error::msg(format!("filter {filter} expects a number, got {v}")))?;
        Ok(f(x).into())
    }
    type Args = std::collections::HashMap<String, tera::Value>;
    let text = |v: &tera::Value| v.as_str().map(String::from).unwrap_or_else(|| v.to_string());
    t.register_filter("html_escape", move |v: &tera::Value, _: &Args| Ok(markdown::escape_html(&text(v)).into()));
    t.register_filter("fenced", move |v: &tera::Value, _: &Args| Ok(markdown::fenced(&text(v)).into()));
    t.register_filter("sig3", |v: &tera::Value, _: &Args| number(v, "sig3", format_sig3));
    t.register_filter("pct", |v: &tera::Value, _: &Args| number(v, "pct", crate::vocab::units::format_pct));
    t.register_filter("ci_pct", |v: &tera::Value, _: &Args| number(v, "ci_pct", crate::vocab::units::format_ci_pct));
    t.register_filter("seconds", |v: &tera::Value, _: &Args| number(v, "seconds", format_seconds));
    t.register_filter("fixed", |v: &tera::Value, args: &Args| {
        let digits = args.get("digits").and_then(|d| d.as_u64()).unwrap_or(1) as usize;
        number(v, "fixed", |x| format!("{x:.digits$}"))
    });
    t.register_filter("bytes", |v: &tera::Value, _: &Args| {
        let b = v.as_u64().ok_or_else(|| tera::Error::msg(format!("filter bytes expects a byte count, got {v}")))?;
        Ok(format_bytes(b).into())
    });
}
