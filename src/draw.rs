//! The drawing helpers every screen and dialog shares, below `app` so a component file draws
//! with them too: fitting text into its room, the marks that say what is out of sight, and the
//! clock.
//!
//! Text must be read whole. Every place that draws a line, a title or a table cell into a
//! fixed width tells this module what it wanted to show and how much room it had; a line that
//! does not fit is a cut (a word or a number the admin cannot read). Names and paths may be
//! shortened on purpose with [`elide`], which keeps both ends and marks the middle; every
//! other shortening ([`cut`]) counts as a cut.
//!
//! The record is kept only while [`recording`] runs (`ui::render_checked`, which the snapshot
//! tests call); an ordinary draw records nothing and changes nothing.

pub mod chart;

use std::cell::RefCell;
use std::fmt;

use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};

/// "1:02:03": the elapsed time on every screen, as on the CLI's progress line.
pub use crate::model::clock;

thread_local! {
    /// `Some` while `render_checked` draws on this thread.
    static CUTS: RefCell<Option<Vec<Cut>>> = const { RefCell::new(None) };
}

/// A text that was drawn into less room than it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// What the screen wanted to show.
    pub text: String,
    /// Its width in cells.
    pub width: usize,
    /// The cells it had.
    pub room: usize,
}

impl fmt::Display for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} needs {} cells, has {}",
            self.text, self.width, self.room
        )
    }
}

/// Runs `draw` and returns every text it cut.
pub fn recording(draw: impl FnOnce()) -> Vec<Cut> {
    CUTS.with(|c| *c.borrow_mut() = Some(Vec::new()));
    draw();
    CUTS.with(|c| c.borrow_mut().take().unwrap_or_default())
}

/// Cuts text to `width`, marked `~` (ASCII: safe on every console); a cut.
pub(crate) fn cut(s: &str, width: usize) -> String {
    text(s, width);
    crate::report::table::fit(s, width)
}

fn record(text: &str, width: usize, room: usize) {
    CUTS.with(|c| {
        if let Some(cuts) = c.borrow_mut().as_mut() {
            cuts.push(Cut {
                text: text.to_string(),
                width,
                room,
            });
        }
    });
}

/// Notes `text` drawn into `room` cells.
pub(crate) fn text(text: &str, room: usize) {
    let width = text.trim_end().chars().count();
    if width > room {
        record(text, width, room);
    }
}

/// Notes unwrapped lines drawn into `area`: each must fit.
pub(crate) fn lines(lines: &[Line<'_>], area: Rect) {
    for l in lines {
        let s: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
        text(&s, area.width.into());
    }
    if lines.len() > area.height.into() {
        let lost: Vec<String> = lines[usize::from(area.height)..]
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        record(&lost.join(" / "), lines.len(), area.height.into());
    }
}

/// Notes a bordered block's title drawn on `area` (the block's outer area).
pub(crate) fn title(title: &str, area: Rect) {
    text(title, area.width.saturating_sub(2).into());
}

/// A list's visible rows, and how many are out of sight above and below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    pub offset: usize,
    pub above: usize,
    pub below: usize,
}

impl Window {
    /// The window over `rows` of which `visible` fit, as ratatui's `Table` scrolls.
    pub(crate) fn over(rows: usize, visible: usize, selected: Option<usize>) -> Window {
        let visible = visible.max(1);
        let offset = selected.map_or(0, |s| (s + 1).saturating_sub(visible));
        let offset = offset.min(rows.saturating_sub(visible));
        Window {
            offset,
            above: offset,
            below: rows.saturating_sub(offset + visible),
        }
    }

    /// " 2 more above, 3 below (Up/Down) ", or nothing when every row shows.
    pub(crate) fn mark(&self) -> String {
        match (self.above, self.below) {
            (0, 0) => String::new(),
            (a, 0) => format!(" {a} more above (Up/Down, Home) "),
            (0, b) => format!(" {b} more below (Up/Down, End) "),
            (a, b) => format!(" {a} more above, {b} below (Up/Down) "),
        }
    }
}

/// The mark of a scrolled text ([`Window::mark`]'s words, no Home and End).
pub(crate) fn scrolled(total: usize, top: usize, visible: usize) -> String {
    Window {
        offset: top,
        above: top,
        below: total.saturating_sub(top + visible),
    }
    .mark()
    .replace(", Home)", ")")
    .replace(", End)", ")")
}

/// Column widths as ratatui's `Table` lays them out.
pub(crate) fn columns(widths: &[Constraint], inner: Rect, selection: u16) -> Vec<usize> {
    let [_, area] = Layout::horizontal([Constraint::Length(selection), Constraint::Fill(0)])
        .areas(Rect::new(0, 0, inner.width, 1));
    Layout::horizontal(widths.iter().copied())
        .flex(Flex::Start)
        .spacing(1)
        .split(area)
        .iter()
        .map(|r| usize::from(r.width))
        .collect()
}

/// Notes a table's cells against its column widths ([`columns`]).
pub(crate) fn cells<S: AsRef<str>, R: AsRef<[S]>>(rows: &[R], columns: &[usize]) {
    for row in rows {
        for (cell, &room) in row.as_ref().iter().zip(columns) {
            text(cell.as_ref(), room);
        }
    }
}

