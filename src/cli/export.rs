//! `tstlab export`: outputs and their scores as CSV or JSON Lines. The bytes are exact in a file
//! or a pipe; on a terminal the text is made safe (`printable::for_stdout`), and JSON Lines
//! escape what a terminal could obey (`printable::json`) everywhere.

use crate::printable;
use crate::store::Store;
use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ExportFormat {
    Csv,
    Jsonl,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Only this dataset.
    #[arg(long)]
    pub dataset: Option<String>,
    /// Only this direction (SOURCE->TARGET); needs --dataset.
    #[arg(long, requires = "dataset")]
    pub direction: Option<String>,
    #[command(flatten)]
    pub systems: super::Systems,
    #[arg(long, value_enum, default_value = "csv")]
    pub format: ExportFormat,
    /// Name a metric stored under several configurations `metric@HASH` (the stored config
    /// hash, unique across datasets) instead of its readable label (`bleu@content.src`, as
    /// `correlate` and the TUI name it).
    #[arg(long)]
    pub config_hashes: bool,
    /// Write here instead of stdout.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// One exported output with its scores (`metric` or `metric@config` -> value).
struct Row {
    dataset: String,
    direction: String,
    split: String,
    idx: i64,
    source: String,
    system: String,
    kind: String,
    output: String,
    scores: BTreeMap<String, Option<f64>>,
}

pub fn run(store: &Store, args: ExportArgs) -> anyhow::Result<()> {
    let dataset_id = args.dataset.as_deref().map(|d| store.dataset_id(d)).transpose()?;
    let direction_id = match (dataset_id, &args.direction) {
        (Some(d), Some(x)) => Some(store.direction_id(d, x)?),
        _ => None,
    };
    let rows = collect(store, dataset_id, direction_id, &args.systems.names, args.config_hashes)?;
    match &args.output {
        Some(p) => {
            let file = crate::output::create(p)?;
            write(&rows, args.format, std::io::BufWriter::new(file))
        }
        None if std::io::stdout().is_terminal() => {
            let mut buf = Vec::new();
            write(&rows, args.format, &mut buf)?;
            let mut out = std::io::stdout().lock();
            out.write_all(printable::text(&String::from_utf8_lossy(&buf)).as_bytes())?;
            Ok(out.flush()?)
        }
        None => write(&rows, args.format, std::io::BufWriter::new(std::io::stdout().lock())),
    }
}

fn write(rows: &[Row], format: ExportFormat, mut out: impl Write) -> anyhow::Result<()> {
    match format {
        ExportFormat::Jsonl => {
            for r in rows {
                let v = serde_json::json!({
                    "dataset": r.dataset, "direction": r.direction, "split": r.split, "idx": r.idx,
                    "source": r.source, "system": r.system, "kind": r.kind, "output": r.output,
                    "scores": r.scores,
                });
                printable::json::to_writer(&mut out, &v)?;
                writeln!(out)?;
            }
        }
        ExportFormat::Csv => {
            let metrics: std::collections::BTreeSet<&String> =
                rows.iter().flat_map(|r| r.scores.keys()).collect();
            let mut w = csv::Writer::from_writer(out);
            let mut header = vec!["dataset", "direction", "split", "idx", "source", "system", "kind", "output"];
            header.extend(metrics.iter().map(|m| m.as_str()));
            w.write_record(&header)?;
            for r in rows {
                let mut rec = vec![
                    r.dataset.clone(),
                    r.direction.clone(),
                    r.split.clone(),
                    r.idx.to_string(),
                    r.source.clone(),
                    r.system.clone(),
                    r.kind.clone(),
                    r.output.clone(),
                ];
                for m in &metrics {
                    rec.push(match r.scores.get(*m) {
                        Some(Some(v)) => v.to_string(),
                        _ => String::new(),
                    });
                }
                w.write_record(&rec)?;
            }
            w.flush()?;
            return Ok(());
        }
    }
    out.flush()?;
    Ok(())
}

fn collect(store: &Store, dataset: Option<i64>, direction: Option<i64>, systems: &[String], hashes: bool) -> anyhow::Result<Vec<Row>> {
    // Metrics with more than one config are named by their label (`bleu@content.src`, per
    // dataset, as `correlate` names them), or metric@HASH with --config-hashes.
    let multi: std::collections::HashSet<String> = store.metrics_with_several_configs()?.into_iter().collect();
    let mut labels: HashMap<String, HashMap<(String, String), String>> = HashMap::new();
    let mut rows = Vec::new();
    for o in store.output_rows(dataset, direction)? {
        if !systems.is_empty() && !systems.contains(&o.system) {
            continue;
        }
        if !hashes && !labels.contains_key(&o.dataset) {
            let keys = crate::analysis::data::metric_keys(store, store.dataset_id(&o.dataset)?)?;
            labels.insert(o.dataset.clone(), keys.into_iter().map(|k| ((k.metric, k.config), k.label)).collect());
        }
        let mut map = BTreeMap::new();
        for s in store.output_scores(o.output_id)? {
            let key = match labels.get(&o.dataset).and_then(|l| l.get(&(s.metric.clone(), s.config.clone()))) {
                Some(label) => label.clone(),
                None if multi.contains(&s.metric) => format!("{}@{}", s.metric, s.config),
                None => s.metric,
            };
            map.insert(key, s.value);
        }
        rows.push(Row {
            dataset: o.dataset,
            direction: o.direction,
            split: o.split,
            idx: o.idx,
            source: o.source,
            system: o.system,
            kind: o.kind,
            output: o.text,
            scores: map,
        });
    }
    Ok(rows)
}
