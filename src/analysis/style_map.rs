//! A t-SNE map of a dataset's texts (docs/METHODS.md, t-SNE): sources, references and the
//! systems' outputs (the latest run's output of each system per item) embedded by a sentence
//! encoder (mean pooling, L2-normalized; longest texts first, in steps of 256, the cancel flag
//! read between steps), mapped to 2-D by `crate::stats::tsne`, coloured by
//! style or by system. At most `max_points` texts: past that, each group keeps its share
//! (largest remainders), drawn from the seed.

use super::data::{self, Names};
use crate::models::classify::ClassifierError;
use crate::models::embed_classifier::SentenceEncoder;
use crate::plot::{Group, Marker, Scatter};
use crate::stats::tsne::{trustworthiness, tsne, TsneError, TsneProgress, TsneSpec};
use crate::store::Store;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, thiserror::Error)]
pub enum MapError {
    #[error(transparent)]
    Data(#[from] data::Error),
    #[error(transparent)]
    Store(#[from] crate::store::Error),
    #[error(transparent)]
    Encoder(#[from] ClassifierError),
    #[error(transparent)]
    Tsne(#[from] TsneError),
    #[error("cancelled")]
    Cancelled,
}

/// Where a map is: texts embedded so far, then the t-SNE iterations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MapProgress {
    Embedding { done: usize, total: usize },
    Tsne(TsneProgress),
}

/// Texts embedded per call (the cancel flag is read between calls).
const EMBED_STEP: usize = 256;

/// What a text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Source,
    Reference,
    Output,
}

/// One text on the map: its role, its style (the source style for sources, the target style
/// for references and outputs), its system (outputs), its direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MapText {
    pub role: Role,
    pub style: String,
    pub system: Option<String>,
    pub direction: String,
    pub text: String,
}

/// How points are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Colour {
    /// A colour per (style, role): `formal · sources`, `informal · outputs`, ...
    Style,
    /// Sources, references, and a colour per system.
    System,
}

impl Colour {
    pub fn parse(s: &str) -> Option<Colour> {
        match s {
            "style" => Some(Colour::Style),
            "system" => Some(Colour::System),
            _ => None,
        }
    }

    /// The group a text belongs to, and its sort key (sources, references, outputs).
    pub fn group(self, t: &MapText) -> (Role, String) {
        let role = match t.role {
            Role::Source => "sources",
            Role::Reference => "references",
            Role::Output => "outputs",
        };
        match (self, &t.system) {
            (Colour::Style, _) => (t.role, format!("{} · {role}", t.style)),
            (Colour::System, Some(s)) => (t.role, s.clone()),
            (Colour::System, None) => (t.role, role.to_owned()),
        }
    }
}

/// Every source, reference and output of the dataset (one direction, some systems).
pub fn map_texts(store: &Store, names: &Names, direction: Option<i64>, systems: Option<&[String]>) -> Result<Vec<MapText>, MapError> {
    if let Some(want) = systems {
        let known: Vec<&str> = names.systems.values().map(String::as_str).collect();
        if let Some(bad) = want.iter().find(|w| !known.contains(&w.as_str())) {
            return Err(data::Error::NotFound(format!("no system {bad:?} in {}; it has: {}", names.dataset, known.join(", "))).into());
        }
    }
    let styles: BTreeMap<i64, (String, String)> =
        store.directions(names.dataset_id)?.into_iter().map(|d| (d.id, (d.source_style, d.target_style))).collect();
    let mut out = Vec::new();
    let mut last = None;
    for row in store.sources_and_references(names.dataset_id, direction)? {
        let (s, t) = styles.get(&row.direction_id).cloned().unwrap_or_default();
        // One row per reference: the source is taken once per item (consecutive rows).
        if last != Some(row.item_id) {
            out.push(MapText { role: Role::Source, style: s, system: None, direction: names.direction(row.direction_id), text: row.source });
            last = Some(row.item_id);
        }
        if let Some(text) = row.reference {
            out.push(MapText { role: Role::Reference, style: t, system: None, direction: names.direction(row.direction_id), text });
        }
    }
    for (dir, sys, text) in store.latest_output_texts(names.dataset_id, direction)? {
        let system = names.system(sys);
        if systems.is_some_and(|w| !w.contains(&system)) {
            continue;
        }
        let (_, t) = styles.get(&dir).cloned().unwrap_or_default();
        out.push(MapText { role: Role::Output, style: t, system: Some(system), direction: names.direction(dir), text });
    }
    Ok(out)
}

/// At most `max` texts: all when there are no more, else each group's share of `max`
/// (floors, then one more for the largest remainders), drawn from the seed, in input order.
pub fn sample(texts: Vec<MapText>, colour: Colour, max: usize, seed: u64) -> Vec<MapText> {
    if texts.len() <= max {
        return texts;
    }
    let mut groups: BTreeMap<(Role, String), Vec<usize>> = BTreeMap::new();
    for (i, t) in texts.iter().enumerate() {
        groups.entry(colour.group(t)).or_default().push(i);
    }
    let total = texts.len() as f64;
    let mut quota: Vec<(usize, f64)> = groups.values().map(|g| {
        let exact = max as f64 * g.len() as f64 / total;
        (exact.floor() as usize, exact - exact.floor())
    }).collect();
    let left = max - quota.iter().map(|q| q.0).sum::<usize>();
    let mut by_rest: Vec<usize> = (0..quota.len()).collect();
    by_rest.sort_by(|&a, &b| quota[b].1.total_cmp(&quota[a].1).then(a.cmp(&b)));
    for &k in by_rest.iter().take(left) {
        quota[k].0 += 1;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut keep: Vec<usize> = Vec::with_capacity(max);
    for (g, (k, _)) in groups.values().zip(quota) {
        let picked = rand::seq::index::sample(&mut rng, g.len(), k.min(g.len()));
        keep.extend(picked.into_iter().map(|j| g[j]));
    }
    keep.sort_unstable();
    let mut texts: Vec<Option<MapText>> = texts.into_iter().map(Some).collect();
    keep.into_iter().filter_map(|i| texts[i].take()).collect()
}

/// A finished map: each text's point and group, and how the map was made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StyleMap {
    pub colour: Colour,
    pub texts: Vec<MapText>,
    pub coords: Vec<[f64; 2]>,
    /// Group names in drawing order, and each text's group.
    pub groups: Vec<String>,
    pub group_of: Vec<usize>,
    pub encoder: String,
    pub perplexity: f64,
    pub seed: u64,
    pub kl: f64,
    pub iterations: usize,
    /// Trustworthiness at 5 neighbours (when there are more than 10 points).
    pub trust5: Option<f64>,
}

