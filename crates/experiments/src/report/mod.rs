//! The benchmark report: `results.json` (every number), `report.md` (the
//! method's Tables 2 and 3 and a per-operator table) and `report.html`
//! (self-contained, inline SVG charts).
//!
//! - [`stats`]: geometric mean and fast_p (definitions there);
//! - [`results`]: the results.json document;
//! - [`markdown`], [`html`], [`svg`]: renderers.

pub mod html;
pub mod markdown;
pub mod results;
pub mod stats;
pub mod svg;

use ascendopt_agent::AgentError;
use results::Results;
use std::path::{Path, PathBuf};

/// File names of a report folder.
pub const RESULTS_JSON: &str = "results.json";
/// The Markdown report.
pub const REPORT_MD: &str = "report.md";
/// The HTML report.
pub const REPORT_HTML: &str = "report.html";

/// Writes results.json, report.md and report.html into `dir` (created if
/// needed) and returns the path of report.html.
pub fn write_report(dir: &Path, results: &Results) -> Result<PathBuf, AgentError> {
    let io = |path: &Path, e: std::io::Error| AgentError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let json = serde_json::to_string_pretty(results).map_err(|source| AgentError::Json {
        path: dir.join(RESULTS_JSON),
        source,
    })?;
    let write = |name: &str, text: &str| -> Result<PathBuf, AgentError> {
        let path = dir.join(name);
        let tmp = dir.join(format!(".{name}.partial"));
        std::fs::write(&tmp, text).map_err(|e| io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| io(&path, e))?;
        Ok(path)
    };
    write(RESULTS_JSON, &json)?;
    write(REPORT_MD, &markdown::render(results))?;
    write(REPORT_HTML, &html::render(results, Some(dir)))
}
