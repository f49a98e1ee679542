//! The HTML report in a real browser: a real run of the fixtures with mixed
//! results (passed, flaky, and cases of our own that fail, with hostile
//! text, and error), rendered by `assay run --html` and `assay report`,
//! loaded from disk in headless Chromium with networking off, and its DOM
//! (after the page's script ran) checked against `summary.json` and
//! `results.jsonl`.

use crate::util::{assay, stderr, stdout};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Debian's Chromium, which `.ci/run` installs.
const CHROMIUM: &str = "chromium";

/// Text no page may turn into markup.
const HOSTILE: &str = "no </script><!-- <img src=x onerror=alert(1)> --> & </SCRIPT>";

/// A run of the fixture cases plus a failing case (with hostile text) and a
/// broken one: its results directory and the `--html` report's path.
fn mixed_run(work: &Path) -> (PathBuf, PathBuf) {
    let own = work.join("own");
    std::fs::create_dir_all(&own).unwrap();
    let expected = serde_json::to_string(HOSTILE).unwrap();
    std::fs::write(
        own.join("fails.hocon"),
        format!(
            "{{ \"agent\": \"echo\", \"interactions\": [ {{ \"text\": \"hello\", \
             \"response\": {{ \"text\": {{ \"value\": {expected} }} }} }} ] }}"
        ),
    )
    .unwrap();
    std::fs::write(own.join("broken.hocon"), "{ \"agent\": \"echo\", \"interactions\": [ \n").unwrap();
    let results = work.join("results");
    let html = work.join("custom.html");
    let output = assay(&[
        "run",
        "fixtures/cases",
        own.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).contains(&format!("HTML report in {}", html.display())), "{}", stdout(&output));
    (results, html)
}

/// `results.jsonl`, parsed.
fn lines(results: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(results.join("results.jsonl")).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Text as the DOM serializes it.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('\u{a0}', "&nbsp;")
}

/// The DOM of `page#hash` after its scripts ran, loaded by headless
/// Chromium with networking off (`offline`) or on.
fn dom(page: &Path, hash: &str, offline: bool) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut command = Command::new(CHROMIUM);
    command.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--virtual-time-budget=5000",
        &format!("--user-data-dir={}", profile.path().display()),
    ]);
    if offline {
        command.args(["--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND"]);
    }
    let url = format!("file://{}#{hash}", page.display());
    let output = command.args(["--dump-dom", &url]).output().unwrap_or_else(|error| {
        panic!(
            "failed to start `{CHROMIUM}` ({error}): the HTML report's tests need headless Chromium. \
             Consider `apt-get install chromium` (.ci/run installs it)"
        )
    });
    assert!(output.status.success(), "chromium failed: {}", stderr(&output));
    let dom = stdout(&output);
    assert!(dom.contains("id=\"rendered\""), "the page's script did not finish: {dom}");
    dom
}

