//! The seal against its oracle, the real coreutils pipeline run by the test itself on
//! generated trees; and hostile archives, each refused with the contract's 4xx while the
//! server stays healthy.

mod common;

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command as Std, Stdio};

use common::{TestServer, assert_healthy};
use patchgate::http::Settings;
use serde_json::{Value, json};

const EMPTY_SEAL: &str = "abcfa6a9d4df344d1781bc2560b5e4cdcae08b39ed303063535e7e1e926a304a";

/// The pipeline, run from `root` (the repository root).
fn pipeline(root: &Path) -> String {
    let out = Std::new("sh")
        .current_dir(root)
        .env("LC_ALL", "C")
        .arg("-c")
        .arg("LC_ALL=C find fixtures -type f ! -name '*.seal' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum")
        .output()
        .expect("run the pipeline");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8(out.stdout).expect("utf-8");
    line.strip_suffix("  -\n").expect("`HEX  -`").to_owned()
}

fn write(root: &Path, rel: &[u8], content: &[u8]) {
    let path = root.join(std::ffi::OsStr::from_bytes(rel));
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
}

/// The awkward tree: every name the issue lists.
fn awkward_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    let big: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let files: &[(&[u8], &[u8])] = &[
        (b"fixtures/plain.json", b"{\"a\":1}\n"),
        (b"fixtures/with space.txt", b"space"),
        ("fixtures/ünïcødé/日本.txt".as_bytes(), b"utf8"),
        (b"fixtures/back\\slash", b"backslash"),
        (b"fixtures/new\nline", b"newline"),
        (b"fixtures/carriage\rreturn", b"cr"),
        (b"fixtures/tab\tname", b"tab"),
        (b"fixtures/.leading-dot", b"dot"),
        (b"fixtures/.hidden/inner", b"inner"),
        (b"fixtures/a-b", b"dash"),
        (b"fixtures/a/b", b"slash"),
        (b"fixtures/a.b", b"dot-b"),
        (b"fixtures/x.seal", b"excluded"),
        (b"fixtures/.seal", b"excluded too"),
        (b"fixtures/keep.seal.txt", b"kept"),
        (b"fixtures/empty", b""),
        (b"fixtures/deep/er/and/deeper/file", b"deep"),
        (b"fixtures/latin1-\xe9", b"not utf-8"),
    ];
    for (p, c) in files {
        write(r, p, c);
    }
    write(r, b"fixtures/large.bin", &big);
    std::fs::create_dir_all(r.join("fixtures/empty-dir")).expect("mkdir");
    std::os::unix::fs::symlink("plain.json", r.join("fixtures/link-to-file")).expect("symlink");
    std::os::unix::fs::symlink("a", r.join("fixtures/link-to-dir")).expect("symlink");
    std::os::unix::fs::symlink("/nonexistent", r.join("fixtures/dangling")).expect("symlink");
    std::fs::hard_link(r.join("fixtures/a-b"), r.join("fixtures/hard-link")).expect("hard link");
    // Outside the tree: must not count.
    write(r, b"other/ignored", b"x");
    dir
}

fn cli_seal(root: &Path, extra: &[&str]) -> String {
    let out = common::patchgate()
        .current_dir(root)
        .env_remove("PATCHGATE_SERVER")
        .args(["seal", "fixtures"])
        .args(extra)
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out)
        .expect("utf-8")
        .strip_suffix("  -\n")
        .expect("`HEX  -`")
        .to_owned()
}

fn tar_of(root: &Path, gzip: bool) -> Vec<u8> {
    let out = Std::new("tar")
        .current_dir(root)
        .args(if gzip {
            ["-czf", "-", "fixtures"]
        } else {
            ["-cf", "-", "fixtures"]
        })
        .output()
        .expect("tar");
    assert!(out.status.success());
    out.stdout
}

fn sha256sum_manifest(root: &Path) -> Vec<u8> {
    let out = Std::new("sh")
        .current_dir(root)
        .arg("-c")
        // Unsorted, .seal files included: the server sorts and excludes.
        .arg("find fixtures -type f -print0 | xargs -0 sha256sum")
        .output()
        .expect("sha256sum");
    assert!(out.status.success());
    out.stdout
}

