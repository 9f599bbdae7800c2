//! Which texts of a dataset train and test its style models (classifiers and d-PPL LMs).
//!
//! - A dataset with items in split `train`: training texts are the sources of those items,
//!   labelled by their direction's source style; the held-out set is the `test` sources.
//! - Otherwise (the public anchors have test sets only): training texts are the `test` sources,
//!   evaluated by k-fold cross-validation over groups (a group is one source text, so a source
//!   shared by two directions, and with `with_references` its references, stay in one fold).
//! - References (split `test`) are labelled by their direction's target style. They never train
//!   a model unless `with_references` is asked for (for datasets whose target styles have no
//!   source texts, e.g. the captions' romantic/humorous); then they are said to be training data.
//! - Other splits (`dev`, ...) are not used. Texts are deduplicated per (text, label).

use crate::store::{self, Store};
use serde::Serialize;
use std::collections::{BTreeSet, HashSet};

/// One labelled text.
#[derive(Debug, Clone, PartialEq)]
pub struct Labelled {
    pub text: String,
    pub label: usize,
    /// The source text of its item (sources are their own group).
    pub group: String,
}

/// Where the training texts come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    TrainSplit,
    TestSources,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StyleData {
    pub dataset: String,
    /// Every style of the dataset, sorted by name (the label order).
    pub styles: Vec<String>,
    /// Styles that are the target of some direction.
    pub targets: Vec<String>,
    pub basis: Basis,
    /// Sources of the training split (`train`, else `test`).
    pub sources: Vec<Labelled>,
    /// `TrainSplit`: the test sources; `TestSources`: empty (cross-validation instead).
    pub held_out: Vec<Labelled>,
    /// Test references, labelled by target style (training texts too with `with_references`).
    pub references: Vec<Labelled>,
    pub with_references: bool,
}

impl StyleData {
    pub fn read(store: &Store, dataset: &str, with_references: bool) -> store::Result<StyleData> {
        let id = store.dataset_id(dataset)?;
        let styles = store.style_names(id)?;
        let label = |name: &str| styles.iter().position(|s| s == name).expect("style of the dataset");
        let rows: Vec<(String, String, String, String)> =
            store.styled_sources(id)?.into_iter().map(|r| (r.split, r.text, r.source_style, r.target_style)).collect();
        let targets: BTreeSet<String> = rows.iter().map(|r| r.3.clone()).collect();
        let has_train = rows.iter().any(|r| r.0 == "train");
        let (train_split, held_split) = if has_train { ("train", Some("test")) } else { ("test", None) };
        let mut seen = HashSet::new();
        let mut sources = Vec::new();
        let mut held_out = Vec::new();
        for (split, source, s, _) in &rows {
            let item = Labelled { text: source.clone(), label: label(s), group: source.clone() };
            if split == train_split && seen.insert((split.clone(), item.text.clone(), item.label)) {
                sources.push(item);
            } else if Some(split.as_str()) == held_split && seen.insert((split.clone(), item.text.clone(), item.label)) {
                held_out.push(item);
            }
        }
        let mut references = Vec::new();
        let mut seen_ref = HashSet::new();
        for row in store.styled_test_references(id)? {
            let (text, t, source) = (row.text, row.target_style, row.source);
            if seen_ref.insert((text.clone(), t.clone())) {
                references.push(Labelled { text, label: label(&t), group: source });
            }
        }
        Ok(StyleData {
            dataset: dataset.to_owned(),
            styles,
            targets: targets.into_iter().collect(),
            basis: if has_train { Basis::TrainSplit } else { Basis::TestSources },
            sources,
            held_out,
            references,
            with_references,
        })
    }

    /// The training texts: the sources, and the references with `with_references`.
    pub fn training(&self) -> Vec<&Labelled> {
        let refs = self.references.iter().filter(|_| self.with_references);
        self.sources.iter().chain(refs).collect()
    }

    /// Training texts per label.
    pub fn train_counts(&self) -> Vec<usize> {
        let mut n = vec![0; self.styles.len()];
        for t in self.training() {
            n[t.label] += 1;
        }
        n
    }

    /// Target styles without a training text (ACC cannot be learnt for them).
    pub fn untrained_targets(&self) -> Vec<String> {
        let n = self.train_counts();
        self.targets.iter().filter(|t| n[self.label(t).expect("a style")] == 0).cloned().collect()
    }

    pub fn label(&self, style: &str) -> Option<usize> {
        self.styles.iter().position(|s| s == style)
    }

    /// The source texts of one style (what its d-PPL LM learns from; never references).
    pub fn sources_of(&self, style: &str) -> Vec<&str> {
        let l = self.label(style);
        self.sources.iter().filter(|t| Some(t.label) == l).map(|t| t.text.as_str()).collect()
    }

    /// How the training texts were chosen, as manifests and tables say it.
    pub fn trained_on(&self, folds: usize) -> String {
        let refs = if self.with_references { " and test references" } else { "" };
        match self.basis {
            Basis::TrainSplit => format!("train split sources{refs}"),
            Basis::TestSources => format!("test sources{refs} ({folds}-fold CV)"),
        }
    }
}
