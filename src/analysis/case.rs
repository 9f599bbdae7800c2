//! Case-study tables: for chosen items, the source, the references and each system's output
//! (latest run, human rewrites marked `*`) with its scores where given, in Markdown and LaTeX.
//!
//! The Compare screen's `w` key writes the items tagged there (or the open one) as shown: its
//! hidden systems left out, its scores as it rounds them, to
//! `case-studies/<dataset>_<source>-<target>_<n>.{md,tex}` (one item) or
//! `case-studies/<dataset>_<k>-items.{md,tex}` beside the store file ([`case_dir`], [`stem`]),
//! never over an earlier file ([`write`]).

use super::data::{io_err, Result};
use super::tables::{latex_escape, md_escape};
use crate::store::{ItemDetail, Store};
use std::path::{Path, PathBuf};

/// Items by address (`DATASET/SOURCE->TARGET/N`, `#ID`) or by number (`29`: item 29 of
/// every direction of `dataset`).
pub fn find_items(store: &Store, dataset: Option<&str>, specs: &str) -> Result<Vec<ItemDetail>> {
    let mut out = Vec::new();
    for spec in specs.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if let (Ok(n), Some(ds)) = (spec.parse::<i64>(), dataset) {
            let id = store.dataset_id(ds)?;
            let mut found = false;
            for d in store.directions(id)? {
                if let Ok(item) = store.find_item(&format!("{ds}/{}/{n}", d.label())) {
                    out.push(store.item_detail(item)?);
                    found = true;
                }
            }
            if !found {
                return Err(super::data::Error::NotFound(format!("no item {n} in any direction of {ds}")));
            }
        } else {
            out.push(store.item_detail(store.find_item(spec)?)?);
        }
    }
    Ok(out)
}

/// One item of a case study: the outputs to write, in order (the Compare screen leaves out the
/// systems it hides and puts pinned ones first), and each output's scores as shown there.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseItem {
    pub detail: ItemDetail,
    /// Per output of `detail.outputs`, its scores as shown (`acc=0.9000`); when every list is
    /// empty the tables have no scores column.
    pub scores: Vec<Vec<String>>,
}

impl CaseItem {
    /// Every output of the item, without scores (`tstlab report --items`).
    pub fn plain(detail: ItemDetail) -> CaseItem {
        let scores = vec![Vec::new(); detail.outputs.len()];
        CaseItem { detail, scores }
    }

    fn has_scores(&self) -> bool {
        self.scores.iter().any(|s| !s.is_empty())
    }

    /// Label, text and scores (joined by spaces, as on the screen) of each row.
    fn rows(&self) -> Vec<(String, String, String)> {
        let d = &self.detail;
        let mut v = vec![("source".to_owned(), d.source.clone(), String::new())];
        if let Some(c) = &d.context {
            v.insert(0, ("context".into(), c.clone(), String::new()));
        }
        for (i, r) in d.references.iter().enumerate() {
            let label = if d.references.len() == 1 { "reference".into() } else { format!("reference {}", i + 1) };
            v.push((label, r.clone(), String::new()));
        }
        for (i, o) in d.outputs.iter().enumerate() {
            let mark = if o.kind == "human" { "*" } else { "" };
            let scores = self.scores.get(i).map(|s| s.join(" ")).unwrap_or_default();
            v.push((format!("{}{mark}", o.system), o.text.clone(), scores));
        }
        v
    }
}

/// One Markdown table per item, under a heading with its address; a scores column when the
/// item has scores.
pub fn markdown(items: &[CaseItem]) -> String {
    let mut s = String::from("# Case study\n\n");
    for item in items {
        let scored = item.has_scores();
        s += &format!("## {}\n\n", md_escape(&item.detail.address()));
        s += if scored { "| | text | scores |\n| --- | --- | --- |\n" } else { "| | text |\n| --- | --- |\n" };
        for (label, text, scores) in item.rows() {
            s += &format!("| {} | {} |", md_escape(&label), md_escape(&text));
            if scored && scores.is_empty() {
                s += " |";
            } else if scored {
                s += &format!(" {} |", md_escape(&scores));
            }
            s += "\n";
        }
        s += "\n";
    }
    if items.iter().any(|i| i.detail.outputs.iter().any(|o| o.kind == "human")) {
        s += "\\* a human rewrite stored as a system.\n";
    }
    s
}

