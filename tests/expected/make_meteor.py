#!/usr/bin/env python3
"""Expected METEOR values (NLTK's meteor_score), Porter stems and WordNet synonym sets on real
files, for tests/it/meteor_cider/meteor.rs.

Run from the project root with the reference implementations installed:

    python3 -m pip install --user nltk==3.10.4
    python3 -m pip install --no-deps --target /tmp/nltk362 nltk==3.6.2
    apt-get install -y wordnet-base          # WordNet 3.0 in /usr/share/wordnet
    NLTK36=/tmp/nltk362 python3 tests/expected/make_meteor.py > tests/expected/meteor.json

NLTK's downloader has no network here, so WordNet comes from Debian's `wordnet-base` (the
Princeton WordNet 3.0 database files; `WORDNET=DIR` for another folder): the script copies its
index, data and exception files into a temporary NLTK data folder, with the `lexnames` file
NLTK's reader opens (the 45 lexicographer file names of WordNet 3.0's lexnames(5WN)). NLTK
3.10.4's reader would also map synsets to the default `wordnet` corpus through `index.sense`
(for its multilingual functions); that mapping does not change English synsets and is switched
off here.

Two conventions:
- nltk: NLTK 3.10.4, `meteor_score([r.split() for r in refs], hyp.split())`;
- nltk36: NLTK 3.6.2, `meteor_score(refs, hyp)` on the raw strings (eval-formality-transfer's
  `nltk.meteor([src], out)`; 3.6.3 fixed the stem stage, 3.6.5 took token lists), computed in a
  child process with NLTK 3.6.2 first on sys.path.

Inputs (../shared/anchors, read, never copied): eval-formality-transfer's chatgpt/content.src.json
and content.ref.json (each system's output against the source, resp. the reference: 1440 pairs);
GEM-metrics' unit-test predictions (four sets) against references.json; TSTBench's ChatGPT
zero-shot Yelp outputs (output_cleaned.0) against the four Yelp references.

Also: NLTK's PorterStemmer (NLTK_EXTENSIONS) on every white-space token of those texts
(lower-cased) and on every twentieth WordNet lemma without an underscore; and for the tokens of
eval-formality-transfer's texts, their stems and a few irregular forms, the size and a digest (sha256 of the sorted
names joined by newlines, first 16 hex digits) of {l.name() for s in wordnet.synsets(w) for l in
s.lemmas()}, under each NLTK.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..", "shared", "anchors")
WORDNET = os.environ.get("WORDNET", "/usr/share/wordnet")
TB = "A-Benchmark-of-Text-Style-Transfer"

sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "cli"))
from bench_python import nltk_wordnet_root  # noqa: E402  (the one copy of WordNet 3.0's lexnames)


def nltk_data_root():
    """A temporary NLTK data folder holding corpora/wordnet."""
    return nltk_wordnet_root(WORDNET)


def lines(path):
    with open(path, encoding="utf-8-sig", newline="") as f:
        text = f.read().replace("\r\n", "\n")
    out = text.split("\n")
    if out and out[-1] == "":
        out.pop()
    return out


def anchor(*parts):
    return os.path.join(ROOT, *parts)


def gem_sets():
    """GEM-metrics' four unit-test prediction sets against its references."""
    gem = anchor("GEM-metrics", "test_data", "unit_tests")
    with open(os.path.join(gem, "references.json"), encoding="utf-8") as f:
        refs = [v["target"] for v in json.load(f)["values"]]
    out = []
    for name in ("predictions", "identical_predictions", "reversed_predictions", "empty_predictions"):
        with open(os.path.join(gem, f"{name}.json"), encoding="utf-8") as f:
            out.append((f"GEM-metrics/{name}", json.load(f)["values"], refs))
    return out


def yelp_set():
    """TSTBench's ChatGPT zero-shot Yelp outputs (negative) against the four references."""
    yelp = anchor(TB, "Dataprepro", "datasets", "yelp")
    streams = [lines(os.path.join(yelp, f"reference{i}.0")) for i in range(4)]
    hyps = lines(anchor(TB, "Algorithms", "CHATGPT", "outputs", "yelp", "output_cleaned.0"))
    return ("TSTBench/yelp/CHATGPT/output_cleaned.0", hyps, [list(r) for r in zip(*streams)])


