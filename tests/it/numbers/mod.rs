//! Numbers (issue 15): named conventions, one Joint, imported judgments as campaigns,
//! correlation options and significance tests, checked on real files. One test binary, a
//! module per area.


mod bleu;
mod bleu_orders;
mod correlation;
mod efst;
mod joint;
mod rouge;
mod judgments;
mod significance;
mod tables;
mod tui;
