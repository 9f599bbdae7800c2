//! Issue 14 ("Trust"): judgments stored as entered, no file text driving the terminal, no silent partial import.

mod control;
