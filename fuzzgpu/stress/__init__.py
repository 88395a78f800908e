"""Stress as a search space (docs/tuning.md): :mod:`.space` (the harness's knobs, ``StressConfig``,
their bounds and the ``[stress]`` table of a profile), :mod:`.tune` (successive halving over short
runs: ``fuzzgpu tune``), :mod:`.campaign` (tuning per shape family inside a campaign).  Imports go
campaign -> tune -> space; import from the modules."""
