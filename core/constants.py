"""Numeric constants shared by the solver: one place for dtype and tolerances."""

import numpy as np

#: Working precision of the solver. Blender stores coordinates as float32, and float32 halves
#: the memory traffic of every per-vertex operation (the solver is memory-bound).
DTYPE = np.float32

#: Vectors shorter than this (in object units) count as zero: no contact, degenerate tangent.
TINY = 1e-12

#: Fraction left after a "time to rest" or a "response time": 99 % of the way there.
SETTLED_FRACTION = 0.01

#: Elastic offsets that relax below this fraction of the object's size (float32 resolution
#: there) become exactly 0: a surface out of contact comes to rest in finite time, and its
#: steps can be skipped, instead of shrinking geometrically for hundreds of frames.
NEGLIGIBLE = 1e-7
#: Decimals a step keeps of the pushes' lengths when it chooses the longest (``graph.settled``):
#: the float32 working precision rounds at about 1e-7 of them.
SETTLED_STEP = 6
