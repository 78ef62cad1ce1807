//! `patchgate serve`: the HTTP service, configured by flags or environment.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use clap::Args;
use tokio::net::TcpListener;

use super::error::{CliError, CliResult};
use super::{parse_duration, parse_span, span};
use crate::exit::Exit;
use crate::http::{self, AppState, BearerToken, Settings};
use crate::telemetry::{self, LogFormat};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on. Default 127.0.0.1:8080, or 0.0.0.0:$PORT when PORT is set (as
    /// hosted platforms set it).
    #[arg(long, env = "PATCHGATE_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Log format: json (one object per line; the decision log) or text.
    #[arg(long, env = "PATCHGATE_LOG_FORMAT", value_enum, default_value = "json")]
    pub log_format: LogFormat,
    /// Largest accepted decision body, in bytes.
    #[arg(long, env = "PATCHGATE_DECISION_BODY_LIMIT", default_value_t = Settings::default().decision_body_limit)]
    pub decision_body_limit: usize,
    /// Longest a request body may take to arrive before it is answered 408 (e.g. 30s).
    #[arg(long, env = "PATCHGATE_REQUEST_TIMEOUT", default_value_t = span(Settings::default().request_timeout), value_parser = parse_span)]
    pub request_timeout: humantime::Duration,
    /// The freeze-debt cap `/quorum` uses when a request names none.
    #[arg(long, env = "PATCHGATE_DEBT_CAP", default_value_t = Settings::default().debt_cap)]
    pub debt_cap: u64,
    /// Largest `/seal` archive as sent, in bytes (default 1 GiB).
    #[arg(long, env = "PATCHGATE_SEAL_ARCHIVE_LIMIT", default_value_t = Settings::default().seal_archive_limit)]
    pub seal_archive_limit: u64,
    /// Largest `/seal` archive after gzip decompression, in bytes (default 4 GiB).
    #[arg(long, env = "PATCHGATE_SEAL_DECOMPRESSED_LIMIT", default_value_t = Settings::default().seal_decompressed_limit)]
    pub seal_decompressed_limit: u64,
    /// Largest report, review or manifest body, in bytes (default 64 MiB).
    #[arg(long, env = "PATCHGATE_REPORT_BODY_LIMIT", default_value_t = Settings::default().report_body_limit)]
    pub report_body_limit: usize,
    /// A file holding the bearer token every decision endpoint then requires. (Or set
    /// PATCHGATE_TOKEN; there is no flag with the token itself, so it never shows in `ps`.)
    #[arg(long, env = "PATCHGATE_TOKEN_FILE")]
    pub token_file: Option<std::path::PathBuf>,
    /// Requests handled at once; past it, 503 with Retry-After.
    #[arg(long, env = "PATCHGATE_MAX_CONCURRENCY", default_value_t = Settings::default().max_concurrency)]
    pub max_concurrency: usize,
    /// Longest a client may take to send its request headers (e.g. 10s).
    #[arg(long, env = "PATCHGATE_HEADER_READ_TIMEOUT", default_value_t = span(Settings::default().header_read_timeout), value_parser = parse_span)]
    pub header_read_timeout: humantime::Duration,
    /// Longest the drain after SIGTERM waits for in-flight requests (e.g. 25s).
    #[arg(long, env = "PATCHGATE_DRAIN_TIMEOUT", default_value_t = span(Settings::default().drain_timeout), value_parser = parse_span)]
    pub drain_timeout: humantime::Duration,
    /// After SIGTERM, keep accepting this long while /readyz says 503 (e.g. 5s behind a load
    /// balancer); 0 closes the listener at once.
    #[arg(long, env = "PATCHGATE_DRAIN_DELAY", default_value = "0s", value_parser = parse_duration_or_zero)]
    pub drain_delay: Duration,
    /// Longest a `/seal` archive may take to arrive in full (e.g. 10m).
    #[arg(long, env = "PATCHGATE_SEAL_TIMEOUT", default_value_t = span(Settings::default().seal_timeout), value_parser = parse_span)]
    pub seal_timeout: humantime::Duration,
    /// Slowest a request body may arrive, in bytes a second, judged over each 5 s window
    /// (a client that trickles is answered 408 within one window).
    #[arg(long, env = "PATCHGATE_MIN_BODY_RATE", default_value_t = Settings::default().min_body_rate)]
    pub min_body_rate: u64,
    /// `/seal` archives streamed at once; past it, 503 with Retry-After. Uploads have their
    /// own slots, so slow ones never take the slots decisions need.
    #[arg(long, env = "PATCHGATE_MAX_SEAL_UPLOADS", default_value_t = Settings::default().max_seal_uploads)]
    pub max_seal_uploads: usize,
    /// Most members (files, directories, links) in one tree sent to /seal.
    #[arg(long, env = "PATCHGATE_SEAL_MAX_ENTRIES", default_value_t = Settings::default().tree_limits.max_entries)]
    pub seal_max_entries: usize,
    /// Most bytes of member paths, added up, in one tree sent to /seal (default 32 MiB).
    #[arg(long, env = "PATCHGATE_SEAL_MAX_PATH_BYTES", default_value_t = Settings::default().tree_limits.max_path_bytes)]
    pub seal_max_path_bytes: usize,
    /// Longest an answer may wait to be read before its connection is closed (e.g. 30s).
    #[arg(long, env = "PATCHGATE_WRITE_TIMEOUT", default_value_t = span(Settings::default().write_timeout), value_parser = parse_span)]
    pub write_timeout: humantime::Duration,
    /// Most bytes of request bodies held in memory at once, over all requests (default
    /// 256 MiB); past it, 503 with Retry-After.
    #[arg(long, env = "PATCHGATE_MAX_BODY_BYTES", default_value_t = Settings::default().max_body_bytes)]
    pub max_body_bytes: usize,
}