/// Wraps lines wider than `width` at spaces, keeping styles; nothing is lost.
pub(crate) fn wrap(lines: Vec<Line<'static>>, width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for line in lines {
        if line.width() <= width || width < 8 {
            out.push(line);
            continue;
        }
        let style = line.style;
        let lead = line
            .spans
            .iter()
            .flat_map(|s| s.content.chars())
            .take_while(|c| *c == ' ')
            .count();
        let indent = (lead + 2).min(width / 2);
        let mut current: Vec<Span<'static>> = Vec::new();
        let mut used = 0usize;
        // The spaces before the next word: dropped at a line break.
        let mut gap: Vec<Span<'static>> = Vec::new();
        let mut gap_len = 0usize;
        for span in line.spans {
            let mut rest: &str = &span.content;
            while !rest.is_empty() {
                let spaces = rest.len() - rest.trim_start_matches(' ').len();
                if spaces > 0 {
                    gap.push(Span::styled(rest[..spaces].to_string(), span.style));
                    gap_len += spaces;
                    rest = &rest[spaces..];
                    continue;
                }
                let end = rest.find(' ').unwrap_or(rest.len());
                let mut word = &rest[..end];
                rest = &rest[end..];
                while !word.is_empty() {
                    let n = word.chars().count();
                    if used > indent && used + gap_len + n > width {
                        out.push(Line::from(std::mem::take(&mut current)).style(style));
                        current.push(Span::raw(" ".repeat(indent)));
                        used = indent;
                        gap.clear();
                        gap_len = 0;
                    }
                    current.append(&mut gap);
                    used += gap_len;
                    gap_len = 0;
                    let room = width.saturating_sub(used).max(1);
                    let take: String = word.chars().take(room).collect();
                    word = &word[take.len()..];
                    used += take.chars().count();
                    current.push(Span::styled(take, span.style));
                }
            }
        }
        if !current.is_empty() {
            out.push(Line::from(current).style(style));
        }
    }
    out
}

/// Fits a pane's lines into `area` (inside its border): each wrapped, then as many whole lines
/// as fit, in order (identifying lines first). The last row names what did not fit, by each
/// line's label (its first span).
pub(crate) fn pane(lines: Vec<Line<'static>>, area: Rect) -> Vec<Line<'static>> {
    pane_or(lines, area, None)
}

/// [`pane`], the mark saying how many lines were left out and `hint` where.
pub(crate) fn pane_or(
    lines: Vec<Line<'static>>,
    area: Rect,
    hint: Option<&str>,
) -> Vec<Line<'static>> {
    let (width, height) = (usize::from(area.width), usize::from(area.height));
    let wrapped: Vec<Vec<Line<'static>>> =
        lines.iter().map(|l| wrap(vec![l.clone()], width)).collect();
    if wrapped.iter().map(Vec::len).sum::<usize>() <= height {
        return wrapped.into_iter().flatten().collect();
    }
    let mut out = Vec::new();
    let mut kept = 0;
    for w in &wrapped {
        // One row stays for the mark.
        if out.len() + w.len() + 1 > height {
            break;
        }
        out.extend(w.iter().cloned());
        kept += 1;
    }
    let mut labels: Vec<String> = Vec::new();
    for l in &lines[kept..] {
        let first = l.spans.first().map_or("", |s| s.content.as_ref()).trim();
        // A key's hint ("f test a file on ...") is named by its key and first word.
        let label = if first.chars().count() == 1 {
            let next = l.spans.get(1).map_or("", |s| s.content.as_ref());
            format!("{first} {}", next.split(' ').next().unwrap_or(""))
        } else if first.chars().count() <= 20 {
            first.to_string()
        } else {
            // A line without a label of its own (a note, a warning).
            "note".to_string()
        };
        if !label.is_empty() && !labels.contains(&label) {
            labels.push(label);
        }
    }
    let left = lines.len() - kept;
    let mark = match hint {
        Some(hint) => format!(
            "~ {left} more line{} not shown: {hint}",
            if left == 1 { "" } else { "s" }
        ),
        None => format!("not shown: {}", labels.join(", ")),
    };
    if height > 0 {
        out.push(Line::from(Span::styled(
            elide_end(&mark, width),
            crate::theme::dim(),
        )));
    }
    out
}

/// Fits the CLI's wider reports into `width` columns without breaking their tables: a run of
/// lines with columns (two spaces between words) is a table, squeezed of the blank columns all
/// its rows share when that makes it fit. Other wide text wraps ([`wrap`]).
pub(crate) fn report(text: &str, width: usize) -> Vec<Line<'static>> {
    let is_row = |l: &str| l.trim_start().contains("  ");
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i + 1;
        if is_row(lines[i]) {
            while j < lines.len() && is_row(lines[j]) {
                j += 1;
            }
        }
        // Squeezed only when that makes it fit; otherwise it wraps, indents kept.
        let block = match squeeze(&lines[i..j], width) {
            s if j - i > 1 && s.iter().all(|l| l.chars().count() <= width) => s,
            _ => lines[i..j].iter().map(|l| l.to_string()).collect(),
        };
        out.extend(wrap(block.into_iter().map(Line::from).collect(), width));
        i = j;
    }
    out
}

