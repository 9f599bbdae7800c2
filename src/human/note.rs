//! An annotator's note on one showing of an item: a free-text comment and a flag, `unsure`
//! (judged, but not sure) or `skip` (not judged: the showing counts as done, with no
//! judgments). Stored in `item_notes` through the session's writer like judgments, and logged
//! for undo/redo in the judgment history under [`LOG_ASPECT`].

use crate::store;
use serde::{Deserialize, Serialize};

/// The aspect a note's changes are logged under in the judgment history: a comma is never in
/// an aspect's name (`Definition::check`), so it names no aspect.
pub const LOG_ASPECT: &str = ",note";

/// The longest comment kept (characters).
pub const MAX_COMMENT: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Flag {
    /// Judged, but the annotator is not sure.
    Unsure,
    /// Not judged: the showing counts as done and has no judgments.
    Skip,
}

impl Flag {
    pub fn as_str(self) -> &'static str {
        match self {
            Flag::Unsure => "unsure",
            Flag::Skip => "skip",
        }
    }

    pub fn parse(s: &str) -> Option<Flag> {
        match s {
            "unsure" => Some(Flag::Unsure),
            "skip" => Some(Flag::Skip),
            _ => None,
        }
    }

    /// The next flag of the cycle none → unsure → skip → none; `skip` is passed over when the
    /// showing has judgments (a skipped showing has none).
    pub fn cycle(flag: Option<Flag>, judged: bool) -> Option<Flag> {
        match flag {
            None => Some(Flag::Unsure),
            Some(Flag::Unsure) if judged => None,
            Some(Flag::Unsure) => Some(Flag::Skip),
            Some(Flag::Skip) => None,
        }
    }
}

/// A note as entered or stored; the empty note is no note.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub comment: String,
    pub flag: Option<Flag>,
}

impl Note {
    pub fn is_empty(&self) -> bool {
        self.comment.is_empty() && self.flag.is_none()
    }

    pub fn skipped(&self) -> bool {
        self.flag == Some(Flag::Skip)
    }

    /// A note as stored (an unknown flag, which the schema refuses, reads as none).
    pub fn from_row(row: Option<&store::NoteRow>) -> Note {
        row.map_or_else(Note::default, |r| Note { comment: r.comment.clone(), flag: r.flag.as_deref().and_then(Flag::parse) })
    }

    /// A comment as typed: trimmed, white space runs (new lines, tabs) made one space, cut to
    /// [`MAX_COMMENT`] characters.
    pub fn clean_comment(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(MAX_COMMENT).collect()
    }

    /// The history form of a note (JSON).
    pub fn to_json(&self) -> String {
        serde_json::json!({ "comment": self.comment, "flag": self.flag }).to_string()
    }

    pub fn from_json(s: &str) -> store::Result<Note> {
        Ok(serde_json::from_str(s)?)
    }

    /// In words for the screen: `"comment" · unsure`, `skip`, `no note`.
    pub fn words(&self) -> String {
        let mut parts = Vec::new();
        if !self.comment.is_empty() {
            parts.push(format!("\"{}\"", self.comment));
        }
        if let Some(f) = self.flag {
            parts.push(f.as_str().to_owned());
        }
        if parts.is_empty() { "no note".into() } else { parts.join(" · ") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_cycle_and_notes_round_trip() {
        assert_eq!(Flag::cycle(None, false), Some(Flag::Unsure));
        assert_eq!(Flag::cycle(Some(Flag::Unsure), false), Some(Flag::Skip));
        assert_eq!(Flag::cycle(Some(Flag::Unsure), true), None, "a judged showing is never skipped");
        assert_eq!(Flag::cycle(Some(Flag::Skip), false), None);
        let n = Note { comment: "odd \"source\"".into(), flag: Some(Flag::Skip) };
        assert_eq!(Note::from_json(&n.to_json()).unwrap(), n);
        assert_eq!(Note::from_json(&Note::default().to_json()).unwrap(), Note::default());
        assert_eq!(Note::clean_comment("  a\n\tb  c "), "a b c");
        assert_eq!(Note::clean_comment(&"x".repeat(2000)).len(), MAX_COMMENT);
        assert_eq!(n.words(), "\"odd \"source\"\" · skip");
    }
}
