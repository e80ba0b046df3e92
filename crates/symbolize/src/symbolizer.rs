//! Resolving locations to symbols: each binary opened once and shared,
//! DWARF parsed only when inline frames are asked for, unique addresses
//! resolved once, DSOs in parallel.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::binary::Binary;
use crate::binary_cache::BinaryCache;
use crate::demangle::display_name;
use crate::dso::{Dso, DsoId, DsoKind, Dsos};
use crate::kallsyms::Kallsyms;
use crate::locate::{LocateError, Locator};
use crate::symbol_disk::SymbolDisk;
use crate::tracker::{Location, Tracker};

/// Why an address has no symbol.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Unresolved {
    /// No mapping contains the address.
    NoMapping,
    /// The DSO's file was not found.
    BinaryNotFound,
    /// A file was found but its build id differs from the capture's.
    BuildIdMismatch,
    /// The file has no symbol covering the address (stripped, or a gap).
    NoSymbol,
    /// No kernel symbols are available (no kallsyms matching the capture).
    NoKernelSymbols,
    /// Anonymous or JIT memory without a symbol map.
    Anonymous,
}

impl Unresolved {
    /// A short name for reports: `no_mapping`, `binary_not_found`, ...
    pub fn name(&self) -> &'static str {
        match self {
            Unresolved::NoMapping => "no_mapping",
            Unresolved::BinaryNotFound => "binary_not_found",
            Unresolved::BuildIdMismatch => "build_id_mismatch",
            Unresolved::NoSymbol => "no_symbol",
            Unresolved::NoKernelSymbols => "no_kernel_symbols",
            Unresolved::Anonymous => "anonymous",
        }
    }
}

/// One inlining level at an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlineFrame {
    /// Function name, demangled.
    pub function: Option<String>,
    /// Function name as stored.
    pub raw_function: Option<String>,
    /// Source file.
    pub file: Option<String>,
    /// Source line.
    pub line: Option<u32>,
}

/// What an address resolved to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The DSO's short name as perf shows it (`libc.so.6`, `[kernel.kallsyms]`, `[xfs]`, `[unknown]`).
    pub dso: Arc<str>,
    /// The symbol (demangled), or `None` with `reason` set.
    pub symbol: Option<Arc<str>>,
    /// The symbol as stored.
    pub raw_symbol: Option<Arc<str>>,
    /// Why there is no symbol.
    pub reason: Option<Unresolved>,
    /// The address perf shows for unresolved entries: the file offset in a
    /// DSO, the address itself otherwise.
    pub addr: u64,
    /// Inline chain, innermost first (only when asked for and DWARF exists).
    pub inlined: Vec<InlineFrame>,
    /// The binary that was used and the virtual address looked up in it.
    pub binary: Option<(Arc<Path>, u64)>,
}

/// What each location resolved to, by location id ([`Symbolizer::resolve_all`]).
#[derive(Debug, Default)]
pub struct Resolutions {
    /// As resolved: one part per task.
    parts: Vec<Vec<Resolved>>,
    /// By location id: (part, position in it), or ([`UNMAPPED`], position
    /// in `unmapped`).
    place: Vec<(u32, u32)>,
    /// The addresses of the locations no mapping contains: their
    /// resolutions differ only in it (on system-wide frame-pointer captures
    /// most locations are such garbage frames: 8 bytes each instead of a
    /// `Resolved`'s 112).
    unmapped: Vec<u64>,
    /// Their DSO name, `[unknown]`.
    unknown: Option<Arc<str>>,
}

/// In [`Resolutions::place`]: the location is in `unmapped`.
const UNMAPPED: u32 = u32::MAX - 1;

impl Resolutions {
    /// The number of locations.
    pub fn len(&self) -> usize {
        self.place.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.place.is_empty()
    }

