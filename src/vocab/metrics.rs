//! Named metrics (schema v4): application-level results such as tokens/s,
//! samples/s, TTFT or the training loss, each with its unit, the direction
//! that is better and the point's parameters as named axes (`model`,
//! `gpus`, `request_rate`, ...: any name a user gives).
//!
//! The parameters are stored as one canonical JSON object per point (keys
//! sorted, values strings, numbers or booleans), so that two runs' points
//! match exactly when they name the same parameters; the analysis expands
//! them into one column per name for polars to filter and group by.
//!
//! The JSON-lines protocol of `run exec` is defined here too: one object
//! per line, `{"metric": "tokens_per_s", "value": 4242.5, "unit":
//! "tokens/s", "params": {"model": "7b", "gpus": 8}}`, with an optional
//! `"better": "higher" | "lower"`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Throughput: tokens/s, samples/s, TFLOP/s.
    Higher,
    /// Time, latency, loss, memory.
    Lower,
}

impl Better {
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }

    pub fn parse(s: &str) -> Option<Better> {
        match s {
            "higher" => Some(Better::Higher),
            "lower" => Some(Better::Lower),
            _ => None,
        }
    }

    /// The direction a unit or name implies, when it implies one: a rate
    /// (`…/s`) is higher-better; a time unit, a latency or a loss is
    /// lower-better. Anything else (`GB`, a count) must say.
    pub fn infer(metric: &str, unit: &str) -> Option<Better> {
        let unit = unit.trim();
        if unit.ends_with("/s") || unit.ends_with("/s/GPU") || unit.ends_with("/s/gpu") {
            return Some(Better::Higher);
        }
        if matches!(unit, "s" | "ms" | "us" | "µs" | "ns" | "min" | "h") {
            return Some(Better::Lower);
        }
        let m = metric.to_ascii_lowercase();
        if m.contains("loss") || m.contains("latency") || m.contains("perplexity") {
            return Some(Better::Lower);
        }
        None
    }
}

/// The largest cross-entropy loss a language model can plausibly log:
/// ln(10^6), a uniform guess over a million tokens. A per-token loss above
/// it (a vocabulary is smaller) says the figure is not a per-token mean, or
/// the numerics are off.
pub const LOSS_BOUND: f64 = 13.815510557964274;

/// Whether a metric is a training loss (a dimensionless cross-entropy):
/// `loss`, `lm loss`, `train_loss`, `loss_avg`.
pub fn is_loss(metric: &str, unit: &str) -> bool {
    let m = metric.to_ascii_lowercase();
    let named = m == "loss" || m.ends_with("_loss") || m.ends_with(" loss") || m.starts_with("loss_");
    named && matches!(unit.trim(), "" | "1")
}

/// A point's named parameters, in canonical (sorted) order.
pub type Params = BTreeMap<String, Value>;

/// Why a parameter set cannot be stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamError(pub String);

/// Check a parameter name: letters, digits, `_`, `-` and `.`, starting
/// with a letter, at most 64 characters (it becomes a column name).
pub fn check_param_name(name: &str) -> Result<(), ParamError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ParamError(format!(
            "parameter name `{}` must start with a letter and use only letters, digits, `_`, `-` and `.` (at most 64)",
            name.escape_debug()
        )))
    }
}

/// Parameters from a JSON object: every key checked, every value a string,
/// a finite number or a boolean (nested values and nulls are refused).
pub fn params_from_json(v: &Value) -> Result<Params, ParamError> {
    let Value::Object(map) = v else {
        return Err(ParamError(format!("`params` must be an object of name → value, not {}", kind(v))));
    };
    let mut out = Params::new();
    for (k, v) in map {
        check_param_name(k)?;
        match v {
            Value::String(_) | Value::Bool(_) => {}
            Value::Number(n) if n.as_f64().is_some_and(f64::is_finite) => {}
            other => {
                return Err(ParamError(format!(
                    "parameter `{k}` is {}; a parameter is a string, a number or a boolean",
                    kind(other)
                )))
            }
        }
        out.insert(k.clone(), v.clone());
    }
    Ok(out)
}

