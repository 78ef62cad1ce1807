//! Code the configured runs load that the reader does not parse yet (CONTRACT.md section 15.2):
//! JavaScript and TypeScript, where a command of the base's config runs Node or a tool that
//! does (vitest, jest, npm, ...). Until the reader parses them (issue 69), a changed `.js` or
//! `.ts` file of such a project is unread code, as Cython's `.pyx` is in a Python one: a gate
//! that ran vitest on it used to read nothing of it and merge on the tests alone. A project
//! whose runs do not run Node (a Python package with a `static/app.js`) loads none of it, and
//! its JavaScript stays data to the gate.

use super::super::config::GateConfig;

/// What Node, TypeScript and the test runners' transforms (vitest, jest: `.jsx`, `.tsx`) load
/// as code.
pub const JAVASCRIPT: [&str; 8] = [".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"];

/// The programs that run JavaScript: the runtimes, the package managers (a `test` script), the
/// test runners and TypeScript's compiler and runners. A command names one as its program or
/// as a word of a shell script it runs (`sh -c 'exec npx vitest run ...'`), by path or not.
const RUNNERS: [&str; 19] = [
    "node", "nodejs", "npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx", "deno", "vitest",
    "jest", "mocha", "ava", "tsx", "ts-node", "tsc", "c8", "nyc",
];

/// Whether `path` is JavaScript or TypeScript by its name: code Node runs, not a declaration
/// file (`.d.ts`, `.d.mts`, `.d.cts`: types only, nothing of it runs).
pub fn is_javascript(path: &str) -> bool {
    JAVASCRIPT.iter().any(|e| path.ends_with(e))
        && ![".d.ts", ".d.mts", ".d.cts"]
            .iter()
            .any(|e| path.ends_with(e))
}

/// Whether `path` is TypeScript that is not TSX (`.ts`, `.mts`, `.cts`): read with the
/// TypeScript grammar, where `<T>x` is a cast; the rest with its TSX dialect, where it is JSX.
pub fn is_typescript(path: &str) -> bool {
    [".ts", ".mts", ".cts"].iter().any(|e| path.ends_with(e))
}

/// Whether the JavaScript file `path` is a test file as vitest and jest find them, or a file
/// beside them: `*.test.*`, `*.spec.*`, a basename `test.ts` (date-fns keeps one beside each
/// function), anything under `test/`, `tests/`, `__tests__/`, `__mocks__/` or `__snapshots__/`.
/// Until the room runs the base's version of such a file (issue 69), a change to one is
/// unread: the reader does not read tests, and the patch's version is what would run.
pub fn is_javascript_test(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    let base = parts.pop().unwrap_or_default();
    let stem = JAVASCRIPT
        .iter()
        .find_map(|e| base.strip_suffix(e))
        .unwrap_or(base);
    let marked =
        stem == "test" || stem == "spec" || [".test", ".spec"].iter().any(|m| stem.ends_with(m));
    marked
        || parts.iter().any(|d| {
            matches!(
                *d,
                "test" | "tests" | "__tests__" | "__mocks__" | "__snapshots__"
            )
        })
}

/// Whether a command of `config` (the build, the canary, the properties, the suite, its
/// one-test and added-tests commands) runs JavaScript: one of its words, split as a shell
/// splits a script, is a [`RUNNERS`] program by its file name. It errs towards yes (a word
/// `node` anywhere counts): a yes only makes changed JavaScript unread.
pub fn runs_javascript(config: &GateConfig) -> bool {
    let suite = &config.suite;
    let commands = [
        config.build.as_ref().map(|b| &b.command),
        config.canary.as_ref().map(|c| &c.command),
        Some(&config.properties.command),
        Some(&suite.command),
        suite.test_command.as_ref(),
        suite.added.as_ref(),
    ];
    commands
        .into_iter()
        .flatten()
        .any(|argv| argv_runs_javascript(argv))
}

fn argv_runs_javascript(argv: &[String]) -> bool {
    argv.iter().any(|arg| {
        arg.split(|c: char| c.is_whitespace() || ";|&()<>'\"`$=".contains(c))
            .filter_map(|word| word.rsplit('/').next())
            .any(|program| RUNNERS.contains(&program))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which commands run JavaScript, written by hand: the program itself, by path, inside a
    /// shell script; and the commands the Python and Rust starters write, which do not.
    #[test]
    fn a_command_runs_javascript_when_a_word_of_it_is_a_runner() {
        let rows: [(&[&str], bool); 12] = [
            (&["npx", "vitest", "run"], true),
            (&["node_modules/.bin/vitest", "run"], true),
            (&["/usr/local/bin/node", "--test"], true),
            (&["npm", "test"], true),
            (
                &[
                    "sh",
                    "-c",
                    "out=$1; exec npx jest --ci > \"$out\"",
                    "sh",
                    "{junit}",
                ],
                true,
            ),
            (&["sh", "-c", "cd web&&pnpm vitest run"], true),
            (&["python", "-m", "pytest", "-q"], false),
            (&["cargo", "test", "--offline"], false),
            (&["sh", "-c", "exec pytest -k nodes tests/"], false),
            (&["python", "-m", "pytest", "tests/test_node.py"], false),
            (&["make", "check"], false),
            (&[], false),
        ];
        for (argv, expected) in rows {
            let argv: Vec<String> = argv.iter().map(|s| (*s).to_owned()).collect();
            assert_eq!(argv_runs_javascript(&argv), expected, "{argv:?}");
        }
        for (path, expected) in [
            ("src/sum.test.ts", true),
            ("src/addDays/test.ts", true),
            ("lib/a.spec.mjs", true),
            ("src/__tests__/a.ts", true),
            ("src/__mocks__/fs.js", true),
            ("test/unit/a.js", true),
            ("src/testing.ts", false),
            ("src/latest.ts", false),
            ("src/contest.js", false),
        ] {
            assert_eq!(is_javascript_test(path), expected, "{path}");
        }
        for (path, expected) in [
            ("src/a.ts", true),
            ("src/view.tsx", true),
            ("lib/index.cjs", true),
            ("types/index.d.ts", false),
            ("types/index.d.mts", false),
            ("src/dates.ts", true),
            ("package.json", false),
            ("src/a.rs", false),
            ("docs/tsconfig.md", false),
        ] {
            assert_eq!(is_javascript(path), expected, "{path}");
        }
    }
}
