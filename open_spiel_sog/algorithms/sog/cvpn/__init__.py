"""The counterfactual value-and-policy network (CVPN; DESIGN.md section 7).

f(beta) = (v, p): MLPs over [public features, player 0's normalised range
over slots, player 1's normalised range over slots] that predicts, for every
slot of both players, the counterfactual value of the infostate in that slot
(for the normalised belief, in units of the game's largest absolute utility
divided by the player's number of slots)
and policy logits over the game's actions. The prior is the acting player's
softmax over legal actions at temperature `prior_temperature`.

  encoder         queries and targets to fixed-width arrays (`Encoder`,
                  `Batch`)
  network         the network, its losses and inference (`CVPN`; its Haiku
                  MLP, optimiser and jitted functions are
                  `algorithms.networks`', shared with ISMCTS-BR's network)
  checkpoints     `save_checkpoint`, `read_checkpoint`, `load_checkpoint`,
                  `average_checkpoints`
  shared          the networks shared within a process (`shared_network`)
                  and the shipped ones (`shipped_checkpoint`)
  value_function  the value function GT-CFR and the sog bot use
                  (`CVPNValueFunction`)
  tokens          the token input (DESIGN.md section 14): one token per
                  infostate of an exact or sampled public state, no walk of
                  the game (`TokenEncoder`, `TokenBatch`)
  token_network   the token network and its value function (`TokenCVPN`,
                  `TokenValueFunction`)
  factory         networks, value functions and batches by input
                  (`make_network`, `value_function_for`, ...)

Losses: Huber on values (masked to the slots present in the public state),
cross-entropy on the acting player's policy (masked to present slots and legal
actions), weighted by `value_weight` and `policy_weight`. Learning rate:
alpha_t = alpha_0 * d^(t / T_decay) (Table S2), Adam or SGD with momentum
(`NetworkConfig`).
"""

from open_spiel_sog.algorithms.networks import CheckpointError
from open_spiel_sog.algorithms.networks import NetworkConfig
from open_spiel_sog.algorithms.networks import OPTIMIZERS
from open_spiel_sog.algorithms.networks import same_game
from open_spiel_sog.algorithms.networks import settings_from_json
from open_spiel_sog.algorithms.networks import settings_to_json
from open_spiel_sog.algorithms.networks import unflatten
from open_spiel_sog.algorithms.sog.cvpn import checkpoints
from open_spiel_sog.algorithms.sog.cvpn import encoder
from open_spiel_sog.algorithms.sog.cvpn import network
from open_spiel_sog.algorithms.sog.cvpn import shared
from open_spiel_sog.algorithms.sog.cvpn import value_function
from open_spiel_sog.algorithms.sog.cvpn.checkpoints import average_checkpoints
from open_spiel_sog.algorithms.sog.cvpn.checkpoints import CHECKPOINT_FORMAT
from open_spiel_sog.algorithms.sog.cvpn.checkpoints import load_checkpoint
from open_spiel_sog.algorithms.sog.cvpn.checkpoints import read_checkpoint
from open_spiel_sog.algorithms.sog.cvpn.checkpoints import save_checkpoint
from open_spiel_sog.algorithms.sog.cvpn.encoder import Batch
from open_spiel_sog.algorithms.sog.cvpn.encoder import Encoder
from open_spiel_sog.algorithms.sog.cvpn.network import CVPN
from open_spiel_sog.algorithms.sog.cvpn.shared import clear_shared_caches
from open_spiel_sog.algorithms.sog.cvpn.shared import clear_shared_networks
from open_spiel_sog.algorithms.sog.cvpn.shared import DATA_DIR
from open_spiel_sog.algorithms.sog.cvpn.shared import shared_network
from open_spiel_sog.algorithms.sog.cvpn.shared import shipped_checkpoint
from open_spiel_sog.algorithms.sog.cvpn.shared import shipped_checkpoint_name
from open_spiel_sog.algorithms.sog.cvpn.shared import shipped_games
from open_spiel_sog.algorithms.sog.cvpn.value_function import CVPNValueFunction
from open_spiel_sog.algorithms.sog.cvpn import factory
from open_spiel_sog.algorithms.sog.cvpn import token_network
from open_spiel_sog.algorithms.sog.cvpn import tokens
from open_spiel_sog.algorithms.sog.cvpn.factory import batch_from_dict
from open_spiel_sog.algorithms.sog.cvpn.factory import concatenate
from open_spiel_sog.algorithms.sog.cvpn.factory import make_encoder
from open_spiel_sog.algorithms.sog.cvpn.factory import make_network
from open_spiel_sog.algorithms.sog.cvpn.value_function import value_function_for
from open_spiel_sog.algorithms.sog.cvpn.token_network import TokenCVPN
from open_spiel_sog.algorithms.sog.cvpn.token_network import TokenValueFunction
from open_spiel_sog.algorithms.sog.cvpn.tokens import TokenBatch
from open_spiel_sog.algorithms.sog.cvpn.tokens import TokenEncoder
from open_spiel_sog.algorithms.networks.settings import INPUT_CHOICES
from open_spiel_sog.algorithms.networks.settings import INPUTS

__all__ = [
    "average_checkpoints",
    "Batch",
    "batch_from_dict",
    "concatenate",
    "factory",
    "INPUT_CHOICES",
    "INPUTS",
    "make_encoder",
    "make_network",
    "token_network",
    "TokenBatch",
    "TokenCVPN",
    "TokenEncoder",
    "tokens",
    "TokenValueFunction",
    "value_function_for",
    "CHECKPOINT_FORMAT",
    "CheckpointError",
    "checkpoints",
    "clear_shared_caches",
    "clear_shared_networks",
    "CVPN",
    "CVPNValueFunction",
    "DATA_DIR",
    "Encoder",
    "encoder",
    "load_checkpoint",
    "network",
    "NetworkConfig",
    "OPTIMIZERS",
    "read_checkpoint",
    "same_game",
    "save_checkpoint",
    "settings_from_json",
    "settings_to_json",
    "shared",
    "shared_network",
    "shipped_checkpoint",
    "shipped_checkpoint_name",
    "shipped_games",
    "unflatten",
    "value_function",
]
