//! `patchgate healthcheck`: for a container's HEALTHCHECK, which has no shell tools. Calls
//! `/healthz` with a short timeout: exit 0 healthy, 1 anything else.

use std::time::Duration;

use clap::Args;

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

pub fn run(args: HealthcheckArgs) -> Exit {
    let base = args.url.unwrap_or_else(|| {
        let port = std::env::var("PORT")
            .ok()
            .and_then(|p| p.trim().parse::<u16>().ok())
            .unwrap_or(8080);
        format!("http://127.0.0.1:{port}")
    });
    let url = format!("{}/healthz", base.trim_end_matches('/'));
    crate::client::install_crypto_provider();
    let Ok(rt) = client_runtime() else {
        return Exit::PatchWrong;
    };
    let _runtime = rt.enter();
    let Ok(client) = reqwest::Client::builder()
        .timeout(args.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
    else {
        return Exit::PatchWrong;
    };
    match rt.block_on(client.get(&url).send()) {
        Ok(res) if res.status().as_u16() == 200 => Exit::Go,
        Ok(res) => {
            output::error(&format!("{url} answered {}", res.status()));
            Exit::PatchWrong
        }
        Err(e) => {
            output::error(&format!("{url}: {}", output::chain(&e)));
            Exit::PatchWrong
        }
    }
}
