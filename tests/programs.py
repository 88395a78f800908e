"""Programs many tests use, built once: the tests import them (``from programs import MP``) rather
than spelling the same IR again."""

from __future__ import annotations

from fuzzgpu.ir import Load, Location, Placement, Program, Scope, Sem, Store, Thread, validate

#: message passing across two CTAs with a .gpu release store and acquire load: the handoff holds
#: (P1:r0=2 /\ P1:r1=0 is forbidden), so a backend that weakens release/acquire shows it
MP = validate(Program("MP", (
    Thread("P0", Placement(cta=0), (Store("x", 1), Store("y", 2, Sem.RELEASE, Scope.GPU))),
    Thread("P1", Placement(cta=1), (Load("r0", "y", Sem.ACQUIRE, Scope.GPU), Load("r1", "x"))),
), (Location("x"), Location("y"))))
