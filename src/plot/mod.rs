//! Figures drawn with plotters from plain chart specs (the TUI draws the same specs).
//! PNG or SVG by the file extension. Text uses the DejaVu Sans font built into the binary,
//! so figures look the same on machines without system fonts.

mod curves;
mod heatmap;
mod intervals;
mod scatter;
mod tradeoff;

pub use curves::Curves;
pub use heatmap::Heatmap;
pub use intervals::{IntervalRow, Intervals};
pub use scatter::{Group, Marker, Scatter, PALETTE};
pub use tradeoff::{Point, Series, Tradeoff, pareto_front};

use plotters::coord::Shift;
use plotters::prelude::{BitMapBackend, DrawingArea, DrawingBackend, IntoDrawingArea, SVGBackend};
use std::path::Path;
use std::sync::Once;

const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: figures are written as .png or .svg")]
    Extension { path: String },
    #[error("{path}: {reason}")]
    Draw { path: String, reason: String },
    #[error("nothing to draw: {0}")]
    Empty(String),
    #[error("{0}")]
    Write(Box<crate::output::OutputError>),
}

/// Output kind, chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Png,
    Svg,
}

pub fn kind_of(path: &Path) -> Result<Kind, Error> {
    match path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase()).as_deref() {
        Some("png") => Ok(Kind::Png),
        Some("svg") => Ok(Kind::Svg),
        _ => Err(Error::Extension { path: path.display().to_string() }),
    }
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is built in and valid; registering cannot fail for it.
        let _ = plotters::style::register_font("sans-serif", plotters::style::FontStyle::Normal, FONT);
    });
}

/// A figure that draws itself on any plotters backend.
trait Draw {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, path: &Path) -> Result<(), Error>;
}

/// Draws `fig` at `size` into a PNG or SVG file (by the extension): drawn in memory, then
/// written by [`crate::output`] (never over a store or another SQLite database).
fn save_as(fig: &impl Draw, path: &Path, size: (u32, u32)) -> Result<(), Error> {
    register_font();
    let bytes = match kind_of(path)? {
        Kind::Png => {
            let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
            fig.draw(&BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area(), path)?;
            let image = image::RgbImage::from_raw(size.0, size.1, rgb).ok_or_else(|| draw_err(path, "the image buffer has the wrong size"))?;
            let mut png = std::io::Cursor::new(Vec::new());
            image.write_to(&mut png, image::ImageFormat::Png).map_err(|e| draw_err(path, e))?;
            png.into_inner()
        }
        Kind::Svg => {
            let mut svg = String::new();
            fig.draw(&SVGBackend::with_string(&mut svg, size).into_drawing_area(), path)?;
            svg.into_bytes()
        }
    };
    crate::output::write(path, bytes).map_err(|e| Error::Write(Box::new(e)))
}

fn draw_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Draw { path: path.display().to_string(), reason: e.to_string() }
}

/// Diverging colour for a value in [-1, 1]: blue for negative, white at 0, red for positive.
pub fn diverging(v: f64) -> (u8, u8, u8) {
    let t = v.clamp(-1.0, 1.0);
    let (r, g, b) = if t >= 0.0 { (178.0, 24.0, 43.0) } else { (33.0, 102.0, 172.0) };
    let a = t.abs();
    let mix = |c: f64| (255.0 + (c - 255.0) * a).round() as u8;
    (mix(r), mix(g), mix(b))
}