def sets():
    """(name, hypotheses, reference lists) of every input set."""
    out = []
    for which in ("src", "ref"):
        hyps, refs = [], []
        for line in lines(anchor("eval-formality-transfer", "chatgpt", f"content.{which}.json")):
            r = json.loads(line)
            for v in r["sys"].values():
                hyps.append(v["out"])
                refs.append([r[which]])
        out.append((f"eval-formality-transfer/content.{which}", hyps, refs))
    return out + gem_sets() + [yelp_set()]


def digest(names):
    names = sorted(names)
    return [len(names), hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]]


def synonym_sets(wn, words):
    return {w: digest({l.name() for s in wn.synsets(w) for l in s.lemmas()}) for w in words}


def old_nltk(job):
    """In the child process: NLTK 3.6.2's values for the job on stdin."""
    sys.path.insert(0, os.environ["NLTK36"])
    import nltk

    assert nltk.__version__ == "3.6.2", nltk.__version__
    nltk.data.path.insert(0, job["root"])
    from nltk.corpus import wordnet as wn
    from nltk.translate.meteor_score import meteor_score

    scores = {name: [meteor_score(refs, h) for h, refs in zip(hyps, refs_all)] for name, hyps, refs_all in job["sets"]}
    return {"scores": scores, "synonyms": synonym_sets(wn, job["words"])}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--old":
        json.dump(old_nltk(json.load(sys.stdin)), sys.stdout)
        return
    import nltk
    from nltk.corpus.reader import WordNetCorpusReader
    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import meteor_score

    assert nltk.__version__ == "3.10.4", nltk.__version__
    root = nltk_data_root()
    nltk.data.path.insert(0, root)
    WordNetCorpusReader.map_wn = lambda self, version="wordnet": None
    wn = WordNetCorpusReader(os.path.join(root, "corpora", "wordnet"), None)
    assert wn.get_version() == "3.0"
    stemmer = PorterStemmer()

    all_sets = sets()
    new = {name: [meteor_score([r.split() for r in refs], h.split(), wordnet=wn) for h, refs in zip(hyps, refs_all)] for name, hyps, refs_all in all_sets}
    tokens = set()
    for _, hyps, refs_all in all_sets:
        for t in hyps + [r for refs in refs_all for r in refs]:
            tokens.update(w.lower() for w in t.split())
    lemmas = sorted(l for l in wn.all_lemma_names() if "_" not in l)[::20]
    words = sorted(tokens | set(lemmas))
    porter = [[w, stemmer.stem(w)] for w in words]
    ef = set()
    for name, hyps, refs_all in all_sets[:2]:
        for t in hyps + [r for refs in refs_all for r in refs]:
            for w in t.lower().split():
                ef.update([w, stemmer.stem(w)])
    # Words where morphy's exception lists and repeated rules matter.
    ef.update(["geese", "mice", "feet", "better", "worse", "ladies", "wolves", "churches", "axes", "sportsmen", "happier", "biggest", "studied", "glasses", "boxesses", "matcheses", "running", "lying"])
    ef = sorted(ef)
    job = {"root": root, "sets": all_sets, "words": ef}
    child = subprocess.run([sys.executable, __file__, "--old"], input=json.dumps(job), capture_output=True, text=True, check=True)
    old = json.loads(child.stdout)
    out = {
        "nltk": nltk.__version__,
        "nltk36": "3.6.2",
        "wordnet": f"{wn.get_version()} from {WORDNET}",
        "porter": porter,
        "synonyms": {"nltk": synonym_sets(wn, ef), "nltk36": old["synonyms"]},
        "sets": {name: {"nltk": new[name], "nltk36": old["scores"][name]} for name, _, _ in all_sets},
    }
    json.dump(out, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")
    shutil.rmtree(root)


if __name__ == "__main__":
    main()
