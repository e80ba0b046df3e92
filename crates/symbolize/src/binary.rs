//! An ELF file opened once: its build id, load segments, function symbols,
//! and its DWARF on demand.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use rustc_hash::FxHashMap;

use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, ObjectSymbolTable, SymbolKind};

use crate::locate::build_id_hex;
use crate::symbol_disk::SymbolDisk;
use crate::symtab::{prefer_second, Rank, RawSymbol, SymbolTable};

/// Why a binary could not be used.
#[derive(Debug, thiserror::Error)]
pub enum BinaryError {
    /// It could not be read.
    #[error("{path}: {err}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
    /// It is not an object file perfq reads.
    #[error("{path}: not a readable ELF file: {err}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The error.
        err: object::Error,
    },
}

/// A mapped file.
pub(crate) fn map(path: &Path) -> Result<Arc<memmap2::Mmap>, BinaryError> {
    let file = std::fs::File::open(path).map_err(|err| BinaryError::Io {
        path: path.into(),
        err,
    })?;
    // SAFETY: read-only map of a file perfq does not modify (a binary, or
    // a symbol table the symbol disk renamed into place whole); a file
    // rewritten while perfq runs could show torn data, as for any reader.
    let data = unsafe { memmap2::Mmap::map(&file) }.map_err(|err| BinaryError::Io {
        path: path.into(),
        err,
    })?;
    Ok(Arc::new(data))
}

/// The build id of the ELF file at `path`, if it has one.
pub fn file_build_id(path: &Path) -> Result<Option<Vec<u8>>, BinaryError> {
    let data = map(path)?;
    let obj = parse_object(path, &data)?;
    Ok(obj.build_id().ok().flatten().map(<[u8]>::to_vec))
}

/// `data`, the bytes of the file `path`, read as an object file.
fn parse_object<'d>(path: &Path, data: &'d [u8]) -> Result<object::File<'d>, BinaryError> {
    object::File::parse(data).map_err(|err| BinaryError::Parse {
        path: path.into(),
        err,
    })
}

/// An ELF binary as mapped by a process, with its symbols and DWARF taken
/// from a separate debug file when one was found (as perf prefers).
pub struct Binary {
    path: PathBuf,
    build_id: Option<Vec<u8>>,
    /// PT_LOAD segments of the runtime file: (file offset, file size, virtual address).
    segments: Vec<(u64, u64, u64)>,
    symbols: SymbolTable,
    /// The names of the symbols resolved so far, by symbol start: a
    /// function is demangled once however many lookups (and report
    /// slices) meet it, and only the functions met are kept.
    names: Mutex<SymbolNames>,
    /// The file whose DWARF is used, if any has DWARF.
    dwarf_file: Option<Arc<memmap2::Mmap>>,
    /// The DWARF sections, decompressed once (debug files often compress
    /// them: inflating libc's takes tens of milliseconds) and shared by
    /// the contexts each thread builds.
    dwarf_sections: OnceLock<Option<DwarfSections>>,
    /// The debug file used for symbols or DWARF, if any.
    debug_path: Option<PathBuf>,
    /// Call-frame information for unwinding user stacks.
    unwind: UnwindSections,
}

/// Shown (demangled) and stored names of a binary's symbols, by symbol
/// start, shared by every location in them.
#[derive(Debug, Default)]
pub(crate) struct SymbolNames {
    by_start: FxHashMap<u64, (Arc<str>, Arc<str>)>,
}

impl SymbolNames {
    /// The (shown, stored) names of symbol `s`, demangled the first time.
    pub(crate) fn of(&mut self, s: crate::symtab::Symbol<'_>) -> (Arc<str>, Arc<str>) {
        let (shown, raw) = self.by_start.entry(s.start).or_insert_with(|| {
            (
                Arc::from(crate::demangle::display_name(s.name)),
                Arc::from(s.name),
            )
        });
        (shown.clone(), raw.clone())
    }
}

/// A byte range of a mapped file, shared.
#[derive(Clone)]
pub struct FileBytes {
    map: Arc<memmap2::Mmap>,
    range: std::ops::Range<usize>,
}

impl FileBytes {
    /// `size` bytes at `offset` of `map`, if the file has them.
    pub(crate) fn new(map: &Arc<memmap2::Mmap>, offset: u64, size: u64) -> Option<FileBytes> {
        let range =
            usize::try_from(offset).ok()?..usize::try_from(offset.checked_add(size)?).ok()?;
        map.get(range.clone())?;
        Some(FileBytes {
            map: map.clone(),
            range,
        })
    }

