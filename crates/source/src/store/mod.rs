//! Object storage: `s3://bucket/key` (and `file:///path`, the same code
//! path on a local disk) wherever perfq takes a capture, an archive or a
//! dataset, through the `object_store` crate DataFusion reads with.
//!
//! A [`Location`] is what a command was given: a local path, or an
//! [`ObjectUrl`]. Each bucket gets one client ([`ObjectUrl::store`]),
//! made with the credentials and endpoint the AWS tools would use
//! (`aws.rs`), and kept for the rest of the process. The calls are
//! `async`; [`block_on`] runs them for perfq's threads on a runtime of the
//! crate's own.

mod aws;
pub mod profile;
mod reader;

pub use reader::ObjectReader;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

pub use object_store::path::Path as ObjectPath;
pub use object_store::{ObjectStore, ObjectStoreExt};

use crate::Error;

/// A place named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A path on this machine.
    Local(PathBuf),
    /// An object, or a prefix of objects, in a store.
    Object(ObjectUrl),
}

impl Location {
    /// `text` as perfq reads it: a URL (`scheme://…`) names an object,
    /// anything else a local path.
    pub fn parse(text: &OsStr) -> Result<Location, Error> {
        match text.to_str().filter(|t| looks_like_url(t)) {
            Some(url) => ObjectUrl::parse(url).map(Location::Object),
            None => Ok(Location::Local(PathBuf::from(text))),
        }
    }
}

/// Whether `text` starts as a URL does (`scheme://`): a local path that
/// does is written `./s3:/…`.
pub fn looks_like_url(text: &str) -> bool {
    text.split_once("://").is_some_and(|(scheme, _)| {
        let mut c = scheme.chars();
        c.next().is_some_and(|f| f.is_ascii_alphabetic())
            && c.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// The stores perfq reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Amazon S3 and servers that speak its protocol (`s3://`, `s3a://`).
    S3,
    /// This machine's files through the same code (`file://`).
    File,
}

/// An object or prefix in a store: `s3://bucket/key`, `file:///path`.
#[derive(Clone, PartialEq, Eq)]
pub struct ObjectUrl {
    scheme: Scheme,
    /// The bucket (empty for `file://`).
    bucket: String,
    key: ObjectPath,
}

impl ObjectUrl {
    /// Parses `url`; a URL perfq cannot read is an error naming it.
    pub fn parse(url: &str) -> Result<ObjectUrl, Error> {
        let bad = |why: String| Error::NotAUrl {
            text: url.to_string(),
            why,
        };
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| bad("not a URL (scheme://…)".into()))?;
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "s3" | "s3a" => Scheme::S3,
            "file" => Scheme::File,
            other => {
                return Err(bad(format!(
                    "perfq reads s3:// and file:// URLs, not {other}://"
                )))
            }
        };
        let (bucket, key) = match scheme {
            Scheme::S3 => rest.split_once('/').unwrap_or((rest, "")),
            Scheme::File => match rest.strip_prefix('/') {
                Some(path) => ("", path),
                None => {
                    return Err(bad(
                        "a file:// URL names an absolute path (file:///…)".into()
                    ))
                }
            },
        };
        if scheme == Scheme::S3 {
            check_bucket(bucket).map_err(bad)?;
        }
        let key = ObjectPath::parse(key.trim_end_matches('/'))
            .map_err(|e| bad(format!("not an object key: {e}")))?;
        Ok(ObjectUrl {
            scheme,
            bucket: bucket.to_string(),
            key,
        })
    }

    /// The store's scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The bucket (empty for `file://`).
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// The key within the bucket (a prefix, for a folder).
    pub fn key(&self) -> &ObjectPath {
        &self.key
    }

    /// The URL of the store itself, `s3://bucket` or `file://`: what
    /// DataFusion's registry of stores is keyed by.
    pub fn store_url(&self) -> String {
        match self.scheme {
            Scheme::S3 => format!("s3://{}", self.bucket),
            Scheme::File => "file://".to_string(),
        }
    }

    /// The URL of `part` under this one (`part` is one or more segments,
    /// `/`-separated).
    pub fn join(&self, part: &str) -> ObjectUrl {
        let mut key = self.key.clone();
        for segment in part.split('/').filter(|s| !s.is_empty()) {
            key = key.clone().join(segment);
        }
        ObjectUrl {
            key,
            ..self.clone()
        }
    }

    /// The URL of the object `key` in the same store.
    pub fn with_key(&self, key: ObjectPath) -> ObjectUrl {
        ObjectUrl {
            key,
            ..self.clone()
        }
    }

    /// The client of this URL's store: made at the first use of its
    /// bucket, then shared.
    pub fn store(&self) -> Result<Arc<dyn ObjectStore>, Error> {
        static STORES: OnceLock<Mutex<HashMap<String, Arc<dyn ObjectStore>>>> = OnceLock::new();
        let stores = STORES.get_or_init(Default::default);
        let mut stores = stores.lock().unwrap_or_else(|e| e.into_inner());
        let name = self.store_url();
        if let Some(s) = stores.get(&name) {
            return Ok(Arc::clone(s));
        }
        let store: Arc<dyn ObjectStore> = match self.scheme {
            Scheme::S3 => Arc::new(aws::store(&self.bucket).map_err(|why| Error::Store {
                url: name.clone(),
                why,
            })?),
            Scheme::File => Arc::new(object_store::local::LocalFileSystem::new()),
        };
        stores.insert(name, Arc::clone(&store));
        Ok(store)
    }
}