#[test]
fn every_case_its_counts_and_a_failed_checks_message_show_in_chromium_with_networking_off() {
    let work = tempfile::tempdir().unwrap();
    let (results, html) = mixed_run(work.path());
    let lines = lines(&results);
    let statuses: Vec<&str> = lines.iter().map(|l| l["status"].as_str().unwrap()).collect();
    for status in ["passed", "flaky", "failed", "error"] {
        assert!(statuses.contains(&status), "the run should hold a {status} case: {statuses:?}");
    }

    // All cases on one page: every id, and the summary's counts.
    let page = dom(&html, "size=1000", true);
    for line in &lines {
        let id = line["id"].as_str().unwrap();
        assert!(page.contains(&format!("<td class=\"case-id\">{}</td>", escaped(id))), "{id} is missing");
    }
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(results.join("summary.json")).unwrap()).unwrap();
    for count in ["cases", "passed", "failed", "flaky", "errors"] {
        let shown = format!("id=\"summary-{count}\">{}<", summary[count]);
        assert!(page.contains(&shown), "{shown} is not in the page");
    }
    assert!(page.contains(&format!("id=\"summary-empty-output\">{}<", summary["flags"]["empty_output"])));

    // Paged: two cases a page, the second page holds the third and fourth.
    let paged = dom(&html, "size=2&page=2", true);
    assert_eq!(paged.matches("<td class=\"case-id\">").count(), 2, "{paged}");
    assert!(paged.contains(&format!("page 2 of {} · {n} of {n} cases", lines.len().div_ceil(2), n = lines.len())));

    // A failed case, opened from the URL: its check's message, as text.
    let failed = lines.iter().find(|l| l["status"] == "failed").unwrap();
    let id = failed["id"].as_str().unwrap();
    let check = &failed["samples"][0]["runs"][0]["interactions"][0]["checks"][0];
    let message = check["message"].as_str().unwrap();
    assert!(message.contains("</script>"), "{message}");
    let opened = dom(&html, &format!("case={}", id.replace('/', "%2F")), true);
    assert!(opened.contains(&format!("<h2 id=\"detail-id\">{}</h2>", escaped(id))), "{opened}");
    assert!(opened.contains(&format!("<td class=\"check-message\">{}</td>", escaped(message))), "{opened}");
    // Where its file asks for the check.
    let place =
        format!("{}:{}", failed["file"].as_str().unwrap(), check["line"].as_u64().expect("a failed check's line"));
    assert!(opened.contains(&format!("<div class=\"muted check-place\">{}</div>", escaped(&place))), "{opened}");
    // The answer it looked at: kept once in the line, in the response, and
    // shown as the check's actual value.
    assert_eq!((check.get("actual"), &check["actual_is_answer"]), (None, &Value::Bool(true)), "{check}");
    assert!(opened.contains("<td><pre>hello</pre></td>"), "{opened}");
    // Its failure mode, as the Assessor groups it.
    assert!(opened.contains("interactions[0].text value"), "{opened}");
    // The hostile text stayed text: no element came of it.
    for page in [&page, &opened] {
        assert_eq!(page.matches("<script").count(), 2);
        assert!(!page.contains("<img") && !page.contains("<!--"));
    }

    // `assay report DIR` writes the same page as DIR/report.html.
    let output = assay(&["report", results.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = results.join("report.html");
    assert!(stdout(&output).contains(&format!("HTML report in {}", report.display())));
    assert_eq!(std::fs::read(&report).unwrap(), std::fs::read(&html).unwrap());
}

/// A server on 127.0.0.1 that answers every request 404 at once and
/// counts the connections made to it.
struct Counting {
    url: String,
    connections: Arc<AtomicUsize>,
}

impl Counting {
    fn start() -> Counting {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://127.0.0.1:{}/leak", listener.local_addr().unwrap().port());
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                counted.fetch_add(1, Ordering::SeqCst);
                let mut request = [0; 4096];
                let _ = stream.read(&mut request);
                let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            }
        });
        Counting { url, connections }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

#[test]
fn the_content_security_policy_stops_every_request_the_page_might_make() {
    let work = tempfile::tempdir().unwrap();
    let (_, html) = mixed_run(work.path());
    let page = std::fs::read_to_string(&html).unwrap();
    let server = Counting::start();
    let url = &server.url;
    // What a page could do if some text became markup, or the script went
    // astray: an image, a style sheet, a script, a fetch.
    let leaks = format!(
        "<img src=\"{url}\"><link rel=\"stylesheet\" href=\"{url}\"><script src=\"{url}\"></script>\
         <script>fetch(\"{url}\").catch(function () {{}});</script>"
    );
    let leaky = work.path().join("leaky.html");
    std::fs::write(&leaky, page.replacen("<body>", &format!("<body>{leaks}"), 1)).unwrap();
    dom(&leaky, "", false);
    assert_eq!(server.connections(), 0, "a request left the page despite its Content-Security-Policy");

    // Without the policy the same page does reach the listener: the test can
    // tell.
    let start = page.find("<meta http-equiv=\"Content-Security-Policy\"").unwrap();
    let end = start + page[start..].find('>').unwrap() + 1;
    let open = format!("{}{}", &page[..start], &page[end..]);
    let unguarded = work.path().join("unguarded.html");
    std::fs::write(&unguarded, open.replacen("<body>", &format!("<body>{leaks}"), 1)).unwrap();
    dom(&unguarded, "", false);
    assert!(server.connections() > 0, "without the policy the page should have reached {url}");
}

