//! Annotation campaigns: the definition (dataset, directions, systems, aspects, mode), the
//! seeded sample of sources, and each annotator's queue.
//!
//! **Sample.** Per direction, the items that have an output of every chosen system (and a
//! reference when the human reference is a system) are shuffled by a ChaCha8 generator seeded
//! from the campaign seed and the direction; the first `per_direction` are the real items, the
//! next `training_per_direction` the training items. The same store and seed give the same
//! sample; the sample is also stored (`campaign_items`).
//!
//! **Human reference as a system.** With `human_reference`, a system named `reference` of kind
//! `human` is created on demand in the dataset; its output for an item is the item's first
//! reference. It is then ranked blind like any other system.
//!
//! **Queues.** Each annotator's queue is derived from the seed and the annotator's name only
//! (indices into the campaign's item and system lists, never row ids), so it is the same in
//! every store: the training items first (the same ones for everybody, about 10% of the
//! queue), then the real items, each in an order of its own per annotator; a share of the real
//! items (`repeats`) is shown a second time later, marked as a repeat; every showing has its
//! own random display order of the systems. An adaptive campaign's queue holds the training
//! items only at first; its real screens are chosen one at a time (`human::design`).

pub mod design;

pub use crate::human::plan::{Design, Stop};
use crate::store::{self, Store, Writer};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The name of the system made of the items' first references.
pub const REFERENCE_SYSTEM: &str = "reference";
/// Aspects when none are given.
pub const DEFAULT_ASPECTS: [&str; 3] = ["strength", "content", "fluency"];
/// Likert aspects when none are given (TSTBench).
pub const LIKERT_ASPECTS: [&str; 4] = ["strength", "content", "fluency", "overall"];

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Store(#[from] store::Error),
    #[error("bad campaign definition in the store: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Invalid(String),
    #[error("not saved: {0}")]
    NotSaved(#[from] crate::human::saver::SaveError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How outputs are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Duel-ranking: a full ordering with ties per aspect.
    Rank,
    /// 1-5 per output and aspect (TSTBench).
    Likert,
    /// 0-100 per output and aspect.
    Slider,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Rank => "rank",
            Mode::Likert => "likert",
            Mode::Slider => "slider",
        }
    }

    pub fn parse(s: &str) -> Result<Mode> {
        match s {
            "rank" | "ranking" | "duel" => Ok(Mode::Rank),
            "likert" => Ok(Mode::Likert),
            "slider" | "sliders" => Ok(Mode::Slider),
            _ => Err(Error::Invalid(format!("mode {s:?} is not rank, likert or slider"))),
        }
    }

    /// What the values of `aspect` mean in this mode, in words (the scale as the guidelines,
    /// `assets/guidelines.md`, define it), for the annotate screen.
    pub fn scale_words(self, aspect: &str) -> &'static str {
        match (self, aspect) {
            (Mode::Rank, _) => "rank the outputs best (1) to worst; ties allowed",
            (Mode::Likert, "strength") => "1 unchanged · 3 partly transferred · 5 fully transferred",
            (Mode::Likert, "content") => "1 entirely different · 3 same meaning, said differently · 5 same meaning",
            (Mode::Likert, "fluency") => "1 incoherent · 3 minor errors · 5 no errors",
            (Mode::Likert, "overall") => "1 worst · 5 best: your overall judgment",
            (Mode::Likert, _) => "1 worst · 5 best",
            (Mode::Slider, "strength") => "0 unchanged · 100 fully transferred",
            (Mode::Slider, "content") => "0 entirely different · 100 same meaning",
            (Mode::Slider, "fluency") => "0 incoherent · 100 no errors",
            (Mode::Slider, _) => "0 worst · 100 best",
        }
    }

    /// The range of a value in this mode (ranks: 1..=n systems).
    pub fn range(self, n_systems: usize) -> (f64, f64) {
        match self {
            Mode::Rank => (1.0, n_systems as f64),
            Mode::Likert => (1.0, 5.0),
            Mode::Slider => (0.0, 100.0),
        }
    }
}