    /// Hands the pages of these bytes read so far back to the OS; a later
    /// read faults them in again from the page cache.
    pub(crate) fn release_pages(&self) {
        release_pages(&self.map, self.range.clone());
    }
}

/// Hands the pages of `range` of `map` read so far back to the OS.
fn release_pages(map: &memmap2::Mmap, range: std::ops::Range<usize>) {
    // SAFETY: perfq maps files read-only and never writes them;
    // MADV_DONTNEED only drops this process's page table entries, and the
    // next access reads the same bytes again. No reference into the map
    // is invalidated.
    let _ = unsafe {
        map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, range.start, range.len())
    };
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.get(self.range.clone()).unwrap_or(&[])
    }
}

/// One section for unwinding: its address range and bytes.
#[derive(Clone)]
pub struct SectionBytes {
    /// Stated virtual address range.
    pub svma: std::ops::Range<u64>,
    /// Its bytes.
    pub data: FileBytes,
}

/// The sections a CFI unwinder needs.
#[derive(Clone, Default)]
pub struct UnwindSections {
    /// The address the first PT_LOAD segment is linked at.
    pub base_svma: u64,
    /// `.text`.
    pub text: Option<SectionBytes>,
    /// `.eh_frame`.
    pub eh_frame: Option<SectionBytes>,
    /// `.eh_frame_hdr`.
    pub eh_frame_hdr: Option<SectionBytes>,
    /// `.debug_frame` (from the debug file when it has one).
    pub debug_frame: Option<SectionBytes>,
}

fn section_bytes(
    obj: &object::File<'_>,
    map: &Arc<memmap2::Mmap>,
    name: &str,
) -> Option<SectionBytes> {
    let s = obj.section_by_name(name)?;
    let (off, size) = s.file_range()?;
    Some(SectionBytes {
        svma: s.address()..s.address() + s.size(),
        data: FileBytes::new(map, off, size)?,
    })
}

impl std::fmt::Debug for Binary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Binary")
            .field("path", &self.path)
            .field("debug_path", &self.debug_path)
            .field("symbols", &self.symbols.len())
            .finish()
    }
}

impl Binary {
    /// Opens and indexes the runtime file `path`, alone.
    pub fn open(path: &Path) -> Result<Binary, BinaryError> {
        Binary::open_with_debug(path, None)
    }

    /// Opens the runtime file `path` and, when given, its debug file. Symbols
    /// come from the first of (debug file, runtime file) that has a
    /// `.symtab`, else from the runtime `.dynsym`; PLT entries are named
    /// `sym@plt` from the runtime relocations; DWARF comes from the first
    /// that has `.debug_info`.
    pub fn open_with_debug(path: &Path, debug: Option<&Path>) -> Result<Binary, BinaryError> {
        Binary::open_kept(path, debug, None)
    }

    /// [`Binary::open_with_debug`], with the symbol table read from
    /// `disk` when it holds the one of this build id, and kept there
    /// when it did not.
    pub fn open_kept(
        path: &Path,
        debug: Option<&Path>,
        disk: Option<&SymbolDisk>,
    ) -> Result<Binary, BinaryError> {
        let data = map(path)?;
        let obj = parse_object(path, &data)?;
        let build_id = obj.build_id().ok().flatten().map(<[u8]>::to_vec);
        let debug_data = match debug {
            Some(p) => Some((p, map(p)?)),
            None => None,
        };
        let debug_file = match &debug_data {
            Some((p, d)) => Some((parse_object(p, d)?, d)),
            None => None,
        };
        let debug_obj = debug_file.as_ref().map(|(o, d)| (o, *d));
        let key = symbol_table_key(path, debug, build_id.as_deref(), &obj, debug_obj);
        let symbols = kept_or_read_symbols(disk.zip(key), &obj, debug_obj.map(|(o, _)| o));
        Ok(Binary {
            path: path.into(),
            build_id,
            segments: load_segments(&obj),
            symbols,
            names: Mutex::default(),
            dwarf_file: dwarf_file(&obj, &data, debug_obj),
            dwarf_sections: OnceLock::new(),
            debug_path: debug.map(Path::to_path_buf),
            unwind: unwind_sections(&obj, &data, debug_obj),
        })
    }

    /// The runtime file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The debug file used, if any.
    pub fn debug_path(&self) -> Option<&Path> {
        self.debug_path.as_deref()
    }

    /// Its GNU build id.
    pub fn build_id(&self) -> Option<&[u8]> {
        self.build_id.as_deref()
    }

    /// The function symbols.
    pub fn symbols(&self) -> &SymbolTable {
        &self.symbols
    }

