//! The HTML report of a results directory: one self-contained file
//! (`report.html`) that opens from disk in any browser and asks the network
//! for nothing. Its Content-Security-Policy forbids every outside request;
//! styles and the script are inline (`page.css`, `page.js`), the charts
//! inline SVG the script draws, and the data one JSON blob in a
//! `<script type="application/json">` that the script reads.
//!
//! What the page shows is computed here ([`model`]), with the library's
//! own code (the Assessor's failure modes, the suites' case scores), so the
//! page and the terminal never disagree; the script only draws it and
//! renders one page of the case table at a time, so that 10,000 cases stay
//! fast. It puts every text in the page as text (never as markup).

mod model;

use crate::errors::HtmlReportError;
use crate::private_files;
use std::path::{Path, PathBuf};

/// The page's styles.
const CSS: &str = include_str!("page.css");
/// The page's script.
const JS: &str = include_str!("page.js");

/// Allows nothing from outside the file: inline styles and scripts, and
/// images only as `data:` URLs.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// Writes the report of the results directory `dir` to `dir/report.html`
/// and returns its path.
pub fn render_report(dir: &Path) -> Result<PathBuf, HtmlReportError> {
    let path = dir.join("report.html");
    render_report_to(dir, &path)?;
    Ok(path)
}

/// Writes the report of the results directory `dir` to `path` (as `assay
/// run --html FILE` does). Results hold the agent's answers, so the report
/// is private (0600), as they are.
pub fn render_report_to(dir: &Path, path: &Path) -> Result<(), HtmlReportError> {
    let model = model::read(dir)?;
    let html = page(&model);
    private_files::write(path, html.as_bytes()).map_err(|cause| HtmlReportError::Write { path: path.to_owned(), cause })
}

/// The whole page.
fn page(model: &model::Model) -> String {
    let data = serde_json::to_string(model).expect("the model is plain data");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CONTENT_SECURITY_POLICY}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>assay report: {title}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n\
         <noscript>This report draws itself with JavaScript: allow scripts for this file.</noscript>\n\
         <main id=\"app\"></main>\n\
         <script type=\"application/json\" id=\"data\">{data}</script>\n<script>\n{JS}</script>\n</body>\n</html>\n",
        title = escape_text(&model.title),
        data = escape_script_json(&data),
    )
}

/// JSON made safe inside a `<script>` element: `<`, `>` and `&` as
/// `\u003c`, `\u003e`, `\u0026`, so that no `</script>` or `<!--` in any
/// text can end or change the element; JSON reads them back the same.
/// (They can only occur inside JSON strings, where the escapes mean the
/// same characters.) U+2028 and U+2029 too, for old script parsers.
fn escape_script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
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
        let data: serde_json::Value = serde_json::from_str(split(&html).1).unwrap();
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

    #[test]
    fn the_page_allows_no_request_outside_the_file() {
        let dir = results_dir();
        let html = std::fs::read_to_string(render_report(dir.path()).unwrap()).unwrap();
        assert!(
            html.contains(&format!("http-equiv=\"Content-Security-Policy\" content=\"{CONTENT_SECURITY_POLICY}\""))
        );
        // The page's markup, styles and script name nothing to fetch; the
        // data (where the hostile texts are) holds no markup at all.
        let (markup, data) = split(&html);
        // The SVG namespace is a name, never fetched.
        let markup = markup.replace("\"http://www.w3.org/2000/svg\"", "");
        for fetch in
            ["src=", "href=", "url(", "@import", "fetch(", "XMLHttpRequest", "WebSocket", "http://", "https://"]
        {
            assert!(!markup.contains(fetch), "the page names `{fetch}`");
        }
        assert!(!data.contains('<') && data.contains("src=x"), "{data}");
    }

    #[test]
    fn the_failure_modes_are_the_assessors() {
        let dir = results_dir();
        let model = model::read(dir.path()).unwrap();
        for (entry, case) in model.cases.iter().zip(fixtures::cases()) {
            assert_eq!(entry.modes, crate::eval::assess(&case).modes, "{}", case.id);
        }
        assert!(model.cases.iter().any(|c| !c.modes.is_empty()));
    }

    #[test]
    fn a_directory_without_results_names_the_file_and_what_to_give() {
        let dir = tempfile::tempdir().unwrap();
        let error = render_report(dir.path()).unwrap_err().to_string();
        assert!(
            error.contains("it holds no results.jsonl") && error.contains("Consider a folder `assay run` wrote"),
            "{error}"
        );
        std::fs::write(dir.path().join("results.jsonl"), "{\"id\": 3}\n").unwrap();
        let error = render_report(dir.path()).unwrap_err().to_string();
        assert!(error.contains("results.jsonl`: line 1 is not a case's result"), "{error}");
    }
}