/// Where an imported campaign came from (the campaign's `imported` column).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Imported {
    /// The import format (`lijuncen`, `eval-formality`, `passeul`, `tstbench`, `judgments`).
    pub format: String,
    /// The files or folders read.
    pub from: Vec<String>,
    /// The values' scale as the files give it (`1-5`, `0-100`, `1-5, mean of 3 workers`).
    pub scale: String,
    /// Why agreement is undefined, when the files do not tell annotators apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement_undefined: Option<String>,
    /// The ratings are published per system without their items (in `system_ratings`).
    #[serde(default)]
    pub system_level: bool,
}

/// Reads a campaign's `imported` column.
pub fn parse_imported(json: Option<&str>) -> Result<Option<Imported>> {
    Ok(json.map(serde_json::from_str).transpose()?)
}

/// What a campaign is; stored as the campaign's `config` and compared on import.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    pub dataset: String,
    pub mode: Mode,
    /// `source->target`, in campaign order.
    pub directions: Vec<String>,
    /// System names in campaign order (`reference` when `human_reference`).
    pub systems: Vec<String>,
    pub human_reference: bool,
    pub aspects: Vec<String>,
    pub per_direction: usize,
    pub training_per_direction: usize,
    /// Share of the real items shown a second time to each annotator.
    pub repeats: f64,
    pub seed: u64,
    /// Show the item's references next to the source.
    pub show_reference: bool,
    /// How screens are chosen: `uniform` (every real item, every system) or `adaptive`
    /// (`human::design`).
    #[serde(default, skip_serializing_if = "is_uniform")]
    pub design: Design,
    /// Adaptive: outputs a screen shows (all when the campaign has no more systems).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
    /// Adaptive: when no further screen is chosen.
    #[serde(default, skip_serializing_if = "Stop::is_unset")]
    pub stop: Stop,
}

fn is_uniform(d: &Design) -> bool {
    *d == Design::Uniform
}

/// One sampled item of a campaign.
pub use crate::store::CampaignItem;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignSystem {
    pub id: i64,
    pub name: String,
}

/// A campaign as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Campaign {
    pub id: i64,
    pub name: String,
    pub dataset_id: i64,
    pub def: Definition,
    /// Real items first (by direction, in sample order), then training items.
    pub items: Vec<CampaignItem>,
    pub systems: Vec<CampaignSystem>,
    /// Nobody annotates it (imported campaigns).
    pub read_only: bool,
    /// Where an imported campaign came from.
    pub imported: Option<Imported>,
}

/// One showing in an annotator's queue, by index into the campaign's items and systems.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Slot {
    pub item: usize,
    pub training: bool,
    pub repeat: bool,
    /// System indices in display order (a permutation).
    pub display: Vec<usize>,
}

/// A 64-bit seed derived from the campaign seed and some labels.
pub fn derive_seed(seed: u64, parts: &[&str]) -> u64 {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    for p in parts {
        h.update([0]);
        h.update(p.as_bytes());
    }
    u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
}