    /// What location `i` resolved to (made on the spot, cheaply, for a
    /// location no mapping contains).
    pub fn get(&self, i: usize) -> Option<Cow<'_, Resolved>> {
        self.at(*self.place.get(i)?)
    }

    fn at(&self, (part, at): (u32, u32)) -> Option<Cow<'_, Resolved>> {
        if part == UNMAPPED {
            let addr = *self.unmapped.get(at as usize)?;
            return Some(Cow::Owned(self.unmapped(addr)));
        }
        self.parts
            .get(part as usize)?
            .get(at as usize)
            .map(Cow::Borrowed)
    }

    /// What a location no mapping contains resolves to, at `addr`.
    pub fn unmapped(&self, addr: u64) -> Resolved {
        let unknown = self
            .unknown
            .clone()
            .unwrap_or_else(|| Arc::from("[unknown]"));
        unresolved(unknown, addr, Unresolved::NoMapping)
    }

    /// Each location's resolution, in location order, as [`Placed`]: the
    /// locations no mapping contains by their address alone, their
    /// resolution ([`Resolutions::unmapped`]) not made (a system-wide
    /// capture has millions of them).
    pub fn iter_placed(&self) -> impl ExactSizeIterator<Item = Placed<'_>> + '_ {
        self.place.iter().map(|&p| match p {
            (UNMAPPED, at) => {
                Placed::Unmapped(self.unmapped.get(at as usize).copied().unwrap_or(0))
            }
            p => Placed::Mapped(self.at(p).unwrap_or_else(unplaced)),
        })
    }

    /// Each location's resolution, in location order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Cow<'_, Resolved>> + '_ {
        self.place
            .iter()
            .map(|&p| self.at(p).unwrap_or_else(unplaced))
    }
}

/// A location's resolution as [`Resolutions::iter_placed`] gives it.
#[derive(Debug)]
pub enum Placed<'a> {
    /// In a mapping: what it resolved to.
    Mapped(Cow<'a, Resolved>),
    /// In no mapping: its address (see [`Resolutions::unmapped`]).
    Unmapped(u64),
}

/// The resolution of a location `resolve_all` did not place (it places
/// every one).
fn unplaced<'a>() -> Cow<'a, Resolved> {
    Cow::Owned(unresolved("[unknown]", 0, Unresolved::NoMapping))
}

impl<'a> IntoIterator for &'a Resolutions {
    type Item = Cow<'a, Resolved>;
    type IntoIter = Box<dyn ExactSizeIterator<Item = Cow<'a, Resolved>> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// Symbolization settings.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// perf's `--symfs`.
    pub symfs: Option<PathBuf>,
    /// A kallsyms file to use instead of `/proc/kallsyms`.
    pub kallsyms: Option<PathBuf>,
    /// Resolve inline chains and file:line from DWARF.
    pub inline: bool,
    /// Build-id caches to search before `~/.debug` (an extracted
    /// `perf archive`, perf's `--buildid-dir`).
    pub buildid_dirs: Vec<PathBuf>,
    /// Binaries shared with the symbolizers of other captures (a batch
    /// reads each binary once).
    pub binaries: Option<Arc<BinaryCache>>,
    /// Symbol tables kept on disk between runs, by build id.
    pub symbol_disk: Option<SymbolDisk>,
}

/// Kernel symbols as read, with a note when there are none.
type KallsymsLoad = (Option<Kallsyms>, Option<String>);

/// Locations one resolving task takes at most.
const RESOLVE_CHUNK: usize = 4096;
/// A DWARF context's task hands its binary's mapped DWARF pages back every
/// this many locations (and when done): peak memory then holds what the
/// lookups between two releases read, not the whole of a debug build's
/// DWARF.
const RELEASE_DWARF_EVERY: usize = 1024;

/// Resolves locations of one capture.
pub struct Symbolizer {
    locator: Locator,
    /// Kernel symbols, read on a thread of their own from the start (the
    /// kernel formats `/proc/kallsyms` slowly) and waited for on first use.
    kallsyms: OnceLock<Option<Kallsyms>>,
    kallsyms_loading: Mutex<Option<JoinHandle<KallsymsLoad>>>,
    /// Whether to resolve inline chains ([`Symbolizer::set_inline`]): set
    /// through a shared reference, by a report's summing thread between
    /// passes while the reading thread unwinds with the same symbolizer.
    inline: AtomicBool,
    binaries: Mutex<FxHashMap<DsoId, Result<Arc<Binary>, Unresolved>>>,
    /// Notes about what could not be used (build-id mismatches, kallsyms).
    notes: Mutex<Vec<String>>,
}