/// Embeds the texts (longest first, in steps, `cancel` read between them) and maps them.
pub fn style_map(
    texts: Vec<MapText>,
    colour: Colour,
    encoder: &mut dyn SentenceEncoder,
    spec: &TsneSpec,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(MapProgress),
) -> Result<StyleMap, MapError> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(texts[i].text.len()));
    let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
    let mut done = 0;
    for step in order.chunks(EMBED_STEP) {
        if cancel.load(Ordering::Relaxed) {
            return Err(MapError::Cancelled);
        }
        let chunk: Vec<&str> = step.iter().map(|&i| texts[i].text.as_str()).collect();
        for (&i, v) in step.iter().zip(encoder.embed(&chunk)?) {
            vectors[i] = v;
        }
        done += step.len();
        progress(MapProgress::Embedding { done, total: texts.len() });
    }
    let map = tsne(&vectors, spec, cancel, &mut |p| progress(MapProgress::Tsne(p))).map_err(|e| match e {
        TsneError::Cancelled => MapError::Cancelled,
        e => MapError::Tsne(e),
    })?;
    let trust5 = trustworthiness(&vectors, &map.coords, 5);
    let mut keys: Vec<(Role, String)> = texts.iter().map(|t| colour.group(t)).collect();
    keys.sort();
    keys.dedup();
    let group_of = texts.iter().map(|t| keys.binary_search(&colour.group(t)).expect("every group listed")).collect();
    Ok(StyleMap {
        colour,
        texts,
        coords: map.coords,
        groups: keys.into_iter().map(|k| k.1).collect(),
        group_of,
        encoder: encoder.id(),
        perplexity: spec.perplexity,
        seed: spec.seed,
        kl: map.kl,
        iterations: map.iterations,
        trust5,
    })
}

impl StyleMap {
    /// One line: what was mapped and how well the map keeps neighbours.
    pub fn describe(&self) -> String {
        let encoder = self.encoder.split(" (").next().unwrap_or(&self.encoder);
        format!(
            "t-SNE of {} sentence embeddings ({encoder}, mean pooling); perplexity {}, seed {}, PCA start, {} iterations; KL {:.3}{}",
            self.texts.len(),
            self.perplexity,
            self.seed,
            self.iterations,
            self.kl,
            self.trust5.map_or(String::new(), |t| format!(", trustworthiness@5 {t:.3}"))
        )
    }

    /// The figure: the marker says the role (circles sources, triangles references, squares
    /// outputs), the colour the style (by style) or the group (by system).
    pub fn figure(&self, title: &str) -> Scatter {
        let mut groups: Vec<Group> = self
            .groups
            .iter()
            .enumerate()
            .map(|(k, g)| Group { name: g.clone(), points: Vec::new(), colour: k, marker: Marker::Circle })
            .collect();
        let mut styles: Vec<&str> = self.texts.iter().map(|t| t.style.as_str()).collect();
        styles.sort_unstable();
        styles.dedup();
        for ((p, &g), t) in self.coords.iter().zip(&self.group_of).zip(&self.texts) {
            let group = &mut groups[g];
            group.points.push(*p);
            group.marker = match t.role {
                Role::Source => Marker::Circle,
                Role::Reference => Marker::Triangle,
                Role::Output => Marker::Square,
            };
            if self.colour == Colour::Style {
                group.colour = styles.binary_search(&t.style.as_str()).unwrap_or(0);
            }
        }
        Scatter { title: title.to_owned(), groups, note: self.describe() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(role: Role, style: &str, system: Option<&str>) -> MapText {
        MapText { role, style: style.into(), system: system.map(Into::into), direction: "a->b".into(), text: String::new() }
    }

    #[test]
    fn samples_keep_each_groups_share() {
        let mut texts: Vec<MapText> = (0..60).map(|_| text(Role::Source, "a", None)).collect();
        texts.extend((0..30).map(|_| text(Role::Output, "b", Some("x"))));
        texts.extend((0..10).map(|_| text(Role::Output, "b", Some("y"))));
        let got = sample(texts.clone(), Colour::System, 10, 7);
        let count = |name: &str| got.iter().filter(|t| Colour::System.group(t).1 == name).count();
        assert_eq!((got.len(), count("sources"), count("x"), count("y")), (10, 6, 3, 1));
        assert_eq!(sample(texts.clone(), Colour::System, 10, 7), got);
        assert_eq!(sample(texts.clone(), Colour::System, 500, 7).len(), 100);
        assert_eq!(Colour::Style.group(&texts[70]).1, "b · outputs");
    }
}