impl Definition {
    /// Checks the numbers and names.
    pub fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invalid(m));
        if self.directions.is_empty() {
            return bad("a campaign needs at least one direction".into());
        }
        if self.systems.len() < 2 && self.mode == Mode::Rank {
            return bad("ranking needs at least two systems".into());
        }
        if self.systems.is_empty() {
            return bad("a campaign needs at least one system".into());
        }
        if self.aspects.is_empty() || self.aspects.iter().any(|a| a.trim().is_empty() || a.contains(',')) {
            return bad(format!("aspects {:?}: give one name or more, without commas", self.aspects));
        }
        if self.per_direction == 0 {
            return bad("per_direction must be at least 1".into());
        }
        if self.design == Design::Adaptive {
            match self.k {
                Some(k) if k >= 2 => {}
                k => return bad(format!("an adaptive campaign shows 2 outputs or more a screen (k {})", k.map_or("unset".into(), |k| k.to_string()))),
            }
        } else if self.k.is_some() || !self.stop.is_unset() {
            return bad("k and a stopping rule belong to adaptive campaigns (--design adaptive)".into());
        }
        if self.stop.budget == Some(0) {
            return bad("a judgment budget of 0 allows nothing".into());
        }
        if !(0.0..=1.0).contains(&self.repeats) {
            return bad(format!("repeats {} is not a share between 0 and 1", self.repeats));
        }
        for (i, s) in self.systems.iter().enumerate() {
            if self.systems[..i].contains(s) {
                return bad(format!("system {s:?} is listed twice"));
            }
        }
        for (i, a) in self.aspects.iter().enumerate() {
            if self.aspects[..i].contains(a) {
                return bad(format!("aspect {a:?} is listed twice"));
            }
        }
        Ok(())
    }

    /// The queue of `annotator` for a campaign of `n_real` real and `n_training` training items
    /// (the campaign's item list: real first, then training).
    /// An adaptive campaign's queue starts with the training items only, each showing a
    /// seeded `k` of the systems; its real screens are chosen one at a time
    /// (`human::design::extend`).
    pub fn queue(&self, n_real: usize, n_training: usize, annotator: &str) -> Vec<Slot> {
        let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(self.seed, &["queue", annotator]));
        let mut training: Vec<usize> = (n_real..n_real + n_training).collect();
        training.shuffle(&mut rng);
        if self.design == Design::Adaptive {
            let k = self.screen_size();
            return training
                .into_iter()
                .map(|item| {
                    let mut display: Vec<usize> = (0..self.systems.len()).collect();
                    display.shuffle(&mut rng);
                    display.truncate(k);
                    Slot { item, training: true, repeat: false, display }
                })
                .collect();
        }
        let mut real: Vec<usize> = (0..n_real).collect();
        real.shuffle(&mut rng);
        let mut order: Vec<(usize, bool)> = real.iter().map(|&i| (i, false)).collect();
        let k = (self.repeats * n_real as f64).round() as usize;
        if k > 0 {
            let mut chosen = rand::seq::index::sample(&mut rng, n_real, k.min(n_real)).into_vec();
            chosen.sort_unstable();
            for at in chosen {
                let item = real[at];
                let original = order.iter().position(|&(i, r)| i == item && !r).expect("in the queue");
                // Later, with at least one other item between when possible.
                let lo = (original + 2).min(order.len());
                let pos = rng.random_range(lo..=order.len());
                order.insert(pos, (item, true));
            }
        }
        let n_sys = self.systems.len();
        training
            .into_iter()
            .map(|i| (i, true, false))
            .chain(order.into_iter().map(|(i, r)| (i, false, r)))
            .map(|(item, training, repeat)| {
                let mut display: Vec<usize> = (0..n_sys).collect();
                display.shuffle(&mut rng);
                Slot { item, training, repeat, display }
            })
            .collect()
    }
}

impl Definition {
    /// Outputs a screen shows: every system, or `k` of them in an adaptive campaign.
    pub fn screen_size(&self) -> usize {
        match (self.design, self.k) {
            (Design::Adaptive, Some(k)) => k.min(self.systems.len()),
            _ => self.systems.len(),
        }
    }

    /// The design in words: `uniform`, `adaptive, 4 of 9 outputs a screen`.
    pub fn design_words(&self) -> String {
        match self.design {
            Design::Uniform => "uniform".into(),
            Design::Adaptive => format!("adaptive, {} of {} outputs a screen", self.screen_size(), self.systems.len()),
        }
    }
}

/// A dataset a campaign can be made on: its directions and its systems with outputs (kind
/// human left out: the reference is added as a system on request).
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetChoice {
    pub name: String,
    pub directions: Vec<String>,
    pub systems: Vec<String>,
}

/// Every dataset a campaign can be made on, by name.
pub fn choices(store: &Store) -> Result<Vec<DatasetChoice>> {
    let mut out = Vec::new();
    for d in store.datasets()? {
        let directions = store.directions(d.id)?.iter().map(|x| x.label()).collect();
        out.push(DatasetChoice { name: d.name, directions, systems: default_systems(store, d.id)? });
    }
    Ok(out)
}

