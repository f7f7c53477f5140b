"""Unfold a gdrcheck --json report's folded results (schema 2.6).

A result with "subjects" stands for every pair listed there (core/fold.c:
equal but for each pair's own names); unfold() gives one result per
subject, the others copies with their own subject and without "subjects",
for readers that look results up by (gate, subject). Reports from 2.5 and
before pass through unchanged.

    import unfold; doc = unfold.unfold(json.load(f))
"""
import copy


def results(doc):
    """Every result, one per subject, in report order."""
    out = []
    for r in doc.get("results", []):
        subs = r.get("subjects")
        if not subs:
            out.append(r)
            continue
        for s in subs:
            x = {k: v for k, v in r.items() if k != "subjects"}
            x["subject"] = s
            out.append(x)
    return out


def unfold(doc):
    """@doc with its results unfolded (a shallow copy; results new)."""
    doc = copy.copy(doc)
    doc["results"] = results(doc)
    return doc
