//! `GET /`: the page for people, over a real socket (the browser test is
//! `scripts/page_test.py`, run by `.ci/run` in headless Chromium).

mod common;

use common::TestServer;
use patchgate::http::Settings;

#[tokio::test]
async fn the_page_is_served_under_a_strict_csp_with_nothing_inline() {
    let server = TestServer::start();
    let client = common::client();
    let res = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let csp = res.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(res.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(res.headers()["x-frame-options"], "DENY");
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
        "{csp}"
    );
    let html = res.text().await.unwrap();
    // Every script is a file of this origin; no inline script, style or handler.
    assert!(html.contains(r#"<script src="/page.js" defer></script>"#));
    assert_eq!(html.matches("<script").count(), 1);
    for inline in ["<style", " style=", " onclick=", " onload=", "javascript:"] {
        assert!(!html.contains(inline), "{inline}");
    }
    // No external assets: every src and href is a path of this origin.
    for attr in [r#"src=""#, r#"href=""#] {
        for at in html.match_indices(attr) {
            let value = &html[at.0 + attr.len()..];
            assert!(value.starts_with('/'), "{}", &value[..value.len().min(40)]);
        }
    }
    for (path, ty) in [
        ("/page.js", "text/javascript; charset=utf-8"),
        ("/page.css", "text/css; charset=utf-8"),
        ("/icon.svg", "image/svg+xml"),
    ] {
        let res = client.get(server.url(path)).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 200, "{path}");
        assert_eq!(res.headers()["content-type"], ty, "{path}");
        assert!(
            res.headers().contains_key("content-security-policy"),
            "{path}"
        );
        let text = res.text().await.unwrap();
        assert!(
            !text.contains("url(") && !text.contains("fetch(\"http") && !text.contains("import "),
            "{path}: no external asset"
        );
    }
}

#[tokio::test]
async fn with_auth_on_the_page_and_its_tables_stay_open_and_deciding_needs_the_token() {
    let server = TestServer::start_with(Settings {
        token: patchgate::http::BearerToken::new("tok"),
        ..Settings::default()
    });
    let client = common::client();
    for path in [
        "/",
        "/page.js",
        "/page.css",
        "/icon.svg",
        "/route/table",
        "/gate/rules",
        "/healthz",
        "/metrics",
    ] {
        let res = client.get(server.url(path)).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 200, "{path}");
    }
    let doc = serde_json::json!({"property_check": "pass", "fixture_check": "pass", "flaky_freeze": "pass"});
    let res = client
        .post(server.url("/route"))
        .json(&doc)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 401);
    let res = client
        .post(server.url("/route"))
        .bearer_auth("tok")
        .json(&doc)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
}
