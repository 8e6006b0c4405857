//! Kubernetes resource quantities as the devfile's `memoryLimit` and `cpuLimit` use them:
//! the one parser, shared by the validator (which rejects what it cannot read) and the
//! runtimes (which apply the numbers), so a limit that validates is a limit that is applied.

/// Memory suffixes and their multipliers: binary (`Ki`…`Ei`) and decimal (`k`…`E`).
const MEMORY_SUFFIXES: &[(&str, f64)] = &[
    ("Ki", 1024.0),
    ("Mi", 1024.0 * 1024.0),
    ("Gi", 1024.0 * 1024.0 * 1024.0),
    ("Ti", 1024.0 * 1024.0 * 1024.0 * 1024.0),
    ("Pi", 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0),
    ("Ei", 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0),
    ("k", 1e3),
    ("M", 1e6),
    ("G", 1e9),
    ("T", 1e12),
    ("P", 1e15),
    ("E", 1e18),
    ("", 1.0),
];

/// A positive decimal number without sign or exponent (`0.5`, `512`).
fn positive(number: &str) -> Option<f64> {
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    number
        .parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && v.is_finite())
}

/// `512Mi` → 536870912 bytes; `None` when the text is not a positive memory quantity (or
/// rounds to less than one byte).
pub fn memory_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    MEMORY_SUFFIXES.iter().find_map(|(suffix, factor)| {
        let bytes = positive(text.strip_suffix(suffix)?)? * factor;
        (bytes >= 1.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
    })
}

/// `500m` → 500 millicores, `2` → 2000; `None` when the text is not a positive CPU quantity
/// (or is less than one millicore).
pub fn cpu_millis(text: &str) -> Option<u64> {
    let text = text.trim();
    let millis = match text.strip_suffix('m') {
        Some(number) => positive(number)?,
        None => positive(text)? * 1000.0,
    };
    (millis >= 1.0 && millis < u64::MAX as f64).then_some(millis as u64)
}

/// Bytes as the largest binary unit that divides them (`536870912` → `512Mi`), for messages
/// and status.
pub fn format_memory(bytes: u64) -> String {
    for (suffix, factor) in [("Gi", 1u64 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)] {
        if bytes >= factor && bytes.is_multiple_of(factor) {
            return format!("{}{suffix}", bytes / factor);
        }
    }
    bytes.to_string()
}

/// Millicores as a devfile writes them (`500m`, `2`).
pub fn format_cpu(millis: u64) -> String {
    if millis.is_multiple_of(1000) {
        (millis / 1000).to_string()
    } else {
        format!("{millis}m")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_quantities_read_as_bytes() {
        assert_eq!(memory_bytes("512Mi"), Some(512 << 20));
        assert_eq!(memory_bytes("1Gi"), Some(1 << 30));
        assert_eq!(memory_bytes("1.5Gi"), Some(3 << 29));
        assert_eq!(memory_bytes("128M"), Some(128_000_000));
        assert_eq!(memory_bytes("4096"), Some(4096));
        for bad in ["", "Mi", "-1Mi", "0", "1e3", "12 MB", "0.1"] {
            assert_eq!(memory_bytes(bad), None, "{bad:?}");
        }
        assert_eq!(format_memory(512 << 20), "512Mi");
        assert_eq!(format_memory(1 << 30), "1Gi");
        assert_eq!(format_memory(1000), "1000");
    }

    #[test]
    fn cpu_quantities_read_as_millicores() {
        assert_eq!(cpu_millis("500m"), Some(500));
        assert_eq!(cpu_millis("2"), Some(2000));
        assert_eq!(cpu_millis("0.25"), Some(250));
        for bad in ["", "m", "0", "-1", "1 core", "0.0001"] {
            assert_eq!(cpu_millis(bad), None, "{bad:?}");
        }
        assert_eq!(format_cpu(500), "500m");
        assert_eq!(format_cpu(2000), "2");
    }
}
