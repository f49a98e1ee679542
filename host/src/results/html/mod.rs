//! The HTML reports: one self-contained file that opens from disk in any
//! browser and asks the network for nothing. Its Content-Security-Policy
//! forbids every outside request; styles and the script are inline
//! (`page.css`, `common.js` and the page's view), the charts inline SVG the
//! script draws, and the data one JSON document, deflated and base64'd in a
//! `<script type="application/octet-stream">` that the script inflates
//! (`DecompressionStream`) and reads. Base64 holds no `<`, `&` or quote, so
//! no text of a case can end the element or become markup; compressed, a
//! 10,000-case run's data is a tenth of its JSON.
//!
//! Three pages: a run's report ([`render_report`], view `run.js`, data
//! [`model`], with the sections of `assess`, `eval` and `validate` when the
//! run was one), two runs compared ([`render_diff_to`], view `diff.js`,
//! data the [`RunDiff`] `assay diff --json` prints), and the history of
//! several runs ([`render_history_to`], view `history.js`, data
//! `history.rs`).
//!
//! What a page shows is computed here, with the library's own code (the
//! Assessor's failure modes, the suites' case scores, the diff), so the
//! page and the terminal never disagree; the script only draws it and
//! renders one page of a long table at a time, so that 10,000 cases stay
//! fast. It puts every text in the page as text (never as markup).

mod deflate;
mod history;
mod model;

use crate::errors::HtmlReportError;
use crate::private_files;
use crate::results::RunDiff;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The pages' styles.
const CSS: &str = include_str!("page.css");
/// What every page's script shares: helpers and how the data is read.
const COMMON_JS: &str = include_str!("common.js");
/// The view of one run.
const RUN_JS: &str = include_str!("run.js");
/// The view of two runs compared.
const DIFF_JS: &str = include_str!("diff.js");
/// The view of several runs.
const HISTORY_JS: &str = include_str!("history.js");

/// Allows nothing from outside the file: inline styles and scripts, and
/// images only as `data:` URLs.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// How hard the data is deflated: 6 is zlib's default, within a few
/// percent of the smallest at a fraction of the time.
const DEFLATE_LEVEL: u8 = 6;

/// Writes the report of the results directory `dir` to `dir/report.html`
/// and returns its path.
pub fn render_report(dir: &Path) -> Result<PathBuf, HtmlReportError> {
    let path = dir.join("report.html");
    render_report_to(dir, &path)?;
    Ok(path)
}

/// Writes the report of the results directory `dir` to `path` (as `assay
/// run --html FILE` does). Results hold the agent's answers, so the report
/// is private (0600), as they are. The page is written as its data is
/// read: what it holds at once is the compressor's window and the page's
/// totals, whatever the run's size.
pub fn render_report_to(dir: &Path, path: &Path) -> Result<(), HtmlReportError> {
    let title = format!("assay report: {}", model::title(dir));
    write_page_with(path, &title, RUN_JS, |json| model::data(dir, json))
}

/// Writes the page of two runs compared to `path` (`assay diff --html
/// FILE`): the verdict, the counts of both runs, every case whose status
/// changed, added and removed cases, and how each key's scores moved.
pub fn render_diff_to(diff: &RunDiff, path: &Path) -> Result<(), HtmlReportError> {
    let name = |dir: &Path| dir.file_name().unwrap_or(dir.as_os_str()).to_string_lossy().into_owned();
    let title = format!("assay diff: {} → {}", name(&diff.old.dir), name(&diff.new.dir));
    let regressions = diff.verdict.regressions.iter().map(|r| r.describe()).collect();
    write_page(path, &title, DIFF_JS, &DiffPage { title: title.clone(), diff, regressions })
}

/// Writes the history of `runs` (two or more, oldest first) to `path`
/// (`assay report A B C…`): each run's counts, pass rate and mean score per
/// check key, the pass rate drawn across them, and the cases whose status
/// changed from each run to the next.
pub fn render_history_to(runs: &[crate::results::ResultsOfRun], path: &Path) -> Result<(), HtmlReportError> {
    let page = history::history(runs);
    write_page(path, &format!("assay history: {}", page.title), HISTORY_JS, &page)
}

