//! The one place a process is made (issue 51): a run in a room, the user namespace a room's
//! id-mapped binds are made in and `cp` are each an [`Invocation`] made into a [`Command`]
//! here; git has its own helper (`cli/git.rs`). Whatever runs in a room (a check, the
//! sandbox's probe, the shadows' module list) is started by `Run` in `cli/runner.rs` (its
//! process group, timeout and caps) and by nothing else. A leaf: the sandbox, below the
//! runner, makes its processes here too.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A step the child takes between `fork` and `exec`: async-signal-safe system calls only.
type BeforeExec = Box<dyn FnMut() -> std::io::Result<()> + Send + Sync>;

/// What to start: a program, its arguments, where, with what environment and as whom.
pub struct Invocation {
    program: OsString,
    args: Vec<OsString>,
    dir: Option<PathBuf>,
    /// `None`: the runner's environment; `Some`: exactly these variables.
    env: Option<Vec<(OsString, OsString)>>,
    uid: Option<u32>,
    before_exec: Vec<BeforeExec>,
}

impl Invocation {
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            dir: None,
            env: None,
            uid: None,
            before_exec: Vec::new(),
        }
    }

    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Runs in `dir`.
    pub fn dir(&mut self, dir: &Path) -> &mut Self {
        self.dir = Some(dir.to_owned());
        self
    }

    /// With exactly `env`, nothing of the runner's.
    pub fn env_only(&mut self, env: &[(OsString, OsString)]) -> &mut Self {
        self.env = Some(env.to_vec());
        self
    }

    /// As `uid` (and the gid of the same number; the supplementary groups emptied).
    pub fn uid(&mut self, uid: u32) -> &mut Self {
        self.uid = Some(uid);
        self
    }

    /// Adds a step the child takes before it becomes the program.
    ///
    /// # Safety
    /// `step` runs in the forked child of a program with threads: it may make only
    /// async-signal-safe calls (no allocation, no lock).
    pub unsafe fn before_exec(
        &mut self,
        step: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
    ) -> &mut Self {
        self.before_exec.push(Box::new(step));
        self
    }

    /// The command to spawn.
    pub fn command(self) -> Command {
        use std::os::unix::process::CommandExt;
        let mut c = Command::new(&self.program);
        c.args(&self.args);
        if let Some(dir) = &self.dir {
            c.current_dir(dir);
        }
        if let Some(env) = &self.env {
            c.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
        }
        if let Some(uid) = self.uid {
            // std empties the supplementary groups when root sets a uid.
            c.uid(uid).gid(uid);
        }
        for step in self.before_exec {
            // SAFETY: each step was given through `before_exec`, whose caller vouched that
            // it is async-signal-safe.
            unsafe {
                c.pre_exec(step);
            }
        }
        c
    }
}
