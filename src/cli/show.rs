use super::{fit, print_json};
use crate::diff;
use crate::printable::{line, text};
use crate::score::table_fmt::fmt_score;
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
    print!("{}", text(&render(&d)));
    Ok(())
}

/// The compare view as plain text: changes against the source in wdiff style. Text from the
/// store is made terminal-safe, one line per field (`printable::line`).
pub fn render(d: &crate::store::ItemDetail) -> String {
    let mut s = String::new();
    let width = d
        .outputs
        .iter()
        .map(|o| unicode_width::UnicodeWidthStr::width(line(&o.system).as_ref()))
        .max()
        .unwrap_or(0)
        .clamp(9, 24);
    s += &format!("{}  (item #{})\n", line(&d.address()), d.id);
    if let Some(c) = &d.context {
        s += &format!("{} {}\n", fit("context", width), line(c));
    }
    s += &format!("{} {}\n", fit("source", width), line(&d.source));
    for (i, r) in d.references.iter().enumerate() {
        s += &format!("{} {}\n", fit(&format!("ref {}", i + 1), width), line(r));
    }
    s += &format!("-- {} outputs; [-removed-] {{+added+}} against the source --\n", d.outputs.len());
    for o in &d.outputs {
        let mark = if o.kind == "human" { "*" } else { "" };
        s += &format!(
            "{} {}\n",
            fit(&format!("{}{mark}", o.system), width),
            // Diffed as shown, so a CR or a line separator is a visible part of its word.
            diff::to_wdiff(&diff::words(&line(&d.source), &line(&o.text)))
        );
        if !o.scores.is_empty() {
            let scores: Vec<String> = o
                .scores
                .iter()
                .map(|sc| match sc.value {
                    Some(v) => format!("{}={}", line(&sc.metric), fmt_score(v)),
                    None => format!("{}=undefined", line(&sc.metric)),
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
