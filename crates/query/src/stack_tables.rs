//! perfq's own computation of the stack tables that inclusive sums read
//! (`stack_sets`, `set_functions`; `functions` and `stack_functions`
//! beside them): the rows their SQL definitions in `sql/` give — those stay
//! the definitions, which other engines run unchanged, and a test holds
//! the two equal — from one pass over each sampled stack's frame list.
//!
//! Why not the SQL: it pairs every sampled stack with every one of its
//! frames, joins them to their functions, removes duplicates, aggregates
//! each stack's functions into a sorted list and ranks the lists with one
//! window over all of them. DataFusion spends a long time on that; here
//! it is a lookup per frame, a sort of a few function ids per stack and
//! an interner of the distinct sets: few where a program's stacks differ
//! only in call sites, but nearly one per stack on a system-wide capture,
//! whose unresolved addresses are each a function of its own.
//! `function_total` can be summed from those sets as well
//! ([`function_total`]).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringViewArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type, SchemaRef, UInt32Type, UInt64Type};
use perfq_ids::{IdTable, Interner, Numbering, TextIds};
use rayon::slice::ParallelSliceMut;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::columns;
use crate::{helpers, Error, Session};

mod function_names;
mod function_total;
mod on_read;
mod sampled;
mod set_functions;
mod stack_sets;

use function_names::FunctionNames;
pub use sampled::SampledStacks;
use stack_sets::{Ranks, StackSets};

/// Each capture's frames' function ids, by capture name and frame id (0:
/// none); and for perfq's own `functions`, which frames have a symbol (a
/// bit per frame id).
#[derive(Default)]
struct FrameFunctions {
    ids: FxHashMap<String, Vec<u32>>,
    resolved: FxHashMap<String, Bits>,
}

/// A bit per number (unset past the last one set), 64 to a word: a
/// frame's or stack's flag, where a `bool` each took eight times as much.
#[derive(Clone, Debug, Default)]
pub(super) struct Bits(Vec<u64>);

impl Bits {
    pub(super) fn set(&mut self, n: usize) {
        let word = n / 64;
        if self.0.len() <= word {
            self.0.resize(word + 1, 0);
        }
        self.0[word] |= 1 << (n % 64);
    }

    pub(super) fn get(&self, n: usize) -> bool {
        self.0.get(n / 64).is_some_and(|w| w & (1 << (n % 64)) != 0)
    }
}

/// What [`keep`] keeps.
pub(crate) struct Keep {
    /// `frame_functions` is the standard view (not one of the caller's):
    /// its names are then worked out here from `frames`.
    pub(crate) standard_frames: bool,
    /// `function_total` is summed from the same sets and kept too
    /// ([`function_total`]), when `functions` is perfq's own and the
    /// session has no `function_total`.
    pub(crate) totals: bool,
    /// The sampled stacks' paths are kept with them ([`SampledStacks`]).
    pub(crate) paths: bool,
}