/// Takes out columns blank in every line, from the right, until it fits.
fn squeeze(block: &[&str], width: usize) -> Vec<String> {
    let mut rows: Vec<Vec<char>> = block
        .iter()
        .map(|l| l.trim_end().chars().collect())
        .collect();
    let widest = |rows: &[Vec<char>]| rows.iter().map(Vec::len).max().unwrap_or(0);
    let blank =
        |rows: &[Vec<char>], c: usize| rows.iter().all(|r| r.get(c).is_none_or(|&ch| ch == ' '));
    let mut c = widest(&rows);
    while widest(&rows) > width && c > 1 {
        c -= 1;
        if blank(&rows, c) && blank(&rows, c - 1) {
            for r in &mut rows {
                if c < r.len() {
                    r.remove(c);
                }
            }
        }
    }
    rows.into_iter().map(|r| r.into_iter().collect()).collect()
}

/// Shortens a name or path in its middle, marked `~`. Not a cut.
pub(crate) fn elide(s: &str, width: usize) -> String {
    let count = s.chars().count();
    if count <= width {
        return s.to_string();
    }
    if width < 3 {
        return s.chars().take(width).collect();
    }
    let tail = (width - 1) / 2;
    let head = width - 1 - tail;
    let mut out: String = s.chars().take(head).collect();
    out.push('~');
    out.extend(s.chars().skip(count - tail));
    out
}

/// Shortens a model name to `width` at its end, marked `~`. Not a cut.
pub(crate) fn elide_end(s: &str, width: usize) -> String {
    crate::report::table::fit(s, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_says_what_it_leaves_out() {
        // 12 rows, 11 fit: the twelfth was out of sight with nothing to say so.
        assert_eq!(
            Window::over(12, 11, Some(0)).mark(),
            " 1 more below (Up/Down, End) "
        );
        assert_eq!(
            Window::over(12, 11, Some(11)),
            Window {
                offset: 1,
                above: 1,
                below: 0
            }
        );
        assert_eq!(
            Window::over(12, 5, Some(6)).mark(),
            " 2 more above, 5 below (Up/Down) "
        );
        assert_eq!(Window::over(3, 5, Some(2)).mark(), "");
        assert_eq!(Window::over(0, 0, None).mark(), "");
    }

    #[test]
    fn elide_keeps_both_ends() {
        assert_eq!(elide("/tmp/some/long/path.img", 11), "/tmp/~h.img");
        assert_eq!(elide("short", 10), "short");
        assert_eq!(elide("abcdef", 5), "ab~ef");
        assert_eq!(elide_end("QEMU NVMe Ctrl", 13), "QEMU NVMe Ct~");
    }

    fn text_of(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn wrap_breaks_at_spaces_and_keeps_every_character() {
        let line = Line::from(vec![
            Span::raw(" engine per phase: "),
            Span::styled(
                "SEQ1M io_uring (probe 812k vs sync 498k)",
                ratatui::style::Style::default(),
            ),
        ]);
        let lines = wrap(vec![line], 30);
        let text = text_of(&lines);
        assert_eq!(
            text,
            [
                " engine per phase: SEQ1M",
                "   io_uring (probe 812k vs",
                "   sync 498k)"
            ]
        );
        let long = wrap(vec![Line::from("/a/very/long/path/without/spaces x")], 10);
        assert!(text_of(&long).iter().all(|l| l.chars().count() <= 10));
        assert_eq!(
            text_of(&long).concat().replace(' ', ""),
            "/a/very/long/path/without/spacesx"
        );
        let fits = wrap(vec![Line::from("short")], 10);
        assert_eq!(text_of(&fits), ["short"]);
    }

    #[test]
    fn a_report_table_loses_its_shared_blank_columns_not_its_alignment() {
        let table = "            Read MB/s  Write MB/s\nSEQ1M Q8T1    1000.00     1000.00\nRND4K Q1T1      17.00        9.50\n\nprose after it";
        let lines = text_of(&report(table, 31));
        assert_eq!(
            lines,
            [
                "           Read MB/s Write MB/s",
                "SEQ1M Q8T1   1000.00    1000.00",
                "RND4K Q1T1     17.00       9.50",
                "",
                "prose after it"
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 31));
        // A table that fits is left as it is.
        assert_eq!(
            text_of(&report(table, 40))[0],
            "            Read MB/s  Write MB/s"
        );
    }

    #[test]
    fn only_a_checked_render_records() {
        text("a long line", 3);
        assert!(CUTS.with(|c| c.borrow().is_none()));
        CUTS.with(|c| *c.borrow_mut() = Some(Vec::new()));
        text("fits", 4);
        text("a long line", 3);
        let cuts = CUTS.with(|c| c.borrow_mut().take().unwrap_or_default());
        assert_eq!(cuts.len(), 1);
        assert_eq!(cuts[0].room, 3);
    }
}
