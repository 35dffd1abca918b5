//! The words of what a report says: each finding
//! ([`crate::analysis::findings::Said`]) is rendered by its partial,
//! `templates/sentences/<id>.md`, which formats its numbers with the
//! report's filters (`sig3`, `bytes`, `pct`, `ci_pct`, `seconds`). A user
//! rewords a report by putting a same-named file in
//! `--templates DIR/sentences/`.

//!
//! `tests/integration/sentences.rs` renders one of every finding through
//! its partial.

/// The sentence partials, embedded (name under `templates/`, text).
macro_rules! partials {
    ($($name:literal),* $(,)?) => {
        &[$((concat!("sentences/", $name, ".md"), include_str!(concat!("../../../templates/sentences/", $name, ".md")))),*]
    };
}

/// Every built-in sentence partial, and the macros they share.
pub const PARTIALS: &[(&str, &str)] = partials![
    "macros",
    "bandwidth-peak",
    "plateau",
    "unsettled",
    "cache-peak",
    "one-size",
    "no-level",
    "above-ramp",
    "saturation",
    "fixed-cost",
    "latency-inversion",
    "latency-step",
    "wide-intervals",
    "noise-target",
    "threads",
    "roofline",
    "no-roofline",
    "stream-kernel",
    "link",
    "gemm-peak",
    "metric-single",
    "metric-best",
    "loss-above-uniform",
    "one-sided",
    "one-sided-not-compared",
    "unnamed-link",
    "shared-memory",
    "no-share",
    "launch-best",
    "launch-peak",
    "pairs-shown",
    "no-timed-points",
    "precision",
];

/// Register `say(s=…)`: renders sentence `s` with its partial,
/// `sentences/<id>.md` (or `sentences/<t>.md` for `say(s=…, t=NAME)`, a
/// clause typed elsewhere), from a copy of `engine` as it stands (filters
/// and templates included). Newlines inside a partial become spaces, so a
/// partial may wrap its text; the result is already escaped.
pub fn register(engine: &mut tera::Tera) {
    let partials = engine.clone();
    engine.register_function("say", move |args: &std::collections::HashMap<String, tera::Value>| {
        let s = args.get("s").ok_or_else(|| tera::Error::msg("say() needs s=<sentence>"))?;
        let id = args
            .get("t")
            .or_else(|| s.get("id"))
            .and_then(|v| v.as_str())
            .ok_or_else(|| tera::Error::msg("say(): the sentence has no id (give t=NAME)"))?;
        let name = format!("sentences/{id}.md");
        let ctx = tera::Context::from_value(s.clone())?;
        let text = partials.render(&name, &ctx)?;
        Ok(tera::Value::String(text.split_whitespace().collect::<Vec<_>>().join(" ")))
    });
}
