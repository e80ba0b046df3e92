//! One Parquet file written in row groups from Arrow column builders.
//!
//! Rows are appended to builders on the caller's thread; each full row
//! group is handed to a thread of its own that encodes and compresses it,
//! so decoding the capture and writing Parquet overlap. At most one row
//! group waits between the two, which bounds a table's memory to about
//! three row groups whatever the capture's length.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Int32Builder, ListBuilder, StringBuilder, UInt16Builder,
    UInt32Builder, UInt64Builder, UInt8Builder,
};
use arrow_array::types::UInt32Type;
use arrow_array::{new_null_array, ArrayRef, DictionaryArray, RecordBatch};
use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowLeafColumn,
    ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedRowGroupWriter;
use parquet::schema::types::{ColumnDescPtr, ColumnPath};
use rayon::prelude::*;

use crate::plain::IntEncoding;
use crate::Error;
use crate::{delta, dictionary, plain};

/// Rows buffered before they are written as a row group.
pub(crate) const ROWS_PER_GROUP: usize = 64 * 1024;

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// `bool` (cells `U(0)` false, any other `U` true).
    Bool,
    /// `uint8`.
    U8,
    /// `uint16`.
    U16,
    /// `uint32`.
    U32,
    /// `uint64`.
    U64,
    /// `int32`.
    I32,
    /// `utf8`.
    Str,
    /// `binary`.
    Bytes,
    /// `list<uint32>`.
    ListU32,
}

/// One column of a table: its name, type, whether it may be null, and
/// whether Parquet should try dictionary encoding.
#[derive(Clone, Copy, Debug)]
pub struct Column<'a> {
    /// Column name.
    pub name: &'a str,
    /// Value type.
    pub ty: ColumnType,
    /// Whether nulls are allowed.
    pub nullable: bool,
    /// Whether to try dictionary encoding. Columns of (nearly) unique
    /// values such as times and row ids turn it off: interning every
    /// value only to fall back to plain encoding costs time and nothing
    /// is gained.
    pub dictionary: bool,
    /// Whether to store the column as deltas (Parquet's
    /// `DELTA_BINARY_PACKED`): for ascending integers such as row ids and
    /// times, a few bits a value before compression, and cheaper to
    /// compress than plain values.
    pub delta: bool,
    /// Whether to store the column chunks' statistics (min, max, null
    /// count), which let readers skip row groups. Columns whose rows come
    /// in no order related to their values (names, addresses, the stack
    /// tree's links) go without: every row group then spans nearly all
    /// values and prunes nothing, and working the statistics out was a
    /// tenth of encoding the frames and stacks tables.
    pub statistics: bool,
    /// Whether the column holds counter values (a group read's raw
    /// values), compressed with shorter matches (`pages::COUNTER_LEVEL`).
    pub counters: bool,
}

impl<'a> Column<'a> {
    /// A column that is never null, dictionary-encoded where it pays.
    pub const fn new(name: &'a str, ty: ColumnType) -> Column<'a> {
        Column {
            name,
            ty,
            nullable: false,
            dictionary: true,
            delta: false,
            statistics: true,
            counters: false,
        }
    }

    /// The same column, allowing nulls.
    pub const fn nullable(self) -> Column<'a> {
        Column {
            nullable: true,
            ..self
        }
    }

    /// The same column, plain-encoded (values are mostly distinct).
    pub const fn plain(self) -> Column<'a> {
        Column {
            dictionary: false,
            ..self
        }
    }

    /// The same column, without statistics (its values are in no order
    /// a row group could be skipped by).
    pub const fn without_statistics(self) -> Column<'a> {
        Column {
            statistics: false,
            ..self
        }
    }

    /// The same column, of counter values: written by perfq's own
    /// encoder, it compresses them with shorter matches.
    pub const fn counters(self) -> Column<'a> {
        Column {
            counters: true,
            ..self
        }
    }

    /// The same column, delta-encoded (ascending integers).
    pub const fn delta(self) -> Column<'a> {
        Column {
            dictionary: false,
            delta: true,
            ..self
        }
    }
}