/// `k=v` from the command line: the value is a number when it parses as
/// one (`gpus=8`), a string otherwise (`model=7b`).
pub fn param_from_arg(arg: &str) -> Result<(String, Value), ParamError> {
    let Some((k, v)) = arg.split_once('=') else {
        return Err(ParamError(format!("`{}` is not NAME=VALUE (e.g. --param gpus=8)", arg.escape_debug())));
    };
    check_param_name(k)?;
    Ok((k.to_string(), scalar(v)))
}

/// A text value as JSON: an integer or finite float when it is one.
pub fn scalar(v: &str) -> Value {
    if let Ok(i) = v.parse::<i64>() {
        return Value::from(i);
    }
    match v.parse::<f64>() {
        Ok(f) if f.is_finite() && !v.trim().is_empty() && v.trim() == v => Value::from(f),
        _ => Value::String(v.to_string()),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number that is not finite",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The stored form: compact JSON with sorted keys (`{"gpus":8,"model":"7b"}`);
/// `None` for no parameters.
pub fn params_text(p: &Params) -> Option<String> {
    (!p.is_empty()).then(|| serde_json::to_string(p).expect("parameters always serialize"))
}

/// Read the stored form back; text that is not an object reads as empty.
pub fn parse_params(text: Option<&str>) -> Params {
    text.and_then(|t| serde_json::from_str::<Params>(t).ok()).unwrap_or_default()
}

/// A parameter's value as text, without JSON quotes: `7b`, `8`, `0.5`.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `gpus=8 model=7b`, for labels.
/// A parameter set as a key to group by: each name with its value as JSON
/// (`"1"` and `1` stay apart, as the string `params_label` prints does not
/// keep them). Metric series and groups are keyed by it, never by their
/// display string.
pub type ParamsKey = Vec<(String, String)>;

/// `p` as a [`ParamsKey`].
pub fn params_key(p: &Params) -> ParamsKey {
    p.iter().map(|(k, v)| (k.clone(), v.to_string())).collect()
}

pub fn params_label(p: &Params) -> String {
    p.iter().map(|(k, v)| format!("{k}={}", value_text(v))).collect::<Vec<_>>().join(" ")
}

/// One metric line of the `run exec` protocol, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricLine {
    pub metric: String,
    pub value: f64,
    pub unit: String,
    pub better: Better,
    pub params: Params,
}

/// A protocol line that cannot be read: which field, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct LineError {
    pub field: String,
    pub message: String,
}

fn line_err(field: &str, message: impl Into<String>) -> LineError {
    LineError { field: field.into(), message: message.into() }
}

/// Check a metric name: like a parameter name (it is the point's key).
pub fn check_metric_name(name: &str) -> Result<(), String> {
    check_param_name(name).map_err(|e| e.0.replacen("parameter name", "metric name", 1))
}

