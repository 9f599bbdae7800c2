//! A big synthetic store and timings of the queries the TUI's loader runs on it
//! (`tstlab bench store --outputs 100000 PATH`).

use super::app::App;
use super::loader::{Loader, Request, answer};
use super::screens::browse::Browse;
use crate::jobs::Jobs;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::Path;
use crate::store::{self, ItemFilter, ItemQuery, ItemSort, Store};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use std::time::{Duration, Instant};

/// The dataset the synthetic store holds.
pub const DATASET: &str = "bench";

const WORDS: &[&str] = &[
    "the", "food", "was", "service", "staff", "room", "pizza", "coffee", "price", "table", "and", "but",
    "very", "really", "quite", "a", "bit", "cold", "warm", "rude", "friendly", "slow", "quick", "dirty",
    "clean", "bland", "tasty", "small", "generous", "loud", "quiet", "we", "i", "they", "waited", "ordered",
    "came", "back", "never", "again", "for", "an", "hour", "it", "is", "not", "good", "great", ".", "!",
];
const SWAPS: &[(&str, &str)] = &[
    ("cold", "warm"), ("rude", "friendly"), ("slow", "quick"), ("dirty", "clean"), ("bland", "tasty"),
    ("small", "generous"), ("loud", "quiet"), ("never", "always"), ("not", "really"),
];

/// What `build` wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Built {
    pub items: usize,
    pub outputs: usize,
}

/// Writes dataset `bench` deterministically: direction negative->positive with `outputs / systems`
/// items with one reference each, `systems` systems with one output per item and one score per
/// output; and a small direction positive->negative (a tenth as many items, no outputs), so that
/// selecting a direction can be timed.
pub fn build(store: &mut Store, outputs: usize, systems: usize) -> store::Result<Built> {
    let systems = systems.max(1);
    let items = outputs.div_ceil(systems);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut w = store.writer()?;
    let d = w.dataset(DATASET, "synthetic", "tstlab bench store")?;
    let dir = w.direction(d, "negative", "positive")?;
    let hash = w.metric_config("length-ratio", &json!({"unit": "words"}))?;
    let mut runs = Vec::new();
    for s in 0..systems {
        let kind = if s + 1 == systems && systems > 1 { "human" } else { "system" };
        let id = w.system(d, &format!("system-{s:02}"), kind)?;
        runs.push(w.import_run(id, &json!({"synthetic": true}))?);
    }
    let mut written = 0;
    for i in 0..items {
        let len = rng.random_range(6..30);
        let source: Vec<&str> = (0..len).map(|_| WORDS[rng.random_range(0..WORDS.len())]).collect();
        let item = w.item(dir, "test", i as i64 + 1, &source.join(" "), None)?;
        w.reference(item, &rewrite(&source, &mut rng, 1.0).join(" "), "synthetic")?;
        for run in &runs {
            if written == outputs {
                break;
            }
            let out = rewrite(&source, &mut rng, 0.6);
            let (oid, _) = w.output(*run, item, &out.join(" "), None)?;
            w.score(oid, "length-ratio", &hash, Some(out.len() as f64 / len as f64), None)?;
            written += 1;
        }
    }
    let back = w.direction(d, "positive", "negative")?;
    for i in 0..items.div_ceil(10) {
        let len = rng.random_range(6..30);
        let source: Vec<&str> = (0..len).map(|_| WORDS[rng.random_range(0..WORDS.len())]).collect();
        w.item(back, "test", i as i64 + 1, &source.join(" "), None)?;
    }
    w.commit()?;
    Ok(Built { items: items + items.div_ceil(10), outputs: written })
}

/// Swaps lexicon words with probability `p`, sometimes drops or adds a word.
fn rewrite<'a>(source: &[&'a str], rng: &mut ChaCha8Rng, p: f64) -> Vec<&'a str> {
    let mut out = Vec::with_capacity(source.len() + 1);
    for w in source {
        match SWAPS.iter().find(|(a, _)| a == w) {
            Some((_, b)) if rng.random_bool(p) => out.push(*b),
            _ if rng.random_bool(0.03) => {}
            _ => out.push(*w),
        }
        if rng.random_bool(0.02) {
            out.push("really");
        }
    }
    out
}

