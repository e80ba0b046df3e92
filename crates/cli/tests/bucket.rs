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
    let out = (server.client(&py).args(["-c", script]))
        .arg(dataset)
        .args([bucket, prefix])
        .output()
        .expect("run boto3");
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
        assert!(same_answer(&here, &there), "{q:?}:\n{here}\n{there}");
        assert!(!here.trim().is_empty(), "{q:?} answered nothing");
    }
    // Output files may be objects too: written here, then put whole.
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("out");
    for (args, name) in [
        (vec!["flamegraph", remote, "--folded"], "stacks.txt"),
        (vec!["export", remote, "--to", "pprof"], "profile.pb.gz"),
        (vec!["query", remote, sql, "--format", "csv"], "rows.csv"),
    ] {
        let here = out.join(name).display().to_string();
        let there = format!("s3://perfq/out/{name}");
        for o in [here.as_str(), there.as_str()] {
            let mut a = args.clone();
            a.extend(["-o", o]);
            succeeded(&server.perfq(&a, &cache), format_args!("{a:?}"));
        }
    }
    let mut written = objects(&server, "perfq", "out");
    written.sort();
    let mut kept: Vec<(String, Vec<u8>)> = std::fs::read_dir(&out)
        .expect("out")
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).expect("read"))
        })
        .collect();
    kept.sort();
    assert!(written == kept, "the objects written differ from the files");
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
        ("fp.data", vec!["info", "F", "--format", "json"]),
        ("fp.data", vec!["dump", "F", "--format", "csv"]),
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
        // The file is named as it was given.
        let there = run(with(&url)).replace(&url, &local);
        assert_eq!(run(with(&local)), there, "{args:?} {file}");
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
    let bad = dir.join("bad");
    std::fs::create_dir_all(&bad).expect("bad");
    std::fs::write(bad.join("bad.data"), b"PERFILE2 and no header").expect("write");
    if !upload(&server, &bad, "perfq", "caps") {
        return;
    }
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
        (
            vec![
                "report",
                "testdata/fp.data",
                "--archive",
                "s3://perfq/none.tar.bz2",
            ],
            vec![],
            "s3://perfq/none.tar.bz2: cannot open it: no such object",
        ),
        (
            vec!["info", "s3://perfq/caps/bad.data"],
            vec![],
            "s3://perfq/caps/bad.data: file too short",
        ),
        (
            vec!["topdown", "s3://perfq/caps/bad.data"],
            vec![],
            "converting s3://perfq/caps/bad.data: s3://perfq/caps/bad.data: file too short",
        ),
    ];
    // Writes refused alike, before anything is written.
    let fp = testdata("fp.data").display().to_string();
    let writes: Vec<Case> = vec![
        (
            vec!["convert", "-o", "s3://no-such-bucket/ds", &fp],
            vec![],
            "s3://no-such-bucket/ds",
        ),
        (
            vec!["batch", "-o", "s3://perfq/written", &fp],
            vec![("AWS_SECRET_ACCESS_KEY", "not-the-secret-key")],
            "s3://perfq/written",
        ),
        (
            vec!["query", "s3://perfq/none", q, "-o", "s3://perfq/out.csv"],
            vec![],
            "s3://perfq/none is not a perfq dataset",
        ),
    ];
    let cases: Vec<Case> = cases.into_iter().chain(writes).collect();
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
    // Nothing was written but the bad capture put there first.
    let left: Vec<String> = objects(&server, "perfq", "")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(left, ["caps/bad.data"], "{left:?}");
}

/// Whether two answers are the same: the same text, or the same JSON
/// with numbers equal to 1e-9 relative (sums of floating-point products
/// come out in the order DataFusion's partitions give them, which differ
/// between a folder and a bucket).
fn same_answer(a: &str, b: &str) -> bool {
    fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
        use serde_json::Value::*;
        match (a, b) {
            (Number(x), Number(y)) => match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1e-300),
                _ => x == y,
            },
            (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
            (Object(x), Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
            }
            _ => a == b,
        }
    }
    let json = |t: &str| serde_json::from_str::<serde_json::Value>(t).ok();
    match (json(a), json(b)) {
        (Some(x), Some(y)) => same(&x, &y),
        _ => a == b,
    }
}

