//! Every per-output metric `tstlab score --metrics` accepts, with a line on what it measures and
//! the paper or package it follows. `tstlab metric --list`, the `--metrics` parser and the TUI's
//! score menu all read this one table.

/// A family of metric names that share a description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// The names `--metrics` takes (matched ignoring case).
    pub names: &'static [&'static str],
    /// What is measured, one line.
    pub about: &'static str,
    /// The paper or package whose numbers it reproduces.
    pub follows: &'static str,
    /// What it needs beyond the store (a model, an option), empty if nothing.
    pub needs: &'static str,
}

/// The families, in the order they are listed.
pub const FAMILIES: &[Family] = &[
    Family {
        names: &["acc"],
        about: "style strength: 1 when the dataset's style classifier gives the target style, else 0",
        follows: "TSTBench ACC (its classifier trained on the dataset)",
        needs: "trains the dataset's n-gram classifier when none is there",
    },
    Family {
        names: &["d-ppl"],
        about: "fluency: perplexity under a Kneser-Ney n-gram LM of the target style's texts",
        follows: "TSTBench d-PPL (KenLM, modified Kneser-Ney)",
        needs: "trains the dataset's n-gram LMs when none are there",
    },
    Family {
        names: &["s-bleu", "r-bleu", "multi-bleu"],
        about: "content: sentence BLEU against the source (s), the first reference (r), all references (multi)",
        follows: "sacreBLEU 2.6.0 sentence_bleu; --bleu nltk|tstbench|efst: NLTK 3.10.4 sentence_bleu",
        needs: "",
    },
    Family {
        names: &["chrf", "chrf++"],
        about: "content: sentence chrF (character 6-grams) / chrF++ (+ word bigrams) against all references",
        follows: "sacreBLEU 2.6.0 sentence_chrf",
        needs: "",
    },
    Family {
        names: &["s-rouge1", "r-rouge1", "multi-rouge1", "s-rouge2", "r-rouge2", "multi-rouge2"],
        about: "content: ROUGE-N F1 against the source, the first reference, or the best of all references",
        follows: "Google rouge-score 0.1.2, no stemmer; --rouge stem: its Porter stemmer; --rouge efst: the rouge package 0.3.2 on NLTK 3.4 tokens",
        needs: "",
    },
    Family {
        names: &["s-rougeL", "r-rougeL", "multi-rougeL", "s-rougeLsum", "r-rougeLsum", "multi-rougeLsum"],
        about: "content: ROUGE-L (longest common subsequence) F1; Lsum joins sentences split at newlines",
        follows: "Google rouge-score 0.1.2, no stemmer; --rouge stem: its Porter stemmer; --rouge efst (not Lsum): the rouge package 0.3.2's summary-level ROUGE-L",
        needs: "",
    },
    Family {
        names: &["g-bleu"],
        about: "content: sqrt(s-BLEU x r-BLEU) of each output's sentence BLEUs (their mean is not the corpus g-BLEU)",
        follows: "llm-tst-code gm_bleu, per output; in the --bleu convention",
        needs: "",
    },
    Family {
        names: &[
            "s-bleu1", "r-bleu1", "multi-bleu1", "s-bleu2", "r-bleu2", "multi-bleu2",
            "s-bleu3", "r-bleu3", "multi-bleu3", "s-bleu4", "r-bleu4", "multi-bleu4",
        ],
        about: "content: cumulative BLEU up to order n (n = 1..4) against the source, the first reference, all references",
        follows: "nlg-eval / pycocoevalcap BleuScorer per-sentence Bleu_n (StylePTB)",
        needs: "",
    },
    Family {
        names: &["s-meteor", "r-meteor", "multi-meteor"],
        about: "content: METEOR (exact, Porter-stem and WordNet-synonym word matches) against the source, the first reference, or the best reference",
        follows: "NLTK 3.10.4 meteor_score on white-space tokens; --meteor nltk36: NLTK 3.6.2 on the raw strings (eval-formality-transfer)",
        needs: "WordNet 3.0 (apt-get install wordnet-base, NLTK's wordnet data, or TSTLAB_WORDNET=DIR)",
    },
    Family {
        names: &["s-cider", "r-cider", "multi-cider"],
        about: "content: CIDEr-D (tf-idf n-gram cosine, clipped, length penalty; 0-10) against the source, the first reference, or all references",
        follows: "pycocoevalcap 1.2 Cider; idf per direction over the items with an output; --cider gem (GEM-metrics tokens) | nlgeval (white space)",
        needs: "",
    },
    Family {
        names: &["s-hamming", "r-hamming", "multi-hamming"],
        about: "edit size: whitespace tokens differing by position, plus the length difference (multi: the fewest)",
        follows: "StylePTB's token-level Hamming distance",
        needs: "",
    },
    Family {
        names: &["s-bert", "r-bert", "multi-bert", "s-bert-p", "r-bert-p", "multi-bert-p", "s-bert-r", "r-bert-r", "multi-bert-r"],
        about: "content: BERTScore F1 (-p precision, -r recall) against the source, the first reference, or the best reference (by F1)",
        follows: "bert-score (Zhang et al., 2020): greedy cosine matching, no baseline rescaling",
        needs: "the --encoder model (all-MiniLM-L6-v2 by default); --bertscore-layer N (default: its last), --idf",
    },
    Family {
        names: &["s-sbert", "r-sbert", "multi-sbert"],
        about: "content: cosine of mean-pooled sentence embeddings (multi: the highest over the references)",
        follows: "sentence-transformers mean pooling, L2-normalized",
        needs: "the --encoder model (all-MiniLM-L6-v2 by default)",
    },
    Family {
        names: &["g-ppl"],
        about: "fluency: perplexity of the output under a causal LM",
        follows: "TSTBench / llm-tst-code g-PPL (GPT-2 there)",
        needs: "the --model LM (SmolLM2 by default) or --endpoint",
    },
    Family {
        names: &["nll-app"],
        about: "appropriateness: 100 / mean token NLL of the output as the response in `###Speaker: {turn} ###Response: {output}`",
        follows: "LMStyle benchmark NLL appropriateness (its ###Speaker/###Response format)",
        needs: "the --model LM; items with a dialogue context",
    },
    Family {
        names: &["cola"],
        about: "fluency: 1 when a CoLA-trained classifier finds the output acceptable, else 0",
        follows: "TSTBench CoLA column",
        needs: "--cola-model DIR (a Hugging Face classifier folder trained on CoLA)",
    },
    Family {
        names: &["judge-content", "judge-style", "judge-fluency", "judge-overall"],
        about: "an LLM's 0-100 score of one aspect (overall: all three), raw reply stored",
        follows: "tstlab's prompts (assets/judge/): content after Lai et al. 2023's, the others analogues",
        needs: "the --model LM or --endpoint",
    },
    Family {
        names: &["judge-lai2023-content", "judge-lai2023-style", "judge-lai2023-fluency"],
        about: "an LLM's 0-100 score of one aspect, all outputs of an item in one request (Output 1..n), raw reply stored",
        follows: "Lai, Toral, Nissim 2023, Figures 1-3, word for word (assets/judge/lai2023-*.txt)",
        needs: "the --model LM or --endpoint; formal/informal styles",
    },
    Family {
        names: &["judge-lai2023-multi-content", "judge-lai2023-multi-style", "judge-lai2023-multi-fluency"],
        about: "content, style and fluency 0-100 of each output from one request per item, raw reply stored",
        follows: "Lai, Toral, Nissim 2023, Figure 4, word for word (assets/judge/lai2023-multi.txt)",
        needs: "the --model LM or --endpoint; formal/informal styles",
    },
    Family {
        names: &["judge-lmstyle-app"],
        about: "appropriateness 0-100 of the output as the response to its dialogue turn, raw reply stored",
        follows: "LMStyle Benchmark's ChatGPT appropriateness prompt (its Figure 2), word for word",
        needs: "the --model LM or --endpoint; items with a dialogue context",
    },
];

