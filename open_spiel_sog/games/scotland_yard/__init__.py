"""Scotland Yard as an OpenSpiel game, registered as ``scotland_yard``: the
C++ game of the shim (`_native/scotland_yard.h`) where it loads, else the
Python game, which is always registered as ``python_scotland_yard`` too
(`native.py`). The two take the same parameters and agree move by move.

Two players: player 0 is Mr. X, the evader; player 1 is the detectives, one
team whose detectives move one at a time (sequential decisions of player 1).
Returns are +1 for the winner and -1 for the loser (zero-sum).

A round: Mr. X moves (or plays a double-move card and then moves twice), then
each detective moves in turn. Every move uses a ticket of the edge's
transport type: taxi, bus or underground; ferry edges take a black ticket,
which Mr. X can also use on any other edge to hide its type. Everyone sees the
ticket types Mr. X uses (his travel log) and, on reveal rounds, where he is;
nobody but Mr. X sees where he went otherwise. The detectives' positions and
every ticket count are public. The round limit counts travel-log entries (a
double move fills two, like the board game).

The detectives win when one of them moves onto Mr. X's station, or when Mr. X
cannot move (his neighbours are all occupied, or he has no ticket for any
edge). Mr. X wins when the detectives have finished the round in which the
travel log reaches `max_rounds`, or when no detective can move at the start
of the detectives' turn. A detective who cannot move (no ticket for any free
edge) is skipped. Detectives never move onto each other, and Mr. X never moves
onto a detective. With `tickets_to_mrx` (the London map's setting, as on the
board) every ticket a detective uses goes to Mr. X.

Maps are JSON files (`open_spiel_sog/games/maps/*.json`, or any path): stations
(a list of ids), edges ``[a, b, transport]`` (undirected), and the set-up
defaults (start stations, tickets, round limit, reveal rounds). Every set-up
value can be overridden by a game parameter; ``-1`` or ``""`` means "the
map's". Where the detectives draw their starts (`detective_start_cards`:
London's 18 start cards, which are also its `mrx_start`), one public chance
node per detective deals each a card of those left, uniformly, before
anything else. When `mrx_start` lists more than one station, a chance node
then picks one of them that no detective holds, uniformly, and only Mr. X
sees it (on London: one of the 13 cards the detectives left).
`detective_starts` given as a parameter (or ``detective_start_cards=none``)
keeps the detectives on fixed stations, which `mrx_start` must then leave
out (docs/scotland_yard.md, "London's setup").

Actions: ``ticket * num_stations + destination`` with tickets 0 taxi,
1 bus, 2 underground, 3 black and destinations the station's index in the
map's `stations` list; ``4 * num_stations`` is the double-move card. The
chance nodes' outcomes are station indices.

Observers: information-state and observation tensors and strings for each
player, and a public observer (``public_info=True``,
``private_info=PrivateInfoType.NONE``) with and without perfect recall that
shows the detectives' positions and tickets, the ticket types Mr. X used, the
revealed positions, the round and, once the game is over, how it ended.

Modules: `maps` (map files and their validation), `rules` (a game's
resolved set-up and its outcomes), `game` (the Python game and state),
`observer` (tensors and strings) and `native` (the C++ twin's registration,
and views of either game's states for Python code).
"""

from open_spiel_sog.games.scotland_yard import game
from open_spiel_sog.games.scotland_yard import maps
from open_spiel_sog.games.scotland_yard import native
from open_spiel_sog.games.scotland_yard import observer
from open_spiel_sog.games.scotland_yard import rules
from open_spiel_sog.games.scotland_yard.game import ScotlandYardGame
from open_spiel_sog.games.scotland_yard.game import ScotlandYardState
from open_spiel_sog.games.scotland_yard.maps import load_map
from open_spiel_sog.games.scotland_yard.maps import MAPS_DIR
from open_spiel_sog.games.scotland_yard.maps import parse_map
from open_spiel_sog.games.scotland_yard.maps import ScotlandYardMap
from open_spiel_sog.games.scotland_yard.maps import shipped_maps
from open_spiel_sog.games.scotland_yard.maps import TICKETS
from open_spiel_sog.games.scotland_yard.maps import TRANSPORTS
from open_spiel_sog.games.scotland_yard.observer import ScotlandYardObserver
from open_spiel_sog.games.scotland_yard.rules import Rules

# Why ``scotland_yard`` is the Python game (None: it is the C++ one).
NATIVE_REASON = native.register()

__all__ = [
    "game",
    "load_map",
    "maps",
    "MAPS_DIR",
    "native",
    "NATIVE_REASON",
    "observer",
    "parse_map",
    "rules",
    "Rules",
    "ScotlandYardGame",
    "ScotlandYardMap",
    "ScotlandYardObserver",
    "ScotlandYardState",
    "shipped_maps",
    "TICKETS",
    "TRANSPORTS",
]
