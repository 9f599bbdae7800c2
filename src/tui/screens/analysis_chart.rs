//! The Analysis screen's trade-off view: a ratatui Chart of style strength (y) against
//! content (x), one point per system and direction, the Pareto front of each direction as a
//! line, and the list of points beside it with each system's Joint (`*` on the front, the
//! selected one highlighted; under it the selected system's Joint inputs and their signature).
//! Below 110 columns chart and list share the width, system and direction names abbreviated
//! (start and distinguishing end); `i` shows the list alone with the names in full.

use crate::analysis::joint_table::JointTable;
use crate::analysis::meta::Orientation;
use crate::analysis::tradeoff::TradeoffData;
use crate::tui::screen::Shared;
use crate::tui::loader::Topic;
use crate::tui::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph, Wrap};

const COLORS: [Color; 5] = [Color::Cyan, Color::Magenta, Color::Green, Color::Yellow, Color::Blue];

/// What the chart shows, handed over by the Analysis screen.
pub struct Tradeoff<'a> {
    /// The dataset loaded, if any.
    pub dataset: Option<&'a str>,
    pub tradeoff: Option<&'a TradeoffData>,
    pub joint: Option<&'a JointTable>,
    /// False when the dataset has fewer than two metrics.
    pub has_axes: bool,
    /// The selected point.
    pub point: usize,
    /// The list alone, system names in full.
    pub full_names: bool,
    /// The key that turns `full_names` on and off.
    pub details_key: String,
}

/// A direction's name (`formal->informal`) in `w` columns: each side abbreviated (start
/// and end kept) when the whole does not fit; other names abbreviated whole.
fn short_group(g: &str, w: usize) -> String {
    match g.split_once("->") {
        Some((a, b)) if theme::width(g) > w && w >= 12 => {
            let half = (w - 2) / 2;
            format!("{}->{}", theme::abbrev(a, half).trim_end(), theme::abbrev(b, w - 2 - half).trim_end())
        }
        _ => theme::abbrev(g, w).trim_end().to_owned(),
    }
}

/// A value in at most `w` columns: 4 decimals when they fit, fewer for large values.
fn num(v: f64, w: usize) -> String {
    (0..=4).rev().map(|d| format!("{v:>w$.d$}")).find(|s| s.len() <= w).unwrap_or_else(|| format!("{v:>w$.0}"))
}