/// One LaTeX `table` per item (booktabs; the text column wraps, and so does the scores column
/// when the item has scores).
pub fn latex(items: &[CaseItem]) -> String {
    let mut s = String::from("% tstlab case study; needs \\usepackage{booktabs}\n");
    for item in items {
        let scored = item.has_scores();
        let columns = if scored { "lp{0.5\\linewidth}p{0.3\\linewidth}" } else { "lp{0.72\\linewidth}" };
        s += &format!("\\begin{{table}}[t]\n\\centering\n\\small\n\\begin{{tabular}}{{{columns}}}\n\\toprule\n");
        let d = &item.detail;
        for (i, (label, text, scores)) in item.rows().into_iter().enumerate() {
            s += &format!("{} & {}", latex_escape(&label), latex_escape(&text));
            if scored {
                s += &format!(" & {}", latex_escape(&scores));
            }
            s += " \\\\\n";
            if i == usize::from(d.context.is_some()) + d.references.len() {
                s += "\\midrule\n";
            }
        }
        s += "\\bottomrule\n\\end{tabular}\n";
        s += &format!("\\caption{{Case study: {}}}\n\\end{{table}}\n\n", latex_escape(&d.address()));
    }
    s
}

/// The folder the Compare screen writes case studies to: `case-studies/` beside the store.
pub fn case_dir(store_path: &Path) -> PathBuf {
    let parent = store_path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    parent.join("case-studies")
}

/// A file-name stem for an item: `gyafc-fr_informal-formal_29`.
pub fn file_stem(d: &ItemDetail) -> String {
    let raw = format!("{}_{}-{}_{}{}", d.dataset, d.source_style, d.target_style, if d.split == "test" { "" } else { &d.split }, d.idx);
    raw.chars().map(|c| if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '-' }).collect()
}

/// The file-name stem for `items`: [`file_stem`] for one, `<dataset>_<k>-items` for several of
/// one dataset, `case-study_<k>-items` for several datasets.
pub fn stem(items: &[CaseItem]) -> String {
    match items {
        [one] => file_stem(&one.detail),
        _ => {
            let first = items.first().map(|i| i.detail.dataset.as_str()).unwrap_or("case-study");
            let same = items.iter().all(|i| i.detail.dataset == first);
            let raw = format!("{}_{}-items", if same { first } else { "case-study" }, items.len());
            raw.chars().map(|c| if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '-' }).collect()
        }
    }
}

