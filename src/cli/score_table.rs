//! Means of one metric configuration per direction and system (latest run of each system).

use crate::store::Store;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    pub direction: String,
    pub system: String,
    pub kind: String,
    pub mean: f64,
    pub median: f64,
    /// Outputs with a value.
    pub n: usize,
    /// Outputs scored as undefined.
    pub undefined: usize,
}

pub fn rows(store: &Store, dataset_id: i64, metric: &str, hash: &str) -> anyhow::Result<Vec<Row>> {
    let mut groups: Vec<(String, String, String, Vec<f64>, usize)> = Vec::new();
    for r in store.score_values(dataset_id, metric, hash)? {
        let (d, s, k, v) = (r.direction, r.system, r.kind, r.value);
        if groups.last().is_none_or(|g| g.0 != d || g.1 != s) {
            groups.push((d, s, k, Vec::new(), 0));
        }
        let g = groups.last_mut().expect("pushed");
        match v {
            Some(v) => g.3.push(v),
            None => g.4 += 1,
        }
    }
    Ok(groups
        .into_iter()
        .map(|(direction, system, kind, mut v, undefined)| {
            v.sort_by(f64::total_cmp);
            let n = v.len();
            let mean = if n == 0 { f64::NAN } else { v.iter().sum::<f64>() / n as f64 };
            let median = match n {
                0 => f64::NAN,
                _ if n % 2 == 1 => v[n / 2],
                _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
            };
            Row { direction, system, kind, mean, median, n, undefined }
        })
        .collect())
}

/// Prints rows as a plain table; `scale` multiplies the values (100 for percentages).
pub fn print(rows: &[Row], metric: &str, scale: f64, median: bool) {
    let med = if median { format!(" {:>10}", "median") } else { String::new() };
    crate::outln!("{:<28} {:<28} {:>10}{med} {:>6} {:>6}", "direction", "system", metric, "n", "undef");
    for r in rows {
        let med = if median { format!(" {:>10.2}", r.median * scale) } else { String::new() };
        crate::outln!(
            "{} {} {:>10.2}{med} {:>6} {:>6}",
            super::fit(&r.direction, 28),
            super::fit(&r.system, 28),
            r.mean * scale,
            r.n,
            r.undefined
        );
    }
}
