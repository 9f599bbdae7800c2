use super::{Draw, Error, draw_err, save_as};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// One system (or run) on a trade-off plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub label: String,
    pub x: f64,
    pub y: f64,
}

/// A group of points drawn in one colour (a direction, or the runs of one model).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
}

/// Style strength (y) against content preservation (x), both higher-better; the Pareto front
/// of each series is drawn as a line.
#[derive(Debug, Clone, PartialEq)]
pub struct Tradeoff {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
}

/// Indices of the points no other point beats on both axes (ties kept), sorted by x.
pub fn pareto_front(points: &[Point]) -> Vec<usize> {
    let mut front: Vec<usize> = (0..points.len())
        .filter(|&i| {
            let p = &points[i];
            !points.iter().any(|q| q.x >= p.x && q.y >= p.y && (q.x > p.x || q.y > p.y))
        })
        .collect();
    front.sort_by(|&a, &b| points[a].x.total_cmp(&points[b].x));
    front
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

impl Tradeoff {
    pub const SIZE: (u32, u32) = (1200, 900);

    pub fn save(&self, path: &Path) -> Result<(), Error> {
        if self.series.iter().all(|s| s.points.is_empty()) {
            return Err(Error::Empty(self.title.clone()));
        }
        save_as(self, path, Self::SIZE)
    }

    fn bounds(&self) -> ((f64, f64), (f64, f64)) {
        let pts = self.series.iter().flat_map(|s| &s.points);
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for p in pts {
            x0 = x0.min(p.x);
            x1 = x1.max(p.x);
            y0 = y0.min(p.y);
            y1 = y1.max(p.y);
        }
        // 8% of the span on each side (room for labels); a zero span gets 5% of the value.
        let pad = |a: f64, b: f64| {
            let m = if b > a { (b - a) * 0.08 } else { (a.abs() * 0.05).max(0.05) };
            (a - m, b + m)
        };
        (pad(x0, x1), pad(y0, y1))
    }

    /// The corner whose legend-sized region (45% wide, 25% high) covers the fewest points.
    fn legend_corner(&self, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> SeriesLabelPosition {
        let corners = [
            (SeriesLabelPosition::LowerLeft, false, false),
            (SeriesLabelPosition::LowerRight, true, false),
            (SeriesLabelPosition::UpperLeft, false, true),
            (SeriesLabelPosition::UpperRight, true, true),
        ];
        let pts: Vec<(f64, f64)> =
            self.series.iter().flat_map(|s| &s.points).map(|p| ((p.x - x0) / (x1 - x0), (p.y - y0) / (y1 - y0))).collect();
        let covered = |right: bool, upper: bool| {
            pts.iter().filter(|(fx, fy)| (if right { *fx > 0.55 } else { *fx < 0.45 }) && (if upper { *fy > 0.75 } else { *fy < 0.25 })).count()
        };
        let best = corners.iter().min_by_key(|(_, r, u)| covered(*r, *u)).expect("four corners");
        best.0.clone()
    }

}

impl Draw for Tradeoff {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, path: &Path) -> Result<(), Error> {
        let e = |x: DrawingAreaErrorKind<DB::ErrorType>| draw_err(path, x);
        root.fill(&WHITE).map_err(e)?;
        let ((x0, x1), (y0, y1)) = self.bounds();
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 28))
            .margin(25)
            .x_label_area_size(60)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(e)?;
        let (fx, fy) = (tick_format(x1 - x0), tick_format(y1 - y0));
        chart
            .configure_mesh()
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .axis_desc_style(("sans-serif", 20))
            .label_style(("sans-serif", 16))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(e)?;
        for (k, s) in self.series.iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            let front: Vec<(f64, f64)> = pareto_front(&s.points)
                .into_iter()
                .map(|i| (s.points[i].x, s.points[i].y))
                .collect();
            chart
                .draw_series(LineSeries::new(front, color.stroke_width(2)))
                .map_err(e)?;
            chart
                .draw_series(s.points.iter().map(|p| Circle::new((p.x, p.y), 6, color.filled())))
                .map_err(e)?
                .label(format!("{} (line: Pareto front)", s.name))
                .legend(move |(x, y)| Circle::new((x + 10, y), 6, color.filled()));
        }
        // Labels beside their points, moved to a free side when they would overlap.
        let mut pts: Vec<&Point> = self.series.iter().flat_map(|s| &s.points).collect();
        let mut placed: Vec<(i32, i32, i32, i32)> = pts
            .iter()
            .map(|p| {
                let (x, y) = chart.backend_coord(&(p.x, p.y));
                (x - 7, y - 7, x + 7, y + 7)
            })
            .collect();
        pts.sort_by(|a, b| b.y.total_cmp(&a.y));
        for p in pts {
            let (px, py) = chart.backend_coord(&(p.x, p.y));
            let w = (p.label.chars().count() as f64 * 8.6) as i32 + 2;
            let h = 16;
            let offsets = [(9, -20), (9, 3), (-9 - w, -20), (-9 - w, 3), (9, -38), (9, 21), (-9 - w, -38), (-9 - w, 21)];
            let free = |(dx, dy): (i32, i32)| {
                let b = (px + dx, py + dy, px + dx + w, py + dy + h);
                !placed.iter().any(|q| b.0 < q.2 && q.0 < b.2 && b.1 < q.3 && q.1 < b.3)
            };
            let (dx, dy) = offsets.iter().copied().find(|o| free(*o)).unwrap_or(offsets[0]);
            placed.push((px + dx, py + dy, px + dx + w, py + dy + h));
            let label = EmptyElement::at((p.x, p.y)) + Text::new(p.label.clone(), (dx, dy), ("sans-serif", 15).into_font().color(&BLACK));
            chart.draw_series([label]).map_err(e)?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 16))
            .position(self.legend_corner((x0, x1), (y0, y1)))
            .draw()
            .map_err(e)?;
        root.present().map_err(e)
    }
}

/// Tick labels with as many decimals as the span needs, never "-0.0".
fn tick_format(span: f64) -> impl Fn(&f64) -> String {
    let digits = if span < 0.05 { 3 } else if span < 2.0 { 2 } else if span < 20.0 { 1 } else { 0 };
    move |v: &f64| {
        let v = if v.abs() < 0.5 * 10f64.powi(-digits) { 0.0 } else { *v };
        format!("{v:.prec$}", prec = digits as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, y: f64) -> Point {
        Point { label: String::new(), x, y }
    }

    #[test]
    fn pareto_front_keeps_undominated_points() {
        let pts = [p(1.0, 9.0), p(5.0, 5.0), p(4.0, 4.0), p(9.0, 1.0), p(5.0, 5.0), p(2.0, 2.0)];
        assert_eq!(pareto_front(&pts), vec![0, 1, 4, 3]);
        assert!(pareto_front(&[]).is_empty());
    }

    #[test]
    fn ticks_never_show_negative_zero() {
        let f = tick_format(1.2);
        assert_eq!((f(&-0.0001), f(&0.25), f(&-0.2)), ("0.00".into(), "0.25".into(), "-0.20".into()));
        assert_eq!(tick_format(80.0)(&42.4), "42");
    }
}