impl Symbolizer {
    /// A symbolizer. Kernel symbols come from `config.kallsyms`, else from
    /// `/proc/kallsyms` when the running kernel is the recorded one: its
    /// build id equals `kernel_build_id`, or, when the capture recorded no
    /// kernel build id, its release equals `os_release`.
    pub fn new(
        config: &Config,
        kernel_build_id: Option<&[u8]>,
        os_release: Option<&str>,
    ) -> Symbolizer {
        let config_kallsyms = config.kallsyms.clone();
        let buildid_dirs = config.buildid_dirs.clone();
        let kernel_build_id = kernel_build_id.map(<[u8]>::to_vec);
        let os_release = os_release.map(str::to_string);
        let disk = config.symbol_disk.clone();
        let load = move || {
            load_kallsyms(
                config_kallsyms.as_deref(),
                &buildid_dirs,
                kernel_build_id.as_deref(),
                os_release.as_deref(),
                disk.as_ref(),
            )
        };
        let mut notes = Vec::new();
        let kallsyms = OnceLock::new();
        let loading = match std::thread::Builder::new()
            .name("kallsyms".into())
            .spawn(load.clone())
        {
            Ok(handle) => Some(handle),
            // No thread to be had: read them here.
            Err(_) => {
                let (k, note) = load();
                let _ = kallsyms.set(k);
                notes.extend(note);
                None
            }
        };
        Symbolizer {
            locator: Locator {
                cache: config.binaries.clone(),
                disk: config.symbol_disk.clone(),
                ..Locator::with_defaults(config.symfs.clone(), &config.buildid_dirs)
            },
            kallsyms,
            kallsyms_loading: Mutex::new(loading),
            inline: AtomicBool::new(config.inline),
            binaries: Mutex::new(FxHashMap::default()),
            notes: Mutex::new(notes),
        }
    }

    /// Notes about what could not be used (build-id mismatches, no kernel
    /// symbols for the recorded kernel).
    pub fn notes(&self) -> Vec<String> {
        let _ = self.kallsyms();
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }

    /// The kernel symbols, once read.
    fn kallsyms(&self) -> Option<&Kallsyms> {
        self.kallsyms
            .get_or_init(|| {
                let handle = self.kallsyms_loading.lock().ok().and_then(|mut h| h.take());
                let (k, note) = match handle.map(JoinHandle::join) {
                    Some(Ok(r)) => r,
                    Some(Err(_)) => (None, Some("reading kallsyms failed".into())),
                    None => (None, None),
                };
                if let (Some(n), Ok(mut notes)) = (note, self.notes.lock()) {
                    notes.push(n);
                }
                k
            })
            .as_ref()
    }

    /// Opens the binary of DSO `id` (described by `dso`) and, with `dwarf`
    /// and when inline chains are asked for, reads its DWARF, so that
    /// resolving later does not wait for them: a conversion calls this on
    /// another thread as DSOs appear (to open) and as their first frames
    /// do (to read the DWARF, which only DSOs with frames need).
    pub fn prepare(&self, id: DsoId, dso: &Dso, dwarf: bool) {
        if matches!(dso.kind, DsoKind::User | DsoKind::Vdso) {
            if let (Ok(b), true) = (self.binary_of(id, dso), self.inline() && dwarf) {
                b.warm_dwarf();
            }
        }
    }

    /// Whether to resolve inline chains and file:line from DWARF.
    pub fn set_inline(&self, inline: bool) {
        self.inline.store(inline, Ordering::Relaxed);
    }

    fn inline(&self) -> bool {
        self.inline.load(Ordering::Relaxed)
    }

    /// Whether kernel symbols are available.
    pub fn has_kernel_symbols(&self) -> bool {
        self.kallsyms().is_some()
    }

    /// The binary of DSO `id`, opened once and shared.
    pub fn binary(&self, dsos: &Dsos, id: DsoId) -> Result<Arc<Binary>, Unresolved> {
        self.binary_of(id, dsos.get(id))
    }

    /// [`Symbolizer::binary`] of DSO `id`, given what it is.
    pub fn binary_of(&self, id: DsoId, dso: &Dso) -> Result<Arc<Binary>, Unresolved> {
        if let Some(b) = self.binaries.lock().ok().and_then(|m| m.get(&id).cloned()) {
            return b;
        }
        let r = match self.locator.open(dso) {
            Ok(b) => Ok(b),
            Err(LocateError::NotFound) => Err(Unresolved::BinaryNotFound),
            Err(LocateError::BuildIdMismatch { path }) => {
                if let Ok(mut n) = self.notes.lock() {
                    n.push(format!(
                        "{}: build id differs from the capture's; not used",
                        path.display()
                    ));
                }
                Err(Unresolved::BuildIdMismatch)
            }
        };
        if let Ok(mut m) = self.binaries.lock() {
            m.insert(id, r.clone());
        }
        r
    }

    /// Resolves unique locations, DSOs in parallel.
    ///
    /// Kernel addresses are looked up moved by as much as the kallsyms
    /// used is moved from the recorded kernel (KASLR places the kernel
    /// anew at each boot): the distance between the reference symbol's
    /// recorded address ([`Tracker::kernel_ref`]) and its address in the
    /// kallsyms, as perf's `kallsyms__delta`. Module addresses are looked
    /// up as they are.
    pub fn resolve_all(&self, tracker: &Tracker, locations: &[Location]) -> Resolutions {
        self.resolve_in(tracker.dsos(), tracker.kernel_ref(), locations)
    }

