#!/usr/bin/env python3
"""Reference values for tests/it/ngram_lm_kenlm.rs, made with KenLM's own binaries.

KenLM is not part of tstlab. To rebuild its binaries (Debian):
    apt-get install libboost-program-options-dev libboost-system-dev libboost-thread-dev \
        libboost-test-dev cmake zlib1g-dev
    python3 -m pip download --no-binary :all: --no-deps kenlm   # the kenlm-0.3.0 sdist
    tar xzf kenlm-0.3.0.tar.gz && cd kenlm-0.3.0 && mkdir build && cd build
    cmake .. -DCMAKE_BUILD_TYPE=Release && make lmplz query
Then, from the project root (../shared/anchors beside it):
    KENLM_BIN=/path/to/kenlm-0.3.0/build/bin python3 tests/expected/kenlm/make_expected.py

For each case below lmplz estimates an ARPA model from anchor text and `query` scores held-out
sentences. Anchor text is never copied here: an n-gram is named by the first 12 hex digits of
the SHA-256 of its words joined by spaces. Each file holds
    counts  <n-grams per order>
    discounts  <order>  D1 D2 D3+          (lmplz's statistics, 6 significant digits)
    sum  <order>  <sum of log10 probs>  <sum of log10 backoffs>   (every n-gram of the order)
    gram  <hash>  <log10 prob>  [<log10 backoff>]   (the n-grams whose hash starts with 0)
    sent  <line>  <total log10>  <OOVs>      (query, <s> .. </s>, every held-out line)
"""
import hashlib
import os
import re
import subprocess
import sys
import tempfile

ANCHORS = "../shared/anchors"
CASES = [
    # name, training files, order, discount fallback, held-out file
    ("yelp1_o3_fallback", ["DualRL/data/yelp/test.1"], 3, True, "DualRL/data/yelp/test.0"),
    ("yelp_o4", ["DualRL/data/yelp/test.0", "DualRL/data/yelp/test.1"], 4, False,
     "DualRL/references/yelp/reference0.1"),
    ("yelp_o5_fallback", ["DualRL/data/yelp/test.0", "DualRL/data/yelp/test.1"], 5, True,
     "DualRL/references/yelp/reference0.0"),
    ("amazon_o4", ["Sentiment-and-Style-Transfer/data/amazon/sentiment.test.0",
                   "Sentiment-and-Style-Transfer/data/amazon/sentiment.test.1"], 4, False,
     "DualRL/data/yelp/test.0"),
]
OUT = os.path.dirname(os.path.abspath(__file__))


def name_hash(words):
    return hashlib.sha256(" ".join(words).encode("utf-8")).hexdigest()[:12]


def main():
    bin_dir = os.environ["KENLM_BIN"]
    for name, files, order, fallback, held_out in CASES:
        text = b"".join(open(os.path.join(ANCHORS, f), "rb").read() for f in files)
        with tempfile.TemporaryDirectory() as tmp:
            arpa = os.path.join(tmp, "model.arpa")
            cmd = [os.path.join(bin_dir, "lmplz"), "-o", str(order), "-S", "100M", "-T", tmp,
                   "--arpa", arpa]
            if fallback:
                cmd.append("--discount_fallback")
            run = subprocess.run(cmd, input=text, capture_output=True, check=True)
            lines = []
            stats = re.findall(r"^(\d) (\d+) D1=(\S+) D2=(\S+) D3\+=(\S+)$",
                               run.stderr.decode(), re.M)
            counts, sums, grams = read_arpa(arpa)
            lines.append("counts\t" + "\t".join(str(c) for c in counts))
            for o, _, d1, d2, d3 in stats:
                lines.append(f"discounts\t{o}\t{d1}\t{d2}\t{d3}")
            for o, (p, b) in enumerate(sums, 1):
                lines.append(f"sum\t{o}\t{p!r}\t{b!r}")
            lines.extend(grams)
            q = subprocess.run([os.path.join(bin_dir, "query"), "-v", "sentence", arpa],
                               stdin=open(os.path.join(ANCHORS, held_out), "rb"),
                               capture_output=True, check=True)
            n = 0
            for line in q.stdout.decode().splitlines():
                m = re.match(r"^Total: (\S+) OOV: (\d+)$", line)
                if m:
                    n += 1
                    lines.append(f"sent\t{n}\t{m.group(1)}\t{m.group(2)}")
        with open(os.path.join(OUT, name + ".tsv"), "w") as f:
            f.write(f"# lmplz -o {order}{' --discount_fallback' if fallback else ''} < "
                    f"{' '.join(files)}; query -v sentence < {held_out}\n")
            f.write("\n".join(lines) + "\n")
        print(name, counts, file=sys.stderr)


def read_arpa(path):
    counts, sums, grams = [], [], []
    order = 0
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        line = line.rstrip("\n")
        m = re.match(r"^ngram (\d+)=(\d+)$", line)
        if m:
            counts.append(int(m.group(2)))
            sums.append([0.0, 0.0])
            continue
        m = re.match(r"^\\(\d+)-grams:$", line)
        if m:
            order = int(m.group(1))
            continue
        if order == 0 or not line or line.startswith("\\"):
            continue
        f = line.split("\t")
        words = f[1].split(" ")
        sums[order - 1][0] += float(f[0])
        if len(f) > 2:
            sums[order - 1][1] += float(f[2])
        h = name_hash(w.encode("utf-8", "surrogateescape").decode("utf-8", "replace") for w in words)
        if h.startswith("0"):
            grams.append("\t".join(["gram", h, f[0]] + f[2:3]))
    return counts, sums, grams


if __name__ == "__main__":
    main()
