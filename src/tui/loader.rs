//! Store queries off the UI thread. A loader thread opens its own `Store` on the same file and
//! answers requests over channels. Each request has a topic; only the newest request of a topic
//! matters: the thread skips queued older ones and `try_recv` drops stale answers.
//!
//! `Loader::inline` answers on the caller's thread (tests, in-memory stores): same requests and
//! replies, deterministic.
//!
//! The loader thread also watches the store: about once a second (between requests) it reads
//! `PRAGMA data_version`, which changes when another connection (another process, a job, a
//! writer thread) commits, and counts the changes in [`Loader::store_version`].

use crate::human::campaign::{self, CampaignSummary};
use crate::human::results::{self, Disagreement, Results};
use crate::stats::bootstrap::BootstrapSpec;
use crate::stats::corr::CorrKind;
use crate::analysis::bars::{bars_data, BarsData, Source};
use crate::analysis::data::MetricKey;
use crate::analysis::figure_list::{figure_list, FigureKind, FigureList};
use crate::analysis::loaded::{self, Column, Loaded, Settings};
use crate::analysis::matrix::Against;
use crate::analysis::meta::MetaReport;
use crate::analysis::joint_table::JointTable;
use crate::analysis::tradeoff::TradeoffData;
use crate::metrics::joint::PplPooling;
use crate::store::{DatasetSummary, DirectionSummary, ItemDetail, ItemQuery, ItemRow, OrderChoices, Store};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// How often the loader thread looks for changes other connections made to the store.
pub const WATCH: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Datasets,
    Directions(i64),
    Items(ItemQuery),
    Detail(i64),
    /// The item after (or before) this one, with its detail.
    Neighbour { item_id: i64, forward: bool },
    /// The details of several items (the items tagged for a case study), in this order.
    Details(Vec<i64>),
    /// Where item number `idx` stands in a list (Browse's `:`).
    ItemAt { query: ItemQuery, idx: i64 },
    /// What a direction's items can be ordered by and narrowed to (Browse's `o`, `F`).
    OrderChoices(i64),
    /// Every campaign with its annotators' progress.
    Campaigns,
    /// What a new campaign can be made on: datasets, their directions and systems.
    CampaignChoices,
    /// A campaign's results (bootstrap resamples) and training disagreements.
    Results { campaign: String, resamples: usize },
    /// The Analysis screen's heatmap of a dataset (`None`: the screen's default dataset).
    Matrix { dataset: Option<String>, against: Against, method: CorrKind, settings: Box<Settings> },
    /// One heatmap cell with bootstrap intervals.
    Cell(Box<CellQuery>),
    /// Trade-off points of two metrics.
    Tradeoff { dataset: String, x: Box<MetricKey>, y: Box<MetricKey> },
    /// The result tables of a dataset (`None`: the first dataset with outputs) with a BLEU
    /// convention (`None`: as stored) and a PPL pooling (`None`: the best the scores allow),
    /// each system tested against `baseline` when one is given (paired bootstrap, sacreBLEU's
    /// defaults).
    ScoreTable { dataset: Option<String>, bleu: Option<String>, ppl_pooling: Option<PplPooling>, baseline: Option<String> },
    /// The Figures view's list for a dataset (`None`: the first with outputs).
    Figures { dataset: Option<String> },
    /// One figure's bars (a metric or an aspect over systems), in a direction or all.
    Bars(Box<BarsQuery>),
}

/// The bars a `Request::Bars` asks for (echoed in the reply).
#[derive(Debug, Clone, PartialEq)]
pub struct BarsQuery {
    pub dataset: String,
    pub figure: FigureKind,
    /// `None`: every direction pooled.
    pub direction: Option<i64>,
    /// Judgments of this campaign only (`None`: every campaign that judged the dataset).
    pub campaign: Option<String>,
}

/// The cell a `Request::Cell` asks about (echoed in the reply).
#[derive(Debug, Clone, PartialEq)]
pub struct CellQuery {
    pub dataset: String,
    pub metric: MetricKey,
    pub column: Column,
    pub method: CorrKind,
    pub bootstrap: BootstrapSpec,
    pub settings: Settings,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    Datasets,
    Directions,
    Items,
    OrderChoices,
    Detail,
    Details,
    Campaigns,
    CampaignChoices,
    Results,
    Matrix,
    Cell,
    Tradeoff,
    ScoreTable,
    Figures,
    Bars,
}

const TOPICS: usize = 15;

