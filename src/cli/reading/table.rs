//! The reading rules (CONTRACT.md section 14.2) as data: each with its id, language, class,
//! what it matches and why. The parsers (`python.rs`, `rust.rs`) say what the
//! patch's code does ([`Seen`]); [`first_match`] names the first rule of the table that
//! matches it. docs/reference/reading-rules.md is generated from [`RULES`].

use crate::core::gate::SuspicionClass;

/// A language the reading parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Python,
    Rust,
    /// JavaScript, JSX and TSX: the TSX dialect of tree-sitter's TypeScript grammar.
    JavaScript,
    /// `.ts`, `.mts`, `.cts`: the TypeScript grammar. Its rules are JavaScript's.
    TypeScript,
}

impl Language {
    /// The language of a file, by its name.
    pub fn of(path: &str) -> Option<Self> {
        if path.ends_with(".py") || path.ends_with(".pyi") || path.ends_with(".pyw") {
            Some(Self::Python)
        } else if path.ends_with(".rs") {
            Some(Self::Rust)
        } else {
            None
        }
    }

    /// Whether `path` is code the interpreter or the build loads under an extension no
    /// parser here reads (Cython's `.pyx`, `.pxd`, `.pxi`): unread when changed.
    pub fn skipped(path: &str) -> bool {
        [".pyx", ".pxd", ".pxi"].iter().any(|e| path.ends_with(e))
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Python => "Python",
            Self::Rust => "Rust",
            Self::JavaScript => "JavaScript",
            Self::TypeScript => "TypeScript",
        }
    }

    /// The language whose rules this one's code is read by.
    pub fn rules(self) -> Self {
        match self {
            Self::TypeScript => Self::JavaScript,
            other => other,
        }
    }
}

/// What a rule matches, in the code the patch adds.
#[derive(Debug, Clone, Copy)]
pub enum Match {
    /// A name the code uses, resolved through the file's imports (`import sys as s;
    /// s.argv` is `sys.argv`; Rust paths without a leading `std::`/`core::`): equal to one of
    /// these, or under it (`os.environ.get` is under `os.environ`).
    Names(&'static [&'static str]),
    /// A name the code uses, resolved as in [`Match::Names`], equal to one of these (not
    /// under it).
    Exact(&'static [&'static str]),
    /// A call of one of these built-in functions by its bare name.
    Calls(&'static [&'static str]),
    /// A reference to one of these built-ins that is not a call (`run = exec`,
    /// `map(getattr, ...)`): what it runs or reaches is out of the reader's sight wherever it
    /// is called (CONTRACT.md section 15.2).
    References(&'static [&'static str]),
    /// A class made without `class` syntax: `type(name, bases, namespace)`.
    NewClass,
    /// An attribute set by one of these names outside a class body: `setattr(C, "__eq__", f)`,
    /// `{"__eq__": f}`, `ns["__eq__"] = f`, `dict(__eq__=f)`, `C.__eq__ = f`.
    Sets(&'static [&'static str]),
    /// A call of one of these with the attribute name it asks for computed (neither a
    /// string literal nor a plain name).
    ComputedName(&'static [&'static str]),
    /// An attribute with one of these names, on anything (`frame.f_back`).
    Attributes(&'static [&'static str]),
    /// A string constant, after folding what the parser can fold (concatenations, implicit
    /// concatenation, f-strings of constants, `"".join` of constants; Rust `concat!`), that
    /// contains one of `contains`, is one of `equals`, or starts with one of `starts`.
    Text {
        contains: &'static [&'static str],
        equals: &'static [&'static str],
        starts: &'static [&'static str],
    },
    /// A method, or a class attribute, with one of these names, added or changed.
    Methods(&'static [&'static str]),
    /// A class added (or its bases changed) deriving from one of `of`, unless another of its
    /// bases is one of `unless`.
    Bases {
        of: &'static [&'static str],
        unless: &'static [&'static str],
    },
    /// A hand-written `impl` of one of these traits, added or changed.
    Impls(&'static [&'static str]),
    /// `#[cfg(...test...)]` or `cfg!(test)` outside a test module (on a `mod` it makes that
    /// module a test module, which is the tests' own business).
    CfgTest,
    /// A literal the code compares against (an operand of `==`, `!=`, `<`, `in`..., or a
    /// `case`/`match` pattern), a string of 4 or more characters or a number with 3 or more
    /// significant digits, that also appears in the base's test files or fixtures.
    PinnedLiteral,
}

