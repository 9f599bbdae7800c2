//! One definition per number (issue 15): named metric conventions, checked on real files. One test binary, a module per area.

#[path = "../anchor/mod.rs"]
mod anchor;
#[path = "../bin/mod.rs"]
mod bin;

mod bleu;
mod tables;
