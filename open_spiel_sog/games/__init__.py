"""Python games registered with OpenSpiel (`pyspiel.register_game`).

Importing `open_spiel_sog` registers them; afterwards
`pyspiel.load_game("scotland_yard(map=glasses,max_rounds=3)")` works.

  scotland_yard: Scotland Yard (Mr. X against a team of detectives) on a map
    given as a parameter; shipped maps in `maps/` (`scotland_yard.shipped_maps()`).

Small games shipped as EFG files (`efg.load_game("rps_plus")`): see `efg.py`.
"""