    /// The names of the symbols resolved so far (locked for a lookup: the
    /// tasks resolving DSOs that share the file share them).
    pub(crate) fn names(&self) -> MutexGuard<'_, SymbolNames> {
        // A panic while the lock was held left at worst a name missing.
        self.names.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Call-frame information for unwinding.
    pub fn unwind_sections(&self) -> &UnwindSections {
        &self.unwind
    }

    /// Whether DWARF debug info is available.
    pub fn has_dwarf(&self) -> bool {
        self.dwarf_file.is_some()
    }

    /// The virtual address of file offset `off` (through the PT_LOAD
    /// segment that contains it); the offset itself when no segment does.
    pub fn vaddr_of_offset(&self, off: u64) -> u64 {
        for &(o, size, vaddr) in &self.segments {
            if off >= o && off - o < size {
                return vaddr + (off - o);
            }
        }
        off
    }

    /// The load bias of a mapping of this file that starts at address
    /// `start` with file offset `pgoff`: runtime address minus linked
    /// address. The kernel maps each PT_LOAD from its page-aligned offset,
    /// so the segment whose offset rounds down to `pgoff` says where the
    /// mapping's first byte is linked (offsets and addresses of a segment
    /// can differ by more than the page, e.g. in Rust binaries).
    pub fn load_bias(&self, start: u64, pgoff: u64) -> u64 {
        const PAGE: u64 = 4096;
        let linked = self
            .segments
            .iter()
            .find(|&&(o, size, _)| size > 0 && o & !(PAGE - 1) == pgoff)
            .map(|&(o, _, vaddr)| vaddr - (o - pgoff))
            .unwrap_or_else(|| self.vaddr_of_offset(pgoff));
        start.wrapping_sub(linked)
    }

    /// A DWARF context for this binary's debug info, built on demand. It
    /// is not `Sync`: build one per thread that resolves this binary.
    pub fn dwarf(&self) -> Option<addr2line::Context<Reader>> {
        let sections = self.dwarf_sections()?;
        let load = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
            let bytes = sections
                .bytes
                .iter()
                .find(|(s, _)| *s == id)
                .map_or_else(SharedBytes::empty, |(_, b)| b.clone());
            Ok(gimli::EndianReader::new(bytes, sections.endian))
        };
        let dwarf = gimli::Dwarf::load(load).ok()?;
        addr2line::Context::from_dwarf(dwarf).ok()
    }

    /// The DWARF sections, read (and decompressed) on first use.
    fn dwarf_sections(&self) -> Option<&DwarfSections> {
        self.dwarf_sections
            .get_or_init(|| {
                let data = self.dwarf_file.as_ref()?;
                let obj = object::File::parse(&data[..]).ok()?;
                let endian = if obj.is_little_endian() {
                    gimli::RunTimeEndian::Little
                } else {
                    gimli::RunTimeEndian::Big
                };
                let mut bytes = Vec::new();
                // What gimli::Dwarf::load asks for, except what finding
                // functions, inline chains and lines never reads: variable
                // location lists and macros (in a distribution's libc debug
                // file the location lists alone are a sixth of the
                // compressed DWARF, all inflated for nothing).
                let _ = gimli::Dwarf::load(|id: gimli::SectionId| -> Result<(), gimli::Error> {
                    use gimli::SectionId::{DebugLoc, DebugLocLists, DebugMacinfo, DebugMacro};
                    if matches!(id, DebugLoc | DebugLocLists | DebugMacinfo | DebugMacro) {
                        return Ok(());
                    }
                    let Some(section) = obj.section_by_name(id.name()) else {
                        return Ok(());
                    };
                    // A section stored as is is read from the mapped file
                    // (only the pages addr2line touches are ever read: a
                    // large debug build's DWARF is not copied whole);
                    // a compressed one is inflated once.
                    let b = match section.compressed_file_range() {
                        Ok(r) if r.format == object::CompressionFormat::None => {
                            match FileBytes::new(data, r.offset, r.compressed_size) {
                                Some(b) => SharedBytes::Mapped(b),
                                None => return Ok(()),
                            }
                        }
                        _ => match section.uncompressed_data() {
                            Ok(Cow::Owned(v)) => SharedBytes::Owned(Arc::from(v)),
                            Ok(Cow::Borrowed(b)) => SharedBytes::Owned(Arc::from(b)),
                            Err(_) => return Ok(()),
                        },
                    };
                    bytes.push((id, b));
                    Ok(())
                });
                Some(DwarfSections { endian, bytes })
            })
            .as_ref()
    }

    /// Bytes this binary holds on the heap: its symbol table and, once
    /// read, its DWARF sections (the mapped files are not counted: the OS
    /// pages them in and out).
    pub fn heap_bytes(&self) -> u64 {
        let dwarf: usize = self
            .dwarf_sections
            .get()
            .and_then(Option::as_ref)
            .map_or(0, |d| {
                d.bytes
                    .iter()
                    .map(|(_, b)| match b {
                        SharedBytes::Owned(b) => b.len(),
                        SharedBytes::Mapped(_) => 0,
                    })
                    .sum()
            });
        self.symbols.heap_bytes() + dwarf as u64
    }

    /// Hands the pages of the DWARF file read so far back to the OS. A
    /// debug build's DWARF is hundreds of MB; what addr2line reads of it
    /// goes into its own parsed tables, so the file's pages need not stay
    /// mapped in (a later read faults them in again from the page cache).
    pub fn release_dwarf_pages(&self) {
        if let Some(m) = &self.dwarf_file {
            release_pages(m, 0..m.len());
        }
    }

    /// Hands the pages of the symbol table read so far back to the OS,
    /// when it is read from the symbol disk: once a set of lookups is
    /// done, so that a large binary's table does not stay resident while
    /// the frames are written. A later lookup pages it in again.
    pub fn release_symbol_pages(&self) {
        self.symbols.release_pages();
    }

    /// Reads and decompresses the DWARF sections now, so that resolving
    /// later does not wait for them (see `Symbolizer::prepare`).
    pub fn warm_dwarf(&self) {
        let _ = self.dwarf_sections();
    }
}