/// Computes `functions` (unless the session has it), `stack_sets` and
/// `set_functions` and keeps them in memory under their names, their
/// columns typed as their SQL definitions type them;
/// `stack_functions` becomes a view over them. `defs` gives a view's SQL
/// by name. Where `functions` is perfq's own, the sampled stacks are kept
/// on the session too ([`SampledStacks`]).
pub(crate) fn keep(
    session: &Session,
    opt: &Keep,
    defs: impl Fn(&str) -> &'static str,
) -> Result<(), Error> {
    let (named, frame_functions) = if session.has_relation("functions")? {
        // Defined by the caller: read as it is.
        (functions(session)?, frame_functions(session)?)
    } else {
        native_functions(session, opt.standard_frames, defs("functions"))?
    };
    // Defined by its SQL for now, so that the others' definitions can be
    // planned (for their column types); replaced at the end.
    session.create_view("stack_functions", defs("stack_functions"))?;
    let paths = opt.paths && matches!(named, Named::Ranked(_));
    let mut stacks = StackSetsRead::read(session, &frame_functions, paths)?;
    let sets = Arc::new(std::mem::take(&mut stacks.sets).into_list());
    let ranks = Arc::new(Ranks::new(sets.clone()));
    let schema = session.schema_of(defs("stack_sets"))?;
    let table = StackSets::new(
        schema,
        &stacks.ids,
        stacks.set_of_stack.clone(),
        ranks.clone(),
    );
    on_read::register(session, "stack_sets", Arc::new(table))?;

    // set_functions: a row per function of each set, made as it is read.
    // (Its SQL joins `functions`: a function without a named row there
    // has none.)
    let names = match &named {
        Named::Ranked(names) => Some(names.clone()),
        Named::Listed(_) => None,
    };
    let schema = session.schema_of(defs("set_functions"))?;
    let table = set_functions::SetFunctions::new(schema, sets.clone(), ranks, named);
    on_read::register(session, "set_functions", Arc::new(table))?;
    session.create_view("stack_functions", helpers::STACK_FUNCTIONS_OF_SETS)?;

    // The sampled stacks, and function_total from their sets, when the
    // functions are perfq's own (their rows in id order).
    let Some(names) = names else {
        return Ok(());
    };
    let read = sampled::Read {
        ids: &stacks.ids,
        set_of_stack: stacks.set_of_stack,
        leaf_resolved: stacks.leaf_resolved,
        path_ends: stacks.path_ends,
        path_functions: stacks.path_functions,
        frames: frame_functions.ids.into_iter().collect(),
        sets,
        names,
    };
    let Some(sampled) = SampledStacks::new(read)? else {
        return Ok(());
    };
    let sampled = Arc::new(sampled);
    if opt.totals && !session.has_relation("function_total")? {
        function_total::keep(session, &sampled, defs("function_total"))?;
    }
    session.keep_sampled_stacks(sampled);
    Ok(())
}

/// Every sampled stack's set of functions, interned; a set is its
/// function ids sorted, as `stack_sets` aggregates and sorts them.
#[derive(Default)]
struct StackSetsRead {
    sets: Sets,
    /// Each sampled stack's set, in the order read.
    set_of_stack: Vec<u32>,
    /// By stack, in the order read: its leaf frame has a symbol.
    leaf_resolved: Bits,
    /// With paths: each stack's function ids, leaf first, one per frame,
    /// end to end, and where each ends.
    path_ends: Vec<usize>,
    path_functions: Vec<u32>,
    /// Each batch's capture and stack id columns.
    ids: Vec<[ArrayRef; 2]>,
    /// The stack being read's function ids.
    functions_of_stack: Vec<u32>,
}

impl StackSetsRead {
    /// Reads the sampled stacks a batch at a time: only each stack's
    /// capture and id are kept, not its frame list (the lists of a
    /// system-wide capture's sampled stacks are tens of millions of ids),
    /// and with `paths`, its functions.
    fn read(session: &Session, frames: &FrameFunctions, paths: bool) -> Result<Self, Error> {
        let mut out = StackSetsRead::default();
        session.for_each_batch(helpers::SAMPLED_STACKS, |b| out.add(&b, frames, paths))?;
        Ok(out)
    }

