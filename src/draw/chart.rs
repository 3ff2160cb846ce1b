//! Sweep charts and the CrystalDiskMark grid, drawn from a run's phase figures: MB/s against
//! the request size (forward, backward, random) and IOPS, MB/s and latency against the queue
//! depth, on a log2 x axis with the knee marked; and CrystalDiskMark's four rows with read and
//! write side by side. The Run screen draws them as phases finish, Results once a run is done.
//!
//! Readable without colour and on the Linux console: every measured point carries its curve's
//! letter (F, B, R...), the knee is a dotted drop line from its point to the axis, the legend
//! names the letters and the knees, and the lines use the theme's marker (half blocks on the
//! console, never braille there).

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{
    Axis, Block, Borders, Cell, Chart, Dataset, GraphType, Paragraph, Row, Table,
};

use crate::bench::analysis::curve::{self, Curve, Knee, Panel, PhaseSample, XAxis};
use crate::bench::plan::test_name::TestName;
use crate::bench::plan::{PhaseTag, Plan};
use crate::report::run::{cdm_iops, cdm_mbps, cdm_ms};
use crate::report::table::{count, ms};
use crate::theme;

/// What a run's phases are drawn as, beside the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drawing {
    Sweep,
    Cdm,
}

impl Drawing {
    /// The drawing of a plan's phases, by kind (`Plan::kind`), not by test.
    pub fn of(plan: &Plan) -> Option<Drawing> {
        match plan.kind()? {
            PhaseTag::Sweep { .. } | PhaseTag::QdSweep { .. } => Some(Drawing::Sweep),
            PhaseTag::Cdm { .. } => Some(Drawing::Cdm),
            PhaseTag::Single | PhaseTag::Metadata { .. } => None,
        }
    }
}

/// Draws a run's finished phases as its test calls for.
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    console: bool,
    drawing: Drawing,
    test: TestName,
    plan: Option<&Plan>,
    samples: &[PhaseSample],
) {
    match drawing {
        Drawing::Sweep => sweep(
            frame,
            area,
            console,
            &curve::curves(samples),
            " the chart draws each request size or queue depth as it finishes",
        ),
        Drawing::Cdm => {
            // Every row of the plan, the ones still to run with "-".
            let mut rows: Vec<String> = Vec::new();
            let tags = plan
                .into_iter()
                .flat_map(|p| p.phases.iter().map(|ph| &ph.tag))
                .chain(samples.iter().map(|s| &s.tag));
            for tag in tags {
                if let PhaseTag::Cdm { row, .. } = tag
                    && !rows.contains(row)
                {
                    rows.push(row.clone());
                }
            }
            let title = format!("CrystalDiskMark: {}", test.id());
            cdm(frame, area, &title, &rows, samples)
        }
    }
}

/// A sweep's panels side by side; `waiting` until a phase finished.
pub fn sweep(frame: &mut Frame, area: Rect, console: bool, curves: &[Curve], waiting: &str) {
    let mut panels: Vec<Panel> = Vec::new();
    for c in curves {
        if !panels.contains(&c.panel) {
            panels.push(c.panel);
        }
    }
    if panels.is_empty() {
        frame.render_widget(
            Paragraph::new(waiting)
                .style(theme::dim())
                .block(Block::default().borders(Borders::ALL)),
            area,
        );
        return;
    }
    let areas = Layout::horizontal(vec![Constraint::Fill(1); panels.len()]).split(area);
    for (panel, &a) in panels.iter().zip(areas.iter()) {
        let mine: Vec<&Curve> = curves.iter().filter(|c| c.panel == *panel).collect();
        draw_panel(frame, a, console, *panel, &mine);
    }
}

/// A curve's colour (colour only adds to the letter).
fn colour(letter: char) -> Style {
    match letter {
        'B' | 'P' => theme::series_b(),
        'R' => theme::series_c(),
        _ => theme::series_a(),
    }
}

/// A y value for an axis label in the panel's unit, never cut.
fn y_label(panel: Panel, v: f64) -> String {
    match panel {
        Panel::QdIops => count(v),
        Panel::QdLatency => ms(v),
        _ if v >= 100.0 => format!("{v:.0}"),
        _ => format!("{v:.1}"),
    }
}