/// `f` and a hash of the path, device, inode, length and modification
/// time of `path` and `debug`: what tells a file without a build id from
/// another (or from itself rebuilt).
fn file_identity(path: &Path, debug: Option<&Path>) -> Option<String> {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::MetadataExt;
    let mut h = rustc_hash::FxHasher::default();
    for p in std::iter::once(path).chain(debug) {
        let p = p.canonicalize().ok()?;
        let m = std::fs::metadata(&p).ok()?;
        (p, m.dev(), m.ino(), m.len(), m.mtime(), m.mtime_nsec()).hash(&mut h);
    }
    Some(format!("f{:016x}", h.finish()))
}

/// An object file with the mapped bytes it was read from.
type Mapped<'o, 'd> = (&'o object::File<'d>, &'o Arc<memmap2::Mmap>);

/// PT_LOAD segments: (file offset, file size, virtual address).
fn load_segments(obj: &object::File<'_>) -> Vec<(u64, u64, u64)> {
    obj.segments()
        .map(|s| {
            let (off, size) = s.file_range();
            (off, size, s.address())
        })
        .collect()
}

/// The key a binary's symbol table is kept under on the symbol disk: its
/// build id, or, for binaries without one (Rust's toolchain libraries),
/// the identity of the files it was read from. The sizes of the symbol
/// sections and PLT relocations are part of the key (stripping keeps the
/// build id).
fn symbol_table_key(
    path: &Path,
    debug: Option<&Path>,
    build_id: Option<&[u8]>,
    obj: &object::File<'_>,
    debug_obj: Option<Mapped<'_, '_>>,
) -> Option<String> {
    let id = build_id_hex(build_id).or_else(|| file_identity(path, debug))?;
    let size = |o: &object::File<'_>, name: &str| o.section_by_name(name).map_or(0, |s| s.size());
    let src = debug_obj.map_or(obj, |(o, _)| o);
    // `p3`: PLT (with its `.plt` header) and `.plt.got` stubs named
    // as perf >= 6.3 names them.
    Some(format!(
        "{id}-{}-{:x}-{:x}-{:x}-p3",
        if debug_obj.is_some() { 'd' } else { 'r' },
        size(src, ".symtab"),
        size(obj, ".dynsym"),
        size(obj, ".rela.plt")
    ))
}

/// The symbol table `kept` holds under its key, else the one read from
/// the files (and then kept there).
fn kept_or_read_symbols(
    kept: Option<(&SymbolDisk, String)>,
    obj: &object::File<'_>,
    debug_obj: Option<&object::File<'_>>,
) -> SymbolTable {
    if let Some(t) = kept.as_ref().and_then(|(d, key)| d.load(key)) {
        return t;
    }
    let t = read_symbols(obj, debug_obj);
    if let Some((d, key)) = &kept {
        d.store(key, &t);
    }
    t
}

/// The functions of the first of (debug file, runtime file) that has a
/// `.symtab`, else of the runtime `.dynsym`, with the PLT and `.plt.got`
/// stubs of the runtime file.
fn read_symbols(obj: &object::File<'_>, debug_obj: Option<&object::File<'_>>) -> SymbolTable {
    let mut raw = debug_obj
        .map(|o| collect_functions(o.symbols()))
        .unwrap_or_default();
    if raw.is_empty() {
        raw = collect_functions(obj.symbols());
    }
    if raw.is_empty() {
        raw = collect_functions(obj.dynamic_symbols());
    }
    let objs = [debug_obj, Some(obj)];
    let ifuncs = std::cell::OnceCell::new();
    let ifunc_at = |addr: u64| {
        ifuncs
            .get_or_init(|| ifunc_names(objs.into_iter().flatten()))
            .get(&addr)
            .cloned()
    };
    raw.extend(plt_symbols(obj, &ifunc_at));
    raw.extend(plt_got_symbols(obj));
    SymbolTable::new(raw)
}

/// The file whose DWARF is used: the debug file when it has DWARF, else
/// the runtime file when it has.
fn dwarf_file(
    obj: &object::File<'_>,
    data: &Arc<memmap2::Mmap>,
    debug_obj: Option<Mapped<'_, '_>>,
) -> Option<Arc<memmap2::Mmap>> {
    let has_dwarf = |o: &object::File<'_>| {
        o.section_by_name(".debug_info")
            .is_some_and(|s| s.size() > 0)
    };
    match debug_obj {
        Some((o, d)) if has_dwarf(o) => Some(d.clone()),
        _ if has_dwarf(obj) => Some(data.clone()),
        _ => None,
    }
}