    fn add(&mut self, b: &RecordBatch, frames: &FrameFunctions, paths: bool) -> Result<(), Error> {
        let captures = columns::cast(b, "capture", &DataType::Utf8)?;
        let captures = captures.as_string::<i32>();
        let lists = b
            .column_by_name("frame_ids")
            .ok_or_else(|| Error::Shape("stacks has no frame_ids".into()))?
            .as_list_opt::<i32>()
            .ok_or_else(|| Error::Shape("stacks.frame_ids is not a list".into()))?;
        let stack_frames = cast(lists.values(), &DataType::UInt32)
            .map_err(|e| Error::Shape(format!("stacks.frame_ids: {e}")))?;
        let stack_frames = stack_frames.as_primitive::<UInt32Type>().values();
        let offsets = lists.value_offsets();
        let none = Bits::default();
        let mut capture: Option<(&str, &[u32], &Bits)> = None;
        for row in 0..b.num_rows() {
            let name = captures.value(row);
            let (map, resolved) = match capture {
                Some((c, m, r)) if c == name => (m, r),
                _ => {
                    let m = frames.ids.get(name).map_or(&[][..], Vec::as_slice);
                    let r = frames.resolved.get(name).unwrap_or(&none);
                    capture = Some((name, m, r));
                    (m, r)
                }
            };
            self.functions_of_stack.clear();
            let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
            let leaf = stack_frames.get(start).filter(|_| start < end);
            if leaf.is_some_and(|&f| resolved.get(f as usize)) {
                self.leaf_resolved.set(self.set_of_stack.len());
            }
            // A frame without a function row is the `[unknown]` function
            // 0, as the SQL's COALESCE makes it.
            self.functions_of_stack.extend(
                stack_frames[start..end]
                    .iter()
                    .map(|&f| map.get(f as usize).copied().unwrap_or(0)),
            );
            if paths {
                self.path_functions
                    .extend_from_slice(&self.functions_of_stack);
                self.path_ends.push(self.path_functions.len());
            }
            self.functions_of_stack.sort_unstable();
            self.functions_of_stack.dedup();
            self.set_of_stack
                .push(self.sets.intern(&self.functions_of_stack));
        }
        self.ids
            .push([column(b, "capture")?, column(b, "stack_id")?]);
        Ok(())
    }
}

/// Distinct sets of function ids (each sorted), numbered from 0 as met:
/// stored end to end in one `Vec` and found through an [`IdTable`] of
/// their numbers, not each in an allocation of its own keyed in a map (a
/// system-wide capture's sampled stacks have nearly a set each, and
/// freeing them one by one was a noticeable part of the time the sets
/// took).
#[derive(Default)]
struct Sets {
    list: SetList,
    table: IdTable,
}

/// Lists of ids, one after the other (the sets' function ids), each
/// found by its number.
#[derive(Debug, Default)]
pub(crate) struct SetList {
    ids: Vec<u32>,
    /// Where each list ends in `ids` (it starts where the one before ends).
    ends: Vec<usize>,
}

impl SetList {
    pub(crate) fn len(&self) -> u32 {
        self.ends.len() as u32
    }

    /// Adds a list after the others; its number.
    pub(crate) fn push(&mut self, ids: impl IntoIterator<Item = u32>) -> u32 {
        self.ids.extend(ids);
        self.ends.push(self.ids.len());
        self.len() - 1
    }

    /// How many function ids the sets hold together.
    fn functions(&self) -> usize {
        self.ids.len()
    }

    /// List number `n`.
    pub(crate) fn get(&self, n: u32) -> &[u32] {
        let n = n as usize;
        let start = n.checked_sub(1).map_or(0, |before| self.ends[before]);
        &self.ids[start..self.ends[n]]
    }
}

impl Sets {
    /// The sets, without the table that finds them.
    fn into_list(self) -> SetList {
        let mut list = self.list;
        list.ids.shrink_to_fit();
        list.ends.shrink_to_fit();
        list
    }

    /// How many sets there are.
    #[cfg(test)]
    fn len(&self) -> u32 {
        self.list.len()
    }

    /// Set number `n`'s function ids.
    #[cfg(test)]
    fn get(&self, n: u32) -> &[u32] {
        self.list.get(n)
    }

    /// The number of `set`, stored if new.
    fn intern(&mut self, set: &[u32]) -> u32 {
        self.table.find_or_add(
            IdTable::hash(set),
            &mut self.list,
            |list, n| list.get(n) == set,
            |list| list.push(set.iter().copied()),
        )
    }
}

/// The id of `text` among `texts`, stored if new: an error past the 4 GiB
/// a block of texts holds.
fn text_id(texts: &mut TextIds, text: &str) -> Result<u32, Error> {
    texts
        .id(text)
        .ok_or_else(|| Error::Shape("texts of the frames beyond 4 GiB".into()))
}

