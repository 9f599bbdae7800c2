#!/usr/bin/env python3
"""Reference t-SNE runs for tests/it/tsne.rs, computed with scikit-learn.

Two inputs, stored in tests/expected/tsne.json with what scikit-learn made of them:

* "blobs": 90 points in 8 dimensions, three Gaussian clusters (numpy seed 0, rounded to
  float32), perplexity 15. Also the condensed joint probabilities P of
  sklearn.manifold._t_sne._joint_probabilities (the perplexity calibration).
* "digits": the first 300 images of scikit-learn's bundled digits data set (8x8 grey
  levels 0-16, a public data set shipped with the package), perplexity 30.

Each run is TSNE(method="exact", init="pca", learning_rate="auto", max_iter=1000,
early_exaggeration=12, random_state=0), the settings tstlab's src/stats/tsne.rs follows;
"kl" is kl_divergence_, "n_iter" n_iter_, "trust5" trustworthiness(X, embedding, 5).
"kl_runs" and "trust5_runs": that run and two more from the same PCA start in float64 (X as
float64, init the scaled PCA array: once from the float64 PCA, once from the float32 one),
the spread of scikit-learn's own results under rounding of the start;
"trust5_first_two" is the trustworthiness of the blobs' own first two coordinates taken as
a map (a check of the formula alone).

Run from the project root:  python3 tests/expected/make_tsne.py
"""
import json
import platform
from pathlib import Path

import numpy as np
import sklearn
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.manifold import TSNE, trustworthiness
from sklearn.manifold._t_sne import _joint_probabilities
from sklearn.metrics import pairwise_distances


def fit(x, perplexity, init):
    t = TSNE(
        n_components=2,
        perplexity=perplexity,
        early_exaggeration=12.0,
        learning_rate="auto",
        max_iter=1000,
        init=init,
        method="exact",
        random_state=0,
    )
    y = t.fit_transform(x)
    return float(t.kl_divergence_), int(t.n_iter_), float(trustworthiness(x, y, n_neighbors=5))


def run(x, perplexity):
    kl, n_iter, trust = fit(x, perplexity, "pca")
    # t-SNE's path depends on the last bits of its start: the same PCA start rounded to float32
    # (scikit-learn's default, whose descent then runs in float32), and in float64 (as tstlab
    # computes) from the float32 and from the float64 PCA, give the spread of scikit-learn's
    # own results on this input.
    pca64 = PCA(n_components=2, random_state=0).fit_transform(x.astype(np.float64))
    pca32 = PCA(n_components=2, random_state=0).fit_transform(x).astype(np.float32).astype(np.float64)
    runs = [(kl, trust)]
    for pca in (pca64, pca32):
        init = pca / np.std(pca[:, 0]) * 1e-4
        k, _, t = fit(x.astype(np.float64), perplexity, init)
        runs.append((k, t))
    return {
        "perplexity": perplexity,
        "x": x.tolist(),
        "kl": kl,
        "n_iter": n_iter,
        "trust5": trust,
        "kl_runs": [r[0] for r in runs],
        "trust5_runs": [r[1] for r in runs],
    }


def main():
    rng = np.random.default_rng(0)
    centres = rng.normal(0.0, 4.0, size=(3, 8))
    blobs = np.concatenate([c + rng.normal(0.0, 1.0, size=(30, 8)) for c in centres]).astype(np.float32)
    out = {
        "made_by": f"tests/expected/make_tsne.py with scikit-learn {sklearn.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}",
        "blobs": run(blobs, 15.0),
        "digits": run(load_digits().data[:300].astype(np.float32), 30.0),
    }
    d = pairwise_distances(blobs.astype(np.float64), squared=True)
    out["blobs"]["p_condensed"] = _joint_probabilities(d, 15.0, 0).tolist()
    out["blobs"]["trust5_first_two"] = float(trustworthiness(blobs, blobs[:, :2], n_neighbors=5))
    path = Path(__file__).with_name("tsne.json")
    path.write_text(json.dumps(out) + "\n")
    for k in ("blobs", "digits"):
        print(k, out[k]["kl_runs"], out[k]["n_iter"], out[k]["trust5_runs"])


if __name__ == "__main__":
    main()
