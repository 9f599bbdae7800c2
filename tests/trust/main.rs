//! Issue 14 ("Trust"): bad input, faults and hostile files, one module per area.

mod imports;