fn default_systems(store: &Store, dataset_id: i64) -> Result<Vec<String>> {
    Ok(store.systems(Some(dataset_id))?.into_iter().filter(|s| s.kind != "human" && s.outputs > 0).map(|s| s.name).collect())
}

/// A new campaign as `tstlab campaign new` and the Campaigns screen ask for it: what is left
/// empty or unset gets the default (every direction; every system with outputs but the human
/// ones; the mode's aspects; 10% training items, at least 1; references shown in Likert
/// campaigns without the reference as a system).
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub dataset: String,
    pub mode: Mode,
    pub directions: Vec<String>,
    pub systems: Vec<String>,
    pub human_reference: bool,
    pub aspects: Vec<String>,
    pub per_direction: usize,
    pub training: Option<usize>,
    pub repeats: f64,
    pub seed: u64,
    pub show_reference: Option<bool>,
    pub design: Design,
    /// Adaptive: outputs a screen shows (default 4).
    pub k: Option<usize>,
    pub stop: Stop,
}

/// Outputs an adaptive screen shows when not given.
pub const DEFAULT_K: usize = 4;

impl Draft {
    /// The defaults `tstlab campaign new` documents: 50 items per direction, 10% repeats, seed 1.
    pub fn new(dataset: &str, mode: Mode) -> Draft {
        Draft {
            dataset: dataset.to_owned(),
            mode,
            directions: Vec::new(),
            systems: Vec::new(),
            human_reference: false,
            aspects: Vec::new(),
            per_direction: 50,
            training: None,
            repeats: 0.1,
            seed: 1,
            show_reference: None,
            design: Design::Uniform,
            k: None,
            stop: Stop::default(),
        }
    }

    /// The campaign's definition, the defaults filled in from the store.
    pub fn definition(self, store: &Store) -> Result<Definition> {
        let dataset_id = store.dataset_id(&self.dataset)?;
        let directions =
            if self.directions.is_empty() { store.directions(dataset_id)?.iter().map(|d| d.label()).collect() } else { self.directions };
        let mut systems = if self.systems.is_empty() { default_systems(store, dataset_id)? } else { self.systems };
        if self.human_reference && !systems.iter().any(|s| s == REFERENCE_SYSTEM) {
            systems.push(REFERENCE_SYSTEM.into());
        }
        let aspects = match (self.aspects.is_empty(), self.mode) {
            (false, _) => self.aspects,
            (true, Mode::Likert) => LIKERT_ASPECTS.iter().map(|s| s.to_string()).collect(),
            (true, _) => DEFAULT_ASPECTS.iter().map(|s| s.to_string()).collect(),
        };
        Ok(Definition {
            dataset: self.dataset,
            mode: self.mode,
            directions,
            systems,
            human_reference: self.human_reference,
            aspects,
            per_direction: self.per_direction,
            training_per_direction: self.training.unwrap_or_else(|| self.per_direction.div_ceil(10)),
            repeats: self.repeats,
            seed: self.seed,
            show_reference: self.show_reference.unwrap_or(self.mode == Mode::Likert && !self.human_reference),
            k: match self.design {
                Design::Adaptive => Some(self.k.unwrap_or(DEFAULT_K)),
                Design::Uniform => self.k,
            },
            // An adaptive campaign stops when settled unless told otherwise.
            stop: match self.design {
                Design::Adaptive if self.stop.is_unset() => Stop { settled: true, budget: None },
                _ => self.stop,
            },
            design: self.design,
        })
    }
}

/// What `tstlab campaign new` asks for.
#[derive(Debug, Clone)]
pub struct NewCampaign {
    pub name: String,
    pub def: Definition,
    pub annotators: Vec<String>,
}