/// The runtime file's sections for unwinding, with `.debug_frame` from
/// the debug file when it has one.
fn unwind_sections(
    obj: &object::File<'_>,
    data: &Arc<memmap2::Mmap>,
    debug_obj: Option<Mapped<'_, '_>>,
) -> UnwindSections {
    let base_svma = obj
        .segments()
        .filter(|s| s.file_range().1 > 0)
        .map(|s| s.address())
        .min()
        .unwrap_or(0);
    let debug_frame = debug_obj
        .and_then(|(o, d)| section_bytes(o, d, ".debug_frame"))
        .or_else(|| section_bytes(obj, data, ".debug_frame"));
    UnwindSections {
        base_svma,
        text: section_bytes(obj, data, ".text"),
        eh_frame: section_bytes(obj, data, ".eh_frame"),
        eh_frame_hdr: section_bytes(obj, data, ".eh_frame_hdr"),
        debug_frame,
    }
}

/// A binary's DWARF sections, decompressed.
struct DwarfSections {
    endian: gimli::RunTimeEndian,
    bytes: Vec<(gimli::SectionId, SharedBytes)>,
}

/// Bytes shared by their readers: a range of a mapped file, read in
/// place, or a slice on the heap. A DWARF section is mapped when the file
/// stores it as is and inflated when compressed; a symbol table is mapped
/// when read back from the symbol disk and on the heap when just built.
#[derive(Clone)]
pub enum SharedBytes {
    /// In a mapped file: read in place.
    Mapped(FileBytes),
    /// On the heap (decompressed, built, or read from a file not kept
    /// mapped).
    Owned(Arc<[u8]>),
}

impl SharedBytes {
    /// No bytes (a section the file does not have).
    pub fn empty() -> SharedBytes {
        SharedBytes::Owned(Arc::from(&[][..]))
    }
}

impl Default for SharedBytes {
    fn default() -> Self {
        SharedBytes::empty()
    }
}

impl std::ops::Deref for SharedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            SharedBytes::Mapped(b) => b,
            SharedBytes::Owned(b) => b,
        }
    }
}

impl std::fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SharedBytes::Mapped(b) => write!(f, "Mapped({} bytes)", b.len()),
            SharedBytes::Owned(b) => write!(f, "Owned({} bytes)", b.len()),
        }
    }
}

// SAFETY: both variants deref to memory that neither moves with the value
// nor differs between clones: a shared mapping (its address is fixed
// until the last `Arc` drops) or a shared heap slice.
unsafe impl stable_deref_trait::StableDeref for SharedBytes {}
// SAFETY: as above; a clone shares the same mapping or slice.
unsafe impl stable_deref_trait::CloneStableDeref for SharedBytes {}

