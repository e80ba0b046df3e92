//! How glibc's allocator gives memory back, chosen per command.
//!
//! By default glibc raises its mmap threshold each time a large block is
//! freed (up to 32 MiB), so later large blocks come from the heap and stay
//! there after being freed (below the top they are not trimmed). perfq's
//! commands allocate and free tens to hundreds of megabytes phase by phase:
//! a fixed threshold gives freed large blocks back. Conversion gets a
//! higher one: at the lower, it maps and unmaps its mid-sized encoding
//! buffers over and over.

/// The threshold for commands that read, aggregate and print.
pub const PHASES: usize = 1 << 20;

/// The threshold for `convert` and `batch`.
pub const CONVERSION: usize = 4 << 20;

/// Fixes glibc's mmap threshold at `bytes` (which also stops its dynamic
/// adjustment): blocks from that size up are mapped, and unmapped when
/// freed. Call before any thread starts. Does nothing on other C
/// libraries.
///
/// The trim threshold goes to twice that. Fixing the mmap threshold
/// leaves it at its 128 KiB default, and then each of the encoding
/// threads' arenas handed its top back to the OS whenever a row group's
/// buffers (half a megabyte a column) were freed, only to fault the pages
/// in again for the next one.
pub fn give_back_freed_memory(bytes: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it is called from
    // main before any other thread exists.
    unsafe {
        libc::mallopt(
            libc::M_MMAP_THRESHOLD,
            libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX),
        );
        libc::mallopt(
            libc::M_TRIM_THRESHOLD,
            libc::c_int::try_from(bytes.saturating_mul(2)).unwrap_or(libc::c_int::MAX),
        );
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = bytes;
}

/// Hands the free memory inside glibc's heaps back to the OS now (pages
/// of freed small blocks, which no threshold returns). For the end of a
/// phase that freed far more than it keeps.
pub fn release_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns unused pages of the allocator's
    // heaps; no allocation is moved or freed.
    unsafe {
        libc::malloc_trim(0);
    }
}
