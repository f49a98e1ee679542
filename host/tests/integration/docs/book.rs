//! Issue 33, "Docs as a book, README as a door": the book's chapters are
//! the ones `SUMMARY.md` lists; every relative link of the README, the book
//! and the other Markdown files leads to a file that exists and a heading
//! it has; every `hocon` example is a case `assay plan` plans, and the
//! README's first case prints what the README shows; every `toml` example
//! that is a table of `assay.toml` is one assay reads.

use crate::util::{assay_command, root, stderr, stdout};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The Markdown files whose links are checked.
fn documents() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", "benches/README.md", "docs/ci/README.md"]
            .iter()
            .map(|file| root().join(file))
            .collect();
    files.extend(chapters());
    files
}

/// Every Markdown file of the book's `src/`.
fn chapters() -> Vec<PathBuf> {
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(root().join("docs/book/src"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|x| x == "md"))
        .collect();
    chapters.sort();
    chapters
}

/// A heading's anchor, as GitHub and mdBook make it.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The text of `markdown` outside its fenced code blocks, line by line.
fn prose(markdown: &str) -> Vec<&str> {
    let mut fenced = false;
    markdown
        .lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The anchors of the headings of the Markdown file `path`.
fn anchors(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    prose(&text).iter().filter_map(|line| line.strip_prefix('#')).map(|h| slug(h.trim_start_matches('#'))).collect()
}

/// The targets of the inline links of `markdown`'s prose: `[text](target)`.
fn links(markdown: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose(markdown) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    found
}

#[test]
fn every_relative_link_leads_to_a_file_and_a_heading_it_has() {
    let mut broken = Vec::new();
    for document in documents() {
        let text = std::fs::read_to_string(&document).unwrap();
        for target in links(&text) {
            if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').map_or((target.as_str(), None), |(f, a)| (f, Some(a)));
            let file = match file {
                "" => document.clone(),
                file => document.parent().unwrap().join(file),
            };
            if !file.exists() {
                broken.push(format!("{}: `{target}`: no such file", document.display()));
                continue;
            }
            let markdown = file.extension().is_some_and(|x| x == "md");
            if let Some(anchor) = anchor.filter(|_| markdown)
                && !anchors(&file).contains(anchor)
            {
                broken.push(format!(
                    "{}: `{target}`: no heading `#{anchor}` in {}",
                    document.display(),
                    file.display()
                ));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_summary_lists_every_chapter_and_the_readme_stays_a_door() {
    let summary = std::fs::read_to_string(root().join("docs/book/src/SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().collect();
    let present: BTreeSet<String> = chapters()
        .iter()
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|name| name != "SUMMARY.md")
        .collect();
    assert_eq!(listed, present, "SUMMARY.md and the files of docs/book/src/ differ");
    let book = std::fs::read_to_string(root().join("docs/book/book.toml")).unwrap();
    assert!(book.contains("src = \"src\""), "{book}");
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 250, "the README has {lines} lines; the book is where the rest goes");
}

/// The fenced blocks of `markdown` whose info string is `language`, each
/// with the line it starts on.
fn blocks(markdown: &str, language: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (index, line) in markdown.lines().enumerate() {
        match &mut open {
            None if line.trim_end() == format!("```{language}") => open = Some((index + 1, String::new())),
            None => {}
            Some(_) if line.trim_end() == "```" => found.push(open.take().unwrap()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    found
}

#[test]
fn every_hocon_example_is_a_case_assay_plans() {
    let mut planned = 0;
    for document in documents() {
        let text = std::fs::read_to_string(&document).unwrap();
        for (line, case) in blocks(&text, "hocon") {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("example.hocon");
            std::fs::write(&file, &case).unwrap();
            let plan = assay_command().args(["plan"]).arg(&file).output().unwrap();
            let at = format!("{}:{line}", document.display());
            assert_eq!(plan.status.code(), Some(0), "{at}: {}{}", stdout(&plan), stderr(&plan));
            assert!(!stdout(&plan).trim().is_empty(), "{at}: planned nothing");
            planned += 1;
        }
    }
    assert!(planned >= 3, "only {planned} hocon examples: the README's, the introduction's and the cases chapter's");
}

#[test]
fn the_readmes_first_case_prints_what_the_readme_shows() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (_, case) = blocks(&readme, "hocon").into_iter().next().expect("the README's first case");
    let (_, session) = blocks(&readme, "console").into_iter().next().expect("its run");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("assay.toml"), "").unwrap();
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    std::fs::write(dir.path().join("cases/capital.hocon"), case).unwrap();
    let run = assay_command().arg("run").current_dir(dir.path()).output().unwrap();
    // Times and the results folder's timestamp vary; nothing else does.
    let steady = |text: &str| -> String {
        text.lines()
            .map(|line| match line.find('[').zip(line.find("s]")) {
                Some((open, close)) if close > open && line[open + 1..close].trim().parse::<f64>().is_ok() => {
                    format!("{}[TIME]{}", &line[..open], &line[close + 2..])
                }
                _ => line.to_owned(),
            })
            .map(|line| match line.strip_prefix("Results in results/") {
                Some(_) => "Results in results/STAMP".to_owned(),
                None => line,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let shown: String =
        session.lines().skip(1).take_while(|line| !line.starts_with('$')).collect::<Vec<_>>().join("\n");
    assert_eq!(steady(&stdout(&run)).trim_end(), steady(&shown), "{}", stderr(&run));
    assert_eq!(run.status.code(), Some(1), "the README says it exits 1");
}

#[test]
fn every_assay_toml_example_is_read_by_assay() {
    let mut read = 0;
    for document in chapters().into_iter().chain([root().join("README.md")]) {
        let text = std::fs::read_to_string(&document).unwrap();
        for (line, config) in blocks(&text, "toml") {
            // A suite file (`specs = …`) or a plugin's manifest is no
            // assay.toml: its examples are the ones that open with a table
            // assay.toml has.
            let first = config.lines().find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
            let tables = ["[agent]", "[connections.", "[plugins.", "[judge]", "[embeddings]", "[cases]", "[cache]"];
            if !first.is_some_and(|first| tables.iter().any(|table| first.starts_with(table))) {
                continue;
            }
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("assay.toml");
            std::fs::write(&file, &config).unwrap();
            let loaded = assay::config::Config::load(&file);
            assert!(loaded.is_ok(), "{}:{line}: {}", document.display(), loaded.unwrap_err());
            read += 1;
        }
    }
    assert!(read >= 5, "only {read} assay.toml examples");
}
