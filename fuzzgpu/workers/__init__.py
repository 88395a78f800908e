"""Where a campaign's programs and workers run (docs/reliability.md, docs/ray.md):
:mod:`.supervised` (the backend in a supervised child process: watchdog, restarts, quarantine),
:mod:`.local` (several campaign worker processes on one corpus, over this host's GPUs),
:mod:`.ray_sync` (the files a Ray campaign moves between driver and actors) and
:mod:`.ray_cluster` (the same workers as Ray actors, and the driver loop).  ``supervised`` sits
below :mod:`fuzzgpu.campaign`, which runs its programs through it; ``local``, ``ray_sync`` and
``ray_cluster`` above it.  Import from the modules."""