    /// [`Symbolizer::resolve_all`] given the tracker's DSOs and kernel
    /// reference symbol ([`Tracker::kernel_ref`]) rather than the tracker:
    /// for locations resolved on another thread while the tracker goes on
    /// taking in records.
    pub fn resolve_in(
        &self,
        dsos: &Dsos,
        kernel_ref: Option<(&str, u64)>,
        locations: &[Location],
    ) -> Resolutions {
        let kernel_delta = match (kernel_ref, self.kallsyms()) {
            (Some((name, recorded)), Some(k)) => k
                .ref_address(name)
                .map_or(0, |now| now.wrapping_sub(recorded)),
            _ => 0,
        };
        // Where each location's result is: (group, position in it); a
        // group's results come in the order of its locations. They stay
        // there rather than being moved into location order (a capture has
        // hundreds of thousands; two copies at once were its peak). The
        // unmapped ones' place is known at once: their addresses are kept
        // alone, not beside their location ids, while the binaries are
        // read.
        let mut place: Vec<(u32, u32)> = vec![(u32::MAX, 0); locations.len()];
        // Group by DSO so each binary (and its DWARF) is handled by one task.
        // Locations no mapping contains need no task: only their address.
        // Each location goes with its address in the group (its file
        // offset, or kernel address), which orders the group and is all a
        // DSO's lookups need: sorting a million indices by a key read
        // through them, and reading it again for each lookup, was a cache
        // miss each time.
        let mut by_dso: FxHashMap<Option<DsoId>, Vec<Keyed>> = FxHashMap::default();
        let mut unmapped: Vec<u64> = Vec::new();
        for ((i, l), p) in locations.iter().enumerate().zip(&mut place) {
            let (group, at) = match *l {
                Location::Dso { dso, offset } => (Some(dso), offset),
                Location::Unmapped { addr } => {
                    *p = (UNMAPPED, unmapped.len() as u32);
                    unmapped.push(addr);
                    continue;
                }
                Location::Kernel { addr, .. } => (None, addr),
            };
            by_dso.entry(group).or_default().push((at, i));
        }
        // Each group is sorted by address and a large one (the kernel's
        // hundred thousand addresses) split into runs of nearby addresses,
        // so that both cores share it; a binary split so builds a DWARF
        // context per run (cheap: its sections are read once) that parses
        // only the units its addresses fall in.
        let mut groups: Vec<(Option<DsoId>, &[Keyed])> = Vec::new();
        for (dso, idx) in &mut by_dso {
            idx.sort_unstable();
            groups.extend(idx.chunks(RESOLVE_CHUNK).map(|c| (*dso, c)));
        }
        for (g, (_, idx)) in groups.iter().enumerate() {
            for (k, &(_, i)) in idx.iter().enumerate() {
                if let Some(p) = place.get_mut(i) {
                    *p = (g as u32, k as u32);
                }
            }
        }
        let parts: Vec<Vec<Resolved>> = groups
            .par_iter()
            .map(|(dso, idx)| match dso {
                Some(d) => self.resolve_dso(dsos, *d, idx),
                None => self.resolve_others(dsos, idx, locations, kernel_delta),
            })
            .collect();
        Resolutions {
            parts,
            place,
            unmapped,
            unknown: Some(Arc::from("[unknown]")),
        }
    }