/// The texts of one batch's text column met so far, by their view: the
/// views of one text read from a Parquet dictionary are equal (as are
/// those of a short text, which holds it), so that a DSO's or symbol's
/// rows are found by 16 bytes, not by hashing and comparing its text.
/// (Equal views always hold equal texts; equal texts in views of their
/// own are looked up by text.)
#[derive(Default)]
struct SeenViews(FxHashMap<u128, u32>);

impl SeenViews {
    /// The id among `texts` of row `row` of `column` (`[unknown]` where
    /// it is null).
    fn id(
        &mut self,
        texts: &mut TextIds,
        column: &StringViewArray,
        row: usize,
    ) -> Result<u32, Error> {
        if column.is_null(row) {
            return text_id(texts, "[unknown]");
        }
        let view = column.views()[row];
        if let Some(&id) = self.0.get(&view) {
            return Ok(id);
        }
        let id = text_id(texts, column.value(row))?;
        self.0.insert(view, id);
        Ok(id)
    }
}

/// An address as its hexadecimal text orders: its digits left-aligned,
/// then their number (where the digits are equal, one text is the
/// other's prefix: the shorter first).
fn address_order(a: u64) -> (u64, u32) {
    let digits = (64 - a.leading_zeros()).div_ceil(4).max(1);
    (a << (4 * (16 - digits)), digits)
}

/// A frame named by its address, in the capture and DSO it belongs to:
/// its fields in the order its name sorts by, the address as
/// [`address_order`] gives it (sorted without working it out again for
/// each comparison: hundreds of thousands of frames).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Unnamed {
    /// The address's digits left-aligned, and their number.
    aligned: u64,
    digits: u32,
    /// The DSO's name: its number among the unnamed frames' DSO names
    /// while they are read, then its place in their text order.
    dso: u32,
    /// The capture's number among the frames' captures.
    capture: u32,
    frame: u32,
}

impl Unnamed {
    fn address(&self) -> u64 {
        self.aligned >> (4 * (16 - self.digits))
    }

    /// What the frame's name and DSO are equal by.
    fn key(&self) -> (u64, u32, u32) {
        (self.aligned, self.digits, self.dso)
    }
}

/// The function ids the `functions` table names (a symbol and a DSO).
#[derive(Debug)]
enum Named {
    /// Ids 0 (`[unknown]`) to its last: the `functions` table as perfq
    /// makes it.
    Ranked(Arc<FunctionNames>),
    /// A `functions` table of the caller's.
    Listed(FxHashSet<u32>),
}

impl Named {
    fn contains(&self, id: u32) -> bool {
        match self {
            Named::Ranked(names) => id <= names.last(),
            Named::Listed(ids) => ids.contains(&id),
        }
    }
}

/// A function's name as `frame_functions` gives it, borrowed from the
/// frames or, for an unresolved frame, its address (`0x` and lower-case
/// hex digits without leading zeros), formatted when it is compared or
/// written.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Name<'a> {
    Symbol(&'a str),
    Address(u64),
}

impl Name<'_> {
    /// The name's text; an address is written into `buf`.
    #[cfg(test)]
    fn text<'b>(&'b self, buf: &'b mut String) -> &'b str {
        match self {
            Name::Symbol(s) => s,
            Name::Address(_) => {
                buf.clear();
                // (Written as with_text does: core::fmt was a noticeable
                // part of the time `functions` took to make.) `0x` and
                // hex digits are always UTF-8.
                self.with_text(|t| buf.push_str(std::str::from_utf8(t).unwrap_or_default()));
                buf
            }
        }
    }

    /// Calls `f` with the name's text, an address written on the stack.
    fn with_text<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            Name::Symbol(s) => f(s.as_bytes()),
            Name::Address(a) => {
                let mut buf = [0u8; 18];
                let digits = (64 - a.leading_zeros()).div_ceil(4).max(1) as usize;
                buf[..2].copy_from_slice(b"0x");
                for (i, b) in buf[2..2 + digits].iter_mut().enumerate() {
                    let nibble = (a >> (4 * (digits - 1 - i))) & 0xf;
                    *b = b"0123456789abcdef"[nibble as usize];
                }
                f(&buf[..2 + digits])
            }
        }
    }

    /// Orders as the texts do (no text is made: hundreds of thousands of
    /// addresses are sorted).
    fn cmp_text(&self, other: &Name<'_>) -> std::cmp::Ordering {
        match (self, other) {
            // Digits left-aligned compare as the texts do; where they are
            // equal, one text is the other's prefix: the shorter first.
            (Name::Address(a), Name::Address(b)) => address_order(*a).cmp(&address_order(*b)),
            (Name::Symbol(s), Name::Address(a)) => symbol_cmp_address(s, *a),
            (Name::Address(a), Name::Symbol(s)) => symbol_cmp_address(s, *a).reverse(),
            (Name::Symbol(a), Name::Symbol(b)) => a.cmp(b),
        }
    }
}