/// Encodes `batch` as row group `index` of the file `groups` makes
/// column writers for, the columns in parallel. The frames and stacks
/// tables are written after the read, and their encoding (ten string
/// columns interned into dictionaries, and the stacks) is most of what a
/// conversion then has left. (On two cores, which symbolizing and
/// writing keep busy then anyway, this gains nothing measurable; it is
/// for machines with more.)
fn encode_group(
    groups: &ArrowRowGroupWriterFactory,
    columns: &[ColumnDescPtr],
    own: &[Option<Own>],
    props: &WriterProperties,
    index: usize,
    schema: &Schema,
    batch: &RecordBatch,
) -> Result<Vec<Chunk>, ParquetError> {
    let writers = groups.create_column_writers(index)?;
    let mut work: Vec<Work> = Vec::with_capacity(writers.len());
    for (i, (field, column)) in schema.fields().iter().zip(batch.columns()).enumerate() {
        // The leaf of a column perfq encodes itself (one leaf: a
        // top-level column).
        let leaf = work.len();
        let descr = || {
            columns.get(leaf).cloned().ok_or_else(|| {
                ParquetError::General(format!("no column {leaf} in the file's schema"))
            })
        };
        let any = column.as_any();
        if let (Some(keyed), &DataType::Utf8) = (
            any.downcast_ref::<DictionaryArray<UInt32Type>>(),
            field.data_type(),
        ) {
            // A string column given with its dictionary.
            work.push(Work::Keyed(descr()?, keyed.clone()));
        } else if let Some(&Some(how)) = own.get(i) {
            // An integer column of the type `how` takes (the batch was
            // checked against the schema).
            work.push(Work::Own(how, descr()?, column.clone()));
        } else {
            work.extend(compute_leaves(field, column)?.into_iter().map(Work::Leaf));
        }
    }
    if work.len() != writers.len() {
        return Err(ParquetError::General(format!(
            "{} leaf columns for {} column writers",
            work.len(),
            writers.len()
        )));
    }
    let encode = |(mut w, work): (ArrowColumnWriter, Work)| match work {
        Work::Leaf(leaf) => {
            w.write(&leaf)?;
            w.close().map(Chunk::Arrow)
        }
        Work::Keyed(descr, keyed) => {
            let (bytes, close) = dictionary::encode(&descr, props, &keyed)?;
            Ok(Chunk::Own(bytes, close))
        }
        Work::Own(how, descr, ints) => {
            let (bytes, close) = match how {
                Own::Deltas => delta::encode_column(&descr, props, &ints)?,
                Own::Ints(encoding) => plain::encode_column(&descr, props, &ints, encoding)?,
                Own::PlainList => plain::encode_list(&descr, props, &ints)?,
            };
            Ok(Chunk::Own(bytes, close))
        }
    };
    match encoders() {
        Some(pool) => pool.install(|| writers.into_par_iter().zip(work).map(encode).collect()),
        None => writers.into_iter().zip(work).map(encode).collect(),
    }
}