impl Request {
    pub fn topic(&self) -> Topic {
        match self {
            Request::Datasets => Topic::Datasets,
            Request::Directions(_) => Topic::Directions,
            Request::Items(_) | Request::ItemAt { .. } => Topic::Items,
            Request::OrderChoices(_) => Topic::OrderChoices,
            Request::Detail(_) | Request::Neighbour { .. } => Topic::Detail,
            Request::Details(_) => Topic::Details,
            Request::Campaigns => Topic::Campaigns,
            Request::CampaignChoices => Topic::CampaignChoices,
            Request::Results { .. } => Topic::Results,
            Request::Matrix { .. } => Topic::Matrix,
            Request::Cell(_) => Topic::Cell,
            Request::Tradeoff { .. } => Topic::Tradeoff,
            Request::ScoreTable { .. } => Topic::ScoreTable,
            Request::Figures { .. } => Topic::Figures,
            Request::Bars(_) => Topic::Bars,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Datasets(Vec<DatasetSummary>),
    Directions { dataset_id: i64, directions: Vec<DirectionSummary> },
    Items { query: ItemQuery, total: i64, rows: Vec<ItemRow> },
    /// `None`: no neighbour in that direction.
    Detail(Option<ItemDetail>),
    /// The answer to `Request::ItemAt`: the item's place in the list, if it is in it.
    ItemAt { query: ItemQuery, idx: i64, position: Option<i64> },
    /// The details a `Request::Details` asked for.
    Details(Vec<ItemDetail>),
    OrderChoices(OrderChoices),
    Campaigns(Vec<CampaignSummary>),
    CampaignChoices(Vec<campaign::DatasetChoice>),
    Results(Box<(Results, Vec<Disagreement>)>),
    Matrix(Box<Loaded>),
    Cell { query: Box<CellQuery>, report: Box<MetaReport> },
    /// Trade-off points and Joint per system and direction.
    Tradeoff(Box<(TradeoffData, JointTable)>),
    /// The datasets with outputs, the dataset shown, its tables (one per direction).
    ScoreTable(Box<(Vec<String>, String, Vec<crate::score::table::Table>)>),
    Figures(Box<FigureList>),
    Bars(Box<(BarsQuery, BarsData)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub id: u64,
    pub topic: Topic,
    /// Time the query took on the loader.
    pub took: Duration,
    pub result: Result<Reply, String>,
}

/// Runs one request on `store`.
pub fn answer(store: &Store, req: &Request) -> Result<Reply, String> {
    let r = match req {
        Request::Datasets => store.datasets().map(Reply::Datasets),
        Request::Directions(d) => store
            .directions(*d)
            .map(|directions| Reply::Directions { dataset_id: *d, directions }),
        Request::Items(q) => store.items(q).map(|(total, rows)| Reply::Items { query: q.clone(), total, rows }),
        Request::Detail(id) => store.item_detail(*id).map(|d| Reply::Detail(Some(d))),
        Request::Neighbour { item_id, forward } => match store.neighbour_item(*item_id, *forward) {
            Ok(Some(id)) => store.item_detail(id).map(|d| Reply::Detail(Some(d))),
            Ok(None) => Ok(Reply::Detail(None)),
            Err(e) => Err(e),
        },
        Request::ItemAt { query, idx } => {
            store.item_position(query, *idx).map(|position| Reply::ItemAt { query: query.clone(), idx: *idx, position })
        }
        Request::OrderChoices(d) => store.order_choices(*d).map(Reply::OrderChoices),
        Request::Details(ids) => ids.iter().map(|id| store.item_detail(*id)).collect::<Result<_, _>>().map(Reply::Details),
        Request::Campaigns => return campaign::list(store).map(Reply::Campaigns).map_err(|e| e.to_string()),
        Request::CampaignChoices => return campaign::choices(store).map(Reply::CampaignChoices).map_err(|e| e.to_string()),
        Request::Results { campaign, resamples } => {
            return results::compute(store, campaign, Some(*resamples))
                .and_then(|r| Ok((r, results::disagreements(store, campaign)?)))
                .map(|both| Reply::Results(Box::new(both)))
                .map_err(|e| e.to_string());
        }
        Request::Matrix { dataset, against, method, settings } => {
            return loaded::load(store, dataset.as_deref(), *against, *method, settings)
                .map(|l| Reply::Matrix(Box::new(l)))
                .map_err(|e| e.to_string());
        }
        Request::Cell(q) => {
            return loaded::cell_report(store, &q.dataset, &q.metric, &q.column, q.method, q.bootstrap, &q.settings)
                .map(|r| Reply::Cell { query: q.clone(), report: Box::new(r) })
                .map_err(|e| e.to_string());
        }
        Request::ScoreTable { dataset, bleu, ppl_pooling, baseline } => {
            return score_tables(store, dataset.as_deref(), bleu.as_deref(), *ppl_pooling, baseline.as_deref()).map_err(|e| format!("{e:#}"));
        }
        Request::Tradeoff { dataset, x, y } => {
            return loaded::tradeoff(store, dataset, x, y).map(|t| Reply::Tradeoff(Box::new(t))).map_err(|e| e.to_string());
        }
        Request::Figures { dataset } => {
            return figure_list(store, dataset.as_deref()).map(|l| Reply::Figures(Box::new(l))).map_err(|e| e.to_string());
        }
        Request::Bars(q) => return bars(store, q).map(|d| Reply::Bars(Box::new((*q.clone(), d)))).map_err(|e| e.to_string()),
    };
    r.map_err(|e| e.to_string())
}

/// A figure's bars: 1000 resamples, seed 0, human systems left out (as `tstlab plot bars`).
fn bars(store: &Store, q: &BarsQuery) -> crate::analysis::data::Result<BarsData> {
    let names = crate::analysis::data::Names::load(store, &q.dataset)?;
    let spec = BootstrapSpec::new(crate::stats::bootstrap::DEFAULT_RESAMPLES, 0);
    let source = match &q.figure {
        FigureKind::MetricBars(k) => Source::Metric(k, crate::analysis::orient::known(&k.metric)),
        FigureKind::AspectBars(a) => Source::Human { aspect: a, campaign: q.campaign.as_deref() },
        FigureKind::Map { .. } => return Err(crate::analysis::data::Error::Invalid("a map has no bars".into())),
    };
    bars_data(store, &names, source, q.direction, spec, false).map_err(|e| match e {
        crate::analysis::data::Error::MixedCampaigns { aspect } => crate::analysis::data::Error::Invalid(format!(
            "{aspect:?} is judged by rank and by score campaigns, which cannot be averaged together: choose one campaign with a in Analysis"
        )),
        e => e,
    })
}

fn score_tables(store: &Store, dataset: Option<&str>, bleu: Option<&str>, ppl_pooling: Option<PplPooling>, baseline: Option<&str>) -> anyhow::Result<Reply> {
    let names: Vec<String> = store.datasets()?.into_iter().filter(|d| d.outputs > 0).map(|d| d.name).collect();
    // A dataset without outputs has no table: the first with outputs instead.
    let Some(name) = dataset.filter(|d| names.iter().any(|n| n == d)).map(str::to_owned).or_else(|| names.first().cloned()) else {
        return Ok(Reply::ScoreTable(Box::new((names, String::new(), Vec::new()))));
    };
    let bleu = bleu.map(crate::metrics::family::Convention::parse).transpose()?;
    let mut tables = crate::score::table::build_all_with(store, &name, None, &crate::score::table::Options { bleu, ppl_pooling })?;
    if let Some(b) = baseline {
        use crate::analysis::significance::{Test, TestSpec};
        let opts = crate::score::table_sig::SigOptions { baseline: b.to_owned(), spec: TestSpec::new(Test::Bs), alpha: 0.05 };
        // A direction without the baseline system stays untested.
        for t in &mut tables {
            t.significance = crate::score::table_sig::significance(store, t, &opts).ok();
        }
    }
    Ok(Reply::ScoreTable(Box::new((names, name, tables))))
}

fn respond(store: &Store, id: u64, req: &Request) -> Response {
    let start = Instant::now();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| answer(store, req)))
        .unwrap_or_else(|_| Err("the query panicked".into()));
    Response { id, topic: req.topic(), took: start.elapsed(), result }
}

enum Backend {
    /// `changes`: how many changes by other connections the thread has seen.
    Thread { tx: Sender<(u64, Request)>, rx: Receiver<Response>, changes: Arc<AtomicU64> },
    /// `seen`: the store's `data_version` when last asked.
    Inline { store: Box<Store>, seen: Option<i64>, changes: u64 },
}

/// The store's `PRAGMA data_version`: it changes when another connection commits.
fn data_version(store: &Store) -> Option<i64> {
    store.data_version()
}

/// The UI's handle on the loader.
pub struct Loader {
    backend: Backend,
    /// Answers made on this thread (inline mode, or errors when the thread is gone).
    ready: VecDeque<Response>,
    next_id: u64,
    /// Newest request id per topic, and the newest answered.
    latest: [u64; TOPICS],
    answered: [u64; TOPICS],
}

impl Loader {
    /// Starts a loader thread with its own connection to the store at `path`.
    pub fn spawn(path: &Path) -> crate::store::Result<Loader> {
        let store = Store::open(path)?;
        let (tx, req_rx) = mpsc::channel::<(u64, Request)>();
        let (resp_tx, rx) = mpsc::channel();
        let changes = Arc::new(AtomicU64::new(0));
        let seen = changes.clone();
        std::thread::Builder::new()
            .name("loader".into())
            .spawn(move || serve(store, req_rx, resp_tx, &seen))
            .expect("cannot start the loader thread");
        Ok(Self::with(Backend::Thread { tx, rx, changes }))
    }