/// A symbol against an address's text (`0x` and its digits). A symbol
/// that does not start with `0x` differs from every such text within its
/// first two bytes, or is a shorter prefix of them: it orders as against
/// `0x` alone, and only the others need the digits written (the merge of
/// a system-wide capture's few thousand symbols with its hundreds of
/// thousands of addresses compares each address with a symbol).
fn symbol_cmp_address(symbol: &str, address: u64) -> std::cmp::Ordering {
    let symbol = symbol.as_bytes();
    if symbol.starts_with(b"0x") {
        Name::Address(address).with_text(|text| symbol.cmp(text))
    } else {
        symbol.cmp(b"0x")
    }
}

/// The functions of every capture's frames, named as `frame_functions`
/// names them; the `functions` table (each distinct (symbol, DSO)
/// numbered from 1 in their order, as its `DENSE_RANK` does, and 0 for
/// `[unknown]`) computed from them and kept, typed as `sql` plans it; and
/// each frame's function. Instead of the SQL's `DISTINCT`, window and join
/// of every frame with its function by name: most frames of a
/// system-wide capture are unresolved addresses, each a function of its
/// own. With `standard_frames`, the names are made here from `frames`
/// (the view's hex digits picked out one by one in SQL were slow over a
/// system-wide capture's unresolved frames).
fn native_functions(
    session: &Session,
    standard_frames: bool,
    sql: &str,
) -> Result<(Named, FrameFunctions), Error> {
    let FunctionFrames {
        captures,
        dsos,
        symbols,
        met,
        named,
        mut unnamed,
    } = FunctionFrames::read(session, standard_frames)?;
    let mut symbolic: Vec<((Name<'_>, &str), u32)> = met
        .into_keys()
        .into_iter()
        .zip(0..)
        .map(|((s, dso), k)| ((Name::Symbol(symbols.text(s)), dsos.text(dso)), k))
        .collect();
    symbolic.sort_unstable_by(|((a, x), _), ((b, y), _)| by_text((a, x), (b, y)));
    let dso_names = rank_dsos(&dsos, &mut unnamed);
    unnamed.par_sort_unstable();
    let Numbered {
        table,
        id_of,
        mut by_capture,
    } = number_functions(&symbolic, &unnamed, &dso_names, captures.len())?;
    drop(unnamed);
    let mut resolved = vec![Bits::default(); captures.len()];
    for (c, frame, k) in named {
        assign(&mut by_capture, c, frame, id_of[k as usize]);
        resolved[c as usize].set(frame as usize);
    }
    let names = || captures.iter().map(str::to_string);
    let by_capture = FrameFunctions {
        ids: names().zip(by_capture).collect(),
        resolved: names().zip(resolved).collect(),
    };
    // The table, rows in id order (the `[unknown]` row last, as the SQL's
    // UNION ALL gives it), kept by number and written as it is read.
    let table = Arc::new(table.finish(session.schema_of(sql)?)?);
    on_read::register(session, "functions", table.clone())?;
    Ok((Named::Ranked(table), by_capture))
}

/// Two names with their DSOs, ordered as `functions` orders them: by
/// name's text, then DSO.
fn by_text((a, x): (&Name<'_>, &str), (b, y): (&Name<'_>, &str)) -> std::cmp::Ordering {
    a.cmp_text(b).then_with(|| x.cmp(y))
}

/// What the frames that name functions hold, read a batch at a time: the
/// frames of a system-wide capture, read whole, are large. What outlives
/// a batch is numbers, and the distinct texts: captures, DSOs, symbols
/// (far fewer than the frames).
#[derive(Default)]
struct FunctionFrames {
    captures: TextIds,
    dsos: TextIds,
    symbols: TextIds,
    /// Each (symbol, DSO) of a frame with a symbol, numbered as met.
    met: Interner<(u32, u32)>,
    /// (capture, frame, interned name) of each frame with a symbol.
    named: Vec<(u32, u32, u32)>,
    /// The frames named by their address (most frames of a system-wide
    /// capture, nearly each a function of its own): not hashed, but
    /// sorted by name, equal names side by side.
    unnamed: Vec<Unnamed>,
}

impl FunctionFrames {
    /// Reads the frames of `_function_frames` (with `standard_frames`) or
    /// of a caller's `frame_functions`.
    fn read(session: &Session, standard_frames: bool) -> Result<FunctionFrames, Error> {
        let sql = if standard_frames {
            helpers::FUNCTION_FRAMES
        } else {
            helpers::FUNCTION_FRAMES_OF_VIEW
        };
        let mut out = FunctionFrames::default();
        session.for_each_batch(sql, |b| out.add(&b, standard_frames))?;
        out.unnamed.shrink_to_fit();
        Ok(out)
    }

    fn add(&mut self, b: &RecordBatch, standard_frames: bool) -> Result<(), Error> {
        let c = columns::cast(b, "capture", &DataType::Utf8)?;
        let f = columns::cast(b, "frame_id", &DataType::Int64)?;
        // Text columns as views: the frames table's are, so nothing is
        // copied.
        let sym = columns::cast(b, "symbol", &DataType::Utf8View)?;
        let dso = columns::cast(b, "dso", &DataType::Utf8View)?;
        let a = columns::cast(b, "a", &DataType::UInt64)?;
        let (c, f) = (c.as_string::<i32>(), f.as_primitive::<Int64Type>());
        let (sym, dso) = (sym.as_string_view(), dso.as_string_view());
        let a = a.as_primitive::<UInt64Type>();
        let (mut symbols, mut dsos) = (SeenViews::default(), SeenViews::default());
        self.unnamed.reserve(c.len());
        for row in 0..c.len() {
            if c.is_null(row) || f.is_null(row) {
                continue;
            }
            if dso.is_null(row) && !standard_frames {
                continue;
            }
            // Frame ids are u32 in the frames table; one of a caller's
            // view beyond that has no function (0, `[unknown]`).
            let Ok(frame) = u32::try_from(f.value(row)) else {
                continue;
            };
            // (A batch is mostly one capture's rows: `TextIds` looks a
            // text up only where it changes. DSOs and symbols are found
            // by their views.)
            let capture = text_id(&mut self.captures, c.value(row))?;
            if sym.is_valid(row) {
                let symbol = symbols.id(&mut self.symbols, sym, row)?;
                let k = self
                    .met
                    .number((symbol, dsos.id(&mut self.dsos, dso, row)?));
                self.named.push((capture, frame, k));
            } else if a.is_valid(row) {
                let (aligned, digits) = address_order(a.value(row));
                self.unnamed.push(Unnamed {
                    aligned,
                    digits,
                    dso: dsos.id(&mut self.dsos, dso, row)?,
                    capture,
                    frame,
                });
            }
        }
        Ok(())
    }
}

/// Replaces each unnamed frame's DSO number by the DSO name's rank, so
/// that they sort as `by_text` orders them, on integers (few DSO names
/// for many frames, which compared as strings were a large part of a
/// system-wide capture's inclusive query);
/// returns the names in rank order.
fn rank_dsos<'a>(dsos: &'a TextIds, unnamed: &mut [Unnamed]) -> Vec<&'a str> {
    let mut dso_names: Vec<(&str, u32)> = dsos.iter().zip(0..).collect();
    dso_names.sort_unstable();
    let mut rank = vec![0u32; dso_names.len()];
    for (r, &(_, number)) in dso_names.iter().enumerate() {
        rank[number as usize] = r as u32;
    }
    for u in unnamed.iter_mut() {
        u.dso = rank[u.dso as usize];
    }
    dso_names.into_iter().map(|(d, _)| d).collect()
}