/// Named groups of metrics.
pub const GROUPS: &[(&str, &str)] = &[
    ("tstbench", TSTBENCH),
    ("judge", "judge-content,judge-style,judge-fluency,judge-overall"),
    ("lai2023", "judge-lai2023-content,judge-lai2023-style,judge-lai2023-fluency,lai2023-multi"),
    ("lai2023-multi", "judge-lai2023-multi-content,judge-lai2023-multi-style,judge-lai2023-multi-fluency"),
    ("all", "tstbench,g-ppl,judge"),
];

/// TSTBench's per-output inputs: ACC, the BLEU family (the table computes corpus BLEU from the
/// texts; these are the sentence-level values for item views and plots), BERTScore and d-PPL
/// (TSTBench's n-gram LM). g-PPL is in `all`.
pub const TSTBENCH: &str = "acc,s-bleu,r-bleu,multi-bleu,d-ppl,s-bert,r-bert,multi-bert";

/// Every name, in catalogue order.
pub fn names() -> impl Iterator<Item = &'static str> {
    FAMILIES.iter().flat_map(|f| f.names.iter().copied())
}

/// The family a name (any case) belongs to.
pub fn family_of(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.names.iter().any(|n| n.eq_ignore_ascii_case(name)))
}

/// The name as the catalogue spells it.
pub fn canonical(name: &str) -> Option<&'static str> {
    names().find(|n| n.eq_ignore_ascii_case(name))
}

/// Metrics tstlab computes only from whole files or tables, not per stored output, and those
/// it does not compute at all: said in `metric --list` so a user does not look for them.
pub const ELSEWHERE: &[(&str, &str)] = &[
    ("corpus s-/r-/multi-BLEU, G2, Joint, t-PPL", "tstlab table (from the stored texts and scores)"),
    ("BLEU, chrF, ROUGE, METEOR, CIDEr-D of text files", "tstlab metric bleu | chrf | rouge | meteor | cider"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_groups_named() {
        let all: Vec<&str> = names().collect();
        for (i, n) in all.iter().enumerate() {
            assert!(!all[..i].iter().any(|m| m.eq_ignore_ascii_case(n)), "{n} twice");
        }
        for (g, _) in GROUPS {
            assert!(canonical(g).is_none(), "group {g} shadows a metric");
        }
        assert_eq!(canonical("MULTI-ROUGEL"), Some("multi-rougeL"));
        assert_eq!(family_of("chrf++").unwrap().follows, "sacreBLEU 2.6.0 sentence_chrf");
    }
}
