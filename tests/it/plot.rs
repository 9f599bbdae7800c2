//! Figures are written, decode as images of the stated size, and SVGs are well-formed text.

use tstlab::plot::{Heatmap, Point, Series, Tradeoff};

fn heatmap() -> Heatmap {
    Heatmap {
        title: "Pearson r, metric vs human (dataset level)".into(),
        rows: vec!["r-BLEU".into(), "s-BLEU".into(), "BERTScore F1".into(), "ACC".into()],
        cols: vec!["content".into(), "style".into(), "fluency".into()],
        values: vec![
            vec![Some(0.62), Some(-0.10), Some(0.31)],
            vec![Some(0.55), Some(-0.71), None],
            vec![Some(0.70), Some(0.05), Some(0.44)],
            vec![Some(-0.02), Some(0.93), Some(0.12)],
        ],
        note: "n = 640 outputs; n/a = undefined (constant input)".into(),
    }
}

fn tradeoff() -> Tradeoff {
    let pts = |v: &[(&str, f64, f64)]| v.iter().map(|(l, x, y)| Point { label: l.to_string(), x: *x, y: *y }).collect();
    Tradeoff {
        title: "yelp: style vs content".into(),
        x_label: "r-BLEU".into(),
        y_label: "ACC (%)".into(),
        series: vec![
            Series { name: "negative->positive".into(), points: pts(&[("copy", 30.0, 2.0), ("DualRL", 25.0, 88.0), ("CrossAlign", 8.0, 75.0), ("weak", 7.0, 40.0)]) },
            Series { name: "positive->negative".into(), points: pts(&[("copy", 31.0, 3.0), ("DualRL", 24.0, 80.0)]) },
        ],
    }
}

#[test]
fn heatmap_png_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let h = heatmap();
    let png = dir.path().join("h.png");
    h.save(&png).unwrap();
    let img = image::open(&png).unwrap();
    assert_eq!((img.width(), img.height()), h.size());
    let svg = dir.path().join("h.svg");
    h.save(&svg).unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("BERTScore F1") && text.contains("0.93"));
    if let Ok(keep) = std::env::var("TSTLAB_KEEP_FIGURES") {
        std::fs::copy(&png, format!("{keep}/heatmap.png")).unwrap();
    }
}

#[test]
fn tradeoff_png_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let t = tradeoff();
    let png = dir.path().join("t.png");
    t.save(&png).unwrap();
    let img = image::open(&png).unwrap();
    assert_eq!((img.width(), img.height()), Tradeoff::SIZE);
    let svg = dir.path().join("t.svg");
    t.save(&svg).unwrap();
    assert!(std::fs::read_to_string(&svg).unwrap().contains("DualRL"));
    if let Ok(keep) = std::env::var("TSTLAB_KEEP_FIGURES") {
        std::fs::copy(&png, format!("{keep}/tradeoff.png")).unwrap();
    }
}

#[test]
fn bad_extension_and_empty_input_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    assert!(heatmap().save(&dir.path().join("h.jpg")).unwrap_err().to_string().contains(".png or .svg"));
    let mut h = heatmap();
    h.rows.clear();
    assert!(h.save(&dir.path().join("h.png")).is_err());
}