impl ServeArgs {
    /// The server's settings from these flags (and the token's digest).
    fn settings(&self, token: Option<BearerToken>) -> Settings {
        Settings {
            token,
            max_concurrency: self.max_concurrency,
            header_read_timeout: self.header_read_timeout.into(),
            drain_timeout: self.drain_timeout.into(),
            drain_delay: self.drain_delay,
            decision_body_limit: self.decision_body_limit,
            request_timeout: self.request_timeout.into(),
            debt_cap: self.debt_cap,
            seal_archive_limit: self.seal_archive_limit,
            seal_decompressed_limit: self.seal_decompressed_limit,
            report_body_limit: self.report_body_limit,
            seal_timeout: self.seal_timeout.into(),
            min_body_rate: self.min_body_rate,
            max_seal_uploads: self.max_seal_uploads,
            tree_limits: crate::core::seal::TreeLimits {
                max_entries: self.seal_max_entries,
                max_path_bytes: self.seal_max_path_bytes,
            },
            write_timeout: self.write_timeout.into(),
            max_body_bytes: self.max_body_bytes,
        }
    }
}

fn parse_duration_or_zero(s: &str) -> Result<Duration, String> {
    if matches!(s.trim(), "0" | "0s" | "0ms") {
        Ok(Duration::ZERO)
    } else {
        parse_duration(s)
    }
}

/// The token from PATCHGATE_TOKEN or the token file (its first line).
fn bearer_token(
    file: Option<&std::path::Path>,
    env: Option<String>,
) -> Result<Option<BearerToken>, CliError> {
    let token = match (file, env) {
        (Some(_), Some(_)) => {
            return Err(CliError::usage(
                "give the token by PATCHGATE_TOKEN or --token-file, not both",
            ));
        }
        (Some(path), None) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                CliError::usage(format!(
                    "cannot read the token file {}: {e}",
                    path.display()
                ))
            })?;
            text.lines().next().unwrap_or("").trim().to_owned()
        }
        (None, Some(t)) => t.trim().to_owned(),
        (None, None) => return Ok(None),
    };
    BearerToken::new(&token)
        .map(Some)
        .ok_or_else(|| CliError::usage("the token is empty"))
}

/// The listen address: the flag, else `0.0.0.0:$PORT`, else `127.0.0.1:8080`.
fn listen_addr(flag: Option<SocketAddr>, port: Option<String>) -> Result<SocketAddr, CliError> {
    if let Some(addr) = flag {
        return Ok(addr);
    }
    match port {
        Some(p) => p
            .trim()
            .parse::<u16>()
            .map(|p| SocketAddr::from((Ipv4Addr::UNSPECIFIED, p)))
            .map_err(|_| CliError::usage(format!("PORT={p} is not a port number"))),
        None => Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, 8080))),
    }
}

/// The glibc malloc settings the server runs with: each unless the operator set its
/// environment variable (which glibc then reads itself).
pub const MALLOC_TUNING: [(&str, i32); 2] =
    [("MALLOC_ARENA_MAX", 2), ("MALLOC_MMAP_THRESHOLD_", 131_072)];

