use super::{Error, Kind, draw_err, kind_of, register_font};
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

/// Point estimates with interval whiskers, one row per system (e.g. Joint with its 95% CI).
#[derive(Debug, Clone, PartialEq)]
pub struct Intervals {
    pub title: String,
    pub x_label: String,
    pub rows: Vec<IntervalRow>,
    pub note: String,
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
        register_font();
        let size = self.size();
        match kind_of(path)? {
            Kind::Png => self.draw(&BitMapBackend::new(path, size).into_drawing_area(), path),
            Kind::Svg => self.draw(&SVGBackend::new(path, size).into_drawing_area(), path),
        }
    }

    fn range(&self) -> (f64, f64) {
        let vals = self.rows.iter().flat_map(|r| [r.value, r.lo, r.hi]).flatten().filter(|v| v.is_finite());
        let (lo, hi) = vals.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        let pad = ((hi - lo) * 0.08).max(0.5);
        (lo - pad, hi + pad)
    }

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
            if let (Some(lo), Some(hi)) = (r.lo, r.hi) {
                chart.draw_series(LineSeries::new([(lo, y), (hi, y)], color.stroke_width(3))).map_err(e)?;
                for end in [lo, hi] {
                    chart
                        .draw_series(LineSeries::new([(end, y - 0.18), (end, y + 0.18)], color.stroke_width(2)))
                        .map_err(e)?;
                }
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
