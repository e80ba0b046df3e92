//! Where `convert` and `batch` write: a dataset folder, or a dataset in
//! object storage (`s3://bucket/prefix`), whose captures are converted
//! into a temporary folder here and published from it one at a time
//! (`perfq_writer::publish`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use perfq_source::store::looks_like_url;
use perfq_source::ObjectUrl;
use perfq_writer::publish::Bucket;

use crate::scratch::Scratch;

/// A command's output dataset.
pub struct Destination {
    /// The folder the conversions write into: the dataset, or the staging
    /// folder of a bucket's.
    pub folder: PathBuf,
    /// The dataset in object storage the captures are published to.
    pub bucket: Option<Arc<Bucket>>,
    /// The dataset as the user named it.
    pub name: String,
    /// The staging folder, removed at the end.
    _staging: Option<Scratch>,
}

impl Destination {
    /// The dataset `output` names.
    pub fn of(output: &Path) -> anyhow::Result<Destination> {
        let Some(url) = output.to_str().filter(|t| looks_like_url(t)) else {
            return Ok(Destination {
                folder: output.to_path_buf(),
                bucket: None,
                name: output.display().to_string(),
                _staging: None,
            });
        };
        let url = ObjectUrl::parse(url)?;
        let bucket = Bucket::open(&url)?;
        let staging = Scratch::new("upload")?;
        Ok(Destination {
            folder: staging.path().to_path_buf(),
            bucket: Some(Arc::new(bucket)),
            name: url.to_string(),
            _staging: Some(staging),
        })
    }

    /// How capture `id` of the dataset is named in messages.
    pub fn capture(&self, id: &str) -> String {
        match &self.bucket {
            Some(_) => format!("{}/capture={id}", self.name),
            None => Path::new(&self.name)
                .join(format!("capture={id}"))
                .display()
                .to_string(),
        }
    }
}