/// One panel: its frame and legend, then the chart with the curves' letters and the x labels
/// under their points (or why there is no room for it).
fn draw_panel(frame: &mut Frame, area: Rect, console: bool, panel: Panel, curves: &[&Curve]) {
    let plot = frame_and_legend(frame, area, panel, curves);
    if plot.height < 4 || plot.width < 12 {
        no_room(frame, plot);
        return;
    }
    let Some(axes) = Axes::of(panel, curves) else {
        return;
    };
    let lines: Vec<Vec<(f64, f64)>> = curves
        .iter()
        .map(|c| c.points.iter().map(|&(x, y)| (log_x(x), y)).collect())
        .collect();
    let knees: Vec<[(f64, f64); 1]> = curves
        .iter()
        .map(|c| {
            c.knee_point()
                .map_or([(f64::NAN, 0.0)], |(x, y)| [(log_x(x), y)])
        })
        .collect();
    let datasets = line_datasets(console, curves, &lines, &knees);
    // Where each curve's letters land, by the chart's own point-to-cell mapping.
    let y_width = axes
        .y_labels
        .iter()
        .map(|l| l.len() as u16)
        .max()
        .unwrap_or(0);
    let graph_left = plot.x + y_width.min(plot.width / 3) + 1;
    // Above the axis line and the label row.
    let graph_rows = plot.y..plot.bottom().saturating_sub(2);
    let letter_cells: Vec<Vec<(u16, u16)>> = curves
        .iter()
        .zip(&lines)
        .map(|(c, d)| axes.letter_cells(c.letter, d, plot, graph_left, graph_rows.clone()))
        .collect();
    frame.render_widget(axes.chart(datasets), plot);
    place_letters(
        frame.buffer_mut(),
        graph_rows,
        curves.iter().map(|c| c.letter).zip(&letter_cells),
    );

    // X labels under their points (ratatui spreads them evenly).
    let graph_width = plot.right().saturating_sub(graph_left);
    let label_row = plot.bottom() - 1;
    let columns = axes.x_label_columns(curves[0].x, graph_left, graph_width);
    x_labels(frame.buffer_mut(), plot, label_row, &columns);
}

/// Draws the panel's border, title and legend; returns the area left for the chart.
fn frame_and_legend(frame: &mut Frame, area: Rect, panel: Panel, curves: &[&Curve]) -> Rect {
    let short = panel.title(false).len() as u16 + 4 > area.width;
    let title = format!(" {} ", panel.title(short));
    crate::draw::title(&title, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, theme::title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let legend = legend_lines(curves, inner.width);
    let legend_h = (legend.len() as u16).min(inner.height.saturating_sub(4));
    let [plot, key] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(legend_h)]).areas(inner);
    crate::draw::lines(&legend, key);
    frame.render_widget(Paragraph::new(legend), key);
    plot
}

/// Never an empty frame: says why there is no chart and where its figures are.
fn no_room(frame: &mut Frame, plot: Rect) {
    let why = crate::draw::pane(
        vec![Line::from(Span::styled(
            "no room to draw: a taller terminal, or Enter for the table",
            theme::dim(),
        ))],
        plot,
    );
    frame.render_widget(Paragraph::new(why), plot);
}

/// A point's x on the log2 axis.
fn log_x(x: u64) -> f64 {
    (x.max(1) as f64).log2()
}

/// The curves' lines, then the knees' drop lines (visible where lines crowd); the letters go
/// on top later (`place_letters`).
fn line_datasets<'a>(
    console: bool,
    curves: &[&Curve],
    lines: &'a [Vec<(f64, f64)>],
    knees: &'a [[(f64, f64); 1]],
) -> Vec<Dataset<'a>> {
    let mut datasets = Vec::new();
    for (c, d) in curves.iter().zip(lines) {
        datasets.push(
            Dataset::default()
                .marker(theme::marker(console))
                .graph_type(GraphType::Line)
                .style(colour(c.letter))
                .data(d),
        );
    }
    for (c, k) in curves.iter().zip(knees) {
        if k[0].0.is_finite() {
            datasets.push(
                Dataset::default()
                    .marker(Marker::Custom(':'))
                    .graph_type(GraphType::Bar)
                    .style(colour(c.letter))
                    .data(k),
            );
        }
    }
    datasets
}

