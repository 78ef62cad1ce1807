//! `[sandbox]` in the base's config: how every run is isolated from the runner and the
//! machine.

use serde::Deserialize;

use super::limits;

/// `[sandbox]`: how every run is isolated from the runner and the machine.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// `required` (the default and the starter's): no run without a working sandbox (69);
    /// `off`: runs as the runner's user, and every answer says `sandbox: off`.
    #[serde(default)]
    pub mode: SandboxMode,
    /// Give the runs the network (default: none).
    #[serde(default)]
    pub network: bool,
    /// More of the environment the runs see: `NAME` (passed when the runner has it) or
    /// `NAME=value`. `PATCHGATE_*` never passes.
    #[serde(default)]
    pub env: Vec<String>,
    /// `none` (the default): the copy has no `.git`; `read-only`: the repository's git
    /// directory is mounted read-only at the copy's `.git`.
    #[serde(default)]
    pub git: SandboxGit,
    /// A run's memory cap, in MiB (its processes together; CONTRACT.md section 13.3).
    #[serde(default = "default_memory_mib")]
    pub memory_mib: u64,
    /// A run's process cap (threads count).
    #[serde(default = "default_pids")]
    pub pids: u64,
    /// A room's cap on the bytes its runs write (its copy, `/tmp`, its reports), in MiB.
    #[serde(default = "default_disk_mib")]
    pub disk_mib: u64,
    /// More directories runs see read-only (a toolchain the commands do not resolve to, e.g.
    /// one a `sh -c` script starts). Never a home, nor what holds the checkout.
    #[serde(default)]
    pub expose: Vec<String>,
    /// More credential paths masked: absolute, or relative to each toolchain directory.
    #[serde(default)]
    pub mask: Vec<String>,
    /// Directories of the copy (relative to its top) where runs may create files without an
    /// integrity finding, beside the toolchains' own caches (a suite that writes its output
    /// into the tree). What a later run loads from here is the project's to keep harmless.
    #[serde(default)]
    pub scratch: Vec<String>,
    /// The programs the configured commands start (filled from the config, not read).
    #[serde(skip)]
    pub programs: Vec<String>,
}

fn default_memory_mib() -> u64 {
    limits::DEFAULT_MEMORY_MIB
}

fn default_pids() -> u64 {
    limits::DEFAULT_PIDS
}

fn default_disk_mib() -> u64 {
    limits::DEFAULT_DISK_MIB
}

impl SandboxConfig {
    /// Its caps, or what is wrong with them.
    pub fn limits(&self) -> Result<limits::Limits, String> {
        limits::Limits::checked(self.memory_mib, self.pids, self.disk_mib)
    }
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            mode: SandboxMode::default(),
            network: false,
            env: Vec::new(),
            git: SandboxGit::default(),
            memory_mib: limits::DEFAULT_MEMORY_MIB,
            pids: limits::DEFAULT_PIDS,
            disk_mib: limits::DEFAULT_DISK_MIB,
            expose: Vec::new(),
            mask: Vec::new(),
            scratch: Vec::new(),
            programs: Vec::new(),
        }
    }
}

/// `[sandbox] mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    #[default]
    Required,
    Off,
}

/// `[sandbox] git`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxGit {
    #[default]
    None,
    ReadOnly,
}
