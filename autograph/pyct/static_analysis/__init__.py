"""Static analyses over gast trees: cfg, activity, reaching_definitions, liveness.

Why not beniget (gast's sibling library)? It gives may-reach def-use/use-def chains
per name, but no CFG, no definitely-defined sets, no liveness and no per-statement
annotations, which the converters need; our CFG gives reaching definitions in a
few dozen more lines, so adding a runtime dependency would not pay for itself.
Order of use: activity -> cfg.build -> reaching_definitions -> liveness.
"""
