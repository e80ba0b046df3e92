//! What an input URL names: an object (a capture, or an archive by its
//! name), the objects under a prefix (searched as a folder is: hidden
//! names passed over, captures told by name or magic), or the objects a
//! pattern matches (`s3://b/caps/*.data`). One listing of the prefix
//! serves each.

use std::path::Path;

use object_store::{ObjectMeta, ObjectStoreExt};

use super::Item;
use crate::archive::ArchiveKind;
use crate::store::{block_on, one_line, ObjectPath, ObjectUrl};

/// The items `text` names, in key order.
pub(super) fn expand(text: &str) -> Vec<Item> {
    let problem = |reason: String| {
        vec![Item::Problem {
            input: text.to_string(),
            reason,
        }]
    };
    let url = match ObjectUrl::parse(text) {
        Ok(url) => url,
        Err(e) => return problem(e.to_string().replace(&format!("{text}: "), "")),
    };
    let pattern = text.contains(['*', '?', '[']);
    match (pattern, crate::store::object_size(&url)) {
        (false, Ok(Some(_))) => named(&url),
        (false, Ok(None)) | (true, _) => match listed(&url, pattern) {
            Ok(items) if items.is_empty() => problem(match pattern {
                true => "no object matches this pattern".into(),
                false => "no such object, and no object under it".into(),
            }),
            Ok(items) => items,
            Err(why) => problem(why),
        },
        (false, Err(e)) => problem(e.to_string().replace(&format!("{text}: "), "")),
    }
}

/// An object named by its URL: an archive by its name, else a capture
/// (converted whatever it holds, as a file named is), with the
/// `perf archive` tarball beside it, if there is one.
fn named(url: &ObjectUrl) -> Vec<Item> {
    let name = url.key().filename().unwrap_or_default();
    if let Some(kind) = ArchiveKind::of(Path::new(name)) {
        return vec![Item::ObjectArchive {
            url: url.clone(),
            kind,
        }];
    }
    let sidecar = url.with_key(ObjectPath::from(format!("{}.tar.bz2", url.key())));
    let symbols = matches!(crate::store::object_size(&sidecar), Ok(Some(_))).then_some(sidecar);
    vec![Item::ObjectCapture {
        url: url.clone(),
        symbols,
    }]
}

/// The captures and archives under `url`'s prefix (those it matches,
/// when it is a pattern).
fn listed(url: &ObjectUrl, pattern: bool) -> Result<Vec<Item>, String> {
    let (prefix, matcher) = match pattern {
        false => (url.key().clone(), None),
        true => {
            let key = url.key().as_ref();
            let fixed = key[..key.find(['*', '?', '[']).unwrap_or(key.len())]
                .rsplit_once('/')
                .map_or("", |(dir, _)| dir);
            let glob = glob::Pattern::new(key).map_err(|e| format!("not a valid pattern: {e}"))?;
            (ObjectPath::from(fixed), Some(glob))
        }
    };
    let objects = list(url, &prefix).map_err(|e| format!("cannot list it: {e}"))?;
    let keys: std::collections::BTreeSet<&str> =
        objects.iter().map(|o| o.location.as_ref()).collect();
    let mut items = Vec::new();
    for o in &objects {
        let key = o.location.as_ref();
        let hidden = key[prefix.as_ref().len()..]
            .split('/')
            .any(|part| part.starts_with(['.', '_']));
        let matches = matcher.as_ref().is_none_or(|m| m.matches(key));
        if hidden || !matches {
            continue;
        }
        // A `perf archive` tarball beside its capture goes with it.
        if let Some(capture) = key.strip_suffix(".tar.bz2") {
            if keys.contains(capture) {
                continue;
            }
        }
        let object = url.with_key(o.location.clone());
        let name = o.location.filename().unwrap_or_default();
        if let Some(kind) = ArchiveKind::of(Path::new(name)) {
            items.push(Item::ObjectArchive { url: object, kind });
        } else if super::capture_name(Path::new(name)) || starts_like_capture(&object) {
            let sidecar = format!("{key}.tar.bz2");
            let symbols = keys
                .contains(sidecar.as_str())
                .then(|| url.with_key(ObjectPath::from(sidecar)));
            items.push(Item::ObjectCapture {
                url: object,
                symbols,
            });
        }
    }
    Ok(items)
}

/// The objects under `prefix`, in key order.
fn list(url: &ObjectUrl, prefix: &ObjectPath) -> Result<Vec<ObjectMeta>, String> {
    use futures::TryStreamExt;
    let store = url.store().map_err(|e| e.to_string())?;
    let mut objects: Vec<ObjectMeta> =
        block_on(store.list(Some(prefix)).try_collect()).map_err(|e| one_line(&e))?;
    objects.sort_by(|a, b| a.location.cmp(&b.location));
    Ok(objects)
}

/// Whether the object starts with a perf.data magic (its first bytes
/// only are asked for).
fn starts_like_capture(url: &ObjectUrl) -> bool {
    let Ok(store) = url.store() else {
        return false;
    };
    block_on(store.get_range(url.key(), 0..8))
        .is_ok_and(|start| perfq_reader::is_capture_magic(&start))
}
