//! SGLang's serving benchmark (`python -m sglang.bench_serving`): a summary
//! shaped like vLLM's (`==== Serving Benchmark Result ====`), read by the
//! same code ([`super::vllm`]) under its own name, `sglang-serve`. Its
//! block adds a `Backend:` line (the client backend it drove, a parameter),
//! `Traffic request rate` and `Max request concurrency` inside the block,
//! `E2E Latency` and retokenized token counts.

use super::{Claim, Format, ParseError, Parsed, Record};
use crate::vocab::benches::Family;

pub struct SglangServe;

const SGLANG_TOOL: &str = "sglang-serve";

impl Format for SglangServe {
    fn name(&self) -> &'static str {
        SGLANG_TOOL
    }
    fn describe(&self) -> &'static str {
        "SGLang serving benchmark summary (python -m sglang.bench_serving): throughput, TTFT/ITL/E2E latency"
    }
    fn family(&self) -> Option<Family> {
        None
    }
    /// vLLM's summary has no `Backend:` line, no retokenized token count
    /// and no `E2E Latency`; SGLang's has them.
    fn markers(&self) -> &'static [&'static str] {
        &["sglang.bench_serving", "bench_serving"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        if !text.contains("Serving Benchmark Result") {
            return None;
        }
        Claim::find(
            text,
            "a `Serving Benchmark Result` block with SGLang's lines (`Backend:`, `E2E Latency (ms)`, `(retokenized)`)",
            |l| {
                l.contains("sglang.bench_serving")
                    || l.contains("(retokenized)")
                    || l.contains("E2E Latency (ms)")
                    || l.trim_start().starts_with("Backend:")
            },
        )
    }
    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        super::vllm::summary(text, SGLANG_TOOL, "sglang", |t| t.contains("sglang"), each)
    }
}
