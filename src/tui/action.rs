//! The one action type: keys map to actions through `keys.rs`; loader answers and timers
//! arrive as actions too. Screens handle actions and may answer with a follow-up action.
//! [`ScreenId`] names a screen (what `Action::Go` shows, a screen's key context).

use super::loader::Response;

/// A screen, by the name on its tab. The screens that keys or other screens name are listed
/// here; a screen nothing else names may keep its id in its own file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScreenId(pub &'static str);

impl ScreenId {
    pub const BROWSE: ScreenId = ScreenId("Browse");
    pub const COMPARE: ScreenId = ScreenId("Compare");
    pub const JOBS: ScreenId = ScreenId("Jobs");
    pub const IMPORT: ScreenId = ScreenId("Import");
    pub const CAMPAIGNS: ScreenId = ScreenId("Campaigns");
    /// Reached from Campaigns (or `tstlab annotate`), not a tab of its own.
    pub const ANNOTATE: ScreenId = ScreenId("Annotate");
    /// Reached from Campaigns, not a tab of its own.
    pub const RESULTS: ScreenId = ScreenId("Results");
    pub const ANALYSIS: ScreenId = ScreenId("Analysis");
    pub const SCORES: ScreenId = ScreenId("Scores");
    /// Reached from Analysis, not a tab of its own.
    pub const FIGURES: ScreenId = ScreenId("Figures");

    pub fn name(self) -> &'static str {
        self.0
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Quit,
    Help,
    /// Close an overlay, stop typing, or go back a level.
    Back,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Left,
    Right,
    /// Next pane or field.
    NextPane,
    /// Enter: open the selection.
    Open,
    /// Show a screen.
    Go(ScreenId),
    Search,
    /// Browse: type an item's number and go to it in the list.
    GoToItem,
    CycleFilter,
    CycleSort,
    /// Browse: order the items by the next stored metric, then by each campaign's annotator
    /// disagreement, then by their columns again; flip that order (worst or best first).
    CycleOrder,
    FlipOrder,
    /// Browse: only the items of the next system (its outputs), then every item again.
    CycleSystem,
    /// Browse: search this direction or every direction of the dataset.
    ToggleScope,
    /// Scores: the selected system's worst outputs under the selected column, in Browse.
    WorstOutputs,
    /// Open Browse on a dataset direction, narrowed to a system, ordered worst first by a metric.
    BrowseWorst(Box<WorstAt>),
    /// Reload what the screen shows from the store.
    Refresh,
    /// Show the latest status line messages, whole.
    Messages,
    /// Mouse capture on or off.
    ToggleMouse,
    NextItem,
    PrevItem,
    HideSystem,
    PinSystem,
    ShowHidden,
    ToggleRemoved,
    CancelJob,
    /// Compare: write the case study of the tagged items, or of the open one when none is
    /// tagged (Markdown and LaTeX).
    WriteCase,
    /// Compare: tag or untag the open item for the case study; untag every item.
    TagItem,
    UntagAll,
    /// Analysis: next dataset, direction (or overall), level, correlation method.
    CycleDataset,
    CyclePart,
    CycleLevel,
    CycleMethod,
    /// Analysis: columns are human aspects, or metrics (metric x metric).
    ToggleColumns,
    /// Analysis: heatmap or trade-off chart.
    ToggleView,
    /// Analysis trade-off: next metric on the x or y axis.
    NextX,
    NextY,
    /// Analysis: undefined per-source correlations skipped or counted as 0.
    ToggleUndefined,
    /// Analysis: empty and refused outputs kept or left out.
    ToggleOutputs,
    /// Analysis: human systems (kind human, e.g. the reference `REF`) kept or left out.
    ToggleHumanSystems,
    /// Analysis: the campaign whose judgments are analysed (every one, then each in turn).
    CycleCampaign,
    /// Analysis: the selected cell's details in full, or the trade-off's system names in full.
    ToggleDetails,
    /// Scores: next baseline for the significance markers (then none).
    NextBaseline,
    /// Typing into a text field.
    Char(char),
    Backspace,
    /// Delete the character at the cursor, or the word before it (the launch form's fields).
    DeleteNext,
    DeleteWord,
    /// Empty the text field.
    ClearInput,
    Submit,
    /// A loader answer.
    Loaded(Box<Response>),
    /// Open an item on the Compare screen.
    OpenItem(i64),
    /// A note for the status line (`true`: an error).
    Note(String, bool),
    /// Open the annotate screen on an annotator's queue of a campaign (`join`: join it first).
    OpenAnnotate { campaign: String, annotator: String, join: bool },
    /// Open the results screen of a campaign.
    OpenResults(String),
    /// Results of the selected campaign.
    ViewResults,
    /// Results: scroll wide tables sideways by this many columns.
    Sideways(i32),
    /// Ranking: move the selected output up (better) / down (worse).
    RankUp,
    RankDown,
    /// Ranking: tie the selected output with the one above, or untie it.
    Tie,
    /// Ranking: start typing an ordering.
    TypeOrdering,
    /// Take the shown order as the ranking; on a done aspect, go on to the next unfinished.
    Accept,
    /// A digit key (`keys.rs` puts the digit pressed in).
    Digit(u8),
    /// Change the selected output's score by this much (sliders, Likert).
    Adjust(i32),
    NextAspect,
    NextUnfinished,
    Undo,
    Redo,
    /// Annotate: write or edit the shown item's comment (a one-line field).
    EditComment,
    /// Annotate: the shown item's flag: none → unsure → skip → none.
    CycleFlag,
    Guidelines,
    ToggleDiff,
    /// Scores: score the shown dataset's tstbench metrics as a background job.
    StartScoring,
    /// Scores: write the tables as Markdown, LaTeX and CSV.
    WriteTable,
    /// Figures: write the figure shown as PNG and SVG.
    WriteFigure,
    /// Scores: the next BLEU convention of the BLEU columns (as stored, then each by name).
    CycleBleu,
    /// Scores: the next PPL pooling.
    CyclePool,
    /// Browse or Compare: open the launch form of a local transfer run.
    LaunchTransfer,
    /// The app opens a form (a screen's answer to `LaunchTransfer`, `NewCampaign`, `AddAnnotator`).
    OpenForm(Box<FormAt>),
    /// Campaigns: the form of a new campaign.
    NewCampaign,
    /// Campaigns: an annotator joins the selected campaign (their queue is made).
    AddAnnotator,
    /// Compare: regenerate the selected output of a local run; keep the new one.
    Regenerate,
    KeepRegen,
}