/// A panel's axes: the measured x values, the log2 x bounds, the round y top and its labels,
/// and the units.
struct Axes {
    xs: Vec<u64>,
    bounds: [f64; 2],
    top: f64,
    y_labels: [String; 3],
    units: [&'static str; 2],
}

impl Axes {
    /// The axes that hold every point of `curves`; `None` without a point.
    fn of(panel: Panel, curves: &[&Curve]) -> Option<Axes> {
        let mut xs: Vec<u64> = curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.0))
            .collect();
        xs.sort_unstable();
        xs.dedup();
        let (Some(&first), Some(&last)) = (xs.first(), xs.last()) else {
            return None;
        };
        let bounds = if first == last {
            [log_x(first) - 1.0, log_x(first) + 1.0]
        } else {
            [log_x(first), log_x(last)]
        };
        let top = axis_top(
            curves
                .iter()
                .flat_map(|c| c.points.iter().map(|p| p.1))
                .filter(|v| v.is_finite())
                .fold(0.0, f64::max),
        );
        let y_labels = [
            "0".to_string(),
            y_label(panel, top / 2.0),
            y_label(panel, top),
        ];
        let x_unit = match curves[0].x {
            XAxis::RequestSizeBytes => "size",
            XAxis::QueueDepth => "QD",
        };
        Some(Axes {
            xs,
            bounds,
            top,
            y_labels,
            units: [x_unit, panel.unit()],
        })
    }

    /// A chart of `datasets` on these axes, without ratatui's legend or x labels.
    fn chart<'a>(&self, datasets: Vec<Dataset<'a>>) -> Chart<'a> {
        Chart::new(datasets)
            .legend_position(None)
            .x_axis(
                Axis::default()
                    .bounds(self.bounds)
                    .labels(["", ""])
                    .title(Span::styled(self.units[0], theme::dim())),
            )
            .y_axis(
                Axis::default()
                    .bounds([0.0, self.top])
                    .labels(self.y_labels.to_vec())
                    .title(Span::styled(self.units[1], theme::dim())),
            )
    }

    /// The cells where a curve's `letter` lands at its points `line`, by drawing them alone
    /// on these axes in a scratch buffer of `plot`.
    fn letter_cells(
        &self,
        letter: char,
        line: &[(f64, f64)],
        plot: Rect,
        graph_left: u16,
        graph_rows: std::ops::Range<u16>,
    ) -> Vec<(u16, u16)> {
        let mut alone = Buffer::empty(plot);
        let letters = Dataset::default()
            .marker(Marker::Custom(letter))
            .graph_type(GraphType::Scatter)
            .data(line);
        ratatui::widgets::Widget::render(self.chart(vec![letters]), plot, &mut alone);
        let letter = letter.to_string();
        graph_rows
            .flat_map(|y| (graph_left..plot.right()).map(move |x| (x, y)))
            .filter(|&(x, y)| alone[(x, y)].symbol() == letter)
            .collect()
    }

    /// Each measured x's column in the graph, `graph_width` cells from `graph_left`, and its
    /// label.
    fn x_label_columns(
        &self,
        x_axis: XAxis,
        graph_left: u16,
        graph_width: u16,
    ) -> Vec<(u16, String)> {
        let bounds = self.bounds;
        self.xs
            .iter()
            .map(|&x| {
                let frac = if bounds[1] > bounds[0] {
                    (log_x(x) - bounds[0]) / (bounds[1] - bounds[0])
                } else {
                    0.5
                };
                let col =
                    graph_left + (frac * f64::from(graph_width.saturating_sub(1))).round() as u16;
                (col, x_axis.label(x))
            })
            .collect()
    }
}

/// Writes each curve's letters; a shared cell moves later ones to the nearest free cell.
fn place_letters<'a>(
    buf: &mut Buffer,
    rows: std::ops::Range<u16>,
    curves: impl Iterator<Item = (char, &'a Vec<(u16, u16)>)>,
) {
    let mut taken: Vec<(u16, u16)> = Vec::new();
    for (letter, cells) in curves {
        for &(x, y) in cells {
            let free = [0i32, -1, 1, -2, 2, -3, 3]
                .into_iter()
                .filter_map(|dy| u16::try_from(i32::from(y) + dy).ok())
                .find(|row| rows.contains(row) && !taken.contains(&(x, *row)));
            let Some(row) = free else { continue };
            taken.push((x, row));
            let mut s = [0u8; 4];
            buf[(x, row)]
                .set_symbol(letter.encode_utf8(&mut s))
                .set_style(colour(letter));
        }
    }
}

/// A round axis top at or above `v` (1, 1.5, 2 ... 8 times a power of ten).
fn axis_top(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    [1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&t| v <= t)
        .unwrap_or(10.0 * mag)
}

/// Writes each label under its column: first and last always, others where they fit.
fn x_labels(buf: &mut Buffer, area: Rect, row: u16, columns: &[(u16, String)]) {
    let span = |col: u16, text: &str| {
        let w = text.len() as u16;
        let start = col
            .saturating_sub(w.saturating_sub(1) / 2)
            .clamp(area.x, area.right().saturating_sub(w).max(area.x));
        (start, start + w)
    };
    let mut placed: Vec<(u16, u16)> = Vec::new();
    let n = columns.len();
    let order = (0..n).rev().take(1).chain(0..n.saturating_sub(1));
    for i in order {
        let (col, text) = &columns[i];
        let (a, b) = span(*col, text);
        if placed.iter().all(|&(pa, pb)| b < pa || a > pb) {
            placed.push((a, b));
            buf.set_string(a, row, text, theme::dim());
        }
    }
}

