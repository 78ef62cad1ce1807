//! `patchgate healthcheck`: for a container's HEALTHCHECK, which has no shell tools. Calls
//! `/healthz` with a short timeout: exit 0 healthy, 1 anything else.

use std::time::Duration;

use clap::Args;

use super::error::{CliError, CliResult};
use super::{client_runtime, output};
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct HealthcheckArgs {
    /// The server (default http://127.0.0.1:$PORT, or port 8080 without PORT).
    #[arg(long)]
    pub url: Option<String>,
    /// How long to wait.
    #[arg(long, default_value = "2s", value_parser = super::parse_duration)]
    pub timeout: Duration,
}

pub fn run(args: HealthcheckArgs) -> CliResult {
    let base = args.url.unwrap_or_else(|| {
        let port = std::env::var("PORT")
            .ok()
            .and_then(|p| p.trim().parse::<u16>().ok())
            .unwrap_or(8080);
        format!("http://127.0.0.1:{port}")
    });
    let url = format!("{}/healthz", base.trim_end_matches('/'));
    // Anything but a 200 is "unhealthy" (exit 1), as a HEALTHCHECK reads it.
    let unhealthy = |why: String| CliError::new(Exit::PatchWrong, why);
    crate::client::install_crypto_provider();
    let rt = client_runtime().map_err(|e| unhealthy(e.message))?;
    let _runtime = rt.enter();
    let client = reqwest::Client::builder()
        .timeout(args.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| unhealthy(output::chain(&e)))?;
    match rt.block_on(client.get(&url).send()) {
        Ok(res) if res.status().as_u16() == 200 => Ok(Exit::Go),
        Ok(res) => Err(unhealthy(format!("{url} answered {}", res.status()))),
        Err(e) => Err(unhealthy(format!("{url}: {}", output::chain(&e)))),
    }
}
