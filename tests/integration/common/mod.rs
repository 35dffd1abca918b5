//! Helpers shared by the integration tests.
#![allow(dead_code)]

use benchbook::prelude::*;

/// A sweep small enough to finish in seconds in a debug build.
pub fn tiny_config() -> BenchConfig {
    let mut cfg = BenchConfig::preset(Preset::Quick);
    // CPU only, so counts do not depend on whether this machine has a GPU
    // (tests/integration/backends.rs covers the GPU backends).
    cfg.backends = vec![BackendKind::Cpu];
    cfg.benches = Bench::cpu().collect();
    cfg.memcpy_sizes = vec![4096, 65536, 1 << 20];
    cfg.stream_sizes = vec![1 << 16];
    cfg.threads = vec![1, 2];
    cfg.gemm_shapes = vec![[32, 32, 32], [48, 40, 24]];
    cfg.gemm_dtypes = vec![Dtype::F32, Dtype::F64];
    cfg.stop = StopRule {
        warmup_seconds: 0.005,
        min_samples: 3,
        min_seconds: 0.005,
        max_seconds: 0.03,
        target_rsd: 0.005,
        sample_seconds: 0.0005,
        max_samples: 200,
        // Rounds as a real run has them, fewer to keep tests quick.
        rounds: 3,
        min_rounds: 2,
        ..StopRule::default()
    };
    cfg
}

pub fn tiny_run(archive: &Archive, label: Option<&str>) -> RunResult {
    run(archive, &tiny_config(), label, &benchbook::vocab::progress::Silent).expect("tiny run")
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_benchbook")
}

/// Chromium (Debian's `chromium`, or Chrome) when one is on PATH.
pub fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| std::process::Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// What headless Chromium measured on a page once it loaded.
#[derive(Debug, serde::Deserialize)]
pub struct PageProbe {
    /// The viewport width and the page's scroll width (wider: the page
    /// scrolls sideways).
    pub width: f64,
    pub scroll_width: f64,
    /// Elements wider than the page (tag.class), outside scroll boxes.
    pub wide: Vec<String>,
    /// Boxes whose content is wider than they show (scrolled on screen,
    /// cut on paper).
    pub clipped: Vec<String>,
    /// Charts shown (a chart's other rendering, hidden at this width,
    /// does not count).
    pub svgs: usize,
    /// Charts whose figure scrolls sideways: shown cut.
    pub charts_cut: Vec<String>,
    /// The smallest chart text as drawn, px (its box's height).
    pub text_min_px: f64,
    /// Chart texts whose box runs outside their chart (cut).
    pub text_out: Vec<String>,
    /// Errors the page raised while loading.
    pub errors: Vec<String>,
    pub title: String,
}

/// Open `html` in headless Chromium at `width` px and measure it: a copy
/// in a scratch folder gets a probe script (its CSP, which forbids scripts, is
/// removed from the copy only) that writes its findings into the DOM.
/// `None` when no Chromium is installed (CI installs it and sets CI).
pub fn chromium_probe(html: &std::path::Path, width: u32) -> Option<PageProbe> {
    chromium_probe_media(html, width, false)
}

/// [`chromium_probe`] with the page's print rules applied on screen
/// (`@media print` read as `@media all`), at a paper width: whatever runs
/// past the width would be cut on paper.
pub fn chromium_probe_print(html: &std::path::Path, width: u32) -> Option<PageProbe> {
    chromium_probe_media(html, width, true)
}

