//! Work beside the calling thread: two pieces at once, one on a scoped
//! thread, or the freeing of what the caller is done with.

/// Runs `there` on a thread of its own while `here` runs on this one, and
/// returns both results once both are done.
///
/// A panic in `there` is raised again here, after `here` has finished, so
/// that it reads as it would had both run on this thread.
pub fn beside<A, B: Send>(here: impl FnOnce() -> A, there: impl FnOnce() -> B + Send) -> (A, B) {
    std::thread::scope(|s| {
        let there = s.spawn(there);
        let a = here();
        let b = there
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (a, b)
    })
}

/// Drops `t` on a thread of its own: freeing millions of small
/// allocations (symbols, frames, tree nodes) one by one takes time the
/// caller need not wait for. A command-line run that exits before the
/// thread is done is as good.
pub fn drop_beside<T: Send + 'static>(t: T) {
    // Without a thread (resources exhausted), the closure and `t` with
    // it are dropped here instead.
    let _ = std::thread::Builder::new()
        .name("free".into())
        .spawn(move || drop(t));
}

#[cfg(test)]
mod tests {
    use super::beside;

    #[test]
    fn both_results_come_back_in_order() {
        let v = [1u64, 2, 3];
        let (a, b) = beside(|| v.iter().sum::<u64>(), || v.len());
        assert_eq!((a, b), (6, 3));
    }

    #[test]
    fn a_panic_beside_is_raised_here() {
        let r = std::panic::catch_unwind(|| beside(|| 1, || -> u32 { panic!("beside") }));
        let panic = r.expect_err("the panic is raised again");
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"beside"));
    }
}