/// `assess`, `eval` and `validate` with `--html`: each page holds its
/// command's section with the numbers the terminal printed (the scores of
/// evaluation.rs's runs, against the test judge).
#[test]
fn the_reports_of_assess_eval_and_validate_show_what_the_terminal_printed() {
    use crate::evaluation::workflows::{BLAND_FOOD, FLAKY_CASE, Project, VALIDATION, WEATHER, show};
    let judge = crate::judge::judge_server::start();
    let url = format!("{}/v1", judge.url());
    let project = Project::new(&[
        ("bland.yaml", BLAND_FOOD),
        ("weather.hocon", WEATHER),
        ("check.yaml", VALIDATION),
        ("flaky.hocon", FLAKY_CASE),
    ]);
    let html = |name: &str| PathBuf::from(project.path(&format!("{name}.html")));

    let eval = html("eval");
    let output = project.run(
        Some(&url),
        "eval",
        &["--html", eval.to_str().unwrap(), &project.path("bland.yaml"), &project.path("weather.hocon")],
        "eval",
    );
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(stdout(&output).contains("Overall: 0.71 (5/7)"), "{}", show(&output));
    assert!(stdout(&output).contains(&format!("HTML report in {}", eval.display())), "{}", show(&output));
    let page = dom(&eval, "", true);
    assert!(page.contains("id=\"eval-overall\">0.71 (5/7)<"), "{page}");
    assert!(page.contains("<td>bland_food</td><td>echo</td><td class=\"num\">0.83 (5/6)</td>"), "{page}");
    assert!(page.contains("<td>solution_finding</td><td class=\"num\">0.75 (3/4)</td>"), "{page}");
    assert!(page.contains("pepper: 0.00"), "{page}");
    // Each scenario is a case of the run: the case table has both.
    for id in ["bland_food", "weather"] {
        assert!(page.contains(&format!("<td class=\"case-id\">{id}</td>")), "{id}: {page}");
    }

    let validate = html("validate");
    let output = project.run(
        Some(&url),
        "validate",
        &["--html", validate.to_str().unwrap(), &project.path("check.yaml")],
        "validate",
    );
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(stdout(&output).contains("Agreement: 0.83 (5/6)"), "{}", show(&output));
    let page = dom(&validate, "", true);
    assert!(page.contains("id=\"validate-agreement\">0.83 (5/6)<"), "{page}");
    // The confusion matrix: 2 true positives, 1 false negative, no false
    // positive, 2 true negatives (as evaluation.rs asserts of validate.json).
    assert!(page.contains("<td>wanted match</td><td class=\"num\">2</td><td class=\"num\">1</td>"), "{page}");
    assert!(page.contains("<td>wanted no match</td><td class=\"num\">0</td><td class=\"num\">2</td>"), "{page}");
    assert!(page.contains("spices: wanted match, judged no match (gist, weight 1)"), "{page}");

    let assess = html("assess");
    let output =
        project.run(None, "assess", &["--html", assess.to_str().unwrap(), &project.path("flaky.hocon")], "assess");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let page = dom(&assess, "", true);
    assert!(page.contains("id=\"assessment\""), "{page}");
    assert!(page.contains("2 of 4 samples (50 %), 2 times: interactions[0].text value \"pass\""), "{page}");
    // A run of `assay run` has none of these sections.
    assert!(!page.contains("id=\"eval\"") && !page.contains("id=\"validation\""), "{page}");
}

