"""Policy files: a fixed policy as JSON {"format": POLICY_FORMAT, "game":
..., "policy": {infostate: {action: prob}}} (`save_policy`, `load_policy`),
an opponent spec of its own (PATH.json).
"""

from __future__ import annotations

import json
import os
from typing import Mapping

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

POLICY_FORMAT = "open_spiel_sog.policy/1"


class PolicyFileError(ValueError):
  """A policy file that cannot be used (missing, corrupt, another game)."""


def _table_of(game: pyspiel.Game, table) -> dict[str, dict[int, float]]:
  if isinstance(table, os_policy.TabularPolicy):
    out = {}
    for key, index in table.state_lookup.items():
      legal = np.nonzero(table.legal_actions_mask[index])[0]
      out[key] = {int(a): float(table.action_probability_array[index, a])
                  for a in legal}
    return out
  if isinstance(table, os_policy.Policy):
    return _table_of(game, table.to_tabular())
  if not isinstance(table, Mapping):
    raise TypeError(f"save_policy: the policy must be a mapping "
                    "{infostate: {action: prob}} or an OpenSpiel "
                    f"policy.Policy, got {type(table).__name__}")
  return {str(k): {int(a): float(p) for a, p in dict(row).items()}
          for k, row in table.items()}


def save_policy(path: str, game: pyspiel.Game | str, table) -> None:
  """Writes `table` ({infostate: {action: prob}}, or an OpenSpiel Policy) as
  {"format": POLICY_FORMAT, "game": str(game), "policy": {...}}."""
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  table = _table_of(game, table)
  data = {"format": POLICY_FORMAT, "game": str(game),
          "policy": {k: {str(a): p for a, p in row.items()}
                     for k, row in table.items()}}
  directory = os.path.dirname(os.path.abspath(path))
  os.makedirs(directory, exist_ok=True)
  tmp = f"{path}.tmp{os.getpid()}"
  with open(tmp, "w") as f:
    json.dump(data, f)
  os.replace(tmp, path)


def load_policy(path: str, game: pyspiel.Game | str
                ) -> dict[str, dict[int, float]]:
  """The {infostate: {action: prob}} table saved at `path` for `game`."""
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  if not os.path.exists(path):
    raise PolicyFileError(f"policy file {path!r} does not exist")
  try:
    with open(path) as f:
      data = json.load(f)
  except (OSError, UnicodeDecodeError, ValueError) as e:
    raise PolicyFileError(f"policy file {path!r} is not readable JSON "
                          f"(corrupt?): {e}") from None
  if not isinstance(data, dict) or data.get("format") != POLICY_FORMAT:
    found = data.get("format") if isinstance(data, dict) else None
    raise PolicyFileError(f"{path!r} is not a policy file: format {found!r}, "
                          f"expected {POLICY_FORMAT!r}")
  if data.get("game") != str(game):
    raise PolicyFileError(f"policy file {path!r} is for {data.get('game')}, "
                          f"not {game}")
  policy = data.get("policy")
  if not isinstance(policy, dict):
    raise PolicyFileError(f"policy file {path!r}: 'policy' must be an object "
                          "{infostate: {action: prob}}")
  try:
    return {str(k): {int(a): float(p) for a, p in row.items()}
            for k, row in policy.items()}
  except (AttributeError, TypeError, ValueError) as e:
    raise PolicyFileError(f"policy file {path!r}: bad entry in 'policy' "
                          f"({e}); expected {{infostate: {{action: prob}}}}"
                          ) from None
