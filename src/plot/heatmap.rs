use super::{Draw, Error, diverging, draw_err, save_as};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// A matrix of values in [-1, 1] (correlations): rows x columns, `None` for undefined cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    pub title: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    pub values: Vec<Vec<Option<f64>>>,
    /// A note under the figure (method, level, counts).
    pub note: String,
}

/// Cell size in pixels; matrices with many columns get compact cells.
const CELL_W: u32 = 110;
const CELL_H: u32 = 44;
const COMPACT_W: u32 = 66;
const COMPACT_H: u32 = 34;
/// Above this many columns the cells are compact.
const COMPACT_FROM: usize = 12;

impl Heatmap {
    /// Pixel size of the figure.
    pub fn size(&self) -> (u32, u32) {
        let label_w = self.rows.iter().map(|r| r.chars().count()).max().unwrap_or(4) as u32 * 12 + 30;
        let (cw, ch) = self.cell();
        let w = (label_w + cw * self.cols.len() as u32 + 150).max(500);
        let note = wrap(&self.note, Self::note_chars(w)).len() as u32;
        let h = self.top(w) as u32 + (ch * self.rows.len() as u32).max(120) + 30 + 22 * note;
        (w, h)
    }

    /// The title wrapped to the figure width (about 14 px per character at 26 px).
    fn title_lines(&self, width: u32) -> Vec<String> {
        wrap(&self.title, ((width as usize).saturating_sub(40) / 14).max(20))
    }

    /// (cell width, cell height) in pixels.
    fn cell(&self) -> (u32, u32) {
        if self.cols.len() > COMPACT_FROM { (COMPACT_W, COMPACT_H) } else { (CELL_W, CELL_H) }
    }

    /// Characters per note line (about 8 px each at 15 px).
    fn note_chars(width: u32) -> usize {
        ((width as usize).saturating_sub(40) / 8).max(30)
    }

    /// Column heads longer than this are drawn vertically.
    const HEAD_CHARS: usize = 11;

    fn vertical_heads(&self) -> bool {
        self.cols.iter().any(|c| c.chars().count() > Self::HEAD_CHARS)
    }

    /// Top of the first row of cells: title lines, then the column heads.
    fn top(&self, width: u32) -> i32 {
        let heads = if self.vertical_heads() {
            self.cols.iter().map(|c| c.chars().count()).max().unwrap_or(0) as i32 * 12 + 30
        } else {
            60
        };
        18 + 34 * self.title_lines(width).len() as i32 + heads
    }

    /// Writes the figure as PNG or SVG (by extension).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        if self.rows.is_empty() || self.cols.is_empty() {
            return Err(Error::Empty(self.title.clone()));
        }
        save_as(self, path, self.size())
    }

}

impl Draw for Heatmap {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, path: &Path) -> Result<(), Error> {
        let e = |x: DrawingAreaErrorKind<DB::ErrorType>| draw_err(path, x);
        root.fill(&WHITE).map_err(e)?;
        let (w, _) = self.size();
        let label_w = self.rows.iter().map(|r| r.chars().count()).max().unwrap_or(4) as i32 * 12 + 30;
        let center = Pos::new(HPos::Center, VPos::Center);
        let title = ("sans-serif", 26).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Top));
        for (i, line) in self.title_lines(w).into_iter().enumerate() {
            root.draw(&Text::new(line, (20, 18 + 34 * i as i32), title.clone())).map_err(e)?;
        }
        let top = self.top(w);
        let (cw, ch) = self.cell();
        let (cw, ch) = (cw as i32, ch as i32);
        let value_px = if self.cols.len() > COMPACT_FROM { 16 } else { 19 };
        let vertical = self.vertical_heads();
        let head = if vertical {
            ("sans-serif", 19).into_font().transform(FontTransform::Rotate270).color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center))
        } else {
            ("sans-serif", 19).into_font().color(&BLACK).pos(center)
        };
        for (c, name) in self.cols.iter().enumerate() {
            let x = label_w + c as i32 * cw + cw / 2;
            let y = if vertical { top - 12 } else { top - 22 };
            root.draw(&Text::new(name.clone(), (x, y), head.clone())).map_err(e)?;
        }
        let row_style = ("sans-serif", 19).into_font().color(&BLACK).pos(Pos::new(HPos::Right, VPos::Center));
        for (r, name) in self.rows.iter().enumerate() {
            let y = top + r as i32 * ch;
            root.draw(&Text::new(name.clone(), (label_w - 12, y + ch / 2), row_style.clone()))
                .map_err(e)?;
            for c in 0..self.cols.len() {
                let x = label_w + c as i32 * cw;
                let v = self.values.get(r).and_then(|row| row.get(c)).copied().flatten();
                let fill = match v {
                    Some(v) => {
                        let (r, g, b) = diverging(v);
                        RGBColor(r, g, b)
                    }
                    None => RGBColor(225, 225, 225),
                };
                let rect = [(x, y), (x + cw - 2, y + ch - 2)];
                root.draw(&Rectangle::new(rect, fill.filled())).map_err(e)?;
                let (text, dark) = match v {
                    // No "-0.00": values that round to zero print as 0.00.
                    Some(v) => (format!("{:.2}", if v.abs() < 0.005 { 0.0 } else { v }), v.abs() > 0.6),
                    None => ("n/a".to_owned(), false),
                };
                let color = if dark { WHITE } else { BLACK };
                let style = ("sans-serif", value_px).into_font().color(&color).pos(center);
                let mid = (x + cw / 2 - 1, y + ch / 2 - 1);
                root.draw(&Text::new(text, mid, style)).map_err(e)?;
            }
        }
        // Colour bar from -1 to 1.
        let bar_x = w as i32 - 100;
        let bar_h = (ch * self.rows.len() as i32).max(120);
        for k in 0..bar_h {
            let v = 1.0 - 2.0 * k as f64 / (bar_h - 1) as f64;
            let (r, g, b) = diverging(v);
            root.draw(&Rectangle::new([(bar_x, top + k), (bar_x + 22, top + k + 1)], RGBColor(r, g, b).filled()))
                .map_err(e)?;
        }
        let tick = ("sans-serif", 15).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        for (v, dy) in [("+1", 0), ("0", bar_h / 2), ("−1", bar_h - 1)] {
            root.draw(&Text::new(v, (bar_x + 28, top + dy), tick.clone())).map_err(e)?;
        }
        let note = ("sans-serif", 15).into_font().color(&RGBColor(80, 80, 80)).pos(Pos::new(HPos::Left, VPos::Top));
        let y = (top + ch * self.rows.len() as i32).max(top + bar_h) + 14;
        for (i, line) in wrap(&self.note, Self::note_chars(w)).into_iter().enumerate() {
            root.draw(&Text::new(line, (20, y + 22 * i as i32), note.clone())).map_err(e)?;
        }
        root.present().map_err(e)
    }
}

/// Splits `s` at spaces into lines of at most `n` characters (a longer word gets its own line).
fn wrap(s: &str, n: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in s.split(' ') {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= n => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