/// PLT stubs named `sym@plt`, as perf (6.3 and later) synthesizes them:
/// the `.rela.plt` relocations, sorted by GOT slot on x86 (IFUNC
/// relocations come last in the section but not last in the PLT), name
/// the PLT entries after the header in order (the entries of `.plt.sec`
/// when IBT split them out). A relocation without a symbol is an x86-64
/// `R_X86_64_IRELATIVE`, named after the IFUNC at its addend (libc calls
/// its own `strlen` so), else `offset_0x…@plt` with the entry's file
/// offset. The header is `.plt` (all of `.plt` when `.plt.sec` holds the
/// stubs). perf 6.1 took the relocations in section order and named those
/// without a symbol `@plt`: on glibc it put most names on the wrong stub.
fn plt_symbols(
    obj: &object::File<'_>,
    ifuncs: &dyn Fn(u64) -> Option<String>,
) -> Vec<RawSymbol<'static>> {
    let mut out = Vec::new();
    let Some((rels, is_rela)) = plt_relocations(obj) else {
        return out;
    };
    let Some(lazy) = obj.section_by_name(".plt") else {
        return out;
    };
    let (plt, header, stride) = plt_stub_layout(obj, lazy, rels.len() as u64, &mut out);
    let Some(dynsyms) = obj.dynamic_symbol_table() else {
        return out;
    };
    let (file_base, _) = plt.file_range().unwrap_or((plt.address(), 0));
    for (i, r) in rels.iter().enumerate() {
        let at = header + stride * i as u64;
        let name = dynamic_symbol_name(&dynsyms, r.sym)
            .or_else(|| {
                (is_rela
                    && r.ty == u64::from(object::elf::R_X86_64_IRELATIVE.0)
                    && obj.architecture() == object::Architecture::X86_64)
                    .then(|| ifuncs(r.addend))
                    .flatten()
            })
            .unwrap_or_else(|| format!("offset_{:#x}", file_base.wrapping_add(at)));
        out.push(stub(
            plt.address().wrapping_add(at),
            stride,
            format!("{name}@plt"),
        ));
    }
    out
}

/// A relocation of `.rela.plt` or `.rel.plt`.
struct PltReloc {
    /// The GOT slot it fills.
    slot: u64,
    /// Its symbol's index in the dynamic symbol table.
    sym: u64,
    /// Its type.
    ty: u64,
    /// Its addend (0 for REL).
    addend: u64,
}

/// The PLT relocations (`.rela.plt`, else `.rel.plt`), in the order of
/// the stubs they name: sorted by GOT slot on x86. With whether they are
/// RELA (have addends).
fn plt_relocations(obj: &object::File<'_>) -> Option<(Vec<PltReloc>, bool)> {
    let (rel, is_rela) = match (
        obj.section_by_name(".rela.plt"),
        obj.section_by_name(".rel.plt"),
    ) {
        (Some(s), _) => (s, true),
        (None, Some(s)) => (s, false),
        _ => return None,
    };
    let data = rel.data().ok()?;
    let is64 = obj.is_64();
    let width = if is64 { 8 } else { 4 };
    let entry = width * if is_rela { 3 } else { 2 };
    let little = obj.is_little_endian();
    let mut rels: Vec<PltReloc> = data
        .chunks_exact(entry)
        .map(|r| {
            let word = |b: &[u8]| elf_word(b, little);
            let (offset, info) = (word(&r[..width]), word(&r[width..2 * width]));
            let addend = if is_rela { word(&r[2 * width..]) } else { 0 };
            let (sym, ty) = if is64 {
                (info >> 32, info & 0xffff_ffff)
            } else {
                (info >> 8, info & 0xff)
            };
            PltReloc {
                slot: offset,
                sym,
                ty,
                addend,
            }
        })
        .collect();
    if is_x86(obj.architecture()) {
        rels.sort_by_key(|r| r.slot);
    }
    Some((rels, is_rela))
}

/// Where the stubs of `count` PLT relocations are: their section (`.plt`,
/// or `.plt.sec` with IBT), the first one's offset in it and the stride.
/// The `.plt` header (the lazy binder's entry) is a symbol of its own,
/// `.plt`, as perf names it, pushed to `out`; with IBT's `.plt.sec`
/// holding the stubs, all of `.plt` is (its lazy-binding pushes are not
/// the stubs callers jump to).
fn plt_stub_layout<'d, 'f>(
    obj: &'f object::File<'d>,
    lazy: object::Section<'d, 'f>,
    count: u64,
    out: &mut Vec<RawSymbol<'static>>,
) -> (object::Section<'d, 'f>, u64, u64) {
    let header_symbol = |size: u64| stub(lazy.address(), size, ".plt".to_owned());
    match obj.section_by_name(".plt.sec") {
        Some(sec) if is_x86(obj.architecture()) => {
            out.push(header_symbol(lazy.size()));
            (sec, 0, 16)
        }
        _ => {
            let (header, stride) = match obj.architecture() {
                object::Architecture::Aarch64 => (32, 16),
                object::Architecture::Arm => (20, 12),
                _ => (16, 16),
            };
            // A .plt with as many entries as relocations is not lazy
            // and has no header.
            if count.saturating_mul(stride) == lazy.size() {
                (lazy, 0, stride)
            } else {
                out.push(header_symbol(header));
                (lazy, header, stride)
            }
        }
    }
}

