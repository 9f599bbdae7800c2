//! The Joint table (TSTBench Table A16 form): per direction (and all directions pooled) and
//! system, ACC, BLEU, PPL, Joint with its bootstrap 95% interval, and G2. The inputs and the
//! numbers come from [`super::joint_data`] and [`crate::metrics::joint`], as the result
//! table's do: the same choice of inputs gives the result table's Joint here.

use crate::stats::bootstrap::{BootstrapSpec, Interval};
use super::data::{self, Names};
use super::joint::estimate;
use super::joint_data::{self, Choice};
use crate::metrics::joint::Spec;
use crate::plot::{IntervalRow, Intervals};
use crate::store::Store;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JointRow {
    /// Direction label or `all directions`.
    pub part: String,
    pub system: String,
    pub kind: String,
    /// Outputs of the system in the part.
    pub outputs: usize,
    pub acc: Option<f64>,
    pub bleu: Option<f64>,
    pub ppl: Option<f64>,
    pub joint: Option<f64>,
    pub ci: Option<Interval>,
    pub g2: Option<f64>,
}

/// One part's inputs (their signature is [`Spec::signature`]) and what the store lacks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JointPart {
    pub part: String,
    pub spec: Spec,
    pub signature: String,
    pub missing: Vec<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JointTable {
    pub dataset: String,
    pub parts: Vec<JointPart>,
    pub rows: Vec<JointRow>,
}

impl JointTable {
    pub fn part(&self, label: &str) -> Option<&JointPart> {
        self.parts.iter().find(|p| p.part == label)
    }

    /// Inputs the store lacks (the same in every part).
    pub fn missing(&self) -> Vec<&'static str> {
        self.parts.first().map(|p| p.missing.clone()).unwrap_or_default()
    }
}

/// Rows for every direction of the dataset, then all directions pooled; intervals when
/// `bootstrap` is given.
pub fn joint_table(store: &Store, names: &Names, choice: &Choice, bootstrap: Option<&BootstrapSpec>) -> data::Result<JointTable> {
    let mut t = JointTable { dataset: names.dataset.clone(), parts: Vec::new(), rows: Vec::new() };
    for part in joint_data::load(store, names, choice, None)? {
        for (s, e) in part.systems.iter().zip(estimate(&part, bootstrap)) {
            t.rows.push(JointRow {
                part: part.label.clone(),
                system: s.name.clone(),
                kind: s.kind.clone(),
                outputs: s.count(),
                acc: e.pooled.acc,
                bleu: e.pooled.bleu,
                ppl: e.pooled.ppl,
                joint: e.pooled.joint,
                ci: e.ci,
                g2: e.pooled.g2,
            });
        }
        t.parts.push(JointPart { part: part.label, signature: part.spec.signature(), spec: part.spec, missing: part.missing });
    }
    Ok(t)
}

/// The Joint figure of one part of a Joint table.
pub fn figure(table: &JointTable, part: &str) -> Intervals {
    Intervals {
        title: format!("{} ({part}): Joint with 95% bootstrap intervals", table.dataset),
        x_label: "Joint = (ACC · BLEU / ln PPL)^(1/3)".into(),
        rows: table
            .rows
            .iter()
            .filter(|r| r.part == part)
            .map(|r| IntervalRow { label: r.system.clone(), value: r.joint, lo: r.ci.map(|c| c.lo), hi: r.ci.map(|c| c.hi) })
            .collect(),
        note: table.part(part).map_or(String::new(), |p| p.signature.clone()),
        bars: false,
    }
}
