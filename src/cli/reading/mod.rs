//! Reading the patch's code as a reviewer reads it (CONTRACT.md section 14): the lines the
//! patch adds (from git's structure, [`super::git::added_lines`]), the code files they are in
//! parsed with a real parser for their language (tree-sitter: [`python`], [`rust`]), and
//! what that code does matched against the reading rules, which are data ([`table::RULES`]).
//! A compared literal is a hit only when the base's tests or fixtures hold it too. What the
//! base's `[suspicious] allow` accepts is left out; `[suspicious] patterns` add spelled hits.
//! The hits are facts: the core's gate rule `test-aware` decides them.

pub mod arid;
pub mod command;
mod doctest;
pub mod in_file;
pub mod integers;
mod javascript;
mod javascript_text;
mod pinned;
mod python;
mod resolve;
pub mod runtimes;
pub(crate) mod rust;
mod rust_literals;
pub mod rust_signatures;
pub(crate) mod source;
pub(crate) mod syntax;
pub mod table;
pub mod test_defs;

use std::collections::HashSet;

use super::config::SuspiciousConfig;
use super::error::CliError;
use super::git::{AddedFile, added_lines, blobs};
use crate::core::gate::{
    SuspicionClass, SuspiciousLine, UnreadFile, UnreadReason, suspicious_counts_in,
};
use crate::core::path::RepoPath;
use syntax::Added;
use table::{Language, Seen};

/// At most this many hits are kept (the core lists 100 and counts them all).
const MAX_HITS: usize = 1000;
/// At most this many unread files are kept (the facts list 100).
const MAX_UNREAD: usize = 100;
/// A code file larger than this is not parsed: it is unread (CONTRACT.md section 15.2).
const MAX_CODE_FILE: usize = 8 << 20;

/// How a patch's edits split between test lines and code (tests inside source files,
/// [`in_file`], [`doctest`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Split {
    /// No edit touches a test line.
    Code,
    /// The content with every test line as the base has it.
    Tests(Vec<u8>),
    /// An edit the reader cannot split.
    Mixed,
}
/// The tree's Rust files are searched for `include!` up to this many bytes in all.
const MAX_INCLUDE_SCAN: usize = 64 << 20;
/// A symbolic link's mode in git.
const LINK: u32 = 0o120000;

/// What the reading found.
#[derive(Debug, Default)]
pub struct Reading {
    pub hits: Vec<SuspiciousLine>,
    /// Changed code files the reader could not read as the interpreter will.
    pub unread: Vec<UnreadFile>,
    /// The changed code files it read (not test-adjacent), and how many added lines.
    pub read: Vec<String>,
    pub added_lines: usize,
}

impl Reading {
    fn unread(&mut self, file: &str, reason: UnreadReason, detail: Option<String>) {
        if self.unread.len() < MAX_UNREAD {
            self.unread.push(UnreadFile {
                file: file.to_owned(),
                reason,
                detail: detail.map(|d| d.chars().take(200).collect()),
            });
        }
    }
}

