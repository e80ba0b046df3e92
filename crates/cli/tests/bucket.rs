//! Datasets and captures in object storage, against a real S3 server
//! (SeaweedFS on 127.0.0.1, `common::s3`): the commands over a bucket's
//! dataset answer as over the same dataset on disk, a capture is read
//! from its object, and what cannot be read is said in one line that
//! names the bucket or object and no secret.

mod common;

use std::path::Path;

use common::s3::S3Server;
use common::{failed, perfq_ok, python_with, scratch, succeeded, testdata};

/// Copies the files of `dataset` into `s3://bucket/prefix/` with boto3
/// (a client other than perfq's).
fn upload(server: &S3Server, dataset: &Path, bucket: &str, prefix: &str) -> bool {
    let Some(py) = python_with("boto3") else {
        common::skip("no Python with boto3 (moto[server] brings it; .ci/setup.sh)");
        return false;
    };
    let script = "import boto3, pathlib, sys\n\
        root, bucket, prefix = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]\n\
        s3 = boto3.client('s3')\n\
        for p in sorted(root.rglob('*')):\n\
        \x20   if p.is_file():\n\
        \x20       s3.upload_file(str(p), bucket, prefix + '/' + str(p.relative_to(root)))\n";
    let mut c = std::process::Command::new(py);
    c.args(["-c", script])
        .arg(dataset)
        .args([bucket, prefix])
        .env("AWS_ENDPOINT_URL", &server.endpoint);
    for (k, v) in server.env() {
        c.env(k, v);
    }
    let out = c.output().expect("run boto3");
    succeeded(&out, "uploading with boto3");
    true
}

#[test]
fn a_dataset_in_a_bucket_answers_as_the_same_dataset_on_disk() {
    let Some(server) = S3Server::start("answers", &["perfq"]) else {
        return;
    };
    let dir = scratch("bucket", "answers");
    let local = dir.join("ds");
    let captures = ["fp.data", "multi.data", "dwarf.data", "topdown-spr.data"];
    let mut args = vec![
        "batch".to_string(),
        "-o".into(),
        local.display().to_string(),
    ];
    args.extend(captures.iter().map(|c| testdata(c).display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    perfq_ok(&args);
    if !upload(&server, &local, "perfq", "archive/ds") {
        return;
    }
    let local = local.display().to_string();
    let cache = dir.join("cache");
    let remote = "s3://perfq/archive/ds";
    let sql = "SELECT capture, symbol, samples, period FROM function_total \
               ORDER BY capture, period DESC, symbol LIMIT 200";
    let questions: Vec<Vec<&str>> = vec![
        vec!["query", "DS", sql, "--format", "json"],
        vec!["topdown", "DS", "--by", "function", "--format", "json"],
        vec!["topdown", "DS", "--total", "--format", "json"],
        vec!["flamegraph", "DS", "--folded"],
    ];
    for q in &questions {
        let with = |ds: &str| -> Vec<String> {
            q.iter()
                .map(|a| if *a == "DS" { ds } else { a }.to_string())
                .collect()
        };
        let run = |a: Vec<String>, place: &str| {
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            succeeded(&server.perfq(&a, &cache), format_args!("{q:?} {place}"))
        };
        let here = run(with(&local), "on disk");
        let there = run(with(remote), "in the bucket");
        assert_eq!(here, there, "{q:?}");
        assert!(!here.trim().is_empty(), "{q:?} answered nothing");
    }
}

#[test]
fn a_capture_in_a_bucket_is_read_from_its_object() {
    let Some(server) = S3Server::start("capture", &["perfq"]) else {
        return;
    };
    let dir = scratch("bucket", "capture");
    let caps = dir.join("caps");
    std::fs::create_dir_all(&caps).expect("caps");
    for c in ["fp.data", "topdown-spr.data"] {
        std::fs::copy(testdata(c), caps.join(c)).expect("copy");
    }
    if !upload(&server, &caps, "perfq", "caps") {
        return;
    }
    let cache = dir.join("cache");
    for (file, args) in [
        (
            "fp.data",
            vec!["report", "F", "--children", "--format", "json"],
        ),
        ("topdown-spr.data", vec!["topdown", "F", "--format", "json"]),
        (
            "fp.data",
            vec!["query", "F", "SELECT count(*) FROM samples"],
        ),
    ] {
        let local = testdata(file).display().to_string();
        let url = format!("s3://perfq/caps/{file}");
        let with = |f: &str| -> Vec<String> {
            args.iter()
                .map(|a| if *a == "F" { f } else { a }.to_string())
                .collect()
        };
        let run = |a: Vec<String>| {
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            succeeded(&server.perfq(&a, &cache), format_args!("{a:?}"))
        };
        assert_eq!(run(with(&local)), run(with(&url)), "{args:?} {file}");
    }
}

#[test]
fn what_a_bucket_refuses_is_one_line_naming_it_and_no_secret() {
    let Some(server) = S3Server::start("refusals", &["perfq"]) else {
        return;
    };
    let dir = scratch("bucket", "refusals");
    let cache = dir.join("cache");
    let q = "SELECT 1";
    // (arguments, variables changed, what the line says)
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        (
            vec!["query", "s3://perfq/ds", q],
            vec![("AWS_SECRET_ACCESS_KEY", "not-the-secret-key")],
            "s3://perfq/ds: access denied",
        ),
        (
            vec!["query", "s3://no-such-bucket/ds", q],
            vec![],
            "s3://no-such-bucket/ds: no such bucket",
        ),
        (
            vec!["report", "s3://perfq/caps/none.data"],
            vec![],
            "s3://perfq/caps/none.data: no such object",
        ),
        (
            vec!["query", "s3://perfq/empty", q],
            vec![],
            "s3://perfq/empty is not a perfq dataset",
        ),
        (
            vec!["query", "s3://Not_A_Bucket/ds", q],
            vec![],
            "s3://Not_A_Bucket/ds: \"Not_A_Bucket\" is not a bucket name",
        ),
        (
            vec!["query", "gs://bucket/ds", q],
            vec![],
            "gs://bucket/ds: perfq reads s3:// and file:// URLs, not gs://",
        ),
        (
            vec!["query", "s3://perfq/ds", q],
            vec![("AWS_PROFILE", "nobody")],
            "AWS_PROFILE names \"nobody\"",
        ),
    ];
    for (args, env, said) in cases {
        let out = server.perfq_with(&args, &cache, &env);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = failed(&out, format_args!("{args:?}"));
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {err}");
        assert!(lines[0].contains(said), "{args:?}: {err}");
        assert!(
            !err.contains(&server.secret_key),
            "{args:?} printed the secret"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