/// Creates a campaign: samples the items, makes the reference system if asked, and the queues
/// of the named annotators. One transaction.
pub fn create(store: &mut Store, new: &NewCampaign) -> Result<Campaign> {
    let def = &new.def;
    def.check()?;
    if campaign_id(store, &new.name)?.is_some() {
        return Err(Error::Invalid(format!("campaign {:?} already exists", new.name)));
    }
    let dataset_id = store.dataset_id(&def.dataset)?;
    let mut system_ids = Vec::new();
    for name in def.systems.iter().filter(|s| !(def.human_reference && *s == REFERENCE_SYSTEM)) {
        let id = store.system_id(dataset_id, name)?;
        system_ids.push(id.ok_or_else(|| Error::Invalid(format!("dataset {} has no system {name:?}", def.dataset)))?);
    }
    let mut real = Vec::new();
    let mut training = Vec::new();
    for dir in &def.directions {
        let direction_id = store.direction_id(dataset_id, dir)?;
        let mut candidates = store.items_with_outputs_of(direction_id, &system_ids, def.human_reference)?;
        let want = def.per_direction + def.training_per_direction;
        if candidates.len() < want {
            return Err(Error::Invalid(format!(
                "{}/{dir}: {} item(s) have an output of every chosen system{}, {want} needed ({} real + {} training)",
                def.dataset,
                candidates.len(),
                if def.human_reference { " and a reference" } else { "" },
                def.per_direction,
                def.training_per_direction
            )));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(def.seed, &["sample", dir]));
        candidates.shuffle(&mut rng);
        real.extend_from_slice(&candidates[..def.per_direction]);
        training.extend_from_slice(&candidates[def.per_direction..want]);
    }
    let mut w = store.writer()?;
    let campaign_id = w.campaign(&new.name, dataset_id, def.mode.as_str(), &serde_json::to_value(def)?)?;
    if def.human_reference {
        make_reference_system(&mut w, dataset_id, real.iter().chain(&training), "tstlab campaign")?;
    }
    for (pos, name) in def.systems.iter().enumerate() {
        w.add_campaign_system(campaign_id, dataset_id, pos, name)?;
    }
    for (pos, (item, role)) in real.iter().map(|i| (i, "real")).chain(training.iter().map(|i| (i, "training"))).enumerate() {
        w.add_campaign_item(campaign_id, *item, role, pos)?;
    }
    w.commit()?;
    for a in &new.annotators {
        add_annotator(store, &new.name, a)?;
    }
    load(store, &new.name)
}

/// The `reference` system (kind `human`): the first reference of each item as its output.
/// Returns its id.
pub(crate) fn make_reference_system<'a>(w: &mut Writer, dataset_id: i64, items: impl Iterator<Item = &'a i64>, made_by: &str) -> Result<i64> {
    let kind = w.system_kind(dataset_id, REFERENCE_SYSTEM)?;
    if kind.as_deref().is_some_and(|k| k != "human") {
        return Err(Error::Invalid(format!(
            "the dataset has a system named {REFERENCE_SYSTEM:?} that is not of kind human"
        )));
    }
    let system = w.system(dataset_id, REFERENCE_SYSTEM, "human")?;
    let run = w.import_run(system, &serde_json::json!({"made_by": made_by, "output": "the item's first reference"}))?;
    for &item in items {
        let text = w.first_reference(item)?;
        w.output(run, item, &text, None)?;
    }
    Ok(system)
}

pub fn campaign_id(store: &Store, name: &str) -> Result<Option<i64>> {
    Ok(store.campaign_id(name)?)
}

/// Loads a campaign by name.
pub fn load(store: &Store, name: &str) -> Result<Campaign> {
    let crate::store::CampaignRow { id, dataset_id, config, read_only, imported } =
        store.campaign_row(name)?.ok_or_else(|| Error::Invalid(format!("no campaign {name:?} (tstlab campaign status lists them)")))?;
    let def: Definition = serde_json::from_str(&config)?;
    let items = store.campaign_items(id)?;
    let systems = store.campaign_systems(id)?.into_iter().map(|(id, name)| CampaignSystem { id, name }).collect();
    let imported = parse_imported(imported.as_deref())?;
    Ok(Campaign { id, name: name.to_owned(), dataset_id, def, items, systems, read_only, imported })
}

impl Campaign {
    /// Refuses `what` (annotating, joining, merging work) on a read-only campaign.
    pub fn ensure_writable(&self, what: &str) -> Result<()> {
        if !self.read_only {
            return Ok(());
        }
        let from = self.imported.as_ref().map_or(String::new(), |i| format!(": its judgments were imported from {} files", i.format));
        Err(Error::Invalid(format!(
            "campaign {:?} is read-only{from}; {what} is refused (tstlab campaign new makes a campaign to annotate)",
            self.name
        )))
    }