/// Every object under `s3://bucket/prefix/`, as (key under the prefix,
/// bytes), read with boto3.
fn objects(server: &S3Server, bucket: &str, prefix: &str) -> Vec<(String, Vec<u8>)> {
    let py = python_with("boto3").expect("boto3");
    let script = "import boto3, sys, json, base64\n\
        bucket, prefix = sys.argv[1], sys.argv[2]\n\
        prefix = prefix + '/' if prefix else ''\n\
        s3 = boto3.client('s3')\n\
        out = []\n\
        for page in s3.get_paginator('list_objects_v2').paginate(Bucket=bucket, Prefix=prefix):\n\
        \x20   for o in page.get('Contents', []):\n\
        \x20       body = s3.get_object(Bucket=bucket, Key=o['Key'])['Body'].read()\n\
        \x20       out.append([o['Key'][len(prefix):], base64.b64encode(body).decode()])\n\
        print(json.dumps(out))\n";
    let out = server
        .client(&py)
        .args(["-c", script, bucket, prefix])
        .output();
    let text = succeeded(&out.expect("run boto3"), "listing with boto3");
    let rows: Vec<(String, String)> = serde_json::from_str(&text).expect("JSON");
    rows.into_iter()
        .map(|(k, b)| (k, base64_decode(&b)))
        .collect()
}

/// The table files of the dataset `s3://perfq/prefix`, as [`files`]
/// gives a local one's.
fn tables(server: &S3Server, prefix: &str) -> Vec<(String, Vec<u8>)> {
    let mut listed = objects(server, "perfq", prefix);
    listed.retain(|(k, _)| k.starts_with("capture="));
    listed.sort();
    listed
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let bytes: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    bytes
        .chunks(4)
        .flat_map(|c| {
            let n = c.iter().fold(0u32, |n, &v| n << 6 | u32::from(v)) << (6 * (4 - c.len()));
            let all = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            all.into_iter().take(c.len() - 1)
        })
        .collect()
}

/// The files of a local dataset, as (path under it, bytes).
fn files(dataset: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for capture in std::fs::read_dir(dataset).expect("dataset").flatten() {
        let name = capture.file_name().to_string_lossy().into_owned();
        if !name.starts_with("capture=") {
            continue;
        }
        for f in std::fs::read_dir(capture.path())
            .expect("capture")
            .flatten()
        {
            let key = format!("{name}/{}", f.file_name().to_string_lossy());
            out.push((key, std::fs::read(f.path()).expect("read")));
        }
    }
    out.sort();
    out
}

#[test]
fn a_batch_into_a_bucket_writes_the_dataset_a_local_batch_writes() {
    if let Some(server) = S3Server::start("batch", &["perfq"]) {
        batch_into_a_bucket(&server, "batch");
    }
}

#[test]
fn a_batch_into_moto_writes_the_same_dataset() {
    if let Some(server) = S3Server::start_moto("batch", &["perfq"]) {
        batch_into_a_bucket(&server, "moto");
    }
}

