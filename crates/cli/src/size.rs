//! Byte sizes given on the command line: `512K`, `64M`, `2G` (powers of
//! 1024, an optional `i`/`iB`/`B` after the letter) or plain bytes.

/// Parses `s` as a byte size (clap's value parser for size options).
pub fn parse(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{s:?} is not a size (e.g. 512M, 2G or bytes)"))?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KI" | "KIB" => 10,
        "M" | "MB" | "MI" | "MIB" => 20,
        "G" | "GB" | "GI" | "GIB" => 30,
        "T" | "TB" | "TI" | "TIB" => 40,
        _ => return Err(format!("{s:?}: unknown unit (K, M, G or T)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn units_are_powers_of_1024() {
        assert_eq!(parse("4096"), Ok(4096));
        assert_eq!(parse("512K"), Ok(512 << 10));
        assert_eq!(parse("64M"), Ok(64 << 20));
        assert_eq!(parse("64MiB"), Ok(64 << 20));
        assert_eq!(parse("2g"), Ok(2 << 30));
        assert_eq!(parse(" 1 T "), Ok(1 << 40));
    }

    #[test]
    fn bad_sizes_are_refused() {
        assert!(parse("").is_err());
        assert!(parse("M").is_err());
        assert!(parse("12X").is_err());
        assert!(parse("-5M").is_err());
        assert!(parse("99999999999999999999").is_err());
        assert!(parse("20000000000T").is_err());
    }
}
