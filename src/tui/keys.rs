//! The key table: every binding, with the context it works in and what it does. Key handling
//! and the help overlay both read `BINDINGS`; add a key here and it is documented.

use super::action::{Action, ScreenId};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The mode of a context in which printable keys that are not bound type themselves (a
/// form's text fields), as everywhere in [`Context::Input`].
pub const TYPING: &str = "typing";

/// Where a binding applies. The app looks a key up in a chain of contexts, most specific first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Everywhere, even while typing.
    Any,
    /// On every screen when not typing.
    Main,
    /// On one screen when not typing.
    Screen(ScreenId),
    /// While a form is open (a transfer run, a new campaign, an annotator joining).
    Form,
    /// While typing into a text field (other printable keys type themselves).
    Input,
    /// While the help overlay is open.
    Help,
}

impl Context {
    pub fn name(self) -> String {
        match self {
            Context::Any => "anywhere".into(),
            Context::Main => "screens".into(),
            Context::Screen(id) => id.name().to_lowercase(),
            Context::Form => "form".into(),
            Context::Input => "typing".into(),
            Context::Help => "help".into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
}

const fn k(code: KeyCode) -> Key {
    Key { code, ctrl: false }
}

const fn c(ch: char) -> Key {
    Key { code: KeyCode::Char(ch), ctrl: false }
}

const fn ctrl(ch: char) -> Key {
    Key { code: KeyCode::Char(ch), ctrl: true }
}

impl Key {
    /// Whether a key event is this key. Shift is part of the character (`G`, `?`).
    pub fn matches(&self, e: &KeyEvent) -> bool {
        let ctrl = e.modifiers.contains(KeyModifiers::CONTROL);
        let alt = e.modifiers.contains(KeyModifiers::ALT);
        let code = match e.code {
            // Some terminals send Shift-Tab as BackTab; treat both alike.
            KeyCode::BackTab => KeyCode::Tab,
            other => other,
        };
        !alt && ctrl == self.ctrl && code == self.code
    }

    pub fn label(&self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "Space".to_owned(),
            KeyCode::Char(ch) => ch.to_string(),
            KeyCode::Up => "Up".into(),
            KeyCode::Down => "Down".into(),
            KeyCode::Left => "Left".into(),
            KeyCode::Right => "Right".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::Backspace => "Backspace".into(),
            KeyCode::Delete => "Delete".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        if self.ctrl { format!("Ctrl-{base}") } else { base }
    }
}

pub struct Binding {
    pub context: Context,
    /// The screen modes it works in (`Screen::mode`, e.g. the annotate screen's "rank");
    /// empty: every mode.
    pub modes: &'static [&'static str],
    pub keys: &'static [Key],
    pub action: Action,
    pub desc: &'static str,
    /// Shown in the status line hints when not empty.
    pub hint: &'static str,
}

impl Binding {
    /// The keys, e.g. `Up k`; a run of three or more digits reads `1-9`.
    pub fn key_labels(&self) -> String {
        let digits: Vec<u32> = self.keys.iter().filter_map(|k| match k.code {
            KeyCode::Char(ch) if !k.ctrl => ch.to_digit(10),
            _ => None,
        }).collect();
        if digits.len() == self.keys.len() && digits.len() >= 3 && digits.windows(2).all(|w| w[1] == w[0] + 1) {
            return format!("{}-{}", digits[0], digits[digits.len() - 1]);
        }
        self.keys.iter().map(Key::label).collect::<Vec<_>>().join(" ")
    }

