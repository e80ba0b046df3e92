//! Rust and C++ names as perf prints them.

/// The demangled form of `raw`, or `None` when it is not mangled (C).
///
/// Rust legacy names lose their `::h<hash>` suffix and v0 names their
/// disambiguators, as perf's Rust demangler prints them; C++ names keep
/// their parameter lists, as perf's `DMGL_PARAMS` does. A PLT stub's
/// name is its function's, demangled, with `@plt` after it, as perf
/// synthesizes it.
pub fn demangle(raw: &str) -> Option<String> {
    if let Some(function) = raw.strip_suffix("@plt") {
        return demangle(function).map(|d| format!("{d}@plt"));
    }
    if let Ok(d) = rustc_demangle::try_demangle(raw) {
        return Some(format!("{d:#}"));
    }
    if raw.starts_with("_Z") {
        let sym = cpp_demangle::Symbol::new(raw).ok()?;
        return sym.demangle().ok();
    }
    None
}

/// `demangle(raw)` or `raw` itself.
pub fn display_name(raw: &str) -> String {
    demangle(raw).unwrap_or_else(|| raw.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_and_cpp() {
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE").as_deref(),
            Some("core::fmt::write")
        );
        assert_eq!(demangle("_Z3fooi").as_deref(), Some("foo(int)"));
        assert_eq!(demangle("main"), None);
        assert_eq!(
            demangle("_ZdaPv@plt").as_deref(),
            Some("operator delete[](void*)@plt")
        );
        assert_eq!(demangle("malloc@plt"), None);
    }
}