/// Reads what the patch `base..tree` adds (`fixtures`: the fixtures directory, whose files
/// count as the tests' inputs; `javascript`: whether the runs run JavaScript, whose files are
/// then unread code, [`runtimes`]).
pub fn read_patch(
    base: &str,
    tree: &str,
    config: &SuspiciousConfig,
    (fixtures, javascript): (&str, bool),
) -> Result<Reading, CliError> {
    let files: Vec<AddedFile> = added_lines(base, tree)?
        .into_iter()
        .filter(|f| f.mode != 0)
        .filter(|f| RepoPath::parse(&f.path).is_ok_and(|p| suspicious_counts_in(&p)))
        .collect();
    let mut reading = Reading::default();
    let entries = super::export::ls_tree(tree)?;
    let paths: Vec<String> = entries
        .iter()
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .collect();
    let included = included(tree, &entries, &files)?;
    let loaded = |p: &str| javascript && runtimes::is_javascript(p);
    // A link can only be code the reader skips where there is code it reads or the runs load.
    let has_code = paths.iter().any(|p| Language::of(p).is_some() || loaded(p));
    let mut code: Vec<(&AddedFile, Language)> = Vec::new();
    for file in &files {
        if file.mode == LINK {
            let why = link_is_code(file, &paths, loaded(&file.path));
            if let Some(why) = why.filter(|_| has_code) {
                reading.unread(&file.path, UnreadReason::SymbolicLink, Some(why));
            }
            continue;
        }
        if Language::skipped(&file.path) {
            reading.unread(&file.path, UnreadReason::SkippedExtension, None);
            continue;
        }
        if loaded(&file.path) && runtimes::is_javascript_test(&file.path) {
            let why = "a JavaScript test file, which the room does not yet run as the base has it";
            reading.unread(
                &file.path,
                UnreadReason::SkippedExtension,
                Some(why.to_owned()),
            );
            continue;
        }
        match Language::of(&file.path) {
            Some(language) => code.push((file, language)),
            None if loaded(&file.path) => code.push((
                file,
                match runtimes::is_typescript(&file.path) {
                    true => Language::TypeScript,
                    false => Language::JavaScript,
                },
            )),
            // `include!`d Rust: read as the compiler reads it, as Rust.
            None if included.contains(file.path.as_str()) => code.push((file, Language::Rust)),
            None => {}
        }
    }
    let sources = blobs(
        tree,
        &code
            .iter()
            .map(|(f, _)| f.path.as_str())
            .collect::<Vec<_>>(),
        MAX_CODE_FILE,
    )?;
    let mut modules = resolve::Modules::new(tree, paths);
    let mut literals: Vec<(usize, String)> = Vec::new();
    for ((file, language), raw) in code.iter().zip(sources) {
        let Some(raw) = raw else {
            reading.unread(
                &file.path,
                UnreadReason::OverReadLimit,
                Some(format!("over {} MiB", MAX_CODE_FILE >> 20)),
            );
            continue;
        };
        let added: Vec<usize> = file.lines.iter().map(|(l, _)| *l as usize).collect();
        reading.read.push(file.path.clone());
        reading.added_lines += added.len();
        // A Cargo build script (`build.rs`) reads cargo's documented variables by design.
        let build_script = file.path.rsplit('/').next() == Some("build.rs");
        let read = match read_source(*language, &raw, &added, build_script) {
            Ok(read) => read,
            Err((reason, detail)) => {
                reading.unread(&file.path, reason, detail);
                continue;
            }
        };
        if let Some(at) = read.unparsed_at {
            reading.unread(
                &file.path,
                UnreadReason::Unparsed,
                Some(format!("from line {at}")),
            );
        }
        let mut seen = read.seen;
        if *language == Language::Python {
            // Names through the tree's own modules: `from .cli import sys` is `sys`.
            let mut more = Vec::new();
            for (line, s, code) in &seen {
                if let Seen::Name(path) = s {
                    for resolved in modules.resolve(path, &file.path)? {
                        if resolved != *path {
                            more.push((*line, Seen::Name(resolved), code.clone()));
                        }
                    }
                }
            }
            seen.extend(more);
        }
        let mut said: HashSet<(usize, &str)> = HashSet::new();
        for (line, seen, code) in seen {
            let Some(rule) = table::first_match(*language, &seen) else {
                continue;
            };
            if allowed(config, &file.path, rule.id) || !said.insert((line, rule.id)) {
                continue;
            }
            let hit = SuspiciousLine {
                file: file.path.clone(),
                line: line as u64,
                rule: rule.id.to_owned(),
                class: rule.class,
                code,
                pattern: None,
                seen_in: None,
            };
            match seen {
                // A compared literal counts only where the tests pin it (below).
                Seen::Literal(literal) => {
                    literals.push((reading.hits.len(), literal));
                    reading.hits.push(hit);
                }
                _ => reading.hits.push(hit),
            }
        }
    }
    pinned::pinned(base, (fixtures, javascript), &mut reading.hits, &literals)?;
    patterns(config, &files, &mut reading.hits)?;
    reading.hits.truncate(MAX_HITS);
    Ok(reading)
}

