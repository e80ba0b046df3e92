//! The global allocator: the system's, asking the kernel to back large
//! blocks with transparent huge pages.
//!
//! On system-wide captures perfq's largest structures are tables read in
//! random order: `convert`'s stack tree (on long captures its largest
//! allocation), its location tables, `report --children`'s per-stack
//! sums. With 4 KiB pages each of their pages costs a page fault when
//! first written and most of their lookups a TLB miss. Where the kernel
//! gives huge pages only to memory that asks (`madvise` mode, the default
//! of many distributions), blocks of [`LARGE`] and more ask: a conversion
//! then takes far fewer page faults and somewhat less CPU. The kernel
//! zeroes 2 MiB pages, so the gain is in TLB misses, not in system time.
//! glibc can do the same (`glibc.malloc.hugetlb=1`), but only as a
//! tunable read when the process starts.
//!
//! The advice covers every page the block touches, not only the huge
//! pages inside it: advice on part of a mapping splits it in two, and
//! glibc's `realloc` of a large block (one mapping) then fails to
//! `mremap` it and copies it instead. A block's pages may hold other
//! blocks, which then get the same advice: it is only a hint, and
//! changes no memory's contents.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks from this size on ask for huge pages: the size glibc maps
/// large blocks from during `convert` (`heap::CONVERSION`), and twice a
/// huge page, so that one always fits inside.
pub const LARGE: usize = 4 << 20;

/// [`System`], with blocks of [`LARGE`] and more advised to use huge
/// pages.
pub struct HugePageBlocks;

// SAFETY: every call is `System`'s; `advise` only gives the kernel a hint
// about pages of the block just returned.
unsafe impl GlobalAlloc for HugePageBlocks {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc`. A block moved by `mremap` keeps its advice,
        // but one that grew in place or was copied may not have it yet.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        advise(p, new_size);
        p
    }
}

/// The page-aligned range holding `size` bytes from `start`, with pages
/// of `page` bytes (a power of two); `None` below [`LARGE`].
fn advised_range(start: usize, size: usize, page: usize) -> Option<(usize, usize)> {
    if size < LARGE {
        return None;
    }
    let end = start.checked_add(size)?.checked_next_multiple_of(page)?;
    let start = start & !(page - 1);
    Some((start, end - start))
}

/// Asks for huge pages for the block of `size` bytes at `p` (null when
/// the allocation failed).
fn advise(p: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    if let Some((start, len)) =
        advised_range(p as usize, size, page_size()).filter(|_| !p.is_null())
    {
        // SAFETY: the range covers only pages of the block just allocated
        // (whole pages, so perhaps other blocks' too); MADV_HUGEPAGE
        // changes no contents and cannot fail in a way that matters: the
        // pages are then small, as without it.
        unsafe {
            libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, size);
}

/// The system's page size (asked once; 4 KiB if it cannot say).
#[cfg(target_os = "linux")]
fn page_size() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    match PAGE.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: sysconf reads a constant of the system; it does not
            // allocate (this runs inside the allocator).
            let asked = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            let page = usize::try_from(asked)
                .ok()
                .filter(|p| p.is_power_of_two())
                .unwrap_or(4096);
            PAGE.store(page, Ordering::Relaxed);
            page
        }
        page => page,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The advice covers the block's whole pages, so that a large block
    /// stays one mapping; small blocks get none.
    #[test]
    fn advice_covers_whole_pages_of_large_blocks() {
        let page = 4096;
        assert_eq!(advised_range(0x10_0010, LARGE - 1, page), None);
        // glibc's large blocks start 16 bytes into their first page.
        assert_eq!(
            advised_range(0x7f00_0000_0010, LARGE, page),
            Some((0x7f00_0000_0000, LARGE + page))
        );
        assert_eq!(
            advised_range(0x7f00_0000_0000, LARGE, page),
            Some((0x7f00_0000_0000, LARGE))
        );
        assert_eq!(advised_range(usize::MAX - 10, LARGE, page), None);
    }

    /// Blocks that grow across [`LARGE`] keep their contents.
    #[test]
    fn large_blocks_grow_and_shrink_intact() {
        let a = HugePageBlocks;
        let layout = Layout::from_size_align(1 << 20, 16).unwrap();
        // SAFETY: each pointer is used within the size it was last given,
        // and freed once with its layout.
        unsafe {
            let mut p = a.alloc(layout);
            assert!(!p.is_null());
            p.write_bytes(7, layout.size());
            let mut size = layout.size();
            for new in [LARGE, 3 * LARGE, 8 * LARGE, LARGE / 2] {
                p = a.realloc(p, Layout::from_size_align(size, 16).unwrap(), new);
                assert!(!p.is_null());
                let kept = size.min(new);
                assert!(std::slice::from_raw_parts(p, kept).iter().all(|&b| b == 7));
                p.add(kept).write_bytes(7, new - kept);
                size = new;
            }
            a.dealloc(p, Layout::from_size_align(size, 16).unwrap());
            let z = a.alloc_zeroed(Layout::from_size_align(LARGE, 64).unwrap());
            assert!(std::slice::from_raw_parts(z, LARGE).iter().all(|&b| b == 0));
            a.dealloc(z, Layout::from_size_align(LARGE, 64).unwrap());
        }
    }
}
