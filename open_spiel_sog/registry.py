"""Registers Python bots with OpenSpiel's bot registry.

After

    registry.register_bot("my_bot", factory, can_play)

the bot is available through OpenSpiel's own API:

    pyspiel.load_bot("my_bot", game, player, {"seed": 3})
    pyspiel.load_bot("my_bot(seed=3)", game, player)
    pyspiel.registered_bots()            # lists "my_bot"
    pyspiel.is_bot_registered("my_bot")  # True
    pyspiel.bots_that_can_play_game(game[, player])  # respects can_play

`factory(game, player, params)` receives the pyspiel.Game, the player id and a
dict of the bot parameters (without the "name" key that OpenSpiel's string
form adds) and must return a *new* pyspiel.Bot on every call. A Python
subclass of pyspiel.Bot must call `pyspiel.Bot.__init__(self)`.

Two implementations, chosen once per process:

  * Native (preferred): the C++ shim `open_spiel_sog._native._shim` adds the
    factory to OpenSpiel's C++ registry, so C++ code that loads bots by name
    sees it too.
  * Pure-Python fallback, used when the shim is unavailable (not built, other
    open_spiel version, ABI mismatch, or OPEN_SPIEL_SOG_DISABLE_SHIM=1):
    `pyspiel.load_bot`, `registered_bots`, `is_bot_registered` and
    `bots_that_can_play_game` are replaced by Python wrappers that know our
    bots and delegate everything else to the originals. Only code that looks
    these functions up on the `pyspiel` module after registration sees our
    bots (not C++ code, nor an earlier `from pyspiel import load_bot`). The
    first registration in this mode emits one RuntimeWarning per process
    saying why the shim is not used.

Names are unique: registering a name that is already registered raises
ValueError, unless the name was registered through this module and
`replace=True` is passed, in which case the new factory replaces the old one.
"""

import functools
import threading
from typing import Any, Callable, Mapping, NamedTuple, Optional
import warnings

import pyspiel

from open_spiel_sog import _native

BotFactory = Callable[[pyspiel.Game, int, dict[str, Any]], pyspiel.Bot]
CanPlay = Callable[[pyspiel.Game, int], bool]

# Attribute set on each bot a factory returns, holding the names of the
# registered bots whose factories returned it; catches a factory that returns
# the same bot twice.
_RETURNED_BY_ATTR = "_open_spiel_sog_returned_by"


class _Entry(NamedTuple):
  create: BotFactory  # the user's factory wrapped by _checked_factory
  can_play: Optional[CanPlay]


_lock = threading.RLock()
_entries: dict[str, _Entry] = {}  # every bot registered through this module
_backend_resolved = False
_shim: Any = None  # the _shim module when the native registry is in use
_fallback_reason: Optional[str] = None
_fallback_warned = False
_originals: dict[str, Callable[..., Any]] = {}  # pyspiel functions we wrapped


def _resolve_backend() -> None:
  """Decides, once per process, between the native and the Python registry."""
  global _backend_resolved, _shim, _fallback_reason
  with _lock:
    if _backend_resolved:
      return
    _shim, _fallback_reason = _native.load_shim()
    _backend_resolved = True


def using_native_registry() -> bool:
  """Returns True if bots are registered in OpenSpiel's C++ registry."""
  _resolve_backend()
  return _shim is not None


def fallback_reason() -> Optional[str]:
  """Returns why the C++ shim is not used, or None if it is."""
  _resolve_backend()
  return _fallback_reason


def registered_by_us() -> list[str]:
  """Returns the sorted names of the bots registered through this module."""
  with _lock:
    return sorted(_entries)


def register_bot(name: str,
                 factory: BotFactory,
                 can_play: Optional[CanPlay] = None,
                 *,
                 replace: bool = False) -> None:
  """Registers a Python bot factory with OpenSpiel under `name`.

  Args:
    name: the bot's short name, as given to `pyspiel.load_bot`. Must not
      contain "(", ")", "," or "=".
    factory: `factory(game, player, params) -> pyspiel.Bot`; `params` is a
      dict of the bot parameters without the "name" key. Must return a new
      bot on every call. Exceptions it raises reach the caller of
      `pyspiel.load_bot` unchanged.
    can_play: `can_play(game, player) -> bool`, consulted by
      `pyspiel.bots_that_can_play_game`; None means the bot plays any game.
    replace: if True and `name` was registered through this module before,
      replace that registration instead of raising.

  Raises:
    ValueError: `name` is invalid or already registered (and not replaceable).
    TypeError: `factory` or `can_play` is not callable.
  """
  if not isinstance(name, str) or not name or any(c in name for c in "(),="):
    raise ValueError(f"invalid bot name {name!r}: it must be a non-empty "
                     "string containing none of '(),='")
  if not callable(factory):
    raise TypeError(f"bot factory for {name!r} must be callable")
  if can_play is not None and not callable(can_play):
    raise TypeError(f"can_play for {name!r} must be callable or None")
  _resolve_backend()
  with _lock:
    if name in _entries:
      if not replace:
        raise ValueError(f"bot {name!r} is already registered (by "
                         "open_spiel_sog); pass replace=True to replace it")
    elif _is_registered_elsewhere(name):
      raise ValueError(f"bot {name!r} is already registered in OpenSpiel; "
                       "choose another name")
    entry = _Entry(_checked_factory(name, factory), can_play)
    if _shim is not None:
      _shim.register_bot(name, entry.create, can_play, replace=replace)
    else:
      _install_fallback()
    _entries[name] = entry


