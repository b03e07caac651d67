//! The printed blocks of README.md and docs/*.md, run and compared with what the commands print
//! now, so that the documentation cannot drift from the binary (docs/doc-blocks.md).
//!
//! Two forms of block are checked; every other fence is prose and is not run.
//!
//! - A ` ```console ` fence is a transcript. Each line that starts with `$ ` is a command,
//!   `walcheck ARGS` or `textbook-connector ARGS` (the example crate's binary); the lines after
//!   it, up to the next command or the end of the fence, are what it prints: its stdout, then its
//!   stderr, then `[exit N]` when it exits with a status N other than 0.
//! - A fence of any other language right after a line `<!-- $ walcheck ARGS -->` (a Mermaid
//!   diagram, say, which GitHub draws) holds the command's whole stdout; the command must exit 0.
//!
//! A block may leave lines out: a line `...` alone stands for whatever the commands print between
//! the lines shown above it and those shown below it, counted from the start and from the end.
//!
//! A command is words separated by spaces, `'` or `"` quoting a word with spaces; no shell runs
//! it, so pipes, redirections, globs and variables are refused. The commands of one file run in
//! the order they appear, in one scratch directory of their own that holds a copy of
//! `traces/golden/` and an empty `docs/`: a block may show a trace that a block above it wrote
//! under `traces/out/`, or a golden one. Mark only commands that are quick and whose output is
//! deterministic; the one timing they may print, the `check` summary's `in 0.01 s`, is masked.
//!
//! `WALCHECK_BLESS=1 cargo test --test tests doc_blocks::` rewrites, in place, each checked block that
//! differs with what its commands print now; review the diff and commit it.
//!
//! A second test checks that every relative link of these files names a file that exists (and,
//! with an `#anchor`, one of its headings) and that the README links every page under docs/.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{textbook_connector, ROOT};

/// README.md and docs/*.md, in a fixed order.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut docs: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.expect("docs/ is readable").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root.join("README.md"));
    docs
}

/// One checked block: the lines of the file it spans and what it says the commands print.
#[derive(Debug)]
struct Block {
    /// Index of the first line inside the fence.
    body_start: usize,
    /// Index of the closing fence line.
    body_end: usize,
    /// The 1-based line of the opening fence, for messages.
    line: usize,
    /// The commands, in order (their output is the rest of the block).
    commands: Vec<String>,
    /// A transcript (console) rather than a diagram after a comment.
    transcript: bool,
}

/// The checked blocks of one file's lines; `name` is the file, for messages.
fn blocks(name: &str, lines: &[&str]) -> Vec<Block> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(fence) = fence_opening(lines[i]) else {
            i += 1;
            continue;
        };
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].trim_start().starts_with(&fence.0))
            .unwrap_or_else(|| panic!("{name}:{}: the fence is never closed", i + 1));
        let comment = i
            .checked_sub(1)
            .and_then(|k| lines[k].trim().strip_prefix("<!-- $ "))
            .and_then(|rest| rest.strip_suffix("-->"));
        if fence.1 == "console" {
            found.push(transcript(name, i, end, &lines[i + 1..end]));
        } else if let Some(command) = comment {
            found.push(Block {
                body_start: i + 1,
                body_end: end,
                line: i + 1,
                commands: vec![command.trim().to_string()],
                transcript: false,
            });
        }
        i = end + 1;
    }
    found
}

/// The fence characters and the language of an opening fence line.
fn fence_opening(line: &str) -> Option<(String, String)> {
    let trimmed = line.trim_start();
    let ticks = trimmed.chars().take_while(|c| *c == '`').count();
    (ticks >= 3).then(|| {
        let language = trimmed[ticks..].split_whitespace().next().unwrap_or("");
        ("`".repeat(ticks), language.to_string())
    })
}

/// A console fence (lines `open` to `end`, `body` between them) as a transcript.
fn transcript(name: &str, open: usize, end: usize, body: &[&str]) -> Block {
    assert!(
        body.first().is_some_and(|line| line.starts_with("$ ")),
        "{name}:{}: a console block starts with `$ COMMAND`",
        open + 1
    );
    let commands = body
        .iter()
        .filter_map(|line| line.strip_prefix("$ "))
        .map(|command| command.trim().to_string())
        .collect();
    Block {
        body_start: open + 1,
        body_end: end,
        line: open + 1,
        commands,
        transcript: true,
    }
}