/// Bounds glibc's malloc in this process, before the runtime starts a thread: two arenas and a
/// fixed 128 KiB mmap threshold. With glibc's defaults, freed large buffers stay in
/// per-thread arenas and the mmap threshold climbs after each large free, so the server's
/// peak under many large bodies at once swung from 168 to 287 MiB with 96 MiB of bodies
/// allowed (over a 256 MiB host); bounded, every large buffer is mapped and unmapped as it
/// comes and goes (`scripts/budget.py`). `mallopt(3)` does what the environment variables do,
/// in-process: the server stays the process that was started (valgrind and debuggers see
/// it), and an operator who sets one variable keeps the other setting. Says, for the
/// listening line, where each setting came from.
fn bound_malloc() -> String {
    let mut said = Vec::with_capacity(MALLOC_TUNING.len());
    for (name, value) in MALLOC_TUNING {
        if let Some(given) = std::env::var_os(name) {
            said.push(format!("{name}={} (environment)", given.to_string_lossy()));
            continue;
        }
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            let param = match name {
                "MALLOC_ARENA_MAX" => libc::M_ARENA_MAX,
                _ => libc::M_MMAP_THRESHOLD,
            };
            // SAFETY: mallopt(3) only sets one of the allocator's tuning parameters; it is
            // called before this process starts a second thread, and its argument is a
            // constant glibc documents for that parameter.
            let ok = unsafe { libc::mallopt(param, value) } == 1;
            said.push(if ok {
                format!("{name}={value} (mallopt)")
            } else {
                format!("{name}: mallopt refused {value}, glibc's default kept")
            });
        }
        #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
        said.push(format!(
            "{name}: not glibc, the allocator's default kept ({value} not set)"
        ));
    }
    said.join(", ")
}

pub fn run(args: ServeArgs) -> CliResult {
    let malloc = bound_malloc();
    let _log_guard = telemetry::init_server(args.log_format);
    let addr = listen_addr(args.listen, std::env::var("PORT").ok())?;
    let token = bearer_token(
        args.token_file.as_deref(),
        std::env::var("PATCHGATE_TOKEN").ok(),
    )?;
    let token_required = token.is_some();
    let settings = args.settings(token);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::software(format!("cannot start the async runtime: {e}")))?;
    let exit = runtime.block_on(async move {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| CliError::unavailable(format!("cannot listen on {addr}: {e}")))?;
        let local = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        tracing::info!(addr = %local, version = env!("CARGO_PKG_VERSION"), auth = token_required, malloc = %malloc, "listening");
        match http::serve(listener, AppState::new(settings), shutdown_signal()).await {
            Ok(()) => {
                tracing::info!("drained; exiting");
                Ok(Exit::Go)
            }
            Err(e) => {
                tracing::error!(error = %e, "server failed");
                Err(CliError::software(format!("the server failed: {e}")))
            }
        }
    });
    // The drain is over: a decision still computing on a blocking thread (its client gone, or
    // past the drain timeout) must not keep the process alive. Dropping the runtime would wait
    // for it; this gives it a moment and then leaves.
    runtime.shutdown_timeout(Duration::from_millis(500));
    exit
}

/// Resolves on SIGTERM or ctrl-c.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flags' defaults are the server's defaults: one source, never written twice.
    #[test]
    fn the_flags_default_to_the_servers_settings() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            serve: ServeArgs,
        }
        // The test process's environment must not choose a setting.
        let cli = Cli::try_parse_from(["serve"]).unwrap_or_else(|e| panic!("{e}"));
        if std::env::vars().any(|(k, _)| k.starts_with("PATCHGATE_")) {
            return;
        }
        assert_eq!(
            format!("{:?}", cli.serve.settings(None)),
            format!("{:?}", Settings::default())
        );
    }

    #[test]
    fn listen_address_follows_flag_then_port_then_default() {
        let flag: SocketAddr = "127.0.0.1:9999".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(listen_addr(Some(flag), Some("1234".into())), Ok(flag));
        assert_eq!(
            listen_addr(None, Some("1234".into())),
            Ok(SocketAddr::from(([0, 0, 0, 0], 1234)))
        );
        assert_eq!(
            listen_addr(None, None),
            Ok(SocketAddr::from(([127, 0, 0, 1], 8080)))
        );
        assert!(listen_addr(None, Some("http".into())).is_err());
    }
}
