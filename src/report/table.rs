//! A small aligned-text table that fits a width by shrinking the columns that allow it, and
//! word wrapping for the sentences around it.

/// How a column lines up and whether it may be cut to fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub header: &'static str,
    pub right: bool,
    /// The narrowest this column may become when the table is too wide (0 = never shrink).
    pub min_width: usize,
    /// Among shrinkable columns, lower gives way first.
    pub shrink_order: u8,
}

impl Column {
    pub const fn left(header: &'static str) -> Self {
        Column {
            header,
            right: false,
            min_width: 0,
            shrink_order: 0,
        }
    }

    pub const fn right(header: &'static str) -> Self {
        Column {
            header,
            right: true,
            min_width: 0,
            shrink_order: 0,
        }
    }

    /// Lets the column shrink down to `min_width`; columns with a lower `order` shrink first.
    pub const fn shrink_to(mut self, min_width: usize, order: u8) -> Self {
        self.min_width = min_width;
        self.shrink_order = order;
        self
    }
}

/// Cuts `s` to `width` characters, marking the cut with `~`.
pub fn fit(s: &str, width: usize) -> String {
    let count = s.chars().count();
    if count <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(width - 1).collect();
    out.push('~');
    out
}

/// Rows under the headers, one space apart, no trailing spaces, at most `max_width` a line
/// when shrinkable columns allow it.
pub fn render(columns: &[Column], rows: &[Vec<String>], max_width: usize) -> String {
    let mut widths: Vec<usize> = columns.iter().map(|c| c.header.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let total = |w: &[usize]| w.iter().sum::<usize>() + w.len().saturating_sub(1);
    let mut order: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i].min_width > 0)
        .collect();
    order.sort_by_key(|&i| columns[i].shrink_order);
    for i in order {
        let excess = total(&widths).saturating_sub(max_width);
        if excess == 0 {
            break;
        }
        if widths[i] > columns[i].min_width {
            widths[i] -= excess.min(widths[i] - columns[i].min_width);
        }
    }

    let mut out = String::new();
    let header: Vec<String> = columns.iter().map(|c| c.header.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, (col, cell)) in columns.iter().zip(row).enumerate() {
            let cell = fit(cell, widths[i]);
            let pad = widths[i] - cell.chars().count();
            if i > 0 {
                line.push(' ');
            }
            if col.right {
                line.push_str(&" ".repeat(pad));
                line.push_str(&cell);
            } else {
                line.push_str(&cell);
                line.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `prefix` then `text` wrapped to `width`, continuation lines indented to the text (four
/// spaces under a wide prefix), newline-ended. A word longer than a line stays whole.
pub fn wrap(prefix: &str, text: &str, width: usize) -> String {
    let indent = if prefix.chars().count() <= width / 2 {
        prefix.chars().count()
    } else {
        4
    };
    let mut out = String::new();
    let mut line = prefix.to_string();
    let mut line_len = line.chars().count();
    let mut empty = true;
    for word in text.split_whitespace() {
        let len = word.chars().count();
        if !empty && line_len + 1 + len > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(indent);
            line_len = indent;
            empty = true;
        }
        if !empty {
            line.push(' ');
            line_len += 1;
        }
        line.push_str(word);
        line_len += len;
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// A throughput in MB/s, whole: one decimal below 10,000.
pub fn rate(mbps: f64) -> String {
    if mbps >= 10_000.0 {
        format!("{mbps:.0}")
    } else {
        format!("{mbps:.1}")
    }
}

/// A count or rate of I/Os, never cut: above 9,999 it shortens (16.7k, 1.25M) to fit a narrow
/// column whole.
pub fn count(v: f64) -> String {
    if v >= 999_950.0 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 9_999.5 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// Milliseconds: three decimals below 100, fewer above, so a 6-wide column never cuts one.
pub fn ms(v: f64) -> String {
    if v >= 999.95 {
        format!("{v:.0}")
    } else if v >= 99.9995 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_marks_cuts() {
        assert_eq!(fit("abcdef", 6), "abcdef");
        assert_eq!(fit("abcdef", 4), "abc~");
        assert_eq!(fit("abc", 0), "");
    }

    #[test]
    fn shrinks_to_width_from_the_right() {
        let cols = [
            Column::left("NAME"),
            Column::right("SIZE"),
            Column::left("NAME2").shrink_to(3, 0),
            Column::left("NOTE").shrink_to(4, 1),
        ];
        let rows = vec![vec![
            "sda".to_string(),
            "1.0 GiB".to_string(),
            "model".to_string(),
            "a rather long note that does not fit".to_string(),
        ]];
        let out = render(&cols, &rows, 28);
        for line in out.lines() {
            assert!(line.chars().count() <= 28, "{line:?}");
        }
        // NAME2 (order 0) gives way first, down to its minimum, then NOTE.
        assert_eq!(out.lines().nth(1), Some("sda  1.0 GiB mo~ a rather l~"));
    }

    #[test]
    fn wraps_with_hanging_indent() {
        let out = wrap(
            "  Restore: ",
            "the original (on) is recorded in /run/disktriage",
            30,
        );
        assert_eq!(
            out,
            "  Restore: the original (on)\n           is recorded in\n           /run/disktriage\n"
        );
        assert_eq!(wrap("x ", "", 10), "x\n");
        // A word longer than the line stays whole.
        assert_eq!(wrap("", "abcdefghijkl b", 5), "abcdefghijkl\nb\n");
        for l in wrap("  Note: ", &"word ".repeat(50), 80).lines() {
            assert!(l.len() <= 80, "{l}");
        }
    }
}
