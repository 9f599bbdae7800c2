//! How a campaign chooses its screens: the design, the stopping rule and the thresholds the
//! adaptive model (`human::adaptive`) and adaptive campaigns (`human::design`) share.

use serde::{Deserialize, Serialize};

/// Values every system needs before the selection follows the model.
pub const WARM_UP: usize = 3;
/// `z` at which an adjacent pair counts as settled (95%, two-sided).
pub const SETTLED_Z: f64 = 1.96;

/// How the next screen's outputs are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Design {
    /// Today's campaigns: screens in a seeded random order, every output of a screen shown
    /// (a random `k` of them when `k` is below the number of systems).
    #[default]
    Uniform,
    /// The least separated systems first (see the module doc).
    Adaptive,
}

impl Design {
    pub fn parse(s: &str) -> Option<Design> {
        match s {
            "uniform" => Some(Design::Uniform),
            "adaptive" => Some(Design::Adaptive),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Design::Uniform => "uniform",
            Design::Adaptive => "adaptive",
        }
    }
}

/// When an adaptive campaign chooses no further screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Stop {
    /// Every adjacent pair of every aspect apart at 95%.
    #[serde(default)]
    pub settled: bool,
    /// At most this many judgments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<usize>,
}

impl Stop {
    pub fn is_unset(&self) -> bool {
        !self.settled && self.budget.is_none()
    }

    /// `every adjacent pair apart at 95% or 600 judgments`.
    pub fn words(&self) -> String {
        match (self.settled, self.budget) {
            (true, Some(b)) => format!("every adjacent pair apart at 95% or {b} judgments"),
            (true, None) => "every adjacent pair apart at 95%".into(),
            (false, Some(b)) => format!("{b} judgments"),
            (false, None) => "none (every item to every annotator)".into(),
        }
    }
}