/// A batch of the testdata captures and a tarball into `server`'s bucket
/// and into a folder: the same tables, byte for byte; read by pyarrow,
/// Polars and DuckDB alike.
fn batch_into_a_bucket(server: &S3Server, tag: &str) {
    let dir = scratch("bucket", tag);
    // The testdata captures, and two of them again in a tarball.
    let tar = dir.join("more.tar");
    let status = std::process::Command::new("tar")
        .arg("cf")
        .arg(&tar)
        .args([
            "-C",
            &testdata("").display().to_string(),
            "group.data",
            "compressed.data",
        ])
        .status()
        .expect("tar");
    assert!(status.success());
    let mut inputs: Vec<String> = ["fp.data", "multi.data", "dwarf.data", "topdown-spr.data"]
        .iter()
        .map(|c| testdata(c).display().to_string())
        .collect();
    inputs.push(tar.display().to_string());
    let local = dir.join("ds");
    let cache = dir.join("cache");
    let batch = |to: &str| -> String {
        let mut args = vec!["batch", "-j", "2", "--format", "csv", "-o", to];
        args.extend(inputs.iter().map(String::as_str));
        succeeded(&server.perfq(&args, &cache), format_args!("batch -o {to}"))
    };
    batch(&local.display().to_string());
    let first = batch("s3://perfq/team/ds");
    assert_eq!(first.matches(",converted,").count(), 6, "{first}");
    // Again: every capture is there, none converted twice.
    let again = batch("s3://perfq/team/ds");
    assert_eq!(again.matches(",skipped,").count(), 6, "{again}");
    // --force converts a capture again, in place.
    let fp = testdata("fp.data").display().to_string();
    let forced = [
        "convert",
        "--force",
        "-o",
        "s3://perfq/team/ds",
        fp.as_str(),
    ];
    let forced = succeeded(&server.perfq(&forced, &cache), "convert --force");
    assert!(!forced.contains("already"), "{forced}");
    // The same table files, byte for byte; nothing else but the claims.
    let mut listed = objects(server, "perfq", "team/ds");
    let claims = listed
        .iter()
        .filter(|(k, _)| k.starts_with("_perfq/claims/"))
        .count();
    listed.retain(|(k, _)| !k.starts_with("_perfq/claims/"));
    listed.sort();
    assert_eq!(claims, 6);
    let here = files(&local);
    let keys = |v: &[(String, Vec<u8>)]| v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    assert_eq!(keys(&listed), keys(&here));
    let differ: Vec<&String> = (listed.iter().zip(&here))
        .filter(|(a, b)| a != b)
        .map(|(a, _)| &a.0)
        .collect();
    assert!(differ.is_empty(), "the bucket's tables differ: {differ:?}");
    // Read by others: pyarrow and Polars find the same samples there.
    readers_agree(server, &local, "s3://perfq/team/ds");
}

/// pyarrow's S3 file system and Polars read the same samples (capture,
/// count, sum of periods) from the bucket as pyarrow from the folder.
fn readers_agree(server: &S3Server, local: &Path, url: &str) {
    let Some(py) = python_with("pyarrow, polars") else {
        common::skip("no Python with pyarrow and Polars (.ci/setup.sh)");
        return;
    };
    let script = r#"
import os, sys, json
import pyarrow as pa, pyarrow.dataset as ds, pyarrow.fs as fs, polars as pl
local, url = sys.argv[1], sys.argv[2]
endpoint = os.environ['AWS_ENDPOINT_URL']
def counts(table):
    t = table.group_by('capture').aggregate([('period', 'count'), ('period', 'sum')])
    return sorted([r['capture'], r['period_count'], r['period_sum']] for r in t.to_pylist())
part = ds.partitioning(flavor='hive', schema=pa.schema([('capture', pa.string())]))
import glob
here = counts(ds.dataset(sorted(glob.glob(local + '/capture=*/samples.parquet')), format='parquet',
                         partitioning=part, partition_base_dir=local).to_table(columns=['capture', 'period']))
s3 = fs.S3FileSystem(endpoint_override=endpoint.split('//')[1], scheme='http',
                     access_key=os.environ['AWS_ACCESS_KEY_ID'], secret_key=os.environ['AWS_SECRET_ACCESS_KEY'],
                     region='us-east-1')
base = url[len('s3://'):]
files = [f.path for f in s3.get_file_info(fs.FileSelector(base, recursive=True))
         if f.path.endswith('/samples.parquet') and '/capture=' in f.path]
there = counts(ds.dataset(files, filesystem=s3, format='parquet', partitioning=part,
                          partition_base_dir=base).to_table(columns=['capture', 'period']))
opts = {'aws_endpoint_url': endpoint, 'aws_allow_http': 'true', 'aws_region': 'us-east-1',
        'aws_access_key_id': os.environ['AWS_ACCESS_KEY_ID'],
        'aws_secret_access_key': os.environ['AWS_SECRET_ACCESS_KEY']}
df = pl.scan_parquet(url + '/capture=*/samples.parquet', storage_options=opts, hive_partitioning=True,
                     hive_schema={'capture': pl.String}).group_by('capture').agg(
    pl.len().alias('n'), pl.col('period').sum().alias('p')).collect()
polars = sorted([r['capture'], r['n'], r['p']] for r in df.to_dicts())
print(json.dumps([here, there, polars]))
"#;
    let out = server
        .client(&py)
        .args(["-c", script])
        .arg(local)
        .arg(url)
        .output();
    let text = succeeded(&out.expect("run python"), "pyarrow and Polars");
    let [here, there, polars]: [serde_json::Value; 3] =
        serde_json::from_str(&text).expect("three answers");
    assert_eq!(here, there, "pyarrow");
    assert_eq!(here, polars, "Polars");
    assert!(here.as_array().is_some_and(|a| a.len() == 6), "{here}");
    if let Some(duckdb) = duckdb_agrees(server, url) {
        assert_eq!(here, duckdb, "DuckDB");
    }
}