impl fmt::Display for ObjectUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.scheme {
            Scheme::S3 => write!(f, "s3://{}", self.bucket)?,
            Scheme::File => f.write_str("file://")?,
        }
        if self.scheme == Scheme::File || !self.key.as_ref().is_empty() {
            write!(f, "/{}", self.key)?;
        }
        Ok(())
    }
}

impl fmt::Debug for ObjectUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// S3's rules for bucket names: 3 to 63 lowercase letters, digits, dots
/// and hyphens, starting and ending with a letter or digit.
fn check_bucket(bucket: &str) -> Result<(), String> {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let ok = (3..=63).contains(&bucket.len())
        && bucket
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
        && edge(bucket.chars().next())
        && edge(bucket.chars().last());
    match (bucket.is_empty(), ok) {
        (true, _) => Err("no bucket (s3://BUCKET/…)".into()),
        (false, false) => Err(format!("{bucket:?} is not a bucket name")),
        (false, true) => Ok(()),
    }
}

/// Runs `f` to its end on the crate's runtime, from a thread that is not
/// one of an async runtime's.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        // Without a runtime no store can be reached; a machine that cannot
        // start two threads cannot run perfq either.
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("object-store")
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("cannot start the object store's threads: {e}"))
    });
    runtime.block_on(f)
}

/// What `url` names: an object (its size), or none, which for a URL
/// ending in a folder's name may still be a prefix of objects.
pub fn object_size(url: &ObjectUrl) -> Result<Option<u64>, Error> {
    let store = url.store()?;
    match block_on(store.head(url.key())) {
        Ok(meta) => Ok(Some(meta.size)),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(Error::Store {
            url: url.to_string(),
            why: one_line(&e),
        }),
    }
}

/// Copies the object at `url` into the new file `to`, a part at a time
/// as it arrives (memory stays bounded whatever the object's size).
/// Returns its size.
pub fn download(url: &ObjectUrl, to: &std::path::Path) -> Result<u64, Error> {
    use futures::StreamExt;
    use std::io::Write;
    let failed = |why: String| Error::Store {
        url: url.to_string(),
        why,
    };
    let store = url.store()?;
    let mut file =
        std::fs::File::create_new(to).map_err(|e| failed(format!("{}: {e}", to.display())))?;
    block_on(async {
        let got = store
            .get(url.key())
            .await
            .map_err(|e| failed(one_line(&e)))?;
        let mut parts = got.into_stream();
        let mut size = 0u64;
        while let Some(part) = parts.next().await {
            let part = part.map_err(|e| failed(one_line(&e)))?;
            file.write_all(&part)
                .map_err(|e| failed(format!("{}: {e}", to.display())))?;
            size += part.len() as u64;
        }
        Ok(size)
    })
}

/// Uploads go up in parts of this size, two at a time at most: what an
/// upload holds in memory, whatever the file's size.
const PART: usize = 8 << 20;
const PARTS_IN_FLIGHT: usize = 2;

/// Copies the file `from` into the object `to`, which appears whole when
/// done (S3 shows neither a single put nor a multipart upload before it
/// completes): one request for a small file, parts for a large one, with
/// bounded memory either way.
pub fn upload(from: &std::path::Path, to: &ObjectUrl) -> Result<(), Error> {
    use std::io::Read;
    let failed = |why: String| Error::Store {
        url: to.to_string(),
        why,
    };
    let io = |e: std::io::Error| failed(format!("{}: {e}", from.display()));
    let store = to.store()?;
    let mut file = std::fs::File::open(from).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len <= PART as u64 {
        let mut bytes = Vec::with_capacity(len as usize);
        file.read_to_end(&mut bytes).map_err(io)?;
        let put = store.put(to.key(), object_store::PutPayload::from(bytes));
        return block_on(put).map(drop).map_err(|e| failed(one_line(&e)));
    }
    block_on(async {
        let upload = store.put_multipart(to.key()).await;
        let upload = upload.map_err(|e| failed(one_line(&e)))?;
        let mut w = object_store::WriteMultipart::new_with_chunk_size(upload, PART);
        match parts(&mut w, &mut file).await {
            Ok(()) => w.finish().await.map(drop).map_err(|e| failed(one_line(&e))),
            Err(why) => {
                // An upload left incomplete would be kept, unseen, by the
                // store (and billed) until a lifecycle rule removes it.
                let _ = w.abort().await;
                Err(failed(why))
            }
        }
    })
}