    /// Ratings published per system without their items (imported system-level campaigns).
    pub fn system_ratings(&self, store: &Store) -> Result<usize> {
        Ok(store.system_rating_count(self.id)?)
    }

    pub fn n_real(&self) -> usize {
        self.items.iter().filter(|i| !i.training).count()
    }

    pub fn n_training(&self) -> usize {
        self.items.len() - self.n_real()
    }

    /// The queue `annotator` gets in this campaign.
    pub fn queue(&self, annotator: &str) -> Vec<Slot> {
        self.def.queue(self.n_real(), self.n_training(), annotator)
    }

    /// Annotators with a queue, by name.
    pub fn annotators(&self, store: &Store) -> Result<Vec<(i64, String)>> {
        Ok(store.campaign_annotators(self.id)?)
    }
}

/// Adds an annotator to a campaign (their queue); returns the annotator id. Nothing changes if
/// they already have one.
pub fn add_annotator(store: &mut Store, campaign: &str, annotator: &str) -> Result<i64> {
    let c = load(store, campaign)?;
    c.ensure_writable("adding an annotator")?;
    let slots = c.queue(annotator);
    let mut w = store.writer()?;
    let a = w.annotator(annotator)?;
    if !w.has_queue(c.id, a)? {
        for (seq, s) in slots.iter().enumerate() {
            let display: Vec<i64> = s.display.iter().map(|&k| c.systems[k].id).collect();
            let (display, item_id) = (serde_json::to_string(&display)?, c.items[s.item].item_id);
            let entry = store::QueueRow { seq: seq as i64, item_id, training: s.training, repeat: s.repeat, display, ms: 0, visits: 0 };
            w.add_queue_entry(c.id, a, &entry)?;
        }
    }
    w.commit()?;
    Ok(a)
}

/// An annotator's progress in a campaign.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnnotatorProgress {
    pub annotator: String,
    pub training_done: usize,
    pub training: usize,
    pub real_done: usize,
    pub real: usize,
    pub repeats_done: usize,
    pub repeats: usize,
    /// Time recorded on the queue's items, in milliseconds.
    pub ms: i64,
    /// Where the annotator is (0-based queue position), if they have started.
    pub at: Option<usize>,
}

impl AnnotatorProgress {
    /// `training 1/2 · real 3/10 · repeats 0/1`.
    pub fn counts(&self) -> String {
        format!(
            "training {}/{} · real {}/{} · repeats {}/{}",
            self.training_done, self.training, self.real_done, self.real, self.repeats_done, self.repeats
        )
    }
}

/// Per queue entry of `annotator_id`: (training, repeat, judgments stored, ms, skipped).
pub fn entry_counts(store: &Store, campaign_id: i64, annotator_id: i64) -> Result<Vec<crate::store::EntryCount>> {
    Ok(store.entry_counts(campaign_id, annotator_id)?)
}

/// Progress of every annotator of a campaign.
pub fn progress(store: &Store, c: &Campaign) -> Result<Vec<AnnotatorProgress>> {
    let mut out = Vec::new();
    for (id, name) in c.annotators(store)? {
        let mut p = AnnotatorProgress {
            annotator: name,
            training_done: 0,
            training: 0,
            real_done: 0,
            real: 0,
            repeats_done: 0,
            repeats: 0,
            ms: 0,
            at: None,
        };
        for (training, repeat, n, ms, skipped, shown) in entry_counts(store, c.id, id)? {
            let full = c.def.aspects.len() * if shown == 0 { c.systems.len() } else { shown };
            // A skipped showing is done without judgments.
            let done = usize::from(n >= full || skipped);
            p.ms += ms;
            match (training, repeat) {
                (true, _) => (p.training += 1, p.training_done += done),
                (false, true) => (p.repeats += 1, p.repeats_done += done),
                (false, false) => (p.real += 1, p.real_done += done),
            };
        }
        p.at = store.annotation_position(c.id, id)?.map(|(s, _)| s as usize);
        out.push(p);
    }
    Ok(out)
}

