//! The Analysis screen's trade-off view: a ratatui Chart of style strength (y) against
//! content (x), one point per system and direction, the Pareto front of each direction as a
//! line, and the list of points beside it with each system's Joint (`*` on the front, the
//! selected one highlighted; under it the selected system's Joint inputs and their signature).

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
}

pub fn draw(a: Tradeoff, f: &mut Frame, area: Rect, sh: &Shared) {
    let busy = if sh.loader.busy(Topic::Tradeoff) { " · loading…" } else { "" };
    let title = match (a.dataset, a.tradeoff) {
        (Some(dataset), Some(t)) => format!(" Trade-off · {dataset} · y {} · x {}{busy} ", t.y.label, t.x.label),
        _ => format!(" Trade-off{busy} "),
    };
    let block = theme::pane(title, true);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(t) = a.tradeoff else {
        let text = if !a.has_axes { "a trade-off needs two metrics in the dataset" } else { "loading…" };
        f.render_widget(Paragraph::new(text).style(theme::MUTED), inner);
        return;
    };
    if t.points.is_empty() {
        let text = format!("no output has both {} and {}: x / y choose other metrics", t.x.label, t.y.label);
        f.render_widget(Paragraph::new(theme::owned(text)).style(theme::MUTED), inner);
        return;
    }
    let [chart_area, list_area] = Layout::horizontal([Constraint::Min(40), Constraint::Length(52)]).areas(inner);
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
        datasets.push(Dataset::default().name(theme::owned(g.to_string())).marker(Marker::Dot).graph_type(GraphType::Scatter).style(Style::new().fg(color)).data(&pts[i]));
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
        .legend_position(Some(ratatui::widgets::LegendPosition::BottomRight));
    f.render_widget(chart, chart_area);

    let joint_of = |part: &str, system: &str| {
        a.joint.and_then(|j| j.rows.iter().find(|r| r.part == part && r.system == system)).and_then(|r| r.joint)
    };
    let mut lines = vec![Line::styled(format!(" {:<18} {:>8} {:>8} {:>6}  front", "system", "x", "y", "Joint"), theme::MUTED)];
    let mut last = "";
    for (i, p) in t.points.iter().enumerate() {
        if p.group != last {
            let color = COLORS[groups.iter().position(|g| *g == p.group).unwrap_or(0) % COLORS.len()];
            lines.push(Line::styled(format!(" {}", theme::text(&p.group)), Style::new().fg(color)));
            last = &p.group;
        }
        let style = if i == a.point { theme::SELECTED } else { Style::new() };
        let joint = joint_of(&p.group, &p.system).map_or("—".to_owned(), |j| format!("{j:.2}"));
        let text = format!(" {:<18} {:>8.4} {:>8.4} {joint:>6}  {}", theme::fit(&p.system, 18), p.x, p.y, if p.on_front { "*" } else { "" });
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
    lines.push(Line::styled(" * Pareto front · █ selected · x / y: other metrics", theme::MUTED));
    if let Some(part) = t.points.get(a.point).and_then(|p| a.joint?.part(&p.group)) {
        lines.push(Line::styled(theme::owned(format!(" {}", part.signature)), theme::MUTED));
    }
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), list_area);
}