/// A form to open, with what it starts from.
#[derive(Debug, Clone, PartialEq)]
pub enum FormAt {
    /// A transfer run's launch form.
    Launch(LaunchAt),
    /// A new campaign's form: the datasets to choose from, and the one to start on.
    Campaign { datasets: Vec<crate::human::campaign::DatasetChoice>, dataset: Option<String> },
    /// An annotator joining a campaign.
    Annotator { campaign: String },
}

/// Where a transfer run is launched: a direction, and the item shown when launched from Compare.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchAt {
    pub dataset: String,
    /// `source->target`.
    pub direction: String,
    pub direction_id: i64,
    /// The item's id and address.
    pub item: Option<(i64, String)>,
}

/// Where `Action::BrowseWorst` opens Browse.
#[derive(Debug, Clone, PartialEq)]
pub struct WorstAt {
    pub dataset: String,
    /// `source->target`.
    pub direction: String,
    pub system: String,
    /// Metric ids to order by, the first stored in the direction taken (`None`: no order).
    pub metrics: Vec<String>,
    /// The column's name (`ACC`), for the status line.
    pub column: String,
}

impl Action {
    /// The screen an action opens something on: the app shows it and hands it the action
    /// (`Screen::open`).
    pub fn target(&self) -> Option<ScreenId> {
        match self {
            Action::OpenItem(_) => Some(ScreenId::COMPARE),
            Action::OpenAnnotate { .. } => Some(ScreenId::ANNOTATE),
            Action::OpenResults(_) => Some(ScreenId::RESULTS),
            Action::BrowseWorst(_) => Some(ScreenId::BROWSE),
            _ => None,
        }
    }

    /// Whether the action writes to the store on any screen (refused in read-only mode).
    pub fn writes(&self) -> bool {
        matches!(
            self,
            Action::StartScoring
                | Action::LaunchTransfer
                | Action::NewCampaign
                | Action::AddAnnotator
                | Action::Regenerate
                | Action::KeepRegen
                | Action::OpenAnnotate { .. }
        )
    }

    /// The name shown in the help overlay.
    pub fn name(&self) -> String {
        if let Action::Go(s) = self {
            return format!("Go {}", s.name());
        }
        let s = format!("{self:?}");
        s.split('(').next().unwrap_or(&s).to_owned()
    }
}
