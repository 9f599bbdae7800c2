//! Issue 14 ("Trust"): bad inputs, hostile files and faults, one module per area.

mod store_guard;