/// DuckDB 1.5.5's answer to the same question from the bucket, through
/// its httpfs extension loaded from the file its wheel carries (nothing
/// downloaded), or `None` when it is not installed ([`common::skip`]).
fn duckdb_agrees(server: &S3Server, url: &str) -> Option<serde_json::Value> {
    let venv = std::env::var_os("PERFQ_DUCKDB_S3_VENV")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| std::path::PathBuf::from(h).join(".cache/perfq-duckdb-s3-venv"))
        });
    let py = venv.map(|v| v.join("bin/python"));
    let Some(py) = py.filter(|p| common::imports(p, "duckdb, duckdb_extension_httpfs")) else {
        common::skip("no DuckDB with httpfs (PERFQ_DUCKDB_S3_VENV; .ci/setup.sh)");
        return None;
    };
    // The secret, with its endpoint, comes before the first query: a URL
    // no secret covers would go to AWS's own endpoint.
    let script = r#"
import duckdb, duckdb_extension_httpfs, json, os, pathlib, sys
ext = next(pathlib.Path(duckdb_extension_httpfs.__file__).parent.glob('extensions/*/httpfs.duckdb_extension'))
con = duckdb.connect(config={'autoinstall_known_extensions': 'false', 'autoload_known_extensions': 'false'})
con.sql(f"LOAD '{ext}'")
endpoint = os.environ['AWS_ENDPOINT_URL'].split('//')[1]
con.sql(f"""CREATE SECRET bucket (TYPE S3, PROVIDER config, KEY_ID '{os.environ['AWS_ACCESS_KEY_ID']}',
    SECRET '{os.environ['AWS_SECRET_ACCESS_KEY']}', ENDPOINT '{endpoint}', URL_STYLE 'path',
    USE_SSL false, REGION 'us-east-1')""")
rows = con.sql(f"""SELECT capture, count(*), sum(period)::BIGINT FROM read_parquet(
    '{sys.argv[1]}/capture=*/samples.parquet', hive_partitioning = true,
    hive_types = {{'capture': VARCHAR}}) GROUP BY capture ORDER BY capture""").fetchall()
print(json.dumps([list(r) for r in rows]))
"#;
    let out = server.client(&py).args(["-c", script, url]).output();
    let text = succeeded(&out.expect("run DuckDB"), "DuckDB over the bucket");
    Some(serde_json::from_str(&text).expect("JSON"))
}