    /// The kernel and unmapped locations `idx`, resolved, in the order of
    /// `idx` (sorted by address). Names are shared: a system-wide capture
    /// has hundreds of thousands of unmapped addresses (garbage frame
    /// pointers), all `[unknown]`, and a kernel symbol has many addresses.
    fn resolve_others(
        &self,
        dsos: &Dsos,
        idx: &[Keyed],
        locations: &[Location],
        kernel_delta: u64,
    ) -> Vec<Resolved> {
        let unknown: Arc<str> = Arc::from("[unknown]");
        let kernel: Arc<str> = Arc::from("[kernel.kallsyms]");
        let mut modules: FxHashMap<&str, Arc<str>> = FxHashMap::default();
        let mut mappings: FxHashMap<DsoId, Arc<str>> = FxHashMap::default();
        // The last kernel symbol found, by its name's address in the
        // table (names are not compared: the same symbol is the same str).
        let mut last: Option<(*const u8, Arc<str>)> = None;
        let kallsyms = self.kallsyms();
        let resolved = idx
            .iter()
            .map(|&(_, i)| match locations[i] {
                Location::Kernel { addr, module } => {
                    // Without a kallsyms symbol, the module mapping names it.
                    let mut mapping = || match module {
                        None => Arc::clone(&kernel),
                        Some(m) => Arc::clone(
                            mappings
                                .entry(m)
                                .or_insert_with(|| Arc::from(dsos.get(m).short_name())),
                        ),
                    };
                    let moved = if module.is_none() {
                        addr.wrapping_add(kernel_delta)
                    } else {
                        addr
                    };
                    let Some(k) = kallsyms else {
                        return unresolved(mapping(), addr, Unresolved::NoKernelSymbols);
                    };
                    let Some((name, module)) = k.find(moved) else {
                        return unresolved(mapping(), addr, Unresolved::NoSymbol);
                    };
                    let symbol = match &last {
                        Some((at, shared)) if *at == name.as_ptr() => Arc::clone(shared),
                        _ => {
                            let shared: Arc<str> = Arc::from(name);
                            last = Some((name.as_ptr(), Arc::clone(&shared)));
                            shared
                        }
                    };
                    let dso = match module {
                        None => Arc::clone(&kernel),
                        Some(m) => Arc::clone(
                            modules
                                .entry(m)
                                .or_insert_with(|| Arc::from(format!("[{m}]"))),
                        ),
                    };
                    Resolved {
                        dso,
                        symbol: Some(Arc::clone(&symbol)),
                        raw_symbol: Some(symbol),
                        reason: None,
                        addr,
                        inlined: Vec::new(),
                        binary: None,
                    }
                }
                Location::Unmapped { addr } => {
                    unresolved(Arc::clone(&unknown), addr, Unresolved::NoMapping)
                }
                Location::Dso { offset, .. } => {
                    unresolved(Arc::clone(&unknown), offset, Unresolved::NoMapping)
                }
            })
            .collect();
        if let Some(k) = kallsyms {
            k.release_pages();
        }
        resolved
    }

    /// The locations `idx` of DSO `id` (their file offsets), resolved, in
    /// the order of `idx`.
    fn resolve_dso(&self, dsos: &Dsos, id: DsoId, idx: &[Keyed]) -> Vec<Resolved> {
        let dso = dsos.get(id);
        let name: Arc<str> = Arc::from(dso.short_name());
        if dso.kind == DsoKind::Jit {
            return self.resolve_jit(dsos, id, idx);
        }
        if dso.kind == DsoKind::Anon {
            return all_unresolved(&name, idx, Unresolved::Anonymous);
        }
        let bin = match self.binary(dsos, id) {
            Ok(b) => b,
            Err(why) => return all_unresolved(&name, idx, why),
        };
        let ctx = if self.inline() { bin.dwarf() } else { None };
        // Building the context reads every unit's root entry, address
        // ranges and line-program header, which for a large debug build
        // faults in a large part of the DWARF file that addr2line has
        // now parsed into its own tables: hand those pages back before the
        // lookups fault in their own.
        if ctx.is_some() {
            bin.release_dwarf_pages();
        }
        let mut lookup = BinaryLookup::new(&bin, ctx, name);
        let resolved = idx
            .iter()
            .enumerate()
            .map(|(n, &(off, _))| {
                if lookup.ctx.is_some() && n % RELEASE_DWARF_EVERY == RELEASE_DWARF_EVERY - 1 {
                    bin.release_dwarf_pages();
                }
                lookup.resolve(off)
            })
            .collect();
        if lookup.ctx.is_some() {
            bin.release_dwarf_pages();
        }
        bin.release_symbol_pages();
        resolved
    }
}

/// Each of the locations `idx` of the DSO `name`, unresolved for `why`.
fn all_unresolved(name: &Arc<str>, idx: &[Keyed], why: Unresolved) -> Vec<Resolved> {
    idx.iter()
        .map(|&(off, _)| unresolved(name.clone(), off, why.clone()))
        .collect()
}

/// File offsets of one binary resolved to its symbols and, with a DWARF
/// context, to their inline chains.
struct BinaryLookup<'b> {
    bin: &'b Binary,
    ctx: Option<addr2line::Context<crate::binary::Reader>>,
    /// The DSO's short name.
    dso: Arc<str>,
    path: Arc<Path>,
    /// Each function's name is demangled once (C++ and Rust names cost
    /// microseconds each; a capture of a large binary has hundreds of
    /// thousands of locations in a few thousand functions, and a report
    /// resolves them a slice at a time). The locations come sorted by
    /// address, so those of one function follow each other: the last
    /// one's (start, shown, stored) names are at hand without a lookup.
    last: Option<(u64, Arc<str>, Arc<str>)>,
    /// Inlined functions' names, demangled.
    inline_names: FxHashMap<String, String>,
}