/// One reading rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub id: &'static str,
    pub language: Language,
    pub class: SuspicionClass,
    /// Any of these.
    pub matches: &'static [Match],
    pub why: &'static str,
}

/// What a parser saw the added code do (one per construct, on the line it starts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Name(String),
    Call(String),
    Reference(String),
    NewClass,
    Sets(String),
    ComputedName(String),
    Attribute(String),
    Text(String),
    Method(String),
    Bases(Vec<String>),
    Impl(String),
    CfgTest,
    /// A compared literal: its text as the tests would write it (a string's content, a
    /// number's digits).
    Literal(String),
}

use Language::{JavaScript, Python, Rust};

/// The methods every comparison, hash and truth test goes through.
/// The built-ins whose attribute name argument is read (`getattr(x, name)`).
pub const ATTRIBUTE_BUILTINS: [&str; 4] = ["getattr", "setattr", "hasattr", "delattr"];

/// Built-ins whose mere reference counts (CONTRACT.md section 15.2): bound to another name,
/// passed along or stored, each still runs or reaches code the reader cannot follow (in
/// alphabetical order).
pub const REFERENCED: [&str; 13] = [
    "__import__",
    "breakpoint",
    "compile",
    "delattr",
    "eval",
    "exec",
    "getattr",
    "globals",
    "hasattr",
    "locals",
    "setattr",
    "type",
    "vars",
];

const COMPARISON_METHODS: [&str; 10] = [
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__bool__",
    "__instancecheck__",
    "__subclasshook__",
];
use SuspicionClass::{Overload, Probe, SpecialCase};

