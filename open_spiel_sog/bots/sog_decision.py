"""What a sog decision leaves behind: the searched policy, value and belief
(`Decision`, `SoGBot.last_decision`), and the played policy's threshold
(`threshold_policy`)."""

from __future__ import annotations

import dataclasses

from open_spiel_sog.algorithms.sog import beliefs

@dataclasses.dataclass(frozen=True)
class Decision:
  """What the bot's latest decision searched (`SoGBot.last_decision`).

  Attributes:
    policy: {action: probability}, the searched policy at the bot's
      infostate, before `purify` or `policy_threshold`.
    value: the bot's expected return at its infostate under the searched
      profile.
    belief: its belief over the histories of its infostate.
    opponent_reach: {opponent infostate key: its reach} at the histories of
      the belief (the public-state path's keys are the game's
      information_state_string where it has one; the anchored path's are
      `public_state.HistoryKeys`).
  """
  policy: dict[int, float]
  value: float
  belief: beliefs.Belief
  opponent_reach: dict[str, float]


def threshold_policy(policy: dict[int, float], threshold: float
                     ) -> dict[int, float]:
  """`policy` with the probabilities below `threshold` set to 0 and the
  rest renormalised; the most probable action (the first of equals) is
  always kept. A threshold of 0 returns `policy` unchanged."""
  if threshold <= 0.0 or not policy:
    return policy
  best = max(policy, key=policy.get)
  kept = {a: (p if p >= threshold or a == best else 0.0)
          for a, p in policy.items()}
  total = sum(kept.values())
  if not total > 0.0:
    return policy
  return {a: p / total for a, p in kept.items()}