impl<'b> BinaryLookup<'b> {
    fn new(
        bin: &'b Binary,
        ctx: Option<addr2line::Context<crate::binary::Reader>>,
        dso: Arc<str>,
    ) -> Self {
        BinaryLookup {
            bin,
            ctx,
            dso,
            path: Arc::from(bin.path()),
            last: None,
            inline_names: FxHashMap::default(),
        }
    }

    /// The (displayed, as stored) names of symbol `i` of the binary's
    /// table, which starts at `start`, shared by the function's
    /// locations; `None` if its name cannot be read.
    fn names(&mut self, i: usize, start: u64) -> Option<(Arc<str>, Arc<str>)> {
        match &self.last {
            Some((at, shown, raw)) if *at == start => Some((shown.clone(), raw.clone())),
            _ => {
                let s = self.bin.symbols().symbol(i)?;
                let (shown, raw) = self.bin.names().of(s);
                self.last = Some((s.start, Arc::clone(&shown), Arc::clone(&raw)));
                Some((shown, raw))
            }
        }
    }

    /// The location at file offset `off`, resolved.
    fn resolve(&mut self, off: u64) -> Resolved {
        let bin = self.bin;
        let vaddr = bin.vaddr_of_offset(off);
        let names = (bin.symbols().find_index(vaddr)).and_then(|(i, start)| self.names(i, start));
        let mut inlined = self
            .ctx
            .as_ref()
            .map(|c| inline_frames(c, vaddr, &mut self.inline_names))
            .unwrap_or_default();
        // Without DWARF for the address, the symbol is its only
        // level, as binutils addr2line reports it.
        if let (true, true, Some((shown, raw))) = (inlined.is_empty(), self.ctx.is_some(), &names) {
            inlined.push(InlineFrame {
                function: Some(shown.to_string()),
                raw_function: Some(raw.to_string()),
                file: None,
                line: None,
            });
        }
        let binary = Some((Arc::clone(&self.path), vaddr));
        match names {
            Some((shown, raw)) => Resolved {
                dso: self.dso.clone(),
                symbol: Some(shown),
                raw_symbol: Some(raw),
                reason: None,
                addr: off,
                inlined,
                binary,
            },
            None => Resolved {
                inlined,
                binary,
                ..unresolved(self.dso.clone(), off, Unresolved::NoSymbol)
            },
        }
    }
}

impl Symbolizer {
    /// JIT code: symbols from the `/tmp/perf-PID.map` text file (one
    /// `START SIZE name` line per function, hex), under `--symfs`.
    fn resolve_jit(&self, dsos: &Dsos, id: DsoId, idx: &[Keyed]) -> Vec<Resolved> {
        let dso = dsos.get(id);
        let name: Arc<str> = Arc::from(dso.short_name());
        let path = match &self.locator.symfs {
            Some(root) => root.join(dso.path.trim_start_matches('/')),
            None => PathBuf::from(&dso.path),
        };
        let table = std::fs::read_to_string(&path).ok().map(|text| {
            let raw = text
                .lines()
                .filter_map(|l| {
                    let mut it = l.splitn(3, ' ');
                    let start =
                        u64::from_str_radix(it.next()?.trim_start_matches("0x"), 16).ok()?;
                    let size = u64::from_str_radix(it.next()?.trim_start_matches("0x"), 16).ok()?;
                    let name = it.next()?.trim().into();
                    Some(crate::symtab::RawSymbol {
                        start,
                        size,
                        name,
                        rank: crate::symtab::Rank { binding: 2 },
                        module: false,
                    })
                })
                .collect();
            crate::symtab::SymbolTable::new(raw)
        });
        idx.iter()
            .map(
                |&(addr, _)| match table.as_ref().and_then(|t| t.find(addr)) {
                    Some(s) => Resolved {
                        dso: name.clone(),
                        symbol: Some(Arc::from(display_name(s.name))),
                        raw_symbol: Some(Arc::from(s.name)),
                        reason: None,
                        addr,
                        inlined: Vec::new(),
                        binary: None,
                    },
                    None => unresolved(name.clone(), addr, Unresolved::Anonymous),
                },
            )
            .collect()
    }
}