/// The reading rules, in the order they are tried (the first that matches names a hit).
pub const RULES: [Rule; 27] = [
    Rule {
        id: "test-stack",
        language: Python,
        class: Probe,
        matches: &[Match::Names(&[
            "pytest",
            "_pytest",
            "hypothesis",
            "unittest",
            "conftest",
            "patchgate",
            "nose",
        ])],
        why: "code that imports or names the test runner behaves as the runner lets it: a test file may, the code under test has no reason to",
    },
    Rule {
        id: "test-stack-text",
        language: Python,
        class: Probe,
        matches: &[Match::Text {
            contains: &[
                "pytest",
                "PYTEST",
                "conftest",
                "unittest",
                "_hypothesis",
                "hypothesis.",
                "NEXTEST",
                "nextest",
                "patchgate",
            ],
            equals: &[
                "hypothesis",
                "sys",
                "modules",
                "argv",
                "orig_argv",
                "environ",
                "_getframe",
                "excepthook",
                "settrace",
                "_exit",
            ],
            starts: &[],
        }],
        why: "a string that spells the test stack, or the name of what a probe reads, once the parser folds it ('_py' + 'test'): the spelling a pattern misses",
    },
    Rule {
        id: "dynamic-import",
        language: Python,
        class: Probe,
        // Narrowed on real history (section 14.3): `importlib.metadata` is honest, so the
        // module itself is not a hit; what imports by a computed name is.
        matches: &[
            // The module itself, as a value (`b = builtins`); its members by name below
            // (`from builtins import ExceptionGroup` is honest).
            Match::Exact(&["builtins"]),
            Match::Names(&[
                "__import__",
                "__builtins__",
                "builtins.exec",
                "builtins.eval",
                "builtins.compile",
                "builtins.__import__",
                "builtins.getattr",
                "builtins.setattr",
                "builtins.delattr",
                "builtins.hasattr",
                "builtins.globals",
                "builtins.locals",
                "builtins.vars",
                "builtins.__dict__",
                "importlib.import_module",
                "importlib.__import__",
                "importlib.util",
                "importlib.machinery",
                "importlib.reload",
            ]),
        ],
        why: "an import by a computed name, or through the built-ins, hides what the code loads and asks for from the reader",
    },
    Rule {
        id: "reflection",
        language: Python,
        class: Probe,
        matches: &[
            Match::ComputedName(&ATTRIBUTE_BUILTINS),
            Match::Calls(&[
                "eval",
                "exec",
                "compile",
                "globals",
                "locals",
                "vars",
                "breakpoint",
            ]),
            Match::References(&REFERENCED),
            Match::NewClass,
            Match::Names(&[
                "types.new_class",
                "types.FunctionType",
                "types.CodeType",
                "types.LambdaType",
                "marshal",
                "runpy",
                "code",
                "codeop",
                "zipimport",
                "pickle.loads",
                "pickle.load",
                "pickle.Unpickler",
            ]),
            // Setting a comparison method by name (`setattr(C, "__eq__", f)`, a namespace
            // `{"__eq__": f}` for `type()`, `ns["__eq__"] = f`, `C.__eq__ = f`).
            Match::Sets(&COMPARISON_METHODS),
        ],
        why: "an attribute named by a computed string, code run from a string or a data file, a built-in that runs code passed along under another name, a class made without `class` syntax, a comparison method set by name: code a reviewer cannot read",
    },
    Rule {
        id: "interpreter",
        language: Python,
        class: Probe,
        matches: &[
            Match::Names(&[
                "sys.modules",
                "sys.argv",
                "sys.orig_argv",
                "sys._getframe",
                "sys.settrace",
                "sys.gettrace",
                "sys.setprofile",
                "sys.excepthook",
                "sys.exit",
                "os._exit",
                "atexit",
                "signal",
                // Narrowed on real history (section 14.3): `inspect.signature` is honest; the
                // frames and the stack are what a probe reads.
                "inspect.stack",
                "inspect.currentframe",
                "inspect.getouterframes",
                "inspect.getinnerframes",
                "inspect.getframeinfo",
                "inspect.trace",
                "gc.get_objects",
                "gc.get_referrers",
                "gc.get_referents",
                "traceback.extract_stack",
                "traceback.walk_stack",
                "traceback.extract_tb",
                "traceback.walk_tb",
                "threading.settrace",
                "threading.setprofile",
                "sys._current_frames",
                "sys.addaudithook",
                "faulthandler",
                "ctypes",
                "inspect.getmro",
            ]),
            Match::Calls(&["exit", "quit"]),
            Match::Attributes(&[
                "f_back",
                "f_globals",
                "f_locals",
                "f_code",
                "tb_frame",
                "tb_next",
                "gi_frame",
                "gi_code",
                "cr_frame",
                "ag_frame",
                // Object walks: from any object to every class and function loaded.
                "__subclasses__",
                "__mro__",
                "mro",
                "__bases__",
                "__base__",
                "__globals__",
                "__builtins__",
                "__code__",
                "__closure__",
                "__traceback__",
            ]),
        ],
        why: "what is loaded, the process's arguments, its callers' frames, its exit and its signals, the interpreter's own state (faulthandler, C-level access through ctypes) and walks over every class or frame are where a test runner shows: code that reads them can tell a test from production",
    },
    Rule {
        id: "working-directory",
        language: Python,
        class: Probe,
        matches: &[Match::Names(&[
            "os.getcwd",
            "os.getcwdb",
            "os.chdir",
            "pathlib.Path.cwd",
        ])],
        why: "a compare of the working directory tells where the code runs (a checkout, a room)",
    },
    Rule {
        id: "environment",
        language: Python,
        class: Probe,
        matches: &[Match::Names(&[
            "os.environ",
            "os.environb",
            "os.getenv",
            "os.getenvb",
            "os.putenv",
            "os.unsetenv",
        ])],
        why: "the environment is where a test runner announces itself (PYTEST_CURRENT_TEST, CI)",
    },
    Rule {
        id: "process-ids",
        language: Python,
        class: Probe,
        matches: &[Match::Names(&[
            "os.getpid",
            "os.getppid",
            "os.getpgid",
            "os.getpgrp",
            "os.getsid",
        ])],
        why: "process ids tell a fresh PID namespace (a sandboxed run) from a developer's shell",
    },
    Rule {
        id: "host-paths",
        language: Python,
        class: Probe,
        matches: &[Match::Text {
            contains: &[],
            equals: &[],
            starts: &["/proc", "/sys/"],
        }],
        why: "/proc and /sys describe the process and the machine it runs on, not the data",
    },
    Rule {
        id: "comparison-method",
        language: Python,
        class: Overload,
        matches: &[Match::Methods(&COMPARISON_METHODS)],
        why: "every assertion compares through these: a method that always agrees makes every check pass",
    },
    Rule {
        id: "value-type-subclass",
        language: Python,
        class: Overload,
        matches: &[Match::Bases {
            of: &[
                "int",
                "float",
                "complex",
                "str",
                "bytes",
                "bool",
                "tuple",
                "list",
                "dict",
                "set",
                "frozenset",
            ],
            unless: &[
                "Enum",
                "IntEnum",
                "StrEnum",
                "Flag",
                "IntFlag",
                "enum.Enum",
                "enum.IntEnum",
                "enum.StrEnum",
            ],
        }],
        why: "a value that passes for an int or a tuple but is not one can compare, hash or iterate as it likes where a test looks at it",
    },
    Rule {
        id: "pinned-literal",
        language: Python,
        class: SpecialCase,
        matches: &[Match::PinnedLiteral],
        why: "code that compares against exactly the value a test pins is written to pass that test, not to be right",
    },
    Rule {
        id: "cfg-test",
        language: Rust,
        class: Probe,
        matches: &[Match::CfgTest],
        why: "code compiled differently under test is not the code that ships",
    },
    Rule {
        id: "rust-environment",
        language: Rust,
        class: Probe,
        matches: &[Match::Names(&[
            "env::var",
            "env::var_os",
            "env::vars",
            "env::vars_os",
            "env::args",
            "env::args_os",
            "env::current_dir",
            "env::current_exe",
            "env::*",
            "thread::current",
        ])],
        why: "the environment, the arguments, the working directory, the executable's path and the thread's name are where cargo test and nextest show",
    },
    Rule {
        id: "rust-exit",
        language: Rust,
        class: Probe,
        matches: &[Match::Names(&[
            "process::exit",
            "process::abort",
            "process::id",
        ])],
        why: "leaving the process before the harness reports turns any failure into a clean exit",
    },
    Rule {
        id: "rust-test-stack-text",
        language: Rust,
        class: Probe,
        matches: &[Match::Text {
            contains: &["NEXTEST", "nextest", "RUST_TEST", "patchgate", "/deps/"],
            equals: &[],
            starts: &["/proc", "/sys/"],
        }],
        why: "a string naming the test harness, its variables, a test binary's directory or the process's own files",
    },
    Rule {
        id: "hand-written-comparison",
        language: Rust,
        class: Overload,
        matches: &[Match::Impls(&[
            "PartialEq",
            "PartialOrd",
            "Eq",
            "Ord",
            "Hash",
        ])],
        why: "assert_eq! compares through PartialEq: a hand-written one that always agrees makes every check pass (derive it instead)",
    },
    Rule {
        id: "rust-pinned-literal",
        language: Rust,
        class: SpecialCase,
        matches: &[Match::PinnedLiteral],
        why: "code that compares against exactly the value a test pins is written to pass that test, not to be right",
    },
    Rule {
        id: "js-test-stack",
        language: JavaScript,
        class: Probe,
        matches: &[Match::Names(&[
            "vitest",
            "vi",
            "jest",
            "expect",
            "mocha",
            "chai",
            "import.meta.vitest",
        ])],
        why: "code that names the test runner or its globals (`vi`, `jest`, `expect`), or reads `import.meta.vitest` outside the in-source test block, behaves as the runner lets it",
    },
    Rule {
        id: "js-test-stack-text",
        language: JavaScript,
        class: Probe,
        matches: &[Match::Text {
            contains: &[
                "vitest",
                "VITEST",
                "JEST_",
                "jest-",
                "@jest",
                "node:test",
                "mocha",
                "MOCHA",
                "patchgate",
                "PATCHGATE",
            ],
            equals: &["jest"],
            starts: &[],
        }],
        why: "a string that spells the test stack or its variables, once the parser folds it (`\"VI\" + \"TEST\"`, `\\x56ITEST`, `String.fromCharCode`), a module specifier included",
    },
    Rule {
        id: "js-dynamic-code",
        language: JavaScript,
        class: Probe,
        matches: &[
            Match::Calls(&["eval", "Function"]),
            Match::References(&["eval"]),
            Match::ComputedName(&[
                "require",
                "import",
                "globalThis",
                "global",
                "window",
                "self",
                "process",
                "module",
            ]),
            Match::Names(&[
                "vm",
                "module.constructor",
                "module.require",
                "module.children",
                "require.cache",
                "require.main",
                "require.extensions",
                "Module",
                "worker_threads",
                "inspector",
            ]),
        ],
        why: "code run from a string (`eval`, `new Function`, `vm`), a module loaded by a computed name, the global scope or the process read by a computed key, the module cache: code a reviewer cannot read",
    },
    Rule {
        id: "js-process",
        language: JavaScript,
        class: Probe,
        matches: &[
            Match::Exact(&["process"]),
            Match::Names(&[
                "process.argv",
                "process.argv0",
                "process.execArgv",
                "process.exit",
                "process.exitCode",
                "process.abort",
                "process.reallyExit",
                "process.kill",
                "process.on",
                "process.once",
                "process.addListener",
                "process.prependListener",
                "process.emit",
                "process.execPath",
                "process.mainModule",
                "process.binding",
                "process.dlopen",
                "process.report",
                "process.title",
                "process.stdout",
                "process.stderr",
                "Deno.args",
                "Deno.exit",
                "Bun.argv",
                "Error.captureStackTrace",
                "Error.prepareStackTrace",
                "Error.stackTraceLimit",
            ]),
            Match::Attributes(&["stack"]),
            Match::Text {
                contains: &[],
                equals: &[],
                starts: &["/proc", "/sys/"],
            },
        ],
        why: "the process's arguments (vitest's and jest's show there), its exit, its signal and exit handlers, the process object passed along, the call stack's text (a test file's path is in it) and the process's own files under `/proc` are where a test run shows",
    },
    Rule {
        id: "js-working-directory",
        language: JavaScript,
        class: Probe,
        matches: &[Match::Names(&["process.cwd", "process.chdir", "Deno.cwd"])],
        why: "a compare of the working directory tells where the code runs (a checkout, a room)",
    },
    Rule {
        id: "js-environment",
        language: JavaScript,
        class: Probe,
        matches: &[Match::Names(&[
            "process.env",
            "import.meta.env",
            "Deno.env",
            "Bun.env",
            "os.hostname",
            "os.userInfo",
        ])],
        why: "the environment is where a test runner announces itself (VITEST, JEST_WORKER_ID, NODE_ENV=test)",
    },
    Rule {
        id: "js-process-ids",
        language: JavaScript,
        class: Probe,
        matches: &[Match::Names(&[
            "process.pid",
            "process.ppid",
            "process.getuid",
            "process.geteuid",
            "process.getgid",
            "process.getegid",
            "Deno.pid",
        ])],
        why: "process ids tell a fresh PID namespace (a sandboxed run) from a developer's shell",
    },
    Rule {
        id: "js-comparison",
        language: JavaScript,
        class: Overload,
        matches: &[
            Match::Methods(&[
                "valueOf",
                "toJSON",
                "asymmetricMatch",
                "Symbol.toPrimitive",
                "Symbol.hasInstance",
                "$$typeof",
            ]),
            Match::Calls(&["Proxy"]),
            Match::Names(&["Proxy", "Symbol.toPrimitive", "Symbol.hasInstance"]),
            Match::Text {
                contains: &["asymmetricMatch"],
                equals: &["valueOf", "toJSON"],
                starts: &[],
            },
        ],
        why: "`expect` compares through these: a value that converts, serialises or matches as it likes (an asymmetric matcher, a `Proxy`) makes every check pass",
    },
    Rule {
        id: "js-pinned-literal",
        language: JavaScript,
        class: SpecialCase,
        matches: &[Match::PinnedLiteral],
        why: "code that compares against exactly the value a test pins is written to pass that test, not to be right",
    },
];

