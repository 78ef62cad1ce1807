//! The HTTP client the CLI uses with `--server`: sends the same documents the server takes and
//! hands back the status and body. It reads nothing into them; the CLI maps statuses to exit
//! codes, failing closed.

use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};

/// Why a server could not be asked.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("invalid server URL `{0}`: {1}")]
    BadUrl(String, String),
    #[error("cannot reach the server at {url}: {source}")]
    Unreachable {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("cannot set up the HTTP client: {0}")]
    Setup(#[source] reqwest::Error),
}

/// A server answer: status and raw body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

/// reqwest is built without a default TLS crypto provider (its default, aws-lc, is a heavy C
/// build); ring is the one patchgate ships. Idempotent; call before building any reqwest client.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

pub struct Client {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl Client {
    pub fn new(
        server: &str,
        token: Option<String>,
        timeout: Duration,
    ) -> Result<Self, ClientError> {
        let base = server.trim_end_matches('/').to_owned();
        let parsed = reqwest::Url::parse(&base)
            .map_err(|e| ClientError::BadUrl(server.to_owned(), e.to_string()))?;
        if parsed.scheme() != "http" && parsed.scheme() != "https" {
            return Err(ClientError::BadUrl(
                server.to_owned(),
                "the scheme must be http or https".to_owned(),
            ));
        }
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("patchgate/", env!("CARGO_PKG_VERSION")))
            // A redirect is not a decision: it comes back as an unexpected status (exit 69).
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(ClientError::Setup)?;
        Ok(Self {
            base,
            token: token.filter(|t| !t.is_empty()),
            http,
        })
    }

    /// POSTs `body` with `content_type` to `path` and returns the status and body.
    pub async fn post(
        &self,
        path: &str,
        content_type: &str,
        accept: &str,
        body: impl Into<reqwest::Body>,
    ) -> Result<Reply, ClientError> {
        let url = format!("{}{}", self.base, path);
        let mut req = self
            .http
            .post(&url)
            .header(CONTENT_TYPE, content_type)
            .header(ACCEPT, accept)
            .body(body);
        if let Some(token) = &self.token {
            req = req.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        let res = req
            .send()
            .await
            .map_err(|source| ClientError::Unreachable {
                url: url.clone(),
                source,
            })?;
        let status = res.status().as_u16();
        let content_type = res
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let body = res
            .bytes()
            .await
            .map_err(|source| ClientError::Unreachable { url, source })?
            .to_vec();
        Ok(Reply {
            status,
            content_type,
            body,
        })
    }
}
