//! PLT stubs are named as binutils' `objdump -d` labels them: each
//! `name@plt` at the stub objdump puts it at, and each IFUNC stub
//! (`*ABS*+0xADDR@plt` to objdump) after the IFUNC at ADDR, as perf >= 6.3
//! names it. glibc is the binary that tells orders apart: its IFUNC
//! relocations come last in `.rela.plt` but are spread through its PLT.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use perfq_symbolize::Binary;

/// objdump's PLT labels of `path`: (address, name).
fn objdump_plt(path: &Path) -> Option<Vec<(u64, String)>> {
    let out = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn", "-j", ".plt", "-j", ".plt.sec"])
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
                // The PLT header, labelled `first@plt-0x10`.
                (name.ends_with("@plt") && !name.contains("@plt-")).then(|| (addr, name.to_owned()))
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

#[test]
fn plt_stubs_named_as_objdump_labels_them() {
    let candidates = [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/x86_64-linux-gnu/libstdc++.so.6",
        "/usr/bin/perf",
        "/usr/bin/gdb",
        "/usr/bin/ls",
    ];
    let mut checked = 0;
    let mut ifunc_stubs = 0;
    for path in candidates.iter().map(Path::new).filter(|p| p.exists()) {
        let Some(labels) = objdump_plt(path) else {
            eprintln!("SKIPPED: objdump could not read {}", path.display());
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
    if checked == 0 {
        eprintln!("SKIPPED: no binary with a PLT that objdump reads");
    }
    println!("{checked} PLT stubs named as objdump labels them ({ifunc_stubs} IFUNC stubs)");
}