/// Functions numbered from names: the table of their names, each
/// interned symbolic name's id, and each capture's frames' ids so far.
struct Numbered {
    table: function_names::Builder,
    /// By interned (symbol, DSO) number.
    id_of: Vec<u32>,
    /// By capture number, then frame id.
    by_capture: Vec<Vec<u32>>,
}

/// Sets frame `frame` of capture `capture` to function `id`.
fn assign(by_capture: &mut [Vec<u32>], capture: u32, frame: u32, id: u32) {
    let (map, frame) = (&mut by_capture[capture as usize], frame as usize);
    if map.len() <= frame {
        map.resize(frame + 1, 0);
    }
    map[frame] = id;
}

/// Ids in (symbol, DSO) order from 1, as the two sorted lists (the
/// interned symbolic names and the unnamed frames, each sorted by
/// `by_text`) merge: a name is one function whether a symbol or an
/// address spells it; 0 is `[unknown]`. The unnamed frames' ids are
/// assigned here, the symbolic names' given by their number.
fn number_functions<'a>(
    symbolic: &[((Name<'a>, &'a str), u32)],
    unnamed: &[Unnamed],
    dso_names: &[&'a str],
    captures: usize,
) -> Result<Numbered, Error> {
    let name = |u: &Unnamed| Name::Address(u.address());
    let dso = |u: &Unnamed| dso_names[u.dso as usize];
    let mut out = Numbered {
        table: function_names::Builder::with_capacity(symbolic.len() + unnamed.len()),
        id_of: vec![0u32; symbolic.len()],
        by_capture: vec![Vec::new(); captures],
    };
    let (mut s, mut u) = (symbolic.iter().peekable(), unnamed.iter().peekable());
    loop {
        // The next name, and if it is an unnamed frame's, its key: the
        // unnamed frames equal to it are those with that key.
        let (next, from_unnamed) = match (s.peek(), u.peek()) {
            (None, None) => break,
            (Some(((n, d), _)), None) => ((*n, *d), None),
            (None, Some(x)) => ((name(x), dso(x)), Some(x.key())),
            (Some(((n, d), _)), Some(x)) => match by_text((n, d), (&name(x), dso(x))) {
                std::cmp::Ordering::Greater => ((name(x), dso(x)), Some(x.key())),
                _ => ((*n, *d), None),
            },
        };
        // Every name equal to `next` is taken below: the next is greater.
        out.table.push(next.0, next.1)?;
        let id = u32::try_from(out.table.rows())
            .map_err(|_| Error::Shape("more functions than ids can number".into()))?;
        while let Some(((n, d), k)) = s.peek() {
            if by_text((n, d), (&next.0, next.1)).is_ne() {
                break;
            }
            out.id_of[*k as usize] = id;
            s.next();
        }
        while let Some(x) = u.peek() {
            let equal = match from_unnamed {
                Some(key) => x.key() == key,
                None => by_text((&name(x), dso(x)), (&next.0, next.1)).is_eq(),
            };
            if !equal {
                break;
            }
            assign(&mut out.by_capture, x.capture, x.frame, id);
            u.next();
        }
    }
    Ok(out)
}

