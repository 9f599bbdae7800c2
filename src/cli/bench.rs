//! `tstlab bench ...`: throughput measurements (speed is measured here, never asserted in tests).

#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// BERTScore pairs per second with a BERT-family encoder (on the device it runs on, named).
    Bertscore(super::bench_bertscore::BertscoreArgs),
    /// Build a big synthetic store at PATH (unless it has one) and time the TUI's queries on it.
    Store(super::bench_store::StoreArgs),
    /// Speed of BLEU, chrF and CIDEr-D on benchmark pairs built from the demo text (`--peer`: CIDEr-D against pycocoevalcap).
    Metrics(super::metric::BenchArgs),
    /// Throughput of the ACC classifier, d-PPL and g-PPL scorers.
    Score(super::bench_score::ScoreBenchArgs),
    /// Local generation speed on a zero-shot transfer run (demo sentiment sentences).
    Transfer(super::bench_transfer::TransferArgs),
    /// One busy core until stdin closes (the children of `--load`).
    #[command(hide = true)]
    Spin,
}

pub fn run(command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Bertscore(a) => super::bench_bertscore::run(a),
        BenchCommand::Store(a) => super::bench_store::run(a),
        BenchCommand::Metrics(a) => super::metric::bench(a),
        BenchCommand::Transfer(a) => super::bench_transfer::run(a),
        BenchCommand::Score(a) => super::bench_score::run(a),
        BenchCommand::Spin => super::bench_load::spin(),
    }
}
