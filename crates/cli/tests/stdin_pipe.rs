//! `perfq info -` reads a live `perf record -o -` stream from a pipe; the
//! same stream saved with `tee` is the oracle for perf's counts.

mod common;

#[test]
fn live_pipe_from_perf_record() {
    if !common::have_perf() || !common::can_record() {
        common::skip("perf cannot record here; live pipe not tested");
        return;
    }
    let dir = std::env::temp_dir().join(format!("perfq-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let saved = dir.join("stream.data");
    let script = format!(
        "perf record -q -o - -e cpu-clock -c 100000 -g -- sh -c 'exec seq 1 300000 > /dev/null' 2>/dev/null | tee {} | {} info --json -",
        saved.display(),
        env!("CARGO_BIN_EXE_perfq")
    );
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("run pipeline");
    let info = common::json(&common::succeeded(&out, "perf record | tee | perfq info"));
    assert_eq!(info["mode"], "pipe");
    let got: std::collections::BTreeMap<String, u64> = info["records"]
        .as_object()
        .expect("records")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
        .collect();
    let expected = common::perf_report_d_counts(&saved).expect("perf reads the saved stream");
    assert_eq!(got, expected);
    assert!(info["samples"].as_u64().unwrap_or(0) > 0);
    std::fs::remove_dir_all(&dir).ok();
}