/// `assay diff --html`: the verdict, every changed case and both runs'
/// counts, as the terminal and `--json` give them.
#[test]
fn the_diff_page_shows_the_regression_and_every_changed_case() {
    let work = tempfile::tempdir().unwrap();
    let cases = work.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    let echo = |name: &str, keyword: &str| {
        let hocon = format!(
            r#"{{ agent: echo, interactions: [{{ text: "hello there", response {{ text {{ keywords: "{keyword}" }} }} }}] }}"#
        );
        std::fs::write(cases.join(format!("{name}.hocon")), hocon).unwrap();
    };
    let run = |name: &str| {
        let results = work.path().join(name);
        let plugin = crate::util::root().join("plugins/rouge/rouge.wasm");
        let plugin = plugin.to_str().unwrap();
        let output =
            assay(&["run", cases.to_str().unwrap(), "--plugin", plugin, "--results", results.to_str().unwrap(), "-q"]);
        assert!(matches!(output.status.code(), Some(0 | 1)), "{}", stderr(&output));
        results
    };
    echo("steady", "hello");
    echo("breaks", "hello");
    echo("mends", "absent");
    echo("goes", "hello");
    let rouge = |text: &str| {
        let hocon = format!(
            r#"{{ agent: echo, interactions: [{{ text: "{text}", response {{ text {{ rouge {{ reference: "the cat sat", threshold: 0 }} }} }} }}] }}"#
        );
        std::fs::write(cases.join("scored.hocon"), hocon).unwrap();
    };
    rouge("the cat sat");
    let old = run("old");
    echo("breaks", "absent");
    rouge("the cat");
    echo("mends", "there");
    std::fs::remove_file(cases.join("goes.hocon")).unwrap();
    // A name of hostile text (no `/`: it is a file name).
    echo("no <img src=x onerror=alert(1)> & <!-- -->", "hello");
    let new = run("new");

    let page_path = work.path().join("diff.html");
    let output = assay(&["diff", old.to_str().unwrap(), new.to_str().unwrap(), "--html", page_path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).contains("REGRESSED 1 newly failing (allowed 0)"), "{}", stdout(&output));
    assert!(stdout(&output).contains(&format!("HTML comparison in {}", page_path.display())));
    let page = dom(&page_path, "", true);
    assert!(page.contains("REGRESSED: 1 newly failing (allowed 0)"), "{page}");
    for (list, count) in [("newly_failing", 1), ("newly_passing", 1), ("added", 1), ("removed", 1), ("unchanged", 2)] {
        assert!(page.contains(&format!("id=\"count-{list}\">{count}<")), "{list}: {page}");
    }
    let in_list = |page: &str, list: &str, id: &str| {
        let start = page.find(&format!("id=\"list-{list}\"")).unwrap();
        let end = start + page[start..].find("</section>").unwrap();
        page[start..end].contains(&format!("<td class=\"case-id\">{}</td>", escaped(id)))
    };
    assert!(in_list(&page, "newly_failing", "breaks"), "{page}");
    assert!(in_list(&page, "newly_passing", "mends"), "{page}");
    assert!(in_list(&page, "added", "no <img src=x onerror=alert(1)> & <!-- -->"), "{page}");
    assert!(in_list(&page, "removed", "goes"), "{page}");
    // The numbers are those of `assay diff --json`.
    let output = assay(&["diff", old.to_str().unwrap(), new.to_str().unwrap(), "--json"]);
    let json: Value = serde_json::from_str(&stdout(&output)).unwrap();
    for (side, dir) in [("old", &old), ("new", &new)] {
        let counts = format!("<td>{side}: {}</td><td class=\"num\">{}</td>", dir.display(), json[side]["cases"]);
        assert!(page.contains(&counts), "{counts}: {page}");
    }
    // rouge's mean moved: the scores table says by how much, and who moved.
    let rouge = &json["scores"][0];
    assert_eq!(rouge["key"], "rouge");
    let (old_mean, new_mean, change) =
        (rouge["old_mean"].as_f64().unwrap(), rouge["new_mean"].as_f64().unwrap(), rouge["change"].as_f64().unwrap());
    assert!(change < 0.0, "{rouge}");
    let row = format!("<td>rouge</td><td class=\"num\">{old_mean:.3}</td><td class=\"num\">{new_mean:.3}</td>");
    assert!(page.contains(&row), "{row}: {page}");
    assert!(page.contains(&format!("{change:.3} over 1")) && page.contains(&format!("{change:.3} scored")), "{page}");
    // The hostile name stayed text.
    assert_eq!(page.matches("<script").count(), 2);
    assert!(!page.contains("<img") && !page.contains("<!--"));

    // A search narrows every list.
    let searched = dom(&page_path, "q=mends", true);
    assert!(searched.contains("Newly passing (1 of 1)") && searched.contains("Newly failing (0 of 1)"), "{searched}");
}