/// A command's words; no shell syntax.
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut started = false;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (None, '|' | '>' | '<' | '*' | '$' | ';' | '&' | '`') => {
                panic!("`{command}`: no shell runs a checked command, so `{c}` is not allowed")
            }
            (None, c) => word.push(c),
        }
    }
    assert!(quote.is_none(), "`{command}`: an unclosed quote");
    if started || !word.is_empty() {
        words.push(word);
    }
    words
}

/// Runs one command in `dir`; its output as a block shows it.
fn run(command: &str, dir: &Path, transcript: bool) -> Vec<String> {
    let words = words(command);
    let program = match words.first().map(String::as_str) {
        Some("walcheck") => PathBuf::from(env!("CARGO_BIN_EXE_walcheck")),
        Some("textbook-connector") => textbook_connector().to_path_buf(),
        _ => panic!("`{command}`: a checked command runs walcheck or textbook-connector"),
    };
    let output = Command::new(program)
        .args(&words[1..])
        .current_dir(dir)
        .env_remove("WALCHECK_BLESS")
        .output()
        .unwrap_or_else(|e| panic!("`{command}` does not start: {e}"));
    let stdout = String::from_utf8(output.stdout).expect("stdout is UTF-8");
    let stderr = String::from_utf8(output.stderr).expect("stderr is UTF-8");
    let code = output.status.code().expect("the command exits, not killed");
    let mut lines: Vec<String> = stdout.lines().map(str::to_string).collect();
    if transcript {
        lines.extend(stderr.lines().map(str::to_string));
        if code != 0 {
            lines.push(format!("[exit {code}]"));
        }
    } else {
        assert_eq!(code, 0, "`{command}` exits {code}: {stderr}");
    }
    lines
}

/// The lines as a block holds them: no trailing blanks, no blank lines at the end.
fn tidy(lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = lines.iter().map(|l| l.trim_end().to_string()).collect();
    while out.last().is_some_and(|line| line.is_empty()) {
        out.pop();
    }
    out
}

/// The lines as compared: tidied, and the one timing masked.
fn normalised(lines: &[String]) -> Vec<String> {
    tidy(lines).iter().map(|line| mask_timing(line)).collect()
}

/// `... distinct states) in 0.01 s` reads `... distinct states) in … s`.
fn mask_timing(line: &str) -> String {
    const MARK: &str = " distinct states) in ";
    match line.find(MARK) {
        Some(at) => {
            let rest = &line[at + MARK.len()..];
            let digits = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            format!("{}{MARK}…{}", &line[..at], &rest[digits..])
        }
        None => line.to_string(),
    }
}

/// A scratch directory for one file's commands: traces/golden, connectors/ (the zoo too) and
/// docs/examples/ copied, the rest of docs/ empty.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for folder in ["traces/golden", "connectors", "docs/examples"] {
        copy_folder(&Path::new(ROOT).join(folder), &dir.path().join(folder));
    }
    dir
}

/// Copies folder `from` to `to`, its subfolders too.
fn copy_folder(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let into = to.join(path.file_name().unwrap());
        match path.is_dir() {
            true => copy_folder(&path, &into),
            false => drop(fs::copy(&path, into).unwrap()),
        }
    }
}

/// The block's lines as they should read, with the commands' current output.
fn current(block: &Block, dir: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for command in &block.commands {
        if block.transcript {
            lines.push(format!("$ {command}"));
        }
        lines.extend(run(command, dir, block.transcript));
    }
    lines
}

/// The line that stands for the lines a block leaves out.
const ELLIPSIS: &str = "...";

/// The block as it should read: the commands' output now, tidied, and when the written block has
/// a `...` line, as many lines before it and after it as the written block shows there.
fn expected(written: &[String], now: &[String]) -> Vec<String> {
    let now = tidy(now);
    let written = tidy(written);
    let Some(head) = written.iter().position(|line| line == ELLIPSIS) else {
        return now;
    };
    let tail = written.len() - head - 1;
    if now.len() <= head + tail {
        return now;
    }
    let mut out = now[..head].to_vec();
    out.push(ELLIPSIS.to_string());
    out.extend_from_slice(&now[now.len() - tail..]);
    out
}

