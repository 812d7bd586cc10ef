"""Joint policy search for common-payoff games (DESIGN.md section 13).

Tian, Gong and Jiang, "Joint Policy Search for Multi-agent Collaboration
with Imperfect Information" (NeurIPS 2020). For a two-player game whose
players share one payoff (OpenSpiel's IDENTICAL utility), JPS improves a
joint policy sigma by one-hot changes at chains of infostates
I_1 -> I_2 in succ(I_1, a_1) -> ... (at most `depth` of them), scoring every
candidate by Theorem 1's policy-change density instead of re-evaluating the
game:

  v(sigma') - v(sigma) = sum over changed I of sum over h in I of rho(h),
  rho(h) = pi^sigma'(h) * (sum_a sigma'(I, a) v^sigma(h a) - v^sigma(h)),

with pi the total reach (chance and both players) and v^sigma the values of
the current policy: one top-down pass of reach and one bottom-up pass of
values per iteration (vectorised per depth), then a depth-first search over
chains (Algorithm 1) whose candidates at each step are scored together.
pi^sigma'(h) is the product of the edge probabilities on h's path with the
changed infostates' one-hot choices in place (back-tracing to the root), so
a policy with zeros never divides. The best positive chain is applied; the
value never falls (Theorem 2).

The game is enumerated into flat history arrays (`GameArrays`), so this is
for games of up to a few hundred thousand histories (the paper's tabular
games). `samples` > 0 is the sample-based variant (the paper's Table 2):
each candidate infostate's density is estimated from that many of its
histories drawn uniformly with replacement; it loses Theorem 2's guarantee,
so the best policy seen is kept. `cfr` is the CFR baseline the paper starts
from (CFR1k): vanilla CFR with simultaneous regret-matching updates from a
random initial policy, on the same arrays.

Modules: `game_arrays` (the enumerated game, `check_game`), `search`
(`JointPolicySearch`, `BruteForceSearch`, `policy_change`, `purify`,
`search_from_starts`) and `cfr_baseline` (`cfr`).
"""

from open_spiel_sog.algorithms.jps.cfr_baseline import cfr
from open_spiel_sog.algorithms.jps.game_arrays import check_game
from open_spiel_sog.algorithms.jps.game_arrays import GameArrays
from open_spiel_sog.algorithms.jps.search import BruteForceSearch
from open_spiel_sog.algorithms.jps.search import JointPolicySearch
from open_spiel_sog.algorithms.jps.search import JPSConfig
from open_spiel_sog.algorithms.jps.search import JPSResult
from open_spiel_sog.algorithms.jps.search import policy_change
from open_spiel_sog.algorithms.jps.search import purify
from open_spiel_sog.algorithms.jps.search import search_from_starts

__all__ = [
    "BruteForceSearch",
    "cfr",
    "check_game",
    "GameArrays",
    "JointPolicySearch",
    "JPSConfig",
    "JPSResult",
    "policy_change",
    "purify",
    "search_from_starts",
]