    /// Answers requests on the calling thread, queued for `try_recv`.
    pub fn inline(store: Store) -> Loader {
        let seen = data_version(&store);
        Self::with(Backend::Inline { store: Box::new(store), seen, changes: 0 })
    }

    /// How many times other connections changed the store so far, as far as the loader saw:
    /// when it grows, what the screens show may be out of date. The loader thread looks about
    /// every [`WATCH`]; inline, the store is asked now.
    pub fn store_version(&mut self) -> u64 {
        match &mut self.backend {
            Backend::Thread { changes, .. } => changes.load(Ordering::SeqCst),
            Backend::Inline { store, seen, changes } => {
                let now = data_version(store);
                if now != *seen {
                    *seen = now;
                    *changes += 1;
                }
                *changes
            }
        }
    }

    fn with(backend: Backend) -> Loader {
        Loader { backend, ready: VecDeque::new(), next_id: 0, latest: [0; TOPICS], answered: [0; TOPICS] }
    }

    /// Sends a request; any earlier request of the same topic becomes stale.
    pub fn request(&mut self, req: Request) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.latest[req.topic() as usize] = id;
        match &mut self.backend {
            Backend::Thread { tx, .. } => {
                if tx.send((id, req.clone())).is_err() {
                    // The thread is gone: answer with an error rather than wait forever.
                    let result = Err("the loader thread stopped".into());
                    self.ready.push_back(Response { id, topic: req.topic(), took: Duration::ZERO, result });
                }
            }
            Backend::Inline { store, .. } => self.ready.push_back(respond(store, id, &req)),
        }
        id
    }

