"""What the package's networks share: the CVPN (`algorithms.sog.cvpn`) and
ISMCTS-BR's value-and-prior network (`algorithms.ismcts_br`).

  settings     NetworkConfig (widths, losses, optimiser) and its JSON form
  mlp          the two-headed MLP in Haiku (the only `hk.transform`), its
               optimiser, jitted functions and padded inference
  checkpoints  the .npz checkpoint files, their errors and the save /
               load both MLP networks share (CheckpointedNetwork)
  policy_value a perfect-information game's policy-value network

jax, haiku and optax are imported inside functions: importing this package
imports none of them.
"""

from open_spiel_sog.algorithms.networks.checkpoints import CheckpointedNetwork
from open_spiel_sog.algorithms.networks.checkpoints import CheckpointError
from open_spiel_sog.algorithms.networks.checkpoints import flatten
from open_spiel_sog.algorithms.networks.checkpoints import read_npz
from open_spiel_sog.algorithms.networks.checkpoints import same_game
from open_spiel_sog.algorithms.networks.checkpoints import unflatten
from open_spiel_sog.algorithms.networks.checkpoints import write_npz
from open_spiel_sog.algorithms.networks.mlp import cross_entropy
from open_spiel_sog.algorithms.networks.mlp import learning_rate_schedule
from open_spiel_sog.algorithms.networks.mlp import masked_softmax
from open_spiel_sog.algorithms.networks.mlp import padded_call
from open_spiel_sog.algorithms.networks.mlp import padded_predict
from open_spiel_sog.algorithms.networks.mlp import TwoHeadedMLP
from open_spiel_sog.algorithms.networks.settings import check_widths
from open_spiel_sog.algorithms.networks.settings import NetworkConfig
from open_spiel_sog.algorithms.networks.settings import OPTIMIZERS
from open_spiel_sog.algorithms.networks.settings import settings_from_json
from open_spiel_sog.algorithms.networks.settings import settings_to_json
from open_spiel_sog.algorithms.networks.settings import TORSOS

__all__ = [
    "CheckpointedNetwork",
    "CheckpointError",
    "check_widths",
    "cross_entropy",
    "flatten",
    "learning_rate_schedule",
    "masked_softmax",
    "NetworkConfig",
    "OPTIMIZERS",
    "padded_call",
    "padded_predict",
    "read_npz",
    "same_game",
    "settings_from_json",
    "settings_to_json",
    "TORSOS",
    "TwoHeadedMLP",
    "unflatten",
    "write_npz",
]
