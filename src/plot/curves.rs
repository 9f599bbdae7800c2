use super::{Draw, Error, draw_err, save_as};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Lines of `(x, y)` points, one colour each, with an optional horizontal target line.
#[derive(Debug, Clone, PartialEq)]
pub struct Curves {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<(String, Vec<(f64, f64)>)>,
    pub target: Option<(String, f64)>,
}

impl Curves {
    pub const SIZE: (u32, u32) = (1200, 800);

    pub fn save(&self, path: &Path) -> Result<(), Error> {
        if self.lines.iter().all(|l| l.1.is_empty()) {
            return Err(Error::Empty(self.title.clone()));
        }
        save_as(self, path, Self::SIZE)
    }

    fn bounds(&self) -> ((f64, f64), (f64, f64)) {
        let pts = self.lines.iter().flat_map(|l| &l.1);
        let (mut x0, mut x1, mut y0, mut y1) = (0.0f64, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if let Some((_, t)) = self.target {
            y0 = y0.min(t);
            y1 = y1.max(t);
        }
        let m = ((y1 - y0) * 0.05).max(0.01);
        ((x0, x1.max(x0 + 1.0)), (y0 - m, y1 + m))
    }
}

impl Draw for Curves {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, path: &Path) -> Result<(), Error> {
        let e = |x: DrawingAreaErrorKind<DB::ErrorType>| draw_err(path, x);
        root.fill(&WHITE).map_err(e)?;
        let ((x0, x1), (y0, y1)) = self.bounds();
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 26))
            .margin(25)
            .x_label_area_size(60)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.2}"))
            .axis_desc_style(("sans-serif", 20))
            .label_style(("sans-serif", 16))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(e)?;
        if let Some((name, t)) = &self.target {
            let grey = RGBColor(120, 120, 120);
            chart
                .draw_series(LineSeries::new([(x0, *t), (x1, *t)], grey.stroke_width(1)))
                .map_err(e)?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], grey.stroke_width(1)));
        }
        for (k, (name, pts)) in self.lines.iter().enumerate() {
            let (r, g, b) = super::PALETTE[k % super::PALETTE.len()];
            let color = RGBColor(r, g, b);
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(3)))
                .map_err(e)?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(3)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .label_font(("sans-serif", 18))
            .draw()
            .map_err(e)?;
        root.present().map_err(e)
    }
}