/// The properties of the file writer, whose column writers encode the
/// columns perfq does not: `props`, but for those perfq encodes without a
/// codec or a dictionary. Their writers are made with every row group's
/// and never used; a zstd codec is a compression and a decompression
/// context, allocated and cleared, for each such column of each group.
/// Nothing of these properties is written into the file: each chunk's
/// metadata says how its own encoder wrote it.
fn unused_writers(
    props: &WriterProperties,
    columns: &[Column<'_>],
    own: &[Option<Own>],
) -> WriterProperties {
    let mut b = props.clone().into_builder();
    for (c, _) in columns.iter().zip(own).filter(|(_, o)| o.is_some()) {
        b = b
            .set_column_compression(leaf_path(c), Compression::UNCOMPRESSED)
            .set_column_dictionary_enabled(leaf_path(c), false);
    }
    b.build()
}

/// What a leaf column of a row group is encoded from.
enum Work {
    /// Arrow values, through Parquet's column writer.
    Leaf(ArrowLeafColumn),
    /// A string column with its dictionary, by [`dictionary::encode`].
    Keyed(ColumnDescPtr, DictionaryArray<UInt32Type>),
    /// An integer column (or list of them) perfq encodes itself.
    Own(Own, ColumnDescPtr, ArrayRef),
}

/// The integer columns perfq encodes itself, and how.
#[derive(Clone, Copy, Debug)]
enum Own {
    /// A `u32` or `u64` column, as deltas by [`delta::encode`].
    Deltas,
    /// An integer column without deltas, plain or with a dictionary, by
    /// [`plain::encode_column`].
    Ints(IntEncoding),
    /// A list of `u32` without a dictionary, by [`plain::encode_list`].
    PlainList,
}

impl Own {
    /// How perfq encodes column `c`, if it does.
    fn of(c: &Column<'_>) -> Option<Own> {
        match c.ty {
            ColumnType::U32 | ColumnType::U64 if c.delta => Some(Own::Deltas),
            ColumnType::ListU32 if !c.dictionary && !c.delta => Some(Own::PlainList),
            _ if !c.delta && plain::encodes(&data_type(c.ty)) => {
                Some(Own::Ints(match c.dictionary {
                    true => IntEncoding::Dictionary,
                    false => IntEncoding::Plain,
                }))
            }
            _ => None,
        }
    }
}

/// An encoded column chunk, to be appended to its row group.
enum Chunk {
    Arrow(ArrowColumnChunk),
    /// Encoded by perfq (`pages`).
    Own(Bytes, ColumnCloseResult),
}

impl Chunk {
    fn append_to(self, group: &mut SerializedRowGroupWriter<'_, File>) -> Result<(), ParquetError> {
        match self {
            Chunk::Arrow(c) => c.append_to_row_group(group),
            Chunk::Own(bytes, close) => group.append_column(&bytes, close),
        }
    }
}

/// The threads that encode columns: a pool of their own, not rayon's
/// global one, so that encoding never waits for threads that may be
/// blocked handing this encoder its next row group. `None` if no thread
/// could be started (columns are then encoded one after the other).
fn encoders() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("parquet-column-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Values of one column being built.
enum Builder {
    Bool(BooleanBuilder),
    U8(UInt8Builder),
    U16(UInt16Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    I32(Int32Builder),
    Str(StringBuilder),
    Bytes(BinaryBuilder),
    ListU32(ListBuilder<UInt32Builder>),
}

impl Builder {
    /// A builder for a row group of `ty` values whose text, bytes or list
    /// items take about `values` bytes or items in all (what the group
    /// before took): the buffers are made that large at once instead of
    /// doubling their way there, copying all they hold each time (the
    /// frames table's name columns, when they were filled this way,
    /// copied a great deal so on a system-wide capture).
    fn new(ty: ColumnType, values: usize) -> Builder {
        let n = ROWS_PER_GROUP;
        match ty {
            ColumnType::Bool => Builder::Bool(BooleanBuilder::with_capacity(n)),
            ColumnType::U8 => Builder::U8(UInt8Builder::with_capacity(n)),
            ColumnType::U16 => Builder::U16(UInt16Builder::with_capacity(n)),
            ColumnType::U32 => Builder::U32(UInt32Builder::with_capacity(n)),
            ColumnType::U64 => Builder::U64(UInt64Builder::with_capacity(n)),
            ColumnType::I32 => Builder::I32(Int32Builder::with_capacity(n)),
            ColumnType::Str => Builder::Str(StringBuilder::with_capacity(n, values)),
            ColumnType::Bytes => Builder::Bytes(BinaryBuilder::with_capacity(n, values)),
            ColumnType::ListU32 => Builder::ListU32(ListBuilder::with_capacity(
                UInt32Builder::with_capacity(values),
                n,
            )),
        }
    }

    /// Bytes of text or bytes, or list items, appended so far (0 for the
    /// other types): the size hint for the next group's builder.
    fn values_len(&mut self) -> usize {
        match self {
            Builder::Str(b) => b.values_slice().len(),
            Builder::Bytes(b) => b.values_slice().len(),
            Builder::ListU32(b) => b.values().values_slice().len(),
            _ => 0,
        }
    }

    fn append_null(&mut self) {
        match self {
            Builder::Bool(b) => b.append_null(),
            Builder::U8(b) => b.append_null(),
            Builder::U16(b) => b.append_null(),
            Builder::U32(b) => b.append_null(),
            Builder::U64(b) => b.append_null(),
            Builder::I32(b) => b.append_null(),
            Builder::Str(b) => b.append_null(),
            Builder::Bytes(b) => b.append_null(),
            Builder::ListU32(b) => b.append(false),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::U8(b) => Arc::new(b.finish()),
            Builder::U16(b) => Arc::new(b.finish()),
            Builder::U32(b) => Arc::new(b.finish()),
            Builder::U64(b) => Arc::new(b.finish()),
            Builder::I32(b) => Arc::new(b.finish()),
            Builder::Str(b) => Arc::new(b.finish()),
            Builder::Bytes(b) => Arc::new(b.finish()),
            Builder::ListU32(b) => Arc::new(b.finish()),
        }
    }
}

/// One column of the row group being filled. Nulls before its first
/// value are only counted: a column no row of the group fills (sample
/// fields the capture did not record: addr, weight, data_src, the group
/// members m0..m15, ... in most captures) costs a counter per row, not a
/// value and a validity bit.
struct Slot {
    ty: ColumnType,
    data_type: DataType,
    leading_nulls: usize,
    builder: Option<Builder>,
    /// [`Builder::values_len`] of the last group finished.
    last_values: usize,
}

impl Slot {
    fn new(ty: ColumnType) -> Slot {
        Slot {
            ty,
            data_type: data_type(ty),
            leading_nulls: 0,
            builder: None,
            last_values: 0,
        }
    }

    #[inline]
    fn null(&mut self) {
        match &mut self.builder {
            Some(b) => b.append_null(),
            None => self.leading_nulls += 1,
        }
    }

    /// The builder, for a value.
    #[inline]
    fn values(&mut self) -> &mut Builder {
        let (ty, nulls, values) = (self.ty, self.leading_nulls, self.last_values);
        self.builder.get_or_insert_with(|| {
            let mut b = Builder::new(ty, values);
            for _ in 0..nulls {
                b.append_null();
            }
            b
        })
    }

    fn finish(&mut self) -> ArrayRef {
        let nulls = std::mem::take(&mut self.leading_nulls);
        match self.builder.take() {
            Some(mut b) => {
                self.last_values = b.values_len();
                b.finish()
            }
            None => null_array(self.ty, &self.data_type, nulls),
        }
    }
}

/// `n` nulls of a column type: a slice of one row group's worth made
/// once per process and type. A null array of its own per column and
/// row group is a zeroed buffer of `n` values (0.5 MiB for u64) that the
/// allocator clears page by page: with the samples table's usually empty
/// columns (addr, weight, ..., m0..m15) that clearing and its page
/// faults were a noticeable part of a conversion's CPU time.
fn null_array(ty: ColumnType, data_type: &DataType, n: usize) -> ArrayRef {
    // One cell per `ColumnType` (`ListU32` is the last).
    static FULL: [OnceLock<ArrayRef>; ColumnType::ListU32 as usize + 1] =
        [const { OnceLock::new() }; ColumnType::ListU32 as usize + 1];
    match FULL.get(ty as usize) {
        Some(cell) if n <= ROWS_PER_GROUP => cell
            .get_or_init(|| new_null_array(data_type, ROWS_PER_GROUP))
            .slice(0, n),
        _ => new_null_array(data_type, n),
    }
}

/// `n` nulls of column type `ty`, for a row group's column no row filled.
pub(crate) fn null_column(ty: ColumnType, n: usize) -> ArrayRef {
    null_array(ty, &data_type(ty), n)
}

/// The Arrow type of a column type.
fn data_type(ty: ColumnType) -> DataType {
    match ty {
        ColumnType::Bool => DataType::Boolean,
        ColumnType::U8 => DataType::UInt8,
        ColumnType::U16 => DataType::UInt16,
        ColumnType::U32 => DataType::UInt32,
        ColumnType::U64 => DataType::UInt64,
        ColumnType::I32 => DataType::Int32,
        ColumnType::Str => DataType::Utf8,
        ColumnType::Bytes => DataType::Binary,
        ColumnType::ListU32 => DataType::List(Arc::new(Field::new("item", DataType::UInt32, true))),
    }
}

/// The Parquet path of the values of column `c`: its name, or for a list
/// the list's items (`name.list.item`), which is where Parquet keeps
/// per-column settings.
fn leaf_path(c: &Column<'_>) -> ColumnPath {
    match c.ty {
        ColumnType::ListU32 => ColumnPath::new(vec![c.name.into(), "list".into(), "item".into()]),
        _ => ColumnPath::from(c.name),
    }
}

/// A value for one cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell<'a> {
    /// Null.
    Null,
    /// An unsigned number (fits the column's width).
    U(u64),
    /// A signed number.
    I(i64),
    /// Text.
    S(&'a str),
    /// Bytes.
    B(&'a [u8]),
    /// A list of u32.
    L(&'a [u32]),
}

impl<'a> Cell<'a> {
    /// Text, or null.
    pub fn str(v: Option<&'a str>) -> Cell<'a> {
        v.map_or(Cell::Null, Cell::S)
    }

    /// A number, or null.
    pub fn num(v: Option<u64>) -> Cell<'a> {
        v.map_or(Cell::Null, Cell::U)
    }
}

/// A Parquet table being written.
pub struct Table {
    path: PathBuf,
    schema: SchemaRef,
    slots: Vec<Slot>,
    rows: usize,
    /// Full row groups go to the encoding thread through here.
    batches: Option<SyncSender<RecordBatch>>,
    encoder: Option<JoinHandle<Result<(), Error>>>,
}

impl Table {
    /// Creates `path` with the given columns.
    pub fn create(path: &Path, columns: &[Column<'_>]) -> Result<Table, Error> {
        let fields: Vec<Field> = columns
            .iter()
            .map(|c| Field::new(c.name, data_type(c.ty), c.nullable))
            .collect();
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(
                ZstdLevel::try_new(1).map_err(|e| Error::parquet(path, e))?,
            ))
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_dictionary_enabled(true);
        for c in columns.iter().filter(|c| !c.dictionary) {
            props = props.set_column_dictionary_enabled(leaf_path(c), false);
        }
        for c in columns.iter().filter(|c| !c.statistics) {
            props = props.set_column_statistics_enabled(leaf_path(c), EnabledStatistics::None);
        }
        for c in columns.iter().filter(|c| c.delta) {
            props = props.set_column_encoding(leaf_path(c), Encoding::DELTA_BINARY_PACKED);
        }
        for c in columns.iter().filter(|c| c.counters) {
            let level = ZstdLevel::try_new(crate::pages::COUNTER_LEVEL);
            let level = level.map_err(|e| Error::parquet(path, e))?;
            props = props.set_column_compression(leaf_path(c), Compression::ZSTD(level));
        }
        // Delta and plain integer columns are encoded by perfq (`delta`,
        // `plain`), with these properties.
        let own: Vec<Option<Own>> = columns.iter().map(Own::of).collect();
        let props = Arc::new(props.build());
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        // The Arrow writer makes the file's metadata (with the Arrow
        // schema); its lower-level parts then encode each row group's
        // columns in parallel, into the same bytes it would write.
        let file_props = unused_writers(&props, columns, &own);
        let (mut writer, groups) = ArrowWriter::try_new(file, schema.clone(), Some(file_props))
            .and_then(ArrowWriter::into_serialized_writer)
            .map_err(|e| Error::parquet(path, e))?;
        let (tx, rx) = sync_channel::<RecordBatch>(1);
        let at = path.to_path_buf();
        let file_schema = schema.clone();
        let encoder = std::thread::Builder::new()
            .name("parquet-encode".into())
            .spawn(move || -> Result<(), Error> {
                let descr = writer.schema_descr();
                let columns: Vec<ColumnDescPtr> =
                    (0..descr.num_columns()).map(|i| descr.column(i)).collect();
                for (index, batch) in rx.into_iter().enumerate() {
                    let chunks =
                        encode_group(&groups, &columns, &own, &props, index, &file_schema, &batch)
                            .map_err(|e| Error::parquet(&at, e))?;
                    let mut group = writer
                        .next_row_group()
                        .map_err(|e| Error::parquet(&at, e))?;
                    for chunk in chunks {
                        chunk
                            .append_to(&mut group)
                            .map_err(|e| Error::parquet(&at, e))?;
                    }
                    group.close().map_err(|e| Error::parquet(&at, e))?;
                }
                writer.close().map_err(|e| Error::parquet(&at, e))?;
                Ok(())
            })
            .map_err(|e| Error::io(path, e))?;
        Ok(Table {
            path: path.to_path_buf(),
            schema,
            slots: columns.iter().map(|c| Slot::new(c.ty)).collect(),
            rows: 0,
            batches: Some(tx),
            encoder: Some(encoder),
        })
    }

    /// Appends one row; `cells` are in column order. A cell of the wrong
    /// kind for its column is written as null (a caller bug, not input).
    pub fn push(&mut self, cells: &[Cell<'_>]) -> Result<(), Error> {
        let mut row = self.row();
        for cell in cells {
            match *cell {
                Cell::Null => row.null(),
                Cell::U(x) => row.u(x),
                Cell::I(x) => row.opt_i32(i32::try_from(x).ok()),
                Cell::S(x) => row.str(x),
                Cell::B(x) => row.bytes(x),
                Cell::L(x) => row.list(x),
            };
        }
        row.end()
    }

    /// Starts a row whose cells are then given in column order through
    /// typed calls, without building [`Cell`]s: the per-sample tables'
    /// way (a call per cell costs a branch, not a match over every kind
    /// of value). Cells not given are null; [`Row::end`] completes it.
    pub fn row(&mut self) -> Row<'_> {
        Row { t: self, at: 0 }
    }

    /// Appends one row group given whole, a column at a time (`arrays`
    /// in column order, of the table's types, equally long): for tables
    /// whose columns are already vectors (the stacks), which would cost a
    /// builder call per cell through [`Table::row`]. Rows appended before
    /// are written as a row group of their own first. Give at most
    /// [`ROWS_PER_GROUP`] rows: the groups are then those rows would make.
    pub(crate) fn push_group(&mut self, arrays: Vec<ArrayRef>) -> Result<(), Error> {
        self.flush()?;
        self.send(arrays)
    }

    fn flush(&mut self) -> Result<(), Error> {
        if self.rows == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = self.slots.iter_mut().map(Slot::finish).collect();
        self.rows = 0;
        self.send(arrays)
    }

    fn send(&mut self, arrays: Vec<ArrayRef>) -> Result<(), Error> {
        // A string column may come as a dictionary array (its dictionary
        // built by the caller, see `dictionary`): the batch's schema says
        // so for that column; the file's stays a string.
        let keyed = |(f, a): (&FieldRef, &ArrayRef)| {
            matches!(a.data_type(), DataType::Dictionary(k, v)
                if **k == DataType::UInt32 && **v == DataType::Utf8 && *f.data_type() == DataType::Utf8)
        };
        let fields = self.schema.fields().iter().zip(&arrays);
        let schema = if fields.clone().any(keyed) {
            let fields: Vec<FieldRef> = fields
                .map(|(f, a)| match keyed((f, a)) {
                    true => Arc::new(f.as_ref().clone().with_data_type(a.data_type().clone())),
                    false => f.clone(),
                })
                .collect();
            Arc::new(Schema::new(fields))
        } else {
            self.schema.clone()
        };
        let batch =
            RecordBatch::try_new(schema, arrays).map_err(|e| Error::parquet(&self.path, e))?;
        let sent = self.batches.as_ref().map(|tx| tx.send(batch));
        match sent {
            Some(Ok(())) => Ok(()),
            // The encoder stopped: its error says why.
            _ => Err(self.join().err().unwrap_or_else(|| {
                Error::parquet(&self.path, "the Parquet encoder stopped early")
            })),
        }
    }

    /// Waits for the encoder, which ends once the sender is dropped.
    fn join(&mut self) -> Result<(), Error> {
        self.batches = None;
        match self.encoder.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(Error::parquet(&self.path, "the Parquet encoder panicked")),
            None => Ok(()),
        }
    }

    /// Writes what is buffered and closes the file.
    pub fn finish(mut self) -> Result<(), Error> {
        self.flush()?;
        self.join()
    }
}

/// A row being appended to a [`Table`]: see [`Table::row`]. A value of
/// the wrong kind for its column is written as null (a caller bug, not
/// input).
pub struct Row<'a> {
    t: &'a mut Table,
    at: usize,
}

impl Row<'_> {
    /// The next column, for a value.
    #[inline]
    fn values(&mut self) -> Option<&mut Builder> {
        let slot = self.t.slots.get_mut(self.at);
        self.at += 1;
        slot.map(Slot::values)
    }

    /// An unsigned number (u8 to u64 and bool columns; too large for the
    /// column is null).
    #[inline]
    pub fn u(&mut self, v: u64) -> &mut Self {
        match self.values() {
            Some(Builder::U64(b)) => b.append_value(v),
            Some(Builder::U32(b)) => b.append_option(u32::try_from(v).ok()),
            Some(Builder::U16(b)) => b.append_option(u16::try_from(v).ok()),
            Some(Builder::U8(b)) => b.append_option(u8::try_from(v).ok()),
            Some(Builder::Bool(b)) => b.append_value(v != 0),
            Some(b) => b.append_null(),
            None => {}
        }
        self
    }

    /// An unsigned number or null.
    #[inline]
    pub fn opt_u(&mut self, v: Option<u64>) -> &mut Self {
        match v {
            Some(v) => self.u(v),
            None => self.null(),
        }
    }

    /// A signed 32-bit number or null.
    #[inline]
    pub fn opt_i32(&mut self, v: Option<i32>) -> &mut Self {
        let Some(v) = v else {
            return self.null();
        };
        match self.values() {
            Some(Builder::I32(b)) => b.append_value(v),
            Some(b) => b.append_null(),
            None => {}
        }
        self
    }

    /// Text.
    #[inline]
    pub fn str(&mut self, v: &str) -> &mut Self {
        match self.values() {
            Some(Builder::Str(b)) => b.append_value(v),
            Some(b) => b.append_null(),
            None => {}
        }
        self
    }

    /// Text or null.
    #[inline]
    pub fn opt_str(&mut self, v: Option<&str>) -> &mut Self {
        match v {
            Some(v) => self.str(v),
            None => self.null(),
        }
    }

    /// Bytes.
    #[inline]
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        match self.values() {
            Some(Builder::Bytes(b)) => b.append_value(v),
            Some(b) => b.append_null(),
            None => {}
        }
        self
    }

    /// A list of u32.
    #[inline]
    pub fn list(&mut self, v: &[u32]) -> &mut Self {
        match self.values() {
            Some(Builder::ListU32(b)) => {
                b.values().append_slice(v);
                b.append(true);
            }
            Some(b) => b.append_null(),
            None => {}
        }
        self
    }

    /// Null.
    #[inline]
    pub fn null(&mut self) -> &mut Self {
        if let Some(slot) = self.t.slots.get_mut(self.at) {
            slot.null();
        }
        self.at += 1;
        self
    }

    /// Completes the row: cells not given are null.
    pub fn end(&mut self) -> Result<(), Error> {
        // One pass over the rest, without a bounds check per cell: rows
        // often end with many columns not given (the samples table's
        // m0..m15 without a group read).
        for slot in self.t.slots.iter_mut().skip(self.at) {
            slot.null();
        }
        self.at = self.t.slots.len();
        self.t.rows += 1;
        if self.t.rows >= ROWS_PER_GROUP {
            self.t.flush()?;
        }
        Ok(())
    }
}

impl Drop for Table {
    /// An abandoned table still stops its encoder thread.
    fn drop(&mut self) {
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    #[test]
    fn plain_and_delta_settings_reach_list_items() {
        let dir = crate::oracle::scratch("table");
        let path = dir.join("t.parquet");
        let columns = [
            Column::new("plain_list", ColumnType::ListU32).plain(),
            Column::new("delta_list", ColumnType::ListU32).delta(),
            Column::new("dict_list", ColumnType::ListU32),
            Column::new("bare_list", ColumnType::ListU32).without_statistics(),
            Column::new("bare_text", ColumnType::Str).without_statistics(),
        ];
        let mut t = Table::create(&path, &columns).unwrap();
        for i in 0..1000u32 {
            let v = [i % 7, i % 5, i];
            t.row()
                .list(&v)
                .list(&v)
                .list(&v)
                .list(&v)
                .str("x")
                .end()
                .unwrap();
        }
        t.finish().unwrap();
        let r = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let rg = r.metadata().row_group(0);
        let encodings = |i: usize| rg.column(i).encodings().collect::<Vec<_>>();
        assert!(!encodings(0).contains(&Encoding::RLE_DICTIONARY));
        assert!(encodings(1).contains(&Encoding::DELTA_BINARY_PACKED));
        assert!(encodings(2).contains(&Encoding::RLE_DICTIONARY));
        for i in 0..3 {
            assert!(rg.column(i).statistics().is_some(), "column {i}");
        }
        assert!(rg.column(3).statistics().is_none());
        assert!(rg.column(4).statistics().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Counter values, compressed with shorter matches, and the columns
    /// beside them at level 1 on the same encoding threads, read back as
    /// written (Parquet's reader is the oracle); their chunks are zstd.
    #[test]
    fn counter_columns_read_back() {
        use arrow_array::cast::AsArray;
        use arrow_array::types::UInt64Type;
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

        let dir = crate::oracle::scratch("counters");
        let path = dir.join("t.parquet");
        let columns = [
            Column::new("value", ColumnType::U64).plain().counters(),
            Column::new("ip", ColumnType::U64).plain(),
        ];
        let mut t = Table::create(&path, &columns).unwrap();
        // Ten counters a sample, each growing by its own rate.
        let value = |i: u64| (i % 10 + 1) * 1_000_003 * (i / 10) + (i * 7919) % 4093;
        let ip = |i: u64| 0x7f00_0000_0000 + i.wrapping_mul(0x9e37_79b9) % (1 << 24);
        let rows = 3 * ROWS_PER_GROUP as u64 / 2;
        for i in 0..rows {
            t.row().u(value(i)).u(ip(i)).end().unwrap();
        }
        t.finish().unwrap();
        let file = File::open(&path).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        for rg in reader.metadata().row_groups() {
            for c in rg.columns() {
                assert!(matches!(c.compression(), Compression::ZSTD(_)));
            }
        }
        let (mut values, mut ips): (Vec<u64>, Vec<u64>) = (Vec::new(), Vec::new());
        for batch in reader.build().unwrap() {
            let batch = batch.unwrap();
            values.extend(batch.column(0).as_primitive::<UInt64Type>().values().iter());
            ips.extend(batch.column(1).as_primitive::<UInt64Type>().values().iter());
        }
        assert_eq!(values, (0..rows).map(value).collect::<Vec<_>>());
        assert_eq!(ips, (0..rows).map(ip).collect::<Vec<_>>());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