    /// The next fresh response, if one is ready; stale ones are dropped.
    pub fn try_recv(&mut self) -> Option<Response> {
        loop {
            let r = match (self.ready.pop_front(), &self.backend) {
                (Some(r), _) => r,
                (None, Backend::Thread { rx, .. }) => rx.try_recv().ok()?,
                (None, Backend::Inline { .. }) => return None,
            };
            if let Some(r) = self.accept(r) {
                return Some(r);
            }
        }
    }

    /// Waits up to `timeout` for the next fresh response.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<Response> {
        let end = Instant::now() + timeout;
        loop {
            let r = match (self.ready.pop_front(), &self.backend) {
                (Some(r), _) => r,
                (None, Backend::Thread { rx, .. }) => {
                    rx.recv_timeout(end.saturating_duration_since(Instant::now())).ok()?
                }
                (None, Backend::Inline { .. }) => return None,
            };
            if let Some(r) = self.accept(r) {
                return Some(r);
            }
        }
    }

    fn accept(&mut self, r: Response) -> Option<Response> {
        let t = r.topic as usize;
        if r.id != self.latest[t] {
            return None;
        }
        self.answered[t] = r.id;
        Some(r)
    }

    /// True while the newest request of `topic` has no answer yet.
    pub fn busy(&self, topic: Topic) -> bool {
        self.latest[topic as usize] != self.answered[topic as usize]
    }

    /// True while any topic waits for an answer.
    pub fn pending(&self) -> bool {
        (0..TOPICS).any(|t| self.latest[t] != self.answered[t])
    }
}