    /// Whether it works in `mode` (`None`: the screen has no modes, every binding works).
    pub fn in_mode(&self, mode: Option<&str>) -> bool {
        match mode {
            Some(m) if !self.modes.is_empty() => self.modes.contains(&m),
            // Text fields are every screen's: a binding of some modes there is for those only.
            None if self.context == Context::Input => self.modes.is_empty(),
            _ => true,
        }
    }
}

use Context::*;
use KeyCode as K;

// The screens with keys of their own.
const BROWSE: Context = Screen(ScreenId::BROWSE);
const COMPARE: Context = Screen(ScreenId::COMPARE);
const JOBS: Context = Screen(ScreenId::JOBS);
const IMPORT: Context = Screen(ScreenId::IMPORT);
const CAMPAIGNS: Context = Screen(ScreenId::CAMPAIGNS);
const ANNOTATE: Context = Screen(ScreenId::ANNOTATE);
const RESULTS: Context = Screen(ScreenId::RESULTS);
const ANALYSIS: Context = Screen(ScreenId::ANALYSIS);
const SCORES: Context = Screen(ScreenId::SCORES);
const FIGURES: Context = Screen(ScreenId::FIGURES);

// The annotate screen's modes (`Screen::mode`).
const RANK: &[&str] = &["rank"];
const LIKERT: &[&str] = &["likert"];
const SLIDER: &[&str] = &["slider"];
const SCALES: &[&str] = &["likert", "slider"];
const RANK_LIKERT: &[&str] = &["rank", "likert"];
/// While the end of the training pass is shown (`screens::annotate::CHECKPOINT`).
const CHECKPOINT: &[&str] = &["checkpoint"];
// The Scores screen's modes.
const TABLE: &[&str] = &["table"];
const MENU: &[&str] = &["menu"];
// The results screen's mode while a table is wider than the screen.
const WIDE: &[&str] = &["wide"];
// A form's modes: on a choice field, in a text field.
const CHOOSE: &[&str] = &["choose"];
const TYPE: &[&str] = &[TYPING];
/// The Import screen's mode while its path field is focused (`screens::import::PATH`).
const PATH: &[&str] = &["path"];
/// Browse's mode while its search is typed.
const SEARCH: &[&str] = &["search"];

/// `bind!(context, [keys], action, description[, hint])`; `bind!(context => MODES, ...)` for
/// keys that work only in some modes of the screen.
macro_rules! bind {
    ($ctx:expr, [$($key:expr),+], $action:expr, $desc:expr) => {
        bind!($ctx => &[], [$($key),+], $action, $desc, "")
    };
    ($ctx:expr, [$($key:expr),+], $action:expr, $desc:expr, $hint:expr) => {
        bind!($ctx => &[], [$($key),+], $action, $desc, $hint)
    };
    ($ctx:expr => $modes:expr, [$($key:expr),+], $action:expr, $desc:expr) => {
        bind!($ctx => $modes, [$($key),+], $action, $desc, "")
    };
    ($ctx:expr => $modes:expr, [$($key:expr),+], $action:expr, $desc:expr, $hint:expr) => {
        Binding { context: $ctx, modes: $modes, keys: &[$($key),+], action: $action, desc: $desc, hint: $hint }
    };
}

/// Every key binding. Within a context the first match wins.
pub static BINDINGS: &[Binding] = &[
    bind!(Any, [ctrl('c')], Action::Quit, "quit tstlab"),
    bind!(Main, [c('q')], Action::Quit, "quit tstlab", "quit"),
    bind!(Main, [c('?')], Action::Help, "show this help", "help"),
    bind!(Main, [c('1')], Action::Go(ScreenId::BROWSE), "Browse screen: datasets, directions, items"),
    bind!(Main, [c('2')], Action::Go(ScreenId::COMPARE), "Compare screen: the last opened item"),
    bind!(Main, [c('3'), c('J')], Action::Go(ScreenId::JOBS), "Jobs screen: background jobs", "jobs"),
    bind!(Main, [c('4'), c('I')], Action::Go(ScreenId::IMPORT), "Import screen: import a file as a job"),
    bind!(Main, [c('5'), c('C')], Action::Go(ScreenId::CAMPAIGNS), "Campaigns screen: campaigns, annotators, results"),
    bind!(Main, [c('6'), c('A')], Action::Go(ScreenId::ANALYSIS), "Analysis screen: metric x human heatmap, trade-off chart"),
    bind!(Main, [c('7'), c('T')], Action::Go(ScreenId::SCORES), "Scores screen: result table per direction (TSTBench layout)"),
    bind!(Main, [k(K::Up), c('k')], Action::Up, "move up"),
    bind!(Main, [k(K::Down), c('j')], Action::Down, "move down"),
    bind!(Main, [k(K::PageUp), ctrl('b')], Action::PageUp, "page up"),
    bind!(Main, [k(K::PageDown), ctrl('f'), c(' ')], Action::PageDown, "page down"),
    bind!(Main, [k(K::Home), c('g')], Action::Top, "go to the first"),
    bind!(Main, [k(K::End), c('G')], Action::Bottom, "go to the last"),
    bind!(Main, [k(K::Left), c('h')], Action::Left, "previous pane"),
    bind!(Main, [k(K::Right), c('l')], Action::Right, "next pane"),
    bind!(Main, [k(K::Tab)], Action::NextPane, "next pane or field"),
    bind!(Main, [k(K::Enter)], Action::Open, "open the selection"),
    bind!(Main, [k(K::Esc)], Action::Back, "go back"),
    bind!(Main, [c('r')], Action::Refresh, "reload from the store"),
    bind!(Main, [c('M')], Action::Messages, "the latest messages of the status line, whole"),
    bind!(Main, [ctrl('o')], Action::ToggleMouse, "mouse on or off (off: the terminal selects text)"),
    bind!(BROWSE, [c('/')], Action::Search, "search sources, references and outputs", "search"),
    bind!(BROWSE, [c('f')], Action::CycleFilter, "cycle the item filter", "filter"),
    bind!(BROWSE, [c('s')], Action::CycleSort, "cycle the item order (after o: back to it)", "sort"),
    bind!(BROWSE, [c('o')], Action::CycleOrder,
        "order by the next stored metric, worst first (of the F system, else the mean over systems), then by each campaign's annotator disagreement (sd), then off", "by score"),
    bind!(BROWSE, [c('O')], Action::FlipOrder, "flip the order by a score: worst or best first (disagreement: most or least)", "flip"),
    bind!(BROWSE, [c('F')], Action::CycleSystem, "only items with an output of the next system (Compare pins it), then every item", "system"),
    bind!(BROWSE, [c('a')], Action::ToggleScope, "search (and list) this direction or every direction of the dataset", "all dirs"),
    bind!(BROWSE, [k(K::Enter)], Action::Open, "open: next level, or the item in Compare", "open"),
    bind!(BROWSE, [c('t')], Action::LaunchTransfer, "launch a local transfer run on the selected direction", "transfer"),
    bind!(BROWSE, [c(':'), c('#')], Action::GoToItem, "go to item N of the direction: type its number, Enter", "item #"),
    bind!(COMPARE, [k(K::Right), c('n')], Action::NextItem, "next item", "next"),
    bind!(COMPARE, [k(K::Left), c('b')], Action::PrevItem, "previous item", "prev"),
    bind!(COMPARE, [c('x')], Action::HideSystem, "hide the selected system", "hide"),
    bind!(COMPARE, [c('p')], Action::PinSystem, "pin (or unpin) the selected system first", "pin"),
    bind!(COMPARE, [c('a')], Action::ShowHidden, "show hidden systems again", "show all"),
    bind!(COMPARE, [c('d')], Action::ToggleRemoved, "show or hide removed source words", "removed"),
    bind!(COMPARE, [c('m')], Action::TagItem, "tag (or untag) this item for the case study", "tag"),
    bind!(COMPARE, [c('u')], Action::UntagAll, "untag every tagged item"),
    bind!(COMPARE, [c('w')], Action::WriteCase, "write the case study of the tagged items (none: this one) as shown, to case-studies/ (.md, .tex)", "case study"),
    bind!(COMPARE, [c('t')], Action::LaunchTransfer, "launch a local transfer run (this item, first N or all)"),
    bind!(COMPARE, [c('e')], Action::Regenerate, "regenerate the selected local output (diff new vs old)", "regenerate"),
    bind!(COMPARE, [c('y')], Action::KeepRegen, "keep the regenerated output in its run", "keep"),
    bind!(COMPARE, [k(K::Enter)], Action::Open, "the selected system's full name, kind and run (status line)"),
    bind!(COMPARE, [k(K::Esc)], Action::Back, "drop a regenerated output, else back to Browse", "back"),
    bind!(ANALYSIS, [k(K::Up), c('k')], Action::Up, "heatmap: row up; trade-off: previous system"),
    bind!(ANALYSIS, [k(K::Down), c('j')], Action::Down, "heatmap: row down; trade-off: next system"),
    bind!(ANALYSIS, [k(K::Left), c('h')], Action::Left, "heatmap: column left"),
    bind!(ANALYSIS, [k(K::Right), c('l')], Action::Right, "heatmap: column right"),
    bind!(ANALYSIS, [c('d')], Action::CyclePart, "next direction, then pooled, then overall", "direction"),
    bind!(ANALYSIS, [c('v')], Action::CycleLevel, "next level: system, pairwise accuracy, sample, dataset", "level"),
    bind!(ANALYSIS, [c('m')], Action::CycleMethod, "next method: Pearson, Spearman, Kendall tau-b, tau-like", "method"),
    bind!(ANALYSIS, [c('c')], Action::ToggleColumns, "columns: human aspects or metrics (metric x metric)", "columns"),
    bind!(ANALYSIS, [c('s')], Action::CycleDataset, "next dataset"),
    bind!(ANALYSIS, [c('a')], Action::CycleCampaign, "campaign of the judgments: every one, then each that judged the dataset", "campaign"),
    bind!(ANALYSIS, [c('i')], Action::ToggleDetails, "heatmap: the selected cell in full; trade-off: system names in full", "details"),
    bind!(ANALYSIS, [c('t')], Action::ToggleView, "heatmap or trade-off chart", "trade-off"),
    bind!(ANALYSIS, [c('x')], Action::NextX, "trade-off: next metric on the x axis (content)"),
    bind!(ANALYSIS, [c('y')], Action::NextY, "trade-off: next metric on the y axis (style strength)"),
    bind!(ANALYSIS, [c('u')], Action::ToggleUndefined, "sample level: undefined correlations skipped or counted as 0"),
    bind!(ANALYSIS, [c('o')], Action::ToggleOutputs, "keep or leave out empty and refused outputs"),
    bind!(ANALYSIS, [c('e')], Action::ToggleHumanSystems, "keep or leave out human systems (kind human, e.g. REF)"),
    bind!(ANALYSIS, [c('f')], Action::Go(ScreenId::FIGURES), "Figures: bars per metric, t-SNE maps; write PNG/SVG", "figures"),
    bind!(ANALYSIS, [k(K::Esc)], Action::Go(ScreenId::BROWSE), "back to Browse"),
    bind!(FIGURES, [k(K::Enter)], Action::Open, "t-SNE map: make it (a background job); bars: reload", "make map"),
    bind!(FIGURES, [c('d')], Action::CyclePart, "next direction (then all directions pooled)", "direction"),
    bind!(FIGURES, [c('s')], Action::CycleDataset, "next dataset", "dataset"),
    bind!(FIGURES, [c('w')], Action::WriteFigure, "write the figure shown as PNG and SVG to figures/ beside the store", "write"),
    bind!(FIGURES, [k(K::Esc)], Action::Go(ScreenId::ANALYSIS), "back to Analysis", "back"),
    bind!(SCORES => TABLE, [k(K::Left), c('h')], Action::Left, "select the previous column"),
    bind!(SCORES => TABLE, [k(K::Right), c('l')], Action::Right, "select the next column"),
    bind!(SCORES => TABLE, [c('s')], Action::CycleSort, "sort by the selected column, best first (again: by system)", "sort"),
    bind!(SCORES => TABLE, [c('d')], Action::CyclePart, "next direction", "direction"),
    bind!(SCORES => TABLE, [c('c')], Action::CycleDataset, "next dataset", "dataset"),
    bind!(SCORES => TABLE, [c('x')], Action::StartScoring, "choose metrics to score this dataset with (a background job)", "score"),
    bind!(SCORES => TABLE, [c('w')], Action::WriteTable, "write the tables to tables/<dataset>.md, .tex, .csv", "write"),
    bind!(SCORES => TABLE, [c('b')], Action::NextBaseline, "next significance baseline († = p < 0.05, paired bootstrap)", "baseline"),
    bind!(SCORES => TABLE, [c('B')], Action::CycleBleu, "BLEU convention: as stored, then each name in turn", "BLEU"),
    bind!(SCORES => TABLE, [c('p')], Action::CyclePool, "PPL pooling: best allowed, corpus-words, -tokens, mean", "PPL pool"),
    bind!(SCORES => TABLE, [k(K::Enter), c('o')], Action::WorstOutputs,
        "the selected system's outputs in Browse, worst first by the selected column (Enter there: Compare)", "worst outputs"),
    bind!(SCORES => TABLE, [k(K::Esc)], Action::Go(ScreenId::BROWSE), "back to Browse"),
    bind!(SCORES => MENU, [c(' ')], Action::Accept, "tick or untick the selected metric", "tick"),
    bind!(SCORES => MENU, [k(K::Enter)], Action::Submit, "score the ticked metrics as a background job", "start"),
    bind!(SCORES => MENU, [k(K::Esc)], Action::Back, "close the menu", "close"),
    bind!(JOBS, [c('c'), k(K::Delete)], Action::CancelJob, "cancel the selected job", "cancel"),
    bind!(IMPORT, [k(K::Enter)], Action::Submit, "start the import", "import"),
    bind!(IMPORT, [k(K::Tab)], Action::NextPane, "next field: format, path, dataset", "next field"),
    bind!(CAMPAIGNS, [k(K::Enter)], Action::Open, "annotators pane; on an annotator: annotate as them", "open"),
    bind!(CAMPAIGNS, [c('v')], Action::ViewResults, "results of the selected campaign", "results"),
    bind!(CAMPAIGNS, [c('s')], Action::CycleSort, "sort the campaigns by the next column (or click a header)", "sort"),
    bind!(CAMPAIGNS, [c('n')], Action::NewCampaign, "make a new campaign (a form: dataset, mode, systems, annotators)", "new"),
    bind!(CAMPAIGNS, [c('+')], Action::AddAnnotator, "an annotator joins the selected campaign (their queue is made)", "join"),
    bind!(ANNOTATE => RANK, [c('K'), c('+')], Action::RankUp, "move the selected output up (better; Enter stores the order)", "better"),
    bind!(ANNOTATE => RANK, [c('J'), c('-')], Action::RankDown, "move the selected output down (worse; Enter stores the order)", "worse"),
    bind!(ANNOTATE => RANK, [c('=')], Action::Tie, "tie the selected output with the one above (again: untie; Enter stores)", "tie"),
    bind!(ANNOTATE => RANK, [c('o')], Action::TypeOrdering, "type an ordering of the labels, e.g. 3>1=2>4", "type"),
    bind!(ANNOTATE => RANK, [c('1'), c('2'), c('3'), c('4'), c('5'), c('6'), c('7'), c('8'), c('9')], Action::Digit(0),
        "start typing an ordering with this label"),
    bind!(ANNOTATE => RANK, [k(K::Enter), c(' ')], Action::Accept, "store the order shown; if stored: next unfinished", "accept"),
    bind!(ANNOTATE => LIKERT, [c('1'), c('2'), c('3'), c('4'), c('5'), c('6'), c('7'), c('8'), c('9')], Action::Digit(0),
        "score the selected output 1-5 (then the next output)", "score"),
    bind!(ANNOTATE => SLIDER, [c('1'), c('2'), c('3'), c('4'), c('5'), c('6'), c('7'), c('8'), c('9')], Action::Digit(0),
        "type the selected output's value, 0-100: stored (then the next output) at two digits, or 100; Enter stores 1-10",
        "value, next at 2 digits"),
    bind!(ANNOTATE => SLIDER, [c('0')], Action::Digit(0), "0: a value of 0 (stored at once), or a value's last digit"),
    bind!(ANNOTATE => LIKERT, [k(K::Enter)], Action::Accept, "every output scored: the next unfinished aspect or item", "next"),
    bind!(ANNOTATE => SLIDER, [k(K::Enter)], Action::Accept,
        "store the value being typed (then the next output); else, every output scored: the next unfinished aspect or item", "next"),
    bind!(ANNOTATE => SCALES, [k(K::Left), c('h')], Action::Adjust(-1), "selected output: one less", "less"),
    bind!(ANNOTATE => SCALES, [k(K::Right), c('l')], Action::Adjust(1), "selected output: one more", "more"),
    bind!(ANNOTATE => SLIDER, [c('['), c('H')], Action::Adjust(-10), "selected output: 10 less"),
    bind!(ANNOTATE => SLIDER, [c(']'), c('L')], Action::Adjust(10), "selected output: 10 more"),
    bind!(ANNOTATE, [k(K::Tab), c('a')], Action::NextAspect, "next aspect (strength, content, fluency ...)", "aspect"),
    bind!(ANNOTATE, [c('n')], Action::NextItem, "next item in the queue", "next"),
    bind!(ANNOTATE, [c('b')], Action::PrevItem, "previous item in the queue", "prev"),
    bind!(ANNOTATE, [c('u')], Action::NextUnfinished, "jump to the next unfinished item and aspect", "unfinished"),
    bind!(ANNOTATE, [c('z'), ctrl('z')], Action::Undo, "undo the last change (any item)", "undo"),
    bind!(ANNOTATE, [c('y'), ctrl('y')], Action::Redo, "redo the last undone change", "redo"),
    bind!(ANNOTATE, [c('c')], Action::EditComment, "write or edit a comment on this item (Enter stores it, Esc cancels; empty: removed)", "comment"),
    bind!(ANNOTATE, [c('f')], Action::CycleFlag, "flag this item: unsure, then skip (done without judgments), then none", "flag"),
    bind!(ANNOTATE, [c('i')], Action::Guidelines, "show or hide the guidelines", "guidelines"),
    bind!(ANNOTATE, [c('d')], Action::ToggleDiff, "word diff against the source on or off"),
    bind!(ANNOTATE => CHECKPOINT, [k(K::Enter)], Action::Accept, "training over: go on to the real items", "real items"),
    bind!(ANNOTATE => CHECKPOINT, [k(K::Esc)], Action::Back, "training over: look back at the training items first", "look back"),
    bind!(ANNOTATE => RANK_LIKERT, [k(K::Esc)], Action::Back, "back to Campaigns (not in tstlab annotate)"),
    bind!(ANNOTATE => SLIDER, [k(K::Esc)], Action::Back, "drop the value being typed; else back to Campaigns (not in tstlab annotate)"),
    bind!(RESULTS, [k(K::Tab), k(K::Right), c('l')], Action::NextPane, "next section", "section"),
    bind!(RESULTS, [k(K::Left), c('h')], Action::Left, "previous section"),
    bind!(RESULTS => WIDE, [c('>'), c('.')], Action::Sideways(8), "more columns of the tables wider than the screen", "columns"),
    bind!(RESULTS => WIDE, [c('<'), c(',')], Action::Sideways(-8), "back towards the tables' first columns"),
    bind!(RESULTS, [k(K::Esc)], Action::Go(ScreenId::CAMPAIGNS), "back to Campaigns", "back"),
    bind!(Form, [k(K::Up)], Action::Up, "previous field"),
    bind!(Form, [k(K::Down), k(K::Tab)], Action::Down, "next field", "field"),
    bind!(Form, [k(K::Enter)], Action::Submit, "start it as a background job (a transfer run: the server's key from TSTLAB_API_KEY or OPENAI_API_KEY)", "start"),
    bind!(Form, [k(K::Esc)], Action::Back, "close the form", "close"),
    bind!(Form => CHOOSE, [c('k')], Action::Up, "previous field"),
    bind!(Form => CHOOSE, [c('j')], Action::Down, "next field"),
    bind!(Form => CHOOSE, [k(K::Left), c('h')], Action::Left, "previous choice", "change"),
    bind!(Form => CHOOSE, [k(K::Right), c('l')], Action::Right, "next choice"),
    bind!(Form => CHOOSE, [c(' ')], Action::Accept, "tick or untick (systems, directions); else the next choice"),
    bind!(Form => CHOOSE, [c('q')], Action::Back, "close the form"),
    bind!(Form => CHOOSE, [c('?'), k(K::F(1))], Action::Help, "show this help", "help"),
    bind!(Form => TYPE, [k(K::F(1))], Action::Help, "show this help (? types itself here)", "help"),
    bind!(Form => TYPE, [k(K::Left)], Action::Left, "cursor one character left"),
    bind!(Form => TYPE, [k(K::Right)], Action::Right, "cursor one character right"),
    bind!(Form => TYPE, [k(K::Home), ctrl('a')], Action::Top, "cursor to the start"),
    bind!(Form => TYPE, [k(K::End), ctrl('e')], Action::Bottom, "cursor to the end"),
    bind!(Form => TYPE, [k(K::Backspace)], Action::Backspace, "delete the character before the cursor", "delete"),
    bind!(Form => TYPE, [k(K::Delete), ctrl('d')], Action::DeleteNext, "delete the character at the cursor"),
    bind!(Form => TYPE, [ctrl('w')], Action::DeleteWord, "delete the word before the cursor"),
    bind!(Form => TYPE, [ctrl('u')], Action::ClearInput, "empty the field (pasting works too)"),
    bind!(Input, [k(K::Enter)], Action::Submit, "finish typing (Import: start the import)"),
    bind!(Input, [k(K::Esc)], Action::Back, "stop typing (search: clear it)"),
    bind!(Input => PATH, [k(K::Tab)], Action::NextPane, "Import's path: complete it as a shell does; nothing left to complete: next field", "complete"),
    bind!(Input => SEARCH, [k(K::Tab)], Action::ToggleScope, "Browse's search: this direction or every direction of the dataset", "scope"),
    bind!(Input, [k(K::Tab)], Action::NextPane, "next field"),
    bind!(Input, [k(K::Backspace)], Action::Backspace, "delete the last character"),
    bind!(Input, [ctrl('u')], Action::ClearInput, "empty the field"),
    bind!(Help, [k(K::Esc), c('?'), c('q')], Action::Back, "close the help", "close"),
    bind!(Help, [k(K::Up), c('k')], Action::Up, "scroll up"),
    bind!(Help, [k(K::Down), c('j')], Action::Down, "scroll down"),
    bind!(Help, [k(K::PageUp)], Action::PageUp, "page up"),
    bind!(Help, [k(K::PageDown), c(' ')], Action::PageDown, "page down"),
    bind!(Help, [k(K::Home), c('g')], Action::Top, "to the top"),
    bind!(Help, [k(K::End), c('G')], Action::Bottom, "to the end"),
];

/// The action bound to `key` in the first context of `chain` that binds it in `mode` (the
/// shown screen's `Screen::mode`).
pub fn lookup(chain: &[Context], mode: Option<&str>, key: &KeyEvent) -> Option<Action> {
    chain.iter().find_map(|ctx| {
        BINDINGS
            .iter()
            .find(|b| b.context == *ctx && b.in_mode(mode) && b.keys.iter().any(|k| k.matches(key)))
            .map(|b| b.action.clone())
    })
}

/// What a key does: a binding, or (while typing) the character itself. A `Digit` binding
/// gets the digit pressed.
pub fn action_for(chain: &[Context], mode: Option<&str>, key: &KeyEvent) -> Option<Action> {
    let found = match (lookup(chain, mode, key), key.code) {
        (Some(Action::Digit(_)), KeyCode::Char(ch)) => ch.to_digit(10).map(|d| Action::Digit(d as u8)),
        (a, _) => a,
    };
    found.or_else(|| match key.code {
        KeyCode::Char(ch)
            if (chain.contains(&Context::Input) || mode == Some(TYPING))
                && !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            Some(Action::Char(ch))
        }
        _ => None,
    })
}