#[test]
fn a_batch_reads_captures_and_archives_from_a_bucket() {
    let Some(server) = S3Server::start("inputs", &["perfq"]) else {
        return;
    };
    let dir = scratch("bucket", "inputs");
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(inputs.join("a")).expect("folders");
    std::fs::create_dir_all(inputs.join("_hidden")).expect("folders");
    let tar = |name: &str, members: &[&str]| {
        let mut c = std::process::Command::new("tar");
        c.arg("czf").arg(inputs.join(name));
        c.args(["-C", &testdata("").display().to_string()])
            .args(members);
        assert!(c.status().expect("tar").success());
    };
    tar("a/two.tar.gz", &["group.data", "pipe.data"]);
    std::fs::copy(testdata("fp.data"), inputs.join("fp.data")).expect("copy");
    // A capture told by its magic alone, and files that are not captures.
    std::fs::copy(testdata("dwarf.data"), inputs.join("a/run1")).expect("copy");
    std::fs::write(inputs.join("a/notes.txt"), "not a capture").expect("write");
    std::fs::copy(testdata("multi.data"), inputs.join("_hidden/x.data")).expect("copy");
    if !upload(&server, &inputs, "perfq", "in") {
        return;
    }
    let cache = dir.join("cache");
    let run = |args: &[&str]| succeeded(&server.perfq(args, &cache), format_args!("{args:?}"));
    let summary = run(&[
        "batch",
        "s3://perfq/in",
        "-o",
        "s3://perfq/ds",
        "--format",
        "csv",
    ]);
    assert_eq!(summary.matches(",converted,").count(), 4, "{summary}");
    for member in [
        "s3://perfq/in/a/two.tar.gz!group.data",
        "s3://perfq/in/a/run1",
    ] {
        assert!(summary.contains(member), "{summary}");
    }
    // The same captures converted from their local copies answer alike.
    let local = dir.join("ds").display().to_string();
    let files: Vec<String> = ["group.data", "pipe.data", "fp.data", "dwarf.data"]
        .iter()
        .map(|c| testdata(c).display().to_string())
        .collect();
    let mut args = vec!["batch", "-o", &local];
    args.extend(files.iter().map(String::as_str));
    run(&args);
    let sql = "SELECT capture, symbol, samples, period FROM function_total \
               ORDER BY capture, period DESC, symbol LIMIT 300";
    let here = run(&["query", &local, sql, "--format", "json"]);
    let there = run(&["query", "s3://perfq/ds", sql, "--format", "json"]);
    assert_eq!(here, there);
    // A pattern, and what names nothing.
    let out = server.perfq(
        &[
            "batch",
            "s3://perfq/in/a/*.gz",
            "s3://perfq/none",
            "-o",
            &local,
            "--format",
            "csv",
        ],
        &cache,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches(",skipped,").count(), 2, "{text}");
    assert!(
        text.contains("no such object, and no object under it"),
        "{text}"
    );
}

/// Watches `s3://bucket/prefix/` until `stop` exists: each time a
/// capture's capture table is there with fewer than all its tables (a
/// half capture listed), a line on the output.
fn watch(server: &S3Server, bucket: &str, prefix: &str, stop: &Path) -> std::process::Child {
    let py = python_with("boto3").expect("boto3");
    let script = r#"
import boto3, os, sys, collections
bucket, prefix, stop = sys.argv[1], sys.argv[2], sys.argv[3]
s3 = boto3.client('s3')
while not os.path.exists(stop):
    tables = collections.defaultdict(set)
    for page in s3.get_paginator('list_objects_v2').paginate(Bucket=bucket, Prefix=prefix + '/capture='):
        for o in page.get('Contents', []):
            capture, table = o['Key'][len(prefix) + 1:].split('/', 1)
            tables[capture].add(table)
    for capture, t in tables.items():
        if 'capture.parquet' in t and len(t) < 14:
            print(capture, sorted(t), flush=True)
"#;
    server
        .client(&py)
        .args(["-c", script, bucket, prefix])
        .arg(stop)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run the watcher")
}

#[test]
fn a_batch_killed_midway_resumes_and_no_half_capture_is_ever_listed() {
    let Some(server) = S3Server::start("killed", &["perfq"]) else {
        return;
    };
    if python_with("boto3").is_none() {
        return common::skip("no Python with boto3 (.ci/setup.sh)");
    }
    let dir = scratch("bucket", "killed");
    let cache = dir.join("cache");
    let captures: Vec<String> = [
        "fp.data",
        "multi.data",
        "dwarf.data",
        "group.data",
        "pipe.data",
    ]
    .iter()
    .map(|c| testdata(c).display().to_string())
    .collect();
    let stop = dir.join("stop");
    let watcher = watch(&server, "perfq", "ds", &stop);
    // A slow server, so that the kill comes in the middle of uploads.
    let proxy = server.behind_proxy(40);
    let mut args = vec!["batch", "-j", "1", "-o", "s3://perfq/ds"];
    args.extend(captures.iter().map(String::as_str));
    let mut child = server.client(Path::new(env!("CARGO_BIN_EXE_perfq")));
    let mut child = child
        .args(&args)
        .env("PERFQ_CACHE_DIR", &cache)
        .env("AWS_ENDPOINT_URL", &proxy.endpoint)
        .spawn()
        .expect("start the batch");
    std::thread::sleep(std::time::Duration::from_millis(2500));
    child.kill().expect("kill -9");
    let _ = child.wait();
    drop(proxy);
    // Resumed: every capture there once, as a batch on disk writes it.
    let resumed = server.perfq(&args, &cache);
    succeeded(&resumed, "the resumed batch");
    let local = dir.join("local");
    let mut local_args = vec!["batch", "-o", local.to_str().expect("UTF-8")];
    local_args.extend(captures.iter().map(String::as_str));
    succeeded(&server.perfq(&local_args, &cache), "the local batch");
    assert!(
        tables(&server, "ds") == files(&local),
        "the resumed dataset differs"
    );
    std::fs::write(&stop, "").expect("stop the watcher");
    let seen = watcher.wait_with_output().expect("the watcher");
    let seen = String::from_utf8_lossy(&seen.stdout);
    assert!(seen.trim().is_empty(), "half captures were listed: {seen}");
}