/// Parse one line of the protocol. Unknown fields are refused, so that a
/// misspelt `"parmas"` is never silently ignored.
pub fn parse_metric_line(line: &str) -> Result<MetricLine, LineError> {
    let v: Value = serde_json::from_str(line)
        .map_err(|e| line_err("(line)", format!("not a JSON object: {e} (column {})", e.column())))?;
    let Value::Object(map) = v else {
        return Err(line_err("(line)", format!("expected a JSON object, found {}", kind(&v))));
    };
    for k in map.keys() {
        if !matches!(k.as_str(), "metric" | "value" | "unit" | "params" | "better") {
            return Err(line_err(
                k,
                format!("unknown field `{}`; fields are metric, value, unit, params, better", k.escape_debug()),
            ));
        }
    }
    let metric = match map.get("metric") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(line_err("metric", format!("must be a string, found {}", kind(other)))),
        None => return Err(line_err("metric", "missing (e.g. \"metric\": \"tokens_per_s\")")),
    };
    check_metric_name(&metric).map_err(|m| line_err("metric", m))?;
    let value = match map.get("value") {
        Some(Value::Number(n)) => n.as_f64().filter(|f| f.is_finite()),
        Some(other) => return Err(line_err("value", format!("must be a number, found {}", kind(other)))),
        None => return Err(line_err("value", "missing")),
    }
    .ok_or_else(|| line_err("value", "must be a finite number"))?;
    let unit = match map.get("unit") {
        Some(Value::String(s)) if s.chars().count() <= 32 && !s.chars().any(char::is_control) => s.clone(),
        Some(Value::String(_)) => return Err(line_err("unit", "must be at most 32 printable characters")),
        Some(other) => return Err(line_err("unit", format!("must be a string, found {}", kind(other)))),
        None => {
            return Err(line_err(
                "unit",
                "missing: every metric names its unit (e.g. \"tokens/s\", \"ms\", \"GB\", \"1\")",
            ))
        }
    };
    let params = match map.get("params") {
        None => Params::new(),
        Some(v) => params_from_json(v).map_err(|e| line_err("params", e.0))?,
    };
    let better = match map.get("better") {
        Some(Value::String(s)) => {
            Better::parse(s).ok_or_else(|| line_err("better", format!("must be \"higher\" or \"lower\", not {s:?}")))?
        }
        Some(other) => return Err(line_err("better", format!("must be \"higher\" or \"lower\", found {}", kind(other)))),
        None => Better::infer(&metric, &unit).ok_or_else(|| {
            line_err(
                "better",
                format!("missing, and unit `{unit}` does not say which way `{metric}` improves: add \"better\": \"higher\" or \"lower\""),
            )
        })?,
    };
    Ok(MetricLine { metric, value, unit, better, params })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_with_params_and_inferred_direction() {
        let l = parse_metric_line(
            r#"{"metric": "tokens_per_s", "value": 4242.5, "unit": "tokens/s", "params": {"model": "7b", "gpus": 8}}"#,
        )
        .unwrap();
        assert_eq!(l.better, Better::Higher);
        assert_eq!(params_text(&l.params).unwrap(), r#"{"gpus":8,"model":"7b"}"#);
        assert_eq!(params_label(&l.params), "gpus=8 model=7b");
        let l = parse_metric_line(r#"{"metric":"loss","value":2.5,"unit":"1","params":{"step":10}}"#).unwrap();
        assert_eq!(l.better, Better::Lower);
    }

    #[test]
    fn bad_lines_name_their_field() {
        let field = |s: &str| parse_metric_line(s).unwrap_err().field;
        assert_eq!(field(r#"{"value": 1, "unit": "s"}"#), "metric");
        assert_eq!(field(r#"{"metric": "x", "value": "fast", "unit": "s"}"#), "value");
        assert_eq!(field(r#"{"metric": "x", "value": 1}"#), "unit");
        assert_eq!(field(r#"{"metric": "x", "value": 1, "unit": "GB"}"#), "better");
        assert_eq!(field(r#"{"metric": "x", "value": 1, "unit": "s", "parmas": {}}"#), "parmas");
        assert_eq!(field(r#"{"metric": "x", "value": 1, "unit": "s", "params": {"a": [1]}}"#), "params");
        assert_eq!(field(r#"{"metric": "x y", "value": 1, "unit": "s"}"#), "metric");
        assert_eq!(field("not json"), "(line)");
    }

    #[test]
    fn command_line_params_are_typed() {
        assert_eq!(param_from_arg("gpus=8").unwrap(), ("gpus".into(), Value::from(8)));
        assert_eq!(param_from_arg("rate=0.5").unwrap().1, Value::from(0.5));
        assert_eq!(param_from_arg("model=7b").unwrap().1, Value::from("7b"));
        assert!(param_from_arg("nogood").is_err());
        assert!(param_from_arg("9lives=1").is_err());
    }
}