/// What the diff page shows: the diff as `assay diff --json` prints it,
/// and the verdict's reasons worded as the terminal words them.
#[derive(Serialize)]
struct DiffPage<'a> {
    title: String,
    diff: &'a RunDiff,
    regressions: Vec<String>,
}

/// Writes one page of `data`, private (0600).
fn write_page<T: Serialize>(path: &Path, title: &str, view: &str, data: &T) -> Result<(), HtmlReportError> {
    write_page_with(path, title, view, |json| {
        serde_json::to_writer(json, data).map_err(|e| HtmlReportError::Write { path: path.to_owned(), cause: e.into() })
    })
}

/// Writes one page to `path`, private (0600): `view` draws the data
/// `write_data` writes as JSON, which goes into the page deflated and
/// base64'd as it is written.
fn write_page_with(
    path: &Path,
    title: &str,
    view: &str,
    write_data: impl FnOnce(&mut dyn Write) -> Result<(), HtmlReportError>,
) -> Result<(), HtmlReportError> {
    let failed = |cause: std::io::Error| HtmlReportError::Write { path: path.to_owned(), cause };
    // Written beside it and renamed when whole: a page whose data failed
    // half way is never left where the report goes.
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let written = (|| {
        let mut out = std::io::BufWriter::new(private_files::create(&partial).map_err(failed)?);
        out.write_all(page_head(title).as_bytes()).map_err(failed)?;
        let base64 = base64::write::EncoderWriter::new(&mut out, &base64::engine::general_purpose::STANDARD);
        let mut deflater = deflate::Deflater::new(base64, DEFLATE_LEVEL);
        write_data(&mut deflater)?;
        deflater.finish().map_err(failed)?.finish().map_err(failed)?;
        out.write_all(page_tail(view).as_bytes()).map_err(failed)?;
        out.into_inner().map_err(|e| failed(e.into_error()))?;
        std::fs::rename(&partial, path).map_err(failed)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

/// A page up to its data.
fn page_head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CONTENT_SECURITY_POLICY}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n\
         <noscript>This report draws itself with JavaScript: allow scripts for this file.</noscript>\n\
         <main id=\"app\"></main>\n\
         <script type=\"application/octet-stream\" id=\"data\">",
        title = escape_text(title),
    )
}

/// A page after its data: `view` draws it.
fn page_tail(view: &str) -> String {
    format!(
        "</script>\n<script>\n(function () {{\n{COMMON_JS}\n{view}\nload(draw);\n}})();\n</script>\n</body>\n</html>\n"
    )
}

