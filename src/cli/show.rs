use super::{fit, print_json};
use crate::diff;
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// Item address: DATASET/SOURCE->TARGET/N (e.g. yelp/negative->positive/29) or #ID.
    pub item: String,
    /// Print JSON (the item, its references, outputs, scores and diffs).
    #[arg(long)]
    pub json: bool,
}

pub fn run(store: &Store, args: ShowArgs) -> anyhow::Result<()> {
    let id = store.find_item(&args.item)?;
    let d = store.item_detail(id)?;
    if args.json {
        let outputs: Vec<serde_json::Value> = d
            .outputs
            .iter()
            .map(|o| {
                serde_json::json!({
                    "system": o.system, "kind": o.kind, "text": o.text, "scores": o.scores,
                    "diff": diff::words(&d.source, &o.text),
                })
            })
            .collect();
        return print_json(&serde_json::json!({
            "address": d.address(), "id": d.id, "dataset": d.dataset,
            "direction": format!("{}->{}", d.source_style, d.target_style),
            "idx": d.idx, "split": d.split, "source": d.source, "context": d.context,
            "references": d.references, "outputs": outputs,
        }));
    }
    print!("{}", render(&d));
    Ok(())
}

/// The compare view as plain text: changes against the source in wdiff style.
pub fn render(d: &crate::store::ItemDetail) -> String {
    let mut s = String::new();
    let width = d
        .outputs
        .iter()
        .map(|o| o.system.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(9, 24);
    s += &format!("{}  (item #{})\n", d.address(), d.id);
    if let Some(c) = &d.context {
        s += &format!("{} {c}\n", fit("context", width));
    }
    s += &format!("{} {}\n", fit("source", width), d.source);
    for (i, r) in d.references.iter().enumerate() {
        s += &format!("{} {r}\n", fit(&format!("ref {}", i + 1), width));
    }
    s += &format!("-- {} outputs; [-removed-] {{+added+}} against the source --\n", d.outputs.len());
    for o in &d.outputs {
        let mark = if o.kind == "human" { "*" } else { "" };
        s += &format!(
            "{} {}\n",
            fit(&format!("{}{mark}", o.system), width),
            diff::to_wdiff(&diff::words(&d.source, &o.text))
        );
        if !o.scores.is_empty() {
            let scores: Vec<String> = o
                .scores
                .iter()
                .map(|sc| match sc.value {
                    Some(v) => format!("{}={}", sc.metric, fmt_score(v)),
                    None => format!("{}=undefined", sc.metric),
                })
                .collect();
            s += &format!("{} {}\n", fit("", width), scores.join("  "));
        }
    }
    if d.outputs.iter().any(|o| o.kind == "human") {
        s += "(* human rewrite)\n";
    }
    s
}

/// A score with four significant digits.
pub fn fmt_score(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e5 || v.abs() < 1e-3) {
        format!("{v:.3e}")
    } else {
        let digits = (3 - v.abs().log10().floor().max(0.0) as i32).max(0) as usize;
        format!("{v:.digits$}")
    }
}