/// The id of the rule `pattern` hits carry (`[suspicious] patterns`).
pub const PATTERN_RULE: &str = "pattern";

/// The first rule for `language` that matches `seen`.
pub fn first_match(language: Language, seen: &Seen) -> Option<&'static Rule> {
    let language = language.rules();
    RULES
        .iter()
        .filter(|r| r.language == language)
        .find(|r| r.matches.iter().any(|m| matches(*m, language, seen)))
}

fn matches(m: Match, language: Language, seen: &Seen) -> bool {
    let sep = match language {
        Rust => "::",
        _ => ".",
    };
    let under = |name: &str, of: &str| {
        name == of
            || name
                .strip_prefix(of)
                .is_some_and(|rest| rest.starts_with(sep))
    };
    match (m, seen) {
        (Match::Names(names), Seen::Name(n)) => names.iter().any(|of| under(n, of)),
        (Match::Exact(names), Seen::Name(n)) => names.contains(&n.as_str()),
        (Match::Calls(names), Seen::Call(n))
        | (Match::References(names), Seen::Reference(n))
        | (Match::Sets(names), Seen::Sets(n)) => names.contains(&n.as_str()),
        (Match::ComputedName(names), Seen::ComputedName(n)) => names.contains(&n.as_str()),
        (Match::Attributes(names), Seen::Attribute(n)) => names.contains(&n.as_str()),
        (
            Match::Text {
                contains,
                equals,
                starts,
            },
            Seen::Text(t),
        ) => {
            contains.iter().any(|c| t.contains(c))
                || equals.contains(&t.as_str())
                || starts.iter().any(|s| t.starts_with(s))
        }
        (Match::Methods(names), Seen::Method(n)) => names.contains(&n.as_str()),
        (Match::Bases { of, unless }, Seen::Bases(bases)) => {
            bases.iter().any(|b| of.contains(&b.as_str()))
                && !bases.iter().any(|b| unless.contains(&b.as_str()))
        }
        (Match::Impls(names), Seen::Impl(n)) => names.contains(&n.as_str()),
        (Match::CfgTest, Seen::CfgTest)
        | (Match::PinnedLiteral, Seen::Literal(_))
        | (Match::NewClass, Seen::NewClass) => true,
        _ => false,
    }
}

