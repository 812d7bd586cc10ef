"""ISMCTS-BR: a learned approximate best response (Timbers et al., 2020).

Fixing the policy of one player of a two-player zero-sum game leaves the
other (the responder, seat r) a single-agent problem whose optimal policies
are exactly the best responses to the fixed one. ISMCTS-BR (section 3.2 and
Algorithm 1 of "Approximate exploitability: learning a best response in large
games") learns such a policy with AlphaZero-style search and training:

* Exact beliefs. At a history h where the responder acts, its infostate s
  holds every history it cannot tell apart from h. With perfect recall,
  Pr(h' | s) is proportional to the chance reach of h' times the opponent's
  reach of h' (the product of the opponent's action probabilities along
  it; the responder's own reach is the same for every h' in s). The histories
  of s are those of h's public state with the same responder infostate
  (`PublicStateObserver`), so the posterior is exact, not an IS-MCTS
  approximation (`Posterior`).
* IS-MCTS with PUCT. Every simulation samples a history from the posterior
  of the root infostate, then descends: chance samples `chance_outcomes()`,
  the opponent samples its fixed policy, and the responder picks
  argmax_a Q(s, a) + c_puct * P(s, a) * sqrt(N(s)) / (1 + N(s, a)) at search
  nodes keyed by its information_state_string. Q is the mean backed-up
  return, normalised to [0, 1] by the game's min and max utility; an
  unvisited action takes its node's current mean value (first-play urgency
  = the parent value). The first responder infostate not in the tree is
  expanded with the network's (value, prior) and its value is backed up;
  terminals back up the responder's return. Root Dirichlet noise (AlphaZero)
  is added while training only. Because the opponent and chance are sampled
  along the way, the histories reached at deeper responder nodes follow their
  exact posteriors too.
* The network (`ValuePriorNet`): an MLP over the responder's
  information_state_tensor plus a one-hot of its seat (one network for both
  seats) to a value and a prior. Training plays episodes against the fixed
  opponent, alternating the responder's seat; every responder decision is a
  search whose visit-count policy is the prior's target, and the episode's
  return is the value target of each of its decisions (MSE + cross-entropy,
  from a sliding replay buffer). Moves are the most visited action, except
  for AlphaZero's temperature moves and an epsilon of uniformly random ones;
  after such an exploratory move the decision's and the earlier decisions'
  returns no longer measure the greedy policy, so their value targets are
  dropped (`off_policy_mask`). Each training search also gives value targets
  at the responder infostates inside its tree that at least
  `tree_value_targets` simulations passed through (their mean backed-up
  return; an extension of the paper): searches reach the infostates behind
  rarely played actions far more often than games do, and a mean over many
  sampled histories is a steadier target than one game's return. On Leduc
  against always_raise the greedy responder first reached 95% of the exact
  best response in both seats after about 7,750 games without them and 3,000
  with them (and stayed there). Exploration matters: with greedy play only,
  an action whose value the network underestimates is never tried, and the
  network never learns the values behind it (on Leduc against always_raise,
  calling a raise with a jack to hit a pair).
* Evaluation. `play` estimates the responder's value by sampling games with
  greedy (most visited) decisions; `exact_value` scores the same greedy
  policy without sampling error (OpenSpiel's `policy_value`, the responder's
  decisions tabulated on demand at the infostates the walk reaches); and
  `exact_best_response_value` is OpenSpiel's exact best response value for
  comparison. `approximate_exploitability` puts these together: the
  approximate NashConv is the sum of both seats' approximate best-response
  values (zero-sum games); scored exactly, it is a lower bound on the true
  NashConv (sampled, a lower bound up to its standard error).

Opponents (`make_opponent`): uniform_random, the poker chumps always_fold /
always_call / always_raise (kuhn_poker, leduc_poker), cfr_plus:N (OpenSpiel's
CFR+ average policy after N iterations), a policy file (`save_policy`), a
registered bot with parameters (`sog(simulations=100)`, ...), or any
OpenSpiel `policy.Policy` through `Opponent.from_policy`.

  opponents       the fixed policies and their specs (`Opponent`,
                  `make_opponent`, `register_table_opponent`)
  policy_files    policies saved as JSON (`save_policy`, `load_policy`)
  posterior       the exact beliefs (`Posterior`)
  value_prior     the value-and-prior network (`ValuePriorNet`; its MLP is
                  `algorithms.networks`', shared with the CVPN)
  config          the settings (`ISMCTSBRConfig`)
  search          the search, training and evaluation (`ISMCTSBR`)
  exploitability  `approximate_exploitability` and the exact references
"""

from open_spiel_sog.algorithms.networks import CheckpointError
from open_spiel_sog.algorithms.ismcts_br.opponents import CHUMP_GAMES
from open_spiel_sog.algorithms.ismcts_br.opponents import CHUMPS
from open_spiel_sog.algorithms.ismcts_br.opponents import make_opponent
from open_spiel_sog.algorithms.ismcts_br.opponents import MAX_CACHED_TABLES
from open_spiel_sog.algorithms.ismcts_br.opponents import Opponent
from open_spiel_sog.algorithms.ismcts_br.opponents import register_table_opponent
from open_spiel_sog.algorithms.ismcts_br.opponents import SPEC_FORMS
from open_spiel_sog.algorithms.ismcts_br.opponents import TableBuilder
from open_spiel_sog.algorithms.ismcts_br.policy_files import load_policy
from open_spiel_sog.algorithms.ismcts_br.policy_files import POLICY_FORMAT
from open_spiel_sog.algorithms.ismcts_br.policy_files import PolicyFileError
from open_spiel_sog.algorithms.ismcts_br.policy_files import save_policy
from open_spiel_sog.algorithms.ismcts_br.posterior import Posterior
from open_spiel_sog.algorithms.ismcts_br.value_prior import VALUE_PRIOR_FORMAT
from open_spiel_sog.algorithms.ismcts_br.value_prior import ValuePriorNet
from open_spiel_sog.algorithms.ismcts_br.config import ISMCTSBRConfig
from open_spiel_sog.algorithms.ismcts_br.search import Estimate
from open_spiel_sog.algorithms.ismcts_br.search import ISMCTSBR
from open_spiel_sog.algorithms.ismcts_br.search import SearchResult
from open_spiel_sog.algorithms.ismcts_br.exploitability import approximate_exploitability
from open_spiel_sog.algorithms.ismcts_br.exploitability import exact_best_response_value
from open_spiel_sog.algorithms.ismcts_br.exploitability import EXACT_MAX_HISTORIES
from open_spiel_sog.algorithms.ismcts_br.exploitability import game_is_small

__all__ = [
    "approximate_exploitability",
    "CheckpointError",
    "CHUMP_GAMES",
    "CHUMPS",
    "Estimate",
    "exact_best_response_value",
    "EXACT_MAX_HISTORIES",
    "game_is_small",
    "ISMCTSBR",
    "ISMCTSBRConfig",
    "load_policy",
    "make_opponent",
    "MAX_CACHED_TABLES",
    "Opponent",
    "POLICY_FORMAT",
    "PolicyFileError",
    "Posterior",
    "register_table_opponent",
    "save_policy",
    "SearchResult",
    "SPEC_FORMS",
    "TableBuilder",
    "VALUE_PRIOR_FORMAT",
    "ValuePriorNet",
]
