//! The ELF program a generated capture pretends to have sampled: its
//! functions, its executable segment and build id, and the return
//! address of each call from one function to another.

use std::io;
use std::path::Path;

use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};

/// A function symbol of the binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Symbol name.
    pub name: String,
    /// Start address (ELF virtual address).
    pub addr: u64,
    /// Size in bytes (at least 1).
    pub size: u64,
}

/// The executable `PT_LOAD` segment: what the kernel reports in MMAP2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecSegment {
    /// `p_vaddr`.
    pub vaddr: u64,
    /// `p_offset`.
    pub offset: u64,
    /// `p_memsz`.
    pub size: u64,
}

/// An ELF binary read for its symbols.
#[derive(Clone, Debug)]
pub struct Binary {
    functions: Vec<Function>,
    exec: ExecSegment,
    exec_bytes: Vec<u8>,
    build_id: Option<Vec<u8>>,
    position_independent: bool,
    aarch64: bool,
}

fn bad(path: &Path, why: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {why}", path.display()),
    )
}

impl Binary {
    /// Reads the ELF file at `path`.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Binary> {
        let path = path.as_ref();
        let data = std::fs::read(path)?;
        let file = object::File::parse(&*data).map_err(|e| bad(path, e))?;
        let mut functions: Vec<Function> = file
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0 && s.is_definition())
            .filter_map(|s| {
                Some(Function {
                    name: s.name().ok()?.to_string(),
                    addr: s.address(),
                    size: s.size(),
                })
            })
            .collect();
        functions.sort_by_key(|f| f.addr);
        functions.dedup_by_key(|f| f.addr);
        // The executable segment is the PT_LOAD whose range holds the
        // functions (object exposes segment flags only as ELF p_flags).
        let exec = file
            .segments()
            .find(|s| match s.flags() {
                object::SegmentFlags::Elf { p_flags, .. } => p_flags.0 & object::elf::PF_X.0 != 0,
                _ => false,
            })
            .ok_or_else(|| bad(path, "no executable segment"))?;
        let (offset, _) = exec.file_range();
        let exec_bytes = exec.data().map_err(|e| bad(path, e))?.to_vec();
        let exec = ExecSegment {
            vaddr: exec.address(),
            offset,
            size: exec.size(),
        };
        if functions.is_empty() {
            return Err(bad(path, "no function symbols"));
        }
        Ok(Binary {
            functions,
            exec,
            exec_bytes,
            build_id: file.build_id().ok().flatten().map(<[u8]>::to_vec),
            position_independent: file.kind() == object::ObjectKind::Dynamic,
            aarch64: file.architecture() == object::Architecture::Aarch64,
        })
    }

    /// The function symbols, by address.
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }

    /// The function called `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The GNU build id, if the binary has one.
    pub fn build_id(&self) -> Option<&[u8]> {
        self.build_id.as_deref()
    }

    /// The executable segment.
    pub fn exec_segment(&self) -> ExecSegment {
        self.exec
    }

    /// Whether it is position independent (ET_DYN): loaded at a base the
    /// kernel picks, rather than at its link addresses.
    pub fn is_position_independent(&self) -> bool {
        self.position_independent
    }

    fn code(&self, f: &Function) -> &[u8] {
        let start = f.addr.saturating_sub(self.exec.vaddr) as usize;
        let end = (start + f.size as usize).min(self.exec_bytes.len());
        self.exec_bytes.get(start..end).unwrap_or(&[])
    }

    /// The return address (link address) of a call from `caller` to
    /// `callee`: after a direct call instruction in `caller` that targets
    /// `callee` (x86-64 `call rel32`, AArch64 `bl`), else a fixed address
    /// inside `caller`, so that `ret - 1` still falls in it.
    pub fn return_address(&self, caller: &Function, callee: &Function) -> u64 {
        let code = self.code(caller);
        if self.aarch64 {
            for (i, w) in code.chunks_exact(4).enumerate() {
                let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                if w & 0xfc00_0000 == 0x9400_0000 {
                    // imm26, sign-extended, in words.
                    let imm = (((w & 0x03ff_ffff) << 6) as i32 >> 6) as i64 * 4;
                    let pc = caller.addr + 4 * i as u64;
                    if pc.wrapping_add(imm as u64) == callee.addr {
                        return pc + 4;
                    }
                }
            }
        } else {
            for i in 0..code.len().saturating_sub(4) {
                if code[i] == 0xe8 {
                    let rel =
                        i32::from_le_bytes([code[i + 1], code[i + 2], code[i + 3], code[i + 4]]);
                    let next = caller.addr + i as u64 + 5;
                    if next.wrapping_add(rel as i64 as u64) == callee.addr {
                        return next;
                    }
                }
            }
        }
        caller.addr + (caller.size / 2).max(1)
    }
}