def _is_registered_elsewhere(name: str) -> bool:
  """True if OpenSpiel (not this module) already has a bot called `name`."""
  is_registered = _originals.get("is_bot_registered", pyspiel.is_bot_registered)
  return bool(is_registered(name))


def _checked_factory(name: str, factory: BotFactory) -> BotFactory:
  """Wraps `factory` to validate what it returns."""

  @functools.wraps(factory)
  def create(game: pyspiel.Game, player: int,
             params: Mapping[str, Any]) -> pyspiel.Bot:
    params = {k: v for k, v in params.items() if k != "name"}
    bot = factory(game, player, params)
    if not isinstance(bot, pyspiel.Bot):
      raise TypeError(f"bot factory for {name!r} must return a pyspiel.Bot, "
                      f"got {type(bot).__name__}")
    returned_by = getattr(bot, _RETURNED_BY_ATTR, ())
    if name in returned_by:
      raise ValueError(f"bot factory for {name!r} returned a bot it had "
                       "already returned; the factory must return a new bot "
                       "each call")
    try:
      setattr(bot, _RETURNED_BY_ATTR, returned_by + (name,))
    except (AttributeError, TypeError):
      pass  # C++ bots have no __dict__; the shim checks their ownership.
    return bot

  return create


# ---------------------------------------------------------------------------
# Pure-Python fallback.


def _install_fallback() -> None:
  """Wraps pyspiel's bot-registry functions (once) and warns (once)."""
  global _fallback_warned
  if not _fallback_warned:
    _fallback_warned = True
    warnings.warn(
        "open_spiel_sog: registering bots through the pure-Python fallback "
        f"because {_fallback_reason}; the bots are visible to Python callers "
        "of pyspiel.load_bot/registered_bots/is_bot_registered/"
        "bots_that_can_play_game but not to OpenSpiel's C++ code.",
        RuntimeWarning,
        stacklevel=3)
  if _originals:
    return
  for fn_name, make_wrapper in (
      ("load_bot", _make_load_bot),
      ("registered_bots", _make_registered_bots),
      ("is_bot_registered", _make_is_bot_registered),
      ("bots_that_can_play_game", _make_bots_that_can_play_game)):
    original = getattr(pyspiel, fn_name)
    _originals[fn_name] = original
    wrapper = make_wrapper(original)
    wrapper.__name__ = fn_name
    wrapper.__qualname__ = fn_name
    wrapper.__doc__ = (f"open_spiel_sog wrapper of pyspiel.{fn_name} that also "
                       "knows the bots registered by open_spiel_sog.\n\n" +
                       (original.__doc__ or ""))
    wrapper.__wrapped__ = original
    setattr(pyspiel, fn_name, wrapper)


def _lookup(name: str) -> Optional[_Entry]:
  """Returns our registration of `name`, if any."""
  with _lock:
    return _entries.get(name)


def _make_load_bot(
    original: Callable[..., pyspiel.Bot]) -> Callable[..., pyspiel.Bot]:
  """Returns a pyspiel.load_bot replacement."""

  def load_bot(bot_name: str,
               game: pyspiel.Game,
               player: int,
               params: Optional[Mapping[str, Any]] = None) -> pyspiel.Bot:
    if params is None:
      short_name = bot_name.split("(", 1)[0].strip()
      entry = _lookup(short_name)
      if entry is None:
        return original(bot_name, game, player)
      parsed = pyspiel.game_parameters_from_string(bot_name)
      return entry.create(game, player, parsed)
    entry = _lookup(bot_name)
    if entry is None:
      return original(bot_name, game, player, params)
    return entry.create(game, player, params)

  return load_bot


def _make_registered_bots(
    original: Callable[[], list[str]]) -> Callable[[], list[str]]:
  """Returns a pyspiel.registered_bots replacement."""

  def registered_bots() -> list[str]:
    return sorted(set(original()) | set(registered_by_us()))

  return registered_bots


def _make_is_bot_registered(
    original: Callable[[str], bool]) -> Callable[[str], bool]:
  """Returns a pyspiel.is_bot_registered replacement."""

  def is_bot_registered(bot_name: str) -> bool:
    return _lookup(bot_name) is not None or bool(original(bot_name))

  return is_bot_registered


def _make_bots_that_can_play_game(
    original: Callable[..., list[str]]) -> Callable[..., list[str]]:
  """Returns a pyspiel.bots_that_can_play_game replacement."""

  def bots_that_can_play_game(game: pyspiel.Game,
                              player: Optional[int] = None) -> list[str]:
    if player is None:
      names = set(original(game))
      players = range(game.num_players())
    else:
      names = set(original(game, player))
      players = [player]
    with _lock:
      entries = list(_entries.items())
    for name, entry in entries:
      if entry.can_play is None or all(
          entry.can_play(game, p) for p in players):
        names.add(name)
    return sorted(names)

  return bots_that_can_play_game