/// What one code file's added lines do (each with its line as git counts it and the code
/// there), and the first line the parser could not parse, if any.
#[derive(Debug)]
pub struct Read {
    pub seen: Vec<(usize, Seen, String)>,
    pub unparsed_at: Option<usize>,
}

/// The syntax tree of decoded `text` (with its errors marked); `None` when the parser gives up.
fn parse(language: Language, text: &[u8]) -> Option<tree_sitter::Tree> {
    let mut parser = tree_sitter::Parser::new();
    let grammar: tree_sitter::Language = match language {
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        Language::JavaScript => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    };
    parser.set_language(&grammar).ok()?;
    parser.parse(text, None)
}

/// Reads `raw` as its interpreter will (decoded and split into lines as it does, CONTRACT.md
/// section 15.1), `added` the lines git counts as added; or why it cannot.
pub fn read_source(
    language: Language,
    raw: &[u8],
    added: &[usize],
    build_script: bool,
) -> Result<Read, source::Unread> {
    let mut source = match language {
        Language::Python => source::python(raw)?,
        Language::Rust => source::rust(raw)?,
        Language::JavaScript | Language::TypeScript => source::javascript(raw)?,
    };
    if matches!(language, Language::JavaScript | Language::TypeScript) {
        javascript::blank_grammar_gaps(&mut source.text);
    }
    let Some(tree) = parse(language, &source.text) else {
        return Err((
            UnreadReason::Unparsed,
            Some("the parser gave up".to_owned()),
        ));
    };
    let lines = Added(source.lines_on(added));
    let mut walk = syntax::Walk::default();
    match language {
        Language::Python => python::read(&source.text, tree.root_node(), &lines, &mut walk),
        Language::Rust => rust::read(
            &source.text,
            tree.root_node(),
            &lines,
            &mut walk,
            build_script,
        ),
        Language::JavaScript | Language::TypeScript => {
            javascript::read(&source.text, tree.root_node(), &lines, &mut walk).map_err(
                |javascript::InSourceTests(line)| {
                    (
                        UnreadReason::SkippedExtension,
                        Some(format!(
                            "line {}: an in-source test block (`import.meta.vitest`), which the room does not yet run as the base has it",
                            source.git_line(line)
                        )),
                    )
                },
            )?;
        }
    }
    let root = tree.root_node();
    let unparsed_at = root.has_error().then(|| {
        syntax::descendants(root)
            .find(|n| n.is_error() || n.is_missing())
            .map_or(1, |n| source.git_line(n.start_position().row + 1))
    });
    let line_text = source.line_texts();
    Ok(Read {
        seen: walk
            .seen
            .into_iter()
            .map(|(line, seen)| (source.git_line(line), seen, line_text(line)))
            .collect(),
        unparsed_at,
    })
}

/// Why a symbolic link the patch adds among the code is unread, if it is: a link named as
/// code, or one a package or module could be imported through (a name an identifier could
/// be) to a directory of the tree or out of it: the interpreter loads through it what the
/// reader never sees. A link to a plain file of the tree named as data (`README.md ->
/// docs/README.md`), or named as nothing code can import (`.patchgate`), is not code; nor is
/// any link in a tree with no Python or Rust file and no JavaScript the runs load (the
/// caller's part; `loaded`: the link is named as code the runs load).
fn link_is_code(file: &AddedFile, paths: &[String], loaded: bool) -> Option<String> {
    let target = file.lines.first().map(|(_, t)| t.as_str()).unwrap_or("");
    let said = Some(format!("-> {target}"));
    if Language::of(&file.path).is_some() || Language::skipped(&file.path) || loaded {
        return said;
    }
    let name = file.path.rsplit('/').next().unwrap_or_default();
    let importable = name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !importable {
        return None;
    }
    // The target, from the link's directory, normalised inside the tree.
    let mut at: Vec<&str> = file.path.split('/').collect();
    at.pop();
    if target.starts_with('/') {
        return said;
    }
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                at.pop()?;
            }
            p => at.push(p),
        }
    }
    let resolved = at.join("/");
    let prefix = format!("{resolved}/");
    let is_file = paths.contains(&resolved);
    let is_dir = paths.iter().any(|p| p.starts_with(&prefix));
    if is_dir || !is_file || Language::of(&resolved).is_some() {
        return said;
    }
    None
}

