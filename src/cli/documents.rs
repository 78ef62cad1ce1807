//! The documents the CLI reads from files: a JSON or YAML document (catalog, ledger, results)
//! and a seal file, each read strictly and named in its errors.

use std::path::Path;

use serde_json::Value;

use super::error::CliError;
use crate::core::digest::Digest;

use crate::core::catalog::Property;

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

/// Adds `key` to a JSON object the CLI writes (an optional field of a body or a row); a
/// document that is not an object is left as it is.
pub fn put(doc: &mut Value, key: &str, value: impl serde::Serialize) {
    if let (Some(object), Ok(value)) = (doc.as_object_mut(), serde_json::to_value(value)) {
        object.insert(key.to_owned(), value);
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
