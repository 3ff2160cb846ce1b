//! Generators shared by the properties: byte-level mutations of captured pages, hostile text,
//! and the kernel's octal escaping.

use std::path::PathBuf;

use proptest::collection::vec;
use proptest::prelude::*;

/// One edit of a byte buffer. Positions are taken modulo the buffer's length when applied,
/// so a list of edits shrinks towards fewer and simpler edits.
#[derive(Debug, Clone)]
pub enum Mutation {
    FlipBit { at: usize, bit: u8 },
    SetByte { at: usize, value: u8 },
    Truncate { keep: usize },
    Extend { bytes: Vec<u8> },
    Insert { at: usize, bytes: Vec<u8> },
    Remove { at: usize, len: usize },
    Fill { at: usize, len: usize, value: u8 },
}

/// Bytes that parsers tend to treat specially: NUL, all ones, ESC, DEL, newline, space, the
/// IDENTIFY integrity signature, high-bit bytes.
pub fn interesting_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => any::<u8>(),
        1 => prop::sample::select(vec![
            0x00u8, 0xff, 0x1b, 0x7f, 0x0a, 0x0d, 0x20, 0x09, 0xa5, 0x80, 0x9b, 0x01, 0x72,
            0x70, 0x09, 0x0c, 0x08, 0x4f, 0xc2, 0xf4, 0x2c,
        ]),
    ]
}

pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        4 => (any::<usize>(), interesting_byte()).prop_map(|(at, value)| Mutation::SetByte { at, value }),
        1 => any::<usize>().prop_map(|keep| Mutation::Truncate { keep }),
        1 => vec(interesting_byte(), 0..64).prop_map(|bytes| Mutation::Extend { bytes }),
        1 => (any::<usize>(), vec(interesting_byte(), 1..16))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        1 => (any::<usize>(), 1usize..64).prop_map(|(at, len)| Mutation::Remove { at, len }),
        1 => (any::<usize>(), 1usize..128, prop::sample::select(vec![0u8, 0xff, 0x20]))
            .prop_map(|(at, len, value)| Mutation::Fill { at, len, value }),
    ]
}

/// Applies one mutation in place.
pub fn apply(buf: &mut Vec<u8>, m: &Mutation) {
    let len = buf.len();
    match m {
        Mutation::FlipBit { at, bit } if len > 0 => buf[at % len] ^= 1 << bit,
        Mutation::SetByte { at, value } if len > 0 => buf[at % len] = *value,
        Mutation::Truncate { keep } => buf.truncate(keep % (len + 1)),
        Mutation::Extend { bytes } => buf.extend_from_slice(bytes),
        Mutation::Insert { at, bytes } => {
            let at = at % (len + 1);
            buf.splice(at..at, bytes.iter().copied());
        }
        Mutation::Remove { at, len: n } if len > 0 => {
            let at = at % len;
            buf.drain(at..(at + n).min(len));
        }
        Mutation::Fill { at, len: n, value } if len > 0 => {
            let at = at % len;
            buf[at..(at + n).min(len)].fill(*value);
        }
        _ => {}
    }
}

/// `base` with up to `max` mutations applied.
pub fn mutated(base: Vec<u8>, max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(mutation(), 0..=max).prop_map(move |edits| {
        let mut buf = base.clone();
        for m in &edits {
            apply(&mut buf, m);
        }
        buf
    })
}

/// One of `bases` with up to `max` mutations applied.
pub fn mutated_any(bases: Vec<Vec<u8>>, max: usize) -> impl Strategy<Value = Vec<u8>> {
    (prop::sample::select(bases), vec(mutation(), 0..=max)).prop_map(|(base, edits)| {
        let mut buf = base;
        for m in &edits {
            apply(&mut buf, m);
        }
        buf
    })
}

/// Sets the last byte of the first `len` bytes so they sum to zero modulo 256 (the SMART
/// pages' and IDENTIFY's checksum), letting mutated pages past the checksum test.
pub fn fix_checksum(buf: &mut [u8], len: usize) {
    if buf.len() >= len {
        let sum = buf[..len - 1].iter().fold(0u8, |a, b| a.wrapping_add(*b));
        buf[len - 1] = 0u8.wrapping_sub(sum);
    }
}

/// Short text with the characters parsers trip over: spaces, tabs, newlines, backslashes,
/// octal-looking digits, ESC and other controls, NUL, parentheses, colons, dashes, brackets,
/// Unicode whitespace and multi-byte letters.
pub fn hostile_text(max: usize) -> BoxedStrategy<String> {
    let chars = prop_oneof![
        6 => prop::char::range('a', 'z'),
        3 => prop::sample::select(vec![
            ' ', '\t', '\n', '\r', '\\', '0', '4', '7', '8', '\u{1b}', '\u{7f}', '\0', '(', ')',
            ':', '-', '[', ']', '/', '.', '\u{a0}', '\u{85}', '\u{2028}', '\u{3000}', 'é',
            '\u{9b}', '\u{fffd}', '\u{b}', '\u{c}',
        ]),
        1 => any::<char>(),
    ];
    vec(chars, 0..=max)
        .prop_map(|cs| cs.into_iter().collect())
        .boxed()
}

/// Raw attribute bytes: text, numbers in many spellings, invalid UTF-8, NULs.
pub fn hostile_bytes(max: usize) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        3 => hostile_text(max).prop_map(String::into_bytes),
        2 => number_text().prop_map(String::into_bytes),
        2 => vec(interesting_byte(), 0..=max),
        1 => vec(prop::sample::select(vec![0xc3u8, 0xa9, 0xe2, 0x80, 0xff, 0xfe, 0xed, 0xa0, 0xf0, 0x90, b'a', 0]), 0..=max),
    ]
    .boxed()
}

/// A decimal number as a sysfs file might hold it, or nearly: huge, negative, signed,
/// padded, with a trailing newline or NUL, in hex or exponent form.
pub fn number_text() -> BoxedStrategy<String> {
    let digits = prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        any::<u32>().prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u128>().prop_map(|n| n.to_string()),
        "[0-9]{20,60}",
        Just("18446744073709551616".to_string()),
        Just("-0".to_string()),
        Just("+1".to_string()),
        Just("0x10".to_string()),
        Just("1e3".to_string()),
        Just(String::new()),
    ];
    let pre = prop::sample::select(vec!["", " ", "\t", "\n", "\0", "+", "-", "00"]);
    let post = prop::sample::select(vec!["", "\n", " \n", "\0", "\n\n", " x", "\u{1b}[2J"]);
    (pre, digits, post)
        .prop_map(|(a, d, b)| format!("{a}{d}{b}"))
        .boxed()
}

/// The kernel's escaping of paths in mountinfo and `/proc/swaps` (`seq_escape` with
/// " \t\n\\": those four bytes become `\ooo`).
pub fn kernel_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            ' ' | '\t' | '\n' | '\\' => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A captured page from `tests/fixtures/pages/` (hex text, any whitespace).
pub fn page(name: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let hex: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    hex.chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pages")
        .join(name)
}
