//! Tabular results (Arrow record batches) as a table for a terminal, CSV,
//! JSON or Parquet, on standard output or written atomically to a file:
//! what `perfq query`, `perfq batch`'s summary and `perfq diff` print.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use perfq_query::arrow::datatypes::SchemaRef;
use perfq_query::arrow::record_batch::RecordBatch;
use perfq_source::store::looks_like_url;
use perfq_source::ObjectUrl;

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum QueryFormat {
    /// A table for a terminal.
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON array of row objects (nulls kept as `null`).
    Json,
    /// A Parquet file (needs `-o`).
    Parquet,
}

/// Refuses Parquet without a file, before any work is done.
pub fn check(format: QueryFormat, output: Option<&Path>) -> anyhow::Result<()> {
    if format == QueryFormat::Parquet && output.is_none() {
        anyhow::bail!("--format parquet writes a file: name it with -o FILE");
    }
    Ok(())
}

/// Writes `rows` in `format` to `output` (atomically) or to `out`.
pub fn emit(
    format: QueryFormat,
    output: Option<&Path>,
    schema: &SchemaRef,
    rows: &[RecordBatch],
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    match (output, format) {
        (Some(path), QueryFormat::Parquet) => {
            write_atomically(path, |w| write_parquet(schema, rows, w))
        }
        (Some(path), f) => write_atomically(path, |w| write(f, schema, rows, w)),
        (None, f) => write(f, schema, rows, out),
    }
}

fn write(
    format: QueryFormat,
    schema: &SchemaRef,
    rows: &[RecordBatch],
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    // An empty result still has its columns: a header, `[]`, a schema.
    let empty;
    let rows = if rows.is_empty() {
        empty = [RecordBatch::new_empty(schema.clone())];
        &empty[..]
    } else {
        rows
    };
    match format {
        QueryFormat::Table => {
            let t = perfq_query::arrow::util::pretty::pretty_format_batches(rows)?;
            writeln!(out, "{t}")?;
        }
        QueryFormat::Csv => {
            let mut w = arrow_csv::WriterBuilder::new().with_header(true).build(out);
            for b in rows {
                w.write(b)?;
            }
        }
        QueryFormat::Json => {
            let mut w = arrow_json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, arrow_json::writer::JsonArray>(&mut *out);
            for b in rows {
                w.write(b)?;
            }
            w.finish()?;
            writeln!(out)?;
        }
        // `run` sends Parquet to a file.
        QueryFormat::Parquet => {
            anyhow::bail!("--format parquet writes a file: name it with -o FILE")
        }
    }
    Ok(())
}

fn write_parquet(
    schema: &SchemaRef,
    rows: &[RecordBatch],
    out: &mut BufWriter<File>,
) -> anyhow::Result<()> {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(out, schema.clone(), Some(props))?;
    for b in rows {
        w.write(b)?;
    }
    w.close()?;
    Ok(())
}

/// Writes the object `url` from a temporary file here, uploaded once
/// complete: the object appears whole, or an earlier one stays.
fn write_object(
    url: &ObjectUrl,
    f: impl FnOnce(&mut BufWriter<File>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let scratch = crate::scratch::Scratch::new("output")?;
    let file = scratch
        .path()
        .join(url.key().filename().unwrap_or("output"));
    write_atomically(&file, f)?;
    perfq_source::store::upload(&file, url)?;
    Ok(())
}

/// Writes `path` through a temporary file beside it, renamed into place
/// once complete: a reader never sees half a result, and a failure leaves
/// an earlier file as it was. The temporary file is made by `tempfile`
/// (a new name nobody planted; the folder may be a shared one) and goes on
/// error and on Ctrl-C.
pub fn write_atomically(
    path: &Path,
    f: impl FnOnce(&mut BufWriter<File>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(url) = path.to_str().filter(|t| looks_like_url(t)) {
        return write_object(&ObjectUrl::parse(url)?, f);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{}: not a file name", path.display()))?;
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.tmp-", name.to_string_lossy()))
        // As File::create makes a file: the umask decides.
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(&dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    let _interrupt = crate::scratch::track(tmp.path());
    let shown = tmp.path().display().to_string();
    let mut w = BufWriter::new(tmp.reopen().with_context(|| shown.clone())?);
    f(&mut w)?;
    let file = w
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("writing {shown}"))?;
    file.sync_all()
        .with_context(|| format!("writing {shown}"))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}
