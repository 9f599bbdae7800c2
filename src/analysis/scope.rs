//! Which outputs a correlation covers: the systems (`--systems`, `--exclude-systems`, by name or
//! `kind:KIND`, e.g. `--exclude-systems REF` or `kind:human`) and outputs left out because they
//! are empty or refuse the task (`--exclude-outputs empty,refused`; refusals as
//! [`crate::transfer::clean::is_refusal`] finds them, on the stored text and on the raw text
//! when there is one). Empty and refused outputs of the systems in scope are always counted,
//! left out or not, so a table can say how many there are.

use super::data::{self, Error, Names, Result};
use super::meta::MetaRow;
use crate::store::Store;
use crate::transfer::clean::is_refusal;
use serde::Serialize;
use std::collections::BTreeSet;

/// Which outputs to leave out by their text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct OutputFilter {
    pub empty: bool,
    pub refused: bool,
}

impl OutputFilter {
    /// `empty`, `refused`, both comma-separated, `all` (both) or `none`.
    pub fn parse(s: &str) -> Result<OutputFilter> {
        let mut f = OutputFilter::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.to_ascii_lowercase().as_str() {
                "empty" => f.empty = true,
                "refused" | "refusals" | "refusal" => f.refused = true,
                "all" => (f.empty, f.refused) = (true, true),
                "none" => {}
                other => return Err(Error::Invalid(format!("--exclude-outputs {other:?}: use empty, refused, all or none"))),
            }
        }
        Ok(f)
    }

    /// `none`, `empty`, `refused` or `empty,refused`.
    pub fn name(self) -> &'static str {
        match (self.empty, self.refused) {
            (false, false) => "none",
            (true, false) => "empty",
            (false, true) => "refused",
            (true, true) => "empty,refused",
        }
    }
}

/// What a user asked for (names as given).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
pub struct ScopeSpec {
    /// Only these systems (names or `kind:KIND`); empty: every system.
    pub systems: Vec<String>,
    /// Leave these out (names or `kind:KIND`).
    pub exclude_systems: Vec<String>,
    pub exclude_outputs: OutputFilter,
}

/// What a scope did, for tables and JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ScopeSummary {
    /// The `--systems` list as given (empty: all).
    pub only: Vec<String>,
    /// The `--exclude-systems` list as given.
    pub except: Vec<String>,
    /// The systems of the dataset left out by the two lists, by name.
    pub systems_left_out: Vec<String>,
    pub exclude_outputs: OutputFilter,
    /// Empty and refused outputs of the systems in scope (in the direction asked for), counted
    /// whether they are left out or not.
    pub empty: usize,
    pub refused: usize,
    /// Outputs left out by `exclude_outputs`.
    pub outputs_left_out: usize,
}

/// A resolved scope: the systems kept and the outputs left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    /// `None`: every system.
    systems: Option<BTreeSet<i64>>,
    /// (item, system) of the outputs left out.
    dropped: BTreeSet<(i64, i64)>,
    pub summary: ScopeSummary,
}

/// The system ids a list names; an unknown name is an error listing the known ones.
fn select(names: &Names, list: &[String], flag: &str) -> Result<BTreeSet<i64>> {
    let mut out = BTreeSet::new();
    for want in list.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let hit: Vec<i64> = match want.strip_prefix("kind:") {
            Some(kind) => names.system_kinds.iter().filter(|(_, k)| k.as_str() == kind).map(|(id, _)| *id).collect(),
            None => names.systems.iter().filter(|(_, n)| n.as_str() == want).map(|(id, _)| *id).collect(),
        };
        if hit.is_empty() {
            let known: Vec<&str> = names.systems.values().map(String::as_str).collect();
            return Err(Error::NotFound(format!(
                "{flag} {want:?}: no such system in {} (systems: {}; or kind:KIND)",
                names.dataset,
                known.join(", ")
            )));
        }
        out.extend(hit);
    }
    Ok(out)
}

impl Scope {
    /// Every system, every output (nothing counted).
    pub fn all() -> Scope {
        Scope::default()
    }

