"""The answer line of a core table (``ste_jax.evaluate._answer``): the four cases, on hand-built
columns."""

import dataclasses

import numpy as np
import pytest

from ste_jax.evaluate import TopAnswer, top_answer
from ste_jax.evaluate._answer import STATUSES

NAMES = ["a", "b", "c", "d", "e"]
# a beat b 2-1; a and c tied once (1/2 each); b beat c 3-0; d and e never played.
WINS = np.zeros((5, 5))
WINS[0, 1], WINS[1, 0] = 2.0, 1.0
WINS[0, 2], WINS[2, 0] = 0.5, 0.5
WINS[1, 2] = 3.0
ORDER = [0, 1, 2, 3, 4]


def columns(hard, p, verdict):
  return {
    "hard_tc": np.array(hard, bool),
    "p_tc": np.array(p, float),
    "tc_verdict": np.array(verdict, dtype=object),
  }


def answer(cols, *, replicas=200, rows=3, order=ORDER):
  return top_answer(cols, NAMES, order, WINS, confidence=0.95, num_replicas=replicas, rows=rows)


def test_certified_names_the_in_agents_in_table_order_and_no_evidence_line():
  a = answer(
    columns([1, 1, 0, 0, 0], [0.99, 0.98, 0.0, 0.0, 0.0], ["in", "in", "out", "out", "out"]),
    order=[1, 0, 2, 3, 4],
  )
  assert a.status == "certified"
  assert a.members == ("b", "a") and a.shares == (0.98, 0.99) and a.out == 3 and a.undetermined == 0
  lines = a.lines()
  assert len(lines) == 1 and lines[0].startswith(
    "answer: the Top Cycle is {b, a}, certified at 0.95"
  )


def test_partly_certified_lists_the_undetermined_by_share():
  a = answer(
    columns(
      [1, 0, 0, 0, 0],
      [1.0, 0.2, 0.6, 0.1, 0.0],
      ["in", "undetermined", "undetermined", "undetermined", "out"],
    )
  )
  assert a.status == "partly certified"
  assert a.members == ("a",) and a.others == ("c", "b", "d") and a.other_shares == (0.6, 0.2, 0.1)
  assert (a.undetermined, a.out) == (3, 1)
  assert (
    "3 agents undetermined (most often in the 200 replicas' Top Cycles, by P(TC): "
    "c 0.60, b 0.20, d 0.10), 1 certified out"
  ) in a.lines()[0]


def test_not_settled_names_the_most_frequent_agents_with_their_shares():
  # b is in 80% of the replicas' Top Cycles, but nothing is certified: no "likely" claim.
  a = answer(columns([0, 1, 0, 0, 0], [0.5, 0.8, 0.49, 0.0, 0.3], ["undetermined"] * 5))
  assert a.status == "not settled"
  assert a.members == ("b", "a", "c") and a.shares == (0.8, 0.5, 0.49) and a.others == ()
  assert a.lines()[0] == (
    "answer: not settled at 0.95: no agent is certified in the Top Cycle; most often in the "
    "hard Top Cycles of the 200 bootstrap replicas, by P(TC): b 0.80, a 0.50, c 0.49 "
    "(shares of replicas, not probabilities of membership)"
  )
  # Evidence: b against a and c (the first 3 rows): 1-2 and 3-0, so 4-2 in 6 games.
  assert (a.met, a.opponents, a.wins, a.games) == (2, 2, 4.0, 6.0)
  assert (a.pairs_compared, a.pairs, a.member_pairs_compared, a.member_pairs) == (3, 3, 3, 3)
  assert a.lines()[1] == (
    "direct records: b met 2 of the 2 other agents of the first 3 rows, 4-2 in all (ties 1/2); "
    "3 of 3 pairs among the first 3 rows compared; 3 of 3 among the named agents; comparing the "
    "open pairs decides the top (ste-jax suggest proposes them)"
  )


def test_not_settled_counts_unmet_pairs_and_breaks_ties_by_table_order():
  # The most frequent agent, d, is not among the first 3 rows and never played: met 0 of 3.
  a = answer(columns([1, 0, 0, 0, 0], [0.1, 0.1, 0.0, 0.3, 0.2], ["undetermined"] * 5))
  assert a.status == "not settled"
  assert a.members == ("d", "e", "a")  # a (row 1) before b (row 2) at equal shares
  assert (a.met, a.opponents, a.wins, a.games) == (0, 3, 0.0, 0.0)
  assert a.lines()[1].startswith(
    "direct records: d met 0 of the 3 other agents of the first 3 rows; "
  )
  assert "0 of 3 among the named agents" in a.lines()[1]  # d, e, a: only a played (not with d or e)


def test_point_estimate_without_replicas():
  a = answer(
    columns([0, 1, 1, 0, 0], [np.nan] * 5, [""] * 5), replicas=0, rows=10, order=[2, 1, 0, 3, 4]
  )
  assert a.status == "point estimate"
  assert a.members == ("c", "b") and np.isnan(a.shares).all() and a.others == ()
  assert a.rows == 5 and a.opponents == 4
  # c against b, a (d, e never met): 0-3 and 0.5-0.5.
  assert (a.met, a.wins, a.games) == (2, 0.5, 4.0)
  assert (
    a.lines()[0] == "answer (point estimate, no bootstrap: how sure is not measured): "
    "the hard Top Cycle is {c, b}"
  )
  d = a.to_dict()
  assert d["shares"] == [None, None] and d["members"] == ["c", "b"] and d["lines"] == a.lines()


def test_one_agent_has_no_evidence_line():
  cols = {
    "hard_tc": np.array([True]),
    "p_tc": np.array([1.0]),
    "tc_verdict": np.array(["in"], dtype=object),
  }
  a = top_answer(cols, ["solo"], [0], np.zeros((1, 1)), confidence=0.9, num_replicas=10)
  assert a.status == "certified" and a.lines() == [
    "answer: the Top Cycle is {solo}, certified at 0.9 "
    "(every other agent is certified out, 10 bootstrap replicas)"
  ]
  cols["tc_verdict"] = np.array([""], dtype=object)
  a = top_answer(cols, ["solo"], [0], np.zeros((1, 1)), confidence=0.9, num_replicas=0)
  assert a.status == "point estimate" and len(a.lines()) == 1 and (a.pairs, a.opponents) == (0, 0)


def test_every_status_is_listed_and_bad_arguments_raise():
  assert set(STATUSES) == {"certified", "partly certified", "not settled", "point estimate"}
  assert dataclasses.fields(TopAnswer)[0].name == "status"
  cols = columns([1, 0, 0, 0, 0], [0.1] * 5, ["undetermined"] * 5)
  for rows in (0, -1, True, 2.0):
    with pytest.raises(ValueError, match="rows"):
      answer(cols, rows=rows)
  with pytest.raises(ValueError, match="order"):
    answer(cols, order=[0, 1, 2])
