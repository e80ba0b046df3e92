//! Machines described in a few lines, written out as the files perfq
//! reads (a `/proc` and `/sys` under a folder): the fixture machines of
//! the tests (`tests/machines/*.tree`), also usable with `PERFQ_SYSROOT`
//! to see what `perfq record --print` would choose elsewhere.
//!
//! A description is lines of:
//! - `path: value` — a file holding `value` and a newline;
//! - `@file path` … `@end` — a file holding the lines between;
//! - `@events folder name…` — an empty-valued event file per name in
//!   `folder/events/`;
//! - `#` comments and blank lines.

use std::path::Path;

/// Writes the machine `description` under `root`.
pub fn write_tree(description: &str, root: &Path) -> std::io::Result<()> {
    let write = |rel: &str, body: &str| -> std::io::Result<()> {
        let path = root.join(rel.trim_start_matches('/'));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, body)
    };
    let mut lines = description.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(rel) = trimmed.strip_prefix("@file ") {
            let mut body = String::new();
            for l in lines.by_ref() {
                if l.trim() == "@end" {
                    break;
                }
                body.push_str(l);
                body.push('\n');
            }
            write(rel.trim(), &body)?;
        } else if let Some(rest) = trimmed.strip_prefix("@events ") {
            let mut words = rest.split_whitespace();
            let folder = words.next().unwrap_or_default();
            for name in words {
                write(&format!("{folder}/events/{name}"), "event=0x00\n")?;
            }
        } else if let Some((rel, value)) = trimmed.split_once(": ") {
            write(rel.trim(), &format!("{}\n", value.trim()))?;
        } else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not a machine description line: `{trimmed}`"),
            ));
        }
    }
    Ok(())
}
