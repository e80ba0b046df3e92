//! Kernel symbols of a capture from another kernel come from perf's
//! build-id cache (`~/.debug/[kernel.kallsyms]/<build id>/kallsyms`).

use perfq_symbolize::{Config, Location, Symbolizer, Tracker};

#[test]
fn kallsyms_from_the_build_id_cache() {
    let home = std::env::temp_dir().join(format!("perfq-home-{}", std::process::id()));
    let build_id = [0xab_u8; 20];
    let dir = home.join(".debug/[kernel.kallsyms]").join("ab".repeat(20));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("kallsyms"), "ffffffff81000000 T _text\nffffffff81000100 T recorded_kernel_fn\nffffffff81000200 T next_fn\n")
        .expect("write");
    // This test binary's other test names its kallsyms file: changing HOME
    // affects nothing else.
    std::env::set_var("HOME", &home);
    let s = Symbolizer::new(&Config::default(), Some(&build_id), None);
    assert!(
        s.has_kernel_symbols(),
        "cached kallsyms used for a kernel that is not running"
    );
    let r = s.resolve_all(
        &Tracker::default(),
        &[Location::Kernel {
            addr: 0xffffffff81000150,
            module: None,
        }],
    );
    assert_eq!(
        r.get(0).expect("resolved").symbol.as_deref(),
        Some("recorded_kernel_fn")
    );
    assert_eq!(&*r.get(0).expect("resolved").dso, "[kernel.kallsyms]");
    std::fs::remove_dir_all(&home).ok();
}

