//! Colours and glyphs. Sixteen-colour safe: selection is reverse video and headers are bold,
//! so screens read on a monochrome console and on light terminals; colour only adds emphasis.
//! On the Linux console (TERM=linux) only glyphs its default fonts carry are used: ASCII, box
//! drawing and the CP437 block elements.

use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;

pub fn title() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

pub fn header() -> Style {
    Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
}

pub fn selected() -> Style {
    Style::default().add_modifier(Modifier::REVERSED)
}

pub fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}

pub fn accent() -> Style {
    Style::default().fg(Color::Cyan)
}

pub fn good() -> Style {
    Style::default().fg(Color::Green)
}

pub fn warn() -> Style {
    Style::default()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD)
}

pub fn bad() -> Style {
    Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
}

/// Chart line for the first series (throughput, p50).
pub fn series_a() -> Style {
    Style::default().fg(Color::Cyan)
}

/// Chart line for the second series (p99).
pub fn series_b() -> Style {
    Style::default().fg(Color::Yellow)
}

/// Chart line for the third series (a sweep's random offsets).
pub fn series_c() -> Style {
    Style::default().fg(Color::Magenta)
}

/// The chart marker: braille, or half blocks on the console.
pub fn marker(console: bool) -> Marker {
    if console {
        Marker::HalfBlock
    } else {
        Marker::Braille
    }
}