#[test]
fn a_server_gone_midway_is_one_line_and_leaves_no_half_capture() {
    let Some(server) = S3Server::start("gone", &["perfq"]) else {
        return;
    };
    let dir = scratch("bucket", "gone");
    let cache = dir.join("cache");
    let proxy = server.behind_proxy(40);
    let mut child = server.client(Path::new(env!("CARGO_BIN_EXE_perfq")));
    let child = child
        .args(["convert", "-o", "s3://perfq/ds"])
        .arg(testdata("multi.data"))
        .arg(testdata("fp.data"))
        .env("PERFQ_CACHE_DIR", &cache)
        .env("AWS_ENDPOINT_URL", &proxy.endpoint)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the conversion");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    proxy.cut();
    let started = std::time::Instant::now();
    let out = child.wait_with_output().expect("the conversion");
    assert!(
        started.elapsed().as_secs() < 60,
        "the retries took too long"
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        !lines.is_empty() && lines.iter().all(|l| l.contains("s3://perfq/ds")),
        "{err}"
    );
    assert!(!err.contains(&server.secret_key));
    // Whatever was committed before is whole; nothing else is listed.
    let mut tables: std::collections::BTreeMap<String, usize> = Default::default();
    for (key, _) in objects(&server, "perfq", "ds") {
        if let Some((capture, _)) = key
            .split_once('/')
            .filter(|(c, _)| c.starts_with("capture="))
        {
            *tables.entry(capture.to_string()).or_default() += 1;
        }
    }
    let committed: Vec<String> = objects(&server, "perfq", "ds")
        .into_iter()
        .filter(|(k, _)| k.starts_with("capture="))
        .filter_map(|(k, _)| k.strip_suffix("/capture.parquet").map(str::to_string))
        .collect();
    for c in &committed {
        assert_eq!(tables.get(c), Some(&14), "{c} is not whole");
    }
    let q = server.perfq(
        &["query", "s3://perfq/ds", "SELECT count(*) FROM capture"],
        &cache,
    );
    if !committed.is_empty() {
        assert!(String::from_utf8_lossy(&q.stdout).contains(&committed.len().to_string()));
    }
}

#[test]
fn a_slow_server_still_gets_the_whole_dataset() {
    let Some(server) = S3Server::start("slow", &["perfq"]) else {
        return;
    };
    let dir = scratch("bucket", "slow");
    let cache = dir.join("cache");
    let proxy = server.behind_proxy(200);
    let fp = testdata("fp.data").display().to_string();
    let endpoint = [("AWS_ENDPOINT_URL", proxy.endpoint.as_str())];
    let out = server.perfq_with(&["convert", "-o", "s3://perfq/ds", &fp], &cache, &endpoint);
    succeeded(&out, "convert through a slow server");
    let local = dir.join("local").display().to_string();
    succeeded(
        &server.perfq(&["convert", "-o", &local, &fp], &cache),
        "convert",
    );
    assert!(
        tables(&server, "ds") == files(Path::new(&local)),
        "the dataset differs"
    );
}

