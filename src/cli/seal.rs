//! `patchgate seal DIR`: the fixture seal of a directory, as the coreutils pipeline computes
//! it, hashed in parallel; or, with `--server`, a tar of the tree streamed to a server.

use std::path::{Path, PathBuf};

use clap::Args;
use tokio_util::io::SyncIoBridge;

use super::documents::read_seal_file;
use super::error::{CliError, CliResult};
use super::{RemoteArgs, client_runtime, output, remote};
use crate::client::Client;
use crate::core::seal::SealAnswer;
use crate::core::seal::{self, manifest, normalize_path, parse_manifest};
use crate::exit::Exit;
use crate::tree::read_dir_tree;

#[derive(Debug, Args)]
pub struct SealArgs {
    /// The fixtures directory, relative to the repository root (as `find fixtures` sees it).
    pub dir: PathBuf,
    /// Run as if started in this directory (the repository root).
    #[arg(short = 'C', long = "directory")]
    pub directory: Option<PathBuf>,
    /// The committed seal file (`HEX  -`); a mismatch exits 1.
    #[arg(long)]
    pub expected: Option<PathBuf>,
    /// Also write the per-file `sha256sum` lines here, so a later mismatch can name what drifted.
    #[arg(long)]
    pub manifest: Option<PathBuf>,
    /// A manifest written earlier with --manifest: name the files that drifted from it.
    #[arg(long)]
    pub expected_manifest: Option<PathBuf>,
    /// Print the full answer as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the seal file line (`HEX  -`) to this file instead of standard output, only
    /// when the seal was taken: a directory that cannot be read leaves no file behind (as
    /// `> FILE` in a shell would: an empty one).
    #[arg(long, short = 'o', conflicts_with = "json")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

pub fn run(args: SealArgs) -> CliResult {
    if let Some(dir) = &args.directory {
        std::env::set_current_dir(dir)
            .map_err(|e| CliError::usage(format!("cannot change to {}: {e}", dir.display())))?;
    }
    let raw = args.dir.as_os_str().as_encoded_bytes();
    let display = normalize_path(raw).map_err(|e| {
        CliError::usage(format!(
            "{} {e}: give the fixtures directory relative to the repository root (or use -C ROOT)",
            args.dir.display()
        ))
    })?;
    let expected = args.expected.as_deref().map(read_seal_file).transpose()?;
    if let Some(server) = &args.remote.server {
        return remote_seal(server, &args, &display, expected.map(|d| d.to_hex()));
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let root = Path::new(std::ffi::OsStr::from_bytes_ext(&display));
    if std::fs::symlink_metadata(root).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        // Issue 64: a library without fixtures, on its first day. Nothing is written.
        return Err(CliError::data(format!(
            "{}: no such directory, so there is no seal to take (nothing written). The gate seals the fixtures directory patchgate.toml names (`fixtures`); a project without fixtures keeps an empty one: `mkdir {0} && touch {0}/.gitkeep`, then `patchgate seal {0} --out fixtures.seal.expected`",
            args.dir.display()
        )));
    }
    let tree = read_dir_tree(root, &display, threads)
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", args.dir.display())))?;
    if let Some(path) = &args.manifest {
        std::fs::write(path, manifest(&tree.entries)).map_err(|e| {
            CliError::software(format!("cannot write the manifest {}: {e}", path.display()))
        })?;
    }
    let expected_entries = match &args.expected_manifest {
        None => None,
        Some(path) => {
            let text = std::fs::read(path)
                .map_err(|e| CliError::data(format!("cannot read {}: {e}", path.display())))?;
            let entries = parse_manifest(&text).map_err(|errs| {
                let mut e = CliError::data(format!("{} is not a manifest:", path.display()));
                e.fields = errs
                    .iter()
                    .map(|m| format!("  line {}: {}", m.line, m.detail))
                    .collect();
                e
            })?;
            Some(entries)
        }
    };
    // The same decision, and the same answer, as `POST /seal`.
    let decision = seal::decide_seal(
        &tree.entries,
        tree.bytes,
        tree.non_regular,
        expected,
        expected_entries.as_deref(),
    );
    if let Some(d) = &decision.drift {
        for (word, list) in [
            ("added", &d.added),
            ("removed", &d.removed),
            ("changed", &d.changed),
        ] {
            for p in list {
                output::error(&format!("{word}: {}", String::from_utf8_lossy(p)));
            }
        }
    }
    let exit = Exit::from_decision(decision.exit_code()).unwrap_or(Exit::Software);
    let answer = decision.answer(crate::ids::new_decision_id());
    match &args.out {
        Some(path) if exit == Exit::Go => {
            output::replace(path, format!("{}  -\n", answer.seal).as_bytes(), None)?;
            output::error(&format!("wrote {}: {}  -", path.display(), answer.seal));
        }
        _ => print(&answer, args.json)?,
    }
    Ok(exit)
}

/// Prints the answer (the seal file line, or the JSON answer), and says so on a mismatch.
fn print(answer: &SealAnswer, as_json: bool) -> Result<(), CliError> {
    if as_json {
        output::stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(answer).unwrap_or_default()
        ))?;
    } else {
        output::stdout(&format!("{}  -\n", answer.seal))?;
    }
    if answer.exit_code == 1 {
        let drifted = answer
            .drift
            .as_ref()
            .is_some_and(|d| !(d.added.is_empty() && d.removed.is_empty() && d.changed.is_empty()));
        output::error(if drifted {
            "the tree drifted from the expected manifest: fixture fault"
        } else {
            "the seal does not match the expected one: fixture fault"
        });
    }
    Ok(())
}

