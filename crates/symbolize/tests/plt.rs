//! PLT stubs (`.plt`, `.plt.sec`, `.plt.got`) are named as binutils'
//! `objdump -d` labels them: each `name@plt` at the stub objdump puts it
//! at, and each IFUNC stub (`*ABS*+0xADDR@plt` to objdump) after the IFUNC
//! at ADDR, as perf >= 6.3 names it. glibc is the binary that tells orders apart: its IFUNC
//! relocations come last in `.rela.plt` but are spread through its PLT.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use perfq_symbolize::Binary;

/// objdump's PLT labels of `path`: (address, name).
fn objdump_plt(path: &Path) -> Option<Vec<(u64, String)>> {
    let out = Command::new("objdump")
        .args([
            "-d",
            "--no-show-raw-insn",
            "-j",
            ".plt",
            "-j",
            ".plt.sec",
            "-j",
            ".plt.got",
        ])
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(
        text.lines()
            .filter_map(|l| {
                let (addr, rest) = l.split_once(" <")?;
                let name = rest.strip_suffix(">:")?;
                let addr = u64::from_str_radix(addr.trim(), 16).ok()?;
                // The PLT header is `.plt` (with IBT's `.plt.sec`) or
                // `first@plt-0x10`.
                let header = name == ".plt" || name.contains("@plt-0x");
                let name = if header { ".plt" } else { name };
                (header || name.ends_with("@plt")).then(|| (addr, name.to_owned()))
            })
            .collect(),
    )
}

/// The IFUNC symbols of `path` by address, as `nm -D` lists them (type `i`).
fn ifuncs(path: &Path) -> HashMap<u64, Vec<String>> {
    let mut by = HashMap::<u64, Vec<String>>::new();
    let Ok(out) = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(path)
        .output()
    else {
        return by;
    };
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if let [addr, "i", name] = f[..] {
            if let Ok(a) = u64::from_str_radix(addr, 16) {
                let name = name.split('@').next().unwrap_or(name).to_owned();
                by.entry(a).or_default().push(name);
            }
        }
    }
    by
}

/// A program linked with IBT's `.plt.sec` (`-z ibtplt`), lazily bound,
/// calling libc through its PLT and `.plt.got`: Debian's own binaries
/// have no `.plt.sec`.
fn ibt_program(dir: &Path) -> Option<std::path::PathBuf> {
    let src = dir.join("ibt.c");
    let out = dir.join("ibt");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include <stdlib.h>\n\
         int main(int c, char **v) { void *(*m)(size_t) = malloc; void *p = m(c);\n\
         puts(v[0]); free(p); return abs(c); }\n",
    )
    .ok()?;
    let built = Command::new("cc")
        .args([
            "-O1",
            "-fcf-protection=full",
            "-Wl,-z,ibtplt",
            "-Wl,-z,lazy",
            "-o",
        ])
        .arg(&out)
        .arg(&src)
        .status()
        .ok()?;
    built.success().then_some(out)
}

#[test]
fn plt_stubs_named_as_objdump_labels_them() {
    let dir = std::env::temp_dir().join(format!("perfq-plt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let ibt = ibt_program(&dir);
    if ibt.is_none() {
        perfq_testgen::oracle::skip(
            "cc could not link a program with -z ibtplt; .plt.sec not checked",
        );
    }
    let candidates = [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/x86_64-linux-gnu/libstdc++.so.6",
        "/usr/bin/perf",
        "/usr/bin/gdb",
        "/usr/bin/ls",
    ];
    let ibt_path = ibt.as_ref().and_then(|p| p.to_str()).unwrap_or("");
    let mut checked = 0;
    let mut ifunc_stubs = 0;
    for path in candidates
        .iter()
        .chain([&ibt_path])
        .map(Path::new)
        .filter(|p| p.is_file())
    {
        let Some(labels) = objdump_plt(path) else {
            perfq_testgen::oracle::skip(format_args!("objdump could not read {}", path.display()));
            continue;
        };
        let binary = Binary::open(path).expect("a readable binary");
        let ifuncs = ifuncs(path);
        for (addr, label) in &labels {
            let ours = binary
                .symbols()
                .find(*addr)
                .filter(|s| s.start == *addr)
                .map(|s| s.name.to_owned());
            let ok = match label
                .strip_prefix("*ABS*+0x")
                .and_then(|s| s.strip_suffix("@plt"))
            {
                Some(target) => {
                    ifunc_stubs += 1;
                    let target = u64::from_str_radix(target, 16).expect("hex address");
                    ifuncs.get(&target).is_some_and(|names| {
                        names
                            .iter()
                            .any(|n| ours.as_deref() == Some(&format!("{n}@plt")))
                    })
                }
                None => ours.as_deref() == Some(label.as_str()),
            };
            assert!(
                ok,
                "{}: the stub at {addr:#x} is {label} to objdump, {ours:?} to perfq",
                path.display()
            );
            checked += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    if checked == 0 {
        perfq_testgen::oracle::skip("no binary with a PLT that objdump reads");
    }
    println!("{checked} PLT stubs named as objdump labels them ({ifunc_stubs} IFUNC stubs)");
}
