"""The profiler's trace model: Chrome traces parsed into columns (:mod:`.parse`), nested and
classified (:mod:`.model`), and cut into what each dashboard view shows (:mod:`.views`)."""