/// The loader thread: answers the newest request of each topic, skipping older queued ones,
/// and between requests counts the changes other connections made to the store in `changes`.
fn serve(store: Store, rx: Receiver<(u64, Request)>, tx: Sender<Response>, changes: &AtomicU64) {
    let mut seen = data_version(&store);
    let mut looked = Instant::now();
    loop {
        let first = match rx.recv_timeout(WATCH.saturating_sub(looked.elapsed())) {
            Ok(first) => Some(first),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        if looked.elapsed() >= WATCH {
            looked = Instant::now();
            let now = data_version(&store);
            if now != seen {
                seen = now;
                changes.fetch_add(1, Ordering::SeqCst);
            }
        }
        let Some(first) = first else { continue };
        let mut batch = vec![first];
        batch.extend(rx.try_iter());
        let mut newest: Vec<(u64, Request)> = Vec::new();
        for (id, req) in batch {
            newest.retain(|(_, r)| r.topic() != req.topic());
            newest.push((id, req));
        }
        for (id, req) in newest {
            if tx.send(respond(&store, id, &req)).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo_file() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        crate::demo::build(&mut Store::open(&path).unwrap()).unwrap();
        (dir, path)
    }

    #[test]
    fn thread_answers_and_drops_stale() {
        let (_dir, path) = demo_file();
        let mut l = Loader::spawn(&path).unwrap();
        let first = l.request(Request::Datasets);
        let second = l.request(Request::Datasets);
        assert!(l.busy(Topic::Datasets));
        let r = l.recv_timeout(Duration::from_secs(10)).expect("an answer");
        assert_eq!(r.id, second, "the answer to {first} is stale");
        let Ok(Reply::Datasets(ds)) = r.result else { panic!("{r:?}") };
        assert_eq!(ds.len(), 2);
        assert!(!l.pending());
        // Nothing else arrives: the stale answer (if the thread made one) was dropped.
        assert!(l.recv_timeout(Duration::from_millis(50)).is_none());
    }

    /// A commit by another connection is counted within about [`WATCH`]; reads are not.
    #[test]
    fn thread_sees_other_connections_change_the_store() {
        let (_dir, path) = demo_file();
        let mut l = Loader::spawn(&path).unwrap();
        l.request(Request::Datasets);
        assert!(l.recv_timeout(Duration::from_secs(10)).is_some());
        std::thread::sleep(WATCH * 3);
        let before = l.store_version();
        let other = Store::open(&path).unwrap();
        other.datasets().unwrap();
        std::thread::sleep(WATCH * 3);
        assert_eq!(l.store_version(), before, "a read changes nothing");
        // Another program's connection to the same file.
        let db = rusqlite::Connection::open(other.path()).unwrap();
        db.execute("UPDATE datasets SET name = name || '-x' WHERE id = (SELECT MIN(id) FROM datasets)", []).unwrap();
        let end = Instant::now() + Duration::from_secs(10);
        while l.store_version() == before {
            assert!(Instant::now() < end, "the change was never seen");
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut inline = Loader::inline(Store::open(&path).unwrap());
        let v = inline.store_version();
        assert_eq!(inline.store_version(), v);
        db.execute("UPDATE datasets SET name = name || '-y' WHERE id = (SELECT MIN(id) FROM datasets)", []).unwrap();
        assert_eq!(inline.store_version(), v + 1);
    }

    #[test]
    fn inline_answers_every_topic() {
        let mut store = Store::open_in_memory().unwrap();
        crate::demo::build(&mut store).unwrap();
        let mut l = Loader::inline(store);
        l.request(Request::Datasets);
        let Some(Response { result: Ok(Reply::Datasets(ds)), .. }) = l.try_recv() else { panic!() };
        l.request(Request::Directions(ds[0].id));
        let Some(Response { result: Ok(Reply::Directions { directions, .. }), .. }) = l.try_recv() else {
            panic!()
        };
        let q = ItemQuery { direction_id: directions[0].id, limit: 5, ..Default::default() };
        l.request(Request::Items(q.clone()));
        l.request(Request::Items(ItemQuery { offset: 5, ..q }));
        let r = l.try_recv().unwrap();
        let Ok(Reply::Items { query, rows, .. }) = r.result else { panic!() };
        assert_eq!((query.offset, rows.len()), (5, 5), "only the newest page is delivered");
        assert!(l.try_recv().is_none());
        l.request(Request::Neighbour { item_id: rows[0].id, forward: false });
        let Some(Response { result: Ok(Reply::Detail(Some(d))), .. }) = l.try_recv() else { panic!() };
        assert_eq!(d.idx, 5);
        l.request(Request::Detail(-1));
        assert!(l.try_recv().unwrap().result.is_err());
    }
}
