//! The conventions behind a correlation table, written with it: one signature line in the
//! manner of sacreBLEU's (`key:value|key:value`) and the same in sentences. Every table of
//! `tstlab correlate` and of a report carries them, so two tables are comparable only when
//! their signatures are.
//!
//! Signature keys: `method` (pearson, spearman, kendall_tau_b, kendall_tau_like), `levels`,
//! `undef` (per-source correlations that are undefined: `skip` or `zero`), `overall` (how the
//! directions are combined: the system level as the mean of the directions, sample and dataset
//! levels pooled) and `pooled` (a row with every level on all directions together), `systems`
//! (`all`, `only=A+B`, `except=REF`), `outputs` (`all` or the kinds left out, with the counts
//! of empty and refused outputs), `bs` and `seed` (bootstrap intervals), `version`.

use crate::stats::bootstrap::BootstrapSpec;
use crate::stats::corr::CorrKind;
use super::correlate::Level;
use super::meta::Undefined;
use super::scope::ScopeSummary;
use serde::Serialize;

/// Everything that decides the numbers of a correlation table besides the data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conventions {
    pub method: CorrKind,
    pub levels: Vec<Level>,
    pub undefined: Undefined,
    /// Whether the table has the pooled part beside the mean of the directions.
    pub pooled: bool,
    pub scope: ScopeSummary,
    pub bootstrap: Option<BootstrapSpec>,
}

impl Conventions {
    /// `method:kendall_tau_b|levels:system,pairacc,sample,dataset|undef:skip|...`.
    pub fn signature(&self) -> String {
        let levels: Vec<&str> = self.levels.iter().map(|l| l.slug()).collect();
        let s = &self.scope;
        let systems = match (s.only.is_empty(), s.except.is_empty()) {
            (true, true) => "all".to_owned(),
            (false, true) => format!("only={}", s.only.join("+")),
            (true, false) => format!("except={}", s.except.join("+")),
            (false, false) => format!("only={},except={}", s.only.join("+"), s.except.join("+")),
        };
        let outputs = if s.exclude_outputs.empty || s.exclude_outputs.refused {
            format!("no-{}", s.exclude_outputs.name().replace(',', "+no-"))
        } else {
            "all".to_owned()
        };
        let boot = match &self.bootstrap {
            Some(b) => format!("bs:{}|seed:{}", b.resamples, b.seed),
            None => "bs:none".to_owned(),
        };
        format!(
            "method:{}|levels:{}|undef:{}|overall:system=mean-of-directions,sample=pooled,dataset=pooled|pooled:{}|systems:{systems}|outputs:{outputs}(empty={},refused={})|{boot}|version:{}",
            self.method.name(),
            levels.join(","),
            self.undefined.name(),
            if self.pooled { "yes" } else { "no" },
            s.empty,
            s.refused,
            env!("CARGO_PKG_VERSION")
        )
    }

    /// The conventions in sentences (for captions and notes).
    pub fn sentences(&self) -> String {
        let s = &self.scope;
        let undef = match self.undefined {
            Undefined::Skip => "sources where it is undefined (fewer than 2 systems, a constant side) are left out and counted",
            Undefined::Zero => "sources where it is undefined (fewer than 2 systems, a constant side) count as 0 and the mean is over every source",
        };
        let mut out = format!(
            "Values are oriented: lower-is-better metrics (and rank judgments) are negated, so a positive value means agreement. System level: {} of per-system means; pairwise accuracy = share of system pairs ordered alike (ties on both sides agree). Sample level: mean over sources of the per-source {} across systems; {undef}. Dataset level: one {} over all outputs. Overall: system level = mean over the directions; sample and dataset levels pool the directions.",
            super::correlate::method_name(self.method),
            super::correlate::method_name(self.method),
            super::correlate::method_name(self.method),
        );
        if self.pooled {
            out += " Pooled: every level on the outputs of all directions together (system level from per-system means over all directions).";
        }
        out += &match (s.only.is_empty(), s.systems_left_out.is_empty()) {
            (true, true) => " Systems: all.".to_owned(),
            _ => format!(" Systems left out: {}.", if s.systems_left_out.is_empty() { "none".to_owned() } else { s.systems_left_out.join(", ") }),
        };
        out += &format!(
            " Outputs: {} empty and {} refused (transfer::clean's refusal detector) among the systems in scope; {}.",
            s.empty,
            s.refused,
            match s.exclude_outputs.name() {
                "none" => "all kept".to_owned(),
                kinds => format!("{kinds} left out ({} outputs)", s.outputs_left_out),
            }
        );
        out += &match &self.bootstrap {
            Some(b) => format!(" 95% percentile intervals: {} bootstrap resamples of the sources within each direction, seed {}; undefined replicates left out and counted.", b.resamples, b.seed),
            None => " No intervals.".to_owned(),
        };
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::scope::OutputFilter;

    #[test]
    fn signature_names_every_convention() {
        let mut c = Conventions {
            method: CorrKind::KendallTauB,
            levels: Level::ALL.to_vec(),
            undefined: Undefined::Skip,
            pooled: true,
            scope: ScopeSummary::default(),
            bootstrap: Some(BootstrapSpec::new(1000, 0)),
        };
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(
            c.signature(),
            format!("method:kendall_tau_b|levels:system,pairacc,sample,dataset|undef:skip|overall:system=mean-of-directions,sample=pooled,dataset=pooled|pooled:yes|systems:all|outputs:all(empty=0,refused=0)|bs:1000|seed:0|version:{v}")
        );
        c.undefined = Undefined::Zero;
        c.bootstrap = None;
        c.scope = ScopeSummary {
            except: vec!["REF".into()],
            systems_left_out: vec!["REF".into()],
            exclude_outputs: OutputFilter { empty: true, refused: true },
            empty: 2,
            refused: 3,
            outputs_left_out: 5,
            ..Default::default()
        };
        let sig = c.signature();
        assert!(sig.contains("|undef:zero|") && sig.contains("|systems:except=REF|"), "{sig}");
        assert!(sig.contains("|outputs:no-empty+no-refused(empty=2,refused=3)|bs:none|"), "{sig}");
        let text = c.sentences();
        assert!(text.contains("count as 0") && text.contains("Systems left out: REF.") && text.contains("empty,refused left out (5 outputs)"), "{text}");
    }
}
