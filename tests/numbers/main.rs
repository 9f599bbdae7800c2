//! Numbers (issue 15): one definition per number, checked against the public files. One test binary, a module per area.

mod judgments;
