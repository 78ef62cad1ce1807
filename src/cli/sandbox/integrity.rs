//! What a run changed that it may not (CONTRACT.md section 11.3): the tracked files of the copy
//! by content against the judged tree, and anything added under a directory.

use std::path::Path;

use super::super::error::CliError;
use super::Room;

impl Room {
    /// The tracked files of the copy a run changed, deleted or changed the mode of, by
    /// content against the judged tree (CONTRACT.md section 11.3).
    pub fn changed_files(&self) -> Result<Vec<String>, CliError> {
        super::super::export::changed_since_export(&self.tracked, &self.tree)
    }

    /// Whether `dir` (a directory of the copy) holds anything but tracked files and
    /// directories: a file, link or other entry a run added. With no tracked file changed
    /// ([`Room::changed_files`]) and none added, what `dir` holds is what was judged, and
    /// its seal with it, without hashing it again. An unreadable entry counts as added.
    pub fn added_under(&self, dir: &str) -> bool {
        let top = self.tree.join(dir);
        let mut under = self
            .dirs
            .iter()
            .filter(|(d, _)| d.starts_with(&top))
            .peekable();
        if under.peek().is_some()
            && under
                .all(|(d, key)| super::super::export::StatKey::of(d).is_ok_and(|now| now == *key))
        {
            return false;
        }
        let tracked: std::collections::HashSet<&Path> =
            self.tracked.iter().map(|t| t.path.as_path()).collect();
        let mut pending = vec![self.tree.join(dir)];
        while let Some(d) = pending.pop() {
            let entries = match std::fs::read_dir(&d) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => return true,
            };
            for entry in entries {
                let Ok(entry) = entry else { return true };
                let path = entry.path();
                match entry.file_type() {
                    Ok(t) if t.is_dir() => pending.push(path),
                    Ok(_) if tracked.contains(path.as_path()) => {}
                    _ => return true,
                }
            }
        }
        false
    }
}