/// Text made safe in HTML.
fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;
    use crate::report::{Redactor, ResultsDir};
    use crate::run::Reporter;

    /// A results directory of the reporters' fixed run, plus a case whose
    /// every text tries to break out of the page.
    fn results_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut cases = fixtures::cases();
        let mut hostile = cases[0].clone();
        hostile.id = "</script><script>alert(1)</script><!--".into();
        hostile.agent = "</SCRIPT ><img src=x onerror=alert(2)>".into();
        cases.push(hostile);
        let summary = fixtures::summary(&cases);
        let mut results = ResultsDir::create(dir.path()).unwrap().with_redactor(Redactor::none());
        for event in fixtures::events(&cases, &summary) {
            results.report(&event).unwrap();
        }
        dir
    }

    #[test]
    fn no_text_of_a_case_can_end_the_data_or_open_a_comment() {
        let dir = results_dir();
        let path = render_report(dir.path()).unwrap();
        assert_eq!(path, dir.path().join("report.html"));
        let html = std::fs::read_to_string(&path).unwrap();
        let lower = html.to_ascii_lowercase();
        // The page's own two scripts close, and nothing else does.
        assert_eq!(lower.matches("</script").count(), 2, "{html}");
        assert_eq!(lower.matches("<script").count(), 2, "{html}");
        assert!(!html.contains("<!--") && !html.contains("<img"), "{html}");
        // The data reads back whole: the hostile id is there, as text.
        let data = decode(split(&html).1);
        let ids: Vec<&str> =
            data["cases"].as_array().unwrap().iter().map(|c| c["result"]["id"].as_str().unwrap()).collect();
        assert!(ids.contains(&"</script><script>alert(1)</script><!--"), "{ids:?}");
        assert_eq!(ids.len(), fixtures::cases().len() + 1);
    }

    /// The page without its data, and the data.
    fn split(html: &str) -> (String, &str) {
        let start = html.find("id=\"data\">").unwrap() + "id=\"data\">".len();
        let end = start + html[start..].find("</script>").unwrap();
        (format!("{}{}", &html[..start], &html[end..]), &html[start..end])
    }

    /// The data as the page's script reads it: base64, inflated, JSON.
    fn decode(data: &str) -> serde_json::Value {
        use base64::Engine;
        let deflated = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
        serde_json::from_slice(&miniz_oxide::inflate::decompress_to_vec(&deflated).unwrap()).unwrap()
    }

    #[test]
    fn the_page_allows_no_request_outside_the_file() {
        let dir = results_dir();
        let html = std::fs::read_to_string(render_report(dir.path()).unwrap()).unwrap();
        assert!(
            html.contains(&format!("http-equiv=\"Content-Security-Policy\" content=\"{CONTENT_SECURITY_POLICY}\""))
        );
        // The page's markup, styles and script name nothing to fetch; the
        // data (where the hostile texts are) is base64: no markup at all.
        let (markup, data) = split(&html);
        // The SVG namespace is a name, never fetched.
        let markup = markup.replace("\"http://www.w3.org/2000/svg\"", "");
        for fetch in
            ["src=", "href=", "url(", "@import", "fetch(", "XMLHttpRequest", "WebSocket", "http://", "https://"]
        {
            assert!(!markup.contains(fetch), "the page names `{fetch}`");
        }
        assert!(data.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)), "{data}");
        assert!(decode(data).to_string().contains("src=x"));
    }

    #[test]
    fn the_failure_modes_are_the_assessors() {
        let dir = results_dir();
        let mut json = Vec::new();
        model::data(dir.path(), &mut json).unwrap();
        let data: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let cases = data["cases"].as_array().unwrap();
        for (entry, case) in cases.iter().zip(fixtures::cases()) {
            assert_eq!(entry["result"]["id"], case.id.as_str());
            assert_eq!(entry["modes"], serde_json::to_value(crate::eval::assess(&case).modes).unwrap(), "{}", case.id);
        }
        assert!(cases.iter().any(|c| !c["modes"].as_array().unwrap().is_empty()));
    }

    #[test]
    fn a_broken_report_of_an_evaluation_command_names_its_file() {
        let dir = results_dir();
        std::fs::write(dir.path().join("eval.json"), "{ \"scenarios\": [").unwrap();
        let error = render_report(dir.path()).unwrap_err().to_string();
        assert!(error.contains("eval.json` is not what assay writes: EOF while parsing"), "{error}");
        std::fs::write(dir.path().join("eval.json"), "{ \"scenarios\": [] }").unwrap();
        let html = std::fs::read_to_string(render_report(dir.path()).unwrap()).unwrap();
        assert_eq!(decode(split(&html).1)["eval"], serde_json::json!({ "scenarios": [] }));
    }

    #[test]
    fn a_directory_without_results_names_the_file_and_what_to_give() {
        let dir = tempfile::tempdir().unwrap();
        let error = render_report(dir.path()).unwrap_err().to_string();
        assert!(
            error.contains("it holds no results.jsonl") && error.contains("Consider a folder `assay run` wrote"),
            "{error}"
        );
        std::fs::write(dir.path().join(crate::job::RESULTS_FILE), "{\"id\": 3}\n").unwrap();
        let error = render_report(dir.path()).unwrap_err().to_string();
        assert!(error.contains("results.jsonl`: line 1 is not a case's result"), "{error}");
    }
}