async fn post(
    server: &TestServer,
    path: &str,
    content_type: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, Value) {
    let mut req = common::client()
        .post(server.url(path))
        .header("content-type", content_type)
        .body(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = req.send().await.expect("request");
    let status = res.status().as_u16();
    let bytes = res.bytes().await.expect("body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn every_way_of_sealing_equals_the_coreutils_pipeline() {
    let tree = awkward_tree();
    let root = tree.path();
    let oracle = pipeline(root);
    let server = TestServer::start();

    assert_eq!(cli_seal(root, &[]), oracle, "the CLI");
    assert_eq!(cli_seal(root, &["-C", "."]), oracle, "the CLI with -C");

    let (status, body) = post(
        &server,
        "/seal",
        "application/x-tar",
        &[],
        tar_of(root, false),
    )
    .await;
    assert_eq!(
        (status, body["seal"].as_str()),
        (200, Some(oracle.as_str())),
        "plain tar: {body}"
    );
    assert_eq!(body["excluded"]["seal_files"], 2);
    assert_eq!(
        body["files"], 18,
        "16 named files + large.bin + the hard link; 2 .seal files left out"
    );

    let (status, body) = post(
        &server,
        "/seal",
        "application/gzip",
        &[],
        tar_of(root, true),
    )
    .await;
    assert_eq!(
        (status, body["seal"].as_str()),
        (200, Some(oracle.as_str())),
        "gzip tar: {body}"
    );
    let (status, body) = post(
        &server,
        "/seal",
        "application/x-tar",
        &[("content-encoding", "gzip")],
        tar_of(root, true),
    )
    .await;
    assert_eq!(
        (status, body["seal"].as_str()),
        (200, Some(oracle.as_str())),
        "Content-Encoding gzip: {body}"
    );

    let (status, body) = post(
        &server,
        "/seal",
        "text/plain",
        &[],
        sha256sum_manifest(root),
    )
    .await;
    assert_eq!(
        (status, body["seal"].as_str()),
        (200, Some(oracle.as_str())),
        "manifest: {body}"
    );

    // JSON carries UTF-8 paths only: the same tree without the Latin-1 name.
    std::fs::remove_file(root.join(std::ffi::OsStr::from_bytes(b"fixtures/latin1-\xe9")))
        .expect("rm");
    let oracle = pipeline(root);
    let manifest = String::from_utf8(sha256sum_manifest(root)).expect("utf-8 manifest");
    let files: Vec<Value> = patchgate::core::seal::parse_manifest(manifest.as_bytes())
        .expect("manifest")
        .into_iter()
        .map(|e| json!({"path": String::from_utf8(e.path).expect("utf-8"), "sha256": e.sha256.to_hex()}))
        .collect();
    let doc = json!({"files": files, "expected": oracle});
    let (status, body) = post(
        &server,
        "/seal",
        "application/json",
        &[],
        doc.to_string().into_bytes(),
    )
    .await;
    assert_eq!(
        (status, body["seal"].as_str()),
        (200, Some(oracle.as_str())),
        "json: {body}"
    );
    assert_eq!(body["match"], true);
    assert_eq!(body["outcome"], "match");
    assert_eq!(cli_seal(root, &[]), oracle);
    assert_eq!(
        cli_seal(root, &["--server", &format!("http://{}", server.addr)]),
        oracle,
        "the CLI through a server"
    );
}

#[tokio::test]
async fn generated_trees_agree_with_the_pipeline() {
    let server = TestServer::start();
    // A few dozen small trees with names drawn from an awkward alphabet.
    let alphabet: &[&[u8]] = &[
        b"a",
        b"b",
        b"-",
        b".",
        b" ",
        b"\\",
        b"\n",
        b"\t",
        b"\xc3\xa9",
        b"_",
        b"Z",
        b"0",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..12 {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("fixtures")).expect("mkdir");
        for _ in 0..(next() % 12) {
            let mut name = b"fixtures/".to_vec();
            for depth in 0..(1 + next() % 3) {
                if depth > 0 {
                    name.push(b'/');
                }
                for _ in 0..(1 + next() % 5) {
                    name.extend_from_slice(alphabet[(next() % alphabet.len() as u64) as usize]);
                }
                if name.ends_with(b"/.") || name.ends_with(b"/..") || name.ends_with(b"/") {
                    name.push(b'x');
                }
            }
            if next() % 5 == 0 {
                name.extend_from_slice(b".seal");
            }
            let path = dir.path().join(std::ffi::OsStr::from_bytes(&name));
            // A name that is a directory prefix of an earlier file (or the reverse) is skipped.
            if std::fs::create_dir_all(path.parent().expect("parent")).is_err() || path.is_dir() {
                continue;
            }
            let content: Vec<u8> = (0..(next() % 300)).map(|_| next() as u8).collect();
            let _ = std::fs::write(&path, content);
        }
        let oracle = pipeline(dir.path());
        assert_eq!(cli_seal(dir.path(), &[]), oracle);
        let (status, body) = post(
            &server,
            "/seal",
            "application/x-tar",
            &[],
            tar_of(dir.path(), false),
        )
        .await;
        assert_eq!(
            (status, body["seal"].as_str()),
            (200, Some(oracle.as_str())),
            "{body}"
        );
        let (status, body) = post(
            &server,
            "/seal",
            "text/plain",
            &[],
            sha256sum_manifest(dir.path()),
        )
        .await;
        assert_eq!(
            (status, body["seal"].as_str()),
            (200, Some(oracle.as_str())),
            "{body}"
        );
    }
}

#[tokio::test]
async fn the_empty_tree_and_expected_seals() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("fixtures/only-dirs/inside")).expect("mkdir");
    write(dir.path(), b"fixtures/only.seal", b"excluded");
    assert_eq!(pipeline(dir.path()), EMPTY_SEAL);
    assert_eq!(cli_seal(dir.path(), &[]), EMPTY_SEAL);
    let server = TestServer::start();
    let (status, body) = post(
        &server,
        "/seal",
        "application/x-tar",
        &[],
        tar_of(dir.path(), false),
    )
    .await;
    assert_eq!((status, body["seal"].as_str()), (200, Some(EMPTY_SEAL)));
    let (status, body) = post(&server, "/seal", "text/plain", &[], Vec::new()).await;
    assert_eq!((status, body["seal"].as_str()), (200, Some(EMPTY_SEAL)));

    // ?expected= turns the answer into a verdict; Accept: text/plain answers with the seal line.
    let other = "0".repeat(64);
    let (status, body) = post(
        &server,
        &format!("/seal?expected={other}"),
        "text/plain",
        &[],
        Vec::new(),
    )
    .await;
    assert_eq!(status, 409);
    assert_eq!(body["outcome"], "fixture_fault");
    assert_eq!(body["match"], false);
    assert_eq!(body["exit_code"], 1);
    let res = common::client()
        .post(server.url(&format!("/seal?expected={EMPTY_SEAL}")))
        .header("content-type", "text/plain")
        .header("accept", "text/plain")
        .body(Vec::new())
        .send()
        .await
        .expect("request");
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        res.text().await.expect("text"),
        format!("{EMPTY_SEAL}  -\n")
    );
}