/// One query's times over the runs: wall-clock median and maximum, and the median CPU time of
/// the thread (what the query costs, whatever else the machine runs).
#[derive(Debug, Clone)]
pub struct Timed {
    pub name: String,
    pub median: Duration,
    pub max: Duration,
    pub cpu: Duration,
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through the pointer it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Times each query the TUI runs while browsing and comparing, `runs` times each.
pub fn time_queries(store: &Store, runs: usize) -> anyhow::Result<Vec<Timed>> {
    let dataset = store.dataset_id(DATASET)?;
    let direction = store.directions(dataset)?.first().map(|d| d.id).ok_or_else(|| anyhow::anyhow!("no direction"))?;
    let (total, first) = store.items(&ItemQuery { direction_id: direction, limit: 1, ..Default::default() })?;
    let item = first.first().map(|r| r.id).ok_or_else(|| anyhow::anyhow!("no items"))?;
    let page = |offset: i64| ItemQuery { direction_id: direction, offset, limit: 200, ..Default::default() };
    let other = store.directions(dataset)?.get(1).map(|d| d.id);
    let search = |text: &str| Request::Items(ItemQuery { search: text.into(), ..page(0) });
    let (hits, _) = store.items(&ItemQuery { search: "tasty".into(), ..page(0) })?;
    let by_metric = store::ItemOrder::Metric {
        metric: "length-ratio".into(),
        config: store::config_hash("length-ratio", &json!({"unit": "words"})),
        descending: false,
    };
    let system = store.systems(Some(dataset))?.first().map(|s| s.id).ok_or_else(|| anyhow::anyhow!("no systems"))?;
    let mut cases: Vec<(String, Request)> = vec![
        ("datasets (with counts)".into(), Request::Datasets),
        ("directions (with counts)".into(), Request::Directions(dataset)),
        ("items: first page of 200".into(), Request::Items(page(0))),
        ("items: middle page".into(), Request::Items(page(total / 2))),
        ("items: last page".into(), Request::Items(page((total - 200).max(0)))),
        ("items: sort by length".into(), Request::Items(ItemQuery { sort: ItemSort::SourceLength, ..page(0) })),
        ("items: sort by outputs".into(), Request::Items(ItemQuery { sort: ItemSort::Outputs, ..page(0) })),
        ("items: sort by references".into(), Request::Items(ItemQuery { sort: ItemSort::References, ..page(0) })),
        ("items: filter copied".into(), Request::Items(ItemQuery { filter: ItemFilter::WithCopies, ..page(0) })),
        ("items: search 'tasty'".into(), search("tasty")),
        ("items: search (no match)".into(), search("zzqx")),
        ("items: search prefix 'tast'".into(), search("tast")),
        ("items: search prefix 'ta'".into(), search("ta")),
        ("items: search 't' (1 char)".into(), search("t")),
        ("items: search, sort by outputs".into(), Request::Items(ItemQuery { search: "tasty".into(), sort: ItemSort::Outputs, ..page(0) })),
        ("items: search, last page".into(), Request::Items(ItemQuery { search: "tasty".into(), ..page((hits - 200).max(0)) })),
        ("items: order by a metric (mean)".into(), Request::Items(ItemQuery { order: Some(by_metric.clone()), ..page(0) })),
        ("items: order by a metric, last page".into(), Request::Items(ItemQuery { order: Some(by_metric.clone()), ..page((total - 200).max(0)) })),
        ("items: one system, by its metric".into(), Request::Items(ItemQuery { order: Some(by_metric), system_id: Some(system), ..page(0) })),
        ("items: one system's items".into(), Request::Items(ItemQuery { system_id: Some(system), ..page(0) })),
        ("items: search every direction".into(), Request::Items(ItemQuery { search: "tasty".into(), across: Some(dataset), ..page(0) })),
        ("order choices (metrics, systems)".into(), Request::OrderChoices(direction)),
        ("compare: item detail".into(), Request::Detail(item)),
        ("compare: next item".into(), Request::Neighbour { item_id: item, forward: true }),
    ];
    if let Some(other) = other {
        cases.insert(2, ("items: other direction".into(), Request::Items(ItemQuery { direction_id: other, ..page(0) })));
    }
    // Round by round over every case, so that no run finds the list the run before it read
    // (the store keeps the last searched list: a page of it again is not what a key costs).
    let (mut times, mut cpu) = (vec![Vec::new(); cases.len()], vec![Vec::new(); cases.len()]);
    for _ in 0..runs.max(1) {
        for (i, (name, req)) in cases.iter().enumerate() {
            let (t, c) = (Instant::now(), thread_cpu());
            answer(store, req).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
            times[i].push(t.elapsed());
            cpu[i].push(thread_cpu().saturating_sub(c));
        }
    }
    let mut out = Vec::new();
    for (((name, _), mut times), mut cpu) in cases.into_iter().zip(times).zip(cpu) {
        times.sort();
        cpu.sort();
        out.push(Timed { name, median: times[times.len() / 2], max: times[times.len() - 1], cpu: cpu[cpu.len() / 2] });
    }
    Ok(out)
}

/// One step of `ui_timings`: time on the UI thread (key handling and a frame), and until the
/// loader's answer is on screen.
#[derive(Debug, Clone)]
pub struct Step {
    pub keys: String,
    pub ui: Duration,
    pub shown: Duration,
}

/// Drives the real app (threaded loader, 160x45 frame) over the store at `path`: browse to the
/// bench items, jump to the end, page, search, open Compare, next item.
pub fn ui_timings(path: &Path) -> anyhow::Result<Vec<Step>> {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut app = App::new(Loader::spawn(path)?, Jobs::new(), path);
    let mut term = Terminal::new(TestBackend::new(160, 45))?;
    let wait = Duration::from_secs(60);
    let mut steps = Vec::new();
    let mut step = |app: &mut App, name: &str, keys: &[KeyCode]| -> anyhow::Result<()> {
        let t = Instant::now();
        if keys.is_empty() {
            app.start();
        }
        for k in keys {
            app.key(KeyEvent::new(*k, KeyModifiers::NONE));
        }
        term.draw(|f| app.draw(f))?;
        let ui = t.elapsed();
        anyhow::ensure!(app.settle(wait), "no answer within {wait:?}");
        term.draw(|f| app.draw(f))?;
        anyhow::ensure!(app.settle(wait), "no answer within {wait:?}");
        steps.push(Step { keys: name.into(), ui, shown: t.elapsed() });
        Ok(())
    };
    step(&mut app, "start", &[])?;
    let bench = app.screen::<Browse>().datasets.iter().position(|d| d.name == DATASET);
    let down = vec![KeyCode::Down; bench.ok_or_else(|| anyhow::anyhow!("no dataset {DATASET}"))?];
    step(&mut app, "select dataset", &down)?;
    step(&mut app, "Right (directions)", &[KeyCode::Right])?;
    if app.screen::<Browse>().directions.len() > 1 {
        step(&mut app, "Down (select direction)", &[KeyCode::Down])?;
        step(&mut app, "Up (select direction)", &[KeyCode::Up])?;
    }
    step(&mut app, "Right (items)", &[KeyCode::Right])?;
    step(&mut app, "End", &[KeyCode::End])?;
    step(&mut app, "PgUp", &[KeyCode::PageUp])?;
    step(&mut app, "Home", &[KeyCode::Home])?;
    step(&mut app, "s (sort by length)", &[KeyCode::Char('s')])?;
    step(&mut app, "s (sort by outputs)", &[KeyCode::Char('s')])?;
    step(&mut app, "s (sort by references)", &[KeyCode::Char('s')])?;
    step(&mut app, "s (sort by index)", &[KeyCode::Char('s')])?;
    step(&mut app, "f f f (filter copied)", &[KeyCode::Char('f'); 3])?;
    step(&mut app, "f (filter all)", &[KeyCode::Char('f')])?;
    step(&mut app, "o (order by the metric)", &[KeyCode::Char('o')])?;
    step(&mut app, "O (flip: best first)", &[KeyCode::Char('O')])?;
    step(&mut app, "End (ordered)", &[KeyCode::End])?;
    step(&mut app, "Home (ordered)", &[KeyCode::Home])?;
    step(&mut app, "F (one system, ordered)", &[KeyCode::Char('F')])?;
    step(&mut app, "F (the next system)", &[KeyCode::Char('F')])?;
    step(&mut app, "o (order off)", &[KeyCode::Char('o')])?;
    let systems = app.screen::<Browse>().systems_left();
    step(&mut app, "F ... (every item again)", &vec![KeyCode::Char('F'); systems])?;
    let typed = |text: &str| -> Vec<KeyCode> { text.chars().map(KeyCode::Char).collect() };
    step(&mut app, "/zzqx (no match)", &typed("/zzqx"))?;
    step(&mut app, "Esc (clear search)", &[KeyCode::Esc])?;
    // Typed one key at a time: each prefix is searched.
    step(&mut app, "/t (typed: 1 char)", &typed("/t"))?;
    step(&mut app, "a (typed: /ta)", &typed("a"))?;
    step(&mut app, "s (typed: /tas)", &typed("s"))?;
    step(&mut app, "t (typed: /tast)", &typed("t"))?;
    step(&mut app, "Esc (clear search)", &[KeyCode::Esc])?;
    step(&mut app, "/tasty (typed at once)", &typed("/tasty"))?;
    step(&mut app, "Enter Enter (compare)", &[KeyCode::Enter, KeyCode::Enter])?;
    step(&mut app, "n (next item)", &[KeyCode::Char('n')])?;
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_asked_number_of_outputs() {
        let mut store = Store::open_in_memory().unwrap();
        let b = build(&mut store, 95, 10).unwrap();
        assert_eq!(b, Built { items: 11, outputs: 95 });
        let ds = store.datasets().unwrap();
        assert_eq!((ds[0].items, ds[0].outputs, ds[0].systems, ds[0].directions), (11, 95, 10, 2));
        let t = time_queries(&store, 1).unwrap();
        assert_eq!(t.len(), 25);
    }
}