    /// Resolves `spec` on a dataset and counts the empty and refused outputs of the systems in
    /// scope (of one direction when `direction` is given).
    pub fn resolve(store: &Store, names: &Names, spec: &ScopeSpec, direction: Option<i64>) -> Result<Scope> {
        let only = select(names, &spec.systems, "--systems")?;
        let except = select(names, &spec.exclude_systems, "--exclude-systems")?;
        let systems: Option<BTreeSet<i64>> = if only.is_empty() && except.is_empty() {
            None
        } else {
            let base: BTreeSet<i64> = if only.is_empty() { names.systems.keys().copied().collect() } else { only };
            let kept: BTreeSet<i64> = base.difference(&except).copied().collect();
            if kept.is_empty() {
                return Err(Error::Invalid("--systems / --exclude-systems leave no system".into()));
            }
            Some(kept)
        };
        let mut summary = ScopeSummary {
            only: spec.systems.clone(),
            except: spec.exclude_systems.clone(),
            systems_left_out: names
                .systems
                .iter()
                .filter(|(id, _)| systems.as_ref().is_some_and(|s| !s.contains(id)))
                .map(|(_, n)| n.clone())
                .collect(),
            exclude_outputs: spec.exclude_outputs,
            ..Default::default()
        };
        let mut dropped = BTreeSet::new();
        for f in flagged(store, names.dataset_id, direction)? {
            if systems.as_ref().is_some_and(|s| !s.contains(&f.system)) {
                continue;
            }
            summary.empty += usize::from(f.empty);
            summary.refused += usize::from(f.refused);
            if (f.empty && spec.exclude_outputs.empty) || (f.refused && spec.exclude_outputs.refused) {
                dropped.insert((f.item, f.system));
            }
        }
        summary.outputs_left_out = dropped.len();
        Ok(Scope { systems, dropped, summary })
    }

    /// Whether the output of `system` for `item` is in scope.
    pub fn keeps(&self, item: i64, system: i64) -> bool {
        self.systems.as_ref().is_none_or(|s| s.contains(&system)) && !self.dropped.contains(&(item, system))
    }

    /// The rows in scope.
    pub fn filter(&self, mut rows: Vec<MetaRow>) -> Vec<MetaRow> {
        rows.retain(|r| self.keeps(r.source, r.system));
        rows
    }

    /// The values in scope.
    pub fn filter_values(&self, values: &data::Values) -> data::Values {
        values.iter().filter(|((item, sys), _)| self.keeps(*item, *sys)).map(|(k, v)| (*k, *v)).collect()
    }
}

/// An output flagged empty or refused.
struct Flagged {
    item: i64,
    system: i64,
    empty: bool,
    refused: bool,
}

/// The latest output of every system and item (as [`data::metric_values`] picks them) that is
/// empty or a refusal.
fn flagged(store: &Store, dataset_id: i64, direction: Option<i64>) -> Result<Vec<Flagged>> {
    let mut out = Vec::new();
    for o in store.latest_outputs(dataset_id, direction)? {
        let empty = o.text.trim().is_empty();
        let refused = !empty && (is_refusal(&o.text, &o.source) || o.raw.as_deref().is_some_and(|w| is_refusal(w, &o.source)));
        if empty || refused {
            out.push(Flagged { item: o.item_id, system: o.system_id, empty, refused });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_filter_names() {
        assert_eq!(OutputFilter::parse("refused, empty").unwrap(), OutputFilter { empty: true, refused: true });
        assert_eq!(OutputFilter::parse("all").unwrap().name(), "empty,refused");
        assert_eq!(OutputFilter::parse("").unwrap().name(), "none");
        assert_eq!(OutputFilter::parse("refusals").unwrap().name(), "refused");
        assert!(OutputFilter::parse("long").unwrap_err().to_string().contains("use empty, refused"));
    }

    #[test]
    fn systems_by_name_and_kind() {
        let mut names = Names { dataset: "d".into(), ..Default::default() };
        for (id, n, k) in [(1, "REF", "human"), (2, "a", "system"), (3, "b", "system")] {
            names.systems.insert(id, n.into());
            names.system_kinds.insert(id, k.into());
        }
        assert_eq!(select(&names, &["kind:human".into()], "--x").unwrap(), [1].into());
        assert_eq!(select(&names, &["a".into(), " b ".into()], "--x").unwrap(), [2, 3].into());
        let e = select(&names, &["c".into()], "--systems").unwrap_err().to_string();
        assert!(e.contains("--systems \"c\"") && e.contains("REF, a, b"), "{e}");
        let scope = Scope { systems: Some([2, 3].into()), dropped: [(7, 2)].into(), summary: ScopeSummary::default() };
        assert!(scope.keeps(7, 3) && !scope.keeps(7, 2) && !scope.keeps(8, 1) && scope.keeps(8, 2));
        let row = |item, system| MetaRow { direction: 1, source: item, system, metric: Some(1.0), human: Some(1.0) };
        assert_eq!(scope.filter(vec![row(7, 2), row(7, 3), row(7, 1)]), vec![row(7, 3)]);
        assert!(Scope::all().keeps(1, 1));
    }
}