/// The bindings in force in `chain` and `mode`, most specific context first; a key bound in
/// an earlier context hides the same key of a later one.
pub fn in_force(chain: &[Context], mode: Option<&str>) -> Vec<&'static Binding> {
    let mut out: Vec<&'static Binding> = Vec::new();
    for ctx in chain {
        for b in BINDINGS.iter().filter(|b| b.context == *ctx && b.in_mode(mode)) {
            // A binding of some modes listed before one of every mode overrides it there.
            let overrides = |o: &Binding| o.context != b.context || (!o.modes.is_empty() && b.modes.is_empty());
            let hidden = out.iter().any(|o| overrides(o) && b.keys.iter().all(|k| o.keys.contains(k)));
            if !hidden {
                out.push(b);
            }
        }
    }
    out
}

/// `key hint` pairs for the status line, for the contexts of `chain` in `mode`, in table order
/// within a context, the most specific context first.
pub fn hints(chain: &[Context], mode: Option<&str>) -> Vec<(String, &'static str)> {
    in_force(chain, mode).into_iter().filter(|b| !b.hint.is_empty()).map(|b| (b.keys[0].label(), b.hint)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn chain_order_and_typing() {
        let compare = [COMPARE, Main, Any];
        assert_eq!(lookup(&compare, None, &key(K::Right)), Some(Action::NextItem));
        assert_eq!(lookup(&[BROWSE, Main, Any], None, &key(K::Right)), Some(Action::Right));
        assert_eq!(lookup(&compare, None, &key(K::Char('q'))), Some(Action::Quit));
        let typing = [Input, Any];
        assert_eq!(action_for(&typing, None, &key(K::Char('q'))), Some(Action::Char('q')));
        let shifted = KeyEvent::new(K::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(lookup(&compare, None, &shifted), Some(Action::Bottom));
        let cc = KeyEvent::new(K::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(action_for(&typing, None, &cc), Some(Action::Quit));
        assert_eq!(action_for(&[JOBS, Main, Any], None, &cc), Some(Action::Quit));
    }

    /// A mode's keys work, and show, only in that mode; a screen without modes gets them all.
    #[test]
    fn keys_follow_the_mode() {
        let annotate = [ANNOTATE, Main, Any];
        let five = key(K::Char('5'));
        assert_eq!(action_for(&annotate, Some("likert"), &five), Some(Action::Digit(5)));
        assert_eq!(action_for(&annotate, Some("rank"), &five), Some(Action::Digit(5)));
        assert_eq!(lookup(&annotate, Some("rank"), &key(K::Char('K'))), Some(Action::RankUp));
        assert_eq!(lookup(&annotate, Some("likert"), &key(K::Char('K'))), None);
        assert_eq!(lookup(&annotate, Some("slider"), &key(K::Char(']'))), Some(Action::Adjust(10)));
        assert_eq!(lookup(&annotate, Some("likert"), &key(K::Char(']'))), None);
        assert_eq!(lookup(&annotate, Some("likert"), &key(K::Right)), Some(Action::Adjust(1)));
        let hints = |mode| hints(&annotate, Some(mode)).into_iter().map(|(_, h)| h).collect::<Vec<_>>();
        assert!(hints("rank").contains(&"better") && !hints("rank").contains(&"more"), "{:?}", hints("rank"));
        assert!(hints("likert").contains(&"score") && !hints("likert").contains(&"better"), "{:?}", hints("likert"));
        assert!(hints("slider").contains(&"value, next at 2 digits") && !hints("slider").contains(&"tie"), "{:?}", hints("slider"));
        assert_eq!(action_for(&annotate, Some("slider"), &key(K::Char('0'))), Some(Action::Digit(0)));
        assert_eq!(action_for(&annotate, Some("likert"), &key(K::Char('0'))), None);
        // The end of the training: Enter goes on, no digit scores the item under it.
        assert_eq!(lookup(&annotate, Some("checkpoint"), &key(K::Enter)), Some(Action::Accept));
        assert_eq!(lookup(&annotate, Some("checkpoint"), &key(K::Esc)), Some(Action::Back));
        assert_ne!(action_for(&annotate, Some("checkpoint"), &five), Some(Action::Digit(5)));
        for mode in ["rank", "likert", "slider"] {
            assert!(hints(mode).contains(&"help") && hints(mode).contains(&"quit"), "{mode}: {:?}", hints(mode));
        }
        // Scores binds Left/h and Right/l itself: Main's are hidden there, not on Compare (l).
        let shown = in_force(&[SCORES, Main, Any], None);
        assert!(!shown.iter().any(|b| b.context == Main && b.action == Action::Right));
        let shown = in_force(&[COMPARE, Main, Any], None);
        assert!(shown.iter().any(|b| b.context == Main && b.action == Action::Right));
    }

    /// In a text field of the launch form letters, `q`, `?` and digits type; on a choice field
    /// `q` closes it and `?` opens the help; F1 opens it in both.
    #[test]
    fn the_launch_form_types_in_its_text_fields() {
        let form = [Form, Any];
        for ch in ['q', '?', '1', 'j', 'h', ' '] {
            assert_eq!(action_for(&form, Some(TYPING), &key(K::Char(ch))), Some(Action::Char(ch)), "{ch}");
        }
        assert_eq!(action_for(&form, Some("choose"), &key(K::Char('q'))), Some(Action::Back));
        assert_eq!(action_for(&form, Some("choose"), &key(K::Char('?'))), Some(Action::Help));
        assert_eq!(action_for(&form, Some("choose"), &key(K::Char('1'))), None);
        for mode in ["choose", TYPING] {
            assert_eq!(action_for(&form, Some(mode), &key(K::F(1))), Some(Action::Help));
            assert_eq!(action_for(&form, Some(mode), &key(K::Enter)), Some(Action::Submit));
            assert_eq!(action_for(&form, Some(mode), &key(K::Esc)), Some(Action::Back));
        }
        assert_eq!(action_for(&form, Some(TYPING), &key(K::Left)), Some(Action::Left));
        assert_eq!(action_for(&form, Some(TYPING), &key(K::Delete)), Some(Action::DeleteNext));
        let cw = KeyEvent::new(K::Char('w'), KeyModifiers::CONTROL);
        assert_eq!(action_for(&form, Some(TYPING), &cw), Some(Action::DeleteWord));
        let hints = hints(&form, Some(TYPING)).into_iter().map(|(_, h)| h).collect::<Vec<_>>();
        assert!(hints.contains(&"delete") && hints.contains(&"help") && !hints.contains(&"change"), "{hints:?}");
        assert_eq!(key_label(K::F(1)), "F1");
    }

    /// In the Import screen's path field Tab completes (its own help line and hint); in
    /// other text fields it is the plain next field, and each shows one Tab.
    #[test]
    fn tab_completes_in_the_import_path() {
        let typing = [Input, Any];
        let tabs = |mode| in_force(&typing, mode).into_iter().filter(|b| b.keys.contains(&k(K::Tab))).map(|b| b.desc).collect::<Vec<_>>();
        assert_eq!(tabs(Some("path")).len(), 1);
        assert!(tabs(Some("path"))[0].contains("complete"), "{:?}", tabs(Some("path")));
        assert_eq!(tabs(None), ["next field"]);
        assert!(hints(&typing, Some("path")).iter().any(|(k, h)| k == "Tab" && *h == "complete"));
        assert!(!hints(&typing, None).iter().any(|(_, h)| *h == "complete"));
        assert_eq!(action_for(&typing, Some("path"), &key(K::Tab)), Some(Action::NextPane));
    }

    fn key_label(code: KeyCode) -> String {
        Key { code, ctrl: false }.label()
    }

    #[test]
    fn no_key_bound_twice_in_one_context() {
        for (i, a) in BINDINGS.iter().enumerate() {
            for b in &BINDINGS[i + 1..] {
                // Bindings of different modes of one screen may share keys.
                let apart = !a.modes.is_empty() && !b.modes.is_empty() && a.modes.iter().all(|m| !b.modes.contains(m));
                // A binding of some modes may come before one of every mode: it overrides it
                // in its modes (the first match wins), and `in_force` shows only it there.
                let overrides = !a.modes.is_empty() && b.modes.is_empty();
                if a.context == b.context && !apart && !overrides {
                    for k in a.keys {
                        assert!(!b.keys.contains(k), "{} bound twice in {:?}", k.label(), a.context);
                    }
                }
            }
        }
    }
}