/// Every campaign of the store with its annotators' progress (imported ones too, marked
/// read-only).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignSummary {
    pub id: i64,
    pub name: String,
    pub dataset: String,
    pub mode: Mode,
    pub read_only: bool,
    /// Where an imported campaign came from.
    pub imported: Option<Imported>,
    /// Ratings published per system without their items.
    pub system_ratings: usize,
    pub directions: Vec<String>,
    pub systems: usize,
    pub aspects: Vec<String>,
    pub real_items: usize,
    pub training_items: usize,
    pub annotators: Vec<AnnotatorProgress>,
    /// `uniform`, or `adaptive, K of N outputs a screen`.
    pub design: String,
    /// An adaptive campaign: how far it is from its stopping rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<crate::human::design::Standing>,
}

pub fn list(store: &Store) -> Result<Vec<CampaignSummary>> {
    let names = store.campaign_names()?;
    let mut out = Vec::new();
    for name in names {
        let c = load(store, &name)?;
        out.push(CampaignSummary {
            id: c.id,
            dataset: c.def.dataset.clone(),
            mode: c.def.mode,
            read_only: c.read_only,
            system_ratings: c.system_ratings(store)?,
            imported: c.imported.clone(),
            directions: c.def.directions.clone(),
            systems: c.systems.len(),
            aspects: c.def.aspects.clone(),
            real_items: c.n_real(),
            training_items: c.n_training(),
            annotators: progress(store, &c)?,
            design: c.def.design_words(),
            adaptive: crate::human::design::standing(store, &c)?,
            name,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(repeats: f64) -> Definition {
        Definition {
            dataset: "d".into(),
            mode: Mode::Rank,
            directions: vec!["a->b".into()],
            systems: vec!["x".into(), "y".into(), "z".into()],
            human_reference: false,
            aspects: DEFAULT_ASPECTS.iter().map(|s| s.to_string()).collect(),
            per_direction: 20,
            training_per_direction: 2,
            repeats,
            seed: 7,
            show_reference: false,
            design: Design::Uniform,
            k: None,
            stop: Stop::default(),
        }
    }

    #[test]
    fn queue_training_first_repeats_later_displays_are_permutations() {
        let d = def(0.1);
        let q = d.queue(20, 2, "ann");
        assert_eq!(q.len(), 24);
        assert!(q[..2].iter().all(|s| s.training && s.item >= 20));
        assert!(q[2..].iter().all(|s| !s.training && s.item < 20));
        let repeats: Vec<usize> = (0..q.len()).filter(|&i| q[i].repeat).collect();
        assert_eq!(repeats.len(), 2);
        for &r in &repeats {
            let first = q.iter().position(|s| s.item == q[r].item && !s.repeat).unwrap();
            assert!(first + 1 < r, "a repeat comes later than its original, not right after");
        }
        let mut real: Vec<usize> = q.iter().filter(|s| !s.training && !s.repeat).map(|s| s.item).collect();
        real.sort_unstable();
        assert_eq!(real, (0..20).collect::<Vec<_>>());
        for s in &q {
            let mut p = s.display.clone();
            p.sort_unstable();
            assert_eq!(p, [0, 1, 2]);
        }
        // Same seed and name, same queue; another annotator, another order.
        assert_eq!(q, d.queue(20, 2, "ann"));
        assert_ne!(q, d.queue(20, 2, "bob"));
        assert!(def(0.0).queue(20, 2, "ann").iter().all(|s| !s.repeat));
    }

    #[test]
    fn definition_checks() {
        let mut d = def(0.0);
        assert!(d.check().is_ok());
        d.repeats = 1.5;
        assert!(d.check().is_err());
        let mut d = def(0.0);
        d.systems = vec!["x".into(), "x".into()];
        assert!(d.check().unwrap_err().to_string().contains("twice"));
        assert_ne!(derive_seed(1, &["a"]), derive_seed(1, &["b"]));
    }
}