/// The function ids a `functions` table of the caller's names.
fn functions(session: &Session) -> Result<Named, Error> {
    let mut named = FxHashSet::default();
    for b in session.sql(helpers::NAMED_FUNCTION_IDS)? {
        for id in columns::i64s(&b, "function_id")?.into_iter().flatten() {
            let Ok(id) = u32::try_from(id) else {
                return Err(Error::Shape(format!("function id {id} out of range")));
            };
            named.insert(id);
        }
    }
    Ok(Named::Listed(named))
}

/// Per capture, each frame id's function id (0 where there is none).
fn frame_functions(session: &Session) -> Result<FrameFunctions, Error> {
    let mut by_capture = FrameFunctions::default();
    for b in session.sql(helpers::FRAME_FUNCTION_IDS)? {
        let captures = columns::cast(&b, "capture", &DataType::Utf8)?;
        let captures = captures.as_string::<i32>();
        let frames = columns::cast(&b, "frame_id", &DataType::Int64)?;
        let frames = frames.as_primitive::<Int64Type>();
        let functions = columns::cast(&b, "function_id", &DataType::Int64)?;
        let functions = functions.as_primitive::<Int64Type>();
        for row in 0..b.num_rows() {
            if captures.is_null(row) || frames.is_null(row) || functions.is_null(row) {
                continue;
            }
            let (Ok(frame), Ok(function)) = (
                usize::try_from(frames.value(row)),
                u32::try_from(functions.value(row)),
            ) else {
                continue;
            };
            let map = by_capture
                .ids
                .entry(captures.value(row).to_string())
                .or_default();
            if map.len() <= frame {
                map.resize(frame + 1, 0);
            }
            map[frame] = function;
        }
    }
    Ok(by_capture)
}

