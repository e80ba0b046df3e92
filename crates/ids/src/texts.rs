//! [`TextIds`]: distinct texts numbered in order of first appearance,
//! looked up by `&str` and stored once, end to end in one block of bytes
//! (one allocation, not one per text; the block and its ends are what an
//! Arrow string array is made of).

use crate::IdTable;

/// Distinct texts numbered from 0 as met, each stored once.
#[derive(Clone, Debug, Default)]
pub struct TextIds {
    table: IdTable,
    store: Store,
    /// The last text numbered or found: runs of rows often repeat one.
    last: Option<u32>,
}

/// The texts, end to end, and where each ends, by id.
#[derive(Clone, Debug, Default)]
struct Store {
    bytes: String,
    ends: Vec<u32>,
}

impl Store {
    /// Text `id`; empty for an id never given.
    fn text(&self, id: u32) -> &str {
        let (start, len) = span(&self.ends, id);
        // Every end is at a text's end, so on a character boundary.
        self.bytes
            .get(start as usize..(start + len) as usize)
            .unwrap_or_default()
    }
}

/// Where text `id` starts in a block of texts stored end to end, each
/// ending where `ends` says ([`TextIds::into_parts`]), and its length;
/// (0, 0) for an id past them.
pub fn span(ends: &[u32], id: u32) -> (u32, u32) {
    let Some(&end) = ends.get(id as usize) else {
        return (0, 0);
    };
    let start = match id.checked_sub(1) {
        Some(before) => ends.get(before as usize).copied().unwrap_or(0),
        None => 0,
    };
    (start, end.saturating_sub(start))
}

impl TextIds {
    /// No texts.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `text`, the next one if it is new; `None` when storing
    /// it would take the block past 4 GiB (its ends are 32-bit, as Arrow's
    /// string offsets and view blocks are).
    pub fn id(&mut self, text: &str) -> Option<u32> {
        if let Some(id) = self.last.filter(|&id| self.text(id) == text) {
            return Some(id);
        }
        let end = u32::try_from(self.store.bytes.len() + text.len())
            .ok()
            .filter(|&end| end < u32::MAX)?;
        let id = self.table.find_or_add(
            IdTable::hash(text),
            &mut self.store,
            |store, id| store.text(id) == text,
            |store| {
                store.bytes.push_str(text);
                store.ends.push(end);
                (store.ends.len() - 1) as u32
            },
        );
        self.last = Some(id);
        Some(id)
    }

    /// The id of `text`, if it has one.
    pub fn get(&self, text: &str) -> Option<u32> {
        if let Some(id) = self.last.filter(|&id| self.text(id) == text) {
            return Some(id);
        }
        self.table
            .find(IdTable::hash(text), |id| self.text(id) == text)
    }

    /// The id of `text`, if it has one, remembered for the next lookup.
    pub fn find(&mut self, text: &str) -> Option<u32> {
        let id = self.get(text)?;
        self.last = Some(id);
        Some(id)
    }

    /// The text of `id` (empty for an id never given).
    pub fn text(&self, id: u32) -> &str {
        self.store.text(id)
    }

    /// The texts, by id.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.len() as u32).map(|id| self.text(id))
    }

    /// The number of texts.
    pub fn len(&self) -> usize {
        self.store.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.store.ends.is_empty()
    }

    /// The block of texts and where each ends, by id.
    pub fn into_parts(self) -> (Vec<u8>, Vec<u32>) {
        (self.store.bytes.into_bytes(), self.store.ends)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_numbered_as_met_and_stored_once() {
        let mut t = TextIds::new();
        let ids: Vec<Option<u32>> = ["libc.so.6", "", "perf", "libc.so.6", "", "ünï"]
            .iter()
            .map(|s| t.id(s))
            .collect();
        assert_eq!(ids, [Some(0), Some(1), Some(2), Some(0), Some(1), Some(3)]);
        assert_eq!(
            t.iter().collect::<Vec<_>>(),
            ["libc.so.6", "", "perf", "ünï"]
        );
        assert_eq!(t.get("perf"), Some(2));
        assert_eq!(t.get("perl"), None);
        assert_eq!(t.find(""), Some(1));
        assert_eq!(span(&t.store.ends, 3), (13, 5));
        assert_eq!(span(&t.store.ends, 4), (0, 0));
        assert_eq!(t.text(9), "");
        let (bytes, ends) = t.into_parts();
        assert_eq!(bytes, "libc.so.6perfünï".as_bytes());
        assert_eq!(ends, [9, 9, 13, 18]);
    }

    #[test]
    fn many_texts_keep_their_ids_as_the_table_grows() {
        let mut t = TextIds::new();
        for i in 0..10_000u32 {
            assert_eq!(t.id(&i.to_string()), Some(i));
        }
        for i in (0..10_000u32).rev() {
            assert_eq!(t.get(&i.to_string()), Some(i));
        }
    }
}
