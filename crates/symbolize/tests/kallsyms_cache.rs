//! Kernel symbols of a capture from another kernel come from perf's
//! build-id cache (`~/.debug/[kernel.kallsyms]/<build id>/kallsyms`).

use perfq_symbolize::{Config, Dsos, Location, Symbolizer};

#[test]
fn kallsyms_from_the_build_id_cache() {
    let home = std::env::temp_dir().join(format!("perfq-home-{}", std::process::id()));
    let build_id = [0xab_u8; 20];
    let dir = home.join(".debug/[kernel.kallsyms]").join("ab".repeat(20));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("kallsyms"), "ffffffff81000000 T _text\nffffffff81000100 T recorded_kernel_fn\nffffffff81000200 T next_fn\n")
        .expect("write");
    // This test is its own process: changing HOME affects nothing else.
    std::env::set_var("HOME", &home);
    let s = Symbolizer::new(&Config::default(), Some(&build_id), None);
    assert!(
        s.has_kernel_symbols(),
        "cached kallsyms used for a kernel that is not running"
    );
    let r = s.resolve_all(
        &Dsos::default(),
        &[Location::Kernel {
            addr: 0xffffffff81000150,
            module: None,
        }],
    );
    assert_eq!(r[0].symbol.as_deref(), Some("recorded_kernel_fn"));
    assert_eq!(r[0].dso, "[kernel.kallsyms]");
    std::fs::remove_dir_all(&home).ok();
}