/// Draws the view; returns the list's point rows as drawn: (terminal row, point index).
pub fn draw(a: Tradeoff, f: &mut Frame, area: Rect, sh: &Shared) -> Vec<(u16, usize)> {
    let busy = if sh.loader.busy(Topic::Tradeoff) { " · loading…" } else { "" };
    let title = match (a.dataset, a.tradeoff) {
        (Some(dataset), Some(t)) => format!(" Trade-off · {dataset} · y {} · x {}{busy} ", t.y.label, t.x.label),
        _ => format!(" Trade-off{busy} "),
    };
    let title = theme::cut(&title, area.width.saturating_sub(2) as usize);
    let block = theme::pane(title, true);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(t) = a.tradeoff else {
        let text = if !a.has_axes { "a trade-off needs two metrics in the dataset" } else { "loading…" };
        f.render_widget(Paragraph::new(text).style(theme::MUTED), inner);
        return Vec::new();
    };
    if t.points.is_empty() {
        let text = format!("no output has both {} and {}: x / y choose other metrics", t.x.label, t.y.label);
        f.render_widget(Paragraph::new(theme::owned(text)).style(theme::MUTED).wrap(Wrap { trim: false }), inner);
        return Vec::new();
    }
    // The list: 2/5 of a wide pane (more room for names); in a narrow one as wide as its
    // longest name needs, half at most; all of it with the names in full.
    let wide = inner.width >= 110;
    let longest = t.points.iter().map(|p| theme::width(&p.system)).max().unwrap_or(6).max(6);
    let list_w = if a.full_names {
        inner.width
    } else if wide {
        (inner.width * 2 / 5).clamp(52, 90)
    } else {
        (longest as u16 + 26).min(inner.width / 2)
    };
    let [chart_area, list_area] = Layout::horizontal([Constraint::Min(0), Constraint::Length(list_w)]).spacing(1).areas(inner);
    let (sx, sy) = (t.x_orientation.sign(), t.y_orientation.sign());
    let mut groups: Vec<&str> = t.points.iter().map(|p| p.group.as_str()).collect();
    groups.dedup();
    let pts: Vec<Vec<(f64, f64)>> =
        groups.iter().map(|g| t.points.iter().filter(|p| p.group == *g).map(|p| (sx * p.x, sy * p.y)).collect()).collect();
    let mut fronts: Vec<Vec<(f64, f64)>> = groups
        .iter()
        .map(|g| t.points.iter().filter(|p| p.group == *g && p.on_front).map(|p| (sx * p.x, sy * p.y)).collect())
        .collect();
    fronts.iter_mut().for_each(|v| v.sort_by(|a, b| a.0.total_cmp(&b.0)));
    let sel: Vec<(f64, f64)> = t.points.get(a.point).map(|p| vec![(sx * p.x, sy * p.y)]).unwrap_or_default();
    let mut datasets = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        datasets.push(Dataset::default().marker(Marker::Braille).graph_type(GraphType::Line).style(Style::new().fg(color)).data(&fronts[i]));
        // The legend: names abbreviated to fit half the plot (the chart less its y labels)
        // with the legend's box, else ratatui hides it.
        let legend = short_group(g, ((chart_area.width as usize).saturating_sub(8) / 2).saturating_sub(2).max(4));
        datasets.push(Dataset::default().name(legend).marker(Marker::Dot).graph_type(GraphType::Scatter).style(Style::new().fg(color)).data(&pts[i]));
    }
    datasets.push(Dataset::default().marker(Marker::Block).graph_type(GraphType::Scatter).style(theme::KEY).data(&sel));
    let all: Vec<(f64, f64)> = pts.iter().flatten().copied().collect();
    let bounds = |v: Vec<f64>| {
        let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
        let pad = if hi > lo { (hi - lo) * 0.08 } else { lo.abs().max(1.0) * 0.05 };
        [lo - pad, hi + pad]
    };
    let (bx, by) = (bounds(all.iter().map(|p| p.0).collect()), bounds(all.iter().map(|p| p.1).collect()));
    let labels = |b: [f64; 2]| -> Vec<Span<'static>> {
        let d = if b[1] - b[0] < 2.0 { 2 } else { 1 };
        [b[0], (b[0] + b[1]) / 2.0, b[1]].iter().map(|v| Span::raw(format!("{v:.d$}"))).collect()
    };
    let name = |label: &str, o: Orientation| match o {
        Orientation::HigherIsBetter => theme::text(label).into_owned(),
        Orientation::LowerIsBetter => format!("−{}", theme::text(label)),
    };
    let chart = Chart::new(datasets)
        .x_axis(Axis::default().title(name(&t.x.label, t.x_orientation)).style(theme::MUTED).bounds(bx).labels(labels(bx)))
        .y_axis(Axis::default().title(name(&t.y.label, t.y_orientation)).style(theme::MUTED).bounds(by).labels(labels(by)))
        .legend_position(Some(ratatui::widgets::LegendPosition::BottomRight))
        .hidden_legend_constraints((Constraint::Percentage(50), Constraint::Percentage(50)));
    if !a.full_names {
        f.render_widget(chart, chart_area);
    }

    let joint_of = |part: &str, system: &str| {
        a.joint.and_then(|j| j.rows.iter().find(|r| r.part == part && r.system == system)).and_then(|r| r.joint)
    };
    // Columns: system, x, y, Joint, `*` on the Pareto front; the system gets what is left.
    let (nw, jw) = if wide || a.full_names { (8, 6) } else { (7, 5) };
    let fixed = 1 + 1 + nw + 1 + nw + 1 + jw + 2 + 1;
    let sys_w = (list_area.width as usize).saturating_sub(fixed).max(6);
    let sys_w = if a.full_names { longest.min(sys_w) } else { sys_w.min(longest.max(18)) };
    let mut lines = vec![Line::styled(
        format!(" {} {:>nw$} {:>nw$} {:>jw$}  *", crate::text::pad("system", sys_w), "x", "y", "Joint"),
        theme::MUTED,
    )];
    let mut rows = Vec::new();
    let mut last = "";
    for (i, p) in t.points.iter().enumerate() {
        if p.group != last {
            let color = COLORS[groups.iter().position(|g| *g == p.group).unwrap_or(0) % COLORS.len()];
            lines.push(Line::styled(format!(" {}", theme::cut(&p.group, list_area.width.saturating_sub(1) as usize)), Style::new().fg(color)));
            last = &p.group;
        }
        let style = if i == a.point { theme::SELECTED } else { Style::new() };
        let joint = joint_of(&p.group, &p.system).map_or("—".to_owned(), |j| format!("{j:.2}"));
        let text = format!(
            " {} {} {} {joint:>jw$}  {}",
            theme::abbrev(&p.system, sys_w),
            num(p.x, nw),
            num(p.y, nw),
            if p.on_front { "*" } else { " " }
        );
        rows.push((list_area.y + lines.len() as u16, i));
        lines.push(Line::styled(text, style));
    }
    if let Some(p) = t.points.get(a.point) {
        lines.push(Line::default());
        lines.push(Line::styled(theme::owned(format!(" {} · {}: {} outputs with both values", p.group, p.system, p.outputs)), theme::MUTED));
        let row = a.joint.and_then(|j| j.rows.iter().find(|r| r.part == p.group && r.system == p.system));
        if let Some(r) = row {
            let n = |v: Option<f64>| v.map_or("—".to_owned(), |v| format!("{v:.1}"));
            lines.push(Line::raw(format!(" Joint {} · G2 {} (ACC {}, BLEU {}, PPL {})", r.joint.map_or("—".to_owned(), |j| format!("{j:.2}")), n(r.g2), n(r.acc), n(r.bleu), n(r.ppl))));
        }
    }
    let names = if a.full_names { "names in full" } else { "full names" };
    lines.push(Line::styled(format!(" * Pareto front · █ selected · x / y: other metrics · {}: {names}", a.details_key), theme::MUTED));
    if let Some(part) = t.points.get(a.point).and_then(|p| a.joint?.part(&p.group)) {
        lines.push(Line::styled(theme::owned(format!(" {}", part.signature)), theme::MUTED));
    }
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), list_area);
    rows.retain(|(y, _)| *y < list_area.bottom());
    rows
}