/// Writes `<stem>.md` and `<stem>.tex` into `dir` (created) as new files: when either name is
/// taken (an earlier case study, or anything planted there, a link included), `<stem>-2`,
/// `<stem>-3`, ...; nothing is overwritten or written through a link. Returns the two paths.
pub fn write(dir: &Path, stem: &str, items: &[CaseItem]) -> Result<(PathBuf, PathBuf)> {
    use std::io::Write;
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    for n in 1..=1000 {
        let name = if n == 1 { stem.to_owned() } else { format!("{stem}-{n}") };
        let (md, tex) = (dir.join(format!("{name}.md")), dir.join(format!("{name}.tex")));
        if std::fs::symlink_metadata(&md).is_ok() || std::fs::symlink_metadata(&tex).is_ok() {
            continue;
        }
        let new = |p: &Path| crate::output::create_new(p).map_err(|e| io_err(p, e.into_io()));
        let (mut fm, mut ft) = match (new(&md), new(&tex)) {
            (Ok(a), Ok(b)) => (a, b),
            // Taken between the look and the making: the next name.
            _ => continue,
        };
        fm.write_all(markdown(items).as_bytes()).map_err(|e| io_err(&md, e))?;
        ft.write_all(latex(items).as_bytes()).map_err(|e| io_err(&tex, e))?;
        return Ok((md, tex));
    }
    Err(io_err(dir, std::io::Error::other(format!("{stem}.md to {stem}-1000.md are all taken"))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::OutputView;

    fn item() -> ItemDetail {
        let out = |system: &str, kind: &str, text: &str| OutputView {
            output_id: 1,
            system_id: 1,
            system: system.into(),
            kind: kind.into(),
            run_id: 1,
            text: text.into(),
            scores: Vec::new(),
        };
        ItemDetail {
            id: 7,
            dataset: "demo".into(),
            direction_id: 1,
            source_style: "informal".into(),
            target_style: "formal".into(),
            split: "test".into(),
            idx: 29,
            source: "u owe me $5 & 10% | lol_".into(),
            context: None,
            references: vec!["You owe me #5.".into()],
            outputs: vec![out("A_1", "system", "You owe me ~5 {dollars}."), out("REF", "human", "ok")],
        }
    }

    #[test]
    fn both_forms_escape_and_order_rows() {
        let md = markdown(&[CaseItem::plain(item())]);
        assert!(md.contains("## demo/informal-\\>formal/29"), "{md}");
        assert!(md.contains("| source | u owe me $5 & 10% \\| lol\\_ |"), "{md}");
        assert!(md.contains("| reference | You owe me \\#5. |"), "{md}");
        assert!(md.contains("| A\\_1 | You owe me \\~5 \\{dollars\\}. |"), "{md}");
        assert!(md.contains("| REF\\* | ok |") && md.contains("a human rewrite"), "{md}");
        let tex = latex(&[CaseItem::plain(item())]);
        assert!(tex.contains("source & u owe me \\$5 \\& 10\\% \\textbar{} lol\\_ \\\\\nreference & You owe me \\#5. \\\\\n\\midrule\n"), "{tex}");
        assert!(tex.contains("A\\_1 & You owe me \\textasciitilde{}5 \\{dollars\\}. \\\\"), "{tex}");
        assert!(tex.contains("\\caption{Case study: demo/informal-\\textgreater{}formal/29}"), "{tex}");
        assert_eq!(file_stem(&item()), "demo_informal-formal_29");
        assert_eq!(case_dir(Path::new("/x/y/s.sqlite")), Path::new("/x/y/case-studies"));
        assert_eq!(case_dir(Path::new(":memory:")), Path::new("./case-studies"));
    }

    /// Scores given with the outputs make a third column, empty beside the source and the
    /// references; several items are named by their count.
    #[test]
    fn scores_make_a_column() {
        let scores = vec![vec!["acc=0.9000".to_owned(), "r-bleu.nltk=12.30".to_owned()], Vec::new()];
        let one = CaseItem { detail: item(), scores };
        let md = markdown(std::slice::from_ref(&one));
        assert!(md.contains("| | text | scores |\n| --- | --- | --- |\n"), "{md}");
        assert!(md.contains("| reference | You owe me \\#5. | |\n"), "{md}");
        assert!(md.contains("| A\\_1 | You owe me \\~5 \\{dollars\\}. | acc=0.9000 r-bleu.nltk=12.30 |\n"), "{md}");
        assert!(md.contains("| REF\\* | ok | |\n"), "{md}");
        let tex = latex(std::slice::from_ref(&one));
        assert!(tex.contains("{lp{0.5\\linewidth}p{0.3\\linewidth}}"), "{tex}");
        assert!(tex.contains("reference & You owe me \\#5. &  \\\\\n\\midrule\n"), "{tex}");
        assert!(tex.contains("A\\_1 & You owe me \\textasciitilde{}5 \\{dollars\\}. & acc=0.9000 r-bleu.nltk=12.30 \\\\"), "{tex}");
        assert_eq!(stem(std::slice::from_ref(&one)), "demo_informal-formal_29");
        let mut other = one.clone();
        other.detail.dataset = "x y".into();
        assert_eq!(stem(&[one.clone(), one.clone()]), "demo_2-items");
        assert_eq!(stem(&[one, other]), "case-study_2-items");
    }
}
