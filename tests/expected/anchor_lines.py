"""The anchors folder and its text files read as tstlab reads them (BOM and CRLF dropped, no
final empty line), shared by the make_*.py scripts beside this file."""
import os

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "anchors")


def lines(path):
    with open(os.path.join(ROOT, path), encoding="utf-8-sig", newline="") as f:
        text = f.read().replace("\r\n", "\n")
    out = text.split("\n")
    if out and out[-1] == "":
        out.pop()
    return out
