"""What every JSON route is built from: the app's data provider and cache, request
arguments, ETags, JSON and error answers, blob responses.

Each kind's blueprint (``visualdl.kinds.<kind>.api``) and the server's own routes use these
helpers; they sit below the kinds so that the server, which mounts the kinds' blueprints,
and the kinds, which answer requests, never import each other in a circle.
"""
