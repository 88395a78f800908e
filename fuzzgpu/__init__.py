"""fuzzgpu: a property-based stress fuzzer for the NVIDIA GPU memory model.

One data type flows through every stage: :class:`fuzzgpu.ir.Program`.
"""

__version__ = "0.1.0"
