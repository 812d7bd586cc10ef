"""The algorithms, one package per family; each package names its public API
in `__all__`, and code outside a family imports from the family's package.

  cfr        public-tree CFR+: the passes and the solvers built on them
  sog        Student of Games: GT-CFR, re-solving, value functions, the CVPN
  training   sound self-play training of the CVPN
  dls        depth-limited solving
  jps        joint policy search
  oos        online outcome sampling
  ismcts_br  the ISMCTS best responder
  networks   what the CVPN and ISMCTS-BR's network share (settings, the
             Haiku MLP, checkpoint files)
"""

__all__ = ["cfr", "dls", "ismcts_br", "jps", "networks", "oos", "sog",
           "training"]
