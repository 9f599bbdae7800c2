//! Numbers (issue 15): one definition per number, shown with its conventions. One test binary, a module per area.

#[path = "../anchor/mod.rs"]
mod anchor;
#[path = "../bin/mod.rs"]
mod bin;

mod joint;