/// A 4- or 8-byte word of an ELF file, little- or big-endian.
fn elf_word(b: &[u8], little: bool) -> u64 {
    match *b {
        [a, b, c, d] => {
            let x = [a, b, c, d];
            u64::from(if little {
                u32::from_le_bytes(x)
            } else {
                u32::from_be_bytes(x)
            })
        }
        _ => {
            let x: [u8; 8] = b.try_into().unwrap_or_default();
            if little {
                u64::from_le_bytes(x)
            } else {
                u64::from_be_bytes(x)
            }
        }
    }
}

/// Whether `arch` is one of x86's, whose PLTs perf names by GOT slot.
fn is_x86(arch: object::Architecture) -> bool {
    matches!(
        arch,
        object::Architecture::X86_64
            | object::Architecture::X86_64_X32
            | object::Architecture::I386
    )
}

/// The name of dynamic symbol `index`, unless it has none.
fn dynamic_symbol_name(table: &object::SymbolTable<'_, '_>, index: u64) -> Option<String> {
    table
        .symbol_by_index(object::SymbolIndex(index as usize))
        .ok()
        .and_then(|s| s.name().ok().filter(|n| !n.is_empty()).map(str::to_owned))
}

/// A synthesized PLT symbol: global, as perf makes them.
fn stub(start: u64, size: u64, name: String) -> RawSymbol<'static> {
    RawSymbol {
        start,
        size,
        name: name.into(),
        rank: Rank { binding: 2 },
        module: false,
    }
}

/// `sh_entsize` of the ELF section `name`.
fn section_entsize(obj: &object::File<'_>, name: &str) -> Option<u64> {
    use object::read::elf::SectionHeader as _;
    match obj {
        object::File::Elf64(f) => {
            let s = f.section_by_name(name)?;
            Some(s.elf_section_header().sh_entsize(f.endian()))
        }
        object::File::Elf32(f) => {
            let s = f.section_by_name(name)?;
            Some(u64::from(s.elf_section_header().sh_entsize(f.endian())))
        }
        _ => None,
    }
}