/// A kernel placed elsewhere at this boot than when recorded (KASLR): the
/// recorded `_text` address in the kernel mapping's pgoff and `_text` in
/// the kallsyms give the distance, as perf's `kallsyms__delta`.
#[test]
fn kernel_addresses_moved_by_the_kaslr_distance() {
    use perfq_reader::{Mmap, RecordData};
    let dir = std::env::temp_dir().join(format!("perfq-kaslr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let kallsyms = dir.join("kallsyms");
    // This boot: the kernel 0x2000000 higher than when recorded.
    std::fs::write(
        &kallsyms,
        "ffffffff83000000 T _text\nffffffff83000100 T recorded_kernel_fn\nffffffff83000200 T next_fn\n",
    )
    .expect("write");
    let mut tracker = Tracker::default();
    tracker.observe(&RecordData::Mmap(Mmap {
        pid: u32::MAX,
        tid: 0,
        addr: 0xffffffff81000000,
        len: 0x1000000,
        pgoff: 0xffffffff81000000,
        file_id: None,
        prot: None,
        flags: None,
        filename: "[kernel.kallsyms]_text".into(),
        is_data: false,
    }));
    assert_eq!(tracker.kernel_ref(), Some(("_text", 0xffffffff81000000)));
    let config = Config {
        kallsyms: Some(kallsyms),
        ..Config::default()
    };
    let s = Symbolizer::new(&config, None, None);
    let at = |addr| Location::Kernel { addr, module: None };
    let r = s.resolve_all(&tracker, &[at(0xffffffff81000150), at(0xffffffff81000250)]);
    assert_eq!(
        r.get(0).expect("resolved").symbol.as_deref(),
        Some("recorded_kernel_fn")
    );
    assert_eq!(
        r.get(1).expect("resolved").symbol.as_deref(),
        Some("next_fn")
    );
    assert_eq!(
        r.get(0).expect("resolved").addr,
        0xffffffff81000150,
        "the recorded address is kept"
    );
    // Without the recorded reference, addresses are taken as they are.
    let r = s.resolve_all(&Tracker::default(), &[at(0xffffffff83000150)]);
    assert_eq!(
        r.get(0).expect("resolved").symbol.as_deref(),
        Some("recorded_kernel_fn")
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// For the running kernel too, the copy perf saved at record time is
/// preferred to /proc/kallsyms (same kernel, the capture's modules, and
/// read in milliseconds rather than formatted by the kernel).
#[test]
fn recorded_copy_preferred_for_the_running_kernel() {
    let Some(build_id) = perfq_symbolize::running_kernel_build_id() else {
        eprintln!("skipped: the running kernel's build id is not readable here");
        return;
    };
    // perf names the folder by the id's hex; an id ending in zero bytes
    // may be a shorter id padded, named without them: not this test's case.
    if build_id.last() == Some(&0) {
        eprintln!("skipped: the running kernel's build id ends in a zero byte");
        return;
    }
    let cache = std::env::temp_dir().join(format!("perfq-buildid-{}", std::process::id()));
    let hex: String = build_id.iter().map(|b| format!("{b:02x}")).collect();
    let dir = cache.join("[kernel.kallsyms]").join(hex);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("kallsyms"),
        "ffffffff81000000 T _text\nffffffff81000100 T saved_copy_fn\nffffffff81000200 T next_fn\n",
    )
    .expect("write");
    let config = Config {
        buildid_dirs: vec![cache.clone()],
        ..Config::default()
    };
    let s = Symbolizer::new(&config, Some(&build_id), None);
    let r = s.resolve_all(
        &Tracker::default(),
        &[Location::Kernel {
            addr: 0xffffffff81000150,
            module: None,
        }],
    );
    assert_eq!(
        r.get(0).expect("resolved").symbol.as_deref(),
        Some("saved_copy_fn")
    );
    std::fs::remove_dir_all(&cache).ok();
}

/// A build-id cache's kallsyms is parsed once: the symbol disk keeps its
/// tables, and a second symbolizer reads them back with the same results
/// (module names and the KASLR reference symbol included).
#[test]
fn kallsyms_tables_kept_on_the_symbol_disk() {
    use perfq_symbolize::SymbolDisk;
    let root = std::env::temp_dir().join(format!("perfq-kallsyms-disk-{}", std::process::id()));
    let cache = root.join("buildid");
    let build_id = [0xcd_u8; 20];
    let dir = cache.join("[kernel.kallsyms]").join("cd".repeat(20));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("kallsyms"),
        "ffffffff81000000 T _text\nffffffff81000100 T kernel_fn\nffffffff81000200 T next_fn\n\
         ffffffffc0000000 t mod_fn\t[xfs]\nffffffffc0000100 t mod_next\t[xfs]\n",
    )
    .expect("write");
    let disk_dir = root.join("symbols");
    let config = Config {
        buildid_dirs: vec![cache.clone()],
        symbol_disk: Some(SymbolDisk::new(disk_dir.clone(), 1 << 20)),
        ..Config::default()
    };
    let at = [
        Location::Kernel {
            addr: 0xffffffff81000150,
            module: None,
        },
        Location::Kernel {
            addr: 0xffffffffc0000010,
            module: None,
        },
    ];
    let resolve = || {
        let s = Symbolizer::new(&config, Some(&build_id), None);
        assert!(s.has_kernel_symbols());
        let r = s.resolve_all(&Tracker::default(), &at);
        (0..at.len())
            .map(|i| {
                let f = r.get(i).expect("resolved");
                (f.symbol.clone(), f.dso.to_string())
            })
            .collect::<Vec<_>>()
    };
    let first = resolve();
    let kept = std::fs::read_dir(&disk_dir)
        .expect("the symbol disk was written")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("kallsyms-"))
        .count();
    assert_eq!(kept, 2, "the names' and the modules' tables");
    // The text overwritten with blanks of the same length and given back
    // its time: parsed, it would name nothing; the second symbolizer can
    // only have its names from the kept tables.
    let file = dir.join("kallsyms");
    let meta = std::fs::metadata(&file).expect("kallsyms");
    let stamp = meta.modified().expect("modification time");
    std::fs::write(&file, " ".repeat(meta.len() as usize)).expect("overwrite");
    std::fs::File::options()
        .append(true)
        .open(&file)
        .and_then(|f| f.set_modified(stamp))
        .expect("set the time back");
    let second = resolve();
    assert_eq!(first, second);
    assert_eq!(first[0].0.as_deref(), Some("kernel_fn"));
    assert_eq!(first[1].0.as_deref(), Some("mod_fn"));
    std::fs::remove_dir_all(&root).ok();
}