/// Kernel symbols from `config_kallsyms`, else from `/proc/kallsyms` when
/// the running kernel is the recorded one, else from a build-id cache; with
/// a note when none could be had.
fn load_kallsyms(
    config_kallsyms: Option<&std::path::Path>,
    buildid_dirs: &[PathBuf],
    kernel_build_id: Option<&[u8]>,
    os_release: Option<&str>,
    disk: Option<&SymbolDisk>,
) -> KallsymsLoad {
    if let Some(p) = config_kallsyms {
        return match load_kept_kallsyms(p, disk) {
            Ok(k) => (Some(k), None),
            Err(e) => (None, Some(format!("kallsyms {}: {e}", p.display()))),
        };
    }
    let running = crate::kallsyms::running_kernel_build_id();
    let matches = match (kernel_build_id, running.as_deref()) {
        (Some(want), Some(have)) => crate::locate::same_build_id(want, have),
        (Some(_), None) => false,
        (None, _) => {
            let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok();
            os_release.is_some_and(|r| release.is_some_and(|have| have.trim() == r))
        }
    };
    if matches {
        // The copy a recording of this kernel saved (perf record keeps one
        // per kernel build id), when there is one, before /proc/kallsyms:
        // the same kernel's symbols, read far faster than the kernel
        // formats /proc/kallsyms. A reboot in between moves the kernel:
        // `ref_address` measures by how much.
        let k = kernel_build_id
            .and_then(|id| cached_kallsyms(buildid_dirs, id, disk))
            .or_else(|| {
                Kallsyms::load(std::path::Path::new("/proc/kallsyms"))
                    .ok()
                    .filter(|k| !k.is_empty())
            });
        (k, None)
    } else if let Some(k) = kernel_build_id.and_then(|id| cached_kallsyms(buildid_dirs, id, disk)) {
        // perf's build-id cache keeps the kallsyms of recorded kernels.
        (Some(k), None)
    } else {
        (
            None,
            Some(
                "the running kernel is not the one recorded: kernel symbols unresolved (give --kallsyms)"
                    .into(),
            ),
        )
    }
}

/// The kallsyms perf saved for the kernel with `build_id`:
/// `~/.debug/[kernel.kallsyms]/<build id>/kallsyms`.
fn cached_kallsyms(
    dirs: &[PathBuf],
    build_id: &[u8],
    disk: Option<&SymbolDisk>,
) -> Option<Kallsyms> {
    let hex = crate::locate::build_id_hex(Some(build_id))?;
    let home = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".debug"));
    dirs.iter().cloned().chain(home).find_map(|d| {
        let path = d.join("[kernel.kallsyms]").join(&hex).join("kallsyms");
        load_kept_kallsyms(&path, disk)
            .ok()
            .filter(|k| !k.is_empty())
    })
}

/// The kallsyms file `path`, parsed, or its tables as `disk` kept them
/// from a previous perfq run (parsing a kernel's 200,000 lines is ~150 million
/// instructions; the kept tables are mapped and read where looked up).
/// They are kept under the file's path, size and modification time; files
/// without a size (`/proc/kallsyms`) are parsed each time.
fn load_kept_kallsyms(
    path: &std::path::Path,
    disk: Option<&SymbolDisk>,
) -> std::io::Result<Kallsyms> {
    use std::hash::{Hash, Hasher};
    let meta = std::fs::metadata(path)?;
    let key = disk
        .filter(|_| meta.is_file() && meta.len() > 0)
        .and_then(|disk| {
            let since = meta
                .modified()
                .ok()?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?;
            let mut h = rustc_hash::FxHasher::default();
            path.hash(&mut h);
            let key = format!(
                "kallsyms-{:016x}-{:x}-{:x}",
                h.finish(),
                meta.len(),
                since.as_nanos()
            );
            Some((disk, key))
        });
    if let Some((disk, key)) = &key {
        if let (Some(table), Some(aux)) = (disk.load(key), disk.load(&format!("{key}-aux"))) {
            return Ok(Kallsyms::from_tables(table, aux));
        }
    }
    let k = Kallsyms::load(path)?;
    if let Some((disk, key)) = key.filter(|_| !k.is_empty()) {
        let (table, aux) = k.tables();
        disk.store(&format!("{key}-aux"), aux);
        disk.store(&key, table);
    }
    Ok(k)
}

