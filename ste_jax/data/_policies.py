"""Outcome policies: how ties, both-bad votes, soft outcomes, strong verdicts and two-order judges
become comparisons.

Every choice a loader makes about the *meaning* of a label is one field of :class:`OutcomePolicy`,
with a documented default, and the load report lists the policy it applied. A row that a policy
excludes (``tie="drop"``, an inconsistent two-order judgment under ``order_swap="consistent"``)
is not lost: it is listed in ``LoadReport.rejected`` with reason ``"dropped by policy"``.
"""

import dataclasses

TIE_POLICIES = ("half", "drop")
FRACTIONAL_POLICIES = ("soft", "weights", "round")
ORDER_SWAP_POLICIES = ("auto", "tie", "consistent", "separate")


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

  tie: str = "half"
  both_bad: str = "half"
  fractional: str = "soft"
  strong_weight: float = 3.0
  order_swap: str = "auto"

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


def as_policy(policy) -> OutcomePolicy:
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
