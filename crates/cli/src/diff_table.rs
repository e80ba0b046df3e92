//! `perfq diff`'s table for a terminal: shares with two decimals, the
//! change, a significance mark, and the level-1 top-down changes, in at
//! most [`WIDTH`] columns (long names cut with `…`). Full precision is
//! `--format csv|json|parquet`'s.

use std::io::Write;

use perfq_query::arrow::array::{Array, Float64Array, RecordBatch, StringArray, UInt64Array};

/// The widest line.
pub const WIDTH: usize = 100;

/// What the table's title says of the two sides.
pub struct Sides<'a> {
    pub a: &'a str,
    pub b: &'a str,
    pub a_samples: u64,
    pub b_samples: u64,
    pub event: &'a str,
    pub keys: &'a [&'a str],
}

/// `***` for p < 0.001, `**` for p < 0.01, `*` for p < 0.05.
fn stars(p: f64) -> &'static str {
    match p {
        p if p < 0.001 => "***",
        p if p < 0.01 => "**",
        p if p < 0.05 => "*",
        _ => "",
    }
}

fn floats<'b>(batch: &'b RecordBatch, name: &str) -> anyhow::Result<&'b Float64Array> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<Float64Array>())
        .ok_or_else(|| anyhow::anyhow!("diff: no column {name}"))
}

fn counts<'b>(batch: &'b RecordBatch, name: &str) -> anyhow::Result<&'b UInt64Array> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<UInt64Array>())
        .ok_or_else(|| anyhow::anyhow!("diff: no column {name}"))
}

/// `text` cut to `width` characters, its end replaced by `…` when cut.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let kept: String = text.chars().take(width.saturating_sub(1)).collect();
    format!("{kept}…")
}

/// The level-1 top-down change columns `compare` made, with their short
/// headers.
fn topdown_changes(batch: &RecordBatch) -> Vec<(&'static str, String)> {
    [
        ("Retire", "retiring"),
        ("BadSpc", "bad_speculation"),
        ("Front", "frontend_bound"),
        ("Back", "backend_bound"),
        ("SMT", "smt_contention"),
    ]
    .into_iter()
    .map(|(short, node)| (short, format!("{node}_change_pp")))
    .filter(|(_, col)| batch.column_by_name(col).is_some())
    .collect()
}

/// Writes the table of `batch` (`perfq_query::diff::compare`'s rows).
pub fn write(sides: &Sides, batch: &RecordBatch, out: &mut dyn Write) -> anyhow::Result<()> {
    let (pa, pb) = (floats(batch, "a_pct")?, floats(batch, "b_pct")?);
    let change = floats(batch, "change_pp")?;
    let p = floats(batch, "p_value")?;
    let (xa, xb) = (counts(batch, "a_samples")?, counts(batch, "b_samples")?);
    let td = topdown_changes(batch);
    let keys: Vec<&StringArray> = sides
        .keys
        .iter()
        .map(|k| {
            batch
                .column_by_name(k)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .ok_or_else(|| anyhow::anyhow!("diff: no column {k}"))
        })
        .collect::<anyhow::Result<_>>()?;
    let room = write_header(sides, &td, out)?;
    let td_cols: Vec<&Float64Array> = td
        .iter()
        .map(|(_, col)| floats(batch, col))
        .collect::<anyhow::Result<_>>()?;
    for i in 0..batch.num_rows() {
        let mut line = format!(
            "{:>6} {:>6} {:>6.2} {:>6.2} {:>+6.2} {:<3}",
            xa.value(i),
            xb.value(i),
            pa.value(i),
            pb.value(i),
            change.value(i),
            stars(p.value(i))
        );
        for c in &td_cols {
            let cell = if c.is_valid(i) {
                format!("{:+.2}", c.value(i))
            } else {
                "-".to_string()
            };
            line.push_str(&format!(" {cell:>6}"));
        }
        line.push_str("  ");
        line.push_str(&cut(&key_names(sides, &keys, i), room));
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The lines above the rows: both sides, the legend and the column
/// heads. Returns the room left for a row's key.
fn write_header(
    sides: &Sides,
    td: &[(&str, String)],
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    for (side, path, n) in [
        ("A", sides.a, sides.a_samples),
        ("B", sides.b, sides.b_samples),
    ] {
        let title = format!("# {side}: {n} samples of {} in {path}", sides.event);
        writeln!(out, "{}", cut(&title, WIDTH))?;
    }
    writeln!(
        out,
        "# % of samples; change B − A in points; *** p<0.001 ** p<0.01 * p<0.05{}",
        if td.is_empty() {
            ""
        } else {
            "; top-down: change in points of slots"
        }
    )?;
    let mut header = format!(
        "{:>6} {:>6} {:>6} {:>6} {:>6} {:<3}",
        "A smp", "B smp", "A %", "B %", "change", ""
    );
    for (short, _) in td {
        header.push_str(&format!(" {:>6}", cut(short, 6)));
    }
    let room = WIDTH.saturating_sub(header.len() + 2).max(20);
    header.push_str("  ");
    header.push_str(&sides.keys.join(" "));
    writeln!(out, "{}", cut(&header, WIDTH))?;
    Ok(room)
}

/// Row `i`'s key as the table shows it (a DSO beside a symbol in
/// brackets).
fn key_names(sides: &Sides, keys: &[&StringArray], i: usize) -> String {
    let names: Vec<String> = keys
        .iter()
        .zip(sides.keys)
        .map(|(k, name)| match *name {
            "dso" if sides.keys.len() > 1 && !k.value(i).starts_with('[') => {
                format!("[{}]", k.value(i))
            }
            _ => k.value(i).to_string(),
        })
        .collect();
    names.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_and_cuts() {
        assert_eq!(stars(0.0005), "***");
        assert_eq!(stars(0.005), "**");
        assert_eq!(stars(0.02), "*");
        assert_eq!(stars(0.5), "");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
    }
}
