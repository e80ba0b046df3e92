//! How glibc's allocator gives memory back, chosen per command.
//!
//! By default glibc raises its mmap threshold each time a large block is
//! freed, so later large blocks come from the heap and stay there after
//! being freed (below the top they are not trimmed). The commands that
//! run DataFusion or `report`'s phases allocate and free hundreds of
//! megabytes in turn: a fixed mmap threshold of 1 MiB gives freed large
//! blocks back and lowers their peak RSS on the build capture
//! (`report --children` 317 → 292 MB, a `function_total` query 370–390 →
//! ~325 MB, +5% time; a 128 KiB threshold saved 20 MB more for +12%).
//! `convert` and `batch` keep the default: converting was slower without
//! it and no smaller.

/// Fixes glibc's mmap threshold at 1 MiB (which also stops its dynamic
/// adjustment): blocks from 1 MiB up are mapped and unmapped when freed.
/// Call before any thread starts. Does nothing on other C libraries.
pub fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it is called from
    // main before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}
