"""Depth-limited solving with multi-valued states (DESIGN.md section 12).

Brown, Sandholm and Amos, "Depth-Limited Solving for Imperfect-Information
Games" (NeurIPS 2018). A searcher solves the public tree from a root down to
a frontier (the *trunk*) against an opponent who, at each frontier public
state and per opponent infostate there, chooses one of k continuation
strategies for the rest of the game; below the frontier the searcher plays a
fixed blueprint. The opponent's choice makes the searcher robust to the
opponent adapting below the depth limit (Proposition 1: with every pure
continuation the trunk strategy is the one of a full solve with the searcher
frozen to the blueprint below the frontier).

* Leaf values. For frontier public state F, continuation j and each pair of
  infostates (a of the searcher, b of the opponent) at F: W_F[a, b, j], the
  sum over F's histories in (a, b) of chance reach times the searcher's
  expected utility with the searcher on the blueprint and the opponent on
  strategy j below F (later chance included). They come from F's subtree
  compiled as a `PublicTree`: one reach pass per player (root ranges one)
  and the terminal payoff matrix summed onto root infostate pairs.
* The augmented game. Exactly the trunk's CFR+ (`SequenceCFR`: the same
  reach and value passes), plus one regret-matching+ table of shape
  [opponent infostates at the frontier, k] for the opponent's choice, whose
  counterfactual values are the leaf values weighted by the searcher's
  reach. The choice is per opponent infostate, never per history.
* Strategy sets. "bias": the blueprint, then the blueprint with one action
  (class) scaled by `bias_factor` and renormalised, one per class.
  "self_generative": the blueprint, then repeatedly OpenSpiel's best response
  of the opponent to the searcher's current composite strategy (its trunk
  solution, the blueprint elsewhere), re-solving after each addition.
* Frontiers. "depth": the public states `depth` public transitions below the
  root (chance steps included). "round": the chance public states below the
  root that follow a decision (a new betting round, e.g. Leduc's public
  card); a game with none is solved to its end.
* Re-solving. A subgame rooted past the game's root takes the searcher's
  range there and, for the opponent, the safe re-solving gadget (Burch,
  Johanson and Bowling; DESIGN.md section 6 with alpha = 1): per opponent
  root infostate, terminate with a stored counterfactual value or follow
  into the subgame, chosen by regret matching+.

`depth_limited_exploitability` scores the composite of both seats' trunk
strategies (blueprint below the frontier) with OpenSpiel's exploitability.

Modules: `policies` (the blueprint, policy tables, the bias set's
continuation strategies), `trunk` (the trunk, its frontier subtrees and leaf
values), `solver` (the augmented CFR+, `DepthLimitedSolver`, `Solution`),
`resolving` (`DepthLimitedResolver`) and `whole_game` (the composite
policy's exploitability, the games it takes, Proposition 1's references).
"""

from open_spiel_sog.algorithms.dls.policies import BiasedPolicy
from open_spiel_sog.algorithms.dls.policies import compute_blueprint
from open_spiel_sog.algorithms.dls.policies import DictPolicy
from open_spiel_sog.algorithms.dls.policies import policy_dict
from open_spiel_sog.algorithms.dls.policies import PolicyFn
from open_spiel_sog.algorithms.dls.resolving import DepthLimitedResolver
from open_spiel_sog.algorithms.dls.solver import DepthLimitedSolver
from open_spiel_sog.algorithms.dls.solver import DLSConfig
from open_spiel_sog.algorithms.dls.solver import Solution
from open_spiel_sog.algorithms.dls.solver import STRATEGY_SETS
from open_spiel_sog.algorithms.dls.trunk import FRONTIERS
from open_spiel_sog.algorithms.dls.trunk import trunk_public_states
from open_spiel_sog.algorithms.dls.whole_game import check_game
from open_spiel_sog.algorithms.dls.whole_game import composite_policy
from open_spiel_sog.algorithms.dls.whole_game import depth_limited_exploitability
from open_spiel_sog.algorithms.dls.whole_game import exploitability
from open_spiel_sog.algorithms.dls.whole_game import frozen_blueprint_solve
from open_spiel_sog.algorithms.dls.whole_game import pure_strategies
from open_spiel_sog.algorithms.dls.whole_game import solve_both_seats

__all__ = [
    "BiasedPolicy",
    "check_game",
    "composite_policy",
    "compute_blueprint",
    "depth_limited_exploitability",
    "DepthLimitedResolver",
    "DepthLimitedSolver",
    "DictPolicy",
    "DLSConfig",
    "exploitability",
    "FRONTIERS",
    "frozen_blueprint_solve",
    "policy_dict",
    "PolicyFn",
    "pure_strategies",
    "Solution",
    "solve_both_seats",
    "STRATEGY_SETS",
    "trunk_public_states",
]