/// Loads the `.dwo` file a skeleton unit names (`comp_dir/path`).
fn load_dwo(
    load: &addr2line::SplitDwarfLoad<crate::binary::Reader>,
) -> Option<Arc<gimli::Dwarf<crate::binary::Reader>>> {
    use gimli::Reader as _;
    use object::{Object, ObjectSection};
    let text = |r: &Option<crate::binary::Reader>| {
        r.as_ref()
            .and_then(|r| r.to_string_lossy().ok().map(|s| s.into_owned()))
    };
    let path = PathBuf::from(text(&load.comp_dir).unwrap_or_default()).join(text(&load.path)?);
    let data = std::fs::read(&path).ok()?;
    let obj = object::File::parse(&data[..]).ok()?;
    let endian = if obj.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let mut dwarf = gimli::Dwarf::load(
        |id: gimli::SectionId| -> Result<crate::binary::Reader, gimli::Error> {
            let bytes = id
                .dwo_name()
                .and_then(|n| obj.section_by_name(n))
                .and_then(|s| s.uncompressed_data().ok())
                .map_or_else(crate::binary::SharedBytes::empty, |d| {
                    crate::binary::SharedBytes::Owned(Arc::from(&d[..]))
                });
            Ok(gimli::EndianReader::new(bytes, endian))
        },
    )
    .ok()?;
    dwarf.make_dwo(&load.parent);
    Some(Arc::new(dwarf))
}

/// A location to resolve: its file offset (or kernel address), and its
/// index in the capture's locations.
type Keyed = (u64, usize);

fn unresolved(dso: impl Into<Arc<str>>, addr: u64, why: Unresolved) -> Resolved {
    Resolved {
        dso: dso.into(),
        symbol: None,
        raw_symbol: None,
        reason: Some(why),
        addr,
        inlined: Vec::new(),
        binary: None,
    }
}

/// The inline chain at `vaddr`, innermost first. Split DWARF (`.dwo`
/// files named by the skeleton units) is loaded on demand.
/// `names` keeps the names demangled so far: neighbouring addresses
/// mostly share their functions.
fn inline_frames(
    ctx: &addr2line::Context<crate::binary::Reader>,
    vaddr: u64,
    names: &mut FxHashMap<String, String>,
) -> Vec<InlineFrame> {
    use addr2line::LookupContinuation as _;
    let mut out = Vec::new();
    let mut lookup = ctx.find_frames(vaddr);
    let frames = loop {
        match lookup {
            addr2line::LookupResult::Output(r) => break r,
            addr2line::LookupResult::Load { load, continuation } => {
                lookup = continuation.resume(load_dwo(&load));
            }
        }
    };
    let Ok(mut frames) = frames else { return out };
    while let Ok(Some(f)) = frames.next() {
        let raw = f
            .function
            .as_ref()
            .and_then(|n| n.raw_name().ok())
            .map(|n| n.to_string());
        // Demangled here (Rust without hash, C++ with parameters), as for
        // symbols, so both spellings agree.
        let function = raw.as_deref().map(|r| match names.get(r) {
            Some(n) => n.clone(),
            None => {
                let n = display_name(r);
                // Bounded: a whole binary's names are not kept.
                if names.len() >= 4096 {
                    names.clear();
                }
                names.insert(r.to_string(), n.clone());
                n
            }
        });
        let (file, line) = f
            .location
            .map_or((None, None), |l| (l.file.map(str::to_string), l.line));
        out.push(InlineFrame {
            function,
            raw_function: raw,
            file,
            line,
        });
        if out.len() > 256 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A location no mapping contains is placed by its address alone
    /// ([`Resolutions::iter_placed`]), and resolves as
    /// [`Resolutions::unmapped`] does at that address: only the address
    /// differs between such locations (the frames table writes them all
    /// from one resolution).
    #[test]
    fn unmapped_locations_are_told_apart_and_resolve_alike() {
        let s = Symbolizer::new(&Config::default(), None, None);
        let kernel = Location::Kernel {
            addr: 0xffff_ffff_8100_0000,
            module: None,
        };
        let at = |addr| Location::Unmapped { addr };
        let r = s.resolve_in(&Dsos::default(), None, &[at(0x10), kernel, at(0x20)]);
        let unmapped: Vec<Option<u64>> = (r.iter_placed())
            .map(|p| match p {
                Placed::Unmapped(addr) => Some(addr),
                Placed::Mapped(_) => None,
            })
            .collect();
        assert_eq!(unmapped, [Some(0x10), None, Some(0x20)]);
        for (i, addr) in [(0, 0x10), (2, 0x20)] {
            let got = r.get(i).expect("resolved").into_owned();
            let want = r.unmapped(addr);
            assert_eq!(got.dso, want.dso);
            assert_eq!(got.addr, addr);
            assert_eq!(
                (got.symbol, got.reason, got.inlined.len(), got.binary),
                (None, Some(Unresolved::NoMapping), 0, None)
            );
        }
    }
}
