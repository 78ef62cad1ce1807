//! `patchgate seal DIR`: the fixture seal of a directory, as the coreutils pipeline computes
//! it, hashed in parallel; or, with `--server`, a tar of the tree streamed to a server.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::quorum::read_seal_file;
use super::{RemoteArgs, client_runtime, output, remote};
use crate::client::Client;
use crate::core::seal::SealAnswer;
use crate::core::seal::{self, manifest, normalize_path, parse_manifest, seal_file_line};
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
    #[command(flatten)]
    pub remote: RemoteArgs,
}

pub fn run(args: SealArgs) -> Exit {
    if let Some(dir) = &args.directory
        && let Err(e) = std::env::set_current_dir(dir)
    {
        output::error(&format!("cannot change to {}: {e}", dir.display()));
        return Exit::Usage;
    }
    let raw = args.dir.as_os_str().as_encoded_bytes();
    let display = match normalize_path(raw) {
        Ok(d) => d,
        Err(e) => {
            output::error(&format!(
                "{} {e}: give the fixtures directory relative to the repository root (or use -C ROOT)",
                args.dir.display()
            ));
            return Exit::Usage;
        }
    };
    let expected = match args.expected.as_deref().map(read_seal_file).transpose() {
        Ok(e) => e,
        Err(e) => {
            output::error(&e);
            return Exit::DataErr;
        }
    };
    if let Some(server) = &args.remote.server {
        return remote_seal(server, &args, &display, expected.map(|d| d.to_hex()));
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let tree = match read_dir_tree(
        Path::new(std::ffi::OsStr::from_bytes_ext(&display)),
        &display,
        threads,
    ) {
        Ok(t) => t,
        Err(e) => {
            output::error(&format!("cannot read {}: {e}", args.dir.display()));
            return Exit::DataErr;
        }
    };
    if let Some(path) = &args.manifest
        && let Err(e) = std::fs::write(path, manifest(&tree.entries))
    {
        output::error(&format!(
            "cannot write the manifest {}: {e}",
            path.display()
        ));
        return Exit::Software;
    }
    let expected_entries = match &args.expected_manifest {
        None => None,
        Some(path) => {
            let text = match std::fs::read(path) {
                Ok(t) => t,
                Err(e) => {
                    output::error(&format!("cannot read {}: {e}", path.display()));
                    return Exit::DataErr;
                }
            };
            match parse_manifest(&text) {
                Ok(e) => Some(e),
                Err(errs) => {
                    for m in errs {
                        output::error(&format!("{} line {}: {}", path.display(), m.line, m.detail));
                    }
                    return Exit::DataErr;
                }
            }
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
    if args.json {
        let answer = decision.answer(crate::ids::new_decision_id());
        output::stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&answer).unwrap_or_default()
        ));
    } else {
        output::stdout(&seal_file_line(&decision.sealed.seal));
    }
    if exit == Exit::PatchWrong {
        output::error("the seal does not match the expected one: fixture fault");
    }
    exit
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

/// A `Write` that hands each chunk to the upload stream.
struct ChannelWriter(tokio::sync::mpsc::Sender<std::io::Result<Vec<u8>>>);

impl Write for ChannelWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.blocking_send(Ok(buf.to_vec())).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the upload stopped")
        })?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn remote_seal(server: &str, args: &SealArgs, display: &[u8], expected: Option<String>) -> Exit {
    let client = match Client::new(server, args.remote.token.clone(), args.remote.timeout) {
        Ok(c) => c,
        Err(e) => {
            output::error(&output::chain(&e));
            return Exit::Usage;
        }
    };
    let rt = match client_runtime() {
        Ok(rt) => rt,
        Err(exit) => return exit,
    };
    let root = PathBuf::from(std::ffi::OsStr::from_bytes_ext(display));
    if let Err(e) = std::fs::symlink_metadata(&root) {
        output::error(&format!("cannot read {}: {e}", root.display()));
        return Exit::DataErr;
    }
    // A thread writes the tar (symlinks stored as symlinks, never followed) into a channel
    // that the upload streams from: the tree is never held whole.
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Vec<u8>>>(16);
    let writer_root = root.clone();
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        let mut builder = tar::Builder::new(ChannelWriter(tx.clone()));
        builder.follow_symlinks(false);
        let meta = std::fs::symlink_metadata(&writer_root)?;
        if meta.is_dir() {
            builder.append_dir_all(&writer_root, &writer_root)?;
        } else {
            builder.append_path_with_name(&writer_root, &writer_root)?;
        }
        builder.into_inner()?.flush()
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let body = reqwest::Body::wrap_stream(stream);
    let path = match &expected {
        Some(hex) => format!("/seal?expected={hex}"),
        None => "/seal".to_owned(),
    };
    let accept = "application/json";
    let reply = rt.block_on(client.post(&path, "application/x-tar", accept, body));
    if let Ok(Err(e)) = writer.join() {
        output::error(&format!("cannot read {}: {e}", root.display()));
        return Exit::DataErr;
    }
    let reply = match reply {
        Ok(r) => r,
        Err(e) => {
            output::error(&output::chain(&e));
            return Exit::Unavailable;
        }
    };
    match remote::decision::<SealAnswer>(&reply, |a| a.exit_code) {
        Ok((answer, exit)) => {
            if args.json {
                output::stdout(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&answer).unwrap_or_default()
                ));
            } else {
                output::stdout(&format!("{}  -\n", answer.seal));
            }
            if exit == Exit::PatchWrong {
                output::error("the seal does not match the expected one: fixture fault");
            }
            exit
        }
        Err(exit) => exit,
    }
}
