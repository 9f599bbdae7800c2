//! Headless subcommands. Each module has its clap arguments and a `run`.

pub mod annotate;
pub mod bench;
pub mod bench_bertscore;
pub mod bench_score;
pub mod bench_store;
pub mod bench_transfer;
pub mod campaign;
pub mod classifier;
pub mod correlate;
pub mod export;
pub mod import;
pub mod lm;
pub mod ls;
pub mod metric;
pub mod models;
pub mod plot;
pub mod report;
pub mod score;
pub mod score_table;
pub mod show;
pub mod store;
pub mod table;
pub mod templates;
pub mod transfer;

use std::io::Write;

/// Prints a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Pads or cuts `s` to `width` display columns.
pub fn fit(s: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw > width {
            if width > 0 && w == width {
                out.pop();
                out.push('…');
            } else if w < width {
                out.push('…');
                w += 1;
            }
            break;
        }
        out.push(c);
        w += cw;
    }
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(w)));
    out
}