#[test]
fn the_cli_checks_an_expected_seal_file_and_names_drift() {
    let tree = awkward_tree();
    let root = tree.path();
    let oracle = pipeline(root);
    std::fs::write(
        root.join("fixtures.seal.expected"),
        format!("{oracle}  -\n"),
    )
    .expect("write");
    cli_seal(
        root,
        &[
            "--expected",
            "fixtures.seal.expected",
            "--manifest",
            "fixtures.manifest",
        ],
    );
    // The manifest it wrote is the pipeline's own lines.
    let manifest = std::fs::read(root.join("fixtures.manifest")).expect("manifest");
    let piped = Std::new("sh")
        .current_dir(root)
        .arg("-c")
        .arg("LC_ALL=C find fixtures -type f ! -name '*.seal' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum")
        .output()
        .expect("pipeline")
        .stdout;
    assert_eq!(manifest, piped);

    // Drift: one file changed, one added, one removed.
    std::fs::write(root.join("fixtures/plain.json"), "changed").expect("write");
    std::fs::write(root.join("fixtures/brand-new"), "new").expect("write");
    std::fs::remove_file(root.join("fixtures/empty")).expect("rm");
    let out = common::patchgate()
        .current_dir(root)
        .args([
            "seal",
            "fixtures",
            "--expected",
            "fixtures.seal.expected",
            "--expected-manifest",
            "fixtures.manifest",
            "--json",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let answer: Value = serde_json::from_slice(&out).expect("json");
    assert_eq!(answer["match"], false);
    assert_eq!(answer["seal"].as_str(), Some(pipeline(root).as_str()));
    assert_eq!(
        answer["drift"],
        json!({"added": ["fixtures/brand-new"], "removed": ["fixtures/empty"], "changed": ["fixtures/plain.json"]})
    );
    // The local answer is the server's answer: the same fields, a decision id included.
    assert_eq!(answer["outcome"], "fixture_fault");
    assert_eq!(answer["exit_code"], 1);
    // Drift against an expected manifest alone is a mismatch too (exit 1), and says so.
    let out = common::patchgate()
        .current_dir(root)
        .args([
            "seal",
            "fixtures",
            "--expected-manifest",
            "fixtures.manifest",
        ])
        .output()
        .expect("seal");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("drifted from the expected manifest"));
    // Nothing expected: `outcome` is `sealed`, so every answer has the same fields.
    let out = common::patchgate()
        .current_dir(root)
        .args(["seal", "fixtures", "--json"])
        .output()
        .expect("seal");
    assert_eq!(out.status.code(), Some(0));
    let sealed: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        (&sealed["outcome"], &sealed["match"]),
        (&json!("sealed"), &Value::Null)
    );
    assert!(
        answer["decision_id"]
            .as_str()
            .is_some_and(|id| id.len() == 36),
        "{answer}"
    );
    let mut fields: Vec<&String> = answer
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    fields.sort();
    assert_eq!(
        fields,
        [
            "bytes",
            "decision_id",
            "drift",
            "excluded",
            "exit_code",
            "expected",
            "files",
            "match",
            "outcome",
            "seal"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Hostile archives

/// A ustar header block for `name`, with `size` and `kind`, its checksum computed.
fn header(name: &[u8], size: u64, kind: u8) -> Vec<u8> {
    let mut h = vec![0u8; 512];
    h[..name.len().min(100)].copy_from_slice(&name[..name.len().min(100)]);
    h[100..108].copy_from_slice(b"0000644\0");
    h[108..116].copy_from_slice(b"0000000\0");
    h[116..124].copy_from_slice(b"0000000\0");
    h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    h[136..148].copy_from_slice(b"00000000000\0");
    h[156] = kind;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

fn member(name: &[u8], data: &[u8]) -> Vec<u8> {
    let mut out = header(name, data.len() as u64, b'0');
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

fn end() -> Vec<u8> {
    vec![0u8; 1024]
}

fn pax(records: &[(&str, &str)]) -> Vec<u8> {
    let mut body = Vec::new();
    for (k, v) in records {
        let rest = format!(" {k}={v}\n");
        let mut len = rest.len() + 1;
        while format!("{len}{rest}").len() != len {
            len += 1;
        }
        body.extend_from_slice(format!("{len}{rest}").as_bytes());
    }
    let mut out = header(b"PaxHeaders/x", body.len() as u64, b'x');
    out.extend_from_slice(&body);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut child = Std::new("gzip")
        .arg("-c")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = data.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().expect("gzip output");
    let _ = feeder.join();
    out.stdout
}

#[tokio::test]
async fn hostile_archives_are_refused_with_the_contracts_4xx() {
    let server = TestServer::start_with(Settings {
        seal_decompressed_limit: 8 * 1024 * 1024,
        ..Settings::default()
    });
    let good = [member(b"fixtures/a", b"a"), end()].concat();
    let valid_tar = [
        member(b"fixtures/a", &vec![7u8; 4096]),
        member(b"fixtures/b", b"b"),
        end(),
    ]
    .concat();

    let cases: Vec<(&str, Vec<u8>, &str, u16)> = vec![
        (
            "a `..` member",
            [member(b"fixtures/../../etc/passwd", b"x"), end()].concat(),
            "application/x-tar",
            422,
        ),
        (
            "an absolute member",
            [member(b"/etc/passwd", b"x"), end()].concat(),
            "application/x-tar",
            422,
        ),
        (
            "the same path twice",
            [
                member(b"fixtures/a", b"1"),
                member(b"./fixtures//a", b"2"),
                end(),
            ]
            .concat(),
            "application/x-tar",
            422,
        ),
        (
            "a hard link to nothing earlier",
            [header(b"fixtures/l", 0, b'1'), end()].concat(),
            "application/x-tar",
            422,
        ),
        (
            "a truncated archive",
            valid_tar[..valid_tar.len() / 2 + 100].to_vec(),
            "application/x-tar",
            400,
        ),
        (
            "a size past the end",
            [
                header(b"fixtures/big", 1_000_000, b'0'),
                b"only a little".to_vec(),
            ]
            .concat(),
            "application/x-tar",
            400,
        ),
        (
            "garbage bytes",
            (0..4096u32).map(|i| (i * 7 + 3) as u8).collect(),
            "application/x-tar",
            400,
        ),
        (
            "bad gzip",
            b"\x1f\x8bthis is not deflate data at all".to_vec(),
            "application/gzip",
            400,
        ),
        (
            "a gzip bomb",
            gzip(
                &[
                    member(b"fixtures/zeros", &vec![0u8; 64 * 1024 * 1024]),
                    end(),
                ]
                .concat(),
            ),
            "application/gzip",
            413,
        ),
        // PAX: the `size` record wins over the ustar size (as in GNU tar), so what follows the
        // empty member is read as the next header: a smuggled `..` path, refused like any other.
        (
            "a PAX header that desynchronises the stream",
            [
                pax(&[("size", "0")]),
                member(
                    b"fixtures/innocent",
                    &[header(b"../../smuggled", 1, b'0'), vec![b'x'; 512]].concat(),
                ),
                end(),
            ]
            .concat(),
            "application/x-tar",
            422,
        ),
        (
            "a PAX path that leaves the tree",
            [
                pax(&[("path", "../../etc/cron.d/x")]),
                member(b"fixtures/fine", b"x"),
                end(),
            ]
            .concat(),
            "application/x-tar",
            422,
        ),
        (
            "an unknown media type",
            good.clone(),
            "application/zip",
            415,
        ),
    ];
    for (name, body, ct, status) in cases {
        let (got, problem) = post(&server, "/seal", ct, &[], body).await;
        assert_eq!(got, status, "{name}: {problem}");
        assert_eq!(problem["status"], status, "{name}: a problem document");
        assert_healthy(&server).await;
    }
    // The server still seals a good archive after all that.
    let (status, body) = post(&server, "/seal", "application/x-tar", &[], good).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["files"], 1);
}

#[tokio::test]
async fn an_archive_over_the_limit_is_413() {
    let server = TestServer::start_with(Settings {
        seal_archive_limit: 64 * 1024,
        ..Settings::default()
    });
    let big = [member(b"fixtures/big", &vec![1u8; 128 * 1024]), end()].concat();
    let (status, body) = post(&server, "/seal", "application/x-tar", &[], big).await;
    assert_eq!(status, 413, "{body}");
    assert_healthy(&server).await;
}

#[tokio::test]
async fn bad_manifests_and_json_bodies_are_422_naming_the_problem() {
    let server = TestServer::start();
    let hex = "ab".repeat(32);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "text/plain",
            format!("{hex}  fixtures/a\nnot a line\n").into_bytes(),
            "line 2",
        ),
        (
            "text/plain",
            format!("{hex}  ../x\n").into_bytes(),
            "line 1",
        ),
        (
            "text/plain",
            format!("{hex}  fixtures/a\n{hex}  ./fixtures/a\n").into_bytes(),
            "line 2",
        ),
        (
            "application/json",
            json!({"files": [{"path": "/abs", "sha256": hex}]})
                .to_string()
                .into_bytes(),
            "/files/0/path",
        ),
        (
            "application/json",
            json!({"files": [{"path": "f/a", "sha256": "xyz"}]})
                .to_string()
                .into_bytes(),
            "/files/0/sha256",
        ),
        (
            "application/json",
            json!({"files": [], "expected": "nope"})
                .to_string()
                .into_bytes(),
            "/expected",
        ),
        (
            "application/json",
            json!({"files": [], "extra": 1}).to_string().into_bytes(),
            "/extra",
        ),
        (
            "application/json",
            json!({"files": [{"path": "f/a", "sha256": hex}, {"path": "f//a", "sha256": hex}]})
                .to_string()
                .into_bytes(),
            "/files/1/path",
        ),
    ];
    for (ct, body, needle) in cases {
        let (status, problem) = post(&server, "/seal", ct, &[], body).await;
        assert_eq!(status, 422, "{needle}: {problem}");
        assert!(problem.to_string().contains(needle), "{needle}: {problem}");
    }
    let (status, _) = post(&server, "/seal?expected=zz", "text/plain", &[], Vec::new()).await;
    assert_eq!(status, 422);
    let (status, _) = post(&server, "/seal?other=1", "text/plain", &[], Vec::new()).await;
    assert_eq!(status, 422);
    let (status, _) = post(&server, "/seal", "application/json", &[], b"{".to_vec()).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn json_bodies_name_the_drift_from_an_expected_manifest() {
    let server = TestServer::start();
    let h = |b: u8| format!("{b:02x}").repeat(32);
    let doc = json!({
        "files": [{"path": "f/a", "sha256": h(1)}, {"path": "f/b", "sha256": h(2)}, {"path": "f/new", "sha256": h(3)}],
        "expected_manifest": format!("{}  f/a\n{}  f/b\n{}  f/gone\n", h(1), h(9), h(4)),
    });
    let (status, body) = post(
        &server,
        "/seal",
        "application/json",
        &[],
        doc.to_string().into_bytes(),
    )
    .await;
    // Drift is a mismatch: 409, fixture_fault.
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        (&body["outcome"], &body["match"]),
        (&json!("fixture_fault"), &json!(false))
    );
    assert_eq!(
        body["drift"],
        json!({"added": ["f/new"], "removed": ["f/gone"], "changed": ["f/b"]})
    );
    // No drift: a match.
    let same = json!({
        "files": [{"path": "f/a", "sha256": h(1)}],
        "expected_manifest": format!("{}  f/a\n", h(1)),
    });
    let (status, body) = post(
        &server,
        "/seal",
        "application/json",
        &[],
        same.to_string().into_bytes(),
    )
    .await;
    assert_eq!((status, &body["outcome"]), (200, &json!("match")), "{body}");
}

/// A GNU long-name member (`L`) carrying `name`, as GNU tar writes one.
fn long_name(name: &[u8]) -> Vec<u8> {
    let mut data = name.to_vec();
    data.push(0);
    let mut out = header(b"././@LongLink", data.len() as u64, b'L');
    out.extend_from_slice(&data);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

#[tokio::test]
async fn headers_that_claim_more_than_the_caps_are_refused_before_their_data_is_read() {
    let server = TestServer::start_with(Settings {
        tree_limits: patchgate::core::seal::TreeLimits {
            max_entries: 3,
            max_path_bytes: 64,
        },
        ..Settings::default()
    });
    // Each header claims far more than it carries: a reader that read the claimed data whole
    // would find a truncated archive (400); refusing by the claim is a 413 naming the cap.
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        (
            "a GNU long name claiming 1 GiB",
            [header(b"././@LongLink", 1 << 30, b'L'), vec![0u8; 4096]].concat(),
            413,
            "long name",
        ),
        (
            "a PAX header claiming 100 KiB",
            [header(b"PaxHeaders/x", 100 * 1024, b'x'), vec![0u8; 4096]].concat(),
            413,
            "PAX header",
        ),
        (
            "a global PAX header claiming 100 KiB",
            [
                header(b"pax_global_header", 100 * 1024, b'g'),
                vec![0u8; 4096],
            ]
            .concat(),
            413,
            "PAX header",
        ),
        (
            "more members than --seal-max-entries",
            [
                member(b"f/1", b"1"),
                member(b"f/2", b"2"),
                member(b"f/3", b"3"),
                member(b"f/4", b"4"),
                end(),
            ]
            .concat(),
            413,
            "--seal-max-entries",
        ),
        (
            "member paths adding up past --seal-max-path-bytes",
            [member(&[b'a'; 40], b"1"), member(&[b'b'; 40], b"2"), end()].concat(),
            413,
            "--seal-max-path-bytes",
        ),
        (
            "a GNU sparse member",
            [header(b"f/sparse", 0, b'S'), end()].concat(),
            422,
            "sparse",
        ),
        (
            "a PAX size that disagrees with its header",
            [pax(&[("size", "2")]), member(b"f/x", b"x"), end()].concat(),
            422,
            "disagrees",
        ),
        (
            "a long name that describes no member",
            [long_name(b"f/orphan"), end()].concat(),
            400,
            "describes no member",
        ),
    ];
    for (name, body, status, says) in cases {
        let (got, problem) = post(&server, "/seal", "application/x-tar", &[], body).await;
        assert_eq!(got, status, "{name}: {problem}");
        let detail = problem["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(says), "{name}: {detail}");
        assert_healthy(&server).await;
    }
}

#[tokio::test]
async fn long_names_within_the_caps_seal_as_their_manifest_does() {
    let server = TestServer::start();
    let long = format!("fixtures/{}/leaf.txt", "d".repeat(300));
    let pax_path = format!("fixtures/{}.json", "p".repeat(200));
    let archive = [
        long_name(long.as_bytes()),
        member(b"ignored-by-the-long-name", b"long\n"),
        pax(&[("path", &pax_path)]),
        member(b"ignored-by-pax", b"pax\n"),
        member(b"fixtures/short", b"short\n"),
        end(),
    ]
    .concat();
    let (status, sealed) = post(&server, "/seal", "application/x-tar", &[], archive).await;
    assert_eq!(status, 200, "{sealed}");
    assert_eq!(sealed["files"], 3);
    let hex = |data: &[u8]| {
        use sha2::Digest as _;
        sha2::Sha256::digest(data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let files = json!({"files": [
        {"path": long, "sha256": hex(b"long\n")},
        {"path": pax_path, "sha256": hex(b"pax\n")},
        {"path": "fixtures/short", "sha256": hex(b"short\n")},
    ]});
    let (status, listed) = post(
        &server,
        "/seal",
        "application/json",
        &[],
        serde_json::to_vec(&files).unwrap_or_default(),
    )
    .await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(sealed["seal"], listed["seal"]);
}

/// A wide directory (shared by the hashing threads in batches) and a deep chain seal as the
/// pipeline does.
#[test]
fn wide_and_deep_trees_agree_with_the_pipeline() {
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..500 {
        write(
            dir.path(),
            format!("fixtures/wide/case{i:03}.json").as_bytes(),
            format!("{{\"case\":{i}}}").repeat(i % 7).as_bytes(),
        );
    }
    let mut deep = b"fixtures/deep".to_vec();
    for level in 0..30 {
        deep.extend_from_slice(format!("/level{level}").as_bytes());
        write(
            dir.path(),
            &[deep.as_slice(), b"/here"].concat(),
            &[level as u8; 3],
        );
    }
    assert_eq!(cli_seal(dir.path(), &[]), pipeline(dir.path()));
}

/// `?expected=` holds for a JSON body too: alone it is the expectation; with the body's own
/// `expected` the two must be the same seal (the same one, in either case, is not a conflict).
#[tokio::test]
async fn the_query_expected_holds_for_json_bodies() {
    let server = TestServer::start();
    let files = serde_json::json!([{"path": "fixtures/a.json", "sha256": "ab".repeat(32)}]);
    let (status, body) = post(
        &server,
        "/seal",
        "application/json",
        &[],
        serde_json::to_vec(&serde_json::json!({"files": files})).expect("json"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let seal = body["seal"].as_str().expect("a seal").to_owned();
    let other = "0".repeat(64);
    let cases = [
        (Some(seal.as_str()), None, 200),
        (Some(other.as_str()), None, 409),
        (Some(seal.as_str()), Some(seal.to_uppercase()), 200),
        (Some(other.as_str()), Some(other.clone()), 409),
        (Some(seal.as_str()), Some(other.clone()), 422),
    ];
    for (query, in_body, want) in cases {
        let mut doc = serde_json::json!({"files": files});
        if let Some(e) = &in_body {
            doc["expected"] = serde_json::json!(e);
        }
        let path = format!("/seal?expected={}", query.unwrap_or_default());
        let (status, answer) = post(
            &server,
            &path,
            "application/json",
            &[],
            serde_json::to_vec(&doc).expect("json"),
        )
        .await;
        assert_eq!(status, want, "{query:?} {in_body:?}: {answer}");
        if want == 422 {
            assert_eq!(answer["errors"][0]["pointer"], "/expected", "{answer}");
        }
    }
}
