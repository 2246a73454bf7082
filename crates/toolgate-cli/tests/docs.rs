//! Every `console` block of README.md and docs/*.md is a transcript the real binary must
//! reproduce: each `$ toolgate …` line is run from the repository root and its standard output
//! compared with the lines below it, line by line (trailing blanks aside); a line `...` stands
//! for any number of lines. Commands other than `toolgate` are not allowed in such blocks: a
//! command that cannot be checked belongs in a `sh` block.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The documents whose console blocks are checked.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![repo().join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

/// One `$ command` of a console block and the output lines written under it.
#[derive(Debug)]
struct Transcript {
    at: String,
    command: String,
    expected: Vec<String>,
}

fn transcripts(path: &Path) -> Vec<Transcript> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: Vec<Transcript> = Vec::new();
    let mut in_console = false;
    for (n, line) in text.lines().enumerate() {
        if !in_console {
            in_console = line.trim_end() == "```console";
            continue;
        }
        if line.starts_with("```") {
            in_console = false;
        } else if let Some(command) = line.strip_prefix("$ ") {
            let at = format!("{}:{}", path.display(), n + 1);
            out.push(Transcript { at, command: command.to_owned(), expected: Vec::new() });
        } else {
            let last = out
                .last_mut()
                .unwrap_or_else(|| panic!("{}:{}: output before any `$ ` line", path.display(), n + 1));
            last.expected.push(line.to_owned());
        }
    }
    out
}

/// Splits a command line into words: spaces separate, double quotes group, no escapes.
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in command.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

/// Whether `actual` matches `expected`, where a line `...` matches any run of lines.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => {
            actual.first().is_some_and(|a| a.trim_end() == first.trim_end()) && matches(rest, &actual[1..])
        }
    }
}

#[test]
fn every_console_block_of_the_docs_is_what_the_binary_prints() {
    let mut checked = 0;
    for doc in documents() {
        for t in transcripts(&doc) {
            let words = words(&t.command);
            assert_eq!(words[0], "toolgate", "{}: only toolgate commands belong in console blocks", t.at);
            let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
                .args(&words[1..])
                .current_dir(repo())
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let mut actual: Vec<&str> = stdout.lines().collect();
            while actual.last().is_some_and(|l| l.trim().is_empty()) {
                actual.pop();
            }
            let mut expected = t.expected.clone();
            while expected.last().is_some_and(|l| l.trim().is_empty()) {
                expected.pop();
            }
            assert!(
                matches(&expected, &actual),
                "{}: `{}` printed\n{}\n(stderr: {})\nbut the document says\n{}",
                t.at,
                t.command,
                actual.join("\n"),
                String::from_utf8_lossy(&out.stderr),
                expected.join("\n")
            );
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} console commands found");
}

#[test]
fn the_matcher_can_fail() {
    let lines = |s: &[&str]| s.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
    assert!(matches(&lines(&["a", "...", "z"]), &["a", "b", "c", "z"]));
    assert!(matches(&lines(&["a", "..."]), &["a"]));
    assert!(!matches(&lines(&["a", "b"]), &["a", "c"]));
    assert!(!matches(&lines(&["a"]), &["a", "b"]));
    assert_eq!(
        words(r#"toolgate search "two words" --limit 3"#),
        ["toolgate", "search", "two words", "--limit", "3"]
    );
}