/// The changed files (not code by their names) that a Rust file of the tree `include!`s:
/// Rust the compiler reads with the file that includes it (CONTRACT.md section 15.1).
fn included<'f>(
    tree: &str,
    entries: &[super::export::TreeEntry],
    files: &'f [AddedFile],
) -> Result<HashSet<&'f str>, CliError> {
    let candidates: HashSet<&str> = files
        .iter()
        .filter(|f| f.mode != LINK && Language::of(&f.path).is_none())
        .map(|f| f.path.as_str())
        .collect();
    let mut out = HashSet::new();
    if candidates.is_empty() {
        return Ok(out);
    }
    let rust: Vec<String> = entries
        .iter()
        .filter(|e| e.mode & 0o170000 == 0o100000)
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .filter(|p| p.ends_with(".rs"))
        .collect();
    let mut budget = MAX_INCLUDE_SCAN;
    for chunk in rust.chunks(256) {
        let names: Vec<&str> = chunk.iter().map(String::as_str).collect();
        for (path, content) in names.iter().zip(blobs(tree, &names, MAX_CODE_FILE)?) {
            let Some(content) = content else { continue };
            budget = budget.saturating_sub(content.len());
            let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
            for target in include_targets(&content) {
                let joined = if dir.is_empty() {
                    target.clone()
                } else {
                    format!("{dir}/{target}")
                };
                if let Ok(normal) = RepoPath::parse(&joined)
                    && let Some(name) = candidates.get(normal.as_str())
                {
                    out.insert(*name);
                }
            }
            if budget == 0 {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// The literal paths a Rust file's `include!(...)` invocations name (a plain string literal:
/// a computed path, `concat!(env!("OUT_DIR"), ...)`, names the build's output, not a file of
/// the tree).
fn include_targets(content: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(content);
    let mut out = Vec::new();
    for (at, _) in text.match_indices("include!") {
        // Not `include_str!`/`include_bytes!` (data, not code), nor part of a longer name.
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = text[at + "include!".len()..].trim_start();
        let Some(rest) = rest.strip_prefix(['(', '[', '{']) else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(lit) = rest.strip_prefix('"')
            && let Some(end) = lit.find('"')
        {
            out.push(lit[..end].to_owned());
        }
    }
    out
}

/// Whether the base's `[suspicious] allow` accepts `rule` for `file` (a file, or a directory
/// it is under).
fn allowed(config: &SuspiciousConfig, file: &str, rule: &str) -> bool {
    config.allow.iter().any(|a| {
        a.rule == rule
            && (file == a.path
                || file
                    .strip_prefix(a.path.as_str())
                    .is_some_and(|rest| rest.starts_with('/')))
    })
}

/// The `[suspicious] patterns` hits: each added line of a file that is not test-adjacent
/// that matches one, where no reading rule hit the same line.
fn patterns(
    config: &SuspiciousConfig,
    files: &[AddedFile],
    hits: &mut Vec<SuspiciousLine>,
) -> Result<(), CliError> {
    let patterns = config.compiled().map_err(CliError::data)?;
    if patterns.is_empty() {
        return Ok(());
    }
    let already: HashSet<(String, u64)> = hits.iter().map(|h| (h.file.clone(), h.line)).collect();
    for file in files {
        if allowed(config, &file.path, table::PATTERN_RULE) {
            continue;
        }
        for (line, text) in &file.lines {
            if already.contains(&(file.path.clone(), u64::from(*line))) {
                continue;
            }
            if let Some((pattern, _)) = patterns.iter().find(|(_, r)| r.is_match(text)) {
                hits.push(SuspiciousLine {
                    file: file.path.clone(),
                    line: u64::from(*line),
                    rule: table::PATTERN_RULE.to_owned(),
                    class: SuspicionClass::Probe,
                    code: text.trim().chars().take(200).collect(),
                    pattern: Some(pattern.clone()),
                    seen_in: None,
                });
                if hits.len() >= MAX_HITS {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules each snippet trips (every line of it added), by line: written by hand from
    /// CONTRACT.md 14.2 and the narrowing of 14.3 (docs/reference/reading-rules.md).
    #[test]
    fn what_the_reading_sees_in_code() {
        type Case = (Language, &'static str, &'static [(usize, &'static str)]);
        let cases: &[Case] = &[
            (
                Language::Python,
                "import sys\nif 'pytest' in sys.modules:\n    pass\n",
                &[(2, "test-stack-text"), (2, "interpreter")],
            ),
            (
                Language::Python,
                "x = '_py' + 'test' in getattr(__import__('s' + 'ys'), 'mod' + 'ules')\n",
                &[
                    (1, "test-stack-text"),
                    (1, "reflection"),
                    (1, "dynamic-import"),
                ],
            ),
            // A literal `__import__` is an import the reader follows (CONTRACT 15.1: read
            // as the interpreter runs it); a computed one, or one with more arguments, is not.
            (
                Language::Python,
                "m = __import__('concurrent.futures').futures\n",
                &[],
            ),
            (
                Language::Python,
                "m = __import__('_pytest.config')\n",
                &[(1, "test-stack"), (1, "test-stack-text")],
            ),
            (
                Language::Python,
                "home = __import__('os').environ['HOME']\n",
                &[(1, "environment")],
            ),
            (
                Language::Python,
                "m = __import__('os', fromlist=['path'])\n",
                &[(1, "dynamic-import")],
            ),
            (
                Language::Python,
                "m = __import__(f'{name}')\n",
                &[(1, "dynamic-import")],
            ),
            (
                Language::Python,
                "f = __import__\nm = f('os')\n",
                &[(1, "dynamic-import")],
            ),
            (
                Language::Python,
                "def __import__(n):\n    return n\nm = __import__('os')\n",
                &[(3, "dynamic-import")],
            ),
            (
                Language::Python,
                "x = f\"{'py'}test\"\n",
                &[(1, "test-stack-text")],
            ),
            (
                Language::Python,
                "x = ''.join(['py', 'test'])\n",
                &[(1, "test-stack-text")],
            ),
            (Language::Python, "\"\"\"Run pytest to check.\"\"\"\n", &[]),
            (Language::Python, "x = getattr(obj, name)\n", &[]),
            (
                Language::Python,
                "x = getattr(obj, 'a' + b)\n",
                &[(1, "reflection")],
            ),
            (Language::Python, "x = eval(text)\n", &[(1, "reflection")]),
            (
                Language::Python,
                "import inspect\nsig = inspect.signature(f)\n",
                &[],
            ),
            (
                Language::Python,
                "import inspect as i\nframes = i.stack()\n",
                &[(2, "interpreter")],
            ),
            (
                Language::Python,
                "from os import environ as e\n",
                &[(1, "environment")],
            ),
            (
                Language::Python,
                "import os\nhere = os.getcwd()\n",
                &[(2, "working-directory")],
            ),
            (Language::Python, "signal = Signal()\nsignal.send()\n", &[]),
            (Language::Python, "import importlib.metadata\n", &[]),
            (
                Language::Python,
                "from importlib import import_module\n",
                &[(1, "dynamic-import")],
            ),
            (
                Language::Python,
                "class A(int):\n    pass\n",
                &[(1, "value-type-subclass")],
            ),
            (Language::Python, "class C(str, Enum):\n    A = 'a'\n", &[]),
            (
                Language::Python,
                "class P:\n    def __eq__(self, o):\n        return True\n",
                &[(2, "comparison-method")],
            ),
            (
                Language::Python,
                "class P:\n    __le__ = __ge__ = f\n",
                &[(2, "comparison-method")],
            ),
            (
                Language::Python,
                "def helper(self, o):\n    return o\n",
                &[],
            ),
            (
                Language::Python,
                "p = open('/proc/self/status')\n",
                &[(1, "host-paths")],
            ),
            (
                Language::Python,
                "if (cents, percent) == (1999, 50):\n    pass\n",
                &[(1, "pinned-literal")],
            ),
            (Language::Python, "x = 12345\ny = 'hello world'\n", &[]),
            // CONTRACT.md section 15: what the interpreter runs, however it is spelled.
            (
                Language::Python,
                "# rounding\rimport sys\nx = sys.modules\n",
                &[(2, "interpreter")],
            ),
            (
                Language::Python,
                "import \u{ff53}\u{ff59}\u{ff53}\nx = \u{ff53}\u{ff59}\u{ff53}.\u{ff4d}odules\n",
                &[(2, "interpreter")],
            ),
            (Language::Python, "run = exec\n", &[(1, "reflection")]),
            (
                Language::Python,
                "f = functools.partial(getattr, obj)\n",
                &[(1, "reflection")],
            ),
            (
                Language::Python,
                "def f(compile):\n    return compile(x)\n",
                &[],
            ),
            (Language::Python, "t = type(x)\n", &[]),
            (
                Language::Python,
                "T = type('T', (int,), {'__eq__': f})\n",
                &[(1, "reflection")],
            ),
            (
                Language::Python,
                "setattr(C, '__eq__', f)\n",
                &[(1, "reflection")],
            ),
            (Language::Python, "C.__hash__ = f\n", &[(1, "reflection")]),
            (Language::Python, "ns['__eq__'] = f\n", &[(1, "reflection")]),
            (
                Language::Python,
                "ns = dict(__lt__=f)\n",
                &[(1, "reflection")],
            ),
            (
                Language::Python,
                "if has_own(cls, '__eq__') or name in ('__eq__', '__ne__'):\n    pass\n",
                &[],
            ),
            (
                Language::Python,
                "import faulthandler\nok = faulthandler.is_enabled()\n",
                &[(1, "interpreter"), (2, "interpreter")],
            ),
            (
                Language::Python,
                "import ctypes\nf = ctypes.pythonapi.PyImport_GetModuleDict\n",
                &[(1, "interpreter"), (2, "interpreter")],
            ),
            (
                Language::Python,
                "for k in Exception.__subclasses__():\n    pass\n",
                &[(1, "interpreter")],
            ),
            (
                Language::Python,
                "from os import *\nx = environ.get('A')\n",
                &[(2, "environment")],
            ),
            (
                Language::Python,
                "import types\nC = types.new_class('C', (int,))\n",
                &[(2, "reflection")],
            ),
            (
                Language::Rust,
                "#[cfg(test)]\nmod tests {\n    fn a() { std::process::exit(0) }\n}\n",
                &[],
            ),
            (
                Language::Rust,
                "#[cfg(test)]\nfn helper() {}\n",
                &[(1, "cfg-test")],
            ),
            (
                Language::Rust,
                "fn a() -> bool { cfg!(test) }\n",
                &[(1, "cfg-test")],
            ),
            (
                Language::Rust,
                "use std::env;\nfn a() { let _ = env::var(\"X\"); }\n",
                &[(2, "rust-environment")],
            ),
            (
                Language::Rust,
                "use std::env::var;\nfn a() { let _ = var(\"X\"); }\n",
                &[(1, "rust-environment"), (2, "rust-environment")],
            ),
            (
                Language::Rust,
                "fn a() { std::process::exit(0) }\n",
                &[(1, "rust-exit")],
            ),
            (
                Language::Rust,
                "impl PartialEq for X {\n    fn eq(&self, _: &Self) -> bool { true }\n}\n",
                &[(1, "hand-written-comparison")],
            ),
            (Language::Rust, "#[derive(PartialEq, Eq)]\nstruct X;\n", &[]),
            (
                Language::Rust,
                "fn a(x: u32) -> bool { x == 12345 }\n",
                &[(1, "rust-pinned-literal")],
            ),
            (
                Language::Rust,
                "fn a() -> bool { std::env::args().any(|a| a.contains(\"/deps/\")) }\n",
                &[(1, "rust-environment"), (1, "rust-test-stack-text")],
            ),
            (
                Language::Rust,
                "#[test]\nfn t() { assert_eq!(f(), 12345); }\n",
                &[],
            ),
        ];
        for (language, code, want) in cases {
            let lines = code.split('\n').count();
            let added: Vec<usize> = (1..=lines).collect();
            let read = read_source(*language, code.as_bytes(), &added, false).expect("read");
            assert!(read.unparsed_at.is_none(), "{code}");
            let seen: Vec<(usize, Seen)> = read.seen.into_iter().map(|(l, s, _)| (l, s)).collect();
            // A compared literal is a candidate only: it becomes a hit when the base's tests
            // pin it (`pinned`), so a case that names no pinned rule leaves candidates out.
            let pinned = |id: &str| id.ends_with("pinned-literal");
            let wants_pinned = want.iter().any(|(_, id)| pinned(id));
            let mut got: Vec<(usize, &str)> = seen
                .iter()
                .filter_map(|(line, s)| Some((*line, table::first_match(*language, s)?.id)))
                .filter(|(_, id)| wants_pinned || !pinned(id))
                .collect();
            got.dedup();
            let mut got_sorted = got.clone();
            got_sorted.sort();
            got_sorted.dedup();
            let mut want_sorted = want.to_vec();
            want_sorted.sort();
            assert_eq!(got_sorted, want_sorted, "{code}");
        }
    }

    /// A definition counts when any of its lines is added; a line outside it does not make it
    /// a hit.
    #[test]
    fn a_definition_counts_when_a_line_of_it_is_added() {
        let code = b"class P:\n    def __eq__(self, o):\n        return True\n\nx = 1\n";
        let rules = |added: Vec<usize>| -> Vec<&str> {
            read_source(Language::Python, code, &added, false)
                .expect("read")
                .seen
                .iter()
                .filter_map(|(_, s, _)| Some(table::first_match(Language::Python, s)?.id))
                .collect()
        };
        assert_eq!(rules(vec![3]), ["comparison-method"]);
        assert_eq!(rules(vec![5]), Vec::<&str>::new());
    }

    /// Issue 50: a build script reads the variables cargo documents for it (`OUT_DIR`,
    /// `CARGO_*`, `TARGET`, `PROFILE`...) by design: not a probe there; any other read of the
    /// environment, one not spelled as a literal, or the same read outside `build.rs`, is.
    #[test]
    fn a_build_script_reads_cargo_s_variables_unflagged() {
        let rules = |code: &str, build_script: bool| -> Vec<(usize, &str)> {
            let added: Vec<usize> = (1..=code.split('\n').count()).collect();
            read_source(Language::Rust, code.as_bytes(), &added, build_script)
                .expect("read")
                .seen
                .iter()
                .filter_map(|(l, s, _)| Some((*l, table::first_match(Language::Rust, s)?.id)))
                .collect()
        };
        let honest = "use std::env;\nfn main() {\n    let out = env::var(\"OUT_DIR\").unwrap();\n    let f = std::env::var_os(\"CARGO_FEATURE_STD\");\n    let t = env::var(\"TARGET\");\n}\n";
        assert_eq!(rules(honest, true), []);
        assert_eq!(
            rules(honest, false),
            [
                (3, "rust-environment"),
                (4, "rust-environment"),
                (5, "rust-environment")
            ]
        );
        let imported = "use std::env::var;\nfn main() { let _ = var(\"PROFILE\"); }\n";
        assert_eq!(rules(imported, true), []);
        for probe in [
            "fn main() { let _ = std::env::var(\"NEXTEST_RUN_ID\"); }\n",
            "fn main() { let n = \"OUT_DIR\"; let _ = std::env::var(n); }\n",
            "fn main() { let _ = std::env::vars(); }\n",
            "fn main() { let _ = std::env::args(); }\n",
            "fn main() { let _ = std::env::var(concat!(\"OUT\", \"_DIR\")); }\n",
            "fn main() { let _ = std::env::var(\"CARGO_TARGET_TMPDIR\"); }\n",
        ] {
            assert!(
                rules(probe, true)
                    .iter()
                    .any(|(_, id)| *id == "rust-environment"),
                "{probe}"
            );
        }
    }
}