/// The legend: each curve's letter, name and knee, wrapped.
fn legend_lines(curves: &[&Curve], width: u16) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = Vec::new();
    let mut current: Vec<Span> = Vec::new();
    let mut used = 0usize;
    for c in curves {
        let mut text = format!(" {}", c.legend);
        match c.knee {
            Some(Knee::At(_)) => text.push_str(&format!(" knee {}", c.knee_text())),
            Some(Knee::StillRising) => {
                text.push_str(&format!(" {}", c.knee_text()));
                // A narrow panel drops a word, never the figure where it still rises.
                if 1 + text.len() > width as usize {
                    text = text.replacen(" still rising", " rising", 1);
                }
            }
            Some(Knee::TooFew) | None => {}
        }
        let w = 1 + text.len() + 2;
        if used > 0 && used + w > width as usize {
            lines.push(Line::from(std::mem::take(&mut current)));
            used = 0;
        }
        current.push(Span::styled(c.letter.to_string(), colour(c.letter)));
        current.push(Span::raw(format!("{text}  ")));
        used += w;
    }
    if !current.is_empty() {
        lines.push(Line::from(current));
    }
    // A long entry goes on in the next row rather than losing its number.
    crate::draw::wrap(lines, width.into())
}

/// CrystalDiskMark's grid: a row per test, Read and Write side by side.
pub fn cdm(frame: &mut Frame, area: Rect, title: &str, rows: &[String], samples: &[PhaseSample]) {
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(format!(" {title} "), theme::title()));
    crate::draw::title(&format!(" {title} "), area);
    // The header, then two lines a row when they fit (one otherwise).
    let inner_h = area.height.saturating_sub(2);
    let tall = inner_h > 2 * rows.len() as u16;
    let find = |row: &str, write: bool| {
        samples.iter().find(|s| {
            s.tag
                == PhaseTag::Cdm {
                    row: row.to_string(),
                    write,
                }
        })
    };
    let cell = |s: Option<&PhaseSample>| -> Cell<'static> {
        // A cell over few I/Os keeps its figure, marked "*" as Results marks it.
        let mb = Line::from(Span::styled(
            s.map_or("-".to_string(), |s| {
                cdm_mbps(s.mbps) + if s.low_count { "*" } else { "" }
            }),
            theme::title(),
        ))
        .right_aligned();
        if !tall {
            return Cell::from(mb);
        }
        let detail = s.map_or(String::new(), |s| {
            let ms = s
                .mean_ms
                .map_or(String::new(), |m| format!(" {} ms", cdm_ms(m)));
            format!("{} IOPS{ms}", cdm_iops(s.iops))
        });
        Cell::from(Text::from(vec![
            mb,
            Line::from(Span::styled(detail, theme::dim())).right_aligned(),
        ]))
    };
    let table_rows: Vec<Row> = rows
        .iter()
        .map(|row| {
            let name = match row.split_once(' ') {
                Some((a, b)) if tall => Text::from(vec![
                    Line::from(Span::styled(a.to_string(), theme::accent())),
                    Line::from(Span::styled(b.to_string(), theme::accent())),
                ]),
                _ => Text::from(Span::styled(row.to_string(), theme::accent())),
            };
            Row::new(vec![
                Cell::from(name),
                cell(find(row, false)),
                cell(find(row, true)),
            ])
            .height(if tall { 2 } else { 1 })
        })
        .collect();
    let header = Row::new(vec![
        Cell::from(""),
        Cell::from(Line::from("Read MB/s").right_aligned()),
        Cell::from(Line::from("Write MB/s").right_aligned()),
    ])
    .style(theme::header());
    let name_w = if tall { 8 } else { 14 };
    let table = Table::new(
        table_rows,
        [
            Constraint::Length(name_w),
            Constraint::Max(24),
            Constraint::Max(24),
        ],
    )
    .header(header)
    .column_spacing(3)
    .flex(ratatui::layout::Flex::Start)
    .block(block);
    frame.render_widget(table, area);
}

#[cfg(test)]
mod tests {
    use super::axis_top;

    #[test]
    fn axis_tops_fit_the_curve() {
        assert_eq!(axis_top(0.0), 1.0);
        assert_eq!(axis_top(2334.42), 2500.0);
        assert_eq!(axis_top(2800.0), 3000.0);
        assert_eq!(axis_top(90_000.0), 100_000.0);
        assert_eq!(axis_top(0.7), 0.8);
        assert_eq!(axis_top(f64::NAN), 1.0);
    }
}