#[test]
fn failures_come_first_with_why_sort_by_any_column_group_by_cause_and_show_the_request() {
    let work = tempfile::tempdir().unwrap();
    let cases = work.path().join("cases");
    std::fs::create_dir_all(&cases).unwrap();
    let case = |expected: &str| {
        format!(
            r#"{{ agent: echo, interactions: [ {{ text: "hi there", sly_data: {{ user: "ada" }}, response: {{ text: {{ value: "{expected}" }} }} }} ] }}"#
        )
    };
    // 30 cases fail by one cause, 2 by another, 3 pass.
    for i in 0..30 {
        std::fs::write(cases.join(format!("same-{i:02}.hocon")), case(&format!("bye {i}"))).unwrap();
    }
    let keywords =
        r#"{ agent: echo, interactions: [ { text: "hi there", response: { text: { keywords: "moon" } } } ] }"#;
    for i in 0..2 {
        std::fs::write(cases.join(format!("moon-{i}.hocon")), keywords).unwrap();
    }
    for i in 0..3 {
        std::fs::write(cases.join(format!("a-pass-{i}.hocon")), case("hi there")).unwrap();
    }
    let (results, html) = (work.path().join("results"), work.path().join("report.html"));
    let output = assay(&[
        "run",
        cases.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let row_ids = |page: &str| -> Vec<String> {
        page.split("<td class=\"case-id\">").skip(1).map(|rest| rest.split('<').next().unwrap().to_owned()).collect()
    };

    // Failures first (then by id), each row saying why.
    let page = dom(&html, "size=100", true);
    let ids = row_ids(&page);
    assert_eq!(ids.len(), 35);
    assert!(ids[0].ends_with("moon-0") && ids[31].ends_with("same-29") && ids[32].ends_with("a-pass-0"), "{ids:?}");
    assert!(
        page.contains(
            "<td class=\"case-reason\">interaction 1: text value: \"hi there\" does not equal \"bye 0\"</td>"
        ),
        "{page}"
    );

    // The header says who ran it, when and how.
    let header = page.split("id=\"run-info\"").nth(1).unwrap_or_else(|| panic!("no run-info: {page}"));
    let header = header.split("</p>").next().unwrap();
    assert!(header.contains(&format!("assay {} · started 20", env!("CARGO_PKG_VERSION"))), "{header}");
    assert!(header.contains(" run ") && header.contains("--html"), "{header}");

    // One row per cause, with its cases counted.
    let causes: Vec<&str> =
        page.split("<td class=\"cause\">").skip(1).map(|rest| rest.split('<').next().unwrap()).collect();
    assert_eq!(causes.len(), 2, "{causes:?}");
    assert!(causes[0].starts_with("value (fail): \"…\" does not equal \"…\""), "{causes:?}");
    assert!(page.contains(&format!("{}</td><td class=\"num\">30</td>", causes[0])), "{page}");

    // A cause's cases only, from the hash.
    let cause: String = causes[0].replace("&amp;", "&").bytes().map(|b| format!("%{b:02X}")).collect();
    let only = dom(&html, &format!("size=100&cause={cause}"), true);
    assert_eq!(row_ids(&only).len(), 30, "{only}");

    // Sorted by a column, either way.
    let by_id = row_ids(&dom(&html, "size=100&sort=id&dir=desc", true));
    let mut sorted = by_id.clone();
    sorted.sort();
    sorted.reverse();
    assert_eq!(by_id, sorted);

    // A case shows what was sent.
    let id = &ids[2];
    let opened = dom(&html, &format!("case={}", id.replace('/', "%2F")), true);
    assert!(opened.contains("<th>sent text</th><td><pre>hi there</pre></td>"), "{opened}");
    assert!(opened.contains("<th>sent sly_data</th>"), "{opened}");
    // Interactions count from 1, as on the terminal.
    assert!(opened.contains(">interaction 1: did not pass · agent "), "{opened}");
    let line = lines(&results).into_iter().find(|l| l["id"] == id.as_str()).unwrap();
    assert_eq!(line["samples"][0]["runs"][0]["interactions"][0]["request"]["text"], "hi there");
}

#[test]
fn the_history_page_of_three_runs_shows_each_pass_rate_and_what_changed() {
    let work = tempfile::tempdir().unwrap();
    let cases = work.path().join("cases");
    std::fs::create_dir_all(&cases).unwrap();
    let case = |expected: &str| {
        format!(
            r#"{{ agent: echo, interactions: [ {{ text: "hi", response: {{ text: {{ value: "{expected}" }} }} }} ] }}"#
        )
    };
    std::fs::write(cases.join("steady.hocon"), case("hi")).unwrap();
    let mut dirs = Vec::new();
    for (run, expected) in ["hi", "bye", "hi"].iter().enumerate() {
        std::fs::write(cases.join("moving.hocon"), case(expected)).unwrap();
        let dir = work.path().join(format!("run-{run}"));
        assay(&["run", cases.to_str().unwrap(), "--results", dir.to_str().unwrap()]);
        dirs.push(dir);
    }
    let mut args = vec!["report"];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    let output = assay(&args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let page = work.path().join("history.html");
    assert_eq!(stdout(&output), format!("HTML history of 3 runs in {}\n", page.display()));
    let dom = dom(&page, "", true);
    let rates: Vec<&str> =
        dom.split("<td class=\"num pass-rate\">").skip(1).map(|rest| rest.split('<').next().unwrap()).collect();
    assert_eq!(rates, ["100.0 %", "50.0 %", "100.0 %"], "{dom}");
    assert_eq!(dom.matches("<circle class=\"rate-point\"").count(), 3, "{dom}");
    let changed: Vec<&str> =
        dom.split("<li class=\"changed-case\">").skip(1).map(|rest| rest.split('<').next().unwrap()).collect();
    assert_eq!(changed.len(), 2, "{dom}");
    assert!(
        changed[0].ends_with("moving (passed → failed)") && changed[1].ends_with("moving (failed → passed)"),
        "{changed:?}"
    );
    assert!(dom.contains("run-0 → run-1") && dom.contains("run-1 → run-2"), "{dom}");
}
