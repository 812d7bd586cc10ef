"""The bounded caches: utils.lru.LRUCache and the module caches built on it."""

import pyspiel
import pytest

from open_spiel_sog.bots import cfr_policy
from open_spiel_sog.utils import lru


def test_lru_cache_drops_the_least_recently_used_entry():
  cache = lru.LRUCache(2)
  cache.put("a", 1)
  cache.put("b", 2)
  assert cache.get("a") == 1  # "a" is now the most recent
  cache.put("c", 3)
  assert "b" not in cache and cache.get("b", "gone") == "gone"
  assert cache.keys() == ["a", "c"] and len(cache) == 2
  cache.put("a", 4)  # replacing refreshes too
  cache.put("d", 5)
  assert cache.keys() == ["a", "d"] and cache.get("a") == 4
  cache.clear()
  assert len(cache) == 0


def test_lru_cache_needs_room_for_an_entry():
  with pytest.raises(ValueError, match="max_entries must be >= 1, got 0"):
    lru.LRUCache(0)


def test_cfr_policies_stay_bounded_and_are_resolved_after_eviction():
  """cfr_policy's cache of CFR+ solutions keeps the most recent few; an
  evicted one is solved again to the same policy."""
  game = pyspiel.load_game("kuhn_poker")
  cfr_policy.clear_cfr_cache()
  first = cfr_policy.cfr_plus_average_policy(game, 1)
  first_copy = {k: list(v) for k, v in first.items()}
  extra = cfr_policy.MAX_CACHED_CFR_POLICIES + 2
  for iterations in range(2, 2 + extra):
    cfr_policy.cfr_plus_average_policy(game, iterations)
  cached = cfr_policy._cfr_policies.keys()  # pylint: disable=protected-access
  assert len(cached) == cfr_policy.MAX_CACHED_CFR_POLICIES
  assert (str(game), 1) not in cached
  assert cached[-1] == (str(game), 1 + extra)
  again = cfr_policy.cfr_plus_average_policy(game, 1)
  assert again is not first and again == first_copy
  cfr_policy.clear_cfr_cache()
