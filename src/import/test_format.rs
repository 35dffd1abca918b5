//! A format that exists only in tests, to show (and keep true) what adding
//! an importer takes: this file, its one line in [`super::formats`], and its
//! tests. It reads `step N tokens_per_s X` lines as a named metric, declares
//! the GEMM/training write-up as its family, and from there `import --help`
//! lists it, `import` detects it, the manifest records its family and the
//! report picks the training write-up for it; no other file names it.

use super::{metric_record, Claim, Format, MetricValue, ParseError, Parsed};
use crate::vocab::benches::Family;
use crate::vocab::metrics::{Better, Params};

pub(crate) const NAME: &str = "test-steps";

pub struct TestSteps;

impl Format for TestSteps {
    fn name(&self) -> &'static str {
        NAME
    }

    fn describe(&self) -> &'static str {
        "test-only: `step N tokens_per_s X` lines"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Gemm)
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        text.starts_with("step ").then_some(Claim { line: 1, why: "test lines" })
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        let mut records = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let f: Vec<&str> = line.split_whitespace().collect();
            let [_, step, _, value] = f[..] else {
                return Err(ParseError::new(i + 1, "expected `step N tokens_per_s X`"));
            };
            let value: f64 = value.parse().map_err(|_| ParseError::new(i + 1, "not a number"))?;
            let params: Params = [("step".to_string(), serde_json::json!(step.parse::<u64>().unwrap_or(0)))].into();
            let m = MetricValue { name: "tokens_per_s", value, unit: "tokens/s", better: Better::Higher };
            records.push(metric_record(NAME, m, &params, i + 1, "read"));
        }
        Ok(Parsed { tool: NAME.into(), backend: NAME.into(), records, ..Parsed::default() })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::archive::manifest::{Manifest, RunConfig, RunOrigin};
    use crate::report::Kind;
    use crate::vocab::config::ImportedFile;

    #[test]
    fn a_new_importer_is_listed_detected_and_reported_by_its_family() {
        let text = "step 1 tokens_per_s 100\nstep 2 tokens_per_s 110\n";
        let parsed = super::super::parse(Path::new("log.txt"), text, None).unwrap();
        assert_eq!((parsed.tool.as_str(), parsed.records.len()), (super::NAME, 2));
        assert_eq!(parsed.family, Some(crate::vocab::benches::Family::Gemm));
        assert!(crate::cli::import_help().contains("test-steps        test-only"));
        // The report kind of its rows comes from the family the import recorded.
        let file = ImportedFile {
            file: "log.txt".into(),
            tool: parsed.tool.clone(),
            tool_version: None,
            command: None,
            settings: None,
            records: 2,
            device_given: None,
            host_given: None,
            warnings: Vec::new(),
            family: parsed.family,
            link: None,
        };
        let m = Manifest::begin(
            "r",
            RunOrigin::Import(vec![super::NAME.into()]),
            RunConfig::Import { import: vec![file] },
            vec![],
        );
        let metric = crate::analysis::workload::MetricStat {
            run_id: "r".into(),
            point: 0,
            bench: super::NAME.into(),
            device: "unknown".into(),
            source: String::new(),
            metric: "tokens_per_s".into(),
            unit: "tokens/s".into(),
            better: crate::vocab::metrics::Better::Higher,
            params: Default::default(),
            samples: 1,
            median: 100.0,
            mean: 100.0,
            min: 100.0,
            max: 100.0,
            std_dev: 0.0,
            peak: 100.0,
            ci: None,
        };
        assert_eq!(Kind::detect(&[], std::slice::from_ref(&metric), std::slice::from_ref(&m)), Kind::Gemm);
        assert_eq!(Kind::detect(&[], &[metric], &[]), Kind::Run);
    }
}
