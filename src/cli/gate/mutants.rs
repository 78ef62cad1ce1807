//! The admission mutants the base stores (`mutants/ID.diff`, CONTRACT.md section 11.5): the
//! files each touches, for the core to order the re-proof candidates (section 11.10).

use super::super::error::CliError;
use super::super::git::base_file;
use crate::core::catalog::Property;

/// The files each admitted property's stored mutant touches (its diff's `---`/`+++` paths,
/// through the path normaliser), for the core to try first the mutants the patch is about.
/// Nothing when re-proofs are off; a mutant the base does not hold touches nothing.
pub(super) fn mutant_files(
    config: &crate::cli::config::GateConfig,
    base: &str,
    properties: &[Property],
) -> Result<std::collections::BTreeMap<String, Vec<String>>, CliError> {
    let mut out = std::collections::BTreeMap::new();
    if config.properties.reprove == 0 {
        return Ok(out);
    }
    for row in properties
        .iter()
        .filter(|p| p.admitted.is_some())
        .take(1000)
    {
        let id = row.id.as_str();
        let Some(diff) = base_file(base, &config.properties.mutant_path(id))? else {
            continue;
        };
        let mut files = touched(&diff);
        files.truncate(100);
        out.insert(id.to_owned(), files);
    }
    Ok(out)
}

/// The files a diff touches (each part's `--- a/` and `+++ b/` paths, read by
/// `core::patch`, through the path normaliser), each once, in order.
pub(super) fn touched(diff: &[u8]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for part in crate::core::patch::read(diff) {
        for path in [part.old_path(), part.new_path()].into_iter().flatten() {
            if let Ok(p) = crate::core::path::RepoPath::parse(path.trim_end())
                && !files.iter().any(|f| f == p.as_str())
            {
                files.push(p.as_str().to_owned());
            }
        }
    }
    files
}
