//! Trust (issue 14): judgments kept through store faults, no file text driving the terminal,
//! whole-or-refused imports, a store that protects itself. One test binary, a module per area.


mod annotate_faults;
mod bad_input;
mod control;
mod imports;
mod shared_store;
mod store_guard;
