"""Trainers' hooks that log into visualdl: one argument away from the training loop.

- ``visualdl.integrations.lightning.VisualDLLogger``: ``lightning.Trainer(logger=...)``;
- ``visualdl.integrations.transformers.VisualDLCallback``:
  ``transformers.Trainer(callbacks=[...])``;
- ``visualdl.integrations.keras.VisualDLCallback``: ``model.fit(callbacks=[...])``.

Each module imports its trainer library when it is imported itself, never before: this
package imports none of them, so ``import visualdl`` costs a user of one trainer nothing
of the others (docs/integrations.md).
"""