#[test]
fn two_writers_of_the_same_captures_commit_each_once() {
    let Some(server) = S3Server::start("writers", &["perfq"]) else {
        return;
    };
    let dir = scratch("bucket", "writers");
    let captures: Vec<String> = ["fp.data", "multi.data", "dwarf.data", "topdown-spr.data"]
        .iter()
        .map(|c| testdata(c).display().to_string())
        .collect();
    let batch = |to: &str, cache: &Path| {
        let mut c = server.client(Path::new(env!("CARGO_BIN_EXE_perfq")));
        c.args(["batch", "--format", "csv", "-o", to])
            .args(&captures)
            .env("PERFQ_CACHE_DIR", cache)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c
    };
    let both: Vec<_> = ["one", "two"]
        .iter()
        .map(|w| {
            batch("s3://perfq/ds", &dir.join(w))
                .spawn()
                .expect("a writer")
        })
        .collect();
    let mut converted = 0;
    for w in both {
        let out = w.wait_with_output().expect("a writer");
        let text = succeeded(&out, "a writer");
        converted += text.matches(",converted,").count();
        assert_eq!(text.matches(",failed,").count(), 0, "{text}");
    }
    // Each capture committed by one writer (the other found it there, or
    // finished it), and what is there is what a folder gets.
    assert!((4..=8).contains(&converted), "{converted}");
    let local = dir.join("local");
    let out = batch(local.to_str().expect("UTF-8"), &dir.join("three")).output();
    succeeded(&out.expect("the local batch"), "the local batch");
    assert!(
        tables(&server, "ds") == files(&local),
        "the writers' dataset differs"
    );
    let claims = objects(&server, "perfq", "ds/_perfq/claims").len();
    assert_eq!(claims, 4);
}

#[test]
fn a_capture_without_its_capture_table_is_not_listed() {
    let dir = scratch("bucket", "uncommitted");
    let ds = dir.join("ds");
    let ds_text = ds.display().to_string();
    let fp = testdata("fp.data").display().to_string();
    let multi = testdata("multi.data").display().to_string();
    perfq_ok(&["batch", "-o", &ds_text, &fp, &multi]);
    let q = "SELECT capture, count(*) AS n FROM samples GROUP BY capture ORDER BY capture";
    let both = perfq_ok(&["query", &ds_text, q, "--format", "csv"]);
    // One capture as a bucket shows it while its tables are copied in.
    let id = perfq_ok(&[
        "query",
        &ds_text,
        "SELECT capture FROM capture ORDER BY capture LIMIT 1",
        "--format",
        "csv",
    ]);
    let id = id.lines().nth(1).expect("an id").to_string();
    std::fs::remove_file(ds.join(format!("capture={id}/capture.parquet"))).expect("remove");
    let one = perfq_ok(&["query", &ds_text, q, "--format", "csv"]);
    assert_eq!(both.lines().count(), 3, "{both}");
    assert_eq!(one.lines().count(), 2, "{one}");
    assert!(!one.contains(&id), "{one}");
}

#[test]
fn a_damaged_capture_the_bucket_holds_is_reported_as_a_folder_reports_it() {
    let Some(server) = S3Server::start("damaged", &["perfq"]) else {
        return;
    };
    let dir = scratch("bucket", "damaged");
    let cache = dir.join("cache");
    // fp.data cut short: converted with a warning of what was lost.
    let bytes = std::fs::read(testdata("fp.data")).expect("read");
    let cut = dir.join("cut.data");
    std::fs::write(&cut, &bytes[..bytes.len() * 3 / 5]).expect("write");
    let cut = cut.display().to_string();
    let local = dir.join("ds").display().to_string();
    let said = |to: &str| {
        let out = server.perfq(&["convert", "-o", to, &cut], &cache);
        let err = String::from_utf8_lossy(&out.stderr).replace(to, "DATASET");
        (out.status.code(), err)
    };
    for to in [local.as_str(), "s3://perfq/ds"] {
        said(to);
    }
    // Again: the capture is there, and what its conversion said is said.
    let (here, there) = (said(&local), said("s3://perfq/ds"));
    assert!(here.1.contains("warning"), "{here:?}");
    assert_eq!(here, there);
}