/// Hands `file` to the upload `w` a part at a time, waiting while
/// [`PARTS_IN_FLIGHT`] are on their way.
async fn parts(
    w: &mut object_store::WriteMultipart,
    file: &mut std::fs::File,
) -> Result<(), String> {
    let mut part = vec![0u8; PART];
    loop {
        let n = read_full(file, &mut part).map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(());
        }
        w.wait_for_capacity(PARTS_IN_FLIGHT)
            .await
            .map_err(|e| one_line(&e))?;
        w.write(&part[..n]);
    }
}

/// Reads until `buf` is full or the file ends.
fn read_full(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::io::Read;
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// An object store's error as one line that says what went wrong:
/// object_store's messages carry the request and the server's whole
/// XML answer, of which the S3 error code and message are what matter.
pub fn one_line(e: &object_store::Error) -> String {
    let text = e.to_string();
    let code = between(&text, "<Code>", "</Code>");
    let message = between(&text, "<Message>", "</Message>");
    match (e, code) {
        (_, Some("NoSuchBucket")) => "no such bucket".into(),
        (object_store::Error::NotFound { .. }, _) => "no such object".into(),
        (object_store::Error::PermissionDenied { .. }, _)
        | (object_store::Error::Unauthenticated { .. }, _) => "access denied: the store refused \
             the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"
            .into(),
        (_, Some(code)) => match message {
            Some(m) => format!("{code}: {m}"),
            None => code.to_string(),
        },
        _ => retried(&text).unwrap_or_else(|| {
            // object_store's text before the server's answer, if any.
            let cut = text.find(": <?xml").map_or(&text[..], |i| &text[..i]);
            cut.split_whitespace().collect::<Vec<_>>().join(" ")
        }),
    }
}

/// A request that failed after object_store's retries (a server that
/// cannot be reached, or keeps failing), said without the request's URL
/// (the line names the object already): `… in 1.9s, after 10 retries,
/// … - HTTP error: error sending request` becomes `error sending request
/// (10 retries in 1.9s)`.
fn retried(text: &str) -> Option<String> {
    let retries = between(text, "after ", " retries")?;
    let took = text[..text.find(", after ")?].rsplit(" in ").next()?;
    let cause = text.rsplit(" - ").next()?.trim();
    let cause = cause.strip_prefix("HTTP error: ").unwrap_or(cause);
    Some(format!(
        "{} ({retries} retries in {took})",
        cause.split_whitespace().collect::<Vec<_>>().join(" ")
    ))
}

/// The text between the first `open` and the `close` after it.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let len = text[start..].find(close)?;
    Some(text[start..start + len].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> ObjectUrl {
        ObjectUrl::parse(text).expect(text)
    }

    #[test]
    fn urls_and_paths_are_told_apart() {
        assert!(matches!(
            Location::parse(OsStr::new("testdata/fp.data")),
            Ok(Location::Local(_))
        ));
        assert!(matches!(
            Location::parse(OsStr::new("./s3://x")),
            Ok(Location::Local(_))
        ));
        let Ok(Location::Object(u)) = Location::parse(OsStr::new("s3://perf-archive/caps/a.data"))
        else {
            panic!("an s3 URL");
        };
        assert_eq!(u.bucket(), "perf-archive");
        assert_eq!(u.key().as_ref(), "caps/a.data");
        assert_eq!(u.store_url(), "s3://perf-archive");
        assert_eq!(u.to_string(), "s3://perf-archive/caps/a.data");
    }

    #[test]
    fn folders_join_and_print_as_given() {
        let d = url("s3://b12/datasets/ds/");
        assert_eq!(d.key().as_ref(), "datasets/ds");
        assert_eq!(
            d.join("capture=00ff/samples.parquet").to_string(),
            "s3://b12/datasets/ds/capture=00ff/samples.parquet"
        );
        assert_eq!(url("s3://b12").to_string(), "s3://b12");
        let f = url("file:///tmp/ds");
        assert_eq!(f.scheme(), Scheme::File);
        assert_eq!(f.key().as_ref(), "tmp/ds");
        assert_eq!(f.to_string(), "file:///tmp/ds");
        assert_eq!(f.store_url(), "file://");
    }

    #[test]
    fn a_request_that_failed_after_retries_is_said_briefly() {
        let text = "Generic S3 error: Error performing PUT http://127.0.0.1:9/b/k in 1.9s, \
                    after 10 retries, max_retries: 10, retry_timeout: 180s - HTTP error: \
                    error sending request";
        assert_eq!(
            retried(text).as_deref(),
            Some("error sending request (10 retries in 1.9s)")
        );
    }

    #[test]
    fn urls_perfq_cannot_read_are_refused_by_name() {
        for (text, why) in [
            ("s3://", "no bucket"),
            ("s3:///key", "no bucket"),
            ("s3://Upper/key", "not a bucket name"),
            ("s3://ab/key", "not a bucket name"),
            ("s3://bucket-/key", "not a bucket name"),
            ("gs://bucket/key", "not gs://"),
            ("file://relative/path", "absolute path"),
            ("s3://bucket/a//b", "not an object key"),
        ] {
            let e = ObjectUrl::parse(text).expect_err(text).to_string();
            assert!(e.contains(text) && e.contains(why), "{text}: {e}");
        }
    }
}
