//! The documents the CLI reads from files: a JSON or YAML document (catalog, ledger, results)
//! and a seal file, each read strictly and named in its errors; and the few fields it reads of
//! a project's own manifests (`Cargo.toml`, `pyproject.toml`), typed: every other key ignored.

use std::path::Path;

use serde_json::Value;

use super::error::CliError;
use crate::core::digest::Digest;

use crate::core::catalog::Property;

/// What the CLI reads of a `Cargo.toml`. A manifest that does not parse as this reads as none.
#[derive(Debug, Default, serde::Deserialize)]
pub struct CargoManifest {
    pub package: Option<CargoPackage>,
    /// The `[[test]]` targets.
    #[serde(default)]
    pub test: Vec<CargoTarget>,
}

#[derive(Debug, Default, serde::Deserialize)]
pub struct CargoPackage {
    pub name: Option<String>,
    pub autotests: Option<bool>,
}

#[derive(Debug, Default, serde::Deserialize)]
pub struct CargoTarget {
    pub name: Option<String>,
}

/// What the CLI reads of a `pyproject.toml`: `[tool.pytest.ini_options] pythonpath`, a list
/// or one whitespace-separated string.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Pyproject {
    #[serde(default)]
    pub tool: PyTools,
}

#[derive(Debug, Default, serde::Deserialize)]
pub struct PyTools {
    #[serde(default)]
    pub pytest: PytestTool,
}

#[derive(Debug, Default, serde::Deserialize)]
pub struct PytestTool {
    #[serde(default)]
    pub ini_options: PytestOptions,
}

#[derive(Debug, Default, serde::Deserialize)]
pub struct PytestOptions {
    pub pythonpath: Option<PythonPath>,
}

/// pytest's `pythonpath`: `["src", "lib"]` or `"src lib"`.
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
pub enum PythonPath {
    List(Vec<String>),
    Words(String),
}

impl PythonPath {
    pub fn dirs(self) -> Vec<String> {
        match self {
            PythonPath::List(v) => v,
            PythonPath::Words(s) => s.split_whitespace().map(str::to_owned).collect(),
        }
    }
}

fn data(msg: impl Into<String>) -> CliError {
    CliError::data(msg)
}

/// Parses a JSON or YAML document named `name` (JSON when the name or the first character
/// says so), strictly: a key given twice is refused, never resolved.
pub fn parse_document(bytes: &[u8], name: &str, what: &str) -> Result<Value, CliError> {
    let text =
        std::str::from_utf8(bytes).map_err(|_| data(format!("the {what} {name} is not UTF-8")))?;
    let looks_json = name.ends_with(".json") || text.trim_start().starts_with(['{', '[']);
    if looks_json {
        crate::core::json::strict_value(text.as_bytes())
            .map_err(|e| data(format!("the {what} {name} is not valid JSON: {e}")))
    } else {
        crate::core::json::strict_from(serde_norway::Deserializer::from_str(text))
            .map_err(|e| data(format!("the {what} {name} is not valid YAML: {e}")))
    }
}

/// The catalog's rows, parsed once by the core's own reader (CONTRACT.md section 8.1, the
/// patch gate's kind, its admission records read with `catch`): what the runner needs of them
/// (ids, admission records, sources) comes from here, never from the document by key. A row
/// the core will refuse is left out, and what is wrong with it given.
pub fn catalog_properties(
    catalog: &serde_json::Value,
    catch: &crate::core::runs::CatchCodes,
) -> (Vec<Property>, crate::core::fields::Errors) {
    let mut errors = crate::core::fields::Errors::default();
    let (rows, _) = crate::core::catalog::parse_catalog(
        catalog,
        crate::core::catalog::CatalogKind::Gate,
        Some(catch),
        &mut errors,
    );
    (rows, errors)
}

/// A freeze ledger's rows, read once by the core's own reader (CONTRACT.md section 2): the
/// runner carries them typed and writes them as the file holds them. A ledger the core would
/// refuse is refused here, field by field (65), headed `invalid`.
pub fn ledger_rows(
    doc: &serde_json::Value,
    invalid: &str,
) -> Result<Vec<crate::core::freeze_ledger::FreezeRow>, CliError> {
    let mut errors = crate::core::fields::Errors::default();
    let rows = crate::core::freeze_ledger::parse_ledger(doc, &mut errors);
    valid(errors, invalid).map(|()| rows)
}

/// What the core's reader found wrong with a document, refused field by field (65), headed
/// `invalid`; nothing wrong is `Ok`.
pub fn valid(errors: crate::core::fields::Errors, invalid: &str) -> Result<(), CliError> {
    match errors.is_empty() {
        true => Ok(()),
        false => Err(CliError::problem(
            crate::exit::Exit::DataErr,
            invalid,
            &crate::core::problem::Problem::invalid(errors),
        )),
    }
}

/// Reads a seal file: `HEX  -` (what `sha256sum` prints for stdin), or a bare digest.
pub fn read_seal_file(path: &Path) -> Result<Digest, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| data(format!("cannot read the seal file {}: {e}", path.display())))?;
    parse_seal_text(&text, &path.display().to_string())
}

/// Parses a seal file's text (`HEX  -`, or a bare digest) named `name`.
pub fn parse_seal_text(text: &str, name: &str) -> Result<Digest, CliError> {
    let first = text.lines().next().unwrap_or("").trim();
    let hex = first
        .strip_suffix("  -")
        .or_else(|| first.strip_suffix(" -"))
        .unwrap_or(first)
        .trim();
    Digest::parse_hex(hex).map_err(|e| {
        data(format!(
            "the seal file {name} does not hold `HEX  -`: the digest {e}"
        ))
    })
}
