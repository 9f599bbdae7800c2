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
    let mut st = store.conn().prepare(
        "SELECT s.name || '->' || t.name, y.name, y.kind, c.value
         FROM scores c JOIN outputs o ON c.output_id = o.id JOIN items i ON o.item_id = i.id
         JOIN directions x ON i.direction_id = x.id JOIN styles s ON x.source_style_id = s.id
         JOIN styles t ON x.target_style_id = t.id JOIN runs u ON o.run_id = u.id
         JOIN systems y ON u.system_id = y.id
         WHERE x.dataset_id = ?1 AND c.metric = ?2 AND c.config = ?3
           AND o.run_id = (SELECT MAX(u2.id) FROM runs u2 JOIN outputs o2 ON o2.run_id = u2.id
                           WHERE u2.system_id = y.id AND o2.item_id = i.id)
         ORDER BY x.id, y.name",
    )?;
    let mut groups: Vec<(String, String, String, Vec<f64>, usize)> = Vec::new();
    let mut q = st.query(rusqlite::params![dataset_id, metric, hash])?;
    while let Some(r) = q.next()? {
        let (d, s, k, v): (String, String, String, Option<f64>) = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
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
