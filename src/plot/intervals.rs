use super::{Draw, Error, draw_err, save_as};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// One row: a point estimate with its interval (`None`: absent, drawn as "absent").
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalRow {
    pub label: String,
    pub value: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

/// Point estimates with interval whiskers, one row per system (e.g. Joint with its 95% CI),
/// the first row on top. `bars`: each estimate is also a bar from 0 (the axis then holds 0)
/// with its value written after the whisker, as a bar chart of one metric over systems.
#[derive(Debug, Clone, PartialEq)]
pub struct Intervals {
    pub title: String,
    pub x_label: String,
    pub rows: Vec<IntervalRow>,
    pub note: String,
    pub bars: bool,
}

const ROW_H: u32 = 38;

impl Intervals {
    pub fn size(&self) -> (u32, u32) {
        (1200, 150 + ROW_H * self.rows.len().max(1) as u32 + 120)
    }

    pub fn save(&self, path: &Path) -> Result<(), Error> {
        if self.rows.iter().all(|r| r.value.is_none()) {
            return Err(Error::Empty(self.title.clone()));
        }
        save_as(self, path, self.size())
    }

    /// The value axis. Bars: from 0 (or below it for negative values) to past the largest end,
    /// room on the right for the values; points: 8% of the span (at least 0.5) on each side.
    pub fn range(&self) -> (f64, f64) {
        let vals = self.rows.iter().flat_map(|r| [r.value, r.lo, r.hi]).flatten().filter(|v| v.is_finite());
        if self.bars {
            let (lo, hi) = vals.fold((0.0f64, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
            let span = if hi > lo { hi - lo } else { 1.0 };
            return (if lo < 0.0 { lo - span * 0.05 } else { 0.0 }, if hi > 0.0 { hi + span * 0.15 } else { span * 0.05 });
        }
        let (lo, hi) = vals.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        let pad = ((hi - lo) * 0.08).max(0.5);
        (lo - pad, hi + pad)
    }
}

impl Draw for Intervals {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, path: &Path) -> Result<(), Error> {
        let e = |x: DrawingAreaErrorKind<DB::ErrorType>| draw_err(path, x);
        root.fill(&WHITE).map_err(e)?;
        let label_w = self.rows.iter().map(|r| r.label.chars().count()).max().unwrap_or(4) as u32 * 11 + 40;
        let (x0, x1) = self.range();
        let n = self.rows.len();
        let [body, foot] = {
            let (_, h) = self.size();
            let (a, b) = root.split_vertically(h - 60);
            [a, b]
        };
        let mut chart = ChartBuilder::on(&body)
            .caption(&self.title, ("sans-serif", 26))
            .margin(20)
            .x_label_area_size(60)
            .y_label_area_size(label_w)
            .build_cartesian_2d(x0..x1, -0.5..(n as f64 - 0.5))
            .map_err(e)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc(&self.x_label)
            .axis_desc_style(("sans-serif", 20))
            .label_style(("sans-serif", 16))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(e)?;
        let color = RGBColor(31, 119, 180);
        let label = ("sans-serif", 17).into_font().color(&BLACK).pos(Pos::new(HPos::Right, VPos::Center));
        let absent = ("sans-serif", 15).into_font().color(&RGBColor(120, 120, 120)).pos(Pos::new(HPos::Left, VPos::Center));
        for (i, r) in self.rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let (px, py) = chart.backend_coord(&(x0, y));
            body.draw(&Text::new(r.label.clone(), (px - 10, py), label.clone())).map_err(e)?;
            let Some(v) = r.value else {
                body.draw(&Text::new("absent", (px + 10, py), absent.clone())).map_err(e)?;
                continue;
            };
            if self.bars {
                chart.draw_series([Rectangle::new([(0.0, y - 0.3), (v, y + 0.3)], color.mix(0.65).filled())]).map_err(e)?;
            }
            let whisker = if self.bars { RGBColor(40, 40, 40) } else { color };
            if let (Some(lo), Some(hi)) = (r.lo, r.hi) {
                chart.draw_series(LineSeries::new([(lo, y), (hi, y)], whisker.stroke_width(if self.bars { 2 } else { 3 }))).map_err(e)?;
                for end in [lo, hi] {
                    chart
                        .draw_series(LineSeries::new([(end, y - 0.18), (end, y + 0.18)], whisker.stroke_width(2)))
                        .map_err(e)?;
                }
            }
            if self.bars {
                // The value after the bar or its whisker, whichever ends later.
                let end = r.hi.map_or(v, |h| h.max(v)).max(0.0);
                let (vx, vy) = chart.backend_coord(&(end, y));
                let text = ("sans-serif", 15).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
                let digits = if x1 - x0 < 2.0 { 3 } else if x1 - x0 < 20.0 { 2 } else { 1 };
                body.draw(&Text::new(format!("{v:.digits$}"), (vx + 8, vy), text)).map_err(e)?;
                continue;
            }
            chart.draw_series([Circle::new((v, y), 7, color.filled())]).map_err(e)?;
            let text = ("sans-serif", 15).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Bottom));
            let (vx, vy) = chart.backend_coord(&(v, y));
            body.draw(&Text::new(format!("{v:.2}"), (vx, vy - 10), text)).map_err(e)?;
        }
        let note = ("sans-serif", 15).into_font().color(&RGBColor(80, 80, 80)).pos(Pos::new(HPos::Left, VPos::Top));
        foot.draw(&Text::new(self.note.clone(), (20, 10), note)).map_err(e)?;
        root.present().map_err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(v: f64, lo: f64, hi: f64) -> IntervalRow {
        IntervalRow { label: "s".into(), value: Some(v), lo: Some(lo), hi: Some(hi) }
    }

    #[test]
    fn bars_start_at_zero_and_hold_every_whisker() {
        let mut f = Intervals { title: String::new(), x_label: String::new(), rows: vec![row(0.5, 0.4, 0.6), row(0.8, 0.7, 0.9)], note: String::new(), bars: true };
        let (lo, hi) = f.range();
        assert!(lo == 0.0 && hi > 0.9);
        f.rows = vec![row(-2.0, -3.0, -1.0)];
        let (lo, hi) = f.range();
        assert!(lo < -3.0 && hi > 0.0);
        f.bars = false;
        assert_eq!(f.range(), (-3.5, -0.5));
    }
}