/// x86's `.plt.got` stubs (functions whose address is also taken: glibc
/// calls its own `malloc` and `free` through them), named as perf >= 6.3
/// names them: each stub's `jmp *disp(%rip)` reads a GOT slot, and the
/// `.rela.dyn` relocation of that slot names the function (`free@plt`);
/// a stub without one is `offset_0x…@plt` (its file offset), as are all
/// of a 32-bit binary's.
fn plt_got_symbols(obj: &object::File<'_>) -> Vec<RawSymbol<'static>> {
    let mut out = Vec::new();
    let arch = obj.architecture();
    if !is_x86(arch) {
        return out;
    }
    let Some(sec) = obj.section_by_name(".plt.got") else {
        return out;
    };
    let Some(entsize) = section_entsize(obj, ".plt.got").filter(|&e| e > 0) else {
        return out;
    };
    let Ok(code) = sec.data() else { return out };
    // GOT slot -> symbol index, from `.rela.dyn` (64-bit RELA only).
    let slots: FxHashMap<u64, u64> = match (arch, obj.section_by_name(".rela.dyn")) {
        (object::Architecture::X86_64, Some(rela)) if obj.is_64() => rela
            .data()
            .unwrap_or_default()
            .chunks_exact(24)
            .filter_map(|r| {
                let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
                let (offset, sym) = (word(&r[..8]), word(&r[8..16]) >> 32);
                (sym != 0).then_some((offset, sym))
            })
            .collect(),
        _ => FxHashMap::default(),
    };
    let dynsyms = obj.dynamic_symbol_table();
    let (file_base, _) = sec.file_range().unwrap_or((sec.address(), 0));
    let mut at = 0u64;
    // Only the stubs the file holds (a crafted size makes no more).
    while at.saturating_add(entsize) <= code.len() as u64 {
        let entry = usize::try_from(at)
            .ok()
            .and_then(|a| code.get(a..a.saturating_add(entsize as usize)));
        let name = entry
            .and_then(jmp_target)
            .and_then(|to| slots.get(&sec.address().wrapping_add(at).wrapping_add(to)))
            .and_then(|&i| dynamic_symbol_name(dynsyms.as_ref()?, i))
            .unwrap_or_else(|| format!("offset_{:#x}", file_base.wrapping_add(at)));
        out.push(stub(
            sec.address().wrapping_add(at),
            entsize,
            format!("{name}@plt"),
        ));
        at += entsize;
    }
    out
}

/// Where an x86-64 stub's `jmp *disp32(%rip)` (after an `endbr64` and a
/// `bnd` prefix, when there) points, from the stub's start.
fn jmp_target(stub: &[u8]) -> Option<u64> {
    let mut n = 0;
    if stub.starts_with(&[0xf3, 0x0f, 0x1e, 0xfa]) {
        n += 4;
    }
    if stub.get(n) == Some(&0xf2) {
        n += 1;
    }
    if stub.get(n..n + 2)? != [0xff, 0x25] {
        return None;
    }
    let disp = i32::from_le_bytes(stub.get(n + 2..n + 6)?.try_into().ok()?);
    // From the end of the instruction.
    Some((n as u64 + 6).wrapping_add(disp as i64 as u64))
}

/// The IFUNC symbols of `objs` (their symbol and dynamic symbol tables)
/// by address: at each, the one perf's `choose_best_symbol` keeps.
fn ifunc_names<'a, 'd: 'a>(
    objs: impl Iterator<Item = &'a object::File<'d>>,
) -> FxHashMap<u64, String> {
    let mut best: FxHashMap<u64, RawSymbol<'static>> = FxHashMap::default();
    for o in objs {
        for s in o.symbols().chain(o.dynamic_symbols()) {
            let object::SymbolFlags::Elf { st_info, .. } = s.flags() else {
                continue;
            };
            if st_info.st_type() != object::elf::STT_GNU_IFUNC {
                continue;
            }
            let Ok(name) = s.name() else { continue };
            if name.is_empty() {
                continue;
            }
            let binding = if s.is_weak() {
                1
            } else if s.is_global() {
                2
            } else {
                0
            };
            let raw = RawSymbol {
                start: s.address(),
                size: s.size(),
                name: name.to_owned().into(),
                rank: Rank { binding },
                module: false,
            };
            match best.get(&raw.start) {
                Some(b) if !prefer_second(b, b.start + b.size, &raw, raw.start + raw.size) => {}
                _ => {
                    best.insert(raw.start, raw);
                }
            }
        }
    }
    best.into_iter()
        .map(|(a, r)| (a, r.name.into_owned()))
        .collect()
}

/// The reader type of DWARF contexts.
pub type Reader = gimli::EndianReader<gimli::RunTimeEndian, SharedBytes>;

/// perf's symbol filter (`dso__load_sym`): functions and IFUNCs, plus
/// labels (NOTYPE symbols in a real section that are not hidden or
/// internal), each with a name and a defined section.
fn collect_functions<'d, S: ObjectSymbol<'d>>(syms: impl Iterator<Item = S>) -> Vec<RawSymbol<'d>> {
    syms.filter(|s| {
        // `object` counts an IFUNC symbol (glibc's `memcpy`, `__stpncpy`:
        // the name callers use, at its resolver's address) as no
        // definition; perf keeps it, and as a global it wins over the
        // resolver's local alias (`__stpncpy_ifunc`).
        let ifunc = matches!(
            s.flags(),
            object::SymbolFlags::Elf { st_info, .. } if st_info.st_type() == object::elf::STT_GNU_IFUNC
        );
        if !s.is_definition() && !ifunc && s.kind() != SymbolKind::Unknown {
            return false;
        }
        match s.flags() {
            object::SymbolFlags::Elf { st_info, st_other } => {
                let ty = st_info.st_type();
                let visibility = st_other.visibility();
                let in_section = matches!(s.section(), object::SymbolSection::Section(_));
                match ty {
                    object::elf::STT_FUNC | object::elf::STT_GNU_IFUNC => in_section,
                    object::elf::STT_NOTYPE => {
                        in_section
                            && visibility != object::elf::STV_HIDDEN
                            && visibility != object::elf::STV_INTERNAL
                    }
                    _ => false,
                }
            }
            _ => s.kind() == SymbolKind::Text,
        }
    })
    .filter_map(|s| {
        let name = s.name().ok()?;
        if name.is_empty() {
            return None;
        }
        let binding = if s.is_weak() {
            1
        } else if s.is_global() {
            2
        } else {
            0
        };
        Some(RawSymbol {
            start: s.address(),
            size: s.size(),
            name: name.into(),
            rank: Rank { binding },
            module: false,
        })
    })
    .collect()
}
