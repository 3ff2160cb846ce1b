//! Text from outside (kernel attributes, drive pages, mount tables, tool output) made safe to
//! show: escapes undone, control characters that could drive the terminal replaced by `?`.
//! Pure functions: the parsers in `sys` and the decoders in `smart` both use them.

/// Undoes the kernel's octal escapes (`\040` a space); controls they make become `?`.
pub fn unescape_octal(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            let digits = &bytes[i + 1..i + 4];
            if digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                let value = digits
                    .iter()
                    .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                if let Ok(byte) = u8::try_from(value) {
                    out.push(byte);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    neutralize_controls(&String::from_utf8_lossy(&out))
}

/// Replaces control characters by `?`.
pub fn neutralize_controls(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Raw attribute bytes as display-safe text; empty text is `None`.
pub fn clean_text(raw: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(raw);
    let cleaned = neutralize_controls(text.trim_matches(|c: char| c.is_whitespace() || c == '\0'));
    (!cleaned.is_empty()).then_some(cleaned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octal_escapes() {
        assert_eq!(unescape_octal(r"/mnt/with\040space"), "/mnt/with space");
        assert_eq!(unescape_octal(r"a\134b"), r"a\b");
        assert_eq!(unescape_octal(r"trailing\04"), r"trailing\04");
        assert_eq!(unescape_octal(r"\"), r"\");
        assert_eq!(unescape_octal(r"\777x"), r"\777x");
        // An escaped ESC must not reach the terminal.
        assert_eq!(unescape_octal(r"/mnt/evil\033[2J"), "/mnt/evil?[2J");
    }

    #[test]
    fn clean_text_neutralises_control_characters() {
        assert_eq!(
            clean_text(b"QEMU HARDDISK   \n").as_deref(),
            Some("QEMU HARDDISK")
        );
        assert_eq!(clean_text(b"\x1b[2Jevil").as_deref(), Some("?[2Jevil"));
        assert_eq!(
            clean_text(b"\xff\xfeok").as_deref(),
            Some("\u{fffd}\u{fffd}ok")
        );
        assert_eq!(clean_text(b"  \n"), None);
    }
}
