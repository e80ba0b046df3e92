//! DSOs (binaries, the kernel, pseudo-files like `[vdso]`) interned once per
//! capture, and how perf names them.

use perfq_ids::{IdTable, Interner};

/// Index of a DSO in a [`Dsos`] table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DsoId(pub u32);

/// What kind of code a DSO holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DsoKind {
    /// A file mapped by a process (executable or shared library).
    User,
    /// The kernel image (`[kernel.kallsyms]`).
    Kernel,
    /// A kernel module.
    KernelModule,
    /// `[vdso]`, `[vsyscall]`: kernel-provided user code.
    Vdso,
    /// Anonymous executable memory (`//anon`, `[anon:...]`): often JIT code.
    Anon,
    /// `/tmp/perf-PID.map` JIT symbols.
    Jit,
}

/// One DSO.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dso {
    /// The path or name as the mmap record gave it.
    pub path: String,
    /// The build id, when the capture recorded one.
    pub build_id: Option<Vec<u8>>,
    /// Kind.
    pub kind: DsoKind,
}

impl Dso {
    /// The short name perf's `--sort dso` shows: the file name for files,
    /// `[kernel.kallsyms]` for the kernel, `[name]` for modules.
    pub fn short_name(&self) -> std::borrow::Cow<'_, str> {
        use std::borrow::Cow;
        match self.kind {
            DsoKind::Kernel => Cow::Borrowed("[kernel.kallsyms]"),
            // perf names a module after its file, "[name]", dashes made
            // underscores as the kernel names modules.
            DsoKind::KernelModule if !self.path.starts_with('[') => {
                let file = self.path.rsplit('/').next().unwrap_or(&self.path);
                let name = file.split(".ko").next().unwrap_or(file);
                Cow::Owned(format!("[{}]", name.replace('-', "_")))
            }
            // perf names /tmp/perf-PID.map DSOs "[JIT] tid PID".
            DsoKind::Jit => {
                let pid = self
                    .path
                    .trim_start_matches("/tmp/perf-")
                    .trim_end_matches(".map");
                Cow::Owned(format!("[JIT] tid {pid}"))
            }
            _ if self.path.starts_with('[') => Cow::Borrowed(&self.path),
            _ => Cow::Borrowed(self.path.rsplit('/').next().unwrap_or(&self.path)),
        }
    }
}

/// The kind of a mapping from its name.
pub fn kind_of(path: &str, pid_is_kernel: bool) -> DsoKind {
    if path.starts_with("[kernel.kallsyms]") {
        DsoKind::Kernel
    } else if pid_is_kernel {
        DsoKind::KernelModule
    } else if path == "[vdso]" || path == "[vsyscall]" || path == "[vdso32]" || path == "[vdso64]" {
        DsoKind::Vdso
    } else if path.starts_with("/tmp/perf-") && path.ends_with(".map") {
        DsoKind::Jit
    } else if path.starts_with("//anon")
        || path.starts_with("[anon")
        || path.is_empty()
        || path.starts_with("/memfd:") && path.contains("(deleted)")
    {
        DsoKind::Anon
    } else {
        DsoKind::User
    }
}

/// All DSOs of a capture, each once: one per path and build id (a DSO
/// seen again under another kind is the one met first).
#[derive(Clone, Debug, Default)]
pub struct Dsos {
    ids: Interner<Dso>,
}

impl Dsos {
    /// The id of `dso`, adding it if new.
    pub fn intern(&mut self, dso: Dso) -> DsoId {
        let hash = IdTable::hash((&dso.path, &dso.build_id));
        let same = |d: &Dso| d.path == dso.path && d.build_id == dso.build_id;
        DsoId(self.ids.id_by(hash, same, || dso.clone()))
    }

    /// The DSO with id `id`.
    pub fn get(&self, id: DsoId) -> &Dso {
        &self.ids.keys()[id.0 as usize]
    }

    /// All DSOs with their ids.
    pub fn iter(&self) -> impl Iterator<Item = (DsoId, &Dso)> {
        self.ids
            .keys()
            .iter()
            .enumerate()
            .map(|(i, d)| (DsoId(i as u32), d))
    }

    /// Number of DSOs.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}
