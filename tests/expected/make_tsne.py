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
"kl" is kl_divergence_, "n_iter" n_iter_, "trust5" trustworthiness(X, embedding, 5);
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
from sklearn.manifold import TSNE, trustworthiness
from sklearn.manifold._t_sne import _joint_probabilities
from sklearn.metrics import pairwise_distances


def run(x, perplexity):
    t = TSNE(
        n_components=2,
        perplexity=perplexity,
        early_exaggeration=12.0,
        learning_rate="auto",
        max_iter=1000,
        init="pca",
        method="exact",
        random_state=0,
    )
    y = t.fit_transform(x)
    return {
        "perplexity": perplexity,
        "x": x.tolist(),
        "kl": float(t.kl_divergence_),
        "n_iter": int(t.n_iter_),
        "trust5": float(trustworthiness(x, y, n_neighbors=5)),
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
        print(k, out[k]["kl"], out[k]["n_iter"], out[k]["trust5"])


if __name__ == "__main__":
    main()
