//! `patchgate warm`: builds a trusted commit (the base branch) in a clean room, as the gate
//! builds, and keeps what `[build] cache` names as the build cache every later room starts
//! from (see [`super::build_cache`]). Run it where the base moves (after a merge, nightly);
//! never on a patch: what it keeps, every later gate trusts.

use clap::Args;

use super::error::{CliError, CliResult};
use super::runner::{Place, Run};
use super::{interrupt, output};
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct WarmArgs {
    /// The commit (and its config) recorded or built.
    #[command(flatten)]
    pub on: super::BaseArgs,
}

pub fn run(args: WarmArgs) -> CliResult {
    interrupt::catch()?;
    super::sandbox::harden_runner();
    let (base, config) = args.on.open()?;
    // Nothing to keep is no fault (issue 64: the Python starter's build byte-compiles into
    // each run's own /tmp): said, exit 0, so a guide's or a pipeline's `warm` step holds for
    // every starter.
    let Some(build) = config.build.as_ref().filter(|b| !b.cache.is_empty()) else {
        output::error(&format!(
            "{}:{}: [build] cache names no directory, so there is nothing to keep: every room builds from the tree (a cargo build keeps one with cache = [\"target\"])",
            args.on.base, args.on.config
        ));
        return Ok(Exit::Go);
    };
    let tree = String::from_utf8_lossy(&super::git::git(&[
        "rev-parse",
        &format!("{base}^{{tree}}"),
    ])?)
    .trim()
    .to_owned();
    // Started from the cache in use, when there is one: only what changed since is built.
    let room = super::runner::open_room(&config.sandbox, &tree, config.build_cache().as_ref())?;
    let started = std::time::Instant::now();
    let ran = Run::new("build", &build.command, build.timeout(), Place::Room(&room))
        .tail(2048)
        .start()?
        .ran()?;
    let (code, tail) = (ran.run, ran.tail);
    interrupt::check()?;
    if code != Some(0) {
        return Err(CliError::data(format!(
            "the build of {} {} (no cache kept):\n{}",
            args.on.base,
            code.map_or("did not finish".to_owned(), |c| format!("exited {c}")),
            tail.trim_end()
        )));
    }
    let kept = super::build_cache::store(&tree, &build.cache, &room.tree)?;
    output::error(&format!(
        "build cache of {} (tree {}) kept in {} ({:.2} s to build): rooms start from it and rebuild what a patch changes",
        args.on.base,
        &tree[..12],
        kept.display(),
        started.elapsed().as_secs_f64()
    ));
    Ok(Exit::Go)
}