fn chromium_probe_media(html: &std::path::Path, width: u32, print: bool) -> Option<PageProbe> {
    let Some(browser) = chromium() else {
        assert!(std::env::var("CI").is_err(), "Chromium is required in CI (apt-get install chromium)");
        eprintln!("SKIPPED: no chromium on PATH; install Debian's `chromium` to run this test");
        return None;
    };
    let page = std::fs::read_to_string(html).unwrap();
    let csp = page.lines().find(|l| l.contains("Content-Security-Policy")).unwrap_or("").to_string();
    assert!(!csp.is_empty(), "the report sets a CSP");
    const PROBE: &str = r#"<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message || e.type)), true);
window.addEventListener('load', () => {
  const w = document.documentElement.clientWidth;
  const inScrollBox = e => { for (let p = e.parentElement; p; p = p.parentElement) { const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll') return true; } return false; };
  const wide = [...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().width > w + 1 && !inScrollBox(e)).map(e => e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined ? '.' + e.className : ''));
  const clipped = [...document.querySelectorAll('main *')].filter(e => { const o = getComputedStyle(e).overflowX; return (o === 'auto' || o === 'scroll' || o === 'hidden') && e.scrollWidth > e.clientWidth + 1; }).map(e => e.tagName.toLowerCase());
  const shown = e => e.getClientRects().length > 0;
  const svgs = [...document.querySelectorAll('svg')].filter(shown);
  const chartsCut = [...document.querySelectorAll('figure.chart')].filter(f => f.scrollWidth > f.clientWidth + 1).map(f => (f.getAttribute('aria-label') || '').slice(0, 60));
  const texts = [...document.querySelectorAll('main svg text')].filter(t => shown(t.ownerSVGElement) && t.textContent.trim() !== '');
  const textMin = texts.reduce((m, t) => Math.min(m, t.getBoundingClientRect().height), 1e9);
  const textOut = texts.filter(t => { const s = t.ownerSVGElement.getBoundingClientRect(), r = t.getBoundingClientRect(); return r.left < s.left - 1 || r.right > s.right + 1 || r.top < s.top - 1 || r.bottom > s.bottom + 1; }).map(t => t.textContent.trim().slice(0, 60));
  const out = document.createElement('pre'); out.id = 'probe';
  out.textContent = 'PROBE' + JSON.stringify({width: w, scroll_width: document.documentElement.scrollWidth, wide: wide.slice(0, 20), clipped: clipped.slice(0, 20), svgs: svgs.length, charts_cut: chartsCut.slice(0, 20), text_min_px: texts.length ? textMin : 1e9, text_out: textOut.slice(0, 20), errors: window.__errors, title: document.title}) + 'END';
  document.body.appendChild(out);
});
</script>"#;
    let mut probed = page.replace(&csp, "").replacen("<head>", &format!("<head>\n{PROBE}"), 1);
    if print {
        assert!(probed.contains("@media print"), "the report has print rules");
        probed = probed.replace("@media print", "@media all");
    }
    // The probed copy lives in a scratch folder, never beside the page.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("probe.html");
    std::fs::write(&copy, probed).unwrap();
    let o = chromium_dump_dom(browser, &copy, width, &dir.path().join("profile"));
    let dom = String::from_utf8_lossy(&o.stdout);
    let json = dom
        .split_once("<pre id=\"probe\">PROBE")
        .and_then(|(_, rest)| rest.split_once("END"))
        .map(|(j, _)| j.replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
        .unwrap_or_else(|| panic!("the probe ran: {}", String::from_utf8_lossy(&o.stderr)));
    Some(serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}")))
}

/// A screenshot of the top of `page` (`width` × 2000 px) written to
/// `png`, for a person to review; returns whether Chromium wrote it.
pub fn chromium_screenshot(browser: &str, page: &std::path::Path, width: u32, png: &std::path::Path) -> bool {
    let profile = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .arg(format!("--window-size={width},2000"))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    o.status.success() && png.exists()
}

/// Headless Chromium's DOM of `page` after it loaded, at `width` px, with
/// a throwaway profile in `profile`.
pub fn chromium_dump_dom(
    browser: &str,
    page: &std::path::Path,
    width: u32,
    profile: &std::path::Path,
) -> std::process::Output {
    std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--window-size={width},900"))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap()
}
