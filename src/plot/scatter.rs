use super::{Draw, Error, draw_err, save_as};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// Points of one colour and marker (a style's sources, a system's outputs). `colour` indexes
/// [`PALETTE`] (past its end the colours repeat).
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub name: String,
    pub points: Vec<[f64; 2]>,
    pub colour: usize,
    pub marker: Marker,
}

/// A map of points without meaningful axes (a t-SNE map): groups in colours and markers, a
/// legend beside the plot with each group's count, a note under it.
#[derive(Debug, Clone, PartialEq)]
pub struct Scatter {
    pub title: String,
    pub groups: Vec<Group>,
    pub note: String,
}

/// Tableau's twenty colours (matplotlib's `tab20`: ten hues, then their light variants).
pub const PALETTE: [(u8, u8, u8); 20] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
    (174, 199, 232),
    (255, 187, 120),
    (152, 223, 138),
    (255, 152, 150),
    (197, 176, 213),
    (196, 156, 148),
    (247, 182, 210),
    (199, 199, 199),
    (219, 219, 141),
    (158, 218, 229),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Triangle,
    Square,
}

const LEGEND_W: u32 = 330;

impl Scatter {
    pub const SIZE: (u32, u32) = (1400, 1000);

    pub fn save(&self, path: &Path) -> Result<(), Error> {
        if self.groups.iter().all(|g| g.points.is_empty()) {
            return Err(Error::Empty(self.title.clone()));
        }
        save_as(self, path, Self::SIZE)
    }

    /// The points' bounds with 5% room on each side.
    pub fn bounds(&self) -> ((f64, f64), (f64, f64)) {
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for p in self.groups.iter().flat_map(|g| &g.points) {
            x0 = x0.min(p[0]);
            x1 = x1.max(p[0]);
            y0 = y0.min(p[1]);
            y1 = y1.max(p[1]);
        }
        let pad = |a: f64, b: f64| {
            let m = if b > a { (b - a) * 0.05 } else { 1.0 };
            (a - m, b + m)
        };
        (pad(x0, x1), pad(y0, y1))
    }

}

impl Draw for Scatter {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, path: &Path) -> Result<(), Error> {
        let e = |x: DrawingAreaErrorKind<DB::ErrorType>| draw_err(path, x);
        root.fill(&WHITE).map_err(e)?;
        let (w, h) = Self::SIZE;
        let (body, foot) = root.split_vertically(h - 50);
        let (plot, legend) = body.split_horizontally(w - LEGEND_W);
        let ((x0, x1), (y0, y1)) = self.bounds();
        let mut chart = ChartBuilder::on(&plot)
            .caption(&self.title, ("sans-serif", 26))
            .margin(20)
            .x_label_area_size(30)
            .y_label_area_size(30)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(e)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .x_desc("t-SNE 1")
            .y_desc("t-SNE 2")
            .axis_desc_style(("sans-serif", 18))
            .draw()
            .map_err(e)?;
        // Larger groups first, so that small ones (a system's outputs) stay visible on top.
        let mut order: Vec<usize> = (0..self.groups.len()).collect();
        order.sort_by_key(|&k| std::cmp::Reverse(self.groups[k].points.len()));
        for k in order {
            let g = &self.groups[k];
            let (r, gg, b) = PALETTE[g.colour % PALETTE.len()];
            let style = RGBColor(r, gg, b).mix(0.75).filled();
            let pts = g.points.iter().map(|p| (p[0], p[1]));
            match g.marker {
                Marker::Circle => chart.draw_series(pts.map(|p| Circle::new(p, 4, style))).map(|_| ()),
                Marker::Triangle => chart.draw_series(pts.map(|p| TriangleMarker::new(p, 6, style))).map(|_| ()),
                Marker::Square => chart.draw_series(pts.map(|p| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], style))).map(|_| ()),
            }
            .map_err(e)?;
        }
        let text = ("sans-serif", 17).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        let head = ("sans-serif", 18).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        legend.draw(&Text::new("legend (points)", (16, 70), head)).map_err(e)?;
        for (k, g) in self.groups.iter().enumerate() {
            let y = 105 + 30 * k as i32;
            let (r, gg, b) = PALETTE[g.colour % PALETTE.len()];
            let style = RGBColor(r, gg, b).filled();
            match g.marker {
                Marker::Circle => legend.draw(&Circle::new((26, y), 7, style)),
                Marker::Triangle => legend.draw(&TriangleMarker::new((26, y), 9, style)),
                Marker::Square => legend.draw(&Rectangle::new([(19, y - 7), (33, y + 7)], style)),
            }
            .map_err(e)?;
            let name: String = if g.name.chars().count() > 26 { g.name.chars().take(25).chain(['…']).collect() } else { g.name.clone() };
            legend.draw(&Text::new(format!("{name} ({})", g.points.len()), (44, y), text.clone())).map_err(e)?;
        }
        let note = ("sans-serif", 15).into_font().color(&RGBColor(80, 80, 80)).pos(Pos::new(HPos::Left, VPos::Top));
        foot.draw(&Text::new(self.note.clone(), (20, 10), note)).map_err(e)?;
        root.present().map_err(e)
    }
}