fn column(b: &RecordBatch, name: &str) -> Result<ArrayRef, Error> {
    b.column_by_name(name)
        .cloned()
        .ok_or_else(|| Error::Shape(format!("no column {name}")))
}

/// A batch of `schema` from `columns`, each cast to its field's type.
fn typed(schema: &SchemaRef, columns: &[ArrayRef]) -> Result<RecordBatch, Error> {
    let columns = schema
        .fields()
        .iter()
        .zip(columns)
        .map(|(f, a)| cast(a, f.data_type()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::Shape(format!("stack tables: {e}")))?;
    RecordBatch::try_new(schema.clone(), columns)
        .map_err(|e| Error::Shape(format!("stack tables: {e}")))
}

#[cfg(test)]
mod tests {
    use super::{Name, Sets};

    #[test]
    fn addresses_compare_as_their_text() {
        let names = [
            Name::Address(0),
            Name::Address(0x9),
            Name::Address(0x10),
            Name::Address(0xffff_ffff_ffff_ffff),
            Name::Address(0x7f00_dead_beef),
            Name::Address(0x1),
            Name::Address(0x100),
            Name::Address(0x1f),
            Name::Symbol("0x1"),
            Name::Symbol("0x1f0"),
            Name::Symbol("0x"),
            Name::Symbol("0"),
            Name::Symbol("0xg"),
            Name::Symbol("/usr/bin/ld"),
            Name::Symbol("main"),
            Name::Symbol(""),
        ];
        for a in &names {
            for b in &names {
                let (mut x, mut y) = (String::new(), String::new());
                let want = a.text(&mut x).cmp(b.text(&mut y));
                assert_eq!(a.cmp_text(b), want);
            }
        }
        let mut buf = String::new();
        assert_eq!(Name::Address(0).text(&mut buf), "0x0");
    }

    /// Vec's order is the order DENSE_RANK gives lists: element by element,
    /// a prefix before the lists it starts.
    #[test]
    fn sets_interned_once_each() {
        let mut sets = Sets::default();
        let a = sets.intern(&[1, 4]);
        let b = sets.intern(&[2, 3]);
        let empty = sets.intern(&[]);
        assert_eq!((a, b, empty), (0, 1, 2));
        assert_eq!(sets.intern(&[1, 4]), a);
        assert_eq!(sets.intern(&[]), empty);
        assert_eq!(sets.intern(&[1]), 3);
        assert_eq!(sets.len(), 4);
        assert_eq!((sets.get(a), sets.get(b)), (&[1, 4][..], &[2, 3][..]));
        assert_eq!((sets.get(empty), sets.get(3)), (&[][..], &[1][..]));
    }

    #[test]
    fn sets_order_as_lists_do() {
        let mut v: Vec<&[u32]> = vec![&[1, 2], &[0, 5], &[1], &[0]];
        v.sort_unstable();
        assert_eq!(v, vec![&[0][..], &[0, 5], &[1], &[1, 2]]);
    }
}