/// Whether `id` names a rule (or `pattern`).
pub fn is_rule(id: &str) -> bool {
    id == PATTERN_RULE || RULES.iter().any(|r| r.id == id)
}

/// The rules as a Markdown table (docs/reference/reading-rules.md is this, checked by a test).
pub fn markdown() -> String {
    use std::fmt::Write as _;
    let mut out =
        String::from("| Rule | Language | Class | Matches | Why |\n|---|---|---|---|---|\n");
    for r in &RULES {
        let class: &str = r.class.into();
        let what: Vec<String> = r.matches.iter().map(|m| describe(*m)).collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {class} | {} | {} |",
            r.id,
            r.language.name(),
            what.join("; "),
            r.why
        );
    }
    out
}

fn describe(m: Match) -> String {
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match m {
        Match::Names(n) => format!("names {}", list(n)),
        Match::Exact(n) => format!("the name {} itself", list(n)),
        Match::Calls(n) => format!("calls of {}", list(n)),
        Match::References(n) => format!("references to {} that are not calls", list(n)),
        Match::NewClass => "a three-argument `type()` (a class made without `class` syntax)".to_owned(),
        Match::Sets(n) => format!(
            "an attribute set by the name {} outside a class body (`setattr`, a namespace dict's key, `C.name = ...`)",
            list(n)
        ),
        Match::ComputedName(n) => format!("{} with a computed name", list(n)),
        Match::Attributes(n) => format!("attributes {}", list(n)),
        Match::Text {
            contains,
            equals,
            starts,
        } => {
            let mut parts = Vec::new();
            if !contains.is_empty() {
                parts.push(format!("containing {}", list(contains)));
            }
            if !equals.is_empty() {
                parts.push(format!("equal to {}", list(equals)));
            }
            if !starts.is_empty() {
                parts.push(format!("starting {}", list(starts)));
            }
            format!("strings (folded) {}", parts.join(" or "))
        }
        Match::Methods(n) => format!("methods or class attributes {}, added or changed", list(n)),
        Match::Bases { of, unless } => {
            format!("a class deriving from {} (not with {})", list(of), list(unless))
        }
        Match::Impls(n) => format!("`impl` of {} written by hand, added or changed", list(n)),
        Match::CfgTest => "`#[cfg(test)]`/`cfg!(test)` outside a test module".to_owned(),
        Match::PinnedLiteral => "a compared literal (a string of 4+ characters, a number of 3+ significant digits) the base's tests or fixtures also hold".to_owned(),
    }
}
