"""Outcome policies: how ties, both-bad votes, soft outcomes, strong verdicts and two-order judges
become comparisons.

Every choice a loader makes about the *meaning* of a label is one field of :class:`OutcomePolicy`,
with a documented default, and the load report lists the policy it applied. A row that a policy
excludes (``tie="drop"``, an inconsistent two-order judgment under ``order_swap="consistent"``)
is not lost: it is listed in ``LoadReport.rejected`` with reason ``"dropped by policy"``.
"""

import argparse
import dataclasses
import math

from .._options import option

TIE_POLICIES = ("half", "drop")
FRACTIONAL_POLICIES = ("soft", "weights", "round")
ORDER_SWAP_POLICIES = ("auto", "tie", "consistent", "separate")


def positive_number(text: str) -> float:
  """A command-line value that must be a finite number ``> 0`` (``argparse`` type)."""
  try:
    value = float(text)
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
  if not (value > 0 and math.isfinite(value)):
    raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
  return value


@dataclasses.dataclass(frozen=True)
class OutcomePolicy:
  """How labels become outcomes. Every field has the default a user of the source tool expects.

  Attributes:
    tie: a tie (``tie``, ``A=B``, AlpacaEval preference 1.5 or 0, Inspect's equal scores):
      ``"half"`` (default; outcome 1/2, as in Chatbot Arena's and Arena-Hard's Elo fits) or
      ``"drop"`` (the row is excluded, reported as ``"dropped by policy"``).
    both_bad: a tie where the voter marked both answers bad (``tie (bothbad)``, ``both_bad``),
      decided separately from ``tie``: ``"half"`` (default, as FastChat's Elo) or ``"drop"``.
    fractional: a soft outcome strictly between a win and a tie (an AlpacaEval weighted
      preference such as 1.3): ``"soft"`` (default; one comparison with fractional outcome, the
      AlpacaEval ``win_rate``), ``"weights"`` (two comparisons, a win for each side weighted by its
      share: same pair counts, counted as decisive judgments) or ``"round"`` (to the nearest of
      win / loss, 1.5 stays a tie: AlpacaEval's ``discrete_win_rate``).
    strong_weight: weight of a strong verdict (Arena-Hard ``A>>B`` / ``B>>A``); default 3, the
      ``--weight`` default of Arena-Hard's ``show_result.py``. Must be > 0.
    order_swap: judges that judged each pair in both presentation orders (MT-Bench ``g1_winner``
      / ``g2_winner``, Arena-Hard's two games): ``"tie"`` (one comparison per record; the two
      orders agreeing give that outcome, disagreeing give a tie: FastChat's ``show_result.py``),
      ``"consistent"`` (one comparison when both orders agree, otherwise the record is dropped
      by policy), ``"separate"`` (one comparison per order: Arena-Hard's ``show_result.py``) or
      ``"auto"`` (default: ``"tie"`` for MT-Bench, ``"separate"`` for Arena-Hard).
  """

  tie: str = option(
    "half",
    flag="--ties",
    choices=TIE_POLICIES,
    help="a tie counts 1/2 to each side (half) or is dropped (drop)",
  )
  both_bad: str = option(
    "half",
    choices=TIE_POLICIES,
    help="a both-bad tie ('tie (bothbad)', both_bad): half or drop",
  )
  fractional: str = option(
    "soft",
    choices=FRACTIONAL_POLICIES,
    help="soft outcomes (AlpacaEval weighted preferences): soft (fractional outcome), "
    "weights (a win for each side weighted by its share) or round (nearest win/loss)",
  )
  strong_weight: float = option(
    3.0,
    parse=positive_number,
    help="weight of a strong Arena-Hard verdict A>>B / B>>A (3 as Arena-Hard)",
  )
  order_swap: str = option(
    "auto",
    choices=ORDER_SWAP_POLICIES,
    help="judges with two presentation orders: tie (disagreeing orders = tie), consistent (keep "
    "only agreeing orders), separate (one comparison per order) or auto (tie for "
    "mtbench, as FastChat; separate for arena-hard, as Arena-Hard)",
  )

  def __post_init__(self):
    for name, allowed in (
      ("tie", TIE_POLICIES),
      ("both_bad", TIE_POLICIES),
      ("fractional", FRACTIONAL_POLICIES),
      ("order_swap", ORDER_SWAP_POLICIES),
    ):
      value = getattr(self, name)
      if value not in allowed:
        raise ValueError(f"policy {name}={value!r}; expected one of {list(allowed)}.")
    w = self.strong_weight
    if isinstance(w, bool) or not isinstance(w, (int, float)) or not (0 < w < float("inf")):
      raise ValueError(f"policy strong_weight={w!r}; expected a finite number > 0.")

  def order_swap_for(self, schema: str) -> str:
    """The effective two-order policy for ``schema`` (resolves ``"auto"``)."""
    if self.order_swap != "auto":
      return self.order_swap
    return "separate" if schema == "arena-hard" else "tie"


def as_policy(policy: "OutcomePolicy | dict | None") -> OutcomePolicy:
  """``policy`` as an :class:`OutcomePolicy` (``None``: the defaults; a dict: its fields)."""
  if policy is None:
    return OutcomePolicy()
  if isinstance(policy, OutcomePolicy):
    return policy
  if isinstance(policy, dict):
    unknown = set(policy) - {f.name for f in dataclasses.fields(OutcomePolicy)}
    if unknown:
      raise ValueError(f"unknown policy fields {sorted(unknown)}.")
    return OutcomePolicy(**policy)
  raise ValueError(f"policy must be an OutcomePolicy, a dict or None, got {type(policy).__name__}.")