/// Runs one file's blocks; the differences found, and the file rewritten when blessing.
fn check_document(path: &Path, bless: bool) -> (usize, Vec<String>) {
    let text = fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let name = path.strip_prefix(ROOT).unwrap().display().to_string();
    let found = blocks(&name, &lines);
    let dir = scratch();
    let mut differences = Vec::new();
    let mut rewritten: Vec<String> = Vec::new();
    let mut copied = 0;
    for block in &found {
        let written: Vec<String> = lines[block.body_start..block.body_end]
            .iter()
            .map(|l| l.to_string())
            .collect();
        let now = current(block, dir.path());
        rewritten.extend(
            lines[copied..block.body_start]
                .iter()
                .map(|l| l.to_string()),
        );
        let expected = expected(&written, &now);
        if normalised(&written) == normalised(&expected) {
            rewritten.extend(written);
        } else {
            differences.push(format!(
                "{name}:{}: the block differs from what its commands print now\n{}",
                block.line,
                diff(&normalised(&written), &normalised(&expected))
            ));
            rewritten.extend(expected);
        }
        copied = block.body_end;
    }
    if bless && !differences.is_empty() {
        rewritten.extend(lines[copied..].iter().map(|l| l.to_string()));
        fs::write(path, rewritten.join("\n") + "\n").unwrap();
    }
    (found.len(), differences)
}

/// The lines that differ, written `-` and `+` as in a diff, with their line within the block.
fn diff(written: &[String], now: &[String]) -> String {
    let mut out = String::new();
    for i in 0..written.len().max(now.len()) {
        let (old, new) = (written.get(i), now.get(i));
        if old != new {
            if let Some(old) = old {
                out.push_str(&format!("  {:>3} - {old}\n", i + 1));
            }
            if let Some(new) = new {
                out.push_str(&format!("  {:>3} + {new}\n", i + 1));
            }
        }
    }
    out
}

#[test]
fn printed_blocks_are_what_the_commands_print() {
    let bless = std::env::var_os("WALCHECK_BLESS").is_some_and(|v| v == "1");
    let mut checked = 0;
    let mut differences = Vec::new();
    for path in documents() {
        let (count, found) = check_document(&path, bless);
        checked += count;
        differences.extend(found);
    }
    assert!(checked > 0, "no checked block in README.md or docs/");
    if !bless {
        assert!(
            differences.is_empty(),
            "{}\n{} of {checked} checked blocks differ; after reviewing the change, \
             `WALCHECK_BLESS=1 cargo test --test tests doc_blocks::` rewrites them",
            differences.join("\n"),
            differences.len()
        );
    }
}

/// The targets of `](target)` links in a file that are not URLs: (path, anchor), where an empty
/// path is the file itself.
fn relative_links(text: &str) -> Vec<(String, Option<String>)> {
    let mut links = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        let external = target.contains("://") || target.starts_with("mailto:");
        if !external && !target.is_empty() && !target.contains(' ') {
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor.to_string())),
                None => (target, None),
            };
            links.push((path.to_string(), anchor));
        }
        rest = &rest[end..];
    }
    links
}

/// The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped, spaces
/// made hyphens (fences skipped, so a `#` line of output is no heading).
fn anchors(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let heading = line.trim_start_matches('#');
        if fenced || heading.len() == line.len() || !heading.starts_with(' ') {
            continue;
        }
        let slug: String = heading
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        found.push(slug);
    }
    found
}

#[test]
fn relative_links_resolve_and_the_readme_links_every_page() {
    let mut broken = Vec::new();
    for path in documents() {
        let text = fs::read_to_string(&path).unwrap();
        let base = path.parent().unwrap();
        for (link, anchor) in relative_links(&text) {
            let target = if link.is_empty() {
                path.clone()
            } else {
                base.join(&link)
            };
            let name = format!("{}: {link}", path.strip_prefix(ROOT).unwrap().display());
            if !target.exists() {
                broken.push(format!("{name}: no such file"));
            } else if let Some(anchor) = anchor.filter(|_| link.is_empty() || link.ends_with(".md"))
            {
                let headings = anchors(&fs::read_to_string(&target).unwrap());
                if !headings.contains(&anchor) {
                    broken.push(format!("{name}#{anchor}: no such heading"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    let readme = fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let linked: Vec<String> = relative_links(&readme)
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    for page in documents().iter().skip(1) {
        let name = format!("docs/{}", page.file_name().unwrap().to_string_lossy());
        assert!(linked.contains(&name), "README.md does not link {name}");
    }
}
