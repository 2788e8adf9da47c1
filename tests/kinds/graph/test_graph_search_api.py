"""/api/graph/search's pages: ``offset`` and ``limit`` walk one order of every match (the find
box steps through all of them, a page at a time, while the count says the total)."""

from __future__ import annotations


def _chain(client) -> str:
    return next(m["id"] for m in client.get("/api/graph/models").json()["models"]
                if m["name"] == "chain.onnx")


def test_pages_partition_every_match(client):
    chain = _chain(client)
    whole = client.get("/api/graph/search", params={"model": chain, "q": "block", "limit": 5000}).json()
    assert whole["total"] == len(whole["matches"]) == 1001  # its 1,000 ops and its output
    pages = [client.get("/api/graph/search",
                        params={"model": chain, "q": "block", "limit": 300, "offset": offset}).json()
             for offset in (0, 300, 600, 900)]
    assert [len(p["matches"]) for p in pages] == [300, 300, 300, 101]
    assert all(p["total"] == 1001 for p in pages)
    assert [m["id"] for p in pages for m in p["matches"]] == [m["id"] for m in whole["matches"]]
    past = client.get("/api/graph/search", params={"model": chain, "q": "block", "offset": 1001}).json()
    assert past["total"] == 1001 and past["matches"] == []


def test_first_page_is_the_best_ranked(client):
    """A page is a slice of the ranking of every match, not of the first ones found: exact
    op-type matches (the chain's 400 Adds) come before name matches, on the first page too."""
    chain = _chain(client)
    first = client.get("/api/graph/search", params={"model": chain, "q": "add", "limit": 10}).json()
    whole = client.get("/api/graph/search", params={"model": chain, "q": "add", "limit": 5000}).json()
    assert [m["id"] for m in first["matches"]] == [m["id"] for m in whole["matches"][:10]]
    assert {m["op_type"] for m in first["matches"]} == {"Add"}
    # "r": in the model's order, nodes matched by name (act/Relu, residual/Add) and by a
    # tensor name (the MatMul fed by .../r) alternate; ranked, the 400 name matches come
    # first, so a first page made of the first ten found would hold tensor matches
    first = client.get("/api/graph/search", params={"model": chain, "q": "r", "limit": 10}).json()
    whole = client.get("/api/graph/search", params={"model": chain, "q": "r", "limit": 5000}).json()
    assert first["total"] == whole["total"] > 10
    assert [m["id"] for m in first["matches"]] == [m["id"] for m in whole["matches"][:10]]
    assert [m["match"] for m in first["matches"]] == ["name"] * 10


def test_small_answers_are_unchanged_and_bad_offsets_refused(client):
    body = client.get("/api/graph/search", params={"model": "file:0", "q": "gemm"}).json()
    assert body["total"] == 1 and "offset" not in body
    assert client.get("/api/graph/search",
                      params={"model": "file:0", "q": "conv", "offset": "-1"}).status_code == 400
    assert client.get("/api/graph/search",
                      params={"model": "file:0", "q": "conv", "offset": "x"}).status_code == 400