/// `OsStr` from raw bytes (Unix).
trait FromBytesExt {
    fn from_bytes_ext(b: &[u8]) -> &std::ffi::OsStr;
}

impl FromBytesExt for std::ffi::OsStr {
    fn from_bytes_ext(b: &[u8]) -> &std::ffi::OsStr {
        std::os::unix::ffi::OsStrExt::from_bytes(b)
    }
}

fn remote_seal(
    server: &str,
    args: &SealArgs,
    display: &[u8],
    expected: Option<String>,
) -> CliResult {
    let client = Client::new(server, args.remote.token.clone(), args.remote.timeout)
        .map_err(|e| CliError::usage(output::chain(&e)))?;
    let rt = client_runtime()?;
    let root = PathBuf::from(std::ffi::OsStr::from_bytes_ext(display));
    std::fs::symlink_metadata(&root)
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", root.display())))?;
    // A thread writes the tar (symlinks stored as symlinks, never followed) into an in-memory
    // pipe that the upload streams from: the tree is never held whole.
    let (pipe_in, pipe_out) = tokio::io::duplex(64 * 1024);
    let pipe_in = SyncIoBridge::new_with_handle(pipe_in, rt.handle().clone());
    let writer_root = root.clone();
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        let mut builder = tar::Builder::new(pipe_in);
        builder.follow_symlinks(false);
        let meta = std::fs::symlink_metadata(&writer_root)?;
        if meta.is_dir() {
            builder.append_dir_all(&writer_root, &writer_root)?;
        } else {
            builder.append_path_with_name(&writer_root, &writer_root)?;
        }
        // The end of the archive, then the end of the pipe: the upload ends there.
        builder.into_inner()?.shutdown()
    });
    let stream = tokio_util::io::ReaderStream::new(pipe_out);
    let body = reqwest::Body::wrap_stream(stream);
    let path = match &expected {
        Some(hex) => format!("/seal?expected={hex}"),
        None => "/seal".to_owned(),
    };
    let accept = "application/json";
    let reply = rt.block_on(client.post(&path, "application/x-tar", accept, body));
    if let Ok(Err(e)) = writer.join() {
        return Err(CliError::data(format!(
            "cannot read {}: {e}",
            root.display()
        )));
    }
    let reply = reply.map_err(|e| CliError::unavailable(output::chain(&e)))?;
    let (answer, exit) = remote::decision::<SealAnswer>(&reply, |a| a.exit_code)?;
    print(&answer, args.json)?;
    Ok(exit)
}

/// The fixtures seal of one tree, as the coreutils pipeline computes it.
pub(super) fn seal_of(
    tree: &std::path::Path,
    fixtures: &str,
    side: &str,
) -> Result<String, CliError> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let read = crate::tree::read_dir_tree(&tree.join(fixtures), fixtures.as_bytes(), threads)
        .map_err(|e| {
            CliError::data(format!(
                "cannot seal the {side} tree's fixtures directory {fixtures}: {e}"
            ))
        })?;
    super::interrupt::check()?;
    Ok(crate::core::seal::seal(&read.entries).seal.to_hex())
}
