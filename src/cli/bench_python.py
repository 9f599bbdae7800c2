# The Python peers of `tstlab bench metrics --peer PYTHON` (src/cli/bench_python.rs runs it as
# `PYTHON -c <this file>` with a JSON job on stdin and reads one JSON object from stdout).
#
# The job: {"dir": D, "k": K, "wordnet": W or null, "metrics": [names]}; D holds hyp.txt and
# ref.txt (one pair a line) and, for "cider", cider_hyp.txt and cider_ref0..K-1.txt. Each metric
# imports its package, then only the metric call is timed (perf_counter and process_time). A
# package that cannot be imported gives {"missing": module, "install": pip name}, any other
# failure {"failed": reason}; neither stops the other metrics.
import json, os, sys, time, warnings

warnings.filterwarnings("ignore")


def read(name):
    with open(os.path.join(D, name), encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def timed(f):
    w, c = time.perf_counter(), time.process_time()
    v = f()
    return v, time.perf_counter() - w, time.process_time() - c


def result(version, v, w, c, corpus=None):
    each = None if isinstance(v, float) else [float(x) for x in v]
    if corpus is None:
        corpus = float(v) if each is None else sum(each) / max(1, len(each))
    return {"version": version, "wall": w, "cpu": c, "corpus": corpus, "each": each}


def sacrebleu_metric(name, hyps, refs):
    import sacrebleu
    from sacrebleu.metrics import BLEU, CHRF

    v = "sacrebleu " + sacrebleu.__version__
    if name == "bleu":
        m = BLEU()
        return result(v, *timed(lambda: m.corpus_score(hyps, [refs]).score))
    if name == "sentence_bleu":
        m = BLEU(effective_order=True)
        return result(v, *timed(lambda: [m.sentence_score(h, [r]).score for h, r in zip(hyps, refs)]))
    m = CHRF(word_order=2 if name == "chrf++" else 0)
    return result(v, *timed(lambda: m.corpus_score(hyps, [refs]).score))


def rouge_metric(name, hyps, refs):
    from importlib.metadata import version
    from rouge_score import rouge_scorer

    sc = rouge_scorer.RougeScorer([name], use_stemmer=False)
    each, w, c = timed(lambda: [sc.score(r, h)[name].fmeasure for h, r in zip(hyps, refs)])
    return result("rouge-score " + version("rouge-score"), each, w, c)


LEXNAMES = """adj.all 3|adj.pert 3|adv.all 4|noun.Tops 1|noun.act 1|noun.animal 1|noun.artifact 1|
noun.attribute 1|noun.body 1|noun.cognition 1|noun.communication 1|noun.event 1|noun.feeling 1|
noun.food 1|noun.group 1|noun.location 1|noun.motive 1|noun.object 1|noun.person 1|
noun.phenomenon 1|noun.plant 1|noun.possession 1|noun.process 1|noun.quantity 1|noun.relation 1|
noun.shape 1|noun.state 1|noun.substance 1|noun.time 1|verb.body 2|verb.change 2|
verb.cognition 2|verb.communication 2|verb.competition 2|verb.consumption 2|verb.contact 2|
verb.creation 2|verb.emotion 2|verb.motion 2|verb.perception 2|verb.possession 2|verb.social 2|
verb.stative 2|verb.weather 2|adj.ppl 3"""


def wordnet(src):
    """NLTK's reader on the WordNet 3.0 tstlab found: NLTK's own folder or zip as it is; a bare
    database folder (Debian's wordnet-base) copied with the `lexnames` file NLTK's reader opens,
    as tests/expected/make_meteor.py does. NLTK reads only below its data path."""
    import atexit, shutil
    import nltk
    from nltk.corpus.reader import WordNetCorpusReader

    WordNetCorpusReader.map_wn = lambda self, version="wordnet": None
    if src.endswith(".zip"):
        nltk.data.path.insert(0, os.path.dirname(os.path.dirname(src)))
        from nltk.corpus import wordnet as wn

        return wn
    if os.path.isfile(os.path.join(src, "lexnames")):
        nltk.data.path.insert(0, os.path.dirname(os.path.dirname(src)))
        return WordNetCorpusReader(src, None)
    root = nltk_wordnet_root(src)
    atexit.register(shutil.rmtree, root, True)
    nltk.data.path.insert(0, root)
    return WordNetCorpusReader(os.path.join(root, "corpora", "wordnet"), None)


def nltk_wordnet_root(src):
    """A new temporary NLTK data folder holding corpora/wordnet: the database files of the bare
    WordNet folder `src` and the `lexnames` file NLTK's reader opens (also used by
    tests/expected/make_meteor.py)."""
    import shutil, tempfile

    root = tempfile.mkdtemp()
    dest = os.path.join(root, "corpora", "wordnet")
    os.makedirs(dest)
    for f in os.listdir(src):
        p = f.split(".")
        if len(p) == 2 and (p[0] in ("data", "index") and p[1] in ("noun", "verb", "adj", "adv") or p[1] == "exc"):
            shutil.copy(os.path.join(src, f), dest)
    with open(os.path.join(dest, "lexnames"), "w") as fh:
        for i, n in enumerate(LEXNAMES.replace("\n", "").split("|")):
            name, cat = n.split()
            fh.write(f"{i:02d}\t{name}\t{cat}\n")
    return root


def nltk_metric(name, hyps, refs):
    import nltk

    v = "nltk " + nltk.__version__
    if name == "nltk_sentence_bleu":
        from nltk.translate.bleu_score import sentence_bleu

        h = [x.lower().split() for x in hyps]
        r = [[x.lower().split()] for x in refs]
        return result(v, *timed(lambda: [sentence_bleu(b, a) for a, b in zip(h, r)]))
    from nltk.translate.meteor_score import meteor_score

    if not job["wordnet"]:
        return {"failed": "no WordNet 3.0 found"}
    wn = wordnet(job["wordnet"])
    wn.synsets("dog")  # loads the lemma index before the timed call
    h = [x.split() for x in hyps]
    r = [[x.split()] for x in refs]
    return result(v + ", WordNet " + wn.get_version(), *timed(lambda: [meteor_score(b, a, wordnet=wn) for a, b in zip(h, r)]))


def cider_metric(name, hyps, refs):
    from pycocoevalcap.cider.cider import Cider
    from importlib.metadata import version

    hyps = read("cider_hyp.txt")
    cols = [read("cider_ref%d.txt" % j) for j in range(job["k"])]
    res = {i: [h] for i, h in enumerate(hyps)}
    gts = {i: [c[i] for c in cols] for i in range(len(hyps))}
    (score, scores), w, c = timed(lambda: Cider().compute_score(gts, res))
    return result("pycocoevalcap " + version("pycocoevalcap"), scores, w, c, float(score))


def bertscore_metric(name, hyps, refs):
    import bert_score

    return {"failed": "bert-score %s is installed; this bench does not run it (tstlab's BERTScore: `tstlab bench bertscore`)" % bert_score.__version__}


PEERS = {
    "bleu": (sacrebleu_metric, "sacrebleu"),
    "sentence_bleu": (sacrebleu_metric, "sacrebleu"),
    "chrf": (sacrebleu_metric, "sacrebleu"),
    "chrf++": (sacrebleu_metric, "sacrebleu"),
    "rouge1": (rouge_metric, "rouge-score"),
    "rouge2": (rouge_metric, "rouge-score"),
    "rougeL": (rouge_metric, "rouge-score"),
    "meteor": (nltk_metric, "nltk"),
    "nltk_sentence_bleu": (nltk_metric, "nltk"),
    "cider": (cider_metric, "pycocoevalcap"),
    "bertscore": (bertscore_metric, "bert-score"),
}

# Run as `python -c SCRIPT` with the job on stdin; imported, it only defines the above.
if __name__ == "__main__":
    job = json.load(sys.stdin)
    D = job["dir"]
    hyps, refs = (read("hyp.txt"), read("ref.txt")) if os.path.exists(os.path.join(D, "hyp.txt")) else ([], [])
    out = {}
    for name in job["metrics"]:
        f, pip = PEERS[name]
        try:
            out[name] = f(name, hyps, refs)
        except ImportError as e:
            out[name] = {"missing": e.name or str(e), "install": pip}
        except Exception as e:
            out[name] = {"failed": "%s: %s" % (type(e).__name__, e)}
    print(json.dumps({"python": sys.version.split()[0], "results": out}))
